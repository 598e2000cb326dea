//! Parse throughput: toolgate-json (duplicate detection and every limit on),
//! to a tree and tree-free (the [`toolgate_json::Reader`] writing the
//! canonical text), beside `serde_json::from_slice::<Value>`, `sonic_rs`
//! parse-to-value and `simd_json` parse-to-borrowed-value (on a copy of the
//! input, which simd-json parses in place, with reused buffers), in the same
//! run, over the small, medium and large corpora.
//!
//! Run, in `bench/peers` (a workspace of its own): `cargo bench --bench parse`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness: a broken corpus should stop the run loudly; criterion's macros generate undocumented items"
)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

fn parse(c: &mut Criterion) {
    let corpora = toolgate_peers::corpora().unwrap();
    for corpus in &corpora {
        // Every valid text must be accepted before anything is timed.
        for (_, raw) in &corpus.valid {
            toolgate_json::from_slice(raw).unwrap();
        }
        let mut group = c.benchmark_group(format!("parse/{}", corpus.name));
        if corpus.name == "small" {
            group.throughput(Throughput::Elements(corpus.valid.len() as u64));
        } else {
            group.throughput(Throughput::Bytes(corpus.valid_bytes()));
        }
        if corpus.name == "large" {
            group.sample_size(20);
        }
        let texts: Vec<&[u8]> = corpus.valid.iter().map(|(_, b)| b.as_slice()).collect();
        group.bench_function(BenchmarkId::from_parameter("toolgate_json"), |b| {
            b.iter(|| {
                for t in &texts {
                    black_box(toolgate_json::from_slice(black_box(t)).is_ok());
                }
            })
        });
        let mut reader = toolgate_json::Reader::new(toolgate_json::ParseOptions::new());
        group.bench_function(BenchmarkId::from_parameter("toolgate_reader"), |b| {
            b.iter(|| {
                for t in &texts {
                    let read = reader.read(black_box(t), &mut ());
                    black_box(read == toolgate_json::Read::Accepted);
                    black_box(reader.canonical().len());
                }
            })
        });
        group.bench_function(BenchmarkId::from_parameter("serde_json"), |b| {
            b.iter(|| {
                for t in &texts {
                    black_box(serde_json::from_slice::<serde_json::Value>(black_box(t)).is_ok());
                }
            })
        });
        group.bench_function(BenchmarkId::from_parameter("sonic_rs"), |b| {
            b.iter(|| {
                for t in &texts {
                    black_box(sonic_rs::from_slice::<sonic_rs::Value>(black_box(t)).is_ok());
                }
            })
        });
        let mut buffers = simd_json::Buffers::default();
        let mut copy: Vec<u8> = Vec::new();
        group.bench_function(BenchmarkId::from_parameter("simd_json"), |b| {
            b.iter(|| {
                for t in &texts {
                    copy.clear();
                    copy.extend_from_slice(black_box(t));
                    black_box(
                        simd_json::to_borrowed_value_with_buffers(&mut copy, &mut buffers).is_ok(),
                    );
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, parse);
criterion_main!(benches);
