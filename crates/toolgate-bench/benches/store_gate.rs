//! Decisions per second on the SQLite store with durable audit
//! (`StoreGate::decide_and_record`): each decision reads the kill switch and
//! the session's counters, counts the call, and commits its audit record
//! before it returns. One `search` call per response, over the shop
//! example's tools (authorization skipped, to measure the store).
//!
//! Threads each decide in their own session; every thread waits for its own
//! commits, so throughput grows with threads only through group commit.
//! `Durability::Full` fsyncs every commit (the audit of record);
//! `Durability::Normal` is shown for comparison, and an in-memory store for
//! the cost without I/O.
//!
//! Run: `cargo bench -p toolgate-bench --bench store_gate`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness: a broken setup should stop the run loudly; criterion's macros generate undocumented items"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};
use toolgate_store::StoreGate;
use toolgate_store::{Durability, SqliteOptions, Store};

const BODY: &[u8] = br#"{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"waterproof hiking boots\",\"limit\":5}"}}]}}]}"#;

fn gate() -> Gate {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = Config::load(path).unwrap();
    // The store counts every response of a session, and a session runs far
    // past the default turn cap here: without a cap this high, every
    // decision after the 20th would be `loop_limit` and the bench measures
    // allows.
    Gate::builder(config.registry().clone())
        .max_turns(u32::MAX)
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

/// Runs `iters` decisions spread over `threads` threads; the wall time.
fn run(g: &StoreGate, threads: u64, iters: u64) -> Duration {
    let per_thread = iters.div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let ctx = Context::new("alice", format!("sess-bench-{t}"), 1);
                for _ in 0..per_thread {
                    let d = g.decide_and_record(BODY, Format::OpenAiChat, &ctx);
                    assert_eq!(d.verdict(), Verdict::Allow);
                }
            });
        }
    });
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("store_gate");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(6));
    let stores: [(&str, Option<Durability>, &[u64]); 3] = [
        ("sqlite_full", Some(Durability::Full), &[1, 2, 8, 32, 64]),
        ("sqlite_normal", Some(Durability::Normal), &[1, 2, 8]),
        ("memory", None, &[1, 2]),
    ];
    for (name, durability, threads) in stores {
        for &t in threads {
            let options = SqliteOptions::new();
            let store: Arc<dyn Store> = match durability {
                Some(d) => Arc::new(
                    options
                        .durability(d)
                        .open(dir.path().join(format!("{name}-{t}.db")))
                        .unwrap(),
                ),
                None => Arc::new(options.open_in_memory().unwrap()),
            };
            let g = StoreGate::new(gate(), store);
            group.throughput(Throughput::Elements(1));
            group.bench_with_input(
                BenchmarkId::new(name, format!("{t}_threads")),
                &t,
                |b, &t| {
                    b.iter_custom(|iters| run(&g, t, iters));
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
