//! The corpora: `scripts/fetch-corpora.sh` lays out exactly what CI's
//! `../shared/corpora` holds, and the project's own cases in `corpora/`
//! are the ones the tests read.

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

/// Packs `dir` as the download names it: `NAME-COMMIT/…` in a tar.gz.
fn pack(from: &Path, name: &str, commit: &str, into: &Path) {
    let stage = into.join("stage");
    let top = stage.join(format!("{name}-{commit}"));
    std::fs::create_dir_all(&top).unwrap();
    let status = Command::new("cp")
        .arg("-R")
        .arg(format!("{}/.", from.display()))
        .arg(&top)
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("tar")
        .arg("-czf")
        .arg(into.join(format!("{name}-{commit}.tar.gz")))
        .arg("-C")
        .arg(&stage)
        .arg(format!("{name}-{commit}"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::remove_dir_all(&stage).unwrap();
}

fn pinned(name: &str) -> String {
    let script = std::fs::read_to_string(root().join("scripts/fetch-corpora.sh")).unwrap();
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap()
        .to_owned()
}

#[test]
fn the_fetch_script_lays_out_what_the_tests_read() {
    let c = corpora();
    let work = tempfile::tempdir().unwrap();
    let tarballs = work.path().join("tarballs");
    std::fs::create_dir_all(&tarballs).unwrap();
    // The upstream archives, rebuilt from the corpora in use (which are
    // byte-exact copies of upstream at the pinned commits).
    pack(
        &c.join("JSONTestSuite"),
        "JSONTestSuite",
        &pinned("JSON_TEST_SUITE_COMMIT"),
        &tarballs,
    );
    pack(
        &c.join("JSON-Schema-Test-Suite"),
        "JSON-Schema-Test-Suite",
        &pinned("SCHEMA_TEST_SUITE_COMMIT"),
        &tarballs,
    );
    let dest = work.path().join("corpora");
    let out = Command::new("bash")
        .arg(root().join("scripts/fetch-corpora.sh"))
        .arg(&dest)
        .env("TOOLGATE_CORPORA_TARBALLS", &tarballs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for part in ["JSONTestSuite", "JSON-Schema-Test-Suite", "extra"] {
        same_trees(&c.join(part), &dest.join(part));
    }
    // A second run refuses to mix into the folder it filled.
    let again = Command::new("bash")
        .arg(root().join("scripts/fetch-corpora.sh"))
        .arg(&dest)
        .env("TOOLGATE_CORPORA_TARBALLS", &tarballs)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
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
    // Set, with one: that one, not ../shared/perf.
    std::fs::create_dir_all(dir.path().join("perf/schemas")).unwrap();
    let found = toolgate_testkit::perf_dir_with("/", Some(dir.path().as_os_str())).unwrap();
    assert_eq!(found, dir.path().join("perf"));
}
