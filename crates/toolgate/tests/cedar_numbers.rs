#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! Issue 12: a valid call is never denied for a typing reason alone. JSON
//! Schema `number` arguments reach Cedar as the type their attribute is
//! declared with (or not at all, where the Cedar schema declares none), and
//! a config whose JSON Schema lets through a number the declared type
//! cannot hold exactly does not load.

use std::path::Path;

use toolgate::authz::{CedarAuthorizer, LoadErrorCode, Source};
use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};

const CEDAR_SCHEMA: &str = r#"
entity User;
entity Tool;
action measure appliesTo {
  principal: [User], resource: [Tool],
  context: { args: { label: String }, turn: Long, risk: String },
};
action pay appliesTo {
  principal: [User], resource: [Tool],
  context: { args: { amount: decimal, count?: Long }, turn: Long, risk: String },
};
"#;

const POLICIES: &str = r#"
@id("all") permit(principal, action, resource);
@id("pay-at-most-500") @code("not_authorized")
forbid(principal, action == Action::"pay", resource)
when { context.args.amount.greaterThan(decimal("500.00")) };
"#;

fn config(pay_amount: &str) -> String {
    format!(
        r#"
[[tool]]
name = "measure"
risk = "read"
schema_json = '{{"type":"object","properties":{{"label":{{"type":"string","maxLength":20}},"ratio":{{"type":"number"}}}},"required":["label","ratio"]}}'

[[tool]]
name = "pay"
risk = "write"
approval = "none"
schema_json = '{{"type":"object","properties":{{"amount":{pay_amount},"count":{{"type":"number","multipleOf":1,"minimum":0,"maximum":100}}}},"required":["amount"]}}'
"#
    )
}

const PAY_AMOUNT: &str =
    r#"{"type":"number","multipleOf":0.01,"minimum":-1000000,"maximum":1000000}"#;

fn authorizer(config: &Config) -> Result<CedarAuthorizer, toolgate::authz::LoadError> {
    let cedar = CedarAuthorizer::from_sources(
        Source::new(Path::new("p.cedar"), POLICIES),
        Source::new(Path::new("s.cedarschema"), CEDAR_SCHEMA),
        None,
    )?;
    cedar.check_registry(config.registry(), Path::new("s.cedarschema"))?;
    Ok(cedar)
}

fn gate() -> Gate {
    let config = Config::parse(&config(PAY_AMOUNT), "/nonexistent/t.toml").unwrap();
    Gate::builder(config.registry().clone())
        .authorizer(authorizer(&config).unwrap())
        .build()
        .unwrap()
}

/// The decision on one call with the raw arguments text: verdict and codes.
fn decide(gate: &Gate, tool: &str, args: &str) -> (Verdict, Vec<String>) {
    let args = toolgate_json::canonical::to_string(&toolgate_json::Value::from(args));
    let body = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"c","type":"function","function":{{"name":"{tool}","arguments":{args}}}}}]}}}}]}}"#
    );
    let ctx = Context::new("alice", "s", 1);
    let d = gate.decide(body.as_bytes(), Format::Auto, &ctx, &ctx);
    let call = &d.decisions()[0];
    (
        call.verdict(),
        call.reasons()
            .iter()
            .map(|r| r.code.as_str().to_owned())
            .collect(),
    )
}

/// Numbers with 0 to 17 fraction digits, each exactly a double (2^-n), so
/// that the canonical form is the lexeme; and integers and exponents.
fn numbers() -> Vec<String> {
    let mut out: Vec<String> = (0..=17)
        .map(|n| {
            let v = 0.5f64.powi(n);
            let text = format!("{v:.*}", usize::try_from(n).unwrap());
            assert_eq!(text.parse::<f64>().unwrap(), v);
            text
        })
        .collect();
    out.extend(
        [
            "0",
            "-0",
            "3",
            "-7",
            "100",
            "1e2",
            "2.5e-3",
            "1E2",
            "-2.5e-3",
            "12.5",
            "499.99",
            "500",
            "500.01",
            "123456789",
            "1e-7",
            "9007199254740993",
        ]
        .map(str::to_owned),
    );
    out
}

#[test]
fn a_number_no_policy_mentions_is_never_an_authorization_error() {
    let gate = gate();
    for n in numbers() {
        let (verdict, codes) = decide(&gate, "measure", &format!(r#"{{"label":"x","ratio":{n}}}"#));
        assert_eq!((verdict, codes), (Verdict::Allow, Vec::new()), "ratio {n}");
    }
}

#[test]
fn a_number_a_policy_compares_is_compared_exactly() {
    let gate = gate();
    for n in numbers() {
        let (verdict, codes) = decide(&gate, "pay", &format!(r#"{{"amount":{n}}}"#));
        assert!(
            !codes.iter().any(|c| c == "authorization_error"),
            "amount {n}: {codes:?}"
        );
        let value: f64 = n.parse().unwrap();
        let cents = (value * 100.0).round();
        let whole_cents = ((value * 100.0) - cents).abs() < 1e-6;
        let expected = if value.abs() > 1_000_000.0 {
            (Verdict::Deny, vec!["out_of_range".to_owned()])
        } else if !whole_cents {
            (Verdict::Deny, vec!["not_multiple".to_owned()])
        } else if value > 500.0 {
            (Verdict::Deny, vec!["not_authorized".to_owned()])
        } else {
            (Verdict::Allow, Vec::new())
        };
        assert_eq!((verdict, codes), expected, "amount {n}");
    }
    // A whole-number argument declared `Long` stays a `Long`.
    let (verdict, codes) = decide(&gate, "pay", r#"{"amount":1,"count":1e1}"#);
    assert_eq!((verdict, codes), (Verdict::Allow, Vec::new()));
}

#[test]
fn a_schema_that_lets_through_what_the_declared_type_cannot_hold_does_not_load() {
    for (amount, says) in [
        (r#"{"type":"number"}"#, "`/amount`"),
        (
            r#"{"type":"number","multipleOf":0.00001,"minimum":0,"maximum":10}"#,
            "multipleOf",
        ),
        (
            r#"{"type":"number","multipleOf":0.01,"minimum":0}"#,
            "maximum",
        ),
        (
            r#"{"type":"number","multipleOf":0.01,"minimum":0,"maximum":1e300}"#,
            "922337203685477",
        ),
        (r#"{"type":"integer","minimum":0}"#, "`integer`"),
    ] {
        let config = Config::parse(&config(amount), "/nonexistent/t.toml").unwrap();
        let err = authorizer(&config).unwrap_err();
        assert_eq!(err.code(), LoadErrorCode::UnrepresentableNumber, "{amount}");
        assert_eq!(err.code().as_str(), "unrepresentable_number");
        let text = err.to_string();
        assert!(
            text.contains("tool `pay`") && text.contains(says),
            "{amount}: {text}"
        );
    }
    // Bounded whole numbers and cents load.
    for amount in [
        r#"{"type":"integer","minimum":0,"maximum":100}"#,
        r#"{"type":"number","multipleOf":0.25,"exclusiveMinimum":0,"maximum":1e6}"#,
    ] {
        let config = Config::parse(&config(amount), "/nonexistent/t.toml").unwrap();
        authorizer(&config).unwrap();
    }
}
