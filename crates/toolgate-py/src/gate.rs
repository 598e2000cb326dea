//! `Gate`, its `Response` with `Call`s, `Reason`s and `Finding`s, and
//! `ConfigError`.
//!
//! The gate is built from a config file exactly as `toolgate check` builds
//! it: the config's tools, limits and authorization, and by default its
//! store, where every decision is audited and approvals, session counters
//! and the kill switch are shared with `toolgate serve` and the CLI.

use std::path::PathBuf;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PyString};
use toolgate::config::Config;
use toolgate::{Context, Decisions, Format};
use toolgate_json::{canonical, Value};
#[cfg(feature = "store")]
use toolgate_store::{StoreGate, StoreOptions};

use crate::convert;

pyo3::create_exception!(
    toolgate,
    ConfigError,
    PyValueError,
    "A config, its policies, schemas or entities, or its store, that cannot \
     be loaded or opened. The message names the file and place."
);

/// `None` or a quoted string, for a `__repr__`.
fn py_repr(s: Option<&str>) -> String {
    s.map_or_else(|| "None".to_owned(), |s| format!("{s:?}"))
}

/// How decisions are made: over the store, or from the context alone.
enum Decider {
    Context(toolgate::Gate),
    #[cfg(feature = "store")]
    Store(StoreGate),
}

/// The gate of a config file: ``Gate.from_config(path)``.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Gate {
    decider: Decider,
    max_body_bytes: usize,
}

fn config_error(what: &str, e: &dyn std::fmt::Display) -> PyErr {
    ConfigError::new_err(format!("{what}: {e}"))
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
        let config = Config::load(&path).map_err(|e| ConfigError::new_err(e.to_string()))?;
        // "cannot load the authorization policies: …", "cannot build the
        // gate: …": the part that failed, then why.
        let gate =
            toolgate::Gate::from_config(&config).map_err(|e| {
                match std::error::Error::source(&e) {
                    Some(source) => config_error(&e.to_string(), &source),
                    None => ConfigError::new_err(e.to_string()),
                }
            })?;
        let decider = match store_url {
            None => Decider::Context(gate),
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
                Decider::Store(StoreGate::new(gate, store).configured(&config))
            }
        };
        Ok(Self {
            decider,
            max_body_bytes: config.gate().max_body_bytes(),
        })
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
        let Some(body) = convert::raw_text(raw_body)? else {
            return Err(PyTypeError::new_err(format!(
                "raw_body must be bytes (the raw HTTP body), not {}",
                raw_body.get_type().name()?
            )));
        };
        if body.len() > self.max_body_bytes {
            return Err(PyValueError::new_err(format!(
                "the body is {} bytes, over [gate] max_body_bytes ({})",
                body.len(),
                self.max_body_bytes
            )));
        }
        let context_text = match convert::raw_text(context)? {
            Some(text) => text.into_owned(),
            None => canonical::to_string(&convert::from_py(context)?).into_bytes(),
        };
        if let Err(e) = toolgate_json::from_slice(&context_text) {
            return Err(PyValueError::new_err(format!(
                "context is not strict json: {e}"
            )));
        }
        let context = Context::from_json(&context_text)
            .map_err(|e| PyValueError::new_err(format!("context: {e}")))?;
        let body: &[u8] = &body;
        let decisions = py.detach(|| match &self.decider {
            Decider::Context(gate) => gate.decide(body, format, &context, &context),
            #[cfg(feature = "store")]
            Decider::Store(gate) => gate.decide_and_record(body, format, &context),
        });
        Response::new(py, &decisions)
    }

    /// Whether decisions are recorded in a store.
    #[getter]
    fn has_store(&self) -> bool {
        match self.decider {
            Decider::Context(_) => false,
            #[cfg(feature = "store")]
            Decider::Store(_) => true,
        }
    }
}

/// Why a call or a response was decided as it was: a stable code (see the
/// book's list), the JSON Pointer of the place (into the call's arguments,
/// or into the body for a response's findings) and a finer code for some
/// stages (the URL guard's, the parser's).
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Reason {
    /// The stable code, such as ``duplicate_key`` or ``approval_required``.
    #[pyo3(get)]
    code: &'static str,
    /// The JSON Pointer of the place.
    #[pyo3(get)]
    pointer: String,
    /// The stage's finer code, or ``None``.
    #[pyo3(get)]
    detail: Option<&'static str>,
}

#[pymethods]
impl Reason {
    fn __repr__(&self) -> String {
        format!(
            "Reason(code={:?}, pointer={:?}, detail={})",
            self.code,
            self.pointer,
            py_repr(self.detail)
        )
    }
}

impl Reason {
    fn of(r: &toolgate::Reason) -> Self {
        Self {
            code: r.code.as_str(),
            pointer: r.pointer.clone(),
            detail: r.detail,
        }
    }
}

/// A response-level finding: a finish that is not complete, markup in text,
/// and the like; ``denies`` says whether it denies every call.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Finding {
    /// The stable code, such as ``truncated``.
    #[pyo3(get)]
    code: &'static str,
    /// The JSON Pointer of the place in the body.
    #[pyo3(get)]
    pointer: String,
    /// The stage's finer code, or ``None``.
    #[pyo3(get)]
    detail: Option<&'static str>,
    /// Whether the finding denies every call of the response.
    #[pyo3(get)]
    denies: bool,
}

#[pymethods]
impl Finding {
    fn __repr__(&self) -> String {
        format!(
            "Finding(code={:?}, pointer={:?}, detail={}, denies={})",
            self.code,
            self.pointer,
            py_repr(self.detail),
            if self.denies { "True" } else { "False" }
        )
    }
}

/// The decision on one proposed tool call.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Call {
    /// The call's position in the response, from 0.
    #[pyo3(get)]
    index: usize,
    /// The provider's call id, or ``None``.
    #[pyo3(get)]
    call_id: Option<String>,
    /// The tool's name as the model wrote it.
    #[pyo3(get)]
    tool: String,
    /// ``allow``, ``needs_approval`` or ``deny``.
    #[pyo3(get)]
    verdict: &'static str,
    reasons: Vec<Py<Reason>>,
    /// The text safe to return to the model: codes and pointers only.
    #[pyo3(get)]
    feedback: String,
    /// ``sha256:`` of the canonical arguments, or ``None`` when they did not parse.
    #[pyo3(get)]
    digest: Option<String>,
    /// For an allow, the approval id used; for a needs-approval with a
    /// store, the pending approval's id; else ``None``.
    #[pyo3(get)]
    approval: Option<String>,
    /// The ids of the policies that decided at the authorization stage.
    #[pyo3(get)]
    policies: Vec<String>,
    pinned: Vec<(String, Vec<String>)>,
    arguments: Py<PyAny>,
}

#[pymethods]
impl Call {
    /// Why the call was decided so (empty for a plain allow).
    #[getter]
    fn reasons<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.reasons.iter().map(|r| r.clone_ref(py)))
    }

    /// For each URL argument checked in resolve mode: ``(pointer,
    /// [address, ...])``, the only addresses the tool may connect to.
    #[getter]
    fn pinned(&self) -> Vec<(String, Vec<String>)> {
        self.pinned.clone()
    }

    /// The canonical value the gate checked, as Python objects, for a call
    /// that is not denied; ``None`` for a denied call. Run the tool with this
    /// value, never with the model's text. A fresh copy on every access.
    #[getter]
    fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // A fresh copy, so that no caller can change what another reads.
        let value = self.arguments.bind(py);
        if value.is_none() {
            return Ok(value.clone());
        }
        let copy = py.import("copy")?;
        copy.call_method1("deepcopy", (value,))
    }

    /// Whether the call is allowed.
    #[getter]
    fn allowed(&self) -> bool {
        self.verdict == "allow"
    }

    fn __repr__(&self) -> String {
        format!(
            "Call(index={}, tool={:?}, call_id={}, verdict={:?})",
            self.index,
            self.tool,
            py_repr(self.call_id.as_deref()),
            self.verdict
        )
    }
}

/// The gate's decisions on one model response.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Response {
    /// The response's verdict: ``allow``, ``needs_approval`` or ``deny``.
    #[pyo3(get)]
    verdict: &'static str,
    /// The format read (``openai``, ``responses``, ``anthropic``,
    /// ``gemini``, ``mcp``), or ``None`` if the body was refused before it
    /// was known.
    #[pyo3(get)]
    format: Option<&'static str>,
    /// Whether the body was an event stream.
    #[pyo3(get)]
    streamed: bool,
    /// The finish's kind (``complete``, ``truncated``, ...), or ``None``.
    #[pyo3(get)]
    finish_kind: Option<String>,
    /// The provider's finish token, or ``None``.
    #[pyo3(get)]
    finish_reason: Option<String>,
    rejected: Option<Py<Reason>>,
    findings: Vec<Py<Finding>>,
    calls: Vec<Py<Call>>,
    wire: Value<'static>,
}

impl Response {
    fn new(py: Python<'_>, d: &Decisions) -> PyResult<Self> {
        let wire = Value::Object(toolgate::wire::decisions_object(d));
        let wire_calls = wire
            .pointer("/decisions")
            .and_then(Value::as_array)
            .unwrap_or_default();
        let mut calls = Vec::with_capacity(d.decisions().len());
        for (i, c) in d.decisions().iter().enumerate() {
            let arguments = match wire_calls.get(i).and_then(|w| w.pointer("/arguments")) {
                Some(v) => convert::to_py(py, v)?.unbind(),
                None => py.None(),
            };
            let reasons = c
                .reasons()
                .iter()
                .map(|r| Py::new(py, Reason::of(r)))
                .collect::<PyResult<Vec<_>>>()?;
            calls.push(Py::new(
                py,
                Call {
                    index: c.index(),
                    call_id: c.call_id().map(str::to_owned),
                    tool: c.tool().to_owned(),
                    verdict: c.verdict().as_str(),
                    reasons,
                    feedback: c.feedback().to_owned(),
                    digest: c.digest().map(|g| g.to_string()),
                    approval: c.approval().map(|a| a.as_str().to_owned()),
                    policies: c.policies().to_vec(),
                    pinned: c
                        .pinned()
                        .iter()
                        .map(|p| {
                            (
                                p.pointer.clone(),
                                p.addresses.iter().map(ToString::to_string).collect(),
                            )
                        })
                        .collect(),
                    arguments,
                },
            )?);
        }
        let findings = d
            .findings()
            .iter()
            .map(|r| {
                Py::new(
                    py,
                    Finding {
                        code: r.code.as_str(),
                        pointer: r.pointer.clone(),
                        detail: r.detail,
                        denies: r.code.finding_denies(),
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Self {
            verdict: d.verdict().as_str(),
            format: d.format().map(Format::as_str),
            streamed: d.streamed(),
            finish_kind: d.finish().as_ref().map(|f| f.kind().to_string()),
            finish_reason: d.finish().as_ref().map(|f| f.reason().to_owned()),
            rejected: d
                .rejected()
                .as_ref()
                .map(|r| Py::new(py, Reason::of(r)))
                .transpose()?,
            findings,
            calls,
            wire,
        })
    }
}

#[pymethods]
impl Response {
    /// Why the body was refused as a whole, or ``None``.
    #[getter]
    fn rejected(&self, py: Python<'_>) -> Option<Py<Reason>> {
        self.rejected.as_ref().map(|r| r.clone_ref(py))
    }

    /// The response-level findings.
    #[getter]
    fn findings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.findings.iter().map(|r| r.clone_ref(py)))
    }

    /// One decision per proposed call, in order.
    #[getter]
    fn calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.calls.iter().map(|r| r.clone_ref(py)))
    }

    /// Whether every call is allowed.
    #[getter]
    fn allowed(&self) -> bool {
        self.verdict == "allow"
    }

    /// The decisions as the ``dict`` that ``toolgate check --json`` prints
    /// for this response (without ``input``) and ``POST /v1/decide`` returns.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.wire)
    }

    /// The same, as canonical JSON text (``bytes``).
    fn to_json<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, canonical::to_string(&self.wire).as_bytes())
    }

    fn __repr__(&self) -> String {
        format!(
            "Response(verdict={:?}, format={}, calls={})",
            self.verdict,
            py_repr(self.format),
            self.calls.len()
        )
    }
}
