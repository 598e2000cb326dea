//! Numbers are written as ECMAScript's `Number.prototype.toString` writes
//! them (RFC 8785 section 3.2.2.3), byte for byte: the RFC's own sample
//! values, and a fixed sample of node's output (`tests/es6/sample.txt`, made
//! by `tests/es6/gen.mjs`; `examples/es6_numbers.rs` checks streams of any
//! length in the same layout).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate_json::{canonical, from_str, Number};

fn es6(bits: u64) -> Option<String> {
    Number::from_f64(f64::from_bits(bits)).map(|n| n.canonical().into_owned())
}

/// RFC 8785 appendix B: IEEE 754 bit patterns and the JSON text of each.
#[test]
fn rfc_8785_appendix_b() {
    let vectors: &[(u64, &str)] = &[
        (0x0000000000000000, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af5, "9.999999999999997e+22"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
        (0x444b1ae4d6e2ef4e, "999999999999999700000"),
        (0x444b1ae4d6e2ef4f, "999999999999999900000"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555553, "333333333.3333332"),
        (0x41b3de4355555554, "333333333.33333325"),
        (0x41b3de4355555555, "333333333.3333333"),
        (0x41b3de4355555556, "333333333.3333334"),
        (0x41b3de4355555557, "333333333.33333343"),
        (0xbecbf647612f3696, "-0.0000033333333333333333"),
        // Round to even.
        (0x43143ff3c1cb0959, "1424953923781206.2"),
    ];
    for (bits, want) in vectors {
        assert_eq!(es6(*bits).as_deref(), Some(*want), "{bits:016x}");
    }
    // NaN and the infinities have no JSON form.
    for bits in [0x7fffffffffffffff, 0x7ff0000000000000, 0xfff0000000000000] {
        assert_eq!(es6(bits), None, "{bits:016x}");
    }
}

/// Ties between two shortest candidates go to the even digit, through the
/// parser (admitting rounding) and the canonical form as a tool receives
/// them. By default such a lexeme is refused: its shortest form is another
/// decimal than the one written.
#[test]
fn ties_go_to_the_even_digit() {
    for (lexeme, want) in [
        ("1424953923781206.25", "1424953923781206.2"),
        ("2179473461229.28125", "2179473461229.2812"),
        ("-74977330.025390625", "-74977330.02539062"),
        ("1424953923781206.75", "1424953923781206.8"),
        ("[1424953923781206.25]", "[1424953923781206.2]"),
    ] {
        assert_eq!(
            from_str(lexeme).unwrap_err().code(),
            toolgate_json::ErrorCode::NumberTooPrecise
        );
        let v = toolgate_json::ParseOptions::new()
            .allow_rounding(true)
            .parse(lexeme.as_bytes())
            .unwrap();
        assert_eq!(canonical::to_string(&v), want, "{lexeme}");
        let again = from_str(want).unwrap();
        assert_eq!(canonical::to_string(&again), want, "{want}");
        assert_eq!(canonical::digest(&again), canonical::digest(&v));
    }
}

/// Checks every line of `hex_bits,expected`; returns how many there were.
fn check_lines(lines: &str) -> usize {
    let mut count = 0;
    for line in lines.lines() {
        let (hex, want) = line.split_once(',').unwrap();
        let bits = u64::from_str_radix(hex, 16).unwrap();
        assert_eq!(es6(bits).as_deref(), Some(want), "{line}");
        // The text reads back as the same double and is its own canonical form.
        let n = Number::from_lexeme(want).unwrap();
        assert_eq!(n.canonical(), want, "{line}");
        if bits != 1 << 63 {
            assert_eq!(want.parse::<f64>().unwrap().to_bits(), bits, "{line}");
        }
        count += 1;
    }
    count
}

/// Every line of the sample: node's `toString` of the double.
#[test]
fn node_sample() {
    assert_eq!(check_lines(include_str!("es6/sample.txt")), 20_000);
}

/// Every power of two and its neighbours: below a power of two the gap
/// between doubles halves, so the lower of two tied candidates may not read
/// back (2^-24 is `5.960464477539063e-8`, not `…062e-8`).
#[test]
fn powers_of_two() {
    assert_eq!(check_lines(include_str!("es6/powers.txt")), 6_293);
    assert_eq!(
        es6(0x3e70000000000000).as_deref(),
        Some("5.960464477539063e-8")
    );
}
