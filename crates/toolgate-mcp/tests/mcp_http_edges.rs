//! The edges of `toolgate mcp --listen`: requests refused before any
//! decision (tokens, `Origin`, `Host`, duplicate keys, mirrored headers,
//! sessions, slow clients) and their aggregated audit records, and calls
//! the client cancels or abandons (withdrawn, never run); through raw HTTP
//! where an attacker writes the requests and the official Python SDK where
//! a user does.
//!
//! Needs a Python with `mcp==2.3.0` (see `mcp_http.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod mcp_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_support::endpoint::{shop, stdio_upstream, Endpoint, ALICE, BOB};
use mcp_support::{sdk_python, text_at, Steps};
use toolgate_json::Value;
use toolgate_testkit::run_toolgate as toolgate;

#[test]
fn attacks_on_the_http_endpoint_are_refused() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = shop("", &stdio_upstream(&python));
    let e = Endpoint::start(&dir);
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

    // No token, a wrong token: 401 with a Bearer challenge.
    let a = e.http("POST", &[("content-type", "application/json")], list);
    assert_eq!(a.status, 401, "{a:?}");
    assert!(a.header("www-authenticate").unwrap().starts_with("Bearer"));
    let a = e.http(
        "POST",
        &[
            ("content-type", "application/json"),
            ("authorization", "Bearer not-a-token"),
        ],
        list,
    );
    assert_eq!(a.status, 401, "{a:?}");
    assert!(a
        .header("www-authenticate")
        .unwrap()
        .contains("invalid_token"));
    // A foreign Origin (a browser page), a foreign Host (DNS rebinding).
    let a = e.post(&[("origin", "http://evil.example")], list);
    assert_eq!(a.status, 403, "{a:?}");
    let a = e.post(&[("host", "evil.example")], list);
    assert_eq!(a.status, 403, "{a:?}");
    // No session and no 2026-07-28 envelope; an unknown session.
    assert_eq!(e.post(&[], list).status, 400);
    let a = e.post(&[("mcp-session-id", "0123")], list);
    assert_eq!(a.status, 404, "{a:?}");

    let sid = e.initialize(ALICE);
    let in_session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // A duplicate key, plain or spelled with an escape: refused, never
    // forwarded.
    for body in [
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"a":2,"b":3}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"\u0061":2,"b":3}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","name":"refund","arguments":{"a":1,"b":3}}}"#,
    ] {
        let a = e.post(&in_session, body);
        assert_eq!(a.status, 400, "{a:?}");
        let v = a.json();
        assert_eq!(
            v.pointer("/error/code").unwrap().to_canonical_string(),
            "-32700"
        );
        assert!(
            text_at(&v, "/error/message").contains("duplicate_key"),
            "{v:?}"
        );
    }
    // Another user's token cannot use alice's session.
    let bob = format!("Bearer {BOB}");
    let a = e.http(
        "POST",
        &[
            ("authorization", &bob),
            ("content-type", "application/json"),
            ("mcp-session-id", &sid),
        ],
        list,
    );
    assert_eq!(a.status, 404, "{a:?}");
    // The session's own calls are gated.
    let a = e.post(
        &in_session,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add","arguments":{"b":3,"a":1}}}"#,
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(text_at(&a.json(), "/result/content/0/text"), "4");
    let a = e.post(
        &in_session,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":"3"}}}"#,
    );
    assert_eq!(
        a.json().pointer("/result/isError"),
        Some(&Value::Bool(true))
    );

    // 2026-07-28: the headers must mirror the body.
    let call = |name: &str, version: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"m1","method":"tools/call","params":{{"name":"{name}","arguments":{{"a":10,"b":20}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{version}","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let modern = |method: &str, name: &str, version: &str, body: &str| {
        e.post(
            &[
                ("mcp-protocol-version", version),
                ("mcp-method", method),
                ("mcp-name", name),
            ],
            body,
        )
    };
    for (method, name, version) in [
        ("tools/call", "weather", "2026-07-28"),
        ("tools/list", "add", "2026-07-28"),
        ("tools/call", "add", "2025-11-25"),
    ] {
        let a = modern(method, name, version, &call("add", "2026-07-28"));
        assert_eq!(a.status, 400, "{a:?}");
        assert_eq!(
            a.json()
                .pointer("/error/code")
                .unwrap()
                .to_canonical_string(),
            "-32020",
            "{a:?}"
        );
    }
    // A stateless list (it also starts the user's upstream connection,
    // whose server takes a moment to start).
    let a = e.post(
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(text_at(&a.json(), "/result/tools/0/name"), "add");
    // A name sent base64-encoded is compared decoded.
    let a = modern(
        "tools/call",
        "=?base64?YWRk?=",
        "2026-07-28",
        &call("add", "2026-07-28"),
    );
    assert_eq!(a.status, 200, "{a:?}");
    let v = a.json();
    assert_eq!(text_at(&v, "/id"), "m1");
    assert_eq!(text_at(&v, "/result/content/0/text"), "30");
    assert_eq!(text_at(&v, "/result/resultType"), "complete");
    // A duplicate key in a stateless request: refused too.
    let a = modern(
        "tools/call",
        "add",
        "2026-07-28",
        &call("add", "2026-07-28").replace(r#""a":10"#, r#""a":10,"a":11"#),
    );
    assert_eq!(a.status, 400, "{a:?}");
    // A version the endpoint does not serve.
    let a = modern(
        "tools/call",
        "add",
        "2099-01-01",
        &call("add", "2099-01-01"),
    );
    assert_eq!(a.status, 400, "{a:?}");
    assert_eq!(
        a.json()
            .pointer("/error/code")
            .unwrap()
            .to_canonical_string(),
        "-32022"
    );

    // The upstream hangs: the call timeout answers (an error result,
    // audited). It dies mid-call: an error result, and the session ends.
    let a = e.post(
        &in_session,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"hang","arguments":{"seconds":30}}}"#,
    );
    assert_eq!(
        text_at(&a.json(), "/result/content/0/text"),
        "refused by toolgate: upstream_timeout"
    );
    let a = e.post(
        &in_session,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#,
    );
    assert_eq!(
        text_at(&a.json(), "/result/content/0/text"),
        "refused by toolgate: upstream_closed",
        "{a:?}"
    );
    e.wait_for_stderr(
        "the upstream closed: the session ends",
        Duration::from_secs(10),
    );
    let a = e.post(&in_session, list);
    assert_eq!(a.status, 404, "{a:?}");
    // DELETE ends a session.
    let sid = e.initialize(ALICE);
    let auth = format!("Bearer {ALICE}");
    let d = e.http(
        "DELETE",
        &[("authorization", &auth), ("mcp-session-id", &sid)],
        "",
    );
    assert_eq!(d.status, 204, "{d:?}");
    assert_eq!(e.post(&[("mcp-session-id", &sid)], list).status, 404);

    // Only the checked calls reached the server.
    assert_eq!(
        dir.seen_canonical(),
        [
            r#"{"arguments":{"a":1,"b":3},"tool":"add"}"#,
            r#"{"arguments":{"a":10,"b":20},"tool":"add"}"#,
            r#"{"arguments":{"seconds":30},"tool":"hang"}"#,
            r#"{"arguments":{},"tool":"crash"}"#,
        ]
    );
    let audit = dir.audit();
    assert!(audit.contains("reasons=upstream_timeout"), "{audit}");
    assert!(audit.contains("reasons=upstream_closed"), "{audit}");
    assert!(e.stderr().contains("client frame refused: duplicate_key"));
}

#[test]
fn a_client_that_never_finishes_its_headers_is_cut_off() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = shop("", &stdio_upstream(&python));
    let e = Endpoint::start(&dir);
    let mut s = TcpStream::connect(("127.0.0.1", e.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .unwrap();
    let start = Instant::now();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(9) && waited < Duration::from_secs(25),
        "{waited:?}"
    );
}

/// Issue 28, item 11 over HTTP: an SDK user abandons a held call, in both
/// eras (2025-11-25: the SDK POSTs `notifications/cancelled`; 2026-07-28:
/// it aborts the request's POST, and the dropped request is the
/// cancellation). The approval is withdrawn at once, a later approval is
/// refused, and the server never sees the call.
#[test]
fn a_cancelled_or_dropped_held_call_is_withdrawn_and_never_runs() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    for mode in ["legacy", "2026-07-28"] {
        let dir = shop("", &stdio_upstream(&python));
        let config = std::fs::read_to_string(dir.config()).unwrap();
        std::fs::write(
            dir.config(),
            config.replacen("[mcp]\n", "[mcp]\nhold_seconds = 120\n", 1),
        )
        .unwrap();
        let e = Endpoint::start(&dir);
        let out = Command::new(&python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/cancel_client.py"))
            .arg(toolgate_testkit::toolgate_path())
            .arg(dir.config())
            .arg(e.url())
            .arg(mode)
            .arg(ALICE)
            .output()
            .unwrap();
        let steps = Steps::of(&out, mode);
        mcp_support::assert_cancelled_and_withdrawn(&steps, &dir);
    }
}

/// Issue 28, item 17: requests the endpoint refuses before any decision
/// (no or a wrong token, a foreign `Origin`, a frame the strict parser
/// refuses, a mirrored header that does not match, an unknown session)
/// leave audit records, aggregated so a flood cannot grow the log: one
/// record at the first refusal of a kind, one with the count of the rest
/// when its 10 s window ends (or the endpoint stops).
#[test]
fn refused_requests_are_audited_and_a_flood_is_aggregated() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = shop("", &stdio_upstream(&python));
    let mut e = Endpoint::start(&dir);
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
    for _ in 0..30 {
        let a = e.http(
            "POST",
            &[
                ("authorization", "Bearer wrong"),
                ("content-type", "application/json"),
            ],
            call,
        );
        assert_eq!(a.status, 401);
        let a = e.post(&[("origin", "https://evil.example")], call);
        assert_eq!(a.status, 403);
        let a = e.post(
            &[("mcp-session-id", "no-such-session")],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"a":2}}}"#,
        );
        assert_eq!(a.status, 400);
        let a = e.post(
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "weather"),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        );
        assert_eq!(a.status, 400);
        let a = e.post(&[("mcp-session-id", "no-such-session")], call);
        assert_eq!(a.status, 404);
    }
    let kinds = [
        ("unauthorized", "invalid_token"),
        ("forbidden", "origin_not_allowed"),
        ("deny", "duplicate_key"),
        ("deny", "header_mismatch"),
        ("deny", "unknown_session"),
    ];
    // (verdict, reason, note) of every record.
    let records = || -> Vec<(String, String, String)> {
        let config = dir.config();
        let out = toolgate(&[
            "audit",
            "tail",
            "--jsonl",
            "-n",
            "500",
            "--config",
            config.to_str().unwrap(),
        ]);
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let v = toolgate_json::from_str(l).unwrap().into_owned();
                let get = |p: &str| {
                    v.pointer(p)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                (get("/verdict"), get("/reasons/0"), get("/note"))
            })
            .collect()
    };
    // The window ends when the endpoint stops (SIGTERM: a graceful stop
    // writes the open windows' counts before it exits), so no wait for its
    // 10 s: then each kind has its count.
    let term = Command::new("kill")
        .args(["-TERM", &e.child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    assert!(e.child.wait().unwrap().success(), "{}", e.stderr());
    let all = records();
    for (verdict, reason) in kinds {
        let mine: Vec<&(String, String, String)> =
            all.iter().filter(|(_, r, _)| r == reason).collect();
        assert_eq!(mine.len(), 2, "{reason}: {all:?}");
        assert!(mine.iter().all(|(v, _, _)| v == verdict), "{all:?}");
        assert_eq!(mine[0].2, "mcp http: refused", "{all:?}");
        assert_eq!(mine[1].2, "mcp http: 29 more within 10 s", "{all:?}");
    }
    assert!(dir.seen_canonical().is_empty());
}
