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

/// A chat stream whose one call comes in the legacy `delta.function_call`
/// form, decided as alice.
fn rewritten_stream(name: &str, args_pieces: &[&str]) -> (String, String) {
    use toolgate_proxy::{Rewriter, SseReader, Step};
    let mut stream = String::new();
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-l\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-3.5-turbo-0613\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    stream.push_str(&chunk(
        &format!(r#"{{"role":"assistant","content":null,"function_call":{{"name":"{name}","arguments":""}}}}"#),
        "null",
    ));
    for piece in args_pieces {
        let piece = toolgate_json::canonical::to_string(&Value::String((*piece).into()));
        stream.push_str(&chunk(
            &format!(r#"{{"function_call":{{"arguments":{piece}}}}}"#),
            "null",
        ));
    }
    stream.push_str(&chunk("{}", r#""function_call""#));
    stream.push_str("data: [DONE]\n\n");

    let config = Config::load(shop_file("toolgate.toml")).unwrap();
    let gate = Gate::from_config(&config).unwrap();
    let api = Api::ChatCompletions;
    let mut reader = SseReader::new(1 << 20);
    let mut rewriter = Rewriter::new(api, &[]);
    let mut sent = String::new();
    for e in reader.push(stream.as_bytes()).unwrap() {
        match rewriter.event(&e).unwrap() {
            Step::Emit(t) => sent.push_str(&t),
            Step::End => break,
        }
    }
    let context = Context::new("alice", "s", 1);
    let decisions = gate.decide(stream.as_bytes(), api.format(), &context, &context);
    let envelope = AdapterOptions::new()
        .read(stream.as_bytes(), api.format())
        .unwrap();
    let closing = rewriter
        .finish(&envelope, &decisions)
        .expect("a legacy call in a stream is decided, not refused");
    (sent, closing)
}

/// The `data:` payloads of an event stream, parsed (`[DONE]` left out).
fn payloads(text: &str) -> Vec<Value<'static>> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| toolgate_json::from_str(d).unwrap().into_owned())
        .collect()
}

#[test]
fn an_allowed_legacy_stream_call_goes_on_in_its_form_canonical() {
    let (sent, closing) = rewritten_stream("search", &["{\"query\": ", "\"boots\"}"]);
    // Nothing of the call left before the decision.
    assert!(!sent.contains("function_call"), "{sent}");
    let events = payloads(&closing);
    let calls: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.pointer("/choices/0/delta/function_call"))
        .collect();
    assert_eq!(calls.len(), 1, "{closing}");
    assert_eq!(
        calls[0].pointer("/name").and_then(Value::as_str),
        Some("search")
    );
    assert_eq!(
        calls[0].pointer("/arguments").and_then(Value::as_str),
        Some(r#"{"query":"boots"}"#)
    );
    assert!(!closing.contains("tool_calls"), "{closing}");
    let finishes: Vec<&str> = events
        .iter()
        .filter_map(|e| e.pointer("/choices/0/finish_reason"))
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(finishes, ["function_call"]);
}

#[test]
fn a_denied_legacy_stream_call_becomes_feedback() {
    // bob's order, as alice: denied `not_owner`.
    let (sent, closing) = rewritten_stream(
        "refund",
        &[r#"{"order_id":"ord_2001","amount_cents":100,"reason":"late"}"#],
    );
    assert!(!sent.contains("function_call"), "{sent}");
    assert!(!closing.contains("function_call\":{"), "{closing}");
    assert!(!closing.contains("ord_2001"), "{closing}");
    let events = payloads(&closing);
    let text: String = events
        .iter()
        .filter_map(|e| e.pointer("/choices/0/delta/content"))
        .filter_map(Value::as_str)
        .collect();
    assert!(text.contains("not_owner"), "{closing}");
    let finishes: Vec<&str> = events
        .iter()
        .filter_map(|e| e.pointer("/choices/0/finish_reason"))
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(finishes, ["stop"]);
}
