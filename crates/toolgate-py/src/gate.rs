//! `Gate` and `ConfigError`.
//!
//! The gate is built from a config file exactly as `toolgate check` builds
//! it: the config's tools, limits and authorization, and by default its
//! store, where every decision is audited and approvals, session counters
//! and the kill switch are shared with `toolgate serve` and the CLI.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
#[cfg(feature = "store")]
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyString, PyTuple};
use toolgate::{Context, Decider, Format};
use toolgate_json::{canonical, Object, Value};
#[cfg(feature = "store")]
use toolgate_store::{StoreGate, StoreOptions};

use crate::convert;
use crate::input::with_text;
use crate::redact::Known;
use crate::response::Response;

pyo3::create_exception!(
    toolgate,
    ConfigError,
    PyValueError,
    "A config, its policies, schemas or entities, or its store, that cannot \
     be loaded or opened. The message names the file and place."
);

/// The gate of a config file: ``Gate.from_config(path)``.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Gate {
    /// Over the store, or from the context alone.
    decider: Box<dyn Decider>,
    /// The store decisions are recorded in, if any (for its approvals).
    #[cfg(feature = "store")]
    records: Option<Arc<dyn toolgate_store::Store>>,
    /// The gate over that store, if any (for its limits and labels): the
    /// one `decider` decides with.
    #[cfg(feature = "store")]
    over_store: Option<Arc<StoreGate>>,
    max_body_bytes: usize,
    /// Each tool's declared member names, shown in reasons' pointers.
    known: HashMap<String, Known>,
    /// How it was opened, to pickle it.
    path: PathBuf,
    store: Option<Option<String>>,
}

fn config_error(what: &str, e: &dyn std::fmt::Display) -> PyErr {
    ConfigError::new_err(format!("{what}: {e}"))
}

/// Builds the config's PostgreSQL entity sources: with the store, as the
/// CLI and `toolgate serve` do.
#[cfg(feature = "store")]
fn connect_source(
    source: &toolgate::config::EntitySourceConfig,
) -> Result<Option<std::sync::Arc<dyn toolgate::authz::EntitySource>>, String> {
    toolgate_store::connect_source(source)
}

/// Without the store no database driver is built in: a PostgreSQL entity
/// source is refused, naming the build that runs it.
#[cfg(not(feature = "store"))]
fn connect_source(
    source: &toolgate::config::EntitySourceConfig,
) -> Result<Option<std::sync::Arc<dyn toolgate::authz::EntitySource>>, String> {
    match source.kind() {
        toolgate::config::SourceKind::Postgres { .. } => Err(
            "a `postgres` entity source needs the store, and this toolgate package was built \
             without it: install the package with the store \
             (pip install ./crates/toolgate-py -C build-args=\"--features store\")"
                .to_owned(),
        ),
        _ => Ok(None),
    }
}

/// The store gate, shared by the decider and the Python methods that read
/// its limits and labels.
#[cfg(feature = "store")]
struct SharedStoreGate(Arc<StoreGate>);

#[cfg(feature = "store")]
impl Decider for SharedStoreGate {
    fn decide_body(&self, body: &[u8], format: Format, context: &Context) -> toolgate::Decisions {
        self.0.decide_body(body, format, context)
    }
}

/// The most a context may hold, in bytes of JSON text.
const MAX_CONTEXT_BYTES: usize = 1 << 20;

impl Gate {
    /// The gate over the store, or a [`ConfigError`] saying it decides
    /// without one and so cannot `what`.
    #[cfg(feature = "store")]
    fn store_gate(&self, what: &str) -> PyResult<&StoreGate> {
        self.over_store.as_deref().ok_or_else(|| {
            ConfigError::new_err(format!(
                "this gate decides without a store: open it with a store to {what}"
            ))
        })
    }
    /// The gate of `path`, over the config's store (`Some(None)`), a store
    /// URL (`Some(Some(url))`) or none (`None`).
    fn open(path: PathBuf, store_url: Option<Option<String>>) -> PyResult<Self> {
        let config =
            toolgate_edge::config::load(&path).map_err(|e| ConfigError::new_err(e.to_string()))?;
        // "cannot load the authorization policies: …", "cannot build the
        // gate: …": the part that failed, then why.
        let gate = toolgate::Gate::from_config_with(&config, &connect_source).map_err(|e| {
            match std::error::Error::source(&e) {
                Some(source) => config_error(&e.to_string(), &source),
                None => ConfigError::new_err(e.to_string()),
            }
        })?;
        let known = gate
            .registry()
            .iter()
            .map(|tool| (tool.name().to_owned(), Known::of_schema(tool.raw_schema())))
            .collect();
        #[cfg(feature = "store")]
        let mut records = None;
        #[cfg(feature = "store")]
        let mut over_store = None;
        let decider: Box<dyn Decider> = match &store_url {
            None => Box::new(gate),
            #[cfg(not(feature = "store"))]
            Some(_) => {
                return Err(ConfigError::new_err(
                    "this toolgate package was built without the store: pass store=False to \
                     decide in memory, or install it with the store \
                     (pip install ./crates/toolgate-py -C build-args=\"--features store\")",
                ))
            }
            #[cfg(feature = "store")]
            Some(url) => {
                let options = StoreOptions::new().escalate_after(config.gate().escalate_after());
                let url = url.as_deref().unwrap_or(config.store().url());
                let store = toolgate_store::open_store(url, config.base_dir(), options)
                    .map_err(|e| config_error("cannot open the store", &e))?;
                records = Some(Arc::clone(&store));
                let shared = Arc::new(StoreGate::new(gate, store).configured(&config));
                over_store = Some(Arc::clone(&shared));
                Box::new(SharedStoreGate(shared))
            }
        };
        Ok(Self {
            decider,
            #[cfg(feature = "store")]
            records,
            #[cfg(feature = "store")]
            over_store,
            max_body_bytes: config.gate().max_body_bytes(),
            known,
            path,
            store: store_url,
        })
    }

    /// The context's JSON text: as given (text), or a value written as JSON
    /// with every number as Python wrote it (`3.0` stays a non-integer, so
    /// that `turn: 3.0` is refused as the CLI refuses it).
    fn context_text(context: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        if let Some(text) = with_text(context, MAX_CONTEXT_BYTES, |t| Ok(t.to_vec()))? {
            return Ok(text);
        }
        // Strictly first: exact types, str keys, finite floats.
        convert::from_py(context)?;
        let json = context.py().import("json")?;
        let kwargs = pyo3::types::PyDict::new(context.py());
        kwargs.set_item("allow_nan", false)?;
        let text: String = json
            .call_method("dumps", (context,), Some(&kwargs))?
            .extract()?;
        Ok(text.into_bytes())
    }

    /// Decides one body with the context.
    fn decide_body(
        &self,
        py: Python<'_>,
        body: &[u8],
        format: Format,
        context: &Bound<'_, PyAny>,
    ) -> PyResult<Response> {
        if body.len() > self.max_body_bytes {
            return Err(PyValueError::new_err(format!(
                "the body is {} bytes, over [gate] max_body_bytes ({})",
                body.len(),
                self.max_body_bytes
            )));
        }
        let context_text = Self::context_text(context)?;
        if let Err(e) = toolgate_json::from_slice(&context_text) {
            // The code and place, never the context's own text.
            return Err(PyValueError::new_err(format!(
                "context is not strict json: {} at line {} column {}",
                e.code().as_str(),
                e.line(),
                e.column()
            )));
        }
        let context = Context::from_json(&context_text)
            .map_err(|e| PyValueError::new_err(format!("context: {e}")))?;
        let decisions = py.detach(|| self.decider.decide_body(body, format, &context));
        Response::new(py, &decisions, &self.known)
    }
}

#[pymethods]
impl Gate {
    /// The gate of a toolgate config (TOML): its tools, schemas, limits and
    /// authorization (Cedar policies; a config that names none denies every
    /// call ``not_authorized``).
    ///
    /// ``store=True`` (the default) opens the config's ``[store] url``
    /// (relative to the config's folder): every decision is audited there,
    /// a call that needs approval gets a pending approval, an approved call
    /// uses its approval once, and the kill switch and session counters are
    /// those ``toolgate serve`` and the CLI share. A string opens that store
    /// URL instead. ``store=False`` decides without a store: nothing is
    /// written and the context carries the state (kill switch, approvals,
    /// turn), trusted for the turn. Raises :class:`ConfigError`.
    ///
    /// A gate pickles as its config's path and store setting: unpickled (in
    /// a process pool's worker, say), it loads the config again.
    #[staticmethod]
    #[pyo3(signature = (path, *, store = None), text_signature = "(path, *, store=True)")]
    fn from_config(path: PathBuf, store: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let store_url: Option<Option<String>> = match store {
            None => Some(None),
            Some(s) if s.is_exact_instance_of::<PyBool>() => {
                if s.is_truthy()? {
                    Some(None)
                } else {
                    None
                }
            }
            Some(s) if s.is_instance_of::<PyString>() => Some(Some(s.extract()?)),
            Some(_) => {
                return Err(PyTypeError::new_err(
                    "store must be True, False or a store URL (str)",
                ))
            }
        };
        Self::open(path, store_url)
    }

    /// Decides every tool call in one model response, as the provider sent
    /// it: ``raw_body`` is the raw HTTP body (``bytes``; JSON or an SSE
    /// stream), never a value an SDK has parsed. ``context`` is the request
    /// context as a ``dict`` (or its JSON text): ``user``, ``session``,
    /// ``roles``, ``turn``, and without a store the state (see the book's Python chapter).
    /// ``format`` is ``auto``, ``openai``, ``responses``, ``anthropic``,
    /// ``gemini`` or ``mcp``.
    ///
    /// Bad input (a context that does not read, a body over ``[gate]
    /// max_body_bytes``, an unknown format) raises before anything is
    /// decided or recorded. With a store the decisions are audited before
    /// they are returned.
    #[pyo3(signature = (raw_body, context, *, format = "auto"))]
    fn decide(
        &self,
        py: Python<'_>,
        raw_body: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
        format: &str,
    ) -> PyResult<Response> {
        let format: Format = format
            .parse()
            .map_err(|e| PyValueError::new_err(format!("format: {e}")))?;
        let decided = with_text(raw_body, self.max_body_bytes, |body| {
            self.decide_body(py, body, format, context)
        })?;
        match decided {
            Some(response) => Ok(response),
            None => Err(PyTypeError::new_err(format!(
                "raw_body must be bytes (the raw HTTP body), not {}",
                raw_body.get_type().name()?
            ))),
        }
    }

    /// Decides one tool call that code already holds as a tool name and
    /// its arguments: what every agent framework hands a tool. ``arguments``
    /// is the model's argument text (``str``, ``bytes``; parsed strictly by
    /// the gate, with the tool's limits: a duplicate key is a denial, not
    /// an exception) or an already parsed ``dict``. ``call_id`` is the
    /// framework's id of the call, if any. ``context`` as for
    /// :meth:`decide`.
    ///
    /// The call is decided as the one tool call of a model response (its
    /// ``format`` reads ``openai``), with the same stages, audit and
    /// approvals as :meth:`decide`. Run the tool with
    /// ``response.calls[0].arguments`` when it is allowed.
    #[pyo3(signature = (tool, arguments, context, *, call_id = None))]
    fn decide_call(
        &self,
        py: Python<'_>,
        tool: &str,
        arguments: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
        call_id: Option<&str>,
    ) -> PyResult<Response> {
        // Text is handed on as the string the gate parses; a value as the
        // call's inline arguments.
        let args = match with_text(
            arguments,
            self.max_body_bytes,
            |text| match std::str::from_utf8(text) {
                Ok(s) => Ok(Value::String(Cow::Owned(s.to_owned()))),
                Err(_) => Err(PyValueError::new_err(
                    "invalid_utf8: the arguments are not UTF-8 text",
                )),
            },
        )? {
            Some(text) => text,
            None => convert::from_py(arguments)?,
        };
        let body = call_body(tool, call_id, args);
        self.decide_body(py, body.as_bytes(), Format::OpenAiChat, context)
    }

    /// Whether decisions are recorded in a store.
    #[getter]
    fn has_store(&self) -> bool {
        self.store.is_some()
    }

    /// The approvals of the gate's store (:class:`Approvals`): list, show,
    /// approve, deny, grant. Raises :class:`ConfigError` for a gate without
    /// a store.
    fn approvals(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        #[cfg(feature = "store")]
        if let Some(store) = &self.records {
            return Ok(
                Py::new(py, crate::approvals::Approvals::over(Arc::clone(store)))?.into_any(),
            );
        }
        let _ = py;
        Err(ConfigError::new_err(
            "this gate decides without a store: open it with a store to manage approvals",
        ))
    }

    /// The labels ``session`` holds in the gate's store (sorted): what its
    /// allowed calls' tools brought in. Raises :class:`ConfigError` for a
    /// gate without a store (its context carries the labels).
    #[cfg(feature = "store")]
    fn session_labels(&self, py: Python<'_>, session: &str) -> PyResult<Vec<String>> {
        let gate = self.store_gate("read a session's labels")?;
        py.detach(|| gate.store().session_labels(session))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The tools a ``[[limit]]`` counting ``user`` (``session``, or
    /// everyone) has used up now, sorted: what narrowing hides. Raises
    /// :class:`ConfigError` for a gate without a store.
    #[cfg(feature = "store")]
    #[pyo3(signature = (user, *, session = None))]
    fn exhausted_tools(
        &self,
        py: Python<'_>,
        user: &str,
        session: Option<&str>,
    ) -> PyResult<Vec<String>> {
        let gate = self.store_gate("read the limits' usage")?;
        py.detach(|| {
            gate.exhausted_tools(toolgate_store::UsageOf {
                user,
                session,
                token: None,
            })
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Forgets what the ``[[limit]]`` named ``limit`` counted for ``user``,
    /// ``session`` or ``token`` (the one the limit counts by; none for a
    /// ``global`` limit), audited ``limit_reset`` with ``actor`` and
    /// ``reason``. Returns how many counted calls were forgotten.
    #[cfg(feature = "store")]
    #[pyo3(signature = (limit, *, reason, user = None, session = None, token = None, actor = None))]
    #[allow(
        clippy::too_many_arguments,
        reason = "keyword arguments, one per scope"
    )]
    fn reset_limit(
        &self,
        py: Python<'_>,
        limit: &str,
        reason: &str,
        user: Option<&str>,
        session: Option<&str>,
        token: Option<&str>,
        actor: Option<String>,
    ) -> PyResult<u64> {
        use toolgate::limit::Scope;
        let gate = self.store_gate("reset a limit")?;
        let g = gate.gate();
        let Some(l) = g
            .registry()
            .iter()
            .flat_map(|t| g.tool_limits(t.name()))
            .find(|l| l.name == limit)
        else {
            return Err(PyValueError::new_err(format!(
                "no [[limit]] named `{limit}`"
            )));
        };
        let key = match (l.scope, user, session, token) {
            (Scope::User, Some(u), None, None) => l.key(u, "", None),
            (Scope::Session, None, Some(s), None) => l.key("", s, None),
            (Scope::Token, None, None, Some(t)) => l.key("", "", Some(t)),
            (Scope::Global, None, None, None) => l.key("", "", None),
            (scope, ..) => {
                return Err(PyValueError::new_err(format!(
                    "`{limit}` counts per {scope}: name exactly that (user=, session= or token=; none for global)"
                )))
            }
        };
        if reason.trim().is_empty() {
            return Err(PyValueError::new_err("a reset needs a reason"));
        }
        let who = actor
            .filter(|a| !a.is_empty())
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "python".to_owned());
        py.detach(|| gate.store().reset_limit(&key, &who, reason))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Pickling: the config's path and the store setting.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let restore = py.import("toolgate")?.getattr("_gate_from_config")?;
        let store = match &self.store {
            None => PyBool::new(py, false).to_owned().into_any(),
            Some(None) => PyBool::new(py, true).to_owned().into_any(),
            Some(Some(url)) => PyString::new(py, url).into_any(),
        };
        let path = self.path.clone().into_pyobject(py)?.into_any();
        Ok((restore, PyTuple::new(py, [path, store])?))
    }
}

/// One call as an OpenAI Chat Completions body: the tool's name and the
/// arguments (a string the gate parses, or an inline value).
fn call_body(tool: &str, call_id: Option<&str>, arguments: Value<'static>) -> String {
    let mut function = Object::new();
    function.insert("name", Value::String(Cow::Owned(tool.to_owned())));
    function.insert("arguments", arguments);
    let mut call = Object::new();
    if let Some(id) = call_id {
        call.insert("id", Value::String(Cow::Owned(id.to_owned())));
    }
    call.insert("type", Value::String(Cow::Borrowed("function")));
    call.insert("function", Value::Object(function));
    let mut message = Object::new();
    message.insert("role", Value::String(Cow::Borrowed("assistant")));
    message.insert("tool_calls", Value::Array(vec![Value::Object(call)]));
    let mut choice = Object::new();
    choice.insert("index", Value::Number(toolgate_json::Number::from(0_i64)));
    choice.insert("finish_reason", Value::String(Cow::Borrowed("tool_calls")));
    choice.insert("message", Value::Object(message));
    let mut body = Object::new();
    body.insert("choices", Value::Array(vec![Value::Object(choice)]));
    canonical::to_string(&Value::Object(body))
}
