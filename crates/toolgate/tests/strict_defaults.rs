//! Issue 31, the gate's strict defaults, from the attacker's side: a number
//! a double cannot hold is refused, not rounded; URL-looking string
//! arguments are guarded with a default policy even when the tool declares
//! none; hosts are resolved (through a configured resolver, here the static
//! table) and a host that resolves inside is denied.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::borrow::Cow;

use toolgate::config::Config;
use toolgate::{Context, Decision, Format, Gate, Verdict};
use toolgate_json::{canonical, Value};

fn json_string(s: &str) -> String {
    canonical::to_string(&Value::String(Cow::Borrowed(s)))
}

/// One call of `tool` with `args` (JSON text): as an OpenAI chat body
/// (arguments as a string) or an Anthropic body (arguments inline).
fn body(inline: bool, tool: &str, args: &str) -> String {
    if inline {
        format!(
            r#"{{"id":"msg","type":"message","role":"assistant","model":"m","content":[{{"type":"tool_use","id":"toolu_1","name":{},"input":{args}}}],"stop_reason":"tool_use"}}"#,
            json_string(tool)
        )
    } else {
        format!(
            r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":{},"arguments":{}}}}}]}}}}]}}"#,
            json_string(tool),
            json_string(args)
        )
    }
}

fn gate(toml: &str) -> Gate {
    let config = Config::parse(toml, "strict.toml").unwrap();
    Gate::builder(config.registry().clone())
        .gate_config(config.gate())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

fn decide(gate: &Gate, inline: bool, tool: &str, args: &str) -> Decision {
    let ctx = Context::new("alice", "s-1", 1);
    let d = gate.decide(
        body(inline, tool, args).as_bytes(),
        Format::Auto,
        &ctx,
        &ctx,
    );
    assert!(d.rejected().is_none(), "{d:?}");
    assert_eq!(d.decisions().len(), 1);
    d.into_decisions().remove(0)
}

/// (code, pointer, detail) of each reason.
fn reasons(d: &Decision) -> Vec<(String, String, Option<String>)> {
    d.reasons()
        .iter()
        .map(|r| {
            (
                r.code.as_str().to_owned(),
                r.pointer.clone(),
                r.detail.map(str::to_owned),
            )
        })
        .collect()
}

const PRICE: &str = r#"
[[tool]]
name = "set_price"
risk = "read"
schema_json = '{"type":"object","properties":{"p":{"type":"number","maximum":100},"q":{"type":"number"}},"required":["p"],"additionalProperties":false}'
"#;

#[test]
fn issue_31_a_number_a_double_cannot_hold_is_refused_not_rounded() {
    let g = gate(PRICE);
    for inline in [false, true] {
        // Read as a double this is 100, which `maximum: 100` admits; the
        // model wrote more than 100.
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 100.00000000000000000001}"#,
        );
        assert_eq!(d.verdict(), Verdict::Deny, "inline {inline}: {d:?}");
        assert_eq!(
            reasons(&d),
            [("number_too_precise".to_owned(), "/p".to_owned(), None)],
            "inline {inline}"
        );
        assert_eq!(d.executable_args(), None);
        // Deeper and later in the arguments, the pointer names the place.
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 1, "q": 0.30000000000000000001}"#,
        );
        assert_eq!(reasons(&d)[0].0, "number_too_precise", "inline {inline}");
        assert_eq!(reasons(&d)[0].1, "/q", "inline {inline}");
        // What a double holds exactly passes, and is handed on as written.
        for (written, handed) in [("0.1", "0.1"), ("2.5e-3", "0.0025"), ("1e300", "1e+300")] {
            let d = decide(
                &g,
                inline,
                "set_price",
                &format!(r#"{{"p": 1, "q": {written}}}"#),
            );
            assert_eq!(d.verdict(), Verdict::Allow, "{written}: {d:?}");
            assert_eq!(
                d.executable_args(),
                Some(format!(r#"{{"p":1,"q":{handed}}}"#).as_str())
            );
        }
        // Integers stay exact, beyond any double.
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 1, "q": 100000000000000000000001}"#,
        );
        assert_eq!(
            d.executable_args(),
            Some(r#"{"p":1,"q":100000000000000000000001}"#)
        );
    }
}

#[test]
fn issue_31_a_tool_opts_into_rounding_by_name() {
    let g = gate(&format!("{PRICE}round_numbers = true\n"));
    for inline in [false, true] {
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 100.00000000000000000001}"#,
        );
        assert_eq!(d.verdict(), Verdict::Allow, "inline {inline}: {d:?}");
        // The tool receives the value that was checked: the rounded one.
        assert_eq!(d.executable_args(), Some(r#"{"p":100}"#));
    }
}
