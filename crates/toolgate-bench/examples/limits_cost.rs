//! What `[[limit]]`s add to a durable decision, for instruction counts
//! (callgrind): N decisions of one `search` call through the store gate on
//! a SQLite file (durable: each decision's record committed before it is
//! returned), authorization skipped both ways so the limits' share is not
//! flattered by Cedar's cost. `off`: the tool as configured, no limits.
//! `on`: the same tool counted by a rate limit per session and a budget on
//! its `limit` argument per user (both far from their caps, so every call
//! is allowed and every call is counted), its label acquired by the session.
//!
//! With a third argument `shop`: the decision as the shop example's users
//! run it instead, its config whole (Cedar authorization, its resolver,
//! its own limits on other tools) through [`StoreGate::from_config`]; `on`
//! adds the same two limits on `search` and its label. Only the turn cap
//! is raised, so that one session can decide N times.
//!
//! `cargo build --release -p toolgate-bench --example limits_cost`, then
//! `valgrind --tool=callgrind target/release/examples/limits_cost N off|on
//! [shop]` for two N in each mode: the per-decision cost is the difference
//! of the two counts over the difference of the N.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark program: a failed setup should stop it loudly"
)]

use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};
use toolgate_store::{SqliteOptions, Store, StoreGate};

const BODY: &[u8] = br#"{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"waterproof hiking boots\",\"limit\":5}"}}]}}]}"#;

const TOOL: &str = r#"
[[tool]]
name = "search"
risk = "read"
labels = ["untrusted_content"]
schema = { type = "object", properties = { query = { type = "string", maxLength = 200 }, limit = { type = "integer", minimum = 1, maximum = 50 } }, required = ["query", "limit"], additionalProperties = false }
"#;

const LIMITS: &str = r#"
[[limit]]
name = "searches_per_session"
tools = ["search"]
per = "session"
calls = 1000000
window_seconds = 3600

[[limit]]
name = "results_per_user"
tools = ["search"]
per = "user"
sum = "/limit"
max = 100000000
window_seconds = 86400
"#;

/// The shop example's config, with `[[limit]]`s on `search` if `on`.
fn shop(on: bool) -> Config {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/shop/toolgate.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text = text.replacen("max_turns = 20 ", "max_turns = 4294967295 ", 1);
    if on {
        let search = "schema = \"schemas/search.json\"\n";
        assert!(text.contains(search));
        text = text.replacen(
            search,
            &format!("{search}labels = [\"untrusted_content\"]\n"),
            1,
        );
        text.push_str(LIMITS);
    }
    Config::parse(&text, &path).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(2000, |a| a.parse().unwrap());
    let on = args.get(2).is_some_and(|m| m == "on");
    if args.get(3).is_some_and(|m| m == "shop") {
        let config = shop(on);
        assert_eq!(config.gate().max_turns(), u32::MAX);
        let dir = tempfile::tempdir().unwrap();
        let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(
            SqliteOptions::new()
                .open(dir.path().join("store.db"))
                .unwrap(),
        );
        let gate = StoreGate::from_config(&config, store).unwrap();
        run(&gate, n);
        eprintln!(
            "shop decisions {n}, limits {}",
            if on { "on" } else { "off" }
        );
        return;
    }
    let text = if on {
        format!("{TOOL}{LIMITS}")
    } else {
        TOOL.to_owned()
    };
    let config = Config::parse(&text, "limits_cost.toml").unwrap();
    assert_eq!(config.limits().len(), if on { 2 } else { 0 });
    let gate = Gate::builder(config.registry().clone())
        .max_turns(u32::MAX)
        .authorizer(toolgate::danger::NoAuthorization)
        .limits(config.limits().to_vec())
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store: std::sync::Arc<dyn Store> = std::sync::Arc::new(
        SqliteOptions::new()
            .open(dir.path().join("store.db"))
            .unwrap(),
    );
    let gate = StoreGate::new(gate, store);
    run(&gate, n);
    eprintln!("decisions {n}, limits {}", if on { "on" } else { "off" });
}

/// N decisions of one `search` call, each with its own call id, all allowed.
fn run(gate: &StoreGate, n: u64) {
    let ctx = Context::new("alice", "sess-bench", 1);
    for i in 0..n {
        let body = String::from_utf8_lossy(BODY).replace("call_1", &format!("call_{i}"));
        let d = gate.decide_and_record(body.as_bytes(), Format::OpenAiChat, &ctx);
        assert_eq!(d.verdict(), Verdict::Allow, "{:?}", d.decisions());
    }
}
