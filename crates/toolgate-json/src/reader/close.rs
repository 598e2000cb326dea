//! An object's close: its members put in canonical order and written.
//!
//! While an object is open, a member whose value is a scalar that is its
//! own canonical text (a string without escapes, an integer but `-0`, a
//! fraction in its shortest plain form, a literal) is not written: the
//! reader keeps where its name and value are in the input
//! ([`Text::Input`]). Every other member is written as it is read
//! ([`Text::Out`]), its nested objects closed and ordered in place. At the
//! close the members are written in canonical order: the kept ones straight
//! from the input, the written ones from a copy set aside. An object whose
//! members were all written, in canonical order, is left as it is.

use std::cmp::Ordering;

use super::order::{head, head_cmp, utf16_cmp};
use super::{name_of, write_string, Member, Reader, Text};

impl Reader {
    /// Ends the object whose members begin at `start` in `members` (its
    /// escaped names at `keys` in `keys`, its text at `out` in the
    /// canonical text): writes its members in canonical order (RFC 8785:
    /// by their names' UTF-16 code units) and closes it.
    pub(super) fn close_object<const W: bool>(
        &mut self,
        text: &str,
        start: usize,
        keys: usize,
        out: usize,
    ) {
        if !W {
            self.members.truncate(start);
            self.keys.truncate(keys);
            return;
        }
        let names = self.keys.as_str();
        let members = self.members.get_mut(start..).unwrap_or_default();
        // Members that are all ranked (below 64) are ordered by a bit per
        // rank, with no comparison and no sort.
        let mut by_rank = [0u8; 64];
        let mut ranks = 0u64;
        let mut sorted = true;
        let mut all_ranked = true;
        let mut kept = false;
        // One more than the previous member's rank.
        let mut after = 0u64;
        for (i, m) in members.iter().enumerate() {
            kept |= matches!(m.text, Text::Input(..));
            if !all_ranked {
                continue;
            }
            let slot = usize::try_from(m.head)
                .ok()
                .and_then(|r| by_rank.get_mut(r));
            match (m.ranked, slot) {
                (true, Some(slot)) => {
                    // Ranks are distinct: in order if each is above the one
                    // before.
                    sorted &= m.head >= after;
                    after = m.head + 1;
                    ranks |= 1 << m.head;
                    *slot = u8::try_from(i).unwrap_or(u8::MAX);
                }
                _ => all_ranked = false,
            }
        }
        if !all_ranked {
            // Beside an unranked name, ranked ones are ordered by their
            // heads too.
            for m in members.iter_mut().filter(|m| m.ranked) {
                m.head = head(name_of(text, names, m.name, m.owned));
                m.ranked = false;
            }
        }
        let order = |a: &Member, b: &Member| match head_cmp(a.head, b.head) {
            Ordering::Equal => utf16_cmp(
                name_of(text, names, a.name, a.owned),
                name_of(text, names, b.name, b.owned),
            ),
            other => other,
        };
        if !all_ranked {
            sorted = members
                .windows(2)
                .all(|w| matches!(w, [a, b] if order(a, b) == Ordering::Less));
        }
        if sorted && !kept {
            // Written as they came, in canonical order.
            self.out.push('}');
            self.members.truncate(start);
            self.keys.truncate(keys);
            return;
        }
        // The written members are set aside, each followed by its comma
        // (the last gets one too), so each is copied back in one push.
        self.moved.clear();
        let written = self.out.len() - out;
        if self.moved.capacity() <= written {
            // A new buffer, not a grown one (which would copy the old).
            self.moved = String::with_capacity(written.max(64).next_power_of_two());
        }
        if written > 0 {
            self.moved.push_str(self.out.get(out..).unwrap_or_default());
            self.moved.push(',');
            self.out.truncate(out);
        }
        let mut end = self.moved.len();
        for m in members.iter_mut().rev() {
            if let Text::Out(at, to) = &mut m.text {
                *at -= out;
                *to = end;
                end = *at;
            }
        }
        let members = &*members;
        let (moved, put_to) = (self.moved.as_str(), &mut self.out);
        let mut put = |i: usize| {
            if let Some(m) = members.get(i) {
                put_member(put_to, text, names, moved, m);
            }
        };
        if sorted {
            (0..members.len()).for_each(&mut put);
        } else if all_ranked {
            let mut bits = ranks;
            while bits != 0 {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                put(usize::from(by_rank.get(r).copied().unwrap_or_default()));
            }
        } else {
            self.order.clear();
            self.order
                .extend(members.iter().enumerate().map(|(i, m)| (m.head, i)));
            self.order
                .sort_unstable_by(|a, b| match head_cmp(a.0, b.0) {
                    Ordering::Equal => match (members.get(a.1), members.get(b.1)) {
                        (Some(a), Some(b)) => order(a, b),
                        _ => Ordering::Equal,
                    },
                    other => other,
                });
            for &(_, i) in &self.order {
                put(i);
            }
        }
        // The comma after the last member.
        self.out.pop();
        self.out.push('}');
        self.members.truncate(start);
        self.keys.truncate(keys);
    }
}

/// Writes one member of a closing object and a comma after it: a written
/// one from `moved`, a kept one from the input, in as few pushes as the
/// input allows (`"name":value,` in one when the input is compact there).
#[inline(always)]
fn put_member(out: &mut String, text: &str, names: &str, moved: &str, m: &Member) {
    match m.text {
        Text::Out(from, to) => out.push_str(moved.get(from..to).unwrap_or_default()),
        Text::Input(a, b) => {
            let input = text.as_bytes();
            let (n, close) = m.name;
            // From the name's opening quote through the colon when the
            // input has no space before it.
            let name_to = if m.owned {
                write_string(out, names.get(n..close).unwrap_or_default());
                out.push(':');
                a
            } else if input.get(close + 1) == Some(&b':') {
                if a == close + 2 {
                    // `"name":value` without a space: one push below.
                    n - 1
                } else {
                    out.push_str(text.get(n - 1..close + 2).unwrap_or_default());
                    a
                }
            } else {
                out.push_str(text.get(n - 1..close + 1).unwrap_or_default());
                out.push(':');
                a
            };
            if input.get(b) == Some(&b',') {
                out.push_str(text.get(name_to..b + 1).unwrap_or_default());
            } else {
                out.push_str(text.get(name_to..b).unwrap_or_default());
                out.push(',');
            }
        }
        // Every member's value has been read by its object's close.
        Text::Pending => {}
    }
}
