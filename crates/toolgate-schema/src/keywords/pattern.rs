//! `pattern`: an ECMA-262 regular expression, unanchored, matched with `regress`.

use regress::Regex;
use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::{CompileError, CompileErrorCode, ErrorCode};
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `pattern` keyword.
#[derive(Debug)]
pub(crate) struct Pattern {
    regex: Regex,
    /// The same pattern as a linear-time matcher, when it is simple enough.
    simple: Option<Simple>,
    source: Box<str>,
    location: Box<str>,
}

/// Compiles an ECMA-262 pattern: with the `u` flag when the pattern is valid
/// in Unicode mode (so `\p{…}` and astral characters work), else without.
pub(crate) fn compile_regex(source: &str) -> Result<Regex, String> {
    match Regex::with_flags(source, "u") {
        Ok(r) => Ok(r),
        Err(first) => Regex::new(source).map_err(|_| first.to_string()),
    }
}

/// Compiles `pattern`: a string.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let source = v.as_str().ok_or_else(|| kw.invalid("a string"))?;
    let regex = compile_regex(source).map_err(|e| regex_error(kw, source, &e))?;
    Ok(boxed(Pattern {
        regex,
        simple: Simple::compile(source),
        source: source.into(),
        location: kw.location(),
    }))
}

/// The compile error for a bad pattern.
pub(crate) fn regex_error(kw: &Kw<'_, '_>, source: &str, e: &str) -> CompileError {
    kw.error(
        CompileErrorCode::InvalidRegex,
        format!("`{source}` is not an ECMA-262 regular expression: {e}"),
    )
}

impl Keyword for Pattern {
    fn part(&self) -> Part<'_> {
        Part::ScalarOnly
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::String(s) = v else { return true };
        let ok = match &self.simple {
            Some(simple) => simple.is_match(s),
            None => self.regex.find(s).is_some(),
        };
        if !ok {
            cx.fail(ErrorCode::Pattern, at, &self.location, v, || {
                format!("expected to match `{}`", self.source)
            });
        }
        ok
    }
}

/// A pattern anchored at both ends (`^…$`) made of ASCII literals, `\\d`,
/// `\\w` and positive ASCII classes, each with a quantifier, where every
/// atom of variable length is followed by an atom that shares no character
/// with it (or by the end). Greedy matching is then exact, so it runs in
/// linear time without backtracking, with the same verdicts as the ECMA-262
/// engine. Anything else is left to `regress`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Simple {
    atoms: Vec<Atom>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Atom {
    /// Which ASCII bytes match: bit `b % 64` of word `b / 64`.
    set: [u64; 2],
    /// The same set as one flag per byte value, for matching.
    table: [bool; 256],
    min: u32,
    max: u32,
}

impl Atom {
    fn new(set: [u64; 2], min: u32, max: u32) -> Self {
        let mut table = [false; 256];
        for (b, slot) in (0u8..128).zip(table.iter_mut()) {
            let word = if b < 64 { set[0] } else { set[1] };
            *slot = (word >> (b % 64)) & 1 == 1;
        }
        Atom {
            set,
            table,
            min,
            max,
        }
    }

    #[inline(always)]
    fn has(&self, b: u8) -> bool {
        self.table.get(usize::from(b)).copied().unwrap_or(false)
    }
}

#[expect(
    clippy::indexing_slicing,
    reason = "b < 128 is checked, so b / 64 is 0 or 1"
)]
fn add(set: &mut [u64; 2], b: u8) -> Option<()> {
    if b >= 128 {
        return None;
    }
    set[usize::from(b / 64)] |= 1 << (b % 64);
    Some(())
}

fn add_range(set: &mut [u64; 2], lo: u8, hi: u8) -> Option<()> {
    if lo > hi {
        return None;
    }
    for b in lo..=hi {
        add(set, b)?;
    }
    Some(())
}

fn add_class_escape(set: &mut [u64; 2], c: u8) -> Option<()> {
    match c {
        b'd' => add_range(set, b'0', b'9'),
        b'w' => {
            add_range(set, b'0', b'9')?;
            add_range(set, b'a', b'z')?;
            add_range(set, b'A', b'Z')?;
            add(set, b'_')
        }
        _ => None,
    }
}

/// ASCII punctuation that may be escaped to stand for itself.
fn is_syntax(c: u8) -> bool {
    b"^$\\.*+?()[]{}|/-".contains(&c)
}

impl Simple {
    pub(crate) fn compile(source: &str) -> Option<Self> {
        let body = source.strip_prefix('^')?.strip_suffix('$')?;
        let bytes = body.as_bytes();
        // A `$` that was escaped (`\\$`) is a literal, not the anchor.
        let trailing_backslashes = bytes.iter().rev().take_while(|&&b| b == b'\\').count();
        if trailing_backslashes % 2 == 1 {
            return None;
        }
        let mut atoms = Vec::new();
        let mut i = 0;
        while let Some(&c) = bytes.get(i) {
            let mut set = [0u64; 2];
            i += 1;
            match c {
                b'\\' => {
                    let e = *bytes.get(i)?;
                    i += 1;
                    if add_class_escape(&mut set, e).is_none() {
                        if !is_syntax(e) {
                            return None;
                        }
                        add(&mut set, e)?;
                    }
                }
                b'[' => {
                    if bytes.get(i) == Some(&b'^') {
                        return None;
                    }
                    let mut first = true;
                    loop {
                        let mut c = *bytes.get(i)?;
                        i += 1;
                        if c == b']' && !first {
                            break;
                        }
                        first = false;
                        if c == b'\\' {
                            let e = *bytes.get(i)?;
                            i += 1;
                            if add_class_escape(&mut set, e).is_some() {
                                continue;
                            }
                            if !is_syntax(e) {
                                return None;
                            }
                            c = e;
                        } else if c == b'[' || c >= 128 {
                            return None;
                        }
                        if bytes.get(i) == Some(&b'-')
                            && bytes.get(i + 1).is_some_and(|&n| n != b']')
                        {
                            let hi = *bytes.get(i + 1)?;
                            if hi == b'\\' || hi == b'[' {
                                return None;
                            }
                            add_range(&mut set, c, hi)?;
                            i += 2;
                        } else {
                            add(&mut set, c)?;
                        }
                    }
                }
                b'^' | b'$' | b'.' | b'*' | b'+' | b'?' | b'(' | b')' | b']' | b'{' | b'}'
                | b'|' => return None,
                c if c >= 128 => return None,
                c => add(&mut set, c)?,
            }
            let (min, max) = match bytes.get(i) {
                Some(b'?') => (0, 1),
                Some(b'*') => (0, u32::MAX),
                Some(b'+') => (1, u32::MAX),
                Some(b'{') => {
                    let end = i + bytes.get(i..)?.iter().position(|&b| b == b'}')?;
                    let inner = std::str::from_utf8(bytes.get(i + 1..end)?).ok()?;
                    let (lo, hi) = match inner.split_once(',') {
                        None => (inner, Some(inner)),
                        Some((lo, "")) => (lo, None),
                        Some((lo, hi)) => (lo, Some(hi)),
                    };
                    let lo: u32 = lo.parse().ok()?;
                    let hi: u32 = match hi {
                        Some(h) => h.parse().ok()?,
                        None => u32::MAX,
                    };
                    if lo > hi {
                        return None;
                    }
                    i = end;
                    (lo, hi)
                }
                _ => {
                    i = i.wrapping_sub(1);
                    (1, 1)
                }
            };
            i = i.wrapping_add(1);
            // A lazy quantifier (`*?`) is not supported.
            if min != max && bytes.get(i) == Some(&b'?') {
                return None;
            }
            atoms.push(Atom::new(set, min, max));
        }
        // Greedy matching is exact only when a variable atom's successor
        // shares no character with it.
        for pair in atoms.windows(2) {
            if let [a, b] = pair {
                if a.min != a.max && (a.set[0] & b.set[0] != 0 || a.set[1] & b.set[1] != 0) {
                    return None;
                }
            }
        }
        Some(Self { atoms })
    }

    /// Greedy, atom by atom: the first `min` bytes must all be in the
    /// atom's set, then as many more as match, up to `max`.
    pub(crate) fn is_match(&self, s: &str) -> bool {
        let mut rest = s.as_bytes();
        for atom in &self.atoms {
            let Some((head, tail)) = rest.split_at_checked(atom.min as usize) else {
                return false;
            };
            if !head.iter().all(|&b| atom.has(b)) {
                return false;
            }
            rest = tail;
            if atom.max > atom.min {
                let more = (atom.max - atom.min) as usize;
                let n = rest.iter().take(more).take_while(|&&b| atom.has(b)).count();
                rest = rest.get(n..).unwrap_or_default();
            }
        }
        rest.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::{compile_regex, Simple};
    use crate::test_util::check;

    #[test]
    fn simple_patterns_agree_with_regress() {
        let patterns = [
            "^[A-Z]-\\d{4}$",
            "^SKU-[0-9]{6}$",
            "^[a-z_][a-z0-9_]{0,62}$",
            "^\\w+@x\\.com$",
            "^[A-Z]{2,3}-?[0-9]+$",
            "^a*b$",
            "^[a\\-z]{1,}$",
            "^\\d{3}\\.\\d{3}$",
        ];
        let inputs = [
            "",
            "A-1234",
            "A-12345",
            "a-1234",
            "A-123",
            "A-1234\n",
            "SKU-000001",
            "SKU-00001",
            "abc_1",
            "_",
            "1abc",
            "a",
            "x@x.com",
            "xx@x.com",
            "@x.com",
            "AB-12",
            "ABC1",
            "ABCD-1",
            "b",
            "aab",
            "ab ",
            "a-z",
            "q",
            "123.456",
            "123x456",
            "A-\u{663}\u{663}\u{663}\u{663}",
            "é",
            "A-١٢٣٤",
            "aaaab",
            "SKU-12345\u{1F600}",
        ];
        for p in patterns {
            let simple = Simple::compile(p).unwrap_or_else(|| panic!("{p} should be simple"));
            let regex = compile_regex(p).unwrap();
            for s in inputs {
                assert_eq!(simple.is_match(s), regex.find(s).is_some(), "{p} on {s:?}");
            }
        }
        for not_simple in [
            "a", "^a", "a$", "^(a)$", "^a|b$", "^[^a]$", "^.$", "^a*a$", "^a+?$", "^\\$", "^é$",
            "^[a-]*-$",
        ] {
            assert_eq!(Simple::compile(not_simple), None, "{not_simple}");
        }
    }

    #[test]
    fn ecma_semantics_unanchored() {
        assert!(check(r#"{"pattern":"^[a-z]+$"}"#, "\"abc\""));
        assert!(!check(r#"{"pattern":"^[a-z]+$"}"#, "\"abc1\""));
        assert!(check(r#"{"pattern":"b"}"#, "\"abc\""));
        assert!(check(r#"{"pattern":"\\p{L}"}"#, "\"é\""));
        assert!(!check(r#"{"pattern":"^\\d$"}"#, "\"\u{0663}\""));
    }
}
