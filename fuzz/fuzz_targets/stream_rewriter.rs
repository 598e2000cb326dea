//! Any bytes as an upstream stream of each API: the SSE reader and the
//! stream rewriter never panic, nothing they send before the gate has
//! decided carries a tool call, and (the rule of contract invariant 9,
//! stated as an oracle) every call in the bytes the proxy emits, the
//! terminal events' aggregates included, is a call the gate decided
//! `allow`, with exactly its identity and its canonical arguments, and no
//! call is listed twice in a terminal output. The state around the items
//! is rebuilt from its pass list: every member the proxy emits at a
//! chunk's top level, in a Chat choice, in `message_start.message` and in
//! a Responses `response` is on that list, a Chat choice's `logprobs`
//! spell exactly the text of its delta, and every Messages event is of a
//! known kind.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolgate::adapter::CallKind;
use toolgate::config::Config;
use toolgate::{AdapterOptions, Context, Gate, Verdict};
use toolgate_json::Value;
use toolgate_proxy::{Api, Rewriter, SseReader, Step};

const CONFIG: &str = r#"
[authorization]
mode = "none"

[[tool]]
name = "search"
risk = "read"
schema_json = '{"type":"object","properties":{"q":{"type":"string","maxLength":8}},"required":["q"]}'

[[tool]]
name = "lookup"
namespace = "crm"
risk = "read"
schema_json = '{"type":"object","properties":{"id":{"type":"string","maxLength":8}},"required":["id"]}'
"#;

fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| {
        let config = Config::parse(CONFIG, "fuzz.toml").expect("the fuzz config loads");
        Gate::from_config(&config).expect("the fuzz gate builds")
    })
}

fn kind<'a>(v: Option<&'a Value<'_>>) -> Option<&'a str> {
    v?.as_object()?.get("type")?.as_str()
}

fn text<'a>(v: &'a Value<'_>, name: &str) -> Option<&'a str> {
    v.as_object()?.get(name)?.as_str()
}

/// One call as emitted: its id, namespace, name and arguments text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Emitted {
    call_id: Option<String>,
    namespace: Option<String>,
    name: String,
    arguments: String,
}

fn owned(s: Option<&str>) -> Option<String> {
    s.map(str::to_owned)
}

/// A Responses call item, if `item` is one.
fn responses_call(item: &Value<'_>) -> Option<Emitted> {
    let args_key = match kind(Some(item))? {
        "function_call" => "arguments",
        "custom_tool_call" => "input",
        _ => return None,
    };
    Some(Emitted {
        call_id: owned(text(item, "call_id")),
        namespace: owned(text(item, "namespace")),
        name: text(item, "name").unwrap_or("").to_owned(),
        arguments: text(item, args_key).unwrap_or("<not a string>").to_owned(),
    })
}

/// The calls an emitted event carries (for Messages, a `tool_use` block's
/// start: its arguments are joined from the deltas by the caller).
fn calls_in(api: Api, v: &Value<'_>) -> Vec<Emitted> {
    let Some(o) = v.as_object() else { return Vec::new() };
    let mut out = Vec::new();
    match api {
        Api::ChatCompletions => {
            for c in o.get("choices").and_then(Value::as_array).unwrap_or_default() {
                let Some(c) = c.as_object() else { continue };
                assert!(!c.contains_key("message"), "a whole message in a chunk");
                let Some(d) = c.get("delta").and_then(Value::as_object) else { continue };
                // The legacy form is a call too: it must be an allowed one.
                if let Some(f) = d.get("function_call") {
                    out.push(Emitted {
                        call_id: None,
                        namespace: None,
                        name: text(f, "name").unwrap_or("").to_owned(),
                        arguments: text(f, "arguments").unwrap_or("<not a string>").to_owned(),
                    });
                }
                for tc in d.get("tool_calls").and_then(Value::as_array).unwrap_or_default() {
                    let body = tc
                        .as_object()
                        .and_then(|t| t.get("function").or_else(|| t.get("custom")));
                    let args = body.and_then(|b| text(b, "arguments").or_else(|| text(b, "input")));
                    out.push(Emitted {
                        call_id: owned(text(tc, "id")),
                        namespace: None,
                        name: body.and_then(|b| text(b, "name")).unwrap_or("").to_owned(),
                        arguments: args.unwrap_or("<not a string>").to_owned(),
                    });
                }
            }
        }
        Api::Messages => {
            if let Some(m) = o.get("message") {
                let content = m.as_object().and_then(|m| m.get("content"));
                assert!(
                    content.and_then(Value::as_array).is_none_or(<[_]>::is_empty),
                    "content in a message_start"
                );
            }
        }
        Api::Responses => {
            out.extend(o.get("item").and_then(responses_call));
            if let Some(r) = o.get("response").and_then(Value::as_object) {
                let output = r.get("output").and_then(Value::as_array).unwrap_or_default();
                let calls: Vec<Emitted> = output.iter().filter_map(responses_call).collect();
                for (i, c) in calls.iter().enumerate() {
                    assert!(
                        c.call_id.is_none() || !calls[..i].iter().any(|p| p.call_id == c.call_id),
                        "a call listed twice in a terminal output: {c:?}"
                    );
                }
                out.extend(calls);
            }
        }
    }
    out
}

/// Every call in `events`, Messages `tool_use` blocks with their joined
/// input.
fn emitted_calls(api: Api, events: &[Value<'_>]) -> Vec<Emitted> {
    let mut out = Vec::new();
    let mut blocks: Vec<(u64, Emitted)> = Vec::new();
    for v in events {
        out.extend(calls_in(api, v));
        if api != Api::Messages {
            continue;
        }
        let index = v
            .as_object()
            .and_then(|o| o.get("index"))
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        let block = v.as_object().and_then(|o| o.get("content_block"));
        if kind(Some(v)) == Some("content_block_start") && kind(block) == Some("tool_use") {
            let block = block.expect("a tool_use block");
            let input = block.as_object().and_then(|b| b.get("input"));
            let start = match input.and_then(Value::as_object) {
                Some(i) if i.is_empty() => String::new(),
                Some(_) => toolgate_json::canonical::to_string(input.expect("an input")),
                None => "<not an object>".to_owned(),
            };
            blocks.push((
                index.unwrap_or(u64::MAX),
                Emitted {
                    call_id: owned(text(block, "id")),
                    namespace: None,
                    name: text(block, "name").unwrap_or("").to_owned(),
                    arguments: start,
                },
            ));
        }
        let delta = v.as_object().and_then(|o| o.get("delta"));
        if kind(delta) == Some("input_json_delta") {
            if let Some((_, b)) = blocks.iter_mut().find(|(i, _)| Some(*i) == index) {
                b.arguments.push_str(text(delta.expect("a delta"), "partial_json").unwrap_or(""));
            }
        }
    }
    out.extend(blocks.into_iter().map(|(_, b)| b));
    out
}

/// The members each state object may carry (the documented pass lists,
/// restated here as an oracle independent of the rewriter's tables).
const CHAT_TOP: &[&str] = &[
    "id", "object", "created", "model", "system_fingerprint", "service_tier", "usage", "choices",
    "toolgate",
];
const CHAT_CHOICE: &[&str] = &["index", "finish_reason", "delta", "logprobs"];
const MESSAGE: &[&str] = &[
    "id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage", "container",
];
const MESSAGES_EVENTS: &[&str] = &[
    "message_start", "content_block_start", "content_block_delta", "content_block_stop",
    "message_delta", "message_stop", "ping", "error",
];
const RESPONSE: &[&str] = &[
    "id", "object", "created_at", "completed_at", "status", "background", "error",
    "incomplete_details", "instructions", "max_output_tokens", "max_tool_calls", "model", "output",
    "parallel_tool_calls", "previous_response_id", "conversation", "prompt", "prompt_cache_key",
    "prompt_cache_retention", "reasoning", "safety_identifier", "service_tier", "store",
    "temperature", "text", "tool_choice", "tools", "top_logprobs", "top_p", "truncation", "usage",
    "user", "metadata", "frequency_penalty", "toolgate",
];

fn members_within(o: Option<&Value<'_>>, list: &[&str], what: &str) {
    let Some(o) = o.and_then(Value::as_object) else { return };
    for k in o.keys() {
        assert!(list.contains(&k), "a {what} member off the pass list: {k}");
    }
}

/// The state oracle for one emitted event.
fn state_rebuilt(api: Api, v: &Value<'_>) {
    match api {
        Api::ChatCompletions => {
            members_within(Some(v), CHAT_TOP, "chunk");
            let choices = v.pointer("/choices").and_then(Value::as_array).unwrap_or_default();
            for c in choices {
                members_within(Some(c), CHAT_CHOICE, "choice");
                let Some(lp) = c.pointer("/logprobs").and_then(Value::as_object) else { continue };
                for (list, at) in [("content", "/delta/content"), ("refusal", "/delta/refusal")] {
                    let Some(entries) = lp.get(list).and_then(Value::as_array) else { continue };
                    let spelled: String =
                        entries.iter().filter_map(|e| text(e, "token")).collect();
                    let released = c.pointer(at).and_then(Value::as_str).unwrap_or("");
                    assert_eq!(spelled, released, "logprobs that do not spell their text");
                }
            }
        }
        Api::Messages => {
            let kind = kind(Some(v)).unwrap_or("");
            assert!(MESSAGES_EVENTS.contains(&kind), "an event of an unknown kind: {kind}");
            members_within(v.pointer("/message"), MESSAGE, "message_start.message");
        }
        Api::Responses => members_within(v.pointer("/response"), RESPONSE, "response"),
    }
}

fn parsed(wire: &str) -> Vec<Value<'static>> {
    let mut r = SseReader::new(1 << 22);
    r.push(wire.as_bytes())
        .expect("the rewriter writes SSE")
        .into_iter()
        .filter(|e| e.data != "[DONE]")
        .map(|e| {
            toolgate_json::from_slice(e.data.as_bytes())
                .expect("the rewriter writes strict JSON")
                .into_owned()
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    for api in [Api::ChatCompletions, Api::Messages, Api::Responses] {
        let mut reader = SseReader::new(1 << 16);
        let mut rewriter = Rewriter::new(api, &[]);
        let Ok(events) = reader.push(data) else { continue };
        let mut sent = String::new();
        let mut ended = false;
        for e in &events {
            match rewriter.event(e) {
                Ok(Step::Emit(text)) => sent.push_str(&text),
                Ok(Step::End) => {
                    ended = true;
                    break;
                }
                Err(_) => break,
            }
        }
        let before = parsed(&sent);
        let early = emitted_calls(api, &before);
        assert!(early.is_empty(), "a call before the decision: {early:?}");
        for v in &before {
            state_rebuilt(api, v);
        }
        if !ended {
            continue;
        }
        let context = Context::new("u", "s", 1);
        let decisions = gate().decide(data, api.format(), &context, &context);
        let Ok(envelope) = AdapterOptions::new().read(data, api.format()) else { continue };
        let Ok(closing) = rewriter.finish(&envelope, &decisions) else { continue };
        // What the gate allowed, exactly as it checked it.
        let allowed: Vec<Emitted> = envelope
            .calls
            .iter()
            .zip(decisions.decisions())
            .filter(|(_, d)| d.verdict() == Verdict::Allow)
            .map(|(c, d)| {
                let canonical = d.executable_args().expect("an allowed call has its arguments");
                let arguments = match c.kind {
                    CallKind::Custom => toolgate_json::from_slice(canonical.as_bytes())
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .expect("a custom call's canonical value is a string"),
                    _ => canonical.to_owned(),
                };
                Emitted {
                    call_id: c.call_id.clone(),
                    namespace: c.namespace.clone(),
                    name: c.name.clone(),
                    arguments,
                }
            })
            .collect();
        let closing = parsed(&closing);
        for v in &closing {
            state_rebuilt(api, v);
        }
        let mut all = before;
        all.extend(closing);
        for call in emitted_calls(api, &all) {
            assert!(
                allowed.contains(&call),
                "a call emitted that the gate did not allow as emitted: {call:?}, allowed {allowed:?}"
            );
        }
    }
});
