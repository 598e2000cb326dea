//! What the API proxy's SDK tests share (`proxy.rs`, `proxy_request.rs`):
//! the Python with the official SDKs, the test folder, a free port, the
//! wait for the proxy to listen, and a child process killed on drop.

#![allow(dead_code, reason = "each test file uses part of the helpers")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

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

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until the proxy `child` accepts connections on `port` (fails if
/// it exits first or takes over 30 s).
pub fn wait_for(port: u16, child: &mut Child) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the proxy exited: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the proxy did not listen on {port}");
}
