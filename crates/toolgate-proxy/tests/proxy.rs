//! `toolgate proxy` between the official `openai` and `anthropic` Python
//! SDKs (unchanged but for the base URL) and a canned model API on
//! loopback (`tests/proxy/canned_upstream.py`): every scenario of
//! `tests/proxy/sdk_client.py` (calls allowed with canonical arguments,
//! withheld with feedback, an approval round trip, parallel calls in
//! streams of all three APIs, cut and silent streams, upstream faults,
//! forwarded and refused routes), then the audit chain.
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
use std::path::Path;
use std::process::{Command, Stdio};

use proxy_support::{python, start_proxy, tests_dir, Killed, TOKEN_SHA256};
use toolgate_testkit::run_toolgate as toolgate;
use toolgate_testkit::{copy_shop, text};

#[test]
fn the_official_sdks_through_the_proxy() {
    let Some(python) = python() else {
        toolgate_testkit::skip(
            "no Python with the openai and anthropic SDKs (TOOLGATE_PROXY_PYTHON or target/py/venv)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let log = dir.path().join("upstream.jsonl");
    std::fs::write(&log, "").unwrap();

    let mut upstream = Command::new(&python)
        .arg(tests_dir().join("canned_upstream.py"))
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
anthropic = "http://127.0.0.1:{upstream_port}/"
forward = ["GET /v1/models"]
upstream_timeout_seconds = 2
idle_timeout_seconds = 2
narrow_tools = true

[[proxy.token]]
sha256 = "{TOKEN_SHA256}"
user = "alice"
"#
    ));
    std::fs::write(&config, toml).unwrap();

    let (_proxy, port) = start_proxy(&config);

    let out = Command::new(&python)
        .arg(tests_dir().join("sdk_client.py"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&log)
        .arg(&config)
        .env("TOOLGATE_BIN", toolgate_testkit::toolgate_path())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        22,
        "{stdout}"
    );

    // Every decision was audited, and the chain holds.
    let verify = toolgate(&["audit", "verify", "--config", config.to_str().unwrap()]);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}{}",
        text(&verify.stdout),
        text(&verify.stderr)
    );
    // The caller's API keys never reached the store.
    let mut db = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("toolgate.db"))
        {
            db.extend(std::fs::read(path).unwrap());
        }
    }
    assert!(!db.is_empty());
    let db = String::from_utf8_lossy(&db);
    assert!(!db.contains("sk-upstream-key") && !db.contains("sk-ant-upstream-key"));
    assert!(!db.contains("proxy-demo-token"));
}

/// The shop's config without its own `[proxy]` table and tokens (the test
/// writes its own).
fn shop_config_without_proxy(config: &Path) -> String {
    let text = std::fs::read_to_string(config).unwrap();
    let start = text.find("[proxy]").unwrap();
    let end = start + text[start..].find("[authorization]").unwrap();
    format!("{}{}", &text[..start], &text[end..])
}

#[test]
fn a_proxy_table_without_a_user_or_upstream_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let config = dir.path().join("toolgate.toml");
    let base = shop_config_without_proxy(&config);
    for (table, says) in [
        ("[proxy]\nopenai = \"http://127.0.0.1:9\"\n", "no way of knowing the user"),
        ("[proxy]\nuser = \"alice\"\n", "no upstream"),
        ("[proxy]\nuser = \"alice\"\nuser_header = \"x-user\"\nopenai = \"http://127.0.0.1:9\"\n", "more than one way"),
        ("[proxy]\nuser = \"alice\"\nopenai = \"ftp://x\"\n", "base URL"),
        ("[proxy]\nuser = \"alice\"\nopenai = \"http://x\"\nforward = [\"POST /v1/messages\"]\n", "gated route"),
        ("[proxy]\nuser = \"alice\"\nopenai = \"http://x\"\nlisten_on = 1\n", "listen_on"),
    ] {
        std::fs::write(&config, format!("{base}\n{table}")).unwrap();
        let out = toolgate(&["proxy", "--config", config.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
        assert_eq!(out.status.code(), Some(2), "{table}");
        let err = text(&out.stderr);
        assert!(err.starts_with("toolgate: error: ") && err.contains(says), "{table}: {err}");
    }
}

/// Issue 28 (items 1, 2, 4, 6, 7, 8): through the official SDKs, what
/// reaches the application is built from the gate's decisions. The canned
/// upstream's `case:` attacks (`tests/proxy/attacks.py`) smuggle calls into
/// Responses terminal events, send item types off the pass list, forge the
/// `toolgate` member, send chunks the gate cannot read, answer with the
/// wrong framing and break streams that held calls; `sdk_output.py` checks
/// what each SDK shows and what the audit log says.
#[test]
fn issue_28_the_sdks_see_only_what_the_gate_decided() {
    let Some(python) = python() else {
        toolgate_testkit::skip(
            "no Python with the openai and anthropic SDKs (TOOLGATE_PROXY_PYTHON or target/py/venv)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let log = dir.path().join("upstream.jsonl");
    std::fs::write(&log, "").unwrap();
    let mut upstream = Command::new(&python)
        .arg(tests_dir().join("canned_upstream.py"))
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
upstream_timeout_seconds = 5
idle_timeout_seconds = 5

[[proxy.token]]
sha256 = "{TOKEN_SHA256}"
user = "alice"
"#
    ));
    std::fs::write(&config, toml).unwrap();
    let (_proxy, port) = start_proxy(&config);
    let out = Command::new(&python)
        .arg(tests_dir().join("sdk_output.py"))
        .arg(format!("http://127.0.0.1:{port}"))
        .arg(&log)
        .arg(&config)
        .env("TOOLGATE_BIN", toolgate_testkit::toolgate_path())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        9,
        "{stdout}"
    );
    let verify = toolgate(&["audit", "verify", "--config", config.to_str().unwrap()]);
    assert_eq!(verify.status.code(), Some(0), "{}", text(&verify.stderr));
}
