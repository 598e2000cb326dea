//! What the service's tests share: the shop example's config with this
//! test's `[server]` table, its store in a temporary folder and three bearer
//! tokens (one per role); the service on it; and one request through it
//! with `oneshot` (no sockets).
#![allow(dead_code, reason = "each test file uses a part of it")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use sha2::{Digest as _, Sha256};
use toolgate::config::Config;
use toolgate_json::Value;
use toolgate_server::{app, AppState};
use toolgate_store::{Clock as _, ManualClock, SystemClock};
use toolgate_testkit::shop_dir;
use tower::ServiceExt as _;

pub const AGENT: &str = "agent-secret";
pub const APPROVER: &str = "approver-secret";
pub const ADMIN: &str = "admin-secret";

fn hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Copies the shop example into `dir` with this test's `[server]` table;
/// returns the config file's path.
pub fn write_shop(dir: &Path) -> PathBuf {
    toolgate_testkit::copy_shop(dir);
    let path = dir.join("toolgate.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, with_test_server(&text, "", "", "")).unwrap();
    path
}

/// A shop config `text` with this test's `[server]` table (`server_extra`
/// in it), the three tokens (the agent's table with `agent_extra`), and
/// `extra` appended (tables of its own).
pub fn with_test_server(text: &str, server_extra: &str, agent_extra: &str, extra: &str) -> String {
    let start = text.find("[server]").unwrap();
    let end = text.find("[authorization]").unwrap();
    let mut text = format!(
        "{}[server]\nlisten = \"127.0.0.1:0\"\n{server_extra}\n\n{}",
        &text[..start],
        &text[end..]
    );
    for (token, role) in [(AGENT, "agent"), (APPROVER, "approver"), (ADMIN, "admin")] {
        text.push_str(&format!(
            "\n[[server.token]]\nname = \"{role}-1\"\nsha256 = \"{}\"\nrole = \"{role}\"\n",
            hex(token)
        ));
        if role == "agent" && !agent_extra.is_empty() {
            text.push_str(agent_extra);
            text.push('\n');
        }
    }
    text.push_str(extra);
    text
}

/// The shop's config, read where the example is, with its store in `dir`
/// and [`with_test_server`]'s table, tokens and tables.
pub fn config_in(dir: &Path, server_extra: &str, agent_extra: &str, extra: &str) -> Config {
    let text = std::fs::read_to_string(shop_dir().join("toolgate.toml")).unwrap();
    let db = dir.join("toolgate.db");
    let text = text.replace(
        "url = \"sqlite://toolgate.db\"",
        &format!("url = \"sqlite://{}\"", db.display()),
    );
    let text = with_test_server(&text, server_extra, agent_extra, extra);
    Config::parse(&text, shop_dir().join("toolgate.toml")).unwrap()
}

/// A manual clock that starts at the system's time now.
pub fn manual_clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(SystemClock::new().now()))
}

/// The service on a config, and the temporary folder holding its store.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub app: Router,
    /// The service's state, for its signals (`approval_waits`).
    pub state: AppState,
}

impl Fixture {
    /// The service on [`config_in`] a fresh folder.
    pub fn new(server_extra: &str, agent_extra: &str, extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path(), server_extra, agent_extra, extra);
        Self::on(dir, &config)
    }

    /// The service on a copy of the shop in a fresh folder
    /// ([`write_shop`]), its config text first changed by `edit`.
    pub fn copied(edit: impl FnOnce(String) -> String) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = write_shop(dir.path());
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(text)).unwrap();
        let config = Config::load(&path).unwrap();
        Self::on(dir, &config)
    }

    /// The service on `config`, whose store is in `dir`.
    pub fn on(dir: tempfile::TempDir, config: &Config) -> Self {
        let state = AppState::from_config(config).unwrap();
        Self {
            dir,
            app: app(state.clone()),
            state,
        }
    }

    /// [`Fixture::copied`] on a manual clock (the service, its gate and
    /// its store take "now" from it).
    pub fn copied_on(edit: impl FnOnce(String) -> String, clock: &Arc<ManualClock>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = write_shop(dir.path());
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(text)).unwrap();
        let config = Config::load(&path).unwrap();
        let state = AppState::from_config_on(&config, Arc::clone(clock) as _).unwrap();
        Self {
            dir,
            app: app(state.clone()),
            state,
        }
    }

    /// [`Fixture::new`] on a manual clock.
    pub fn new_on(
        server_extra: &str,
        agent_extra: &str,
        extra: &str,
        clock: &Arc<ManualClock>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = config_in(dir.path(), server_extra, agent_extra, extra);
        let state = AppState::from_config_on(&config, Arc::clone(clock) as _).unwrap();
        Self {
            dir,
            app: app(state.clone()),
            state,
        }
    }
}

/// One request through the service (`oneshot`, no socket), with a bearer
/// `token` and a `content_type` when given: the answer's status and body.
pub async fn send(
    app: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: &str,
) -> (StatusCode, Vec<u8>) {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    if let Some(c) = content_type {
        req = req.header("content-type", c);
    }
    let req = req.body(Body::from(body.to_owned())).unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, bytes.to_vec())
}

/// [`send`], with the answer's body as JSON, or (not JSON) as a JSON
/// string of its text.
pub async fn call(
    app: &Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: &str,
) -> (StatusCode, Value<'static>) {
    let (status, bytes) = send(app, method, uri, token, content_type, body).await;
    let value = toolgate_json::from_slice(&bytes)
        .map(Value::into_owned)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned().into()));
    (status, value)
}

/// The string at `pointer` in `v`.
pub fn s<'a>(v: &'a Value<'_>, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {}", v.to_canonical_string()))
}
