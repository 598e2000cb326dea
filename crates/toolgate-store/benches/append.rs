//! Durable audit appends per second on a SQLite file, by number of
//! concurrent appenders (threads of one process) with group commit.
//!
//! `cargo bench -p toolgate-store --bench append`
#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolgate_store::{
    AuditEntry, AuditVerdict, Durability, RedactionKey, SqliteOptions, SqliteStore, Store,
    Timestamp,
};

fn entry(i: u64) -> AuditEntry {
    let text = format!(r#"{{"order_id":"o-{i}","amount":{}}}"#, i % 500);
    let mut e = AuditEntry::new(
        Timestamp::from_unix_millis(1_767_225_600_000),
        AuditVerdict::Allow,
    )
    .user("alice")
    .session("s-42")
    .tool("refund")
    .call_id(format!("call_{i}"))
    .policy("owner-may-refund");
    if let Ok(args) = toolgate_json::from_str(&text) {
        if let Ok(with_args) = e
            .clone()
            .arguments(&args, &[], &RedactionKey::from_bytes([0; 32]))
        {
            e = with_args;
        }
    }
    e
}

/// Runs `total` appends spread over `threads` threads; returns the time.
fn run(store: &Arc<SqliteStore>, threads: u64, total: u64) -> Duration {
    let per = total.div_ceil(threads);
    let barrier = Arc::new(Barrier::new(threads as usize + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = Arc::clone(store);
            let barrier = Arc::clone(&barrier);
            let entries: Vec<AuditEntry> = (0..per).map(|i| entry(t * per + i)).collect();
            std::thread::spawn(move || {
                barrier.wait();
                for e in entries {
                    if store.append(e).is_err() {
                        return;
                    }
                }
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    for h in handles {
        let _ = h.join();
    }
    start.elapsed()
}

fn append(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("toolgate-store-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let mut group = c.benchmark_group("append");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(1));
    let cases: [(Durability, &str, &[u64]); 2] = [
        (Durability::Full, "full", &[1, 2, 8, 64, 256]),
        (Durability::Normal, "normal", &[1, 2]),
    ];
    for (durability, name, threads) in cases {
        for &n in threads {
            let path = dir.join(format!("{name}-{n}.db"));
            let Ok(store) = SqliteOptions::new().durability(durability).open(&path) else {
                continue;
            };
            let store = Arc::new(store);
            group.bench_with_input(
                BenchmarkId::new(name, format!("{n}-threads")),
                &n,
                |b, &n| {
                    b.iter_custom(|iters| run(&store, n, iters.max(n)));
                },
            );
        }
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, append);
criterion_main!(benches);
