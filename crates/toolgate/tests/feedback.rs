#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! Issue 12: the feedback a model gets for a schema violation names what
//! the schema expects (from the schema, never from the value), one test row
//! per schema code, through the library's gate on an OpenAI response.

use std::path::Path;

use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};

/// The distinctive rejected value: it must never be in the feedback.
const SECRET: &str = "SECRET-VALUE-123";

/// (code, the tool's schema, the arguments, what the feedback must say)
const CASES: &[(&str, &str, &str, &[&str])] = &[
    (
        "type_mismatch",
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
        r#"{"n":"SECRET-VALUE-123"}"#,
        &["type_mismatch at /n: expected integer"],
    ),
    (
        "missing_required",
        r#"{"type":"object","properties":{"note":{"type":"string"},"order_id":{"type":"string"}},"required":["order_id"]}"#,
        r#"{"note":"SECRET-VALUE-123"}"#,
        &["missing_required: missing required member `order_id`"],
    ),
    (
        "unknown_property",
        r#"{"type":"object","properties":{"amount":{"type":"integer"},"reason":{"type":"string"}},"required":["amount"]}"#,
        r#"{"amount":1,"SECRET-VALUE-123":"SECRET-VALUE-123"}"#,
        &["unknown_property at /*: member is not allowed: the declared members are `amount`, `reason`"],
    ),
    (
        "unknown_item",
        r#"{"type":"object","properties":{"pair":{"type":"array","prefixItems":[{"type":"string"}],"items":false}}}"#,
        r#"{"pair":["a","SECRET-VALUE-123"]}"#,
        &["unknown_item at /pair/1: no item is allowed here: expected at most 1 items"],
    ),
    (
        "out_of_range",
        r#"{"type":"object","properties":{"n":{"type":"integer","maximum":5000}}}"#,
        r#"{"n":987654321}"#,
        &["out_of_range at /n: expected a number at most 5000"],
    ),
    (
        "length",
        r#"{"type":"object","properties":{"s":{"type":"string","maxLength":5}}}"#,
        r#"{"s":"SECRET-VALUE-123"}"#,
        &["length at /s: expected at most 5 characters"],
    ),
    (
        "size",
        r#"{"type":"object","properties":{"l":{"type":"array","maxItems":1,"items":{"type":"string"}}}}"#,
        r#"{"l":["SECRET-VALUE-123","SECRET-VALUE-123x"]}"#,
        &["size at /l: expected at most 1 items"],
    ),
    (
        "pattern",
        r#"{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]+$"}}}"#,
        r#"{"s":"SECRET-VALUE-123"}"#,
        &["pattern at /s: expected to match `^[a-z]+$`"],
    ),
    (
        "enum",
        r#"{"type":"object","properties":{"size":{"enum":["small","large",3]}}}"#,
        r#"{"size":"SECRET-VALUE-123"}"#,
        &[r#"enum at /size: expected one of `"small"`, `"large"`, `3`"#],
    ),
    (
        "const",
        r#"{"type":"object","properties":{"action":{"const":"refund"}}}"#,
        r#"{"action":"SECRET-VALUE-123"}"#,
        &[r#"const at /action: expected `"refund"`"#],
    ),
    (
        "format",
        r#"{"type":"object","properties":{"mail":{"type":"string","format":"email"}}}"#,
        r#"{"mail":"SECRET-VALUE-123"}"#,
        &["format at /mail: expected format `email`"],
    ),
    (
        "not_multiple",
        r#"{"type":"object","properties":{"n":{"type":"integer","multipleOf":7}}}"#,
        r#"{"n":987654322}"#,
        &["not_multiple at /n: expected a multiple of 7"],
    ),
    (
        "unique_items",
        r#"{"type":"object","properties":{"l":{"type":"array","uniqueItems":true}}}"#,
        r#"{"l":["SECRET-VALUE-123","SECRET-VALUE-123"]}"#,
        &["unique_items at /l: expected all items to be different"],
    ),
    (
        "contains",
        r#"{"type":"object","properties":{"l":{"type":"array","contains":{"const":"ok"}}}}"#,
        r#"{"l":["SECRET-VALUE-123"]}"#,
        &["contains at /l: expected at least 1 items matching `contains`"],
    ),
    (
        "property_name",
        r#"{"type":"object","properties":{"m":{"type":"object","propertyNames":{"maxLength":3},"additionalProperties":{"type":"integer"}}}}"#,
        r#"{"m":{"SECRET-VALUE-123":1}}"#,
        &["property_name at /m/*: member name is not allowed by `propertyNames`"],
    ),
    (
        "schema_combinator",
        r#"{"type":"object","properties":{"v":{"anyOf":[{"type":"integer"},{"type":"boolean"}]}}}"#,
        r#"{"v":"SECRET-VALUE-123"}"#,
        &["schema_combinator at /v: expected to match at least one of 2 schemas"],
    ),
    (
        "false_schema",
        r#"{"type":"object","properties":{"v":false}}"#,
        r#"{"v":"SECRET-VALUE-123"}"#,
        &["false_schema at /v: no value is allowed here"],
    ),
    (
        "recursion_limit",
        r##"{"type":"object","properties":{"v":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}"##,
        r#"{"v":"SECRET-VALUE-123"}"#,
        &["recursion_limit at /v: schema recursion is too deep"],
    ),
];

fn config() -> Config {
    let mut text = String::from("[authorization]\nmode = \"none\"\n");
    for (code, schema, _, _) in CASES {
        text.push_str(&format!(
            "[[tool]]\nname = \"t_{code}\"\nrisk = \"read\"\nschema_json = '{schema}'\n"
        ));
    }
    Config::parse(&text, Path::new("/nonexistent/toolgate.toml")).unwrap()
}

fn openai(tool: &str, arguments: &str) -> String {
    let args = toolgate_json::canonical::to_string(&toolgate_json::Value::from(arguments));
    format!(
        r#"{{"id":"r","object":"chat.completion","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"{tool}","arguments":{args}}}}}]}}}}]}}"#
    )
}

#[test]
fn feedback_names_what_the_schema_expects_and_never_the_value() {
    let config = config();
    let gate = Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let ctx = Context::new("alice", "s-1", 1);
    let mut seen = Vec::new();
    for (code, _, args, says) in CASES {
        let d = gate.decide(
            openai(&format!("t_{code}"), args).as_bytes(),
            Format::Auto,
            &ctx,
            &ctx,
        );
        let call = &d.decisions()[0];
        assert_eq!(call.verdict(), Verdict::Deny, "{code}: {call:?}");
        assert!(
            call.reasons().iter().any(|r| r.code.as_str() == *code),
            "{code}: {:?}",
            call.reasons()
        );
        let feedback = &call.feedback();
        for s in *says {
            assert!(feedback.contains(s), "{code}: `{s}` not in `{feedback}`");
        }
        for leaked in [SECRET, "987654321", "987654322"] {
            assert!(
                !feedback.contains(leaked),
                "{code}: `{feedback}` echoes the value"
            );
        }
        seen.push(*code);
    }
    // One row per schema code the gate knows.
    let mut all: Vec<_> = toolgate::Code::SCHEMA.iter().map(|c| c.as_str()).collect();
    all.sort_unstable();
    seen.sort_unstable();
    assert_eq!(seen, all);
}

/// The listed values are bounded: a long `enum` is cut after ten values,
/// and a long value after 48 characters.
#[test]
fn long_allowed_values_are_bounded() {
    let values: Vec<String> = (0..25)
        .map(|i| format!("\"v{i:02}{}\"", "x".repeat(60)))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{"k":{{"enum":[{}]}}}}}}"#,
        values.join(",")
    );
    let text = format!(
        "[authorization]\nmode = \"none\"\n[[tool]]\nname = \"t\"\nrisk = \"read\"\nschema_json = '{schema}'\n"
    );
    let config = Config::parse(&text, Path::new("/nonexistent/toolgate.toml")).unwrap();
    let gate = Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let ctx = Context::new("alice", "s-1", 1);
    let d = gate.decide(
        openai("t", r#"{"k":"nope"}"#).as_bytes(),
        Format::Auto,
        &ctx,
        &ctx,
    );
    let feedback = &d.decisions()[0].feedback();
    assert!(feedback.contains("`\"v00xxx"), "{feedback}");
    assert!(feedback.contains("`\"v09"), "{feedback}");
    assert!(!feedback.contains("v10"), "{feedback}");
    assert!(feedback.contains("and 15 more"), "{feedback}");
    assert!(feedback.len() < 800, "{} bytes: {feedback}", feedback.len());
}
