#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! `toolgate mcp --listen` as an OAuth 2.1 resource server (the MCP
//! specification's authorization section): a `401` names the protected
//! resource metadata (RFC 9728), the metadata names the authorization
//! server, and only tokens issued for this endpoint (RFC 8707) are taken.
//! The official Python and TypeScript SDK clients, given no token, find
//! their way through a small authorization server the test runs (metadata,
//! dynamic client registration, authorization code with PKCE, JWTs) and
//! list the tools.
//!
//! Needs the Python SDK (env `TOOLGATE_MCP_PYTHON`, else
//! `target/py/venv/bin/python` with mcp==2.3.0) and, for the TypeScript
//! client, `node` and `crates/toolgate-mcp/tests/mcp/ts/node_modules`.
//! Missing ones skip, unless `TOOLGATE_REQUIRE_EXTERNAL=1`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use toolgate_testkit::jwt::SigningKey;
use toolgate_testkit::oauth::AuthServer;

fn required() -> bool {
    std::env::var_os("TOOLGATE_REQUIRE_EXTERNAL").is_some_and(|v| v == "1")
}

fn skip(why: &str) {
    assert!(!required(), "TOOLGATE_REQUIRE_EXTERNAL=1: {why}");
    println!("SKIPPED mcp_oauth: {why}");
}

fn python() -> Result<PathBuf, String> {
    let python = match std::env::var_os("TOOLGATE_MCP_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py/venv/bin/python"),
    };
    let check =
        "import importlib.metadata as m, mcp.client.auth; assert m.version('mcp') == '2.3.0'";
    let ok = Command::new(&python)
        .args(["-c", check])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(python.clone())
        .ok_or_else(|| format!("no Python with mcp==2.3.0 at `{}`", python.display()))
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

struct Endpoint {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolgate mcp --listen 127.0.0.1:PORT` before the example's server,
/// with `[jwt]` trusting `auth` and naming the endpoint's URL as its
/// resource.
fn endpoint(python: &Path, auth: &AuthServer, port: u16) -> Endpoint {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(examples().join("mcp/toolgate.toml")).unwrap();
    let text = format!(
        "{text}\n[[mcp.upstream]]\nname = \"shop\"\ncommand = \"{}\"\nargs = [\"{}\"]\n\
         [jwt]\nissuer = \"{}\"\naudience = [\"https://other.example\"]\njwks_url = \"{}\"\n\
         mcp_resource = \"http://127.0.0.1:{port}/mcp\"\n",
        python.display(),
        examples().join("mcp/server.py").display(),
        auth.issuer(),
        auth.jwks_url()
    );
    let config = dir.path().join("toolgate.toml");
    std::fs::write(&config, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["mcp", "--config"])
        .arg(&config)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("the endpoint ended before it listened: {seen:?}");
        };
        if line.contains("serving on http://") {
            break;
        }
        seen.push(line);
    }
    std::thread::spawn(move || lines.for_each(drop));
    Endpoint {
        child,
        port,
        _dir: dir,
    }
}

/// One raw exchange: status, head (lower-case names), body.
fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(n, _)| *n == "host") {
        req.push_str(&format!("host: 127.0.0.1:{port}\r\n"));
    }
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

fn post_init(port: u16, token: Option<&str>) -> (u16, String, String) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    if let Some(a) = &auth {
        headers.push(("authorization", a));
    }
    http(port, "POST", "/mcp", &headers, INIT)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The resource server's side, raw: the challenge, the metadata, and the
/// audience check (a token the same issuer made for another resource is
/// refused here, even though `[jwt] audience` lists that resource).
#[test]
fn the_endpoint_names_its_metadata_and_takes_only_its_own_tokens() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let auth = AuthServer::start(SigningKey::es256("as-1").unwrap(), 0, "alice").unwrap();
    let e = endpoint(&python, &auth, 41100);
    let port = e.port;
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    let (status, head, _) = post_init(port, None);
    assert_eq!(status, 401);
    assert!(
        head.contains(&format!(
            "www-authenticate: bearer realm=\"toolgate-mcp\", resource_metadata=\"{metadata}\""
        )),
        "{head}"
    );
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, head, body) = http(port, "GET", path, &[], "");
        assert_eq!(status, 200, "{path}");
        assert!(head.contains("content-type: application/json"), "{head}");
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["resource"], format!("http://127.0.0.1:{port}/mcp"));
        assert_eq!(
            doc["authorization_servers"],
            serde_json::json!([auth.issuer()])
        );
        assert_eq!(
            doc["bearer_methods_supported"],
            serde_json::json!(["header"])
        );
    }
    // Another Host is refused there too (DNS rebinding).
    let (status, _, _) = http(
        port,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[("host", "evil.example")],
        "",
    );
    assert!(status == 403 || status == 400, "{status}");

    let claims = |aud: &str| {
        format!(
            r#"{{"iss":"{}","sub":"alice","aud":"{aud}","exp":{}}}"#,
            auth.issuer(),
            now() + 300
        )
    };
    let mine = auth.sign(&claims(&format!("http://127.0.0.1:{port}/mcp")));
    let (status, _, body) = post_init(port, Some(&mine));
    assert_eq!(status, 200, "{body}");
    for other in ["https://other.example", "http://127.0.0.1:1/mcp"] {
        let (status, head, _) = post_init(port, Some(&auth.sign(&claims(other))));
        assert_eq!(status, 401, "{other}");
        assert!(
            head.contains("error=\"invalid_token\", resource_metadata="),
            "{head}"
        );
    }
}

/// The official Python SDK's OAuth client, given no token.
#[test]
fn the_python_sdk_authorizes_itself_and_lists_the_tools() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let auth = AuthServer::start(SigningKey::rs256("as-py").unwrap(), 0, "alice").unwrap();
    let e = endpoint(&python, &auth, 41101);
    let url = format!("http://127.0.0.1:{}/mcp", e.port);
    let out = Command::new(&python)
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolgate-mcp/tests/mcp/oauth_client.py"),
        )
        .arg(&url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(r#""resource": "{url}""#)),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#""step": "tools""#) && stdout.contains(r#""weather""#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"{"step": "done"}"#), "{stdout}");
    assert!(auth.refusals().is_empty(), "{:?}", auth.refusals());
}

/// The official TypeScript SDK's OAuth client, given no token.
#[test]
fn the_typescript_sdk_authorizes_itself_and_lists_the_tools() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => return skip(&why),
    };
    let ts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolgate-mcp/tests/mcp/ts");
    if !ts
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .is_file()
    {
        return skip("no TypeScript SDK (cd crates/toolgate-mcp/tests/mcp/ts && npm ci)");
    }
    let node =
        std::env::var_os("TOOLGATE_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let auth = AuthServer::start(SigningKey::es256("as-ts").unwrap(), 0, "alice").unwrap();
    let e = endpoint(&python, &auth, 41102);
    let url = format!("http://127.0.0.1:{}/mcp", e.port);
    let out = Command::new(&node)
        .arg(ts.join("oauth_client.mjs"))
        .arg(&url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(r#""resource":"{url}""#)),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#""step":"tools""#) && stdout.contains(r#""weather""#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"{"step":"done"}"#), "{stdout}");
    assert!(auth.refusals().is_empty(), "{:?}", auth.refusals());
}
