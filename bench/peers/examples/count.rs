//! Runs one corpus through one pipeline a fixed number of times, for
//! instruction counts under `valgrind --tool=callgrind` (repeatable on a
//! shared machine, unlike wall time):
//!
//! ```sh
//! cd bench/peers && cargo build --release --example count && cd ../..
//! valgrind --tool=callgrind target/release/examples/count small ours 3
//! ```
//!
//! Pipelines: `none` (load only, the baseline to subtract), `ours` (strict
//! parse + strict validation), `theirs` (serde_json + jsonschema), `parse`
//! (toolgate-json only), `serde` (serde_json only), `checker` (the strict
//! path with no tree, `toolgate_schema::Checker`), `reader`
//! (`toolgate_json::Reader` alone), `valid` (`Checker::is_valid`: no
//! canonical text), `sonic` (sonic-rs parse only), `simd` (simd-json parse
//! only, on a copy), `typed` (the typed-serde baseline).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "measurement harness: a broken corpus should stop the run loudly"
)]

use std::hint::black_box;

#[path = "../benches/support/typed.rs"]
mod typed;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (corpus, pipeline, rounds) = (&args[1], &args[2], args[3].parse::<usize>().unwrap());
    let corpora = toolgate_peers::corpora().unwrap();
    let corpus = corpora.iter().find(|c| c.name == corpus).unwrap();
    let mut ours = std::collections::HashMap::new();
    let mut theirs = std::collections::HashMap::new();
    for (tool, _) in &corpus.valid {
        if ours.contains_key(tool) {
            continue;
        }
        let text = toolgate_peers::schema_text(tool).unwrap();
        let doc = toolgate_json::from_slice(&text).unwrap();
        ours.entry(tool.clone()).or_insert_with(|| {
            toolgate_schema::Schema::compile(&doc, &toolgate_schema::Options::new()).unwrap()
        });
        let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
        theirs
            .entry(tool.clone())
            .or_insert_with(|| jsonschema::draft202012::new(&doc).unwrap());
    }
    let items: Vec<_> = corpus
        .valid
        .iter()
        .map(|(t, b)| (&ours[t], &theirs[t], typed::Tool::of(t), b.as_slice()))
        .collect();
    let mut accepted = 0usize;
    let mut checker = toolgate_schema::Checker::new(toolgate_json::ParseOptions::new());
    let mut reader = toolgate_json::Reader::new(toolgate_json::ParseOptions::new());
    let mut buffers = simd_json::Buffers::default();
    let mut copy: Vec<u8> = Vec::new();
    for _ in 0..rounds {
        for (schema, validator, tool, raw) in &items {
            let ok = match pipeline.as_str() {
                "none" => true,
                "ours" => toolgate_json::from_slice(raw).is_ok_and(|v| schema.is_valid(&v)),
                "parse" => toolgate_json::from_slice(raw).is_ok(),
                "checker" => matches!(
                    checker.check(schema, raw),
                    toolgate_schema::Checked::Valid(_)
                ),
                "reader" => reader.read(raw, &mut ()) == toolgate_json::Read::Accepted,
                "sonic" => sonic_rs::from_slice::<sonic_rs::Value>(raw).is_ok(),
                "valid" => checker.is_valid(schema, raw),
                "simd" => {
                    copy.clear();
                    copy.extend_from_slice(raw);
                    simd_json::to_borrowed_value_with_buffers(&mut copy, &mut buffers).is_ok()
                }
                "typed" => typed::check(*tool, raw),
                "serde" => serde_json::from_slice::<serde_json::Value>(raw).is_ok(),
                "theirs" => serde_json::from_slice::<serde_json::Value>(raw)
                    .is_ok_and(|v| validator.is_valid(&v)),
                other => panic!("unknown pipeline {other}"),
            };
            accepted += usize::from(black_box(ok));
        }
    }
    println!("{accepted}");
}
