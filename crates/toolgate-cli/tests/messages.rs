//! The exact text of every class of error a user can cause: one line,
//! `toolgate: error: …`, the cause said once, with where it is (the file,
//! line and column, the flag as typed, the JSON Pointer). Pinned here so
//! that repetition cannot come back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use std::path::Path;
use std::process::Output;

use cli_support::toolgate_cli;

/// A copy of the shop example in a fresh folder (its store stays there).
fn shop_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    dir
}

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    toolgate_cli().current_dir(dir).args(args).run()
}

/// `toolgate check --config CONFIG --context CONTEXT` of the shop's search
/// response, in `dir`.
fn check(dir: &Path, config: &str, context: &str) -> Output {
    toolgate(
        dir,
        &["check", "--config", config, "--context", context, SEARCH],
    )
}

/// Exit code 2 and exactly `line` on standard error.
fn says(out: &Output, line: &str) {
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr, format!("toolgate: error: {line}\n"));
}

/// Rewrites one line of the shop's config.
fn config_with(dir: &Path, name: &str, from: &str, to: &str) {
    let text = std::fs::read_to_string(dir.join("toolgate.toml")).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(dir.join(name), text.replacen(from, to, 1)).unwrap();
}

const SEARCH: &str = "responses/openai-search.json";

#[test]
fn a_missing_config_names_the_file_and_the_cause_once() {
    let dir = shop_copy();
    let out = check(dir.path(), "nope.toml", "context.json");
    says(
        &out,
        "nope.toml: cannot read the config: No such file or directory (os error 2)",
    );
}

#[test]
fn a_config_type_error_is_said_once_at_the_value() {
    let dir = shop_copy();
    config_with(
        dir.path(),
        "t.toml",
        "max_depth = 8",
        "max_depth = \"eight\"",
    );
    let out = check(dir.path(), "t.toml", "context.json");
    says(
        &out,
        "t.toml:9:13: `max_depth`: expected a non-negative integer, found string \"eight\"",
    );
}

#[test]
fn a_cedar_syntax_error_is_said_once() {
    let dir = shop_copy();
    std::fs::write(dir.path().join("bad.cedar"), "permit(principal, action").unwrap();
    config_with(
        dir.path(),
        "t.toml",
        "policies = \"policies.cedar\"",
        "policies = \"bad.cedar\"",
    );
    let out = check(dir.path(), "t.toml", "context.json");
    says(
        &out,
        "cannot load the authorization policies: ./bad.cedar:1:25: invalid policy: unexpected end of input",
    );
    let out = toolgate(dir.path(), &["serve", "--config", "t.toml"]);
    says(
        &out,
        "cannot start the service: ./bad.cedar:1:25: invalid policy: unexpected end of input",
    );
}

#[test]
fn flag_files_are_named_by_their_flag() {
    let dir = shop_copy();
    let out = check(dir.path(), "toolgate.toml", "nope.json");
    says(
        &out,
        "cannot read --context `nope.json`: No such file or directory (os error 2)",
    );
    std::fs::write(dir.path().join("cut.json"), "{\"user\":").unwrap();
    let out = check(dir.path(), "toolgate.toml", "cut.json");
    says(
        &out,
        "--context `cut.json` is not strict JSON: truncated at 1:9 (`/user`): input ends early",
    );
    let out = toolgate(dir.path(), &["validate", "--schema", "nope.json", "x.json"]);
    says(
        &out,
        "cannot read --schema `nope.json`: No such file or directory (os error 2)",
    );
}

#[test]
fn a_limit_flag_is_named_as_typed() {
    let dir = shop_copy();
    let out = toolgate(dir.path(), &["json", "check", "--max-depth", "0", "x.json"]);
    says(&out, "`--max-depth` must be between 1 and 1024, got 0");
    let out = toolgate(
        dir.path(),
        &[
            "json",
            "check",
            "--max-string-bytes",
            "9999999999999",
            "x.json",
        ],
    );
    says(
        &out,
        "`--max-string-bytes` must be between 1 and 1073741824, got 9999999999999",
    );
}

#[test]
fn usage_errors_have_the_same_prefix() {
    let dir = shop_copy();
    let out = toolgate(dir.path(), &["check", "--bogus"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.starts_with("toolgate: error: unexpected argument '--bogus' found\n"),
        "{stderr}"
    );
    let out = toolgate(
        dir.path(),
        &["approvals", "show", "4242", "--config", "toolgate.toml"],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr, "toolgate: error: no approval `4242`\n");
}

/// A PostgreSQL address where nothing listens: a port bound and closed.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn an_unreachable_database_says_connection_refused_once() {
    let dir = shop_copy();
    let url = format!("postgres://postgres@127.0.0.1:{}/x", closed_port());
    config_with(
        dir.path(),
        "pg.toml",
        "url = \"sqlite://toolgate.db\"",
        &format!("url = \"{url}\""),
    );
    let cause = "store_unavailable: connecting to the database: error connecting to server: Connection refused (os error 111)";
    let out = toolgate(dir.path(), &["migrate", "--config", "pg.toml"]);
    // `toolgate migrate` is not told to run `toolgate migrate`.
    says(&out, &format!("cannot open the store: {cause}"));
    let out = toolgate(dir.path(), &["serve", "--config", "pg.toml"]);
    says(
        &out,
        &format!("cannot start the service: cannot open the store: {cause}"),
    );
    let out = check(dir.path(), "pg.toml", "context.json");
    says(
        &out,
        &format!(
            "the PostgreSQL store cannot be reached or is not prepared (`toolgate migrate` prepares it): cannot open the store: {cause}"
        ),
    );
}

#[test]
fn check_without_a_context_says_who_it_decides_as() {
    let dir = shop_copy();
    let out = toolgate(
        dir.path(),
        &["check", "--config", "toolgate.toml", "--no-store", SEARCH],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "toolgate: warning: no --context: deciding as the anonymous user \"\" in session \"\" at turn 1\n"
    );
}

#[test]
fn migrate_says_whether_it_created_migrated_or_found_the_schema_current() {
    let dir = shop_copy();
    let url = format!("sqlite://{}/m.db", dir.path().display());
    let run = |args: &[&str]| {
        let out = toolgate(dir.path(), args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let first = run(&["migrate", "--store", &url]);
    assert!(
        first.starts_with("store schema created: SQLite version "),
        "{first}"
    );
    let second = run(&["migrate", "--store", &url]);
    assert!(
        second.starts_with("store schema is current: SQLite version "),
        "{second}"
    );
}
