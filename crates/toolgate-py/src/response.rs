//! The gate's answer: `Response`, its `Call`s, `Reason`s and `Finding`s.
//! Their `pointer`s show only names the tool's schema declares (into the
//! arguments) or the providers' own vocabulary (into a body); the input's
//! other names are masked as `*`, and `exact_pointer` keeps them.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use toolgate::{Decisions, Format};
use toolgate_json::{canonical, Value};

use crate::convert::{self, Numbers};
use crate::redact::Known;

/// `None` or a quoted string, for a `__repr__`.
pub(crate) fn py_repr(s: Option<&str>) -> String {
    s.map_or_else(|| "None".to_owned(), |s| format!("{s:?}"))
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
    /// The JSON Pointer of the place, with every member name that is not
    /// the tool schema's (or, into a body, the provider format's) masked as
    /// ``*``: safe to show a model.
    #[pyo3(get)]
    pointer: String,
    /// The same pointer with the input's own member names: text the model
    /// chose; never send it back to a model.
    #[pyo3(get)]
    exact_pointer: String,
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
    fn of(r: &toolgate::Reason, known: &Known) -> Self {
        Self {
            code: r.code.as_str(),
            pointer: known.redact(&r.pointer),
            exact_pointer: r.pointer.clone(),
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
    /// The JSON Pointer of the place in the body (names outside the
    /// provider formats' own masked as ``*``).
    #[pyo3(get)]
    pointer: String,
    /// The same pointer with the body's own member names.
    #[pyo3(get)]
    exact_pointer: String,
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
    /// The decision's signed receipt (``tgr1.``…) when the config has a
    /// ``[gate] receipt_key`` and the arguments parsed, whatever the
    /// verdict (only an allow's passes :func:`verify_receipt`); else
    /// ``None``. Hand it to the service that runs the tool.
    #[pyo3(get)]
    receipt: Option<String>,
    pinned: Vec<(String, Vec<String>)>,
    arguments: Py<PyAny>,
    charges: Vec<(String, String)>,
    /// The session labels the call brings in if it runs (its tool's
    /// ``labels``): set on an allowed call only.
    #[pyo3(get)]
    labels: Vec<String>,
    /// For a call denied ``rate_limited`` or ``budget_exceeded``: the
    /// seconds after which a retry can succeed; else ``None``.
    #[pyo3(get)]
    retry_after: Option<u64>,
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

    /// What the call adds to each ``[[limit]]`` counting it, if it runs:
    /// ``(limit, amount)``, the amount an exact decimal string (``"1"``
    /// for a rate limit). Set on an allowed call only; a store counts them
    /// itself, a caller without one keeps them (the context's
    /// ``limit_events``).
    #[getter]
    fn charges(&self) -> Vec<(String, String)> {
        self.charges.clone()
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
    /// The response of `d`; `known` holds each tool's declared names.
    pub(crate) fn new(
        py: Python<'_>,
        d: &Decisions,
        known: &HashMap<String, Known>,
    ) -> PyResult<Self> {
        let body_names = Known::of_names(BODY_NAMES);
        let none = Known::none();
        let wire = Value::Object(toolgate::wire::decisions_object(d));
        let wire_calls = wire
            .pointer("/decisions")
            .and_then(Value::as_array)
            .unwrap_or_default();
        let mut calls = Vec::with_capacity(d.decisions().len());
        for (i, c) in d.decisions().iter().enumerate() {
            let arguments = match wire_calls.get(i).and_then(|w| w.pointer("/arguments")) {
                Some(v) => convert::to_py(py, v, &Numbers::floats())?.unbind(),
                None => py.None(),
            };
            let names = known.get(c.tool()).unwrap_or(&none);
            let reasons = c
                .reasons()
                .iter()
                .map(|r| Py::new(py, Reason::of(r, names)))
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
                    receipt: c.receipt().map(str::to_owned),
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
                    charges: c
                        .charges()
                        .iter()
                        .map(|ch| (ch.limit.clone(), ch.amount.to_string()))
                        .collect(),
                    labels: c.labels().to_vec(),
                    retry_after: c.retry_after(),
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
                        pointer: body_names.redact(&r.pointer),
                        exact_pointer: r.pointer.clone(),
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
                .map(|r| Py::new(py, Reason::of(r, &body_names)))
                .transpose()?,
            findings,
            calls,
            wire,
        })
    }
}

/// The member names of the provider formats' bodies (OpenAI Chat and
/// Responses, Anthropic, Gemini, MCP, and their streams): shown in a body
/// pointer; any other name is the body's own and masked.
const BODY_NAMES: &[&str] = &[
    "args",
    "arguments",
    "call_id",
    "candidates",
    "choices",
    "content",
    "content_block",
    "delta",
    "finishReason",
    "finish_reason",
    "function",
    "functionCall",
    "id",
    "index",
    "input",
    "item",
    "jsonrpc",
    "message",
    "method",
    "name",
    "namespace",
    "output",
    "params",
    "partial_json",
    "parts",
    "result",
    "role",
    "status",
    "stop_reason",
    "tool_calls",
    "type",
];

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
        convert::to_py(py, &self.wire, &Numbers::floats())
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
