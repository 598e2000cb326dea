//! Entity sources from the attacker's side: the gate fetches a call's
//! resource from an HTTP endpoint this test runs, and a source that is
//! slow, lies (another id or type), answers too much or nonsense, or fails,
//! denies the call `entity_source_unavailable`; an answer is never used
//! past its time to live.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolgate::authz::{
    self, CachedSource, CedarAuthorizer, EntitySource, HttpSource, SourceErrorKind,
};
use toolgate::config::Config;
use toolgate::{Context, Decision, Format, Gate, Verdict};

fn order(id: &str, owner: &str, total: u64) -> String {
    format!(
        r#"{{"uid":{{"type":"Order","id":"{id}"}},"attrs":{{"owner":{{"type":"User","id":"{owner}"}},"total_cents":{total}}},"parents":[]}}"#
    )
}

/// What the test server answers for one path.
#[derive(Clone)]
enum Answer {
    Json(String),
    Status(u16),
    /// Reads the request, answers nothing until the test lets it go.
    Hang,
    /// A head declaring `Content-Length: n`, then a part of the body, then
    /// nothing until the test lets it go.
    Stall(usize),
    /// Bytes without end (no Content-Length), until the client hangs up.
    Endless,
    /// A raw answer, head and all.
    Raw(Vec<u8>),
}

/// A local HTTP server: `answers` by path, each request counted.
struct Server {
    addr: SocketAddr,
    answers: Arc<Mutex<HashMap<String, Answer>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    release: Sender<()>,
}

impl Server {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let answers: Arc<Mutex<HashMap<String, Answer>>> = Arc::default();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let (release, released) = channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let (a, h) = (Arc::clone(&answers), Arc::clone(&hits));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (a, h, r) = (Arc::clone(&a), Arc::clone(&h), Arc::clone(&released));
                std::thread::spawn(move || serve(stream, &a, &h, &r));
            }
        });
        Self {
            addr,
            answers,
            hits,
            release,
        }
    }

    fn set(&self, path: &str, answer: Answer) {
        self.answers.lock().unwrap().insert(path.to_owned(), answer);
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn base(&self) -> String {
        format!("http://{}/entities", self.addr)
    }

    /// Lets every hanging answer end.
    fn release_all(&self) {
        for _ in 0..16 {
            let _ = self.release.send(());
        }
    }
}

fn serve(
    stream: TcpStream,
    answers: &Mutex<HashMap<String, Answer>>,
    hits: &Mutex<HashMap<String, usize>>,
    released: &Mutex<Receiver<()>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let answer = answers
        .lock()
        .unwrap()
        .get(&path)
        .cloned()
        .unwrap_or(Answer::Status(404));
    let mut out = stream;
    let wait = || {
        let _ = released
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(30));
    };
    let _ = match answer {
        Answer::Json(body) => write!(
            out,
            "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        Answer::Status(code) => write!(out, "HTTP/1.0 {code} X\r\nContent-Length: 0\r\n\r\n"),
        Answer::Hang => {
            wait();
            Ok(())
        }
        Answer::Stall(n) => {
            let _ = write!(
                out,
                "HTTP/1.0 200 OK\r\nContent-Length: {n}\r\n\r\n{{\"uid\":"
            );
            let _ = out.flush();
            wait();
            Ok(())
        }
        Answer::Endless => {
            let _ = write!(out, "HTTP/1.0 200 OK\r\n\r\n");
            let chunk = [b' '; 8192];
            while out.write_all(&chunk).is_ok() {}
            Ok(())
        }
        Answer::Raw(bytes) => out.write_all(&bytes),
    };
}

const TOOLS: &str = r#"
[[tool]]
name = "get_order"
risk = "read"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string","maxLength":64}},"required":["order_id"],"additionalProperties":false}'
resource = { type = "Order", id = "/order_id" }

[[tool]]
name = "refund"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string","maxLength":64},"amount_cents":{"type":"integer","minimum":1,"maximum":1000000},"reason":{"type":"string"}},"required":["order_id","amount_cents","reason"],"additionalProperties":false}'
resource = { type = "Order", id = "/order_id" }
"#;

/// The shop's users and roles, without its orders: orders come from the
/// source.
const PEOPLE: &str = r#"[
  {"uid":{"type":"Role","id":"customer"},"attrs":{},"parents":[]},
  {"uid":{"type":"Role","id":"support"},"attrs":{},"parents":[]},
  {"uid":{"type":"User","id":"alice"},"attrs":{},"parents":[{"type":"Role","id":"customer"}]},
  {"uid":{"type":"User","id":"bob"},"attrs":{},"parents":[{"type":"Role","id":"customer"}]}
]"#;

/// A config in `dir` with the shop's policies and schema, the people
/// above, and `sources` (TOML) under `[authorization]`.
fn config(dir: &Path, sources: &str) -> Result<Config, toolgate::config::Error> {
    let shop = toolgate_testkit::shop_dir();
    std::fs::write(dir.join("people.json"), PEOPLE).unwrap();
    let toml = format!(
        "[authorization]\nmode = \"cedar\"\npolicies = {:?}\nschema = {:?}\nentities = \"people.json\"\n{sources}\n{TOOLS}",
        shop.join("policies.cedar").display().to_string(),
        shop.join("shop.cedarschema").display().to_string(),
    );
    Config::parse(&toml, dir.join("toolgate.toml"))
}

fn http_source(base: &str, timeout_ms: u64) -> String {
    format!(
        "\n[[authorization.sources]]\nkind = \"http\"\ntypes = [\"Order\"]\nurl = \"{base}\"\ntimeout_ms = {timeout_ms}\nttl_seconds = 0\nmax_bytes = 4096\n"
    )
}

fn body(tool: &str, args: &str) -> String {
    let args = toolgate_json::canonical::to_string(&toolgate_json::Value::String(args.into()));
    format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{args}}}}}]}}}}]}}"#
    )
}

fn decide(gate: &Gate, user: &str, tool: &str, args: &str) -> Decision {
    let ctx = Context::new(user, "s-1", 1);
    let d = gate.decide(body(tool, args).as_bytes(), Format::Auto, &ctx, &ctx);
    d.into_decisions().remove(0)
}

fn get_order(gate: &Gate, user: &str, id: &str) -> Decision {
    decide(
        gate,
        user,
        "get_order",
        &format!(r#"{{"order_id":"{id}"}}"#),
    )
}

fn code(d: &Decision) -> &str {
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    d.reasons()[0].code.as_str()
}

#[test]
fn ownership_and_totals_are_checked_against_the_fetched_entity() {
    let server = Server::start();
    server.set(
        "/entities/Order/ord_a",
        Answer::Json(order("ord_a", "alice", 4999)),
    );
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::from_config(&config(dir.path(), &http_source(&server.base(), 2000)).unwrap())
        .unwrap();
    // The owner reads it; another user is denied `not_owner`.
    assert_eq!(get_order(&gate, "alice", "ord_a").verdict(), Verdict::Allow);
    assert_eq!(code(&get_order(&gate, "bob", "ord_a")), "not_owner");
    // The total is the source's: at most 4999.
    let refund = |amount: u64| {
        decide(
            &gate,
            "alice",
            "refund",
            &format!(r#"{{"order_id":"ord_a","amount_cents":{amount},"reason":"late"}}"#),
        )
    };
    assert_eq!(refund(4999).verdict(), Verdict::Allow);
    assert_eq!(code(&refund(5000)), "not_authorized");
    // No such entity (404): like an unknown resource.
    assert_eq!(code(&get_order(&gate, "alice", "ord_none")), "not_owner");
    // A host name is resolved (within the timeout) as well as a literal.
    let named = format!("http://localhost:{}/entities", server.addr.port());
    let by_name = HttpSource::new(&named, Duration::from_millis(2000), 4096).unwrap();
    assert!(by_name.fetch("Order", "ord_a").unwrap().is_some());
    // An id that is not a plain path segment is sent percent-encoded.
    server.set(
        "/entities/Order/a%2F..%2Fb%3Fx",
        Answer::Json(order("a/../b?x", "alice", 1)),
    );
    assert_eq!(
        get_order(&gate, "alice", "a/../b?x").verdict(),
        Verdict::Allow
    );
}

#[test]
fn a_source_that_lies_or_fails_denies_with_its_own_code() {
    let server = Server::start();
    let mut huge = order("ord_huge", "alice", 1);
    huge.insert_str(1, &format!(r#""pad":"{}","#, "x".repeat(8000)));
    let cases: Vec<(&str, Answer)> = vec![
        // Another id, another type, not of the schema's shape.
        ("ord_liar", Answer::Json(order("ord_other", "alice", 1))),
        (
            "ord_type",
            Answer::Json(r#"{"uid":{"type":"User","id":"ord_type"},"attrs":{},"parents":[]}"#.to_owned()),
        ),
        (
            "ord_shape",
            Answer::Json(r#"{"uid":{"type":"Order","id":"ord_shape"},"attrs":{"owner":"alice"},"parents":[]}"#.to_owned()),
        ),
        // Not JSON; JSON the strict parser refuses (a duplicate key).
        ("ord_text", Answer::Json("owner=alice".to_owned())),
        (
            "ord_dup",
            Answer::Json(r#"{"uid":{"type":"Order","id":"ord_dup"},"attrs":{"owner":{"type":"User","id":"bob"},"total_cents":1},"attrs":{"owner":{"type":"User","id":"alice"},"total_cents":1},"parents":[]}"#.to_owned()),
        ),
        // Too large: declared, and without a length.
        ("ord_huge", Answer::Json(huge)),
        ("ord_endless", Answer::Endless),
        // Errors and redirects.
        ("ord_500", Answer::Status(500)),
        ("ord_302", Answer::Status(302)),
        ("ord_chunked", Answer::Raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec())),
        ("ord_short", Answer::Raw(b"HTTP/1.0 200 OK\r\nContent-Length: 50\r\n\r\n{}".to_vec())),
        ("ord_junk", Answer::Raw(b"SSH-2.0-OpenSSH\r\n\r\n".to_vec())),
    ];
    for (id, answer) in &cases {
        server.set(&format!("/entities/Order/{id}"), answer.clone());
    }
    let dir = tempfile::tempdir().unwrap();
    let gate = Gate::from_config(&config(dir.path(), &http_source(&server.base(), 2000)).unwrap())
        .unwrap();
    let mut kinds = Vec::new();
    for (id, _) in &cases {
        let d = get_order(&gate, "alice", id);
        assert_eq!(code(&d), "entity_source_unavailable", "{id}");
        kinds.push(format!("{id}={}", d.policies()[0]));
        assert_eq!(server.hits(&format!("/entities/Order/{id}")), 1, "{id}");
    }
    let kinds: Vec<String> = kinds
        .iter()
        .map(|k| k.replace("toolgate:entity_source:", ""))
        .collect();
    assert_eq!(
        kinds,
        [
            "ord_liar=mismatch",
            "ord_type=mismatch",
            "ord_shape=malformed",
            "ord_text=malformed",
            "ord_dup=malformed",
            "ord_huge=too_large",
            "ord_endless=too_large",
            "ord_500=unavailable",
            "ord_302=unavailable",
            "ord_chunked=malformed",
            "ord_short=malformed",
            "ord_junk=malformed",
        ]
    );
    // Nothing answers at all: the port is closed.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/e", closed.local_addr().unwrap());
    drop(closed);
    let gate = Gate::from_config(&config(dir.path(), &http_source(&base, 2000)).unwrap()).unwrap();
    assert_eq!(
        code(&get_order(&gate, "alice", "ord_a")),
        "entity_source_unavailable"
    );
}

#[test]
fn a_slow_source_times_out_and_denies() {
    let server = Server::start();
    server.set("/entities/Order/ord_hang", Answer::Hang);
    server.set("/entities/Order/ord_stall", Answer::Stall(500));
    let source = HttpSource::new(&server.base(), Duration::from_millis(300), 4096).unwrap();
    for id in ["ord_hang", "ord_stall"] {
        let e = source.fetch("Order", id).unwrap_err();
        assert_eq!(e.kind(), SourceErrorKind::Timeout, "{id}: {e}");
    }
    // And through the gate.
    let dir = tempfile::tempdir().unwrap();
    let gate =
        Gate::from_config(&config(dir.path(), &http_source(&server.base(), 300)).unwrap()).unwrap();
    let d = get_order(&gate, "alice", "ord_hang");
    assert_eq!(code(&d), "entity_source_unavailable");
    assert_eq!(d.policies(), ["toolgate:entity_source:timeout"]);
    server.release_all();
}

#[test]
fn a_cached_answer_is_used_for_its_ttl_and_never_after() {
    let server = Server::start();
    let path = "/entities/Order/ord_flip";
    server.set(path, Answer::Json(order("ord_flip", "alice", 10)));
    let shop = toolgate_testkit::shop_dir();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("people.json"), PEOPLE).unwrap();
    let now = Arc::new(Mutex::new(Instant::now()));
    let clock = Arc::clone(&now);
    let http: Arc<dyn EntitySource> =
        Arc::new(HttpSource::new(&server.base(), Duration::from_millis(2000), 4096).unwrap());
    let cached = Arc::new(
        CachedSource::new(http, Duration::from_secs(5), 100)
            .with_clock(Arc::new(move || *clock.lock().unwrap())),
    );
    let cedar = CedarAuthorizer::load(
        &shop.join("policies.cedar"),
        &shop.join("shop.cedarschema"),
        Some(&dir.path().join("people.json")),
    )
    .unwrap()
    .with_entity_source(
        ["Order"],
        Arc::clone(&cached) as Arc<dyn EntitySource>,
        dir.path(),
    )
    .unwrap();
    let registry = Config::parse(TOOLS, dir.path().join("t.toml"))
        .unwrap()
        .registry()
        .clone();
    let gate = Gate::builder(registry).authorizer(cedar).build().unwrap();
    assert_eq!(
        get_order(&gate, "alice", "ord_flip").verdict(),
        Verdict::Allow
    );
    // The order changes hands, then the source goes down.
    server.set(path, Answer::Json(order("ord_flip", "bob", 10)));
    assert_eq!(
        get_order(&gate, "alice", "ord_flip").verdict(),
        Verdict::Allow
    );
    assert_eq!(server.hits(path), 1, "within its TTL the answer is cached");
    *now.lock().unwrap() += Duration::from_secs(5);
    assert_eq!(code(&get_order(&gate, "alice", "ord_flip")), "not_owner");
    assert_eq!(server.hits(path), 2);
    server.set(path, Answer::Status(503));
    *now.lock().unwrap() += Duration::from_secs(5);
    assert_eq!(
        code(&get_order(&gate, "alice", "ord_flip")),
        "entity_source_unavailable"
    );
    // The old answer is never served after the failure either.
    server.set(path, Answer::Json(order("ord_flip", "alice", 10)));
    assert_eq!(
        get_order(&gate, "alice", "ord_flip").verdict(),
        Verdict::Allow
    );
    assert_eq!(server.hits(path), 4);
    assert!(cached.len() <= 100);
}

#[test]
fn sources_are_checked_when_the_config_loads() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |sources: &str| {
        config(dir.path(), sources)
            .err()
            .map(|e| e.code().as_str().to_owned())
    };
    let entry = |rest: &str| format!("\n[[authorization.sources]]\n{rest}\n");
    for (rest, code) in [
        ("kind = \"http\"\ntypes = [\"Order\"]", "missing_key"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"https://e.example/x\"", "invalid_value"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://u:p@e.example/x\"", "invalid_value"),
        ("kind = \"http\"\ntypes = []\nurl = \"http://e.example/\"", "invalid_value"),
        ("kind = \"http\"\ntypes = [\"Or der\"]\nurl = \"http://e.example/\"", "invalid_value"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"\ntimeout_ms = 0", "invalid_limit"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"\ntimeout_ms = 30001", "invalid_limit"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"\nmax_entries = 0", "invalid_limit"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"\nmax_bytes = 2000000", "invalid_limit"),
        ("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"\nquery = \"select 1\"", "conflicting_keys"),
        ("kind = \"postgres\"\ntypes = [\"Order\"]\nurl = \"postgres://h/d\"", "missing_key"),
        ("kind = \"ftp\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"", "invalid_value"),
    ] {
        assert_eq!(refused(&entry(rest)).as_deref(), Some(code), "{rest}");
    }
    let twice = format!(
        "{}{}",
        entry("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\""),
        entry("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://f.example/\"")
    );
    assert_eq!(refused(&twice).as_deref(), Some("invalid_value"));
    // A type the schema lacks, or one the context may also supply: refused
    // when the authorizer loads.
    let c = config(
        dir.path(),
        &entry("kind = \"http\"\ntypes = [\"Invoice\"]\nurl = \"http://e.example/\""),
    )
    .unwrap();
    assert_eq!(
        authz::from_config(&c).unwrap_err().code().as_str(),
        "entity_source"
    );
    let both = format!(
        "context_entities = [\"Order\"]\n{}",
        entry("kind = \"http\"\ntypes = [\"Order\"]\nurl = \"http://e.example/\"")
    );
    let c = config(dir.path(), &both).unwrap();
    assert_eq!(
        authz::from_config(&c).unwrap_err().code().as_str(),
        "entity_source"
    );
    // A PostgreSQL source needs the store crate's connector: the gate alone
    // refuses to load without it rather than run without the data.
    let pg = entry("kind = \"postgres\"\ntypes = [\"Order\"]\nurl = \"postgres://127.0.0.1/x\"\nquery = \"select $1::text || $2\"");
    let c = config(dir.path(), &pg).unwrap();
    let e = authz::from_config(&c).unwrap_err();
    assert_eq!(e.code().as_str(), "entity_source");
    assert!(e.to_string().contains("toolgate-store"), "{e}");
}
