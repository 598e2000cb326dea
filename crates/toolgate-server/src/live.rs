//! The gate the service decides with, and `POST /v1/reload`, which swaps it.
//!
//! A reload re-reads the config file the service started from (and the
//! schemas, tool lists, policies and entities it names), builds a new gate on
//! the same store, and swaps it in one step: a decision already running keeps
//! the gate it started with, the next one gets the new gate. A config that
//! does not load or build changes nothing: the running gate stays, and the
//! answer says what is wrong and where (file, line, member). Either way the
//! reload is audited (`config_reload`, reasons `applied` or `refused`).
//!
//! The `[server]` table's tokens (with their roles and users) and
//! `metrics_auth` are applied too: a revoked token is refused from the
//! next request on, page sessions included. What a reload cannot change is
//! refused, and nothing of that file is applied: the store (a different
//! `[store] url` or `[gate] escalate_after`: `invalid_config`), and the
//! `[server]` keys read once at start (`listen`, `max_body_bytes`,
//! `header_timeout_seconds`, `body_timeout_seconds`, `max_connections`,
//! `store_poll_ms`: `409 restart_required`, naming them; and so are the
//! identity tables `[jwt]`, `[login]` and `[oidc]`, read once at start:
//! `409 restart_required`, naming the tables). A reload never
//! answers `applied` for a change it ignored.

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use toolgate::config::Config;
use toolgate::Gate;
use toolgate_edge::config::ServerConfig;
use toolgate_json::{canonical, Number, Object, Value};
use toolgate_store::StoreGate;
use toolgate_store::{AuditEntry, AuditVerdict, Store};

use crate::auth::Admin;
use crate::error::{json_response, ApiError};
use crate::state::{AppState, BuildError};

/// The current gate, swapped whole by a reload.
pub struct LiveGate {
    current: RwLock<Arc<StoreGate>>,
    store: Arc<dyn Store>,
}

/// One gate, held for as long as a caller uses it (a reload does not pull
/// it away). Dereferences to the [`Gate`].
pub struct GateRef(Arc<StoreGate>);

impl Deref for GateRef {
    type Target = Gate;

    fn deref(&self) -> &Gate {
        self.0.gate()
    }
}

impl LiveGate {
    /// Starts with `gate`; reloads keep its store.
    pub fn new(gate: StoreGate) -> Self {
        let store = Arc::clone(gate.store());
        Self {
            current: RwLock::new(Arc::new(gate)),
            store,
        }
    }

    /// The current store gate.
    pub fn current(&self) -> Arc<StoreGate> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The current gate (tools, limits, authorization).
    pub fn gate(&self) -> GateRef {
        GateRef(self.current())
    }

    /// The store, the same across reloads.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Makes `gate` the current one.
    pub fn replace(&self, gate: StoreGate) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(gate);
    }
}

/// Where a service built by [`AppState::from_config`] came from: what a
/// reload re-reads and what it may not change.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub(crate) path: PathBuf,
    pub(crate) store_url: String,
    /// `[gate] escalate_after`, which the store applies.
    pub(crate) escalate_after: u32,
    /// `[store] checkpoint_*`, which the service reads at start.
    pub(crate) checkpoint: Option<toolgate::config::CheckpointConfig>,
    /// `[jwt]`, `[login]` and `[oidc]`, which the service reads at start
    /// (the JWKS it fetches, the login it offers).
    pub(crate) identity: Identity,
}

/// The identity tables as the service started with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) jwt: Option<toolgate_edge::config::JwtConfig>,
    pub(crate) login: Option<toolgate_edge::config::LoginConfig>,
    pub(crate) oidc: Option<toolgate_edge::config::OidcConfig>,
}

impl Identity {
    pub(crate) fn of(config: &Config) -> Result<Self, toolgate::config::Error> {
        Ok(Self {
            jwt: toolgate_edge::config::JwtConfig::from_config(config)?,
            login: toolgate_edge::config::LoginConfig::from_config(config)?,
            oidc: toolgate_edge::config::OidcConfig::from_config(config)?,
        })
    }

    /// The tables that differ in `new`, by name.
    fn changed(&self, new: &Self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.jwt != new.jwt {
            out.push("[jwt]");
        }
        if self.login != new.login {
            out.push("[login]");
        }
        if self.oidc != new.oidc {
            out.push("[oidc]");
        }
        out
    }
}

/// The gate a config describes, without its store.
pub fn gate_from_config(config: &Config) -> Result<Gate, BuildError> {
    Gate::from_config_with(config, &toolgate_store::connect_source).map_err(|e| match e {
        // The service's messages name the failing part alone.
        toolgate::FromConfigError::Authorization(e) => BuildError::from(e),
        toolgate::FromConfigError::Gate(e) => BuildError::from(e),
        e => BuildError::from(e),
    })
}

/// Why a reload was refused.
enum Refused {
    /// The file does not load or build, or changes the store.
    Invalid(String),
    /// It changes what only a restart applies.
    Restart(String),
}

impl Refused {
    fn message(&self) -> &str {
        match self {
            Self::Invalid(m) | Self::Restart(m) => m,
        }
    }
}

impl From<String> for Refused {
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

/// A config that loaded: its gate, its number of tools, its `[server]`
/// table and the `[server]` keys it changes that a reload applies.
struct Rebuilt {
    gate: StoreGate,
    tools: usize,
    server: ServerConfig,
    applied: Vec<&'static str>,
}

/// The `[server]` keys read once, when the service starts, whose values
/// differ between `running` and `new`.
fn restart_keys(running: &ServerConfig, new: &ServerConfig) -> Vec<&'static str> {
    let mut keys = Vec::new();
    if running.listen() != new.listen() {
        keys.push("listen");
    }
    if running.max_body_bytes() != new.max_body_bytes() {
        keys.push("max_body_bytes");
    }
    if running.header_timeout() != new.header_timeout() {
        keys.push("header_timeout_seconds");
    }
    if running.body_timeout() != new.body_timeout() {
        keys.push("body_timeout_seconds");
    }
    if running.max_connections() != new.max_connections() {
        keys.push("max_connections");
    }
    if running.store_poll() != new.store_poll() {
        keys.push("store_poll_ms");
    }
    keys
}

/// The `[server]` keys a reload applies whose values differ.
fn applied_keys(running: &ServerConfig, new: &ServerConfig) -> Vec<&'static str> {
    let mut keys = Vec::new();
    if running.tokens() != new.tokens() {
        keys.push("token");
    }
    if running.metrics_auth() != new.metrics_auth() {
        keys.push("metrics_auth");
    }
    keys
}

/// Loads the config at `source` and builds its gate on `store`; refuses
/// what differs from the `running` `[server]` table and only a restart
/// applies.
fn rebuild(
    source: &Source,
    store: Arc<dyn Store>,
    running: &ServerConfig,
    clock: Arc<dyn toolgate_store::Clock>,
) -> Result<Rebuilt, Refused> {
    let config = toolgate_edge::config::load(&source.path).map_err(|e| e.to_string())?;
    let server = &ServerConfig::from_config(&config).map_err(|e| e.to_string())?;
    let mut restart = restart_keys(running, server);
    let applied = applied_keys(running, server);
    if restart.is_empty() && applied.is_empty() && running != server {
        // A key this version neither applies nor names: not "applied".
        restart.push("[server]");
    }
    if !restart.is_empty() {
        let keys: Vec<String> = restart.iter().map(|k| format!("`{k}`")).collect();
        return Err(Refused::Restart(format!(
            "{}: [server] {} changed: a reload does not apply {}; restart the service to change {}",
            source.path.display(),
            keys.join(", "),
            if keys.len() == 1 { "it" } else { "them" },
            if keys.len() == 1 { "it" } else { "them" },
        )));
    }
    if config.store().url() != source.store_url {
        return Err(format!(
            "{}: [store] url changed from `{}` to `{}`: a reload keeps the store; restart the service to change it",
            source.path.display(),
            source.store_url,
            config.store().url()
        )
        .into());
    }
    let escalate_after = config.gate().escalate_after();
    if escalate_after != source.escalate_after {
        return Err(format!(
            "{}: [gate] escalate_after changed from {} to {escalate_after}: the store applies it; restart the service to change it",
            source.path.display(),
            source.escalate_after,
        )
        .into());
    }
    if config.store().checkpoint() != source.checkpoint.as_ref() {
        return Err(Refused::Restart(format!(
            "{}: [store] `checkpoint_key`, `checkpoint_sink` or `checkpoint_seconds` changed: a reload does not apply them; restart the service to change them",
            source.path.display()
        )));
    }
    let identity = Identity::of(&config).map_err(|e| e.to_string())?;
    let changed = source.identity.changed(&identity);
    if !changed.is_empty() {
        return Err(Refused::Restart(format!(
            "{}: {} changed: the service reads the identity tables once at start (the JWT keys, the page's login); restart the service to change {}",
            source.path.display(),
            changed.join(", "),
            if changed.len() == 1 { "it" } else { "them" },
        )));
    }
    let gate = gate_from_config(&config)
        .map_err(|e| format!("{}: cannot build the gate: {e}", source.path.display()))?;
    let tools = gate.registry().len();
    let gate = StoreGate::new(gate, store)
        .configured(&config)
        .with_clock(clock);
    Ok(Rebuilt {
        gate,
        tools,
        server: server.clone(),
        applied,
    })
}

/// `POST /v1/reload` (admin): `200 {"status": "applied", "config", "tools",
/// "server"}` (`server`: the `[server]` keys it changed, `token` and
/// `metrics_auth`), or `422 invalid_config` / `409 restart_required` with
/// the running config kept.
pub(crate) async fn reload(
    State(state): State<AppState>,
    Admin(caller): Admin,
) -> Result<Response, ApiError> {
    let Some(source) = state.inner.source.clone() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            "the service was not started from a config file: nothing to reload",
        ));
    };
    // One reload at a time, so the audit log's order is the swaps' order.
    let _one = state.inner.reload_lock.lock().await;
    let inner = Arc::clone(&state.inner);
    let actor = caller.actor;
    let path = source.path.display().to_string();
    let running = state.server();
    let applied_state = state.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        let store = Arc::clone(inner.gate.store());
        let built = rebuild(
            &source,
            Arc::clone(&store),
            &running,
            Arc::clone(&inner.clock),
        );
        let entry = AuditEntry::new(inner.clock.now(), AuditVerdict::ConfigReload).actor(actor);
        let entry = match &built {
            Ok(b) if b.applied.is_empty() => entry.reason("applied"),
            Ok(b) => entry
                .reason("applied")
                .note(format!("[server] {} applied", b.applied.join(", "))),
            Err(why) => entry.reason("refused").note(why.message().to_owned()),
        };
        // The record first: a swap that cannot be recorded does not happen.
        store.append(entry)?;
        Ok::<_, toolgate_store::Error>(built.map(|b| {
            inner.gate.replace(b.gate);
            applied_state.set_server(b.server);
            (b.tools, b.applied)
        }))
    })
    .await
    .map_err(|_| ApiError::store_unavailable("the reload did not finish"))??;
    match outcome {
        Ok((tools, applied)) => {
            let mut o = Object::new();
            o.insert("status", Value::String("applied".into()));
            o.insert("config", Value::String(path.into()));
            o.insert(
                "tools",
                Value::Number(Number::from(u64::try_from(tools).unwrap_or(u64::MAX))),
            );
            o.insert(
                "server",
                Value::Array(
                    applied
                        .into_iter()
                        .map(|k| Value::String(k.into()))
                        .collect(),
                ),
            );
            Ok(json_response(
                StatusCode::OK,
                canonical::to_string(&Value::Object(o)),
            ))
        }
        Err(Refused::Invalid(why)) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_config",
            format!("the config was not reloaded; the running one is kept: {why}"),
        )),
        Err(Refused::Restart(why)) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "restart_required",
            format!("the config was not reloaded; the running one is kept: {why}"),
        )),
    }
}
