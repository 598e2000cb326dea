//! What tracing adds to a decision, for instruction counts (callgrind): N
//! decisions of the shop's `search` call through the store gate (SQLite in
//! memory, authorization skipped, so the decision itself is cheap and the
//! share telemetry takes is not flattered), each wrapped as an edge wraps it
//! — a request span from the caller's headers, the decision's child span,
//! the `traceparent` passed upstream, the OTLP metric updates — with
//! telemetry `off` or `on` (OTLP/HTTP to `ENDPOINT`, 1 % of traces
//! sampled).
//!
//! `cargo build --release -p toolgate-bench --example telemetry_cost`, then
//! `valgrind --tool=callgrind target/release/examples/telemetry_cost N off|on [ENDPOINT]`
//! for N = 0 and N = 5000 in each mode: the per-decision cost is the
//! difference of the two counts over N.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark program: a failed setup should stop it loudly"
)]

use std::path::PathBuf;
use std::time::SystemTime;

use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};
use toolgate_store::{SqliteOptions, Store, StoreGate};
use toolgate_telemetry::{LogSink, Telemetry};

const BODY: &[u8] = br#"{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"waterproof hiking boots\",\"limit\":5}"}}]}}]}"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map_or(5000, |a| a.parse().unwrap());
    let on = args.get(2).is_some_and(|m| m == "on");
    let endpoint = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "http://127.0.0.1:4318".to_owned());
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = Config::load(path).unwrap();
    let gate = Gate::builder(config.registry().clone())
        .max_turns(u32::MAX)
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let store: std::sync::Arc<dyn Store> =
        std::sync::Arc::new(SqliteOptions::new().open_in_memory().unwrap());
    let gate = StoreGate::new(gate, store);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let telemetry = if on {
        let _in = runtime.enter();
        let t = toolgate_edge::config::parse(
            &format!(
                "[[tool]]\nname = \"search\"\nrisk = \"read\"\nschema = {{ type = \"object\" }}\n\
                 [telemetry]\nendpoint = \"{endpoint}\"\nsample_ratio = 0.01\n"
            ),
            "telemetry.toml",
        )
        .unwrap();
        let t = toolgate_edge::config::TelemetryConfig::from_config(&t).unwrap();
        Telemetry::start_with(&config, &t, LogSink::Stderr).unwrap()
    } else {
        Telemetry::off()
    };
    let headers = http::HeaderMap::new();
    let ctx = Context::new("alice", "sess-bench", 1);
    for _ in 0..n {
        let span = telemetry.request("proxy request", &headers);
        let started = SystemTime::now();
        let d = gate.decide_and_record(BODY, Format::OpenAiChat, &ctx);
        assert_eq!(d.verdict(), Verdict::Allow);
        span.decisions("proxy", &d, started);
        let mut upstream = http::HeaderMap::new();
        span.inject(&mut upstream);
    }
    runtime.block_on(telemetry.shutdown());
    eprintln!(
        "decisions {n}, telemetry {}: spans exported {}, failed {}, dropped {}",
        if on { "on" } else { "off" },
        telemetry.exported_spans(),
        telemetry.failed_spans(),
        telemetry.dropped_spans()
    );
}
