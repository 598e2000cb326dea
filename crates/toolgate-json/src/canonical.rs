//! The canonical form: the exact text toolgate hands to a tool, and its digest.
//!
//! The form is RFC 8785 (JSON Canonicalization Scheme):
//! - member names sorted by their UTF-16 code units, no whitespace;
//! - strings with the minimal escaping (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`,
//!   `\t`, other control characters as `\u00xx`), everything else as raw UTF-8;
//! - numbers as ECMAScript prints the nearest double (`1.0` → `1`,
//!   `1E6` → `1000000`, `1e21` → `1e+21`, `-0` → `0`): the shortest digits
//!   that read back as the same double, the closest of them to its exact
//!   value, and of two equally close the even one (`1424953923781206.25` →
//!   `1424953923781206.2`). `tests/es6.rs` checks RFC 8785's appendix B and
//!   a sample of node's `Number.prototype.toString`;
//!   `examples/es6_numbers.rs` checks a stream of any length (BENCHMARKS.md
//!   records the 100-million-number run of the JCS test file).
//!
//! One departure, on purpose: an *integer lexeme* (no fraction, no exponent)
//! whose magnitude is beyond 2^53 is written with its exact digits, never
//! rounded to the nearest double. `10000000000000000999` stays
//! `10000000000000000999`, so a tool never receives a different integer than
//! the one the gate checked. Within ±2^53 both rules print the same digits.
//!
//! Parsing the canonical text gives back an equal [`Value`]:
//! `parse(canonical(v)) == v` for every accepted `v`.
//!
//! # The value checked is the canonical value
//!
//! A non-integer lexeme with more digits than a double holds changes value
//! on the way to its canonical form: `4999.99999999999999999` becomes `5000`,
//! `0.300000000000000035` becomes `0.30000000000000004`. What a tool receives
//! is the canonical text, so that is what must be checked: toolgate's
//! validator (`toolgate-schema`) judges every instance number at its
//! *canonical value*, the exact value of [`Number::canonical`]'s text (an
//! integer lexeme's exact digits; for any other lexeme, the shortest digits
//! of its nearest double). A lexeme of at most 15 significant digits within
//! the normal range of doubles already has that value, so only longer
//! lexemes are ever rewritten. The original lexeme stays available from
//! [`Number::lexeme`] for diagnostics; it is never what a check relies on.
//!
//! [`Number::canonical`]: crate::Number::canonical
//! [`Number::lexeme`]: crate::Number::lexeme

use std::fmt::{self, Write as _};

use sha2::{Digest as _, Sha256};

use crate::value::Value;

/// The canonical JSON text of `value`.
pub fn to_string(value: &Value<'_>) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// The SHA-256 digest of the canonical JSON text of `value`.
pub fn digest(value: &Value<'_>) -> Digest {
    Digest::of(to_string(value).as_bytes())
}

/// A SHA-256 digest; `Display` renders it as `sha256:` and 64 lower-case hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of some bytes.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// A digest from its raw 32 bytes, as stored earlier from [`Digest::as_bytes`].
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lower-case hex digits, without prefix.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            let _ = write!(s, "{b:02x}");
        }
        s
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

pub(crate) fn write_value(out: &mut String, value: &Value<'_>) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => out.push_str(&n.canonical()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(object) => {
            let mut members: Vec<(&str, &Value<'_>)> = object.iter().collect();
            members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (k, v)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

/// The offset of the first byte that must be escaped (a quote, a
/// backslash or a control character, all ASCII, so the offset is a
/// character boundary), a word of eight bytes at a time.
fn needs_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(word);
        let w = u64::from_le_bytes(buf);
        // The lowest set bit of each mask marks a byte that really matches
        // (borrows only spill upwards); bytes from 0x80 up never match.
        let special = has_zero(w ^ (ONES * u64::from(b'"')))
            | has_zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if special != 0 {
            return Some(i + (special.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes
        .get(i..)
        .unwrap_or_default()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|p| i + p)
}

/// Writes a string with RFC 8785's minimal escaping.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut rest = s;
    while let Some(pos) = needs_escape(rest.as_bytes()) {
        let (plain, tail) = rest.split_at(pos);
        out.push_str(plain);
        let mut chars = tail.chars();
        if let Some(c) = chars.next() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c => {
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                }
            }
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out.push('"');
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_exactly_what_must_be() {
        for text in [
            "",
            "plain text, long enough to fill words",
            "a\"b",
            "tab\there",
            "\u{1f}x",
            "é\\ü\u{7f}",
            "0123456\n",
            "😀😀\"",
            "\u{0}",
        ] {
            let mut fast = String::new();
            super::write_string(&mut fast, text);
            let mut slow = String::from('"');
            for c in text.chars() {
                match c {
                    '"' => slow.push_str("\\\""),
                    '\\' => slow.push_str("\\\\"),
                    '\u{8}' => slow.push_str("\\b"),
                    '\u{c}' => slow.push_str("\\f"),
                    '\n' => slow.push_str("\\n"),
                    '\r' => slow.push_str("\\r"),
                    '\t' => slow.push_str("\\t"),
                    c if c < ' ' => slow.push_str(&format!("\\u{:04x}", u32::from(c))),
                    c => slow.push(c),
                }
            }
            slow.push('"');
            assert_eq!(fast, slow, "{text:?}");
        }
    }
}
