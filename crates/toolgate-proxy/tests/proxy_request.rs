//! `toolgate proxy`'s request side (issue 28, items 5, 9 and 10) between
//! the official `openai` and `anthropic` Python SDKs and a canned model API
//! on loopback (`tests/proxy/request_upstream.py`): every scenario of
//! `tests/proxy/sdk_request.py` — tool results of every shape sanitized and
//! unknown parts refused; request ids and rate-limit headers reaching the
//! SDKs; stored responses refused; token counts and embeddings forwarded
//! by pattern; a conversation continued past a withheld call; a legacy
//! `function_call` denied with feedback; offered tools checked against the
//! registry — then the audit chain.
//!
//! Needs a Python with `openai` and `anthropic`: `TOOLGATE_PROXY_PYTHON`,
//! else `target/py/venv/bin/python` (what `.ci/run` installs).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod proxy_support;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use proxy_support::{python, start_proxy, tests_dir, Killed, TOKEN_SHA256};
use toolgate_testkit::run_toolgate as toolgate;
use toolgate_testkit::{copy_shop, text};

/// The shop's config without its own `[proxy]` table and tokens.
fn shop_config_without_proxy(config: &Path) -> String {
    let text = std::fs::read_to_string(config).unwrap();
    let start = text.find("[proxy]").unwrap();
    let end = start + text[start..].find("[authorization]").unwrap();
    format!("{}{}", &text[..start], &text[end..])
}

/// Runs `sdk_request.py` against a proxy with `extra` in its `[proxy]`
/// table; the scenarios' output.
fn run_scenarios(
    python: &Path,
    extra: &str,
    scenarios: &str,
) -> (String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let log = dir.path().join("upstream.jsonl");
    std::fs::write(&log, "").unwrap();
    let mut upstream = Command::new(python)
        .arg(tests_dir().join("request_upstream.py"))
        .arg(&log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(upstream.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _upstream = Killed(upstream);
    let upstream_port: u16 = line.trim().strip_prefix("port ").unwrap().parse().unwrap();

    let config = dir.path().join("toolgate.toml");
    let mut toml = shop_config_without_proxy(&config);
    toml.push_str(&format!(
        r#"
[proxy]
openai = "http://127.0.0.1:{upstream_port}"
anthropic = "http://127.0.0.1:{upstream_port}"
forward = ["GET /v1/models", "GET /v1/models/*", "POST /v1/messages/count_tokens", "POST /v1/responses/input_tokens", "POST /v1/embeddings"]
upstream_timeout_seconds = 5
idle_timeout_seconds = 5
{extra}

[[proxy.token]]
sha256 = "{TOKEN_SHA256}"
user = "alice"
"#
    ));
    std::fs::write(&config, toml).unwrap();

    let (_proxy, port) = start_proxy(&config);

    let out = Command::new(python)
        .arg(tests_dir().join("sdk_request.py"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&log)
        .arg(&config)
        .env("TOOLGATE_BIN", toolgate_testkit::toolgate_path())
        .env("SCENARIOS", scenarios)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    (stdout, config, dir)
}

fn audit_chain_holds(config: &Path) {
    let verify = toolgate(&["audit", "verify", "--config", config.to_str().unwrap()]);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}{}",
        text(&verify.stdout),
        text(&verify.stderr)
    );
}

#[test]
fn issue_28_the_request_side_through_the_official_sdks() {
    let Some(python) = python() else {
        toolgate_testkit::skip(
            "no Python with the openai and anthropic SDKs (TOOLGATE_PROXY_PYTHON or target/py/venv)",
        );
        return;
    };
    let (stdout, config, _dir) = run_scenarios(&python, "", "default");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        12,
        "{stdout}"
    );
    audit_chain_holds(&config);
}

#[test]
fn issue_28_offered_tools_refused_or_replaced_and_deepseek_normalized() {
    let Some(python) = python() else {
        toolgate_testkit::skip(
            "no Python with the openai and anthropic SDKs (TOOLGATE_PROXY_PYTHON or target/py/venv)",
        );
        return;
    };
    let (stdout, config, _dir) = run_scenarios(
        &python,
        "offered_tools = \"refuse\"\ndeepseek = \"normalize\"",
        "strict",
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        2,
        "{stdout}"
    );
    audit_chain_holds(&config);
    let (stdout, config, _dir) = run_scenarios(&python, "offered_tools = \"replace\"", "replace");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        1,
        "{stdout}"
    );
    audit_chain_holds(&config);
}

#[test]
fn issue_28_a_forward_entry_for_stored_output_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let config = dir.path().join("toolgate.toml");
    let base = shop_config_without_proxy(&config);
    for (route, says) in [
        ("GET /v1/responses/*", "stored output"),
        ("GET /v1/chat/completions/*", "stored output"),
        ("GET /v1/messages/batches/*/results", "stored output"),
        ("POST /v1/*", "gated route"),
        ("GET /v1/models/**", "`*` stands for exactly one segment"),
        ("offered_tools", "offered_tools"),
    ] {
        let table = if route == "offered_tools" {
            "[proxy]\nuser = \"alice\"\nopenai = \"http://127.0.0.1:9\"\noffered_tools = \"ignore\"\n".to_owned()
        } else {
            format!("[proxy]\nuser = \"alice\"\nopenai = \"http://127.0.0.1:9\"\nforward = [\"GET /v1/models\", \"{route}\"]\n")
        };
        std::fs::write(&config, format!("{base}\n{table}")).unwrap();
        let out = toolgate(&[
            "proxy",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ]);
        assert_eq!(out.status.code(), Some(2), "{route}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with("toolgate: error: ") && err.contains(says),
            "{route}: {err}"
        );
    }
}
