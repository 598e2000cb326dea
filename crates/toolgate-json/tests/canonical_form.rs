//! The canonical form byte for byte (RFC 8785): string escaping, member
//! order, number notation at its boundaries, `-0`, and the digest's bytes and
//! renderings. A text that parses back to the same value is not enough: a
//! second JCS implementation must compute the same digest.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate_json::{canonical, Digest, Number, ParseOptions, Value};

/// Parses with rounding admitted: the canonical form of a number a double
/// cannot hold exactly (refused by default, `number_too_precise`) is still
/// defined, and pinned here.
fn from_str(text: &str) -> Result<Value<'_>, toolgate_json::Error> {
    ParseOptions::new()
        .allow_rounding(true)
        .parse(text.as_bytes())
}

fn canon(text: &str) -> String {
    canonical::to_string(&from_str(text).unwrap())
}

/// RFC 8785 section 3.2.2.2, written out for every ASCII character: only
/// `"`, `\` and U+0000..U+001F are escaped, with the short forms where JSON
/// has them; everything else (space, `/`, DEL) is written as itself.
fn expected_escape(c: char) -> String {
    match c {
        '"' => "\\\"".to_owned(),
        '\\' => "\\\\".to_owned(),
        '\u{8}' => "\\b".to_owned(),
        '\u{c}' => "\\f".to_owned(),
        '\n' => "\\n".to_owned(),
        '\r' => "\\r".to_owned(),
        '\t' => "\\t".to_owned(),
        c if u32::from(c) < 0x20 => format!("\\u{:04x}", u32::from(c)),
        c => c.to_string(),
    }
}

#[test]
fn strings_escape_exactly_the_required_characters() {
    let extra = ['é', '€', '😀', '\u{7f}', '\u{80}', '\u{2028}', '\u{fffd}'];
    for c in (0u32..0x80).filter_map(char::from_u32).chain(extra) {
        let want = format!("\"a{}b\"", expected_escape(c));
        let v = Value::from(format!("a{c}b"));
        assert_eq!(canonical::to_string(&v), want, "U+{:04X}", u32::from(c));
        // Member names are written the same way.
        let mut o = toolgate_json::Object::new();
        o.insert(format!("{c}"), Value::Null);
        let want = format!("{{\"{}\":null}}", expected_escape(c));
        assert_eq!(canonical::to_string(&Value::Object(o)), want);
    }
    assert_eq!(canon(r#""a b/c""#), r#""a b/c""#);
    assert_eq!(canon(r#""\u0020\/\u00e9""#), "\" /é\"");
    assert_eq!(canon(r#"" \" ""#), r#"" \" ""#);
}

/// RFC 8785 section 3.2.3: names sort by their UTF-16 code units.
#[test]
fn members_sort_by_utf16_code_units() {
    let text = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
    let want = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}";
    assert_eq!(canon(text), want);
    assert_eq!(
        canon(r#" { "b" : [ 1 , { "d" : true , "c" : null } ] , "a" : "" } "#),
        r#"{"a":"","b":[1,{"c":null,"d":true}]}"#
    );
    assert_eq!(canon("[]"), "[]");
    assert_eq!(canon("{}"), "{}");
    assert_eq!(canon("[[],{}]"), "[[],{}]");
}

#[test]
fn minus_zero_is_written_as_zero() {
    for lexeme in ["-0", "-0.0", "-0e5", "-0E-5", "0e0", "-0.000"] {
        assert_eq!(canon(lexeme), "0", "{lexeme}");
        let n = Number::from_lexeme(lexeme).unwrap();
        assert_eq!(n.canonical(), "0", "{lexeme}");
        assert!(!n.is_negative(), "{lexeme}");
    }
    assert_eq!(Number::from_f64(-0.0).unwrap().canonical(), "0");
    assert_eq!(canon("[-0,0,-0.0]"), "[0,0,0]");
    // Not zero: the sign stays.
    assert_eq!(canon("-5e-324"), "-5e-324");
    assert_eq!(canon("-0.5"), "-0.5");
    assert_eq!(canon("-1"), "-1");
    assert_eq!(
        canon("-10000000000000000000000"),
        "-10000000000000000000000"
    );
}

/// Plain notation for a decimal point position n in (-6, 21], exponent
/// notation outside, as ECMAScript's `Number.prototype.toString`.
#[test]
fn notation_changes_at_1e21_and_1e_7() {
    let cases = [
        // Integers: plain up to 21 digits.
        ("1e20", "100000000000000000000"),
        ("123456789012345680000.0", "123456789012345680000"),
        ("999999999999999900000.0", "999999999999999900000"),
        ("1e21", "1e+21"),
        ("1.5e21", "1.5e+21"),
        ("1.2345e22", "1.2345e+22"),
        ("-1e21", "-1e+21"),
        ("1e308", "1e+308"),
        // Fractions with the point inside the digits.
        ("1.5", "1.5"),
        ("12345678901234567890.5", "12345678901234567000"),
        ("123456.789e0", "123456.789"),
        ("1.2e1", "12"),
        ("1.25e1", "12.5"),
        // Leading zeros: plain down to 1e-6.
        ("1e-6", "0.000001"),
        ("1.5e-6", "0.0000015"),
        ("0.0000123", "0.0000123"),
        ("0.1", "0.1"),
        ("1e-7", "1e-7"),
        ("1.5e-7", "1.5e-7"),
        ("-1.5e-7", "-1.5e-7"),
        ("1.2345e-10", "1.2345e-10"),
        ("5e-324", "5e-324"),
        ("1E+2", "100"),
        ("1.0", "1"),
    ];
    for (lexeme, want) in cases {
        assert_eq!(canon(lexeme), want, "{lexeme}");
        // The canonical text is its own canonical form.
        assert_eq!(canon(want), want, "{want}");
    }
    for (x, want) in [
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (0.5, "0.5"),
        (-2.5e-8, "-2.5e-8"),
        (4.5e15, "4500000000000000"),
    ] {
        assert_eq!(Number::from_f64(x).unwrap().canonical(), want, "{x:e}");
    }
}

#[test]
fn digests_are_sha256_of_the_canonical_text() {
    let v = from_str(r#"{ "a" : 1.0 }"#).unwrap();
    let d = canonical::digest(&v);
    let hex = "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862";
    assert_eq!(d.to_hex(), hex);
    assert_eq!(d.to_string(), format!("sha256:{hex}"));
    assert_eq!(format!("{d:?}"), format!("sha256:{hex}"));
    assert_eq!(d, Digest::of(br#"{"a":1}"#));
    let bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    assert_eq!(d.as_bytes().as_slice(), bytes.as_slice());
    assert_eq!(Digest::from_bytes(*d.as_bytes()), d);
    let empty = Digest::of(b"");
    assert_eq!(
        empty.to_hex(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_ne!(empty, d);
    assert_eq!(
        canonical::digest(&from_str(r#"{"amount": 4999.99999999999999999}"#).unwrap()).to_hex(),
        "ebcaef00f1233e161de434c851097c823acc682e2cd2ab73adab85f02f49551b"
    );
    // Leading zero bytes keep their two digits.
    let low = Digest::from_bytes([0x0a; 32]);
    assert_eq!(low.to_hex(), "0a".repeat(32));
}
