//! Every limit, exactly at its boundary: the limit itself is accepted, one
//! more is refused with the limit's own code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate_json::{from_slice, ErrorCode, Limit, Limits, ParseOptions};

fn with(limit: Limit, value: usize) -> ParseOptions {
    ParseOptions::new().with_limits(Limits::new().set(limit, value).unwrap())
}

#[track_caller]
fn boundary(limit: Limit, value: usize, at: &str, over: &str, code: ErrorCode) {
    let options = with(limit, value);
    if let Err(e) = options.parse(at.as_bytes()) {
        panic!("{limit} = {value}: input at the limit refused: {e}");
    }
    let e = options.parse(over.as_bytes()).unwrap_err();
    assert_eq!(e.code(), code, "{limit} = {value}: {e}");
}

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn depth_default_is_64() {
    assert!(from_slice(nested(64).as_bytes()).is_ok());
    let e = from_slice(nested(65).as_bytes()).unwrap_err();
    assert_eq!((e.code(), e.offset()), (ErrorCode::TooDeep, 64));
    assert_eq!(e.pointer(), format!("{}", "/0".repeat(64)));
    // Empty containers count too: `[]` has depth 1.
    assert!(with(Limit::Depth, 1).parse(b"[]").is_ok());
    assert!(with(Limit::Depth, 1).parse(b"{}").is_ok());
    assert_eq!(
        with(Limit::Depth, 1).parse(b"[[]]").unwrap_err().code(),
        ErrorCode::TooDeep
    );
    assert!(with(Limit::Depth, 1).parse(b"1").is_ok());
}

#[test]
fn depth_of_mixed_containers() {
    let at = format!("{}0{}", r#"{"a":["#.repeat(3), "]}".repeat(3));
    let over = format!("{}[0]{}", r#"{"a":["#.repeat(3), "]}".repeat(3));
    boundary(Limit::Depth, 6, &at, &over, ErrorCode::TooDeep);
}

#[test]
fn hundred_thousand_deep_is_refused_cleanly() {
    for open in ["[", "{\"a\":"] {
        let input = open.repeat(100_000);
        let e = from_slice(input.as_bytes()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::TooDeep);
        // Even at the depth ceiling nothing overflows the stack.
        let deep = with(Limit::Depth, Limit::Depth.ceiling());
        let e = deep.parse(input.as_bytes()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::TooDeep);
    }
    let at_ceiling = nested(Limit::Depth.ceiling());
    let v = with(Limit::Depth, Limit::Depth.ceiling())
        .parse(at_ceiling.as_bytes())
        .unwrap();
    assert_eq!(v.to_canonical_string(), at_ceiling);
}

#[test]
fn input_bytes() {
    boundary(
        Limit::InputBytes,
        7,
        "[1,2,3]",
        "[1,2,30]",
        ErrorCode::TooLarge,
    );
    let e = with(Limit::InputBytes, 7).parse(b"[1,2,30]").unwrap_err();
    assert_eq!(e.offset(), 7);
}

#[test]
fn string_bytes_after_unescaping() {
    boundary(
        Limit::StringBytes,
        3,
        r#""abc""#,
        r#""abcd""#,
        ErrorCode::StringTooLong,
    );
    // Counted after unescaping, in UTF-8 bytes: `\u00e9` is two bytes.
    boundary(
        Limit::StringBytes,
        3,
        r#""a\u00e9""#,
        r#""ab\u00e9""#,
        ErrorCode::StringTooLong,
    );
    // Member names are strings too.
    boundary(
        Limit::StringBytes,
        3,
        r#"{"abc":1}"#,
        r#"{"abcd":1}"#,
        ErrorCode::StringTooLong,
    );
    assert_eq!(
        Limits::new().get(Limit::StringBytes),
        Limit::StringBytes.default_value()
    );
}

#[test]
fn object_members() {
    boundary(
        Limit::ObjectMembers,
        3,
        r#"{"a":1,"b":2,"c":3}"#,
        r#"{"a":1,"b":2,"c":3,"d":4}"#,
        ErrorCode::TooManyMembers,
    );
    let e = with(Limit::ObjectMembers, 1)
        .parse(br#"{"x":{"a":1,"b":2}}"#)
        .unwrap_err();
    assert_eq!(
        (e.code(), e.offset(), e.pointer()),
        (ErrorCode::TooManyMembers, 12, "/x")
    );
}

#[test]
fn array_items() {
    boundary(
        Limit::ArrayItems,
        3,
        "[1,2,3]",
        "[1,2,3,4]",
        ErrorCode::TooManyItems,
    );
    let e = with(Limit::ArrayItems, 3).parse(b"[1,2,3,4]").unwrap_err();
    assert_eq!((e.offset(), e.pointer()), (7, "/3"));
}

#[test]
fn total_values() {
    // `[1,[2]]` holds four values: two arrays and two numbers.
    boundary(
        Limit::Values,
        4,
        "[1,[2]]",
        "[1,[2,3]]",
        ErrorCode::TooManyValues,
    );
    boundary(
        Limit::Values,
        3,
        r#"{"a":{"b":1}}"#,
        r#"{"a":{"b":1},"c":2}"#,
        ErrorCode::TooManyValues,
    );
}

#[test]
fn defaults_are_on() {
    let limits = Limits::new();
    for limit in Limit::ALL {
        assert!(limits.get(limit) > 0);
        assert!(limits.get(limit) <= limit.ceiling());
    }
    let big_array = format!("[{}0]", "0,".repeat(100_000));
    assert_eq!(
        from_slice(big_array.as_bytes()).unwrap_err().code(),
        ErrorCode::TooManyItems
    );
    let big_object = format!(
        "{{{}\"z\":0}}",
        (0..10_000)
            .map(|i| format!("\"k{i}\":0,"))
            .collect::<String>()
    );
    assert_eq!(
        from_slice(big_object.as_bytes()).unwrap_err().code(),
        ErrorCode::TooManyMembers
    );
    let big_string = format!("\"{}\"", "a".repeat((1 << 20) + 1));
    assert_eq!(
        from_slice(big_string.as_bytes()).unwrap_err().code(),
        ErrorCode::StringTooLong
    );
    let big_input = vec![b' '; (8 << 20) + 1];
    assert_eq!(
        from_slice(&big_input).unwrap_err().code(),
        ErrorCode::TooLarge
    );
}
