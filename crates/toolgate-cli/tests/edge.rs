#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! The edge's defences, one attack at a time, against each of the three
//! listeners (`toolgate serve`, `toolgate mcp --listen`, `toolgate proxy`)
//! started from one config: slow headers, a slow body, a flood of
//! anonymous connections ahead of a caller with a token, and more
//! connections than `[server] max_connections`. Each listener must hold
//! the same line.

mod edge_support;

use std::io::{ErrorKind, Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use edge_support::{shop_config, start_all, Front};

/// The three front ends, started from the shop's config with `server`
/// added to its `[server]` table and an `[mcp]` endpoint (whose upstream
/// is never reached: no request here opens a session).
fn fronts(server: &str) -> (tempfile::TempDir, Vec<Front>) {
    let dir = tempfile::tempdir().unwrap();
    let config = shop_config(dir.path(), server, "http://127.0.0.1:9/mcp", |t| t);
    let fronts = start_all(&config);
    (dir, fronts)
}

trait Requests {
    fn authenticated(&self, length: usize, body: &str) -> String;
    fn probe(&self) -> String;
    fn connect(&self) -> TcpStream;
}

impl Requests for Front {
    /// The head of a request that passes this front end's authentication
    /// and is then refused without reaching an upstream or the gate, with
    /// a body of `length` bytes (of which `body` is sent).
    fn authenticated(&self, length: usize, body: &str) -> String {
        let port = self.port;
        match self.name {
            "serve" => format!(
                "POST /v1/decide HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                 Authorization: Bearer agent-demo-token\r\nContent-Type: application/json\r\n\
                 Content-Length: {length}\r\n\r\n{body}"
            ),
            "mcp" => format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                 Authorization: Bearer demo-token\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\n\
                 Content-Length: {length}\r\n\r\n{body}"
            ),
            _ => format!(
                "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
                 x-toolgate-token: proxy-demo-token\r\nContent-Type: application/json\r\n\
                 Content-Length: {length}\r\n\r\n{body}"
            ),
        }
    }

    /// A whole authenticated request (the body `[1,2]`, refused by each
    /// front end with `400`).
    fn probe(&self) -> String {
        self.authenticated(5, "[1,2]")
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s
    }
}

/// Reads one response (a `Content-Length` body) off `s`: its status, or
/// `None` if the connection closed before a whole head.
fn status(s: &mut TcpStream) -> std::io::Result<Option<u16>> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte)? == 0 {
            return Ok(None);
        }
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).into_owned();
    let length = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    s.read_exact(&mut body)?;
    Ok(head.split(' ').nth(1).and_then(|c| c.parse().ok()))
}

/// Whether the peer closed `s` (reading gives no more response).
fn closed(s: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    match s.read_to_end(&mut rest) {
        Ok(_) => !rest.windows(4).any(|w| w == b"\r\n\r\n") || rest.starts_with(b"HTTP/1.1 408"),
        Err(e) => e.kind() == ErrorKind::ConnectionReset,
    }
}

/// Slow headers: a request whose head never ends is cut off at the header
/// deadline, by every listener.
#[test]
fn slow_headers_are_cut_off_everywhere() {
    let (_dir, fronts) = fronts("header_timeout_seconds = 1\nbody_timeout_seconds = 1\n");
    for f in &fronts {
        let mut s = f.connect();
        s.write_all(format!("POST / HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Slow:", f.port).as_bytes())
            .unwrap();
        assert!(closed(&mut s), "{}: the slow head was not cut off", f.name);
    }
}

/// A slow body: an authenticated request whose body does not arrive in
/// time is answered `408` by every listener.
#[test]
fn slow_bodies_are_answered_408_everywhere() {
    let (_dir, fronts) = fronts("header_timeout_seconds = 1\nbody_timeout_seconds = 1\n");
    for f in &fronts {
        let mut s = f.connect();
        s.write_all(f.authenticated(64, "{").as_bytes()).unwrap();
        assert_eq!(status(&mut s).unwrap(), Some(408), "{}", f.name);
        // Every listener answers a whole request the same way.
        let mut s = f.connect();
        s.write_all(f.probe().as_bytes()).unwrap();
        assert_eq!(status(&mut s).unwrap(), Some(400), "{}", f.name);
    }
}

/// A flood of anonymous connections (opened, silent) takes every place;
/// a caller with a token is still served at once, because the oldest
/// anonymous connection gives way — by every listener.
#[test]
fn an_anonymous_flood_gives_way_to_a_caller_everywhere() {
    // The header deadline is long: only the budget can make room.
    let (_dir, fronts) = fronts("header_timeout_seconds = 60\nmax_connections = 4\n");
    for f in &fronts {
        let mut flood: Vec<TcpStream> = (0..4).map(|_| f.connect()).collect();
        let mut caller = f.connect();
        caller.write_all(f.probe().as_bytes()).unwrap();
        assert_eq!(status(&mut caller).unwrap(), Some(400), "{}", f.name);
        // The oldest anonymous connection was closed by the listener.
        assert!(closed(&mut flood[0]), "{}", f.name);
        drop(flood);
    }
}

/// More connections than `max_connections`: the one past the cap waits
/// (unanswered) until a place frees, then is served — by every listener.
/// Authenticated connections are never closed to make room.
#[test]
fn connections_past_the_cap_wait_for_a_place_everywhere() {
    let (_dir, fronts) = fronts("header_timeout_seconds = 60\nmax_connections = 4\n");
    for f in &fronts {
        let mut held: Vec<TcpStream> = (0..4)
            .map(|_| {
                let mut s = f.connect();
                s.write_all(f.probe().as_bytes()).unwrap();
                assert_eq!(status(&mut s).unwrap(), Some(400), "{}", f.name);
                s
            })
            .collect();
        let mut waiting = f.connect();
        waiting.write_all(f.probe().as_bytes()).unwrap();
        waiting
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut byte = [0u8; 1];
        let early = waiting.read(&mut byte);
        assert!(
            early
                .as_ref()
                .is_err_and(|e| matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
            "{}: answered past the cap: {early:?}",
            f.name
        );
        // Held connections were authenticated: none was closed for room.
        for s in &mut held {
            s.write_all(f.probe().as_bytes()).unwrap();
            assert_eq!(status(s).unwrap(), Some(400), "{}", f.name);
        }
        held.pop();
        waiting
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        assert_eq!(status(&mut waiting).unwrap(), Some(400), "{}", f.name);
    }
}

/// The token of each front end in the shop's config.
fn token_of(f: &Front) -> &'static str {
    match f.name {
        "serve" => "agent-demo-token",
        "mcp" => "demo-token",
        _ => "proxy-demo-token",
    }
}

/// A request whose token header lines are `lines` (`{T}` stands for the
/// front end's token), with the probe's body: `Authorization` lines for
/// the service and the MCP endpoint, `x-toolgate-token` lines (the token
/// alone) for the proxy.
fn with_token_lines(f: &Front, bearer: &[&str], plain: &[&str]) -> Vec<u8> {
    let (path, name, lines) = match f.name {
        "serve" => ("/v1/decide", "Authorization", bearer),
        "mcp" => ("/mcp", "Authorization", bearer),
        _ => ("/v1/chat/completions", "x-toolgate-token", plain),
    };
    let mut out = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: 5\r\n",
        f.port
    );
    for l in lines {
        out.push_str(&format!("{name}: {}\r\n", l.replace("{T}", token_of(f))));
    }
    out.push_str("\r\n[1,2]");
    out.into_bytes()
}

/// Sends `request` on a new connection; whether the front end took the
/// token (it then refuses the body `[1,2]` with its own `400`; a refused
/// token is `401`, a duplicate header `400 duplicate_header`, a header the
/// HTTP parser rejects `400` with no body).
fn token_accepted(f: &Front, request: &[u8]) -> bool {
    let mut s = f.connect();
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let status = text.split(' ').nth(1).unwrap_or("");
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let passed = match f.name {
        "serve" | "proxy" => body.contains("\"invalid_request\""),
        _ => body.contains("\"jsonrpc\""),
    };
    assert!(
        (status == "400" && passed) || matches!(status, "400" | "401"),
        "{}: unexpected answer {text}",
        f.name
    );
    status == "400" && passed
}

/// The three front ends accept and refuse the same token spellings: one
/// header, the scheme `Bearer` in any case followed by one space, then the
/// token alone (visible ASCII, nothing else). The proxy's own header holds
/// the token alone.
#[test]
fn the_three_front_ends_accept_and_refuse_the_same_token_spellings() {
    let (_dir, fronts) = fronts("");
    // (what, Authorization lines, x-toolgate-token lines, accepted)
    let cases: &[(&str, &[&str], &[&str], bool)] = &[
        ("exact", &["Bearer {T}"], &["{T}"], true),
        ("lower-case scheme", &["bearer {T}"], &["{T}"], true),
        ("upper-case scheme", &["BEARER {T}"], &["{T}"], true),
        // Space around a header's value is not part of it (RFC 9110).
        (
            "space around the value",
            &["  Bearer {T}  "],
            &["  {T}  "],
            true,
        ),
        ("no header", &[], &[], false),
        (
            "duplicate header",
            &["Bearer {T}", "Bearer {T}"],
            &["{T}", "{T}"],
            false,
        ),
        (
            "duplicate, one wrong",
            &["Bearer {T}", "Bearer nope"],
            &["{T}", "nope"],
            false,
        ),
        ("empty value", &[""], &[""], false),
        ("scheme alone", &["Bearer"], &["Bearer"], false),
        ("scheme and space", &["Bearer x"], &["x"], false),
        ("two spaces", &["Bearer  {T}"], &["{T} {T}"], false),
        ("space inside", &["Bearer {T} x"], &["{T} x"], false),
        ("tab separator", &["Bearer\t{T}"], &["{T}\tx"], false),
        (
            "control character",
            &["Bearer {T}\u{1}"],
            &["{T}\u{1}"],
            false,
        ),
        ("other scheme", &["Basic {T}"], &["Basic {T}"], false),
        ("no scheme", &["{T}"], &["Bearer {T}"], false),
        ("non-ASCII", &["Bearer {T}é"], &["{T}é"], false),
        ("wrong token", &["Bearer {T}x"], &["{T}x"], false),
    ];
    for (what, bearer, plain, accepted) in cases {
        for f in &fronts {
            let got = token_accepted(f, &with_token_lines(f, bearer, plain));
            assert_eq!(got, *accepted, "{}: {what}", f.name);
        }
    }
}
