//! End to end, raw argument bytes in, accept or reject out, in the same run
//! over the small, medium and large corpora:
//!
//! - `toolgate_strict`: the tree path (strict parse, then the strict
//!   validator; the full error list on a reject);
//! - `toolgate_checker`: the strict path with no tree
//!   ([`toolgate_schema::Checker`]: validated while read, the canonical text
//!   written on the way); `toolgate_checker_is_valid` the same without
//!   writing the canonical text (the verdict alone, as the peers give it);
//!   `toolgate_checker+digest` adds the SHA-256 digest of the canonical
//!   text, as the gate needs it;
//! - `serde_json+jsonschema`: `serde_json::from_slice::<Value>` plus a
//!   `jsonschema` validator compiled once;
//! - `serde_typed`: `#[derive(Deserialize)]` structs with
//!   `deny_unknown_fields` and the schema's bounds checked by hand
//!   (`support/typed.rs`);
//! - `sonic_rs_parse_only` and `simd_json_parse_only`: parse to a value, no
//!   validation at all, as a ceiling.
//!
//! Before timing, every bad case of the corpus is run through both and the
//! number each lets through is printed: toolgate must let none through.
//!
//! Run, in `bench/peers` (a workspace of its own): `cargo bench --bench validate`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness: a broken corpus should stop the run loudly; criterion's macros generate undocumented items"
)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolgate_schema::{Checked, Checker, Options, Schema};

#[path = "support/typed.rs"]
mod typed;

struct Validators {
    ours: HashMap<String, Schema>,
    theirs: HashMap<String, jsonschema::Validator>,
}

fn validators(corpora: &[toolgate_peers::Corpus]) -> Validators {
    let mut v = Validators {
        ours: HashMap::new(),
        theirs: HashMap::new(),
    };
    for corpus in corpora {
        for (tool, _) in &corpus.valid {
            if v.ours.contains_key(tool) {
                continue;
            }
            let text = toolgate_peers::schema_text(tool).unwrap();
            let doc = toolgate_json::from_slice(&text).unwrap();
            v.ours.insert(
                tool.clone(),
                Schema::compile(&doc, &Options::new()).unwrap(),
            );
            let doc: serde_json::Value = serde_json::from_slice(&text).unwrap();
            v.theirs
                .insert(tool.clone(), jsonschema::draft202012::new(&doc).unwrap());
        }
    }
    v
}

/// toolgate's full path: strict parse, strict validation; on a reject the
/// full error list is produced, as the gate would.
fn ours(v: &Validators, tool: &str, raw: &[u8]) -> bool {
    ours_with(&v.ours[tool], raw)
}

fn ours_with(schema: &Schema, raw: &[u8]) -> bool {
    match toolgate_json::from_slice(raw) {
        Ok(value) => schema.is_valid(&value) || black_box(schema.validate(&value)).is_ok(),
        Err(e) => {
            black_box(e);
            false
        }
    }
}

fn theirs(v: &Validators, tool: &str, raw: &[u8]) -> bool {
    theirs_with(&v.theirs[tool], raw)
}

fn theirs_with(validator: &jsonschema::Validator, raw: &[u8]) -> bool {
    match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(value) => validator.is_valid(&value),
        Err(_) => false,
    }
}

fn report_bad_cases(corpora: &[toolgate_peers::Corpus], v: &Validators) {
    let mut checker = Checker::new(toolgate_json::ParseOptions::new());
    eprintln!("bad cases let through (each line has exactly one defect):");
    for corpus in corpora {
        let mut kinds: Vec<(&str, usize, usize, usize, usize, usize)> = Vec::new();
        for (tool, kind, raw) in &corpus.bad {
            let i = match kinds.iter().position(|k| k.0 == kind) {
                Some(i) => i,
                None => {
                    kinds.push((kind, 0, 0, 0, 0, 0));
                    kinds.len() - 1
                }
            };
            kinds[i].1 += 1;
            if ours(v, tool, raw) {
                kinds[i].2 += 1;
            }
            if matches!(checker.check(&v.ours[tool], raw), Checked::Valid(_)) {
                kinds[i].4 += 1;
            }
            if typed::check(typed::Tool::of(tool), raw) {
                kinds[i].5 += 1;
            }
            if theirs(v, tool, raw) {
                kinds[i].3 += 1;
            }
        }
        for (kind, total, through_ours, through_theirs, through_checker, through_typed) in kinds {
            eprintln!(
                "  {:<7} {kind:<22} {total:>5} cases: toolgate {through_ours:>5}, checker {through_checker:>5}, serde_json+jsonschema {through_theirs:>5}, serde_typed {through_typed:>5}",
                corpus.name
            );
            assert_eq!(through_ours, 0, "toolgate let a `{kind}` case through");
            assert_eq!(
                through_checker, 0,
                "the checker let a `{kind}` case through"
            );
        }
    }
}

fn validate(c: &mut Criterion) {
    let corpora = toolgate_peers::corpora().unwrap();
    let v = validators(&corpora);
    for corpus in &corpora {
        for (tool, raw) in &corpus.valid {
            assert!(
                ours(&v, tool, raw),
                "toolgate rejects a valid `{tool}` case"
            );
            assert!(
                theirs(&v, tool, raw),
                "the peer rejects a valid `{tool}` case"
            );
            assert!(
                typed::check(typed::Tool::of(tool), raw),
                "the typed baseline rejects a valid `{tool}` case"
            );
        }
    }
    report_bad_cases(&corpora, &v);
    for corpus in &corpora {
        let mut group = c.benchmark_group(format!("validate/{}", corpus.name));
        if corpus.name == "small" {
            group.throughput(Throughput::Elements(corpus.valid.len() as u64));
        } else {
            group.throughput(Throughput::Bytes(corpus.valid_bytes()));
        }
        if corpus.name == "large" {
            group.sample_size(20);
        }
        // Each call's validators are looked up before timing: one call is the
        // raw text in, accept or reject out.
        let items: Vec<(&Schema, &jsonschema::Validator, &[u8])> = corpus
            .valid
            .iter()
            .map(|(t, b)| (&v.ours[t], &v.theirs[t], b.as_slice()))
            .collect();
        let typed_items: Vec<(typed::Tool, &[u8])> = corpus
            .valid
            .iter()
            .map(|(t, b)| (typed::Tool::of(t), b.as_slice()))
            .collect();
        let mut checker = Checker::new(toolgate_json::ParseOptions::new());
        for (schema, _, raw) in &items {
            match checker.check(schema, raw) {
                Checked::Valid(ok) => assert!(ok.without_tree(), "a valid call took the tree path"),
                other => panic!("the checker rejects a valid call: {other:?}"),
            }
        }
        group.bench_function(
            BenchmarkId::from_parameter("toolgate_checker_is_valid"),
            |b| {
                b.iter(|| {
                    for (schema, _, raw) in &items {
                        black_box(checker.is_valid(schema, black_box(raw)));
                    }
                })
            },
        );
        group.bench_function(BenchmarkId::from_parameter("toolgate_checker"), |b| {
            b.iter(|| {
                for (schema, _, raw) in &items {
                    black_box(matches!(
                        checker.check(schema, black_box(raw)),
                        Checked::Valid(_)
                    ));
                }
            })
        });
        group.bench_function(
            BenchmarkId::from_parameter("toolgate_checker+digest"),
            |b| {
                b.iter(|| {
                    for (schema, _, raw) in &items {
                        if let Checked::Valid(ok) = checker.check(schema, black_box(raw)) {
                            black_box(ok.digest());
                        }
                    }
                })
            },
        );
        group.bench_function(BenchmarkId::from_parameter("toolgate_strict"), |b| {
            b.iter(|| {
                for (schema, _, raw) in &items {
                    black_box(ours_with(schema, black_box(raw)));
                }
            })
        });
        group.bench_function(BenchmarkId::from_parameter("serde_json+jsonschema"), |b| {
            b.iter(|| {
                for (_, validator, raw) in &items {
                    black_box(theirs_with(validator, black_box(raw)));
                }
            })
        });
        group.bench_function(BenchmarkId::from_parameter("serde_typed"), |b| {
            b.iter(|| {
                for (tool, raw) in &typed_items {
                    black_box(typed::check(*tool, black_box(raw)));
                }
            })
        });
        group.bench_function(BenchmarkId::from_parameter("sonic_rs_parse_only"), |b| {
            b.iter(|| {
                for (_, _, raw) in &items {
                    black_box(sonic_rs::from_slice::<sonic_rs::Value>(black_box(raw)).is_ok());
                }
            })
        });
        let mut buffers = simd_json::Buffers::default();
        let mut copy: Vec<u8> = Vec::new();
        group.bench_function(BenchmarkId::from_parameter("simd_json_parse_only"), |b| {
            b.iter(|| {
                for (_, _, raw) in &items {
                    copy.clear();
                    copy.extend_from_slice(black_box(raw));
                    black_box(
                        simd_json::to_borrowed_value_with_buffers(&mut copy, &mut buffers).is_ok(),
                    );
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, validate);
criterion_main!(benches);
