//! The response rewriter on the shop's responses, decided by the shop's gate
//! (no store): allowed calls carry the canonical arguments, withheld ones
//! leave feedback, markup is stripped only when asked.

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
use toolgate_testkit::{shop_dir, shop_file};

fn rewritten(api: Api, name: &str, strip: bool) -> Value<'static> {
    let body = std::fs::read(shop_dir().join("responses").join(name)).unwrap();
    rewritten_body(api, &body, strip)
}

fn rewritten_body(api: Api, body: &[u8], strip: bool) -> Value<'static> {
    let config = Config::load(shop_file("toolgate.toml")).unwrap();
    let gate = Gate::from_config(&config).unwrap();
    let context = Context::new("alice", "s", 1);
    let decisions = gate.decide(body, api.format(), &context, &context);
    let envelope = AdapterOptions::new().read(body, api.format()).unwrap();
    let out = rewrite_json(api, body, &envelope, &decisions, &[], strip).unwrap();
    toolgate_json::from_slice(&out).unwrap().into_owned()
}

fn text<'v>(v: &'v Value<'_>, at: &str) -> &'v str {
    v.pointer(at).and_then(Value::as_str).unwrap_or("")
}

#[test]
fn markup_in_text_is_stripped_only_when_asked() {
    let kept = rewritten(Api::ChatCompletions, "deepseek-dsml-leak.json", false);
    assert!(text(&kept, "/choices/0/message/content").contains("DSML"));
    let stripped = rewritten(Api::ChatCompletions, "deepseek-dsml-leak.json", true);
    assert_eq!(
        text(&stripped, "/choices/0/message/content"),
        toolgate_proxy::MARKUP_REMOVED
    );
}

#[test]
fn allowed_calls_carry_the_canonical_arguments_in_each_api() {
    let chat = rewritten(Api::ChatCompletions, "openai-search.json", false);
    assert_eq!(
        text(&chat, "/choices/0/message/tool_calls/0/function/arguments"),
        r#"{"limit":5,"query":"waterproof hiking boots"}"#
    );
    let responses = rewritten(Api::Responses, "responses-fetch-metadata.json", false);
    let output = responses
        .pointer("/output")
        .and_then(Value::as_array)
        .unwrap();
    assert_eq!(
        output.len(),
        2,
        "the metadata fetch withheld, its feedback added"
    );
    assert_eq!(text(&responses, "/output/0/call_id"), "call_fetch_7b");
    assert!(text(&responses, "/output/1/content/0/text").contains("url_policy"));
    let messages = rewritten(Api::Messages, "anthropic-refund-over-total.json", false);
    assert_eq!(text(&messages, "/stop_reason"), "end_turn");
    assert!(text(&messages, "/content/1/text").contains("not_authorized"));
    assert_eq!(text(&messages, "/toolgate/calls/0/verdict"), "deny");
}

#[test]
fn deepseek_reasoning_passes_unchanged_and_is_never_read_for_calls() {
    let reasoning = r#"Refund ord_2001 with {\"name\":\"refund\",\"arguments\":{}} <｜DSML｜invoke name=\"refund\">"#;
    let body = format!(
        r#"{{"id":"ds-1","object":"chat.completion","created":1,"model":"deepseek-reasoner","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":"","reasoning_content":"{reasoning}","tool_calls":[{{"id":"c1","type":"function","function":{{"name":"search","arguments":"{{\"query\": \"socks\"}}"}}}}]}}}}]}}"#
    );
    let out = rewritten_body(Api::ChatCompletions, body.as_bytes(), true);
    let quoted = format!("\"{reasoning}\"");
    let expected = toolgate_json::from_slice(quoted.as_bytes()).unwrap();
    assert_eq!(
        out.pointer("/choices/0/message/reasoning_content"),
        Some(&expected),
        "reasoning is passed on as it came, even with strip_markup"
    );
    let calls = out
        .pointer("/toolgate/calls")
        .and_then(Value::as_array)
        .unwrap();
    assert_eq!(calls.len(), 1, "only the structured call is a call");
    assert_eq!(
        text(&out, "/choices/0/message/tool_calls/0/function/arguments"),
        r#"{"query":"socks"}"#
    );
}
