//! JSON Pointer (RFC 6901) tokens.

use std::borrow::Cow;

/// Appends `/token` to `pointer`, escaping `~` as `~0` and `/` as `~1`.
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Appends `/index` to `pointer`.
pub fn push_index(pointer: &mut String, index: usize) {
    pointer.push('/');
    pointer.push_str(&index.to_string());
}

/// Undoes the escaping of one reference token (`~1` → `/`, then `~0` → `~`).
pub fn unescape_token(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        let mut p = String::new();
        push_token(&mut p, "a/b~c");
        push_index(&mut p, 3);
        assert_eq!(p, "/a~1b~0c/3");
        assert_eq!(unescape_token("a~1b~0c"), "a/b~c");
        assert_eq!(unescape_token("~01"), "~1");
    }
}
