//! `toolgate mcp --listen` as the HTTP tests run it: the configs (the
//! example's tools, alice's and bob's tokens, upstreams), the endpoint as a
//! child process, raw HTTP exchanges with it, and the SDK's HTTP client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use toolgate_json::Value;
use toolgate_testkit::examples_dir;

use super::{sha256_hex, Folder as Dir, Steps};

/// The token of alice (`[[mcp.token]]` in every config here).
pub const ALICE: &str = "demo-token";

/// sha256("demo-token").
pub const ALICE_SHA: &str = "7c43ef5ae21d43ce2743f770c68e24def1a43ee2f416d2438410c8af7af2ff2c";

/// The token of bob.
pub const BOB: &str = "bob-token";

/// A folder whose config is `examples/mcp/toolgate.toml` (tool names
/// prefixed with `prefix`), then alice's and bob's tokens and `extra`
/// (upstreams, other keys).
pub fn shop(prefix: &str, extra: &str) -> Dir {
    shop_with_prefixes(&[prefix], extra)
}

/// The same with the example's tools once per prefix.
pub fn shop_with_prefixes(prefixes: &[&str], extra: &str) -> Dir {
    // A call waits for the upstream's first catalog at most the call
    // timeout: 10 s rather than the example's 3, for a Python upstream
    // that starts slowly on a loaded machine.
    let text = std::fs::read_to_string(examples_dir().join("mcp/toolgate.toml"))
        .unwrap()
        .replace("call_timeout_seconds = 3 ", "call_timeout_seconds = 10");
    assert!(text.contains("call_timeout_seconds = 10"));
    let at = text.find("[[tool]]").unwrap();
    let (head, tools) = text.split_at(at);
    let mut base = head.to_owned();
    for prefix in prefixes {
        base.push_str(&tools.replace("name = \"", &format!("name = \"{prefix}")));
        base.push('\n');
    }
    let bob = sha256_hex(BOB);
    let text = format!(
        "{base}\n[[mcp.token]]\nsha256 = \"{ALICE_SHA}\"\nuser = \"alice\"\nsession = \"alice-desk\"\n\
         [[mcp.token]]\nsha256 = \"{bob}\"\nuser = \"bob\"\n{extra}"
    );
    Dir::with_text(&text)
}

/// A stdio upstream: server.py's tools behind `tests/mcp/WRAPPER`, a loop
/// of the SDK that speaks one spec era only.
pub fn one_era_upstream(python: &Path, wrapper: &str) -> String {
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(wrapper);
    format!(
        "[[mcp.upstream]]\nname = \"shop\"\ncommand = \"{}\"\nargs = [\"{}\", \"{}\"]\nenv = [\"MCP_TEST_SEEN\"]\n",
        python.display(),
        wrapper.display(),
        examples_dir().join("mcp/server.py").display()
    )
}

/// A stdio upstream: server.py as a child of each session.
pub fn stdio_upstream(python: &Path) -> String {
    format!(
        "[[mcp.upstream]]\nname = \"shop\"\ncommand = \"{}\"\nargs = [\"{}\"]\nenv = [\"MCP_TEST_SEEN\"]\n",
        python.display(),
        examples_dir().join("mcp/server.py").display()
    )
}

/// A running `toolgate mcp --listen 127.0.0.1:0`, killed when dropped.
pub struct Endpoint {
    pub child: Child,
    pub port: u16,
    /// Its standard error's lines, and a signal for each new one.
    stderr: Arc<(Mutex<Vec<String>>, Condvar)>,
}

impl Endpoint {
    pub fn start(dir: &Dir) -> Self {
        let mut child = Command::new(toolgate_testkit::toolgate_path())
            .args(["mcp", "--config"])
            .arg(dir.config())
            .args(["--listen", "127.0.0.1:0"])
            .env("MCP_TEST_SEEN", dir.seen_file())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let keep = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("toolgate: mcp: serving on http://127.0.0.1:")
                {
                    let _ = tx.send(rest.trim_end_matches("/mcp").parse::<u16>().unwrap());
                }
                let (lines, grew) = &*keep;
                lines.lock().unwrap().push(line);
                grew.notify_all();
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no address: {:?}", stderr.0.lock().unwrap()));
        Self {
            child,
            port,
            stderr,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub fn stderr(&self) -> String {
        self.stderr.0.lock().unwrap().join("\n")
    }

    /// Waits (on the reader's signal, at most `limit`) until standard error
    /// holds `needle`; fails the test with what it holds otherwise.
    pub fn wait_for_stderr(&self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        let (lines, grew) = &*self.stderr;
        let mut held = lines.lock().unwrap();
        while !held.join("\n").contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no `{needle}` in:\n{}", held.join("\n"));
            held = grew.wait_timeout(held, left).unwrap().0;
        }
    }

    /// One raw HTTP/1.1 exchange on a fresh connection.
    pub fn http(&self, method: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut req = format!(
            "{method} /mcp HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("host: 127.0.0.1:{}\r\n", self.port));
        }
        for (n, v) in headers {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        s.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        Answer::parse(&raw)
    }

    /// A POST with alice's token, JSON only.
    pub fn post(&self, extra: &[(&str, &str)], body: &str) -> Answer {
        let auth = format!("Bearer {ALICE}");
        let mut headers = vec![
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
            ("accept", "application/json"),
        ];
        headers.extend_from_slice(extra);
        self.http("POST", &headers, body)
    }

    /// A new session-era session; its id.
    pub fn initialize(&self, token: &str) -> String {
        let auth = format!("Bearer {token}");
        let a = self.http(
            "POST",
            &[
                ("authorization", &auth),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        );
        assert_eq!(a.status, 200, "{a:?}");
        let sid = a.header("mcp-session-id").unwrap().to_owned();
        let n = self.http(
            "POST",
            &[
                ("authorization", &auth),
                ("content-type", "application/json"),
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(n.status, 202, "{n:?}");
        sid
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn parse(raw: &[u8]) -> Self {
        let text = String::from_utf8_lossy(raw).into_owned();
        let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked {
            let mut out = String::new();
            let mut rest = rest;
            while let Some((size, after)) = rest.split_once("\r\n") {
                let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                if n == 0 {
                    break;
                }
                out.push_str(&after[..n]);
                rest = after[n..].trim_start_matches("\r\n");
            }
            out
        } else {
            rest.to_owned()
        };
        Self {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value<'static> {
        toolgate_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {self:?}"))
            .into_owned()
    }
}

/// Runs http_client.py in `mode`; its steps by name.
pub fn sdk_client(python: &Path, url: &str, token: &str, mode: &str, prefix: &str) -> Steps {
    let out = Command::new(python)
        .arg(examples_dir().join("mcp/http_client.py"))
        .args([url, token, mode, prefix])
        .output()
        .unwrap();
    Steps::of(&out, &format!("client ({mode})"))
}
