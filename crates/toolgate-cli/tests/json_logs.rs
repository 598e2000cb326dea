//! With `[telemetry] log_format = "json"`, every line `toolgate proxy`
//! writes to standard error is one JSON object of the log schema
//! (`ts_ms`, `level`, `event`, `source`, and `message` for a person): the
//! listening line, a warning, the decisions, the stop.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};

use serde_json::Value;

#[test]
fn every_stderr_line_is_json_in_json_mode() {
    let dir = tempfile::tempdir().unwrap();
    // An upstream that is not there: the request fails, the proxy goes on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let config = dir.path().join("toolgate.toml");
    std::fs::write(
        &config,
        format!(
            "[authorization]\nmode = \"none\"\n\n[[tool]]\nname = \"get\"\nrisk = \"read\"\nschema = {{ type = \"object\" }}\n\n\
             [proxy]\nopenai = \"{upstream}\"\nuser = \"alice\"\n\n\
             [telemetry]\nlog_format = \"json\"\ndecision_log = \"info\"\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(toolgate_testkit::toolgate_path())
        .args(["proxy", "--config"])
        .arg(&config)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let listening: Value =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("not JSON: {first:?}: {e}"));
    assert_eq!(listening["event"], "listening", "{first}");
    let message = listening["message"].as_str().unwrap();
    let addr = message.rsplit("http://").next().unwrap().trim().to_owned();
    // One request (its upstream unreachable), then the stop.
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    child.wait().unwrap();
    let lines: Vec<&str> = std::iter::once(first.trim_end())
        .chain(rest.lines())
        .collect();
    assert!(lines.len() >= 2, "{lines:?}");
    for line in &lines {
        let v: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"));
        assert!(v["ts_ms"].as_u64().is_some(), "{line}");
        assert!(
            ["debug", "info", "warn", "error"].contains(&v["level"].as_str().unwrap()),
            "{line}"
        );
        assert!(v["event"].as_str().is_some_and(|e| !e.is_empty()), "{line}");
        assert!(
            v["source"].as_str().is_some_and(|e| !e.is_empty()),
            "{line}"
        );
    }
    assert!(
        lines.iter().any(|l| l.contains(r#""event":"stopped""#)),
        "{lines:?}"
    );
}
