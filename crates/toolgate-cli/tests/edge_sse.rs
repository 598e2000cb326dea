#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! The three running front ends read server-sent events by one rule. A
//! canned upstream of this test's own writes the same events with LF, CR LF,
//! lone-CR and mixed line endings (with a byte order mark, comment lines,
//! `data:` without its space and a payload over several `data` lines), cut
//! into chunks between every CR and the byte after it; they reach
//! `toolgate proxy` as its OpenAI and Anthropic upstream, `toolgate mcp
//! --listen` as a streamable-HTTP MCP upstream answering over SSE, and
//! `toolgate serve` as the streamed body of `POST /v1/decide`. Every
//! framing must lead to the same decisions (the same calls allowed and
//! denied, with the same canonical arguments) at all three; a malformed
//! stream is refused by all three.
//!
//! An MCP upstream's events carry its answers (`initialize`, `tools/list`,
//! each call's result), not the calls: there the calls are the client's,
//! with the same arguments, and each framing must bring the same answers
//! through (a front end that split lines another way would lose the tool
//! list or a result).

mod edge_support;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use edge_support::{exchange, shop_config, start_all, Front};
use toolgate_json::{canonical, Value};

/// How a stream's lines are written.
#[derive(Debug, Clone, Copy)]
struct Framing {
    name: &'static str,
    /// Line endings, taken in turn line after line.
    eols: &'static [&'static str],
    /// A byte order mark, comment lines (one inside an event), `data:`
    /// without its space, and each payload over several `data` lines.
    extras: bool,
}

const FRAMINGS: &[Framing] = &[
    Framing {
        name: "LF, plain",
        eols: &["\n"],
        extras: false,
    },
    Framing {
        name: "LF",
        eols: &["\n"],
        extras: true,
    },
    Framing {
        name: "CR LF",
        eols: &["\r\n"],
        extras: true,
    },
    Framing {
        name: "lone CR",
        eols: &["\r"],
        extras: true,
    },
    Framing {
        name: "mixed",
        eols: &["\r\n", "\r", "\n"],
        extras: true,
    },
];

/// `events` (a name, and a payload whose `\n` marks a place between two
/// JSON tokens where a `data` line may end) written with `f`.
fn wire(f: Framing, events: &[(Option<&str>, String)]) -> Vec<u8> {
    let mut out = String::new();
    let mut n = 0;
    let mut last = "";
    let mut line = |out: &mut String, text: &str| {
        let mut eol = f.eols[n % f.eols.len()];
        n += 1;
        // A CR then an LF is one line ending: a blank line after a CR
        // ends with something else.
        if text.is_empty() && last == "\r" && eol == "\n" {
            eol = f.eols[n % f.eols.len()];
            n += 1;
        }
        out.push_str(text);
        out.push_str(eol);
        last = eol;
    };
    if f.extras {
        out.push('\u{feff}');
        line(&mut out, ": a comment");
    }
    for (name, payload) in events {
        if let Some(name) = name {
            line(&mut out, &format!("event: {name}"));
        }
        if f.extras {
            line(&mut out, ":inside an event");
            for piece in payload.split('\n') {
                line(&mut out, &format!("data:{piece}"));
            }
        } else {
            line(&mut out, &format!("data: {}", payload.replace('\n', "")));
        }
        line(&mut out, "");
    }
    out.into_bytes()
}

/// The chunks the upstream writes `bytes` in: one after the first byte
/// (inside a byte order mark) and one after every CR, so that each CR LF
/// is split between two chunks.
fn chunks(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..bytes.len() {
        if i == 0 || bytes[i] == b'\r' {
            out.push(&bytes[start..=i]);
            start = i + 1;
        }
    }
    if start < bytes.len() {
        out.push(&bytes[start..]);
    }
    out
}

/// The calls of every response: (id, tool, arguments as the model wrote
/// them). Read: the first allowed, the second denied by its schema, the
/// third by the URL guard (a private address).
const CALLS: &[(&str, &str, &str)] = &[
    (
        "call_a",
        "search",
        r#"{"query": "trail socks",  "limit":5}"#,
    ),
    ("call_b", "search", r#"{"query": 7}"#),
    (
        "call_c",
        "fetch_url",
        r#"{"url":"https://internal.example.com/x"}"#,
    ),
];

fn json_string(s: &str) -> String {
    canonical::to_string(&Value::String(s.into()))
}

/// An OpenAI chat stream of [`CALLS`], each call's arguments in two deltas.
fn chat_events() -> Vec<(Option<&'static str>, String)> {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "{{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\
             \"model\":\"m\",\n\"choices\":[{{\"index\":0,\n\"delta\":{delta},\
             \"finish_reason\":{finish}}}]}}"
        )
    };
    let mut out = Vec::new();
    for (i, (id, name, args)) in CALLS.iter().enumerate() {
        let (a, b) = args.split_at(args.len() / 2);
        out.push((
            None,
            chunk(
                &format!(
                    "{{\"tool_calls\":[{{\"index\":{i},\"id\":\"{id}\",\"type\":\"function\",\
                     \"function\":{{\"name\":\"{name}\",\n\"arguments\":{}}}}}]}}",
                    json_string(a)
                ),
                "null",
            ),
        ));
        out.push((
            None,
            chunk(
                &format!(
                    "{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"arguments\":{}}}}}]}}",
                    json_string(b)
                ),
                "null",
            ),
        ));
    }
    out.push((None, chunk("{}", "\"tool_calls\"")));
    out.push((None, "[DONE]".to_owned()));
    out
}

/// An Anthropic Messages stream of [`CALLS`].
fn messages_events() -> Vec<(Option<&'static str>, String)> {
    let mut out = vec![(
        Some("message_start"),
        "{\"type\":\"message_start\",\n\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\
         \"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\
         \"stop_sequence\":null,\n\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}"
            .to_owned(),
    )];
    for (i, (id, name, args)) in CALLS.iter().enumerate() {
        out.push((
            Some("content_block_start"),
            format!(
                "{{\"type\":\"content_block_start\",\"index\":{i},\n\"content_block\":\
                 {{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"{name}\",\"input\":{{}}}}}}"
            ),
        ));
        let (a, b) = args.split_at(args.len() / 2);
        for part in [a, b] {
            out.push((
                Some("content_block_delta"),
                format!(
                    "{{\"type\":\"content_block_delta\",\"index\":{i},\n\"delta\":\
                     {{\"type\":\"input_json_delta\",\"partial_json\":{}}}}}",
                    json_string(part)
                ),
            ));
        }
        out.push((
            Some("content_block_stop"),
            format!("{{\"type\":\"content_block_stop\",\"index\":{i}}}"),
        ));
    }
    out.push((
        Some("message_delta"),
        "{\"type\":\"message_delta\",\n\"delta\":{\"stop_reason\":\"tool_use\",\
         \"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}"
            .to_owned(),
    ));
    out.push((
        Some("message_stop"),
        "{\"type\":\"message_stop\"}".to_owned(),
    ));
    out
}

/// What the canned upstream answers with, and what it saw.
struct Script {
    framing: Framing,
    /// The bytes of the LLM streams (`/v1/chat/completions`,
    /// `/v1/messages`).
    chat: Vec<u8>,
    messages: Vec<u8>,
    /// The bytes of the MCP answer to `tools/call`, in place of the
    /// framed one (a malformed stream).
    call_answer: Option<Vec<u8>>,
    /// The canonical arguments of each `tools/call` received.
    seen: Vec<String>,
}

/// The canned upstream: LLM streams and an MCP server, on one port.
struct Upstream {
    port: u16,
    script: Arc<Mutex<Script>>,
}

impl Upstream {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = Arc::new(Mutex::new(Script {
            framing: FRAMINGS[0],
            chat: Vec::new(),
            messages: Vec::new(),
            call_answer: None,
            seen: Vec::new(),
        }));
        let shared = Arc::clone(&script);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || serve_one(conn, &shared));
            }
        });
        Self { port, script }
    }

    /// Sets the framing and the streams every later request is answered
    /// with.
    fn set(&self, framing: Framing, chat: Vec<u8>, messages: Vec<u8>, call: Option<Vec<u8>>) {
        let mut s = self.script.lock().unwrap();
        s.framing = framing;
        s.chat = chat;
        s.messages = messages;
        s.call_answer = call;
    }

    fn seen(&self) -> Vec<String> {
        self.script.lock().unwrap().seen.clone()
    }
}

/// Reads one request (a `Content-Length` or chunked body) and answers it.
fn serve_one(conn: TcpStream, script: &Mutex<Script>) {
    let mut r = BufReader::new(conn.try_clone().unwrap());
    let mut head = Vec::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            return;
        }
        if l == "\r\n" {
            break;
        }
        head.push(l.trim_end().to_owned());
    }
    let header = |name: &str| {
        head.iter().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap(), 16).unwrap();
            let mut part = vec![0u8; n + 2];
            r.read_exact(&mut part).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&part[..n]);
        }
    } else if let Some(n) = header("content-length") {
        body.resize(n.parse().unwrap(), 0);
        r.read_exact(&mut body).unwrap();
    }
    let (method, path) = {
        let mut parts = head[0].split(' ');
        (
            parts.next().unwrap().to_owned(),
            parts.next().unwrap().to_owned(),
        )
    };
    let mut conn = conn;
    let plain = |conn: &mut TcpStream, status: &str| {
        let _ = write!(
            conn,
            "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    };
    let stream = match (method.as_str(), path.as_str()) {
        ("POST", "/v1/chat/completions") => script.lock().unwrap().chat.clone(),
        ("POST", "/v1/messages") => script.lock().unwrap().messages.clone(),
        ("POST", "/mcp") => match mcp_answer(&body, script) {
            Some(bytes) => bytes,
            None => return plain(&mut conn, "202 Accepted"),
        },
        ("DELETE", "/mcp") => return plain(&mut conn, "200 OK"),
        _ => return plain(&mut conn, "405 Method Not Allowed"),
    };
    let _ = conn.set_nodelay(true);
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: up-1\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    for c in chunks(&stream) {
        let _ = write!(conn, "{:x}\r\n", c.len());
        let _ = conn.write_all(c);
        let _ = conn.write_all(b"\r\n");
        let _ = conn.flush();
    }
    let _ = conn.write_all(b"0\r\n\r\n");
}

/// The MCP server's answer to one message, as an event stream in the
/// script's framing; `None` for a notification.
fn mcp_answer(body: &[u8], script: &Mutex<Script>) -> Option<Vec<u8>> {
    let v = toolgate_json::from_slice(body).unwrap();
    let id = canonical::to_string(v.pointer("/id")?);
    let method = v.pointer("/method").and_then(Value::as_str).unwrap_or("");
    let mut s = script.lock().unwrap();
    let result = match method {
        "initialize" => "{\"protocolVersion\":\"2025-11-25\",\n\"capabilities\":{\"tools\":{}},\
                         \n\"serverInfo\":{\"name\":\"canned\",\"version\":\"1\"}}"
            .to_owned(),
        "tools/list" => {
            let tool = |name: &str| {
                format!(
                    "{{\"name\":\"{name}\",\n\"description\":\"The shop's {name}.\",\
                     \n\"inputSchema\":{{\"type\":\"object\"}}}}"
                )
            };
            format!(
                "{{\"tools\":[{},\n{},\n{}]}}",
                tool("search"),
                tool("fetch_url"),
                tool("secret_admin")
            )
        }
        "tools/call" => {
            let args = v.pointer("/params/arguments").unwrap();
            s.seen.push(canonical::to_string(args));
            if let Some(bytes) = &s.call_answer {
                return Some(bytes.clone());
            }
            "{\"content\":[{\"type\":\"text\",\n\"text\":\"done\"}],\"isError\":false}".to_owned()
        }
        _ => "{}".to_owned(),
    };
    let payload = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\n\"result\":{result}}}");
    Some(wire(s.framing, &[(Some("message"), payload)]))
}

/// One call's decision, as a front end shows it: the tool, the verdict,
/// and the canonical arguments it may run with (none for a denied call).
type Decided = (String, String, Option<String>);

/// The canonical text of a JSON text.
fn canon(text: &str) -> String {
    canonical::to_string(&toolgate_json::from_str(text).unwrap())
}

/// `toolgate serve`: `POST /v1/decide` with the stream as its body.
fn serve_decides(f: &Front, stream: &[u8], format: &str, session: &str) -> Vec<Decided> {
    let mut o = toolgate_json::Object::new();
    o.insert(
        "body",
        Value::String(String::from_utf8(stream.to_vec()).unwrap().into()),
    );
    o.insert("format", Value::String(format.to_owned().into()));
    let context = format!(
        r#"{{"user":"alice","session":"{session}","roles":["customer"],"turn":1,"entities":[]}}"#
    );
    o.insert(
        "context",
        toolgate_json::from_str(&context).unwrap().into_owned(),
    );
    let body = canonical::to_string(&Value::Object(o));
    let a = exchange(
        f.port,
        "POST",
        "/v1/decide",
        &[
            ("Authorization", "Bearer agent-demo-token"),
            ("Content-Type", "application/json"),
        ],
        body.as_bytes(),
    );
    assert_eq!(a.status, 200, "serve: {}", a.text());
    let v = toolgate_json::from_slice(&a.body).unwrap();
    v.pointer("/decisions")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|d| {
            let s = |p: &str| d.pointer(p).and_then(Value::as_str).unwrap().to_owned();
            let args = d
                .pointer("/arguments")
                .filter(|a| !matches!(a, Value::Null))
                .map(canonical::to_string);
            (s("/tool"), s("/verdict"), args)
        })
        .collect()
}

/// The `data` of each event of a stream toolgate wrote (LF line endings).
fn data_of(body: &[u8]) -> Vec<String> {
    String::from_utf8(body.to_vec())
        .unwrap()
        .split("\n\n")
        .filter_map(|e| {
            let lines: Vec<&str> = e.lines().filter_map(|l| l.strip_prefix("data: ")).collect();
            (!lines.is_empty()).then(|| lines.join("\n"))
        })
        .collect()
}

/// What `toolgate proxy` answered for a streamed request to `path`: its
/// verdicts (the `toolgate` summary) with the arguments of each call it
/// released; the error events it sent; how many calls it released.
fn proxy_decides(f: &Front, path: &str) -> (Vec<Decided>, Vec<String>, usize) {
    let body = if path == "/v1/messages" {
        r#"{"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"socks?"}]}"#
    } else {
        r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"socks?"}]}"#
    };
    let a = exchange(
        f.port,
        "POST",
        path,
        &[
            ("x-toolgate-token", "proxy-demo-token"),
            ("Content-Type", "application/json"),
            ("x-api-key", "k"),
            ("Authorization", "Bearer k"),
            ("anthropic-version", "2023-06-01"),
        ],
        body.as_bytes(),
    );
    assert_eq!(a.status, 200, "proxy: {}", a.text());
    let mut released: Vec<(String, String)> = Vec::new();
    let mut partial: Vec<(String, String)> = Vec::new();
    let mut summary = None;
    let mut errors = Vec::new();
    for data in data_of(&a.body) {
        if data == "[DONE]" {
            continue;
        }
        let v = toolgate_json::from_str(&data).unwrap();
        if let Some(s) = v
            .pointer("/toolgate")
            .or_else(|| v.pointer("/choices/0/delta/toolgate"))
            .or_else(|| v.pointer("/delta/toolgate"))
        {
            summary = Some(s.clone().into_owned());
        }
        if v.pointer("/type").and_then(Value::as_str) == Some("error")
            || v.pointer("/error").is_some()
        {
            errors.push(data.clone());
        }
        for c in v
            .pointer("/choices/0/delta/tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |p: &str| c.pointer(p).and_then(Value::as_str).unwrap().to_owned();
            released.push((s("/id"), canon(&s("/function/arguments"))));
        }
        match v.pointer("/type").and_then(Value::as_str) {
            Some("content_block_start")
                if v.pointer("/content_block/type").and_then(Value::as_str) == Some("tool_use") =>
            {
                let id = v.pointer("/content_block/id").and_then(Value::as_str);
                partial.push((id.unwrap().to_owned(), String::new()));
            }
            Some("content_block_delta") => {
                if let Some(j) = v.pointer("/delta/partial_json").and_then(Value::as_str) {
                    partial.last_mut().unwrap().1.push_str(j);
                }
            }
            _ => {}
        }
    }
    released.extend(partial.into_iter().map(|(id, j)| (id, canon(&j))));
    let count = released.len();
    let decided = summary
        .map(|s| {
            s.pointer("/calls")
                .and_then(Value::as_array)
                .unwrap()
                .iter()
                .map(|c| {
                    let s = |p: &str| c.pointer(p).and_then(Value::as_str).unwrap().to_owned();
                    let args = released
                        .iter()
                        .find(|(id, _)| *id == s("/call_id"))
                        .map(|(_, a)| a.clone());
                    (s("/tool"), s("/verdict"), args)
                })
                .collect()
        })
        .unwrap_or_default();
    (decided, errors, count)
}

/// The JSON-RPC messages of an answer from `toolgate mcp` (JSON, or an
/// event stream).
fn mcp_messages(a: &edge_support::Answer) -> Vec<Value<'static>> {
    let texts = if a
        .header("content-type")
        .is_some_and(|c| c.starts_with("text/event-stream"))
    {
        data_of(&a.body)
    } else {
        vec![a.text()]
    };
    texts
        .iter()
        .filter(|t| !t.trim().is_empty())
        .map(|t| toolgate_json::from_str(t).unwrap().into_owned())
        .collect()
}

/// A session with `toolgate mcp`: (its id, the tools it lists).
fn mcp_session(f: &Front) -> (String, Vec<String>) {
    let post = |sid: Option<&str>, body: &str| {
        let mut h = vec![
            ("Authorization", "Bearer demo-token"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        if let Some(s) = sid {
            h.push(("mcp-session-id", s));
        }
        exchange(f.port, "POST", "/mcp", &h, body.as_bytes())
    };
    let a = post(
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"edge","version":"0"}}}"#,
    );
    assert_eq!(a.status, 200, "mcp initialize: {a:?}");
    let init = mcp_messages(&a);
    assert_eq!(
        init[0]
            .pointer("/result/serverInfo/name")
            .and_then(Value::as_str),
        Some("canned"),
        "mcp initialize: {}",
        a.text()
    );
    let sid = a.header("mcp-session-id").unwrap().to_owned();
    let n = post(
        Some(&sid),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(n.status, 202, "{n:?}");
    let l = post(
        Some(&sid),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let listed = mcp_messages(&l)[0]
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("mcp tools/list: {}", l.text()))
        .iter()
        .map(|t| {
            t.pointer("/name")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect();
    (sid, listed)
}

/// `toolgate mcp`: each of [`CALLS`] as the client's `tools/call`; the
/// decisions (the arguments: those the upstream received) and, for each
/// call, whether the upstream's result came through.
fn mcp_decides(f: &Front, up: &Upstream, sid: &str) -> (Vec<Decided>, Vec<bool>) {
    let mut decided = Vec::new();
    let mut results = Vec::new();
    for (i, (_, name, args)) in CALLS.iter().enumerate() {
        let before = up.seen().len();
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#,
            10 + i
        );
        let a = exchange(
            f.port,
            "POST",
            "/mcp",
            &[
                ("Authorization", "Bearer demo-token"),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-session-id", sid),
            ],
            body.as_bytes(),
        );
        let answer = mcp_messages(&a)
            .into_iter()
            .find(|m| m.pointer("/id").is_some())
            .unwrap_or_else(|| panic!("mcp tools/call: {a:?}"));
        let text = answer
            .pointer("/result/content/0/text")
            .and_then(Value::as_str)
            .unwrap_or("");
        let seen = up.seen();
        let verdict = if text.starts_with("denied by toolgate") {
            assert_eq!(seen.len(), before, "a denied call reached the upstream");
            "deny"
        } else {
            assert_eq!(seen.len(), before + 1, "{}", a.text());
            "allow"
        };
        results.push(text == "done");
        let args = (verdict == "allow").then(|| seen[before].clone());
        decided.push(((*name).to_owned(), verdict.to_owned(), args));
    }
    (decided, results)
}

fn fronts(up: &Upstream) -> (tempfile::TempDir, Vec<Front>) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}", up.port);
    let config = shop_config(dir.path(), "", &format!("{url}/mcp"), |t| {
        t.replacen("max_turns = 20", "max_turns = 1000", 1)
            .replacen(
                "openai = \"https://api.openai.com\"",
                &format!("openai = \"{url}\""),
                1,
            )
            .replacen(
                "anthropic = \"https://api.anthropic.com\"",
                &format!("anthropic = \"{url}\""),
                1,
            )
    });
    let fronts = start_all(&config);
    (dir, fronts)
}

/// Every framing of the same events, at every chunk split between a CR
/// and the byte after it, reaches the same decisions at all three front
/// ends.
#[test]
fn the_three_front_ends_read_every_line_ending_alike() {
    let up = Upstream::start();
    let (_dir, fronts) = fronts(&up);
    let [serve, mcp, proxy] = &fronts[..] else {
        panic!("three front ends")
    };
    let mut first: Option<Vec<Decided>> = None;
    for (n, &f) in FRAMINGS.iter().enumerate() {
        let chat = wire(f, &chat_events());
        let messages = wire(f, &messages_events());
        up.set(f, chat.clone(), messages.clone(), None);
        let session = format!("sse-{n}");
        let proxied = |path: &str| {
            let (decided, errors, _) = proxy_decides(proxy, path);
            assert!(errors.is_empty(), "proxy {path}, {}: {errors:?}", f.name);
            decided
        };
        let got = [
            (
                "serve openai",
                serve_decides(serve, &chat, "openai", &session),
            ),
            (
                "serve anthropic",
                serve_decides(serve, &messages, "anthropic", &session),
            ),
            ("proxy openai", proxied("/v1/chat/completions")),
            ("proxy anthropic", proxied("/v1/messages")),
        ];
        let (sid, listed) = mcp_session(mcp);
        assert_eq!(
            listed,
            ["search", "fetch_url"],
            "mcp tools/list, {}",
            f.name
        );
        let (mcp_got, results) = mcp_decides(mcp, &up, &sid);
        let expected = first.get_or_insert_with(|| got[0].1.clone()).clone();
        for (who, decided) in got.iter().chain([&("mcp", mcp_got)]) {
            assert_eq!(decided, &expected, "{who}, {}", f.name);
        }
        assert_eq!(results, [true, false, false], "mcp results, {}", f.name);
    }
    // What every framing came to: one allowed call with the canonical
    // arguments, two denied.
    let expected = first.unwrap();
    let verdicts: Vec<&str> = expected.iter().map(|d| d.1.as_str()).collect();
    assert_eq!(verdicts, ["allow", "deny", "deny"]);
    assert_eq!(
        expected[0].2.as_deref(),
        Some(r#"{"limit":5,"query":"trail socks"}"#)
    );
}

/// A stream cut inside an event, and one whose event holds no JSON, are
/// refused by all three front ends: no call is allowed (serve), released
/// (proxy) or answered with the upstream's result (mcp).
#[test]
fn the_three_front_ends_refuse_a_malformed_stream() {
    let up = Upstream::start();
    let (_dir, fronts) = fronts(&up);
    let [serve, mcp, proxy] = &fronts[..] else {
        panic!("three front ends")
    };
    for &f in &FRAMINGS[1..] {
        let chat = wire(f, &chat_events());
        let messages = wire(f, &messages_events());
        let answer = wire(
            f,
            &[(
                Some("message"),
                "{\"jsonrpc\":\"2.0\",\"id\":10,\n\"result\":{\"content\":[]}}".to_owned(),
            )],
        );
        for (what, cut) in [
            (
                "cut inside an event",
                cut_at_second_payload as fn(&[u8]) -> Vec<u8>,
            ),
            ("an event that is not JSON", garbled_second_payload),
        ] {
            let label = format!("{what}, {}", f.name);
            let (chat, messages, answer) = (cut(&chat), cut(&messages), cut(&answer));
            up.set(f, chat.clone(), messages.clone(), Some(answer));
            for (stream, format) in [(&chat, "openai"), (&messages, "anthropic")] {
                let d = serve_decides(serve, stream, format, "sse-bad");
                assert!(
                    d.iter().all(|(_, v, a)| v == "deny" && a.is_none()),
                    "serve {format}, {label}: {d:?}"
                );
            }
            for path in ["/v1/chat/completions", "/v1/messages"] {
                let (d, errors, released) = proxy_decides(proxy, path);
                assert!(
                    d.iter().all(|(_, v, a)| v != "allow" && a.is_none())
                        && released == 0
                        && !errors.is_empty(),
                    "proxy {path}, {label}: {d:?} {errors:?}"
                );
            }
            let (sid, _) = mcp_session(mcp);
            let (_, results) = mcp_decides(mcp, &up, &sid);
            assert_eq!(results, [false, false, false], "mcp, {label}");
        }
    }
}

/// The stream up to the middle of its second event's first `data` line
/// (no line ending, no blank line after it).
fn cut_at_second_payload(stream: &[u8]) -> Vec<u8> {
    let at = nth_data(stream, 1).unwrap_or_else(|| nth_data(stream, 0).unwrap());
    stream[..at + 7].to_vec()
}

/// The stream with its second event's first `data` value replaced by text
/// that is not JSON (the event still ends with a blank line).
fn garbled_second_payload(stream: &[u8]) -> Vec<u8> {
    let at = nth_data(stream, 1).unwrap_or_else(|| nth_data(stream, 0).unwrap());
    let mut out = stream[..at + 5].to_vec();
    out.extend_from_slice(b"not json");
    let end = stream[at..]
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap();
    out.extend_from_slice(&stream[at + end..]);
    out
}

/// Where the first `data:` line of the `n`th event starts.
fn nth_data(stream: &[u8], n: usize) -> Option<usize> {
    let mut seen = 0;
    let mut in_event = false;
    let mut i = 0;
    while i < stream.len() {
        let at_line = i == 0 || matches!(stream[i - 1], b'\r' | b'\n');
        if at_line && stream[i..].starts_with(b"data:") {
            if !in_event {
                if seen == n {
                    return Some(i);
                }
                seen += 1;
                in_event = true;
            }
        } else if at_line && matches!(stream[i], b'\r' | b'\n') && i > 0 {
            // A blank line (an ending right after an ending) ends the event;
            // a CR LF pair is one ending.
            if !(stream[i - 1] == b'\r' && stream[i] == b'\n') {
                in_event = false;
            }
        }
        i += 1;
    }
    None
}
