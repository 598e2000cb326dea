//! IDNA A-labels for `hostname`: Punycode (RFC 3492) decoding and the
//! IDNA2008 checks that need no large tables (RFC 5891 section 4.2.3,
//! RFC 5892 contextual rules and exceptions). Character classes come from
//! ECMA-262 Unicode property escapes, evaluated by `regress`.
//!
//! Not checked: the full IDNA2008 derived-property table (approximated by
//! general categories) and the Bidi rule (RFC 5893). `ZWNJ` is accepted
//! without its joining-type rule.

use std::sync::OnceLock;

use regress::Regex;

const BASE: u32 = 36;
const TMIN: u32 = 1;
const TMAX: u32 = 26;
const SKEW: u32 = 38;
const DAMP: u32 = 700;
const INITIAL_BIAS: u32 = 72;
const INITIAL_N: u32 = 128;

fn adapt(mut delta: u32, numpoints: u32, first: bool) -> u32 {
    delta /= if first { DAMP } else { 2 };
    delta += delta / numpoints;
    let mut k = 0;
    while delta > ((BASE - TMIN) * TMAX) / 2 {
        delta /= BASE - TMIN;
        k += BASE;
    }
    k + (((BASE - TMIN + 1) * delta) / (delta + SKEW))
}

fn digit(c: u8) -> Option<u32> {
    match c {
        b'a'..=b'z' => Some(u32::from(c - b'a')),
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 26),
        _ => None,
    }
}

/// Decodes the part of an A-label after `xn--`.
pub(crate) fn decode(input: &str) -> Option<Vec<char>> {
    let b = input.as_bytes();
    let (basic, encoded) = match b.iter().rposition(|c| *c == b'-') {
        Some(i) => (b.get(..i)?, b.get(i + 1..)?),
        None => (&[][..], b),
    };
    let mut out: Vec<char> = basic.iter().map(|c| char::from(*c)).collect();
    let mut n = INITIAL_N;
    let mut i: u32 = 0;
    let mut bias = INITIAL_BIAS;
    let mut pos = 0;
    while pos < encoded.len() {
        let old_i = i;
        let mut w: u32 = 1;
        let mut k = BASE;
        loop {
            let d = digit(*encoded.get(pos)?)?;
            pos += 1;
            i = i.checked_add(d.checked_mul(w)?)?;
            let t = if k <= bias {
                TMIN
            } else if k >= bias + TMAX {
                TMAX
            } else {
                k - bias
            };
            if d < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let len = u32::try_from(out.len()).ok()? + 1;
        bias = adapt(i - old_i, len, old_i == 0);
        n = n.checked_add(i / len)?;
        i %= len;
        let c = char::from_u32(n)?;
        out.insert(usize::try_from(i).ok()?, c);
        i += 1;
    }
    Some(out)
}

struct Classes {
    allowed: Regex,
    mark: Regex,
    greek: Regex,
    hebrew: Regex,
    kana_han: Regex,
}

fn classes() -> Option<&'static Classes> {
    static C: OnceLock<Option<Classes>> = OnceLock::new();
    C.get_or_init(|| {
        let re = |p: &str| Regex::with_flags(p, "u").ok();
        Some(Classes {
            allowed: re(r"^[\p{Ll}\p{Lo}\p{Lm}\p{Mn}\p{Mc}\p{Nd}\-]$")?,
            mark: re(r"^\p{M}$")?,
            greek: re(r"^\p{Script=Greek}$")?,
            hebrew: re(r"^\p{Script=Hebrew}$")?,
            kana_han: re(r"^[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]$")?,
        })
    })
    .as_ref()
}

fn is(re: &Regex, c: char) -> bool {
    let mut buf = [0u8; 4];
    re.find(c.encode_utf8(&mut buf)).is_some()
}

const VIRAMAS: &[u32] = &[
    0x094D, 0x09CD, 0x0A4D, 0x0ACD, 0x0B4D, 0x0BCD, 0x0C4D, 0x0CCD, 0x0D3B, 0x0D3C, 0x0D4D, 0x0DCA,
    0x0E3A, 0x0EBA, 0x0F84, 0x1039, 0x103A, 0x1714, 0x1734, 0x17D2, 0x1A60, 0x1B44, 0x1BAA, 0x1BAB,
    0x1BF2, 0x1BF3, 0x2D7F, 0xA806, 0xA8C4, 0xA953, 0xA9C0, 0xAAF6, 0xABED, 0x10A3F, 0x11046,
    0x1107F, 0x110B9, 0x11133, 0x11134, 0x111C0, 0x11235, 0x112EA, 0x1134D, 0x11442, 0x114C2,
    0x115BF, 0x1163F, 0x116B6, 0x1172B, 0x11839, 0x119E0, 0x11A34, 0x11A47, 0x11A99, 0x11C3F,
    0x11D44, 0x11D45, 0x11D97,
];

/// Whether `xn--{rest}` is a valid A-label.
pub(crate) fn a_label(rest: &str) -> bool {
    let Some(u) = decode(rest) else { return false };
    let Some(cls) = classes() else { return false };
    if u.is_empty() || u.iter().all(char::is_ascii) {
        return false;
    }
    // RFC 5891 4.2.3.1: no "--" in the third and fourth positions.
    if u.get(2) == Some(&'-') && u.get(3) == Some(&'-') {
        return false;
    }
    if u.first() == Some(&'-') || u.last() == Some(&'-') {
        return false;
    }
    if u.first().is_some_and(|c| is(&cls.mark, *c)) {
        return false;
    }
    let arabic_indic = u.iter().any(|c| ('\u{0660}'..='\u{0669}').contains(c));
    let extended = u.iter().any(|c| ('\u{06F0}'..='\u{06F9}').contains(c));
    if arabic_indic && extended {
        return false;
    }
    for (i, &c) in u.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|j| u.get(j)).copied();
        let next = u.get(i + 1).copied();
        let ok = match c {
            // RFC 5892 2.6 exceptions: PVALID.
            '\u{00DF}' | '\u{03C2}' | '\u{06FD}' | '\u{06FE}' | '\u{0F0B}' | '\u{3007}' => true,
            // Exceptions: DISALLOWED.
            '\u{0640}'
            | '\u{07FA}'
            | '\u{302E}'
            | '\u{302F}'
            | '\u{3031}'..='\u{3035}'
            | '\u{303B}' => false,
            // CONTEXTO rules (RFC 5892 appendix A).
            '\u{00B7}' => prev == Some('l') && next == Some('l'),
            '\u{0375}' => next.is_some_and(|n| is(&cls.greek, n)),
            '\u{05F3}' | '\u{05F4}' => prev.is_some_and(|p| is(&cls.hebrew, p)),
            '\u{30FB}' => u.iter().any(|x| *x != '\u{30FB}' && is(&cls.kana_han, *x)),
            // CONTEXTJ.
            '\u{200D}' => prev.is_some_and(|p| VIRAMAS.contains(&u32::from(p))),
            '\u{200C}' => true,
            c if c.is_ascii() => c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
            c => is(&cls.allowed, c),
        };
        if !ok {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punycode() {
        let s: String = decode("9n2bp8q").unwrap().into_iter().collect();
        assert_eq!(s, "실례");
        assert!(decode("X").is_none());
        assert!(a_label("9n2bp8q"));
        assert!(a_label("ll-0ea"));
        assert!(!a_label("al-0ea"));
        assert!(!a_label("hello-txk"));
    }
}
