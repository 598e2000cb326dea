//! The value validated is the value handed on: numeric keywords judge an
//! instance number at its canonical value, so whatever the validator accepts,
//! its canonical text (what a tool receives) is accepted too, with the same
//! digest.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use proptest::prelude::*;
use proptest::test_runner::Config;
use toolgate_json::{canonical, ParseOptions, Value};
use toolgate_schema::{ErrorCode, Mode, Options, Schema};

/// Parses with rounding admitted (`ParseOptions::allow_rounding`), as for a
/// tool that opts into rounding: the rules below are what such a tool gets.
/// By default a lexeme its double cannot hold is refused before any keyword
/// sees it (`by_default_a_rounded_number_never_reaches_a_keyword`).
fn from_str(text: &str) -> Result<Value<'_>, toolgate_json::Error> {
    ParseOptions::new()
        .allow_rounding(true)
        .parse(text.as_bytes())
}

#[test]
fn by_default_a_rounded_number_never_reaches_a_keyword() {
    for lexeme in ["4999.99999999999999999", "100.00000000000000000001"] {
        let e = toolgate_json::from_str(lexeme).unwrap_err();
        assert_eq!(e.code(), toolgate_json::ErrorCode::NumberTooPrecise);
        let mut checker = toolgate_schema::Checker::new(ParseOptions::new());
        let schema = compile(r#"{"type":"number","maximum":100}"#, Mode::Strict);
        assert!(matches!(
            checker.check(&schema, lexeme.as_bytes()),
            toolgate_schema::Checked::Malformed(e) if e.code() == toolgate_json::ErrorCode::NumberTooPrecise
        ));
    }
}

fn compile(schema: &str, mode: Mode) -> Schema {
    Schema::compile(&from_str(schema).unwrap(), &Options::new().mode(mode)).unwrap()
}

/// The verdict on an instance, and the verdict on its canonical text read again.
fn verdicts(schema: &Schema, instance: &str) -> (bool, bool) {
    let v = from_str(instance).unwrap();
    let again = canonical::to_string(&v);
    (
        schema.is_valid(&v),
        schema.is_valid(&from_str(&again).unwrap()),
    )
}

#[test]
fn a_long_decimal_is_judged_at_the_double_the_tool_receives() {
    let schema = compile(
        r#"{"type":"object","properties":{"amount":{"type":"number","exclusiveMaximum":5000}}}"#,
        Mode::Strict,
    );
    let v = from_str(r#"{"amount": 4999.99999999999999999}"#).unwrap();
    assert_eq!(canonical::to_string(&v), r#"{"amount":5000}"#);
    let errors = schema.validate(&v).unwrap_err();
    assert_eq!(errors.as_slice()[0].code(), ErrorCode::OutOfRange);
    assert!(!schema.is_valid(&v));
    // The same number written with 15 significant digits keeps its value.
    assert!(schema.is_valid(&from_str(r#"{"amount": 4999.99999999999}"#).unwrap()));

    let schema = compile(
        r#"{"type":"number","exclusiveMaximum":0.30000000000000004}"#,
        Mode::Strict,
    );
    let v = from_str("0.300000000000000035").unwrap();
    assert_eq!(canonical::to_string(&v), "0.30000000000000004");
    assert!(!schema.is_valid(&v));
    assert!(schema.validate(&v).is_err());
    assert!(schema.is_valid(&from_str("0.3").unwrap()));
    assert!(schema.is_valid(&from_str("0.30000000000000001").unwrap()));
}

#[test]
fn every_numeric_keyword_sees_the_canonical_value() {
    let cases: &[(&str, &str, bool)] = &[
        // Rounds up onto an inclusive bound from above or below.
        (r#"{"minimum":1}"#, "0.99999999999999999999", true),
        (r#"{"exclusiveMinimum":1}"#, "1.00000000000000000001", false),
        (r#"{"maximum":1}"#, "1.00000000000000000001", true),
        (
            r#"{"exclusiveMinimum":-5000}"#,
            "-4999.99999999999999999",
            false,
        ),
        // Beyond 2^54 the doubles are 4 apart: the leaf's fast check must not
        // accept what rounds past an integer bound.
        (
            r#"{"maximum":18014398509481987}"#,
            "18014398509481986.5",
            false,
        ),
        (
            r#"{"maximum":18014398509481988}"#,
            "18014398509481986.5",
            true,
        ),
        (
            r#"{"type":"number","maximum":18014398509481987}"#,
            "18014398509481986.5",
            false,
        ),
        // multipleOf of the value received, not of the digits written.
        (r#"{"multipleOf":0.5}"#, "2.50000000000000000001", true),
        (r#"{"multipleOf":3}"#, "2.99999999999999999999", true),
        (r#"{"multipleOf":0.01}"#, "1.0000000000000000001", true),
        (r#"{"multipleOf":0.01}"#, "19.999", false),
        // Exponents and big values.
        (r#"{"maximum":1e21}"#, "1.0000000000000000000001e21", true),
        (
            r#"{"exclusiveMaximum":1e21}"#,
            "9.9999999999999999999e20",
            false,
        ),
        // Integer lexemes keep their exact digits.
        (r#"{"maximum":9007199254740992}"#, "9007199254740993", false),
        (
            r#"{"maximum":9007199254740992}"#,
            "9007199254740993.0",
            true,
        ),
        // const and enum compare canonical values.
        (r#"{"const":1}"#, "1.0000000000000000000001", true),
        (
            r#"{"enum":[0.30000000000000004]}"#,
            "0.300000000000000035",
            true,
        ),
        (r#"{"const":0}"#, "-0.0", true),
    ];
    for (schema, instance, want) in cases {
        for mode in [Mode::Strict, Mode::Standard] {
            let s = compile(schema, mode);
            let (first, again) = verdicts(&s, instance);
            assert_eq!(first, *want, "{schema} vs {instance} ({mode:?})");
            assert_eq!(again, *want, "{schema} vs canonical {instance} ({mode:?})");
            let v = from_str(instance).unwrap();
            assert_eq!(s.validate(&v).is_ok(), *want, "{schema} vs {instance}");
        }
    }
    // Standard mode: `integer` is judged on the canonical value as well.
    let s = compile(r#"{"type":"integer"}"#, Mode::Standard);
    assert!(s.is_valid(&from_str("2.00000000000000000001").unwrap()));
    assert!(!s.is_valid(&from_str("2.000000000000001").unwrap()));
    assert!(s.is_valid(&from_str("1e300").unwrap()));
    // Strict mode: `integer` stays an integer lexeme.
    let s = compile(r#"{"type":"integer"}"#, Mode::Strict);
    assert!(!s.is_valid(&from_str("2.00000000000000000001").unwrap()));
}

/// A decimal text near a bound: the bound's neighbouring doubles printed with
/// too many digits, with digits appended, or long runs of 9s and 0s.
fn near(bound: f64) -> impl Strategy<Value = String> {
    let neighbours = (-2i64..=2).prop_map(move |step| {
        let bits = bound.to_bits();
        let moved = if bound > 0.0 {
            bits.wrapping_add_signed(step)
        } else {
            bits.wrapping_add_signed(-step)
        };
        let x = f64::from_bits(moved);
        if x.is_finite() {
            x
        } else {
            bound
        }
    });
    prop_oneof![
        // `{:.N e}` with 15 to 25 digits.
        (neighbours.clone(), 14usize..25).prop_map(|(x, n)| format!("{x:.n$e}")),
        // Shortest digits with a tail: `0.30000000000000003` + `5`.
        (
            neighbours.clone(),
            prop::sample::select(vec!["5", "49999", "50001", "0000001", "9999999", "1"])
        )
            .prop_map(|(x, tail)| {
                let plain = format!("{x}");
                if plain.contains('.') {
                    format!("{plain}{tail}")
                } else {
                    format!("{plain}.{tail}")
                }
            }),
        // The shortest digits themselves, in exponent form.
        neighbours.prop_map(|x| format!("{x:e}")),
    ]
}

/// Numbers of many shapes.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i32>().prop_map(|i| i.to_string()),
        any::<i64>().prop_map(|i| i.to_string()),
        // Integers beyond i64 and beyond 2^53, and their `.0` and exponent spellings.
        (
            "[1-9][0-9]{15,30}",
            prop::sample::select(vec!["", ".0", ".5", "e0", ".00000000000000000001"])
        )
            .prop_map(|(d, tail)| format!("{d}{tail}")),
        prop::sample::select(vec!["-0", "-0.0", "0e5", "0.0", "-0e-5"]).prop_map(str::to_owned),
        // Random finite doubles, shortest and overlong.
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_flat_map(near),
        // Mantissas of up to 25 digits with exponents.
        ("-?[1-9]\\.[0-9]{0,24}", -40i32..40).prop_map(|(m, e)| format!("{m}e{e}")),
        ("-?[0-9]{1,6}\\.[0-9]{1,25}").prop_map(|s| s),
    ]
}

/// A bound, written as an integer, a short decimal or a 17-digit double.
fn bound() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-10_000i64..10_000).prop_map(|i| i as f64),
        (-1_000_000i64..1_000_000).prop_map(|i| i as f64 / 1000.0),
        prop::sample::select(vec![
            0.30000000000000004,
            5000.0,
            1e21,
            1e-7,
            9007199254740992.0,
            18014398509481988.0,
            1424953923781206.2,
            2179473461229.2812,
            0.1,
        ]),
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
    ]
}

/// A schema with numeric keywords around `b`, and instance numbers near it.
fn case() -> impl Strategy<Value = (String, Vec<String>)> {
    bound().prop_flat_map(|b| {
        let lexeme = format!("{b:e}");
        let keyword = prop::sample::select(vec![
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "const",
            "enum",
            "multipleOf",
            "integer",
        ]);
        let divisor =
            prop::sample::select(vec!["0.01", "0.5", "3", "1e-3", "0.1", "1e-20", "7e300"]);
        let schema = (keyword, divisor).prop_map(move |(k, d)| match k {
            "const" => format!(r#"{{"const":{lexeme}}}"#),
            "enum" => format!(r#"{{"enum":[{lexeme},1,"x"]}}"#),
            "multipleOf" => format!(r#"{{"multipleOf":{d},"maximum":{lexeme}}}"#),
            "integer" => format!(r#"{{"type":"integer","minimum":{lexeme}}}"#),
            k => format!(r#"{{"type":"number","{k}":{lexeme}}}"#),
        });
        let numbers = prop::collection::vec(prop_oneof![3 => near(b), 1 => number()], 1..6);
        (schema, numbers)
    })
}

proptest! {
    #![proptest_config(Config { cases: 4096, failure_persistence: None, ..Config::default() })]

    /// Whatever is accepted, its canonical text is accepted, with the same digest.
    #[test]
    fn accepted_instances_are_accepted_as_handed_on((schema, numbers) in case()) {
        let wrapped = format!(
            r#"{{"type":"object","additionalProperties":{schema}}}"#
        );
        let members: Vec<String> = numbers
            .iter()
            .enumerate()
            .map(|(i, n)| format!(r#""n{i}": {n}"#))
            .collect();
        let instance = format!("{{{}}}", members.join(", "));
        let Ok(v) = from_str(&instance) else {
            // Only numbers out of the double range are refused by the parser.
            return Ok(());
        };
        let text = canonical::to_string(&v);
        let again: Value<'_> = from_str(&text).unwrap();
        prop_assert_eq!(canonical::to_string(&again), text.clone());
        prop_assert_eq!(canonical::digest(&again), canonical::digest(&v));
        for mode in [Mode::Strict, Mode::Standard] {
            let s = compile(&wrapped, mode);
            let first = s.is_valid(&v);
            prop_assert_eq!(first, s.validate(&v).is_ok());
            let second = s.is_valid(&again);
            if first {
                prop_assert!(second, "{} accepts {} but not {}", wrapped, instance, text);
            }
            if mode == Mode::Standard {
                // Nothing in standard mode looks at how a number is written.
                prop_assert_eq!(first, second, "{} on {} and {}", wrapped, instance, text);
            }
        }
    }
}
