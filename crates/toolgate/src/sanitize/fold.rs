//! The text the scan reads: each character replaced by its compatibility
//! decomposition (Unicode NFKD: full-width `ｉｇｎｏｒｅ` is `ignore`,
//! `＜｜` is `<|`) and by a small fold of look-alikes (a Cyrillic `о`, a
//! `‹` or `‐` in `‹|im‐end|>`), with the offset in the original text of
//! every byte, so that findings point into the text the tool returned.
//!
//! The fold is for matching only: the sanitized text keeps what the tool
//! wrote.

use unicode_normalization::char::decompose_compatible;

/// A folded copy of a text and, for each of its bytes (and its end), the
/// offset in the original.
pub(super) struct Folded {
    pub(super) text: String,
    origin: Vec<usize>,
}

impl Folded {
    /// The offset in the original text of byte `at` of the folded text.
    pub(super) fn origin(&self, at: usize) -> usize {
        self.origin
            .get(at)
            .or_else(|| self.origin.last())
            .copied()
            .unwrap_or(0)
    }
}

/// `text` folded; `None` when folding changes nothing (ASCII text).
pub(super) fn fold(text: &str) -> Option<Folded> {
    if text.is_ascii() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len() + 1);
    for (at, c) in text.char_indices() {
        let before = out.len();
        decompose_compatible(c, |d| out.push(look_alike(d).unwrap_or(d)));
        origin.resize(origin.len() + (out.len() - before), at);
    }
    origin.push(text.len());
    Some(Folded { text: out, origin })
}

/// The ASCII character a look-alike stands for: the brackets, bars and
/// dashes of chat-template tokens, and the Cyrillic and Greek letters that
/// look like Latin ones (either case: the scan ignores ASCII case).
fn look_alike(c: char) -> Option<char> {
    Some(match c {
        '\u{2039}' | '\u{3008}' | '\u{27e8}' | '\u{276e}' | '\u{2c2}' => '<',
        '\u{203a}' | '\u{3009}' | '\u{27e9}' | '\u{276f}' | '\u{2c3}' => '>',
        '\u{1c0}' | '\u{2223}' | '\u{2502}' | '\u{2503}' | '\u{ffe8}' | '\u{a6}' => '|',
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' | '﹘' | '⁃' => '-',
        '‗' => '_',
        'а' | 'А' | 'α' | 'Α' => 'a',
        'в' | 'В' | 'β' | 'Β' => 'b',
        'с' | 'С' | 'ϲ' | 'Ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'Е' | 'ε' | 'Ε' => 'e',
        'ɡ' => 'g',
        'һ' | 'Н' | 'Η' => 'h',
        'і' | 'І' | 'ι' | 'Ι' | 'ı' => 'i',
        'ј' | 'Ј' => 'j',
        'к' | 'К' | 'κ' | 'Κ' => 'k',
        'ӏ' | 'Ӏ' => 'l',
        'м' | 'М' | 'Μ' => 'm',
        'п' | 'ո' | 'Ν' => 'n',
        'о' | 'О' | 'ο' | 'Ο' | 'օ' => 'o',
        'р' | 'Р' | 'ρ' | 'Ρ' => 'p',
        'ԛ' => 'q',
        'г' => 'r',
        'ѕ' | 'Ѕ' => 's',
        'т' | 'Т' | 'τ' | 'Τ' => 't',
        'ս' | 'υ' => 'u',
        'ν' | 'ѵ' => 'v',
        'ԝ' | 'ѡ' => 'w',
        'х' | 'Х' | 'χ' | 'Χ' => 'x',
        'у' | 'У' | 'γ' | 'Υ' => 'y',
        'Ζ' => 'z',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn full_width_and_look_alikes_fold_to_ascii_with_their_offsets() {
        assert!(fold("plain ascii").is_none());
        let f = fold("x ｉｇｎｏｒｅ ‹|im‐end|>").unwrap();
        assert_eq!(f.text, "x ignore <|im-end|>");
        // `i` is byte 2 in both; `g` is byte 3 folded, byte 5 original.
        assert_eq!((f.origin(2), f.origin(3)), (2, 5));
        assert_eq!(f.origin(f.text.len()), "x ｉｇｎｏｒｅ ‹|im‐end|>".len());
        assert_eq!(fold("іgnоrе").unwrap().text, "ignore");
    }
}
