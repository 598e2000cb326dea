//! What the API proxy's SDK tests share (`proxy.rs`, `proxy_request.rs`):
//! the Python with the official SDKs, the test folder, the proxy started
//! and its port read from the line it writes, and a child process killed
//! on drop.

#![allow(dead_code, reason = "each test file uses part of the helpers")]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// SHA-256 of `proxy-demo-token`, the token the client sends.
pub const TOKEN_SHA256: &str = "fd99d33b23d315c0d2c74d524a4a46c9a57f57a82ad987a17dd16c03a2b9cf66";

/// A child process, killed and reaped when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A Python with `openai` and `anthropic`: `TOOLGATE_PROXY_PYTHON`, else
/// the workspace's `target/py/venv`.
pub fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("TOOLGATE_PROXY_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py/venv/bin/python")
        });
    let ok = Command::new(&candidate)
        .args(["-c", "import openai, anthropic"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(candidate)
}

/// `tests/proxy`: the canned upstreams and the SDK scripts.
pub fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/proxy")
}

/// Starts `toolgate proxy --config CONFIG --listen 127.0.0.1:0` and waits
/// for the line it writes once it listens (no polling); the proxy's port.
/// Standard error is drained by a thread afterwards.
pub fn start_proxy(config: &Path) -> (Killed, u16) {
    let mut child = Command::new(toolgate_testkit::toolgate_path())
        .args(["proxy", "--config"])
        .arg(config)
        .args(["--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let port = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("the proxy ended before it listened: {seen:?}");
        };
        if let Some(rest) = line.strip_prefix("toolgate: proxying on http://127.0.0.1:") {
            break rest.parse::<u16>().unwrap();
        }
        seen.push(line);
    };
    std::thread::spawn(move || lines.for_each(drop));
    (Killed(child), port)
}
