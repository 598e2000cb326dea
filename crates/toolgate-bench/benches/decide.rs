//! The full decision for one raw OpenAI Chat Completions response: adapter,
//! registry lookup, strict parse of the arguments, strict schema, URL guard,
//! authorization hook, limits, kill switch and approval, feedback, canonical
//! form and digest. Over the shop example's config, with 1 call and with 8
//! parallel calls (a mix of `search`, `get_order` and `fetch_url`).
//!
//! Run: `cargo bench -p toolgate-bench --bench decide`. Target: p50 under
//! 10 µs for the 1-call response.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness: a broken setup should stop the run loudly; criterion's macros generate undocumented items"
)]

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};

fn call(i: usize) -> String {
    let (name, args) = match i % 3 {
        0 => (
            "search",
            r#"{\"query\":\"waterproof hiking boots\",\"limit\":5}"#,
        ),
        1 => ("get_order", r#"{\"order_id\":\"ord_1001\"}"#),
        _ => (
            "fetch_url",
            r#"{\"url\":\"https://docs.example.com/returns?lang=en\"}"#,
        ),
    };
    format!(
        r#"{{"id":"call_{i}","type":"function","function":{{"name":"{name}","arguments":"{args}"}}}}"#
    )
}

fn body(calls: usize) -> Vec<u8> {
    let calls: Vec<String> = (0..calls).map(call).collect();
    format!(
        r#"{{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}],"usage":{{"prompt_tokens":100,"completion_tokens":40,"total_tokens":140}}}}"#,
        calls.join(",")
    )
    .into_bytes()
}

fn bench(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = Config::load(path).unwrap();
    let gate = Gate::builder(config.registry().clone())
        .max_calls_per_response(8)
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let mut ctx = Context::new("alice", "sess-bench", 1);
    ctx.now = Some(1_767_225_600);
    let mut group = c.benchmark_group("decide/openai");
    for n in [1usize, 8] {
        let b = body(n);
        let d = gate.decide(&b, Format::OpenAiChat, &ctx, &ctx);
        assert_eq!(d.decisions().len(), n);
        assert!(
            d.decisions().iter().all(|d| d.verdict() == Verdict::Allow),
            "{d:?}"
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(
            format!("{n}_call{}", if n == 1 { "" } else { "s" }),
            |bench| {
                bench.iter(|| gate.decide(black_box(&b), Format::OpenAiChat, &ctx, &ctx));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
