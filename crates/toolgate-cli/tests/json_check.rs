//! Black-box tests of `toolgate json check`: output lines and exit codes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use cli_support::toolgate_reading;
use toolgate_testkit::text;

#[test]
fn accepted_input_prints_digest_and_canonical_form() {
    let out = toolgate_reading(
        &["json", "check", "--canonical", "-"],
        br#"{"b": 1.0, "a": [1E2]}"#,
    );
    assert_eq!(out.status.code(), Some(0));
    let digest = toolgate_json::Digest::of(br#"{"a":[100],"b":1}"#);
    assert_eq!(
        text(&out.stdout),
        format!("-: ok {digest} {{\"a\":[100],\"b\":1}}\n")
    );
}

#[test]
fn rejected_input_prints_code_position_and_pointer() {
    let out = toolgate_reading(
        &["json", "check", "-"],
        b"{\n \"a\": {\"x\": 1, \"\\u0078\": 2}}",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        "-: error duplicate_key 2:16 `/a`: duplicate member name\n"
    );
}

#[test]
fn files_are_checked_in_order_and_the_worst_result_decides() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.json");
    let bad = dir.join("bad.json");
    std::fs::write(&good, b"[1]").unwrap();
    std::fs::write(&bad, b"{\"amount\": 300").unwrap();
    let (g, b) = (good.to_str().unwrap(), bad.to_str().unwrap());
    let out = toolgate_reading(&["json", "check", g, b], b"");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with(&format!("{g}: ok sha256:")),
        "{stdout}"
    );
    assert_eq!(
        lines[1],
        format!("{b}: error truncated 1:15 ``: input ends early")
    );
    let missing = dir.join("missing.json");
    let out = toolgate_reading(&["json", "check", g, missing.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot read"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn limits_are_flags_with_ceilings() {
    let out = toolgate_reading(&["json", "check", "--max-depth", "2", "-"], b"[[[1]]]");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("error too_deep 1:3 `/0/0`"));
    let out = toolgate_reading(&["json", "check", "--max-bytes", "3", "-"], b"[1,2]");
    assert!(
        text(&out.stdout).contains("error too_large"),
        "{}",
        text(&out.stdout)
    );
    let out = toolgate_reading(&["json", "check", "--max-depth", "100000", "-"], b"1");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`--max-depth` must be between 1 and 1024"));
}

#[test]
fn usage_errors_exit_2_and_help_documents_exit_codes() {
    assert_eq!(
        toolgate_reading(&["json", "check"], b"").status.code(),
        Some(2)
    );
    assert_eq!(
        toolgate_reading(&["json", "nope"], b"").status.code(),
        Some(2)
    );
    let help = toolgate_reading(&["json", "check", "--help"], b"");
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("Exit codes:"));
}

#[test]
fn error_output_never_echoes_the_input() {
    let out = toolgate_reading(
        &["json", "check", "-"],
        br#"{"password": "hunter2", "password": "x"}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!text(&out.stdout).contains("hunter2"));
    assert!(
        !text(&out.stdout).contains("password"),
        "{}",
        text(&out.stdout)
    );
}
