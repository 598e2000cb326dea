//! Differential tests against `serde_json`, on generated JSON texts.
//!
//! - On valid JSON both parsers agree on the value.
//! - Where toolgate rejects and serde_json accepts, the reason must be one of
//!   the strict profile's own: a duplicate key, an underflowing number, a
//!   noncharacter, or a limit. Anything else is a bug in one of them.
//! - Where serde_json rejects, toolgate rejects too.
//! - Every accepted value survives `parse(canonical(v)) == v`, and the
//!   canonical text is a fixed point.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate_json::{
    canonical, from_slice, ErrorCode, Limit, Limits, ParseOptions, Read, Reader, Value,
};
use toolgate_testkit::Rng;

fn ws(rng: &mut Rng, out: &mut String) {
    if rng.chance(20) {
        out.push_str(rng.pick(&[" ", "\n", "\t", "\r\n", "  "]));
    }
}

fn gen_char(rng: &mut Rng, out: &mut String) {
    match rng.below(12) {
        0 => out.push_str(rng.pick(&["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"])),
        1 => {
            // A \u escape of a random BMP scalar, or a surrogate pair.
            if rng.chance(30) {
                let cp = 0x10000 + rng.below(0x10_0000) as u32;
                let v = cp - 0x10000;
                let hi = 0xD800 + (v >> 10);
                let lo = 0xDC00 + (v & 0x3FF);
                out.push_str(&format!("\\u{hi:04x}\\u{lo:04X}"));
            } else {
                let cp = rng.below(0xFFFF) as u32;
                if (0xD800..0xE000).contains(&cp) {
                    out.push_str("\\u0041");
                } else {
                    out.push_str(&format!("\\u{cp:04x}"));
                }
            }
        }
        2 => {
            let c = char::from_u32(0x80 + rng.below(0x2FF80) as u32).unwrap_or('é');
            out.push(c);
        }
        3 => out.push_str(rng.pick(&["é", "日本", "😀", "\u{fdd0}", "\u{ffff}", "\u{10fffe}"])),
        4 => out.push_str(rng.pick(&["\\ud800", "\\udc00", "\\ufdd0", "\\uFFFE"])),
        _ => out.push(char::from(b'a' + rng.below(26) as u8)),
    }
}

fn gen_string(rng: &mut Rng, out: &mut String) {
    out.push('"');
    for _ in 0..rng.below(8) {
        gen_char(rng, out);
    }
    out.push('"');
}

fn gen_number(rng: &mut Rng, out: &mut String) {
    if rng.chance(30) {
        out.push('-');
    }
    let int_digits = match rng.below(10) {
        0 => 0,
        1..=5 => 1 + rng.below(4),
        6..=7 => 10 + rng.below(12),
        _ => 19 + rng.below(30),
    };
    if int_digits == 0 {
        out.push('0');
    } else {
        out.push(char::from(b'1' + rng.below(9) as u8));
        for _ in 1..int_digits {
            out.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
    if rng.chance(30) {
        out.push('.');
        for _ in 0..1 + rng.below(20) {
            out.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
    if rng.chance(25) {
        out.push_str(rng.pick(&["e", "E", "e+", "e-", "E-"]));
        let exp = match rng.below(6) {
            0 => 300 + rng.below(40),
            1 => 400 + rng.below(5000),
            _ => rng.below(30),
        };
        out.push_str(&exp.to_string());
    }
}

fn gen_value(rng: &mut Rng, out: &mut String, depth: u32) {
    ws(rng, out);
    let kind = if depth > 5 {
        rng.below(4)
    } else {
        rng.below(7)
    };
    match kind {
        0 => out.push_str(rng.pick(&["null", "true", "false"])),
        1 => gen_number(rng, out),
        2 | 3 => gen_string(rng, out),
        4 => {
            out.push('[');
            for i in 0..rng.below(5) {
                if i > 0 {
                    out.push(',');
                }
                gen_value(rng, out, depth + 1);
            }
            ws(rng, out);
            out.push(']');
        }
        _ => {
            out.push('{');
            let mut keys: Vec<String> = Vec::new();
            for i in 0..rng.below(6) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                if !keys.is_empty() && rng.chance(8) {
                    // Repeat an earlier name, sometimes spelled with escapes.
                    let k = keys[rng.index(keys.len())].clone();
                    out.push('"');
                    for c in k.chars() {
                        if rng.chance(50) && (c as u32) < 0x10000 {
                            out.push_str(&format!("\\u{:04x}", c as u32));
                        } else if c == '"' || c == '\\' {
                            out.push('\\');
                            out.push(c);
                        } else {
                            out.push(c);
                        }
                    }
                    out.push('"');
                } else {
                    let k = format!("k{}", rng.below(50));
                    out.push_str(&format!("\"{k}\""));
                    keys.push(k);
                }
                ws(rng, out);
                out.push(':');
                gen_value(rng, out, depth + 1);
            }
            ws(rng, out);
            out.push('}');
        }
    }
    ws(rng, out);
}

/// Whether a toolgate value equals a serde_json value.
fn same(ours: &Value, theirs: &serde_json::Value) -> bool {
    match (ours, theirs) {
        (Value::Null, serde_json::Value::Null) => true,
        (Value::Bool(a), serde_json::Value::Bool(b)) => a == b,
        (Value::String(a), serde_json::Value::String(b)) => a == b,
        (Value::Number(a), serde_json::Value::Number(b)) => {
            if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
                return x == y;
            }
            if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
                return x == y;
            }
            match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            }
        }
        (Value::Array(a), serde_json::Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), serde_json::Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => false,
    }
}

/// The tree-free reader accepts exactly what the tree parser accepts, under
/// the default limits and under tight ones, and writes the same canonical
/// text.
fn reader_agrees(text: &[u8]) {
    let tight = Limits::new()
        .set(Limit::Depth, 3)
        .and_then(|l| l.set(Limit::ObjectMembers, 3))
        .and_then(|l| l.set(Limit::ArrayItems, 3))
        .and_then(|l| l.set(Limit::StringBytes, 8))
        .and_then(|l| l.set(Limit::Values, 12))
        .unwrap();
    for options in [
        ParseOptions::new(),
        ParseOptions::new().with_limits(tight),
        ParseOptions::new().allow_rounding(true),
    ] {
        let mut reader = Reader::new(options);
        let scanned = reader.scan(text, &mut ());
        let read = reader.read(text, &mut ());
        assert_eq!(scanned, read, "{:?}", String::from_utf8_lossy(text));
        match options.parse(text) {
            Ok(v) => {
                assert_eq!(read, Read::Accepted, "{:?}", String::from_utf8_lossy(text));
                assert_eq!(reader.canonical(), canonical::to_string(&v));
            }
            Err(e) => assert_eq!(
                read,
                Read::Refused,
                "{e}: {:?}",
                String::from_utf8_lossy(text)
            ),
        }
    }
}

fn check_one(text: &[u8], stats: &mut [usize; 4]) {
    reader_agrees(text);
    let ours = from_slice(text);
    let theirs = serde_json::from_slice::<serde_json::Value>(text);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => {
            stats[0] += 1;
            assert!(
                same(a, b),
                "values differ for {:?}",
                String::from_utf8_lossy(text)
            );
            let canon = canonical::to_string(a);
            let again = from_slice(canon.as_bytes()).expect("canonical text must parse");
            assert_eq!(&again, a, "round trip of {canon}");
            assert_eq!(canonical::to_string(&again), canon, "fixed point");
            let theirs_again: serde_json::Value = serde_json::from_str(&canon).unwrap();
            assert!(
                same(&again, &theirs_again),
                "serde_json reads {canon} differently"
            );
        }
        (Err(e), Ok(_)) => {
            stats[1] += 1;
            let ours_only = [
                ErrorCode::DuplicateKey,
                ErrorCode::NumberOutOfRange,
                ErrorCode::NumberTooPrecise,
                ErrorCode::Noncharacter,
                ErrorCode::TooDeep,
                ErrorCode::TooLarge,
                ErrorCode::StringTooLong,
                ErrorCode::TooManyMembers,
                ErrorCode::TooManyItems,
                ErrorCode::TooManyValues,
            ];
            if e.code() == ErrorCode::NumberTooPrecise {
                // Admitted with rounding, it reads as serde_json reads it.
                let rounded = ParseOptions::new().allow_rounding(true).parse(text);
                match (&rounded, &theirs) {
                    (Ok(a), Ok(b)) => {
                        assert!(
                            same(a, b),
                            "values differ: {:?}",
                            String::from_utf8_lossy(text)
                        );
                    }
                    // A later violation of the profile only.
                    (Err(later), _) => assert!(
                        later.code() != ErrorCode::NumberTooPrecise
                            && ours_only.contains(&later.code()),
                        "{later}: {:?}",
                        String::from_utf8_lossy(text)
                    ),
                    (Ok(_), Err(_)) => panic!("serde_json accepted it"),
                }
            }
            assert!(
                ours_only.contains(&e.code()),
                "toolgate rejects ({e}) what serde_json accepts: {:?}",
                String::from_utf8_lossy(text)
            );
        }
        (Ok(_), Err(e)) => panic!(
            "toolgate accepts what serde_json rejects ({e}): {:?}",
            String::from_utf8_lossy(text)
        ),
        (Err(_), Err(_)) => stats[2] += 1,
    }
}

#[test]
fn agrees_with_serde_json_on_generated_json() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut stats = [0usize; 4];
    for _ in 0..20_000 {
        let mut text = String::new();
        gen_value(&mut rng, &mut text, 0);
        check_one(text.as_bytes(), &mut stats);
    }
    // The generator must exercise both sides.
    assert!(stats[0] > 5_000, "{stats:?}");
    assert!(stats[1] > 500, "{stats:?}");
}

#[test]
fn agrees_with_serde_json_on_corrupted_json() {
    let mut rng = Rng::new(0x1234_5678_9abc_def1);
    let mut stats = [0usize; 4];
    let noise: &[&[u8]] = &[
        b",",
        b"]",
        b"}",
        b"\"",
        b"\\",
        b"\x00",
        b"\xff",
        b"\xc3",
        b"\xed\xa0\x80",
        b"e",
        b"-",
        b"0",
        b"NaN",
        b"/",
        b"'",
        b"\t",
        b"\x0b",
    ];
    for _ in 0..20_000 {
        let mut text = String::new();
        gen_value(&mut rng, &mut text, 0);
        let mut bytes = text.into_bytes();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len() as u64 + 1) as usize;
            match rng.below(3) {
                0 if at < bytes.len() => {
                    bytes.remove(at);
                }
                1 => bytes.truncate(at),
                _ => {
                    let piece = noise[rng.below(noise.len() as u64) as usize];
                    bytes.splice(at..at, piece.iter().copied());
                }
            }
        }
        check_one(&bytes, &mut stats);
    }
    assert!(stats[2] > 5_000, "{stats:?}");
}
