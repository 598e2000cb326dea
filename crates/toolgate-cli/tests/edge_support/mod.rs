//! What the edge tests share (`edge.rs`, `edge_sse.rs`): the three front
//! ends started from one copy of the shop's config, each port read from the
//! line the child writes once it listens (no polling), and one raw HTTP
//! exchange.

#![allow(dead_code, reason = "each test file uses part of the helpers")]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// sha256("demo-token"), the MCP client's token.
pub const MCP_TOKEN_SHA: &str = "7c43ef5ae21d43ce2743f770c68e24def1a43ee2f416d2438410c8af7af2ff2c";

/// A listener of one front end, killed when dropped.
pub struct Front {
    pub name: &'static str,
    pub child: Child,
    pub port: u16,
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Copies the shop into `dir` and writes its config with `server` added
/// to the `[server]` table, `edit` applied to the text, and an `[mcp]`
/// endpoint for alice whose upstream is `mcp_url`; the config's path.
pub fn shop_config(
    dir: &Path,
    server: &str,
    mcp_url: &str,
    edit: impl Fn(String) -> String,
) -> std::path::PathBuf {
    toolgate_testkit::copy_shop(dir);
    let config = dir.join("toolgate.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.contains("listen = \"127.0.0.1:8080\""));
    let text = text.replacen(
        "listen = \"127.0.0.1:8080\"",
        &format!("listen = \"127.0.0.1:0\"\n{server}"),
        1,
    );
    let text = format!(
        "{}\n[mcp]\n[[mcp.token]]\nsha256 = \"{MCP_TOKEN_SHA}\"\nuser = \"alice\"\n\
         [[mcp.upstream]]\nname = \"shop\"\nurl = \"{mcp_url}\"\n",
        edit(text)
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// The three front ends on `config`: `serve`, `mcp`, `proxy`.
pub fn start_all(config: &Path) -> Vec<Front> {
    vec![
        start("serve", config, &["serve"]),
        start("mcp", config, &["mcp", "--listen", "127.0.0.1:0"]),
        start("proxy", config, &["proxy", "--listen", "127.0.0.1:0"]),
    ]
}

/// Starts `toolgate ARGS --config CONFIG` and reads its port from the line
/// it writes once it listens (`… on http://127.0.0.1:PORT…`).
pub fn start(name: &'static str, config: &Path, args: &[&str]) -> Front {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .arg("--config")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let port = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("{name} ended before it listened: {seen:?}");
        };
        if let Some((_, rest)) = line.split_once(" on http://127.0.0.1:") {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            break digits.parse::<u16>().unwrap();
        }
        seen.push(line);
    };
    std::thread::spawn(move || lines.for_each(drop));
    Front { name, child, port }
}

/// One answer: status, headers (names in lower case), body (a chunked one
/// decoded).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `METHOD PATH` on a new connection to `port` with `headers` and `body`
/// (`Connection: close`); the whole answer.
pub fn exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut out = req.into_bytes();
    out.extend_from_slice(body);
    s.write_all(&out).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    parse(&raw)
}

fn parse(raw: &[u8]) -> Answer {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head: {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut rest = &raw[end + 4..];
    let mut lines = head.split("\r\n");
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
        let mut out = Vec::new();
        loop {
            let line = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = std::str::from_utf8(&rest[..line]).unwrap();
            let size = size.split(';').next().unwrap().trim();
            let n = usize::from_str_radix(size, 16).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&rest[line + 2..line + 2 + n]);
            rest = &rest[line + 2 + n + 2..];
        }
        out
    } else {
        rest.to_vec()
    };
    Answer {
        status,
        headers,
        body,
    }
}
