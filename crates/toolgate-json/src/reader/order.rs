//! The canonical order of member names (RFC 8785: by their UTF-16 code
//! units) as the reader compares them: a name's first eight bytes as one
//! word first, the whole names only when those are equal.

use std::cmp::Ordering;

/// The first eight bytes of a name as a big-endian word, zero-padded, with
/// the lead bytes `EE`..`F4` renumbered (see [`utf16_order`]), so that
/// comparing two words compares the names' heads in UTF-16 order.
#[inline]
pub(super) fn head(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let word = if let Some(first) = bytes.first_chunk::<8>() {
        u64::from_be_bytes(*first)
    } else {
        // Up to seven bytes, shifted in without a copy through memory.
        let word = bytes.iter().fold(0u64, |w, &b| (w << 8) | u64::from(b));
        word.checked_shl(64 - 8 * (bytes.len() as u32)).unwrap_or(0)
    };
    if word & 0x8080_8080_8080_8080 == 0 {
        word
    } else {
        utf16_order(word)
    }
}

/// Renumbers the bytes of a head so that byte order is UTF-16 order:
/// UTF-8 byte order is code point order, which differs from UTF-16 order
/// only in that U+E000..U+FFFF (lead byte `EE` or `EF`) come after the
/// supplementary planes (lead bytes `F0`..`F4`, a surrogate pair below
/// U+E000 in UTF-16). `F0`..`F4` become `EE`..`F2` and `EE`, `EF` become
/// `F3`, `F4`; no other byte value occurs in UTF-8 at or above `EE`, and
/// continuation bytes (`80`..`BF`) keep their values. Two heads first
/// differ at the same place in a character (they share what comes
/// before), so both bytes there are lead bytes or both are not. The
/// renumbering is one to one: equal heads stay equal and unequal ones
/// unequal.
fn utf16_order(word: u64) -> u64 {
    let mut bytes = word.to_be_bytes();
    for b in &mut bytes {
        *b = match *b {
            0xEE | 0xEF => *b + 5,
            0xF0..=0xF4 => *b - 2,
            other => other,
        };
    }
    u64::from_be_bytes(bytes)
}

/// Compares two names by their heads (see [`head`]) in UTF-16 order;
/// `Equal` when the heads are equal (the names may still differ).
#[inline]
pub(super) fn head_cmp(a: u64, b: u64) -> Ordering {
    a.cmp(&b)
}

/// Compares two strings by their UTF-16 code units, as RFC 8785 orders
/// member names, without transcoding: UTF-8 byte order is code point order,
/// which differs from UTF-16 order only between U+E000..U+FFFF (lead byte
/// `EE` or `EF`) and the supplementary planes (lead byte `F0`..`F4`, a
/// surrogate pair below U+E000 in UTF-16). At the first differing byte
/// both strings are at the same place in a character, so looking at those
/// two bytes is enough.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).find(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some((&x, &y)) => {
            let bmp_high = |c: u8| c == 0xEE || c == 0xEF;
            if x >= 0xF0 && bmp_high(y) {
                Ordering::Less
            } else if y >= 0xF0 && bmp_high(x) {
                Ordering::Greater
            } else {
                x.cmp(&y)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_order_matches_transcoding() {
        let names = [
            "",
            "a",
            "b",
            "ab",
            "\u{7f}",
            "é",
            "\u{d7ff}",
            "\u{e000}",
            "\u{ffff}",
            "\u{10000}",
            "😀",
            "\u{10ffff}",
            "a😀",
            "a\u{e000}",
            "\u{fb01}",
        ];
        for x in names {
            for y in names {
                assert_eq!(
                    utf16_cmp(x, y),
                    x.encode_utf16().cmp(y.encode_utf16()),
                    "{x:?} {y:?}"
                );
            }
        }
    }

    #[test]
    fn head_order_matches_transcoding() {
        let names = [
            "",
            "a",
            "a\u{0}",
            "a\u{1}",
            "ab",
            "abcdefgh",
            "abcdefghi",
            "abcdefgi",
            "é",
            "\u{e000}",
            "😀",
            "x\u{e000}",
            "x😀",
            "\u{ffff}a",
            "\u{10000}",
            "\u{7f}",
        ];
        for x in names {
            for y in names {
                let want = x.encode_utf16().cmp(y.encode_utf16());
                match head_cmp(head(x), head(y)) {
                    Ordering::Equal => assert_eq!(utf16_cmp(x, y), want, "{x:?} {y:?}"),
                    got => assert_eq!(got, want, "{x:?} {y:?}"),
                }
            }
        }
    }
}
