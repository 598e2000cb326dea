//! The strict path with no tree ([`Checker`]) against the tree path
//! (strict parse, `is_valid`/`validate`, `canonical::to_string`): the same
//! verdict, the same parse error code and the same canonical bytes on
//! every document of
//!
//! - the JSON Schema Test Suite (draft 2020-12, strict and standard mode),
//!   each test's data written with its own number lexemes and member order;
//! - JSONTestSuite's parsing cases and `../shared/corpora/extra`, against
//!   `true` and against closed object and array schemas;
//! - the perf corpus (`../shared/perf`), valid and bad lines, whose valid
//!   lines must also be accepted without a tree;
//! - the fuzz corpus seeds (`fuzz/seeds/schema_validate`, `fuzz/seeds/parse`);
//! - generated documents (proptest) against generated-shape schemas.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test harness: a broken corpus must abort the run loudly"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::Config;
use toolgate_json::{canonical, visit, ParseOptions, Tape, Value, Visitor};
use toolgate_schema::{Build, Checked, Checker, Loaded, Mode, Options, Schema};

/// Checks one input both ways; returns whether the checker accepted it
/// without a tree.
fn agree(checker: &mut Checker, schema: &Schema, input: &[u8]) -> Result<bool, String> {
    let tree = checker.options().parse(input);
    let expected = match &tree {
        Err(e) => Err(Some(e.code())),
        Ok(v) if schema.is_valid(v) => Ok(canonical::to_string(v)),
        Ok(v) => {
            if schema.validate(v).is_ok() {
                return Err("is_valid and validate disagree".into());
            }
            Err(None)
        }
    };
    if checker.is_valid(schema, input) != expected.is_ok() {
        return Err(format!("is_valid says {}", expected.is_err()));
    }
    loads_agree(checker, schema, input, &tree, &expected)?;
    let got = checker.check(schema, input);
    match (got, expected) {
        (Checked::Valid(ok), Ok(text)) if ok.canonical() == text => {
            if ok.digest() != canonical::Digest::of(text.as_bytes()) {
                return Err("digest differs".into());
            }
            Ok(ok.without_tree())
        }
        (Checked::Valid(ok), Ok(text)) => Err(format!(
            "canonical text differs: checker {:?}, tree {text:?}",
            ok.canonical()
        )),
        (Checked::Malformed(e), Err(Some(code))) if e.code() == code => Ok(false),
        (Checked::Invalid(errors), Err(None)) if !errors.is_empty() => Ok(false),
        (got, expected) => Err(format!("checker {got:?}, tree {expected:?}")),
    }
}

/// The one pass with the value out ([`Checker::load`]) against the tree
/// path: the builder is told exactly the parsed value (each number by its
/// own lexeme) when the tree accepts, and the refusal is the tree's.
fn loads_agree(
    checker: &mut Checker,
    schema: &Schema,
    input: &[u8],
    tree: &Result<Value<'_>, toolgate_json::Error>,
    expected: &Result<String, Option<toolgate_json::ErrorCode>>,
) -> Result<(), String> {
    let mut tape = Tape::new();
    // Left over from an earlier document: a load starts the builder over.
    tape.string("left over");
    let loaded = checker.load(schema, input, &mut tape);
    match (&loaded, tree, expected) {
        (Loaded::Built { .. }, Ok(value), Ok(_)) => {
            let mut told = Tape::new();
            assert!(visit(value, &mut told));
            if format!("{tape:?}") != format!("{told:?}") {
                return Err(format!("load told {tape:?}, the tree {told:?}"));
            }
        }
        (Loaded::Malformed(e), _, Err(Some(code))) if e.code() == *code => {}
        (Loaded::Invalid(errors), Ok(value), Err(None)) => {
            let listed = |e: &toolgate_schema::ValidationErrors| {
                e.iter()
                    .map(|e| {
                        format!(
                            "{} {} {}",
                            e.code(),
                            e.instance_pointer(),
                            e.keyword_location()
                        )
                    })
                    .collect::<Vec<_>>()
            };
            let want = schema.validate(value).unwrap_err();
            if listed(errors) != listed(&want) {
                return Err(format!("load listed {errors:?}, validate {want:?}"));
            }
        }
        _ => return Err(format!("load {loaded:?}, tree {expected:?}")),
    }
    Ok(())
}

fn corpora() -> PathBuf {
    toolgate_testkit::corpora_dir(env!("CARGO_MANIFEST_DIR")).unwrap()
}

fn compile(schema: &str, mode: Mode) -> Schema {
    let doc = toolgate_json::from_str(schema).unwrap();
    Schema::compile(&doc, &Options::new().mode(mode)).unwrap()
}

/// A value written with its own number lexemes and member order, and a
/// little whitespace, so the checker sees what a model would send.
fn raw(v: &Value<'_>, out: &mut String) {
    match v {
        Value::Number(n) => out.push_str(&n.lexeme()),
        Value::Array(items) => {
            out.push_str("[ ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                raw(item, out);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('{');
            for (i, (k, item)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&canonical::to_string(&Value::String(k.into())));
                out.push_str(": ");
                raw(item, out);
            }
            out.push_str(" }");
        }
        other => out.push_str(&canonical::to_string(other)),
    }
}

fn read_json(path: &Path) -> Value<'static> {
    let bytes = std::fs::read(path).unwrap();
    ParseOptions::new()
        .allow_noncharacters(true)
        .parse(&bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .into_owned()
}

fn remotes(root: &Path, options: &mut Options) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                *options = options
                    .clone()
                    .register(format!("http://localhost:1234/{rel}"), read_json(&path));
            }
        }
    }
}

#[test]
fn json_schema_test_suite() {
    let suite = corpora().join("JSON-Schema-Test-Suite");
    let files = toolgate_testkit::files_in(&suite.join("tests/draft2020-12")).unwrap();
    let mut failures = Vec::new();
    let (mut cases, mut without_tree) = (0, 0);
    for mode in [Mode::Strict, Mode::Standard] {
        let mut options = Options::new().mode(mode);
        remotes(&suite.join("remotes"), &mut options);
        let mut checker = Checker::new(ParseOptions::new().allow_noncharacters(true));
        for file in &files {
            let groups = read_json(file);
            for group in groups.as_array().unwrap() {
                let Ok(schema) = Schema::compile(group.pointer("/schema").unwrap(), &options)
                else {
                    continue;
                };
                for test in group.pointer("/tests").unwrap().as_array().unwrap() {
                    let mut text = String::new();
                    raw(test.pointer("/data").unwrap(), &mut text);
                    cases += 1;
                    match agree(&mut checker, &schema, text.as_bytes()) {
                        Ok(fast) => without_tree += usize::from(fast),
                        Err(e) => failures.push(format!(
                            "{mode:?} {} / {} / {}: {e}",
                            file.file_name().unwrap().to_string_lossy(),
                            group.pointer("/description").unwrap().as_str().unwrap(),
                            test.pointer("/description").unwrap().as_str().unwrap(),
                        )),
                    }
                }
            }
        }
    }
    eprintln!("JSON Schema Test Suite: {cases} documents, {without_tree} accepted without a tree");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(without_tree > 500, "the tree-free path is hardly used");
}

#[test]
fn json_test_suite_and_extra() {
    let root = corpora();
    let mut files = toolgate_testkit::files_in(&root.join("JSONTestSuite/test_parsing")).unwrap();
    files.extend(toolgate_testkit::files_in(&root.join("extra")).unwrap());
    let schemas = [
        compile("true", Mode::Strict),
        compile("{}", Mode::Strict),
        compile(
            r#"{"type":"array","items":{"type":["string","number"]}}"#,
            Mode::Strict,
        ),
        compile(
            r#"{"type":"object","properties":{"a":{"type":"array"}}}"#,
            Mode::Strict,
        ),
    ];
    let mut checker = Checker::new(ParseOptions::new());
    let mut failures = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for (i, schema) in schemas.iter().enumerate() {
            match agree(&mut checker, schema, &bytes) {
                Err(e) => failures.push(format!("{} / schema {i}: {e}", file.display())),
                // Against `true` and `{}` an accepted text never needs the tree.
                Ok(false) if i < 2 && ParseOptions::new().parse(&bytes).is_ok() => {
                    failures.push(format!("{}: accepted only by the tree", file.display()));
                }
                Ok(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn perf_corpus() {
    let perf = toolgate_testkit::perf_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let mut checker = Checker::new(ParseOptions::new());
    let mut counted = 0;
    for (corpus, tool) in [
        ("small", "search"),
        ("small", "refund"),
        ("medium", "create_ticket"),
        ("large", "bulk_upsert"),
    ] {
        let text = std::fs::read(perf.join(format!("schemas/{tool}.json"))).unwrap();
        let schema =
            Schema::compile(&toolgate_json::from_slice(&text).unwrap(), &Options::new()).unwrap();
        let valid = std::fs::read(perf.join(format!("valid/{corpus}.{tool}.jsonl"))).unwrap();
        for line in valid.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let fast = agree(&mut checker, &schema, line).unwrap_or_else(|e| panic!("{tool}: {e}"));
            assert!(fast, "{tool}: a valid line took the tree path");
            counted += 1;
        }
        let bad = std::fs::read(perf.join(format!("bad/{corpus}.{tool}.tsv"))).unwrap();
        for line in bad.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let tab = line.iter().position(|&b| b == b'\t').unwrap();
            let raw = &line[tab + 1..];
            agree(&mut checker, &schema, raw).unwrap_or_else(|e| panic!("{tool}: {e}"));
            assert!(
                !matches!(checker.check(&schema, raw), Checked::Valid(_)),
                "{tool}: a bad line accepted"
            );
            counted += 1;
        }
    }
    assert!(counted > 24_000);
}

#[test]
fn fuzz_seeds() {
    let fuzz = toolgate_testkit::workspace_root(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .join("fuzz/seeds");
    let mut checker = Checker::new(ParseOptions::new());
    let mut pairs = 0;
    for file in toolgate_testkit::files_in(&fuzz.join("schema_validate")).unwrap() {
        let data = std::fs::read(&file).unwrap();
        let Some(split) = data.iter().position(|&b| b == 0) else {
            continue;
        };
        let Ok(document) = toolgate_json::from_slice(&data[..split]) else {
            continue;
        };
        for mode in [Mode::Strict, Mode::Standard] {
            let Ok(schema) = Schema::compile(&document, &Options::new().mode(mode)) else {
                continue;
            };
            agree(&mut checker, &schema, &data[split + 1..])
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            pairs += 1;
        }
    }
    let any = compile("true", Mode::Strict);
    for file in toolgate_testkit::files_in(&fuzz.join("parse")).unwrap() {
        let data = std::fs::read(&file).unwrap();
        agree(&mut checker, &any, &data).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        pairs += 1;
    }
    assert!(pairs > 10);
}

/// A builder that stops at its `n`th event, keeping the events before.
struct StopAt(usize, Tape);

impl StopAt {
    fn go(&mut self) -> bool {
        self.0 = self.0.saturating_sub(1);
        self.0 > 0
    }
}

impl Visitor for StopAt {
    fn begin_object(&mut self) -> bool {
        self.go() && self.1.begin_object()
    }
    fn member(&mut self, name: &str) -> bool {
        self.go() && self.1.member(name)
    }
    fn end_object(&mut self) -> bool {
        self.go() && self.1.end_object()
    }
    fn begin_array(&mut self) -> bool {
        self.go() && self.1.begin_array()
    }
    fn end_array(&mut self) -> bool {
        self.go() && self.1.end_array()
    }
    fn scalar(&mut self, value: &Value<'_>) -> bool {
        self.go() && self.1.scalar(value)
    }
}

impl Build for StopAt {
    fn restart(&mut self) {
        self.1.restart();
    }
}

#[test]
fn a_stopped_builder_comes_after_the_refusal() {
    let schema = compile(
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"array"}}}"#,
        Mode::Strict,
    );
    let mut checker = Checker::new(ParseOptions::new());
    let mut load = |input: &str, n: usize| {
        let mut builder = StopAt(n, Tape::new());
        let loaded = checker.load(&schema, input.as_bytes(), &mut builder);
        (loaded, builder.1.len())
    };
    // Valid: the builder's stop is the answer, at the event it stopped.
    for n in 1..=8 {
        let (loaded, told) = load(r#"{"a": 1, "b": [true]}"#, n);
        assert!(matches!(loaded, Loaded::Stopped), "{n}: {loaded:?}");
        assert_eq!(told, n - 1);
    }
    let (loaded, told) = load(r#"{"a": 1, "b": [true]}"#, 9);
    assert!(
        matches!(loaded, Loaded::Built { without_tree: true }),
        "{loaded:?}"
    );
    assert_eq!(told, 8);
    // Refused after the builder stopped: the refusal is the answer.
    let (loaded, _) = load(r#"{"a": 1, "b": [true], "c": 1}"#, 2);
    assert!(
        matches!(&loaded, Loaded::Invalid(e) if e.as_slice()[0].code().as_str() == "unknown_property"),
        "{loaded:?}"
    );
    let (loaded, _) = load(r#"{"a": 1, "b": [true], "a": 1}"#, 2);
    assert!(
        matches!(&loaded, Loaded::Malformed(e) if e.code().as_str() == "duplicate_key"),
        "{loaded:?}"
    );
}

/// The schemas the generated documents are checked against: closed
/// objects, required names, nested arrays, `$ref`, and keywords the
/// tree-free path leaves to the tree (`anyOf`, `enum`, `patternProperties`).
const SCHEMAS: &[&str] = &[
    r#"{"type":"object","properties":{"a":{"type":"integer","maximum":5},"b":{"type":"array","items":{"type":"string","maxLength":3}},"c":{"type":"object","properties":{"a":{"type":"boolean"}}}},"required":["a"]}"#,
    r#"{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":{"type":["object","null"]},"minItems":1,"maxItems":4}"#,
    r##"{"$defs":{"n":{"type":["object","integer"],"properties":{"a":{"$ref":"#/$defs/n"}},"additionalProperties":{"type":"string"},"maxProperties":3}},"$ref":"#/$defs/n"}"##,
    r#"{"anyOf":[{"type":"object"},{"type":"array","items":{"enum":[1,"a",[]]}}]}"#,
    r#"{"type":"object","patternProperties":{"^a":{"type":"integer"}},"required":["b"],"minProperties":1}"#,
    r#"{"items":{"type":"number","exclusiveMinimum":0.5}}"#,
    "true",
];

fn json() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("a".to_owned()),
        Just("b".to_owned()),
        Just("c".to_owned()),
        Just("\\u0061".to_owned()),
        Just("é".to_owned()),
        Just("\\ud83d\\ude00".to_owned()),
        Just("\u{e000}".to_owned()),
    ];
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        (-20i64..20).prop_map(|n| n.to_string()),
        Just("1.0".to_owned()),
        Just("-0".to_owned()),
        Just("0.75".to_owned()),
        Just("1e2".to_owned()),
        Just("123456789012345678901234567890".to_owned()),
        Just("\"ab\"".to_owned()),
        Just("\"abcd\"".to_owned()),
        Just("\"x\\ny\"".to_owned()),
        Just("\"\\u00e9\"".to_owned()),
        Just("1e400".to_owned()),
        Just("\"\\ud800\"".to_owned()),
    ];
    leaf.prop_recursive(4, 32, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|m| {
                let mut out = String::from("{");
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" , ");
                    }
                    let _ = write!(out, "\"{k}\":{v}");
                }
                out.push('}');
                out
            }),
        ]
    })
}

proptest! {
    #![proptest_config(Config { cases: 2048, failure_persistence: None, ..Config::default() })]

    /// Generated documents (with duplicates, escapes, bad numbers and lone
    /// surrogates among them) get the tree path's verdict and canonical text.
    #[test]
    fn generated_documents_agree(doc in json(), which in 0..SCHEMAS.len(), strict in any::<bool>()) {
        let mode = if strict { Mode::Strict } else { Mode::Standard };
        let schema = compile(SCHEMAS[which], mode);
        let mut checker = Checker::new(ParseOptions::new());
        if let Err(e) = agree(&mut checker, &schema, doc.as_bytes()) {
            return Err(TestCaseError::fail(format!("{doc}: {e}")));
        }
    }
}
