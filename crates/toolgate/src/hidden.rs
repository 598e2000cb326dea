//! The one table of hidden characters: characters a reader does not see,
//! or that change how the text around them reads. Every place that shows
//! or scans text uses it: the tool-result sanitizer (which removes them),
//! the CLI's and the approvals page's display (which escape them), the MCP
//! pins' findings and the store's pin diff.
//!
//! | kind | characters |
//! |---|---|
//! | [`HiddenKind::Tag`] | U+E0000–U+E007F (tag characters: invisible ASCII) |
//! | [`HiddenKind::Bidi`] | U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069 (bidirectional controls: `U+202E` shows "amount: 1" as "1 :tnuoma") |
//! | [`HiddenKind::ZeroWidth`] | U+00AD, U+034F, U+180E, U+200B–U+200D, U+2060–U+2064, U+206A–U+206F, U+FEFF, U+FFF9–U+FFFB (zero-width and other invisible format characters) |
//! | [`HiddenKind::Filler`] | U+115F, U+1160, U+17B4, U+17B5, U+3164, U+FFA0 (characters that show as blank space) |
//! | [`HiddenKind::VariationSelector`] | U+180B–U+180D, U+180F, U+FE00–U+FE0F, U+E0100–U+E01EF (selectors that carry hidden text; an emoji keeps its look without them) |
//!
//! Controls (C0, DEL, C1) are not in the table: each place decides about
//! tab and newline itself, and every one of them treats the others as
//! unprintable.

/// Why a character is hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HiddenKind {
    /// Unicode tag characters.
    Tag,
    /// Bidirectional controls.
    Bidi,
    /// Zero-width and other invisible format characters.
    ZeroWidth,
    /// Characters that show as blank space (Hangul fillers, Khmer inherent
    /// vowels).
    Filler,
    /// Variation selectors.
    VariationSelector,
}

/// The table: inclusive ranges and their kind, in code point order.
pub const HIDDEN: &[(char, char, HiddenKind)] = &[
    ('\u{00AD}', '\u{00AD}', HiddenKind::ZeroWidth),
    ('\u{034F}', '\u{034F}', HiddenKind::ZeroWidth),
    ('\u{061C}', '\u{061C}', HiddenKind::Bidi),
    ('\u{115F}', '\u{1160}', HiddenKind::Filler),
    ('\u{17B4}', '\u{17B5}', HiddenKind::Filler),
    ('\u{180B}', '\u{180D}', HiddenKind::VariationSelector),
    ('\u{180E}', '\u{180E}', HiddenKind::ZeroWidth),
    ('\u{180F}', '\u{180F}', HiddenKind::VariationSelector),
    ('\u{200B}', '\u{200D}', HiddenKind::ZeroWidth),
    ('\u{200E}', '\u{200F}', HiddenKind::Bidi),
    ('\u{202A}', '\u{202E}', HiddenKind::Bidi),
    ('\u{2060}', '\u{2064}', HiddenKind::ZeroWidth),
    ('\u{2066}', '\u{2069}', HiddenKind::Bidi),
    ('\u{206A}', '\u{206F}', HiddenKind::ZeroWidth),
    ('\u{3164}', '\u{3164}', HiddenKind::Filler),
    ('\u{FE00}', '\u{FE0F}', HiddenKind::VariationSelector),
    ('\u{FEFF}', '\u{FEFF}', HiddenKind::ZeroWidth),
    ('\u{FFA0}', '\u{FFA0}', HiddenKind::Filler),
    ('\u{FFF9}', '\u{FFFB}', HiddenKind::ZeroWidth),
    ('\u{E0000}', '\u{E007F}', HiddenKind::Tag),
    ('\u{E0100}', '\u{E01EF}', HiddenKind::VariationSelector),
];

/// The kind of `c`, if it is hidden.
pub fn hidden_kind(c: char) -> Option<HiddenKind> {
    // The table is ordered: the last range starting at or before `c`.
    let at = HIDDEN.partition_point(|(start, _, _)| *start <= c);
    let (_, end, kind) = HIDDEN.get(at.checked_sub(1)?)?;
    (c <= *end).then_some(*kind)
}

/// Whether `c` is hidden.
pub fn is_hidden(c: char) -> bool {
    hidden_kind(c).is_some()
}

/// The table as the body of a JavaScript regular expression's character
/// class (for a `u`-flagged expression): `\u{AD}\u{34F}\u{61C}\u{115F}-\u{1160}…`.
/// The approvals page is served with it, so that it escapes exactly these.
pub fn javascript_class() -> String {
    let mut out = String::new();
    for (start, end, _) in HIDDEN {
        out.push_str(&format!("\\u{{{:X}}}", u32::from(*start)));
        if start != end {
            out.push_str(&format!("-\\u{{{:X}}}", u32::from(*end)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_ordered_and_disjoint() {
        for pair in HIDDEN.windows(2) {
            if let [(_, end, _), (start, _, _)] = pair {
                assert!(end < start, "{end:?} {start:?}");
            }
        }
        for (start, end, _) in HIDDEN {
            assert!(start <= end);
        }
    }

    #[test]
    fn every_range_and_its_edges() {
        for (start, end, kind) in HIDDEN {
            assert_eq!(hidden_kind(*start), Some(*kind));
            assert_eq!(hidden_kind(*end), Some(*kind));
            let before = char::from_u32(u32::from(*start) - 1).unwrap();
            let after = char::from_u32(u32::from(*end) + 1).unwrap();
            if !HIDDEN.iter().any(|(s, e, _)| (*s..=*e).contains(&before)) {
                assert_eq!(hidden_kind(before), None, "{before:?}");
            }
            if !HIDDEN.iter().any(|(s, e, _)| (*s..=*e).contains(&after)) {
                assert_eq!(hidden_kind(after), None, "{after:?}");
            }
        }
        for c in ['a', ' ', '\n', '\t', 'é', '한', '😀', '\u{0}'] {
            assert!(!is_hidden(c), "{c:?}");
        }
        assert_eq!(hidden_kind('\u{3164}'), Some(HiddenKind::Filler));
        assert_eq!(hidden_kind('\u{FE0F}'), Some(HiddenKind::VariationSelector));
        assert_eq!(hidden_kind('\u{202E}'), Some(HiddenKind::Bidi));
        assert_eq!(hidden_kind('\u{E0041}'), Some(HiddenKind::Tag));
    }

    #[test]
    fn the_page_gets_the_same_table() {
        let class = javascript_class();
        assert!(class.starts_with("\\u{AD}\\u{34F}\\u{61C}\\u{115F}-\\u{1160}"));
        assert!(class.contains("\\u{3164}"));
        assert!(class.contains("\\u{FE00}-\\u{FE0F}"));
        assert!(class.ends_with("\\u{E0100}-\\u{E01EF}"));
    }
}
