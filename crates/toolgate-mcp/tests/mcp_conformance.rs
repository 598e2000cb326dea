//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `tests/mcp/conformance/package.json`) against our own scenario
//! server (`tests/mcp/conformance/server.py`, the official Python SDK's
//! FastMCP over streamable HTTP): once directly, once through `toolgate mcp
//! --listen` in front of it. Every scenario the server passes directly must
//! pass through the proxy.
//!
//! The suite's client sends no credentials, and `--listen` takes only
//! clients with a bearer token: the test puts a small forwarder in front of
//! the proxy that adds the token (and `Connection: close`, so each request
//! is one connection) and otherwise passes the bytes as they are, the
//! `Host` header too (with the forwarder's port replaced by the proxy's, so
//! a local name stays local and a foreign one stays foreign).
//!
//! Needs Node 22 from `(cd crates/toolgate-mcp/tests/mcp/conformance && npm
//! ci)` and a Python with `mcp==2.3.0` (`TOOLGATE_MCP_PYTHON`, else
//! `target/py/venv/bin/python`). Without them the test says `SKIPPED` and
//! passes, unless `TOOLGATE_REQUIRE_EXTERNAL=1`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod mcp_support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use mcp_support::{free_port, sdk_python, wait_for_line};

const TOKEN: &str = "conformance-token";

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/conformance")
}

/// Node 22 and the suite, or why not.
fn suite() -> Result<PathBuf, String> {
    let dir = conformance_dir();
    let node = dir.join("node_modules/.bin/node");
    let out = Command::new(&node).arg("--version").output();
    match out {
        Ok(o) if String::from_utf8_lossy(&o.stdout).starts_with("v22.") => Ok(dir.join("run.sh")),
        _ => Err(format!(
            "no conformance suite with Node 22 at {} (cd {} && npm ci)",
            node.display(),
            dir.display()
        )),
    }
}

/// A child killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the suite (every scenario, the pending ones too) against `url`:
/// each scenario's name and whether it passed.
fn run_suite(run_sh: &Path, url: &str) -> BTreeMap<String, bool> {
    let out = Command::new("bash")
        .arg(run_sh)
        .arg(url)
        .arg("all")
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let scenarios: BTreeMap<String, bool> = stdout
        .lines()
        .filter_map(|l| {
            let (verdict, rest) = l.split_once(' ')?;
            let name = rest.split_whitespace().next()?.to_owned();
            match verdict {
                "PASS" => Some((name, true)),
                "FAIL" => Some((name, false)),
                _ => None,
            }
        })
        .collect();
    assert!(
        !scenarios.is_empty(),
        "the suite ran nothing against {url}:\n{stdout}"
    );
    eprintln!("conformance against {url}:\n{stdout}");
    scenarios
}

/// Forwards each connection to `target`, adding the bearer token and
/// `Connection: close` to the request head and giving `Host` the target's
/// port when it named the forwarder's.
fn forwarder(listener: TcpListener, target: SocketAddr) {
    let own = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            std::thread::spawn(move || forward_one(client, target, own));
        }
    });
}

fn forward_one(mut client: TcpStream, target: SocketAddr, own: u16) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    let body_start = loop {
        let Ok(n) = client.read(&mut buf) else { return };
        if n == 0 {
            return;
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if head.len() > 64 * 1024 {
            return;
        }
    };
    let rest = head.split_off(body_start);
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n").filter(|l| !l.is_empty());
    let mut out = format!("{}\r\n", lines.next().unwrap_or_default());
    for line in lines {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("connection:") || lower.starts_with("authorization:") {
            continue;
        }
        if lower.starts_with("host:") {
            let value = line[5..].trim();
            let local = [format!("127.0.0.1:{own}"), format!("localhost:{own}")];
            if local.iter().any(|l| l.eq_ignore_ascii_case(value)) {
                let name = value.rsplit_once(':').map_or(value, |(n, _)| n);
                out.push_str(&format!("Host: {name}:{}\r\n", target.port()));
                continue;
            }
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str(&format!(
        "Authorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    ));
    let Ok(mut upstream) = TcpStream::connect(target) else {
        return;
    };
    if upstream.write_all(out.as_bytes()).is_err() || upstream.write_all(&rest).is_err() {
        return;
    }
    let (Ok(mut up_read), Ok(mut client_write)) = (upstream.try_clone(), client.try_clone()) else {
        return;
    };
    let back = std::thread::spawn(move || {
        let _ = std::io::copy(&mut up_read, &mut client_write);
        let _ = client_write.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut client, &mut upstream);
    let _ = upstream.shutdown(Shutdown::Write);
    let _ = back.join();
}

/// The proxy's config: the store beside it, the token, the forwarder's
/// local origin (what the suite sends as `Origin`), the server as the one
/// upstream, and every tool the scenarios call registered with the
/// schema the scenario lists.
fn proxy_config(dir: &Path, upstream: &str, front_port: u16) -> PathBuf {
    let no_args = r#"{ type = "object", additionalProperties = false }"#;
    let mut tools = String::new();
    for name in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_error_handling",
        "test_tool_with_progress",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "test_reconnection",
    ] {
        tools.push_str(&format!(
            "[[tool]]\nname = \"{name}\"\nrisk = \"read\"\nschema = {no_args}\n\n"
        ));
    }
    for (name, arg) in [("test_sampling", "prompt"), ("test_elicitation", "message")] {
        tools.push_str(&format!(
            "[[tool]]\nname = \"{name}\"\nrisk = \"read\"\nschema = {{ type = \"object\", properties = {{ {arg} = {{ type = \"string\" }} }}, required = [\"{arg}\"], additionalProperties = false }}\n\n"
        ));
    }
    tools.push_str(
        r##"[[tool]]
name = "json_schema_2020_12_tool"
description = "Tool with JSON Schema 2020-12 features"
risk = "read"
schema = { "$schema" = "https://json-schema.org/draft/2020-12/schema", type = "object", "$defs" = { address = { type = "object", properties = { street = { type = "string" }, city = { type = "string" } } } }, properties = { name = { type = "string" }, address = { "$ref" = "#/$defs/address" } }, additionalProperties = false }
"##,
    );
    // The SHA-256 of TOKEN (`printf %s conformance-token | sha256sum`).
    let sha = "b77fd4981604b694cac2ed17303e9881dcbc2af00ddd4065ac989366caeb5336";
    let text = format!(
        r#"[store]
url = "sqlite://toolgate.db"

[mcp]
call_timeout_seconds = 30
allowed_origins = ["http://127.0.0.1:{front_port}", "http://localhost:{front_port}"]

[[mcp.token]]
sha256 = "{sha}"
user = "conformance"

[[mcp.upstream]]
name = "conformance"
url = "{upstream}"

[authorization]
mode = "none"

{tools}"#
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_proxy_passes_every_scenario_the_server_passes() {
    let (run_sh, python) = match (suite(), sdk_python()) {
        (Ok(s), Ok(p)) => (s, p),
        (Err(why), _) | (_, Err(why)) => return toolgate_testkit::skip(&why),
    };
    let dir = tempfile::tempdir().unwrap();

    let server_port = free_port();
    let mut server = Command::new(&python)
        .arg(conformance_dir().join("server.py"))
        .arg(server_port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Uvicorn's line once its socket listens.
    wait_for_line(
        &mut server,
        &format!("running on http://127.0.0.1:{server_port}"),
        "the conformance server",
    );
    let _server = Running(server);
    let upstream = format!("http://127.0.0.1:{server_port}/mcp");
    let direct = run_suite(&run_sh, &upstream);

    // The forwarder's address is the one the suite sees: its local origin
    // is the one the proxy allows (any other Origin is refused).
    let front = TcpListener::bind("127.0.0.1:0").unwrap();
    let front_port = front.local_addr().unwrap().port();
    let config = proxy_config(dir.path(), &upstream, front_port);
    let proxy_port = free_port();
    let mut proxy = Command::new(toolgate_testkit::toolgate_path())
        .current_dir(dir.path())
        .arg("mcp")
        .arg("--config")
        .arg(&config)
        .arg("--listen")
        .arg(format!("127.0.0.1:{proxy_port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_line(
        &mut proxy,
        &format!("serving on http://127.0.0.1:{proxy_port}/mcp"),
        "toolgate mcp --listen",
    );
    let _proxy = Running(proxy);
    forwarder(front, SocketAddr::from(([127, 0, 0, 1], proxy_port)));
    let proxied = run_suite(&run_sh, &format!("http://127.0.0.1:{front_port}/mcp"));

    let passed = |m: &BTreeMap<String, bool>| m.values().filter(|p| **p).count();
    eprintln!(
        "directly: {} of {} passed; through toolgate mcp --listen: {} of {} passed",
        passed(&direct),
        direct.len(),
        passed(&proxied),
        proxied.len()
    );
    let lost: Vec<&String> = direct
        .iter()
        .filter(|(name, ok)| **ok && proxied.get(*name) != Some(&true))
        .map(|(name, _)| name)
        .collect();
    assert!(
        lost.is_empty(),
        "scenarios the server passes directly but not through the proxy: {lost:?}"
    );
}
