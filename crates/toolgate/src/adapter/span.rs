//! Where a value sits in a JSON text already read by the strict parser: how
//! many bytes of the body a call's arguments took as they were received.
//!
//! The parser builds values, not spans; the size limits of a call's
//! arguments must count what the model sent (whitespace, escapes), not the
//! canonical text rebuilt from the value. This walk is only ever run over a
//! text the strict parser accepted, so it can skip without validating; on
//! anything unexpected it answers `None`, and the caller falls back to the
//! canonical text.

use toolgate_json::pointer::unescape_token;

/// The value at `pointer` in `text`: its byte range, whitespace inside it
/// included.
fn range_at(text: &[u8], pointer: &str) -> Option<(usize, usize)> {
    let mut pos = skip_ws(text, 0);
    if !pointer.is_empty() {
        let rest = pointer.strip_prefix('/')?;
        for raw in rest.split('/') {
            let token = unescape_token(raw);
            pos = match text.get(pos)? {
                b'{' => member(text, pos, token.as_bytes())?,
                b'[' => item(text, pos, token.parse().ok()?)?,
                _ => return None,
            };
        }
    }
    let end = skip_value(text, pos)?;
    Some((pos, end))
}

/// The length of the value at `pointer` as written; for a string, the
/// bytes between its quotes (escapes as written).
pub(crate) fn received_len(text: &[u8], pointer: &str) -> Option<usize> {
    let (start, end) = range_at(text, pointer)?;
    let len = end.checked_sub(start)?;
    if text.get(start) == Some(&b'"') {
        len.checked_sub(2)
    } else {
        Some(len)
    }
}

/// In the object at `pos`, the start of the value of the member named `name`.
fn member(text: &[u8], pos: usize, name: &[u8]) -> Option<usize> {
    let mut pos = skip_ws(text, pos.checked_add(1)?);
    loop {
        if text.get(pos)? != &b'"' {
            return None;
        }
        let key_end = skip_string(text, pos)?;
        let key = text.get(pos..key_end)?;
        pos = skip_ws(text, key_end);
        if text.get(pos)? != &b':' {
            return None;
        }
        pos = skip_ws(text, pos.checked_add(1)?);
        if key_is(key, name) {
            return Some(pos);
        }
        pos = skip_ws(text, skip_value(text, pos)?);
        match text.get(pos)? {
            b',' => pos = skip_ws(text, pos.checked_add(1)?),
            _ => return None,
        }
    }
}

/// In the array at `pos`, the start of item `index`.
fn item(text: &[u8], pos: usize, index: usize) -> Option<usize> {
    let mut pos = skip_ws(text, pos.checked_add(1)?);
    for _ in 0..index {
        pos = skip_ws(text, skip_value(text, pos)?);
        match text.get(pos)? {
            b',' => pos = skip_ws(text, pos.checked_add(1)?),
            _ => return None,
        }
    }
    match text.get(pos)? {
        b']' => None,
        _ => Some(pos),
    }
}

/// Whether the JSON string literal `key` (quotes included) spells `name`
/// once unescaped.
fn key_is(key: &[u8], name: &[u8]) -> bool {
    let inner = key.get(1..key.len().saturating_sub(1)).unwrap_or_default();
    if !inner.contains(&b'\\') {
        return inner == name;
    }
    toolgate_json::ParseOptions::new()
        .parse(key)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.as_bytes() == name))
        .unwrap_or(false)
}

fn skip_ws(text: &[u8], mut pos: usize) -> usize {
    while matches!(text.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// The end (exclusive) of the string literal starting at `pos`.
fn skip_string(text: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos.checked_add(1)?;
    loop {
        match text.get(i)? {
            b'\\' => i = i.checked_add(2)?,
            b'"' => return i.checked_add(1),
            _ => i += 1,
        }
    }
}

/// The end (exclusive) of the value starting at `pos`.
fn skip_value(text: &[u8], start: usize) -> Option<usize> {
    let mut pos = start;
    let mut depth = 0usize;
    loop {
        let Some(&b) = text.get(pos) else {
            return (depth == 0 && pos > start).then_some(pos);
        };
        match b {
            b'"' => {
                pos = skip_string(text, pos)?;
                if depth == 0 {
                    return Some(pos);
                }
            }
            b'{' | b'[' => {
                depth += 1;
                pos += 1;
            }
            b'}' | b']' if depth == 0 => return (pos > start).then_some(pos),
            b'}' | b']' => {
                depth -= 1;
                pos += 1;
                if depth == 0 {
                    return Some(pos);
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => {
                return (pos > start).then_some(pos);
            }
            _ => pos += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_count_what_was_written() {
        let body =
            br#" { "a" : [ 1 , { "in\u0070ut" :  {  "x" :   1 }  } ], "s": "a\"b", "n": 12 } "#;
        assert_eq!(
            received_len(body, "/a/1/input"),
            Some(r#"{  "x" :   1 }"#.len())
        );
        assert_eq!(received_len(body, "/s"), Some(4));
        assert_eq!(received_len(body, "/n"), Some(2));
        assert_eq!(received_len(body, "/a/0"), Some(1));
        assert_eq!(received_len(body, "/a/2"), None);
        assert_eq!(received_len(body, "/missing"), None);
        assert_eq!(received_len(body, "").map(|n| n > 40), Some(true));
        let tilde = br#"{"a/b":{"~":true}}"#;
        assert_eq!(received_len(tilde, "/a~1b/~0"), Some(4));
    }
}
