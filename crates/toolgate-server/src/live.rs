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
//! What a reload does not change: the store (a different `[store] url` or
//! `[gate] escalate_after` is refused), the `[server]` table (listen address, body cap, timeouts,
//! tokens). Those take a restart.

use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use toolgate::config::Config;
use toolgate::Gate;
use toolgate_json::{canonical, Number, Object, Value};
use toolgate_store::StoreGate;
use toolgate_store::{AuditEntry, Store, Verdict};

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
}

/// The gate a config describes, without its store.
pub fn gate_from_config(config: &Config) -> Result<Gate, BuildError> {
    Gate::from_config(config).map_err(|e| match e {
        // The service's messages name the failing part alone.
        toolgate::FromConfigError::Authorization(e) => BuildError::from(e),
        toolgate::FromConfigError::Gate(e) => BuildError::from(e),
        e => BuildError::from(e),
    })
}

/// Loads the config at `source` and builds its gate on `store`.
fn rebuild(source: &Source, store: Arc<dyn Store>) -> Result<(StoreGate, usize), String> {
    let config = Config::load(&source.path).map_err(|e| e.to_string())?;
    if config.store().url() != source.store_url {
        return Err(format!(
            "{}: [store] url changed from `{}` to `{}`: a reload keeps the store; restart the service to change it",
            source.path.display(),
            source.store_url,
            config.store().url()
        ));
    }
    let escalate_after = config.gate().escalate_after();
    if escalate_after != source.escalate_after {
        return Err(format!(
            "{}: [gate] escalate_after changed from {} to {escalate_after}: the store applies it; restart the service to change it",
            source.path.display(),
            source.escalate_after,
        ));
    }
    let gate = gate_from_config(&config)
        .map_err(|e| format!("{}: cannot build the gate: {e}", source.path.display()))?;
    let tools = gate.registry().len();
    let gate = StoreGate::new(gate, store).configured(&config);
    Ok((gate, tools))
}

/// `POST /v1/reload` (admin): `200 {"status": "applied", "config", "tools"}`,
/// or `422 invalid_config` with the running config kept.
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
    let outcome = tokio::task::spawn_blocking(move || {
        let store = Arc::clone(inner.gate.store());
        let built = rebuild(&source, Arc::clone(&store));
        let entry = AuditEntry::new(crate::state::now(), Verdict::ConfigReload).actor(actor);
        let entry = match &built {
            Ok(_) => entry.reason("applied"),
            Err(why) => entry.reason("refused").note(why.clone()),
        };
        // The record first: a swap that cannot be recorded does not happen.
        store.append(entry)?;
        Ok::<_, toolgate_store::Error>(built.map(|(gate, tools)| {
            inner.gate.replace(gate);
            tools
        }))
    })
    .await
    .map_err(|_| ApiError::store_unavailable("the reload did not finish"))??;
    match outcome {
        Ok(tools) => {
            let mut o = Object::new();
            o.insert("status", Value::String("applied".into()));
            o.insert("config", Value::String(path.into()));
            o.insert(
                "tools",
                Value::Number(Number::from(u64::try_from(tools).unwrap_or(u64::MAX))),
            );
            Ok(json_response(
                StatusCode::OK,
                canonical::to_string(&Value::Object(o)),
            ))
        }
        Err(why) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_config",
            format!("the config was not reloaded; the running one is kept: {why}"),
        )),
    }
}
