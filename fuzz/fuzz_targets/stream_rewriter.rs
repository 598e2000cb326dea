//! Any bytes as an upstream stream of each API: the SSE reader and the
//! stream rewriter never panic, and nothing they send before the gate has
//! decided carries a tool call; after the decision, only calls the gate
//! allowed are released.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
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

/// Whether an event the rewriter sent carries a call.
fn carries_call(api: Api, data: &str) -> bool {
    let Ok(v) = toolgate_json::from_slice(data.as_bytes()) else {
        return false;
    };
    let Some(o) = v.as_object() else { return false };
    match api {
        Api::ChatCompletions => o
            .get("choices")
            .and_then(Value::as_array)
            .unwrap_or_default()
            .iter()
            .filter_map(|c| c.as_object()?.get("delta")?.as_object())
            .any(|d| d.contains_key("tool_calls") || d.contains_key("function_call")),
        Api::Messages => kind(Some(&v)) == Some("content_block_start") && kind(o.get("content_block")) == Some("tool_use"),
        Api::Responses => {
            kind(o.get("item")) == Some("function_call")
                || o.get("response")
                    .and_then(|r| r.as_object()?.get("output")?.as_array())
                    .unwrap_or_default()
                    .iter()
                    .any(|i| kind(Some(i)) == Some("function_call"))
        }
    }
}

fuzz_target!(|data: &[u8]| {
    for api in [Api::ChatCompletions, Api::Messages, Api::Responses] {
        let mut reader = SseReader::new(1 << 16);
        let mut rewriter = Rewriter::new(api, &[]);
        let Ok(events) = reader.push(data) else { continue };
        let mut ended = false;
        for e in &events {
            match rewriter.event(e) {
                Ok(Step::Emit(text)) => {
                    let mut r = SseReader::new(1 << 20);
                    for sent in r.push(text.as_bytes()).expect("the rewriter writes SSE") {
                        assert!(!carries_call(api, &sent.data), "a call before the decision: {}", sent.data);
                    }
                }
                Ok(Step::End) => {
                    ended = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if !ended {
            continue;
        }
        let context = Context::new("u", "s", 1);
        let decisions = gate().decide(data, api.format(), &context, &context);
        let Ok(envelope) = AdapterOptions::new().read(data, api.format()) else { continue };
        if let Ok(closing) = rewriter.finish(&envelope, &decisions) {
            let allowed = decisions.decisions().iter().filter(|d| d.verdict() == Verdict::Allow).count();
            let mut r = SseReader::new(1 << 20);
            let sent = r.push(closing.as_bytes()).expect("the rewriter writes SSE");
            let released = sent.iter().filter(|e| carries_call(api, &e.data)).count();
            if allowed == 0 {
                assert_eq!(released, 0, "a call released that the gate did not allow");
            }
        }
    }
});
