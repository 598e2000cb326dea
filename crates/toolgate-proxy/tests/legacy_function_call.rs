//! Issue 28, item 9e: a legacy chat message-level `function_call` (the
//! form before `tool_calls`) that the gate does not allow is withheld with
//! feedback, like a `tool_calls` entry, not refused as a 502.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate::config::Config;
use toolgate::{AdapterOptions, Context, Gate};
use toolgate_json::Value;
use toolgate_proxy::{rewrite_json, Api};
use toolgate_testkit::shop_file;

fn rewritten(body: &str) -> Value<'static> {
    let config = Config::load(shop_file("toolgate.toml")).unwrap();
    let gate = Gate::from_config(&config).unwrap();
    let context = Context::new("alice", "s", 1);
    let api = Api::ChatCompletions;
    let decisions = gate.decide(body.as_bytes(), api.format(), &context, &context);
    let envelope = AdapterOptions::new()
        .read(body.as_bytes(), api.format())
        .unwrap();
    let out = rewrite_json(api, body.as_bytes(), &envelope, &decisions, &[], false)
        .expect("a denied legacy function_call is rewritten, not refused");
    toolgate_json::from_slice(&out).unwrap().into_owned()
}

fn body(order: &str) -> String {
    format!(
        r#"{{"id":"chatcmpl-l","object":"chat.completion","created":1,"model":"gpt-3.5-turbo-0613","choices":[{{"index":0,"finish_reason":"function_call","message":{{"role":"assistant","content":null,"function_call":{{"name":"refund","arguments":"{{\"order_id\":\"{order}\",\"amount_cents\":100,\"reason\":\"late\"}}"}}}}}}]}}"#
    )
}

#[test]
fn a_denied_legacy_function_call_becomes_feedback() {
    // bob's order, as alice: denied `not_owner`.
    let out = rewritten(&body("ord_2001"));
    let m = out.pointer("/choices/0/message").unwrap();
    assert!(m.pointer("/function_call").is_none(), "{m:?}");
    let content = m.pointer("/content").and_then(Value::as_str).unwrap();
    assert!(
        content.starts_with("[toolgate] the call - was not run"),
        "{content}"
    );
    assert!(content.contains("not_owner"), "{content}");
    assert_eq!(
        out.pointer("/choices/0/finish_reason")
            .and_then(Value::as_str),
        Some("stop")
    );
    assert_eq!(
        out.pointer("/toolgate/calls/0/verdict")
            .and_then(Value::as_str),
        Some("deny")
    );
}

#[test]
fn an_allowed_legacy_function_call_keeps_its_place_canonical() {
    // alice's own order: a refund within the total needs approval in the
    // shop, so use a read instead.
    let body = r#"{"id":"chatcmpl-l","object":"chat.completion","created":1,"model":"gpt-3.5-turbo-0613","choices":[{"index":0,"finish_reason":"function_call","message":{"role":"assistant","content":null,"function_call":{"name":"search","arguments":"{\"query\": \"boots\"}"}}}]}"#;
    let out = rewritten(body);
    assert_eq!(
        out.pointer("/choices/0/message/function_call/arguments")
            .and_then(Value::as_str),
        Some(r#"{"query":"boots"}"#)
    );
    assert_eq!(
        out.pointer("/choices/0/finish_reason")
            .and_then(Value::as_str),
        Some("function_call")
    );
}
