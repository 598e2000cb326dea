//! The JSON Schema Test Suite (draft 2020-12), one trial per case.
//!
//! Four runs, each printing a `draft2020-12 <run>: PASSED/TOTAL passed` line:
//!
//! - `standard`: the required tests (`tests/draft2020-12/*.json`) in standard mode;
//! - `optional`: `optional/*.json` in standard mode (informative, with its own
//!   expected-failure list);
//! - `formats`: `optional/format/*.json` in standard mode with format assertion on;
//! - `strict`: the required tests in strict mode, where the verdicts listed in
//!   `tests/strict_deviations.tsv` replace the suite's.
//!
//! Trial names are `<run> / <file> / <group> / <test>`. A case on an
//! expected-failure list that passes fails the run, so the lists stay exact.
//! The lists are exact for the two copies of the suite the tests accept
//! (`toolgate_testkit::schema_suite_copy`): the pinned one in CI's
//! `../shared/corpora`, and the older registry copy `scripts/fetch-corpora.sh`
//! lays out, which lacks [`ABSENT_FROM_REGISTRY_COPY`] listed cases and names
//! three differently ([`XFAIL_FORMATS_REGISTRY_COPY`]).
//! `$ref`s to `http://localhost:1234/` resolve against `remotes/`, registered
//! as documents (nothing is fetched).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test harness: a broken corpus must abort the run loudly"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use toolgate_json::Value;
use toolgate_schema::{Mode, Options, Schema};

/// Standard-mode cases expected to fail, each with its reason.
const XFAIL_STANDARD: &[(&str, &str)] = &[];

/// Optional (non-format) cases expected to fail, each with its reason.
const XFAIL_OPTIONAL: &[(&str, &str)] = &[
    ("optional/bignum.json / float comparison with high precision / comparison works for high numbers", "a non-integer lexeme is judged at its canonical value, the value a tool receives: the data's canonical text is 9.727837981879871e+26, below the bound"),
    ("optional/bignum.json / float comparison with high precision on negative numbers / comparison works for very negative numbers", "a non-integer lexeme is judged at its canonical value, the value a tool receives: the data's canonical text is -9.727837981879871e+26, above the bound"),
    ("optional/cross-draft.json / refs to historic drafts are processed as historic drafts / first item not a string is valid", "a `$schema` of draft 2019-09 is refused (`unsupported_draft`): only 2020-12 semantics are implemented"),
    ("optional/dependencies-compatibility.json / single dependency / missing dependency", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / multiple dependents required / missing dependency", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / multiple dependents required / missing other dependency", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / multiple dependents required / missing both dependencies", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / dependencies with escaped characters / CRLF missing dependent", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / dependencies with escaped characters / quoted quotes missing dependent", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / single schema dependency / wrong type", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / single schema dependency / wrong type both", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / single schema dependency / wrong type other", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / boolean subschemas / object with both properties is invalid", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / schema dependencies with escaped characters / quoted quote", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / schema dependencies with escaped characters / quoted tab invalid under dependent schema", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / boolean subschemas / object with property having schema false is invalid", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
    ("optional/dependencies-compatibility.json / schema dependencies with escaped characters / quoted quote invalid under dependent schema", "`dependencies` is draft-07; 2020-12 has no such keyword, so standard mode ignores it as unknown (strict mode refuses it)"),
];

/// Format cases expected to fail, each with its reason.
const XFAIL_FORMATS: &[(&str, &str)] = &[
    (r#"optional/format/idn-email.json / validation of an internationalized e-mail addresses / an invalid e-mail/idn e-mail address"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-email.json / validation of an internationalized e-mail addresses / a fullwidth commercial at is not a local-part separator"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / illegal first char U+302E Hangul single dot tone mark"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / contains illegal char U+302E Hangul single dot tone mark"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / a single label of 64 characters is too long"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / invalid label, correct Punycode"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / invalid Punycode"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / U-label contains "--" in the 3rd and 4th position"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / U-label starts with a dash"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / U-label ends with a dash"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Begins with a Spacing Combining Mark"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / U-label starts and ends with a dash"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Begins with a Nonspacing Mark"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Begins with an Enclosing Mark"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Exceptions that are DISALLOWED, right-to-left chars"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Exceptions that are DISALLOWED, left-to-right chars"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / MIDDLE DOT with no preceding 'l'"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / MIDDLE DOT with nothing preceding"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / MIDDLE DOT with no following 'l'"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Greek KERAIA not followed by Greek"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Greek KERAIA not followed by anything"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Hebrew GERESH not preceded by Hebrew"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / MIDDLE DOT with nothing following"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Hebrew GERSHAYIM not preceded by Hebrew"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Hebrew GERSHAYIM not preceded by anything"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / KATAKANA MIDDLE DOT with no Hiragana, Katakana, or Han"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / KATAKANA MIDDLE DOT with no other characters"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Hebrew GERESH not preceded by anything"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Arabic-Indic digits mixed with Extended Arabic-Indic digits"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / ZERO WIDTH JOINER not preceded by anything"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / ZERO WIDTH JOINER not preceded by Virama"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / empty string"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / zero width non-joiner must pass at every occurrence"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / Bidi domain name with a digit-first label is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / left-to-right label containing a right-to-left letter is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / right-to-left label mixing both digit types is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / A-label that decodes to a disallowed code point is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / A-label that decodes to a Bidi rule violation is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / label starting with a digit before a right-to-left letter is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / a U-label whose A-label form is longer than 63 octets is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / empty label between two dots is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / a name longer than 253 characters is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / A-label that decodes to only ASCII is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of internationalized host names / non-canonical Punycode that does not re-encode to itself is invalid"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / single dot"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / single fullwidth full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / single halfwidth ideographic full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / single ideographic full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / leading ideographic full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / leading fullwidth full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / leading halfwidth ideographic full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / trailing dot"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / trailing ideographic full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / trailing fullwidth full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / leading dot"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
    (r#"optional/format/idn-hostname.json / validation of separators in internationalized host names / trailing halfwidth ideographic full stop"#, "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema"),
];

const IDN: &str = "no checker for internationalized formats (`idn-email`, `idn-hostname`): standard mode ignores an unknown format; strict mode refuses the schema";

/// Format cases expected to fail in the registry copy only (the jsonschema
/// 4.26.0 sdist's, upstream 72c670b): there they carry the names upstream
/// changed later.
const XFAIL_FORMATS_REGISTRY_COPY: &[(&str, &str)] = &[
    ("optional/format/idn-email.json / validation of an internationalized e-mail addresses / an invalid idn e-mail address", IDN),
    ("optional/format/idn-email.json / validation of an internationalized e-mail addresses / an invalid e-mail address", IDN),
    ("optional/format/idn-hostname.json / validation of internationalized host names / a host name with a component too long", IDN),
];

/// How many entries of the lists above (and of `strict_deviations.tsv`)
/// name cases the registry copy does not have: cases upstream added or
/// renamed after 72c670b. Pinned, so that the lists stay exact there too.
const ABSENT_FROM_REGISTRY_COPY: usize = 24;

/// `../shared/corpora`, or where TOOLGATE_CORPORA points; a missing corpus
/// fails the run with how to fetch it.
fn corpora() -> PathBuf {
    match toolgate_testkit::corpora_dir(env!("CARGO_MANIFEST_DIR")) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(101);
        }
    }
}

fn read_json(path: &Path) -> Value<'static> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The suite's files hold noncharacters in a few strings; the strict
    // profile refuses them by default, so the harness admits them; and the
    // bignum cases hold decimals no double holds, which the harness admits
    // rounded (as a tool that opts into rounding does).
    toolgate_json::ParseOptions::new()
        .allow_noncharacters(true)
        .allow_rounding(true)
        .parse(&bytes)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .into_owned()
}

fn remotes(root: &Path) -> Vec<(String, Value<'static>)> {
    let mut out = Vec::new();
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
                out.push((format!("http://localhost:1234/{rel}"), read_json(&path)));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The strict-mode verdicts that differ from the suite's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    Valid,
    Invalid,
    CompileError,
}

fn strict_deviations() -> HashMap<String, Expect> {
    let text = include_str!("strict_deviations.tsv");
    let mut map = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if n == 0 || line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            cols.len(),
            3,
            "strict_deviations.tsv line {}: three columns",
            n + 1
        );
        assert!(
            !cols[2].trim().is_empty(),
            "line {}: a reason is required",
            n + 1
        );
        let expect = match cols[1] {
            "valid" => Expect::Valid,
            "invalid" => Expect::Invalid,
            "compile_error" => Expect::CompileError,
            other => panic!("line {}: unknown verdict `{other}`", n + 1),
        };
        assert!(
            map.insert(cols[0].to_owned(), expect).is_none(),
            "duplicate {}",
            cols[0]
        );
    }
    map
}

struct Run {
    name: &'static str,
    files: Vec<(String, PathBuf)>,
    options: Options,
    xfail: HashMap<String, &'static str>,
    strict: Option<HashMap<String, Expect>>,
    passed: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
}

fn trials(run: &Run, out: &mut Vec<Trial>, seen: &mut Vec<String>) {
    for (label, path) in &run.files {
        let groups = read_json(path);
        for group in groups.as_array().unwrap() {
            let gdesc = group
                .pointer("/description")
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned();
            let schema = group.pointer("/schema").unwrap().clone();
            for test in group.pointer("/tests").unwrap().as_array().unwrap() {
                let tdesc = test.pointer("/description").unwrap().as_str().unwrap();
                let case = format!("{label} / {gdesc} / {tdesc}");
                let data = test.pointer("/data").unwrap().clone();
                let valid = test.pointer("/valid").unwrap().as_bool().unwrap();
                let expect = match run.strict.as_ref().and_then(|m| m.get(&case)) {
                    Some(e) => *e,
                    None if valid => Expect::Valid,
                    None => Expect::Invalid,
                };
                if run.strict.is_some() {
                    seen.push(case.clone());
                }
                let xfail = run.xfail.get(&case).copied();
                let schema = schema.clone();
                let options = run.options.clone();
                let passed = Arc::clone(&run.passed);
                run.total.fetch_add(1, Ordering::Relaxed);
                out.push(Trial::test(format!("{} / {case}", run.name), move || {
                    let got = match Schema::compile(&schema, &options) {
                        Err(e) => Err(e),
                        Ok(s) => {
                            let fast = s.is_valid(&data);
                            let full = s.validate(&data);
                            if fast != full.is_ok() {
                                return Err(Failed::from("is_valid and validate disagree"));
                            }
                            if let Err(errors) = &full {
                                if errors.is_empty() {
                                    return Err(Failed::from("invalid without errors"));
                                }
                            }
                            Ok(fast)
                        }
                    };
                    let ok = match (&got, expect) {
                        (Ok(v), Expect::Valid) => *v,
                        (Ok(v), Expect::Invalid) => !*v,
                        (Err(_), Expect::CompileError) => true,
                        _ => false,
                    };
                    match (ok, xfail) {
                        (true, None) => {
                            passed.fetch_add(1, Ordering::Relaxed);
                            Ok(())
                        }
                        (true, Some(_)) => Err(Failed::from(
                            "passes but is on the expected-failure list: remove it",
                        )),
                        (false, Some(_)) => Ok(()),
                        (false, None) => Err(Failed::from(format!(
                            "expected {expect:?}, got {}",
                            match got {
                                Ok(v) => format!("valid={v}"),
                                Err(e) => format!("compile error: {e}"),
                            }
                        ))),
                    }
                }));
            }
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let corpora = corpora();
    let suite = corpora.join("JSON-Schema-Test-Suite");
    assert!(suite.is_dir(), "missing corpus: {}", suite.display());
    let copy = match toolgate_testkit::schema_suite_copy(&suite) {
        Ok(copy) => copy,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(101);
        }
    };
    let registry_copy = copy == toolgate_testkit::SchemaSuiteCopy::Registry;
    let tests = suite.join("tests/draft2020-12");
    let remotes = remotes(&suite.join("remotes"));
    assert!(!remotes.is_empty(), "missing remotes");
    let labelled = |dir: &Path, prefix: &str| -> Vec<(String, PathBuf)> {
        json_files(dir)
            .into_iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (format!("{prefix}{name}"), p)
            })
            .collect()
    };
    let required = labelled(&tests, "");
    assert_eq!(required.len(), 46, "the README promises 46 required files");
    let optional = labelled(&tests.join("optional"), "optional/");
    let formats = labelled(&tests.join("optional/format"), "optional/format/");
    let mut base = Options::new().mode(Mode::Standard);
    for (u, d) in &remotes {
        base = base.register(u.clone(), d.clone());
    }
    let xfail = |list: &[(&str, &'static str)]| -> HashMap<String, &'static str> {
        list.iter()
            .map(|(c, r)| {
                assert!(!r.is_empty(), "{c}: every expected failure needs a reason");
                ((*c).to_owned(), *r)
            })
            .collect()
    };
    let runs = vec![
        Run {
            name: "standard",
            files: required.clone(),
            options: base.clone(),
            xfail: xfail(XFAIL_STANDARD),
            strict: None,
            passed: Arc::default(),
            total: Arc::default(),
        },
        Run {
            name: "optional",
            files: optional,
            options: base.clone(),
            xfail: xfail(XFAIL_OPTIONAL),
            strict: None,
            passed: Arc::default(),
            total: Arc::default(),
        },
        Run {
            name: "formats",
            files: formats,
            options: base.clone().format_assertion(true),
            xfail: if registry_copy {
                xfail(&[XFAIL_FORMATS, XFAIL_FORMATS_REGISTRY_COPY].concat())
            } else {
                xfail(XFAIL_FORMATS)
            },
            strict: None,
            passed: Arc::default(),
            total: Arc::default(),
        },
        Run {
            name: "strict",
            files: required,
            options: base.clone().mode(Mode::Strict),
            xfail: HashMap::new(),
            strict: Some(strict_deviations()),
            passed: Arc::default(),
            total: Arc::default(),
        },
    ];
    let mut all = Vec::new();
    let mut seen = Vec::new();
    for run in &runs {
        trials(run, &mut all, &mut seen);
    }
    // Every deviation and expected failure must name a real case (in the
    // registry copy, all but the pinned number that it lacks).
    let mut absent = Vec::new();
    let deviations = strict_deviations();
    for case in deviations.keys() {
        if !seen.contains(case) {
            absent.push(format!("strict_deviations.tsv names no case: {case}"));
        }
    }
    for list in [XFAIL_STANDARD, XFAIL_OPTIONAL, XFAIL_FORMATS] {
        for (case, _) in list {
            if !all.iter().any(|t| t.name().ends_with(case)) {
                absent.push(format!("expected-failure list names no case: {case}"));
            }
        }
    }
    // The registry copy's own entries name cases of that copy only.
    for (case, _) in XFAIL_FORMATS_REGISTRY_COPY {
        assert_eq!(
            all.iter().any(|t| t.name().ends_with(case)),
            registry_copy,
            "{copy:?} copy of the suite: {case}"
        );
    }
    let allowed = if registry_copy {
        ABSENT_FROM_REGISTRY_COPY
    } else {
        0
    };
    assert_eq!(
        absent.len(),
        allowed,
        "{copy:?} copy of the suite:\n{}",
        absent.join("\n")
    );
    println!("JSON-Schema-Test-Suite: the {copy:?} copy");
    let conclusion = libtest_mimic::run(&args, all);
    for run in &runs {
        println!(
            "draft2020-12 {}: {}/{} passed",
            run.name,
            run.passed.load(Ordering::Relaxed),
            run.total.load(Ordering::Relaxed)
        );
    }
    conclusion.exit();
}
