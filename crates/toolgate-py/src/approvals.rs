//! `Approvals` and `Approval` (built with the store): the human side of
//! approvals, as `toolgate approvals list|show|approve|deny|grant` does it,
//! over the same store calls (so the same rules and the same audit records).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use toolgate_store::{
    Approval as StoreApproval, ApprovalFilter, ApprovalId, ApprovalState, ErrorCode, Store,
    StoreOptions, Timestamp,
};

use crate::gate::ConfigError;
use crate::response::py_repr;

/// One approval, as it stands when it was read.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Approval {
    /// The id (as the CLI and ``Call.approval`` print it).
    #[pyo3(get)]
    id: String,
    /// ``single`` or ``standing``.
    #[pyo3(get)]
    kind: &'static str,
    /// ``pending``, ``approved``, ``denied``, ``expired`` or ``withdrawn``.
    #[pyo3(get)]
    state: &'static str,
    /// The user it covers.
    #[pyo3(get)]
    user: String,
    /// The session it covers (single approvals), else ``None``.
    #[pyo3(get)]
    session: Option<String>,
    /// The tool it covers.
    #[pyo3(get)]
    tool: String,
    /// The ``sha256:`` argument digest it is bound to (single approvals).
    #[pyo3(get)]
    digest: Option<String>,
    /// Created and expiry times, Unix seconds.
    #[pyo3(get)]
    created_at: i64,
    #[pyo3(get)]
    expires_at: i64,
    /// Who decided, when (Unix seconds) and their note.
    #[pyo3(get)]
    decided_by: Option<String>,
    #[pyo3(get)]
    decided_at: Option<i64>,
    #[pyo3(get)]
    note: Option<String>,
    /// How many calls it let through.
    #[pyo3(get)]
    uses: u64,
    /// The upstream it is bound to: a single approval's call was routed
    /// there, a standing one covers only calls routed there. ``None``:
    /// calls routed to no upstream.
    #[pyo3(get)]
    upstream: Option<String>,
}

impl Approval {
    fn of(a: &StoreApproval) -> Self {
        Self {
            id: a.id.to_string(),
            kind: a.kind.as_str(),
            state: a.state.as_str(),
            user: a.user.clone(),
            session: a.session.clone(),
            tool: a.tool.clone(),
            digest: a.digest.map(|d| d.to_string()),
            created_at: a.created_at.unix_seconds(),
            expires_at: a.expires_at.unix_seconds(),
            decided_by: a.decided_by.clone(),
            decided_at: a.decided_at.map(Timestamp::unix_seconds),
            note: a.note.clone(),
            uses: a.uses,
            upstream: a.upstream.clone(),
        }
    }
}

#[pymethods]
impl Approval {
    fn __repr__(&self) -> String {
        format!(
            "Approval(id={:?}, state={:?}, kind={:?}, user={:?}, session={}, tool={:?})",
            self.id,
            self.state,
            self.kind,
            self.user,
            py_repr(self.session.as_deref()),
            self.tool
        )
    }
}

/// The approvals of a store: ``Approvals(url)`` (a store URL, as
/// ``--store``, relative paths from ``base``) or ``gate.approvals()``.
/// Every decision is the store's, audited as the CLI's are; ``actor`` is
/// who decides (default: ``$USER``, else ``python``).
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Approvals {
    store: Arc<dyn Store>,
}

impl Approvals {
    pub(crate) fn over(store: Arc<dyn Store>) -> Self {
        Self { store }
    }
}

fn store_error(e: &toolgate_store::Error) -> PyErr {
    match e.code() {
        ErrorCode::NotFound => PyKeyError::new_err(e.message().to_owned()),
        ErrorCode::Conflict => PyValueError::new_err(format!("conflict: {}", e.message())),
        _ => PyValueError::new_err(e.to_string()),
    }
}

fn id_of(id: &str) -> PyResult<ApprovalId> {
    id.parse()
        .map_err(|e| PyValueError::new_err(format!("not an approval id: {e}")))
}

fn actor(given: Option<String>) -> String {
    given
        .filter(|a| !a.is_empty())
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "python".to_owned())
}

#[pymethods]
impl Approvals {
    #[new]
    #[pyo3(signature = (url, *, base = None))]
    fn new(url: &str, base: Option<std::path::PathBuf>) -> PyResult<Self> {
        let base = base.unwrap_or_else(|| std::path::PathBuf::from("."));
        let store = toolgate_store::open_store(url, &base, StoreOptions::new())
            .map_err(|e| ConfigError::new_err(format!("cannot open the store: {e}")))?;
        Ok(Self { store })
    }

    /// Approvals by ascending id: ``state`` is ``pending`` (the default),
    /// ``approved``, ``denied``, ``expired``, ``withdrawn`` or ``all``.
    #[pyo3(signature = (*, state = "pending", limit = 100))]
    fn list(&self, py: Python<'_>, state: &str, limit: u32) -> PyResult<Vec<Approval>> {
        let mut filter = ApprovalFilter::new().limit(limit);
        filter = match state {
            "pending" => filter.state(ApprovalState::Pending),
            "approved" => filter.state(ApprovalState::Approved),
            "denied" => filter.state(ApprovalState::Denied),
            "expired" => filter.state(ApprovalState::Expired),
            "withdrawn" => filter.state(ApprovalState::Withdrawn),
            "all" => filter,
            other => {
                return Err(PyValueError::new_err(format!(
                    "state `{other}` is none of pending, approved, denied, expired, withdrawn, all"
                )))
            }
        };
        let list = py
            .detach(|| self.store.list_approvals(&filter))
            .map_err(|e| store_error(&e))?;
        Ok(list.iter().map(Approval::of).collect())
    }

    /// One approval; ``KeyError`` when there is none with this id.
    fn show(&self, py: Python<'_>, id: &str) -> PyResult<Approval> {
        let id = id_of(id)?;
        match py
            .detach(|| self.store.get_approval(id))
            .map_err(|e| store_error(&e))?
        {
            Some(a) => Ok(Approval::of(&a)),
            None => Err(PyKeyError::new_err(format!("no approval `{id}`"))),
        }
    }

    /// A human approves a pending, unexpired approval (audited
    /// ``approval_granted``). ``KeyError`` for an unknown id, ``ValueError``
    /// (``conflict``) when it is not pending.
    #[pyo3(signature = (id, *, actor = None, note = ""))]
    fn approve(
        &self,
        py: Python<'_>,
        id: &str,
        actor: Option<String>,
        note: &str,
    ) -> PyResult<Approval> {
        let (id, who) = (id_of(id)?, self::actor(actor));
        let a = py
            .detach(|| self.store.approve(id, &who, note))
            .map_err(|e| store_error(&e))?;
        Ok(Approval::of(&a))
    }

    /// A human denies a pending approval, or revokes an approved one not
    /// used yet (audited ``approval_denied``).
    #[pyo3(signature = (id, *, actor = None, note = ""))]
    fn deny(
        &self,
        py: Python<'_>,
        id: &str,
        actor: Option<String>,
        note: &str,
    ) -> PyResult<Approval> {
        let (id, who) = (id_of(id)?, self::actor(actor));
        let a = py
            .detach(|| self.store.deny(id, &who, note))
            .map_err(|e| store_error(&e))?;
        Ok(Approval::of(&a))
    }

    /// Grants a standing approval: ``tool`` for ``user`` for
    /// ``for_seconds`` from now (audited ``approval_granted``), covering
    /// only calls routed to ``upstream`` (an MCP proxy's upstream name);
    /// without one, only calls routed to no upstream. Returns it.
    #[pyo3(signature = (user, tool, *, for_seconds, note, actor = None, upstream = None))]
    #[allow(clippy::too_many_arguments, reason = "the grant's fields, by keyword")]
    fn grant(
        &self,
        py: Python<'_>,
        user: &str,
        tool: &str,
        for_seconds: u32,
        note: &str,
        actor: Option<String>,
        upstream: Option<String>,
    ) -> PyResult<Approval> {
        if let Some(u) = &upstream {
            if !toolgate::config::valid_upstream_name(u) {
                return Err(PyValueError::new_err(format!(
                    "upstream: must be 1 to {} letters, digits, `.`, `_` or `-`",
                    toolgate::config::MAX_UPSTREAM_NAME_BYTES
                )));
            }
        }
        let who = self::actor(actor);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|_| PyValueError::new_err("the system clock is before 1970"))?;
        let now = Timestamp::from_unix_millis(i64::try_from(now.as_millis()).unwrap_or(i64::MAX));
        let until = now.saturating_add(Duration::from_secs(u64::from(for_seconds)));
        let id = py
            .detach(|| {
                self.store
                    .grant_standing_for(user, tool, upstream.as_deref(), until, &who, note)
            })
            .map_err(|e| store_error(&e))?;
        self.show(py, &id.to_string())
    }
}
