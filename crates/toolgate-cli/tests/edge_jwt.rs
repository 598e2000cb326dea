#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! JWT bearer tokens against the three front ends (`toolgate serve`,
//! `toolgate mcp --listen`, `toolgate proxy`) started from one config with
//! a `[jwt]` table whose JWKS is served here: the same token set, forged,
//! misdirected and valid, is accepted and refused the same way by each, a
//! rotated key is picked up, and made-up `kid`s cost the JWKS server
//! almost nothing.

mod edge_support;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use edge_support::{shop_config, start_all, Front};
use toolgate_testkit::jwt::{attack_set, claims, jwks, SigningKey};

const ISS: &str = "https://idp.test";
const AUD: &str = "https://toolgate.test";

/// A JWKS served over HTTP by a thread, replaceable, counting fetches.
struct JwksServer {
    port: u16,
    body: Arc<Mutex<String>>,
    hits: Arc<AtomicUsize>,
}

fn jwks_server(body: String) -> JwksServer {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let body = Arc::new(Mutex::new(body));
    let hits = Arc::new(AtomicUsize::new(0));
    let (b, h) = (Arc::clone(&body), Arc::clone(&hits));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match s.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            h.fetch_add(1, Ordering::SeqCst);
            let text = b.lock().unwrap().clone();
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    JwksServer { port, body, hits }
}

/// The three front ends on the shop's config with `[jwt]` reading the
/// JWKS at `jwks_port`.
fn fronts(jwks_port: u16) -> (tempfile::TempDir, Vec<Front>) {
    let dir = tempfile::tempdir().unwrap();
    let config = shop_config(dir.path(), "", "http://127.0.0.1:9/mcp", |text| {
        format!(
            "{text}\n[jwt]\nissuer = \"{ISS}\"\naudience = [\"{AUD}\"]\n\
             jwks_url = \"http://127.0.0.1:{jwks_port}/jwks\"\nroles_claim = \"groups\"\n\
             [jwt.roles]\nagent = [\"agents\"]\napprover = [\"reviewers\"]\n"
        )
    });
    let fronts = start_all(&config);
    (dir, fronts)
}

/// What a front end answered a request with `token`: `"accepted"` (it
/// took the token and then refused the body `[1,2]` with its own `400`),
/// or the status of the refusal.
fn answer(f: &Front, token: &str) -> String {
    let (path, header) = match f.name {
        "serve" => ("/v1/decide", format!("Authorization: Bearer {token}")),
        "mcp" => ("/mcp", format!("Authorization: Bearer {token}")),
        _ => ("/v1/chat/completions", format!("x-toolgate-token: {token}")),
    };
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n{header}\r\n\
         Content-Length: 5\r\n\r\n[1,2]",
        f.port
    );
    let mut s = TcpStream::connect(("127.0.0.1", f.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let status = text.split(' ').nth(1).unwrap_or("none").to_owned();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let passed = match f.name {
        "serve" | "proxy" => body.contains("\"invalid_request\""),
        _ => body.contains("\"jsonrpc\"") && status == "400",
    };
    if status == "400" && passed {
        "accepted".into()
    } else {
        status
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn the_three_front_ends_accept_and_refuse_the_same_jwts() {
    let old = SigningKey::es256("2026-11").unwrap();
    let new = SigningKey::rs256("2026-12").unwrap();
    let server = jwks_server(jwks(&[&old]));
    let (_dir, fronts) = fronts(server.port);
    let now = now();
    let agent = claims(ISS, AUD, "alice", now, r#","groups":["agents"]"#);

    // A valid token, and the static tokens beside it.
    for f in &fronts {
        assert_eq!(answer(f, &old.sign(&agent)), "accepted", "{}", f.name);
        let fixed = match f.name {
            "serve" => "agent-demo-token",
            "mcp" => "demo-token",
            _ => "proxy-demo-token",
        };
        assert_eq!(answer(f, fixed), "accepted", "{}: static token", f.name);
    }
    // (A front end serves once its keys are read.)
    assert_eq!(
        server.hits.load(Ordering::SeqCst),
        3,
        "one fetch at each start"
    );

    // The issuer rotates (both keys published): each front end fetches
    // the JWKS once for the new kid.
    *server.body.lock().unwrap() = jwks(&[&old, &new]);
    for f in &fronts {
        assert_eq!(
            answer(f, &new.sign(&agent)),
            "accepted",
            "{}: rotated",
            f.name
        );
    }
    assert_eq!(server.hits.load(Ordering::SeqCst), 6);

    // The attacker's tokens: refused `401` by each.
    let impostor = SigningKey::es256("2026-11").unwrap();
    for attack in attack_set(&old, &impostor, ISS, AUD, now) {
        for f in &fronts {
            assert_eq!(
                answer(f, &attack.token),
                "401",
                "{}: {}",
                f.name,
                attack.name
            );
        }
    }
    // A token whose role may not call tools (an approver's).
    let approver = old.sign(&claims(
        ISS,
        AUD,
        "alice",
        now,
        r#","groups":["reviewers"]"#,
    ));
    let no_role = old.sign(&claims(ISS, AUD, "alice", now, r#","groups":["guests"]"#));
    for f in &fronts {
        let expected = if f.name == "proxy" { "401" } else { "403" };
        assert_eq!(answer(f, &approver), expected, "{}: approver", f.name);
        assert_eq!(answer(f, &no_role), "401", "{}: no role", f.name);
    }

    // A flood of made-up kids: at most one fetch per front end per
    // interval (10 s), not one per token.
    for i in 0..30 {
        let forged = old.sign_raw(&format!(r#"{{"alg":"ES256","kid":"made-up-{i}"}}"#), &agent);
        for f in &fronts {
            assert_eq!(answer(f, &forged), "401", "{}", f.name);
        }
    }
    let hits = server.hits.load(Ordering::SeqCst);
    assert!(hits <= 6 + 3 * 2, "{hits} fetches for 90 made-up kids");
}
