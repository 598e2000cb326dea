//! Error tables: the exact code, position and pointer for each kind of bad
//! input, run through every entry point.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate_json::{from_slice, from_str, Error, ErrorCode, ParseOptions};

/// Every entry point that takes text.
fn parse_all_ways(input: &[u8]) -> Vec<Result<toolgate_json::Value<'_>, Error>> {
    let mut out = vec![from_slice(input), ParseOptions::new().parse(input)];
    if let Ok(s) = std::str::from_utf8(input) {
        out.push(from_str(s));
    }
    out
}

#[track_caller]
fn err(input: &[u8], code: ErrorCode, offset: usize, pointer: &str) {
    for result in parse_all_ways(input) {
        let e = match result {
            Ok(v) => panic!("accepted {:?}: {v:?}", String::from_utf8_lossy(input)),
            Err(e) => e,
        };
        assert_eq!(
            (e.code(), e.offset(), e.pointer()),
            (code, offset, pointer),
            "input {:?}: {e}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn syntax_errors() {
    let cases: &[(&[u8], ErrorCode, usize, &str)] = &[
        (b"{\"a\":1,}", ErrorCode::InvalidSyntax, 7, ""),
        (b"[1,]", ErrorCode::InvalidSyntax, 3, "/1"),
        (b"[01]", ErrorCode::InvalidSyntax, 2, "/0"),
        (b"[+1]", ErrorCode::InvalidSyntax, 1, "/0"),
        (b"[.5]", ErrorCode::InvalidSyntax, 1, "/0"),
        (b"['a']", ErrorCode::InvalidSyntax, 1, "/0"),
        (b"/* c */ 1", ErrorCode::InvalidSyntax, 0, ""),
        (b"[1] // c", ErrorCode::TrailingData, 4, ""),
        (b"{} x", ErrorCode::TrailingData, 3, ""),
        (b"1 2", ErrorCode::TrailingData, 2, ""),
        (b"\xc2\xa01", ErrorCode::InvalidSyntax, 0, ""),
        (b"[tru e]", ErrorCode::InvalidSyntax, 4, "/0"),
        (b"{\"a\" 1}", ErrorCode::InvalidSyntax, 5, ""),
        (b"{1:1}", ErrorCode::InvalidSyntax, 1, ""),
        (b"[1 2]", ErrorCode::InvalidSyntax, 3, "/1"),
        (b"\"\\x\"", ErrorCode::InvalidEscape, 1, ""),
        (b"\"\\u12G4\"", ErrorCode::InvalidEscape, 5, ""),
        (b"\"a\tb\"", ErrorCode::ControlCharacter, 2, ""),
    ];
    for (input, code, offset, pointer) in cases {
        err(input, *code, *offset, pointer);
    }
}

#[test]
fn truncation_is_its_own_code() {
    let cases: &[(&[u8], usize, &str)] = &[
        (b"", 0, ""),
        (b"   ", 3, ""),
        (b"{\"amount\": 300", 14, ""),
        (b"{\"amount\": 3", 12, ""),
        (b"{\"a\":", 5, "/a"),
        (b"{\"a\"", 4, ""),
        (b"{\"a", 3, ""),
        (b"{", 1, ""),
        (b"[1,", 3, "/1"),
        (b"[", 1, "/0"),
        (b"[\"abc", 5, "/0"),
        (b"tru", 3, ""),
        (b"nul", 3, ""),
        (b"-", 1, ""),
        (b"1.", 2, ""),
        (b"1e+", 3, ""),
        (b"\"\\u00", 5, ""),
        (b"\"\\", 2, ""),
        (b"\"\\ud800", 7, ""),
    ];
    for (input, offset, pointer) in cases {
        err(input, ErrorCode::Truncated, *offset, pointer);
    }
}

#[test]
fn numbers() {
    err(b"[1e400]", ErrorCode::NonFiniteNumber, 1, "/0");
    err(b"{\"x\":-1e400}", ErrorCode::NonFiniteNumber, 5, "/x");
    err(b"[1e-400]", ErrorCode::NumberOutOfRange, 1, "/0");
    // More precision than the double holds: refused, not read as 100.
    err(
        b"{\"p\": 100.00000000000000000001}",
        ErrorCode::NumberTooPrecise,
        6,
        "/p",
    );
    err(b"NaN", ErrorCode::NonFiniteNumber, 0, "");
    err(b"[Infinity]", ErrorCode::NonFiniteNumber, 1, "/0");
    err(b"[-Infinity]", ErrorCode::NonFiniteNumber, 1, "/0");
    err(b"[-Inf]", ErrorCode::InvalidSyntax, 5, "/0");
    err(b"-Inf", ErrorCode::Truncated, 4, "");
    for ok in [
        "0e999",
        "-0.0",
        "1e-300",
        "5e-324",
        "123456789012345678901234567890",
    ] {
        assert!(from_slice(ok.as_bytes()).is_ok(), "{ok}");
    }
}

#[test]
fn encoding() {
    err(b"\xef\xbb\xbf{}", ErrorCode::ByteOrderMark, 0, "");
    err(b"\"\xc0\xaf\"", ErrorCode::InvalidUtf8, 1, "");
    err(b"[\"ab\xed\xa0\x80\"]", ErrorCode::InvalidUtf8, 4, "/0");
    err(b"\"\xf4\x90\x80\x80\"", ErrorCode::InvalidUtf8, 2, "");
    err(b"\xff\xfe[\x00]\x00", ErrorCode::InvalidUtf8, 0, "");
    err(b"\"\\ud800\"", ErrorCode::LoneSurrogate, 1, "");
    err(b"\"\\udc00\\ud800\"", ErrorCode::LoneSurrogate, 1, "");
    err(b"\"\\ud800\\u0041\"", ErrorCode::LoneSurrogate, 1, "");
    err(b"{\"\\udfaa\":1}", ErrorCode::LoneSurrogate, 2, "");
    err(b"\"\\ufdd0\"", ErrorCode::Noncharacter, 1, "");
    err(b"\"\xef\xbf\xbf\"", ErrorCode::Noncharacter, 1, "");
    err(b"\"\\udbff\\udfff\"", ErrorCode::Noncharacter, 1, "");
    // The option admits them.
    let relaxed = ParseOptions::new().allow_noncharacters(true);
    assert!(relaxed.parse(b"\"\\ufdd0\xef\xbf\xbf\"").is_ok());
    assert!(from_slice("\"\u{1F600}\\ud83d\\ude00\"".as_bytes()).is_ok());
}

#[test]
fn duplicate_keys_name_the_object_and_the_key() {
    let e = from_slice(br#"{"limit":10,"\u006cimit":1000000}"#).unwrap_err();
    assert_eq!(e.code(), ErrorCode::DuplicateKey);
    assert_eq!((e.pointer(), e.key(), e.offset()), ("", Some("limit"), 12));
    let e = from_slice(br#"{"outer":{"x":1,"y":2,"x":3}}"#).unwrap_err();
    assert_eq!((e.pointer(), e.key()), ("/outer", Some("x")));
    let e = from_slice(br#"[{"a":1},{"b~/":1,"b~\/":2}]"#).unwrap_err();
    assert_eq!((e.pointer(), e.key()), ("/1", Some("b~/")));
    // Large objects use a hash index; duplicates far apart are still found.
    let mut text = String::from("{");
    for i in 0..500 {
        text.push_str(&format!("\"k{i}\":{i},"));
    }
    text.push_str("\"k250\":0}");
    let e = from_slice(text.as_bytes()).unwrap_err();
    assert_eq!((e.code(), e.key()), (ErrorCode::DuplicateKey, Some("k250")));
    assert!(from_slice(br#"{"a":1,"a\u0000":2,"A":3}"#).is_ok());
}

#[test]
fn error_text_never_echoes_input() {
    let secret = "hunter2-secret";
    let inputs = [
        format!(r#"{{"{secret}":1,"{secret}":2}}"#),
        format!(r#"{{"k":"{secret}\x"}}"#),
        format!(r#"{{"k":"{secret}"#),
        format!(r#"{{"k":"{secret}"}} {secret}"#),
        format!("[\"{secret}\t\"]"),
    ];
    for input in inputs {
        let e = from_slice(input.as_bytes()).unwrap_err();
        assert!(!e.to_string().contains(secret), "{e}");
        assert!(!format!("{e:?}").contains(secret), "{e:?}");
    }
}

#[test]
fn display_is_one_line_with_position() {
    let e = from_slice(b"{\n  \"a\": 1,\n  \"a\": 2\n}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "duplicate_key: duplicate member name at line 3 column 3 in object at ``"
    );
    let e = from_slice(b"[\n 1,\n x]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid_syntax: invalid json syntax at line 3 column 2 at `/1`"
    );
}

/// Strings are scanned a word at a time: put each kind of special byte at
/// every position of strings of every length across two words, and check
/// that the parser finds it exactly there.
#[test]
fn special_bytes_are_found_at_every_position_in_a_word() {
    for len in 0..24usize {
        for at in 0..len {
            let plain = |i: usize| (b'a' + u8::try_from(i % 26).unwrap()) as char;
            let before: String = (0..at).map(plain).collect();
            let after: String = (at + 1..len).map(plain).collect();
            // An escape is decoded, wherever it sits.
            let text = format!("[\"{before}\\n{after}\",1]");
            let v = from_str(&text).unwrap();
            let s = v.pointer("/0").and_then(|s| s.as_str()).unwrap();
            assert_eq!(s, format!("{before}\n{after}"), "{text}");
            // A raw control character is refused at its own offset.
            let text = format!("[\"{before}\u{1}{after}\",1]");
            err(text.as_bytes(), ErrorCode::ControlCharacter, 2 + at, "/0");
            // Non-ASCII text is kept; a noncharacter is refused where it starts.
            let text = format!("[\"{before}é€{after}\",1]");
            let v = from_str(&text).unwrap();
            let s = v.pointer("/0").and_then(|s| s.as_str()).unwrap();
            assert_eq!(s, format!("{before}é€{after}"), "{text}");
            let text = format!("[\"{before}\u{FFFE}{after}\",1]");
            err(text.as_bytes(), ErrorCode::Noncharacter, 2 + at, "/0");
            // The closing quote ends the string exactly.
            let text = format!("[\"{before}\",\"{after}\"]");
            let v = from_str(&text).unwrap();
            assert_eq!(
                v.pointer("/0").and_then(|s| s.as_str()),
                Some(before.as_str())
            );
            assert_eq!(
                v.pointer("/1").and_then(|s| s.as_str()),
                Some(after.as_str())
            );
        }
    }
}
