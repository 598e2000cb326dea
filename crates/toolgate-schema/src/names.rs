//! A compiled set of member names with a fast exact lookup, shared by the
//! keywords that look instance members up by name (`properties`,
//! `additionalProperties`, `required`, the strict closure).
//!
//! Names compare byte for byte. A set of up to 64 names gets a small
//! direct-mapped table keyed by a name's length and a few of its bytes, so a
//! lookup costs one slot read and one comparison; when no seed separates the
//! names, entries are scanned by length and their first sixteen bytes as two
//! words. Large sets use a hash index.

use std::collections::HashMap;

/// Sets up to this size are scanned; larger ones are indexed.
const SCAN_LIMIT: usize = 16;

#[derive(Debug, Clone)]
struct Entry {
    len: usize,
    head: u64,
    /// Bytes 8..16.
    tail: u64,
    name: Box<str>,
    /// Whether the name is printable ASCII without a quote or backslash:
    /// what a reader can take from the input without a scan
    /// ([`toolgate_json::Visitor::expected_name`]).
    plain: bool,
    /// The name's place in the set sorted in canonical order (RFC 8785:
    /// by UTF-16 code units), for [`toolgate_json::Name::Ranked`].
    rank: u32,
}

/// An ordered set of names; [`NameSet::find`] returns a name's position.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameSet {
    entries: Vec<Entry>,
    index: Option<HashMap<Box<str>, usize>>,
    /// Direct-mapped slots (entry position + 1, 0 for none) and the seed and
    /// shift that place every entry in its own slot.
    table: Option<(Vec<u8>, u32, u32)>,
}

/// Multipliers tried in turn for the direct-mapped table.
const SEEDS: [u32; 6] = [
    0x9E37_79B1,
    0x85EB_CA77,
    0xC2B2_AE3D,
    0x27D4_EB2F,
    0x1656_67B1,
    0xD3A2_646C,
];

/// The slot of a name: its length, first, second and last bytes, mixed.
fn slot(bytes: &[u8], seed: u32, shift: u32) -> usize {
    let b = |i: usize| u32::from(bytes.get(i).copied().unwrap_or(0));
    let last = bytes.len().saturating_sub(1);
    let key = (u32::try_from(bytes.len()).unwrap_or(u32::MAX) << 24)
        ^ (b(0) << 16)
        ^ (b(1) << 8)
        ^ b(last);
    usize::try_from(key.wrapping_mul(seed) >> shift).unwrap_or(0)
}

/// The first eight bytes of `bytes` as a little-endian word, zero-padded.
/// Lengths 4 to 7 are read as two overlapping four-byte loads.
fn head(bytes: &[u8]) -> u64 {
    if let Some(first) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*first);
    }
    let n = bytes.len();
    if let (Some(lo), Some(hi)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        let (lo, hi) = (u32::from_le_bytes(*lo), u32::from_le_bytes(*hi));
        return u64::from(lo) | (u64::from(hi) << (8 * (n - 4)));
    }
    bytes
        .iter()
        .rev()
        .fold(0u64, |w, &b| (w << 8) | u64::from(b))
}

/// Whether `bytes` is the entry's name.
#[inline]
fn same(e: &Entry, bytes: &[u8]) -> bool {
    e.len == bytes.len()
        && e.head == head(bytes)
        && (bytes.len() <= 8 || e.tail == head(bytes.get(8..).unwrap_or_default()))
        && (bytes.len() <= 16 || e.name.as_bytes() == bytes)
}

impl NameSet {
    /// The set of `names`, in the given order (duplicates keep their first position).
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut set = Self::default();
        for name in names {
            if set.find(name).is_some() {
                continue;
            }
            let bytes = name.as_bytes();
            set.entries.push(Entry {
                len: bytes.len(),
                head: head(bytes),
                tail: head(bytes.get(8..).unwrap_or_default()),
                name: name.into(),
                plain: bytes
                    .iter()
                    .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\'),
                rank: 0,
            });
        }
        let mut by_name: Vec<usize> = (0..set.entries.len()).collect();
        by_name.sort_by(|&a, &b| {
            let name = |i: usize| set.entries.get(i).map_or("", |e| &*e.name);
            name(a).encode_utf16().cmp(name(b).encode_utf16())
        });
        for (rank, i) in by_name.into_iter().enumerate() {
            if let Some(e) = set.entries.get_mut(i) {
                e.rank = u32::try_from(rank).unwrap_or(u32::MAX);
            }
        }
        set.table = set.direct_table();
        if set.entries.len() > SCAN_LIMIT && set.table.is_none() {
            set.index = Some(
                set.entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (e.name.clone(), i))
                    .collect(),
            );
        }
        set
    }

    /// A direct-mapped table with four slots per name or more, if some seed
    /// gives every name its own slot.
    fn direct_table(&self) -> Option<(Vec<u8>, u32, u32)> {
        let n = self.entries.len();
        if n == 0 || n > 64 {
            return None;
        }
        let bits = (n * 4).next_power_of_two().trailing_zeros().max(2);
        let shift = 32 - bits;
        'seeds: for seed in SEEDS {
            let mut table = vec![0u8; 1 << bits];
            for (i, e) in self.entries.iter().enumerate() {
                let cell = table.get_mut(slot(e.name.as_bytes(), seed, shift))?;
                if *cell != 0 {
                    continue 'seeds;
                }
                *cell = u8::try_from(i + 1).ok()?;
            }
            return Some((table, seed, shift));
        }
        None
    }

    /// The position of `name` in the set.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        if let Some((table, seed, shift)) = &self.table {
            let bytes = name.as_bytes();
            let i = usize::from(*table.get(slot(bytes, *seed, *shift))?).checked_sub(1)?;
            let e = self.entries.get(i)?;
            return same(e, bytes).then_some(i);
        }
        if let Some(index) = &self.index {
            return index.get(name).copied();
        }
        let bytes = name.as_bytes();
        let (len, h) = (bytes.len(), head(bytes));
        let t = if len > 8 {
            head(bytes.get(8..).unwrap_or_default())
        } else {
            0
        };
        self.entries.iter().position(|e| {
            e.len == len && e.head == h && e.tail == t && (len <= 16 || e.name.as_bytes() == bytes)
        })
    }

    /// The position of `name` in the set, trying position `guess` first
    /// (members usually come in the order their schema declares them).
    #[inline]
    pub(crate) fn find_from(&self, name: &str, guess: usize) -> Option<usize> {
        match self.entries.get(guess) {
            Some(e) if same(e, name.as_bytes()) => Some(guess),
            _ => self.find(name),
        }
    }

    /// The name at position `i`, if there is one and it is plain (see
    /// `Entry::plain`).
    #[inline]
    pub(crate) fn plain(&self, i: usize) -> Option<&str> {
        self.entries.get(i).filter(|e| e.plain).map(|e| &*e.name)
    }

    /// The canonical rank of the name at position `i` (see `Entry::rank`).
    #[inline]
    pub(crate) fn rank(&self, i: usize) -> Option<u32> {
        self.entries.get(i).map(|e| e.rank)
    }

    /// The names, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_ref())
    }

    /// Whether `name` is in the set.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The number of names.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::NameSet;

    #[test]
    fn finds_exact_names_only() {
        for n in [3usize, 40, 70] {
            let names: Vec<String> = (0..n).map(|i| format!("name_{i}_long_enough")).collect();
            let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
            all.extend(["", "a", "ab", "abcdefgh", "abcdefghi"]);
            let set = NameSet::new(all.iter().copied());
            for (i, name) in all.iter().enumerate() {
                assert_eq!(set.find(name), Some(i), "{name}");
                for guess in [0, i, i + 1, all.len() + 3] {
                    assert_eq!(set.find_from(name, guess), Some(i), "{name} at {guess}");
                }
            }
            for miss in [
                "A",
                "abcdefgH",
                "abcdefghj",
                "name_0_long_enougH",
                "name_0",
                "a\0",
                "b",
                "abcdefgi",
                "",
            ] {
                if all.contains(&miss) {
                    continue;
                }
                assert_eq!(set.find(miss), None, "{miss}");
                for guess in 0..all.len() {
                    assert_eq!(set.find_from(miss, guess), None, "{miss} at {guess}");
                }
            }
        }
    }
}

#[cfg(test)]
mod table_tests {
    use super::NameSet;

    #[test]
    fn names_that_collide_on_every_seed_fall_back_to_scanning() {
        // Same length, first, second and last bytes: one slot whatever the seed.
        let set = NameSet::new(["ab1z", "ab2z", "ab3z"]);
        assert!(set.table.is_none());
        assert_eq!(set.find("ab2z"), Some(1));
        assert_eq!(set.find("ab4z"), None);
        let set = NameSet::new(["action", "order_id", "amount", "notify_customer", "memo"]);
        assert!(set.table.is_some());
        for (i, n) in ["action", "order_id", "amount", "notify_customer", "memo"]
            .iter()
            .enumerate()
        {
            assert_eq!(set.find(n), Some(i));
        }
        for miss in [
            "actioN",
            "Action",
            "amounts",
            "memo ",
            "",
            "notify_customeR",
        ] {
            assert_eq!(set.find(miss), None, "{miss}");
        }
    }
}
