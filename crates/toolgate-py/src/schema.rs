//! `Schema` (validation, and the one-pass `Schema.loads`),
//! `ValidationError`, `SchemaViolation` and `SchemaError`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::Mutex;

use toolgate_json::{canonical, ParseOptions, Tape, Value};
use toolgate_schema::{Checker, Loaded, Mode, Options, ValidationErrors};

use crate::build::{PyBuild, Stacks};
use crate::convert::{self, with_keys, Numbers};
use crate::input::with_text;
use crate::json::{
    detach_if_large, json_error, max_input, options, options_kwargs, JSONError, DETACH_AT,
};
use crate::redact::Known;

pyo3::create_exception!(
    toolgate,
    SchemaError,
    PyValueError,
    "A JSON Schema that does not compile.\n\n\
     Attributes: ``code`` (the stable code, such as ``unknown_keyword``), \
     ``pointer`` (the JSON Pointer of the offending keyword in the schema) \
     and ``keyword`` (its name, the pointer's last token)."
);

pyo3::create_exception!(
    toolgate,
    SchemaViolation,
    PyValueError,
    "Strict JSON that the schema refuses (raised by ``Schema.loads``).\n\n\
     Attributes: ``errors`` (the :class:`ValidationError` list, never \
     empty), and of the first: ``code``, ``instance_pointer`` (member names \
     the schema does not declare masked as ``*``) and ``keyword_location``. \
     The message and ``str(e)`` hold codes, pointers and what the schema \
     expects, never text from the input: safe to send to a model."
);

fn schema_error(py: Python<'_>, e: &toolgate_schema::CompileError) -> PyErr {
    let err = SchemaError::new_err(e.to_string());
    let value = err.value(py);
    let pointer = e.pointer();
    let keyword = pointer
        .rsplit_once('/')
        .map_or("", |(_, last)| last)
        .replace("~1", "/")
        .replace("~0", "~");
    let set = || -> PyResult<()> {
        value.setattr("code", e.code().as_str())?;
        value.setattr("pointer", pointer)?;
        value.setattr("keyword", keyword)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// One violation of a schema. Its fields never hold values from the
/// instance, and only ``exact_instance_pointer`` holds member names the
/// schema does not declare.
#[pyclass(frozen, eq, module = "toolgate")]
#[derive(PartialEq)]
pub(crate) struct ValidationError {
    /// The stable code, such as ``type_mismatch``.
    #[pyo3(get)]
    code: &'static str,
    /// The JSON Pointer of the offending value in the instance (``""`` is
    /// the root), with every member name the schema does not declare
    /// masked as ``*``: safe to show a model.
    #[pyo3(get)]
    instance_pointer: String,
    /// The same pointer with the instance's own member names: text the
    /// input chose; never send it to a model.
    #[pyo3(get)]
    exact_instance_pointer: String,
    /// The JSON Pointer of the keyword in the schema, such as ``/properties/amount/type``.
    #[pyo3(get)]
    keyword_location: String,
    /// The constraint that was violated, from the schema alone: ``expected integer``.
    #[pyo3(get)]
    message: String,
}

#[pymethods]
impl ValidationError {
    fn __repr__(&self) -> String {
        format!(
            "ValidationError(code={:?}, instance_pointer={:?}, keyword_location={:?}, message={:?})",
            self.code, self.instance_pointer, self.keyword_location, self.message
        )
    }

    fn __str__(&self) -> String {
        format!(
            "{} at `{}`: {}",
            self.code, self.instance_pointer, self.message
        )
    }
}

/// A compiled JSON Schema (draft 2020-12), in toolgate's strict mode or, with
/// ``standard=True``, as the specification says.
///
/// ``schema`` is JSON text (``bytes``, ``bytearray``, ``memoryview``,
/// ``str``: parsed strictly) or a parsed value (``dict`` or ``bool``). A
/// schema that does not compile raises :class:`SchemaError` with the
/// keyword and its pointer. Keyword arguments set the limits the instances
/// are read with, as for :func:`loads` (``max_input_bytes``, ``max_depth``,
/// ``max_string_bytes``, ``max_object_members``, ``max_array_items``,
/// ``max_values``, ``allow_noncharacters``).
///
/// In strict mode ``integer`` takes only integer lexemes (``3.0`` is not
/// one), an object schema with ``properties`` is closed unless it says
/// otherwise, ``format`` asserts and unknown keywords are errors.
///
/// A ``Schema`` pickles (for process pools) and may be shared by threads.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Schema {
    inner: toolgate_schema::Schema,
    options: ParseOptions,
    known: Known,
    /// The schema's canonical text and mode, to pickle it.
    source: String,
    standard: bool,
    /// What `loads` keeps between calls, at most [`POOLED`].
    #[expect(
        clippy::vec_box,
        reason = "a Warm moves in and out of the pool on every call: a pointer, not its few hundred bytes"
    )]
    warm: Mutex<Vec<Box<Warm>>>,
}

/// What `Schema.loads` reuses from one call to the next: a checker, a
/// builder's stacks and the tape of a large text, their buffers allocated.
struct Warm {
    checker: Checker,
    stacks: Stacks,
    tape: Tape,
}

/// A tape of more events than this (a few MiB) is not kept for the next
/// call.
const KEEP_EVENTS: usize = 1 << 17;

/// The `Warm`s a `Schema` keeps: one per thread that calls it at once, up
/// to this many.
const POOLED: usize = 8;

impl Schema {
    /// The instance: JSON text parsed strictly (`Err` for text that is
    /// not strict JSON), or a Python value converted strictly.
    fn with_instance<T>(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        f: impl FnOnce(&Value<'_>) -> T,
    ) -> PyResult<T> {
        let done = with_text(data, max_input(&self.options), |text| {
            let value = detach_if_large(py, text.len(), || self.options.parse(text))
                .map_err(|e| json_error(py, &e, &self.known))?;
            Ok(f(&value))
        })?;
        match done {
            Some(out) => Ok(out),
            None => Err(PyTypeError::new_err("the instance was not read")),
        }
    }

    fn errors(&self, errors: &ValidationErrors) -> Vec<ValidationError> {
        errors
            .iter()
            .map(|e| ValidationError {
                code: e.code().as_str(),
                instance_pointer: self.known.redact(e.instance_pointer()),
                exact_instance_pointer: e.instance_pointer().to_owned(),
                keyword_location: e.keyword_location().to_owned(),
                message: e.message().to_owned(),
            })
            .collect()
    }

    /// Runs `f` with a checker of this schema's options and a builder's
    /// stacks, from the pool.
    fn with_warm<R>(&self, f: impl FnOnce(&mut Warm) -> R) -> R {
        let pooled = self.warm.lock().ok().and_then(|mut pool| pool.pop());
        let mut warm = pooled.unwrap_or_else(|| {
            Box::new(Warm {
                checker: Checker::new(self.options),
                stacks: Stacks::default(),
                tape: Tape::new(),
            })
        });
        let out = f(&mut warm);
        if let Ok(mut pool) = self.warm.lock() {
            if pool.len() < POOLED {
                pool.push(warm);
            }
        }
        out
    }

    /// The exception of a load that did not build the value.
    fn refusal(&self, py: Python<'_>, loaded: Loaded) -> PyErr {
        match loaded {
            Loaded::Malformed(e) => json_error(py, &e, &self.known),
            Loaded::Invalid(errors) => self.violation(py, &errors),
            _ => PyValueError::new_err("internal_error: the value was not made"),
        }
    }

    /// The `SchemaViolation` of a refused instance.
    fn violation(&self, py: Python<'_>, errors: &ValidationErrors) -> PyErr {
        let errors = self.errors(errors);
        let message = errors
            .iter()
            .map(ValidationError::__str__)
            .collect::<Vec<_>>()
            .join("; ");
        let err = SchemaViolation::new_err(message);
        let value = err.value(py);
        let set = || -> PyResult<()> {
            if let Some(first) = errors.first() {
                value.setattr("code", first.code)?;
                value.setattr("instance_pointer", &first.instance_pointer)?;
                value.setattr("keyword_location", &first.keyword_location)?;
            }
            let list = PyList::empty(py);
            for e in errors {
                list.append(Py::new(py, e)?)?;
            }
            value.setattr("errors", list)?;
            Ok(())
        };
        match set() {
            Ok(()) => err,
            Err(other) => other,
        }
    }
}

#[pymethods]
impl Schema {
    #[new]
    #[pyo3(signature = (schema, *, standard = false, **limits))]
    fn new(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        standard: bool,
        limits: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let options = options(limits)?;
        let schema_options = ParseOptions::new();
        let parsed = with_text(schema, max_input(&schema_options), |text| {
            Ok(schema_options
                .parse(text)
                .map_err(|e| json_error(py, &e, &Known::none()))?
                .into_owned())
        })?;
        let value = match parsed {
            Some(value) => value,
            None => convert::from_py(schema)?,
        };
        let mode = if standard {
            Mode::Standard
        } else {
            Mode::Strict
        };
        let inner = toolgate_schema::Schema::compile(&value, &Options::new().mode(mode))
            .map_err(|e| schema_error(py, &e))?;
        Ok(Self {
            inner,
            options,
            known: Known::of_schema(&value),
            source: canonical::to_string(&value),
            standard,
            warm: Mutex::new(Vec::new()),
        })
    }

    /// Parses JSON text strictly, validates it and returns the Python
    /// value, in one call: the checked value, or an exception.
    ///
    /// ``data`` is JSON text (``bytes``, ``bytearray``, ``memoryview``,
    /// ``str``), read with the schema's limits. Text that is not strict
    /// JSON raises :class:`JSONError`; strict JSON the schema refuses
    /// raises :class:`SchemaViolation`. Both messages are safe to send to a
    /// model. Integers come back exact; other numbers as ``float``, or as
    /// exact ``decimal.Decimal`` with ``decimal=True``. Large texts are
    /// read and checked with the GIL released.
    #[pyo3(signature = (data, /, *, decimal = false))]
    fn loads<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        decimal: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let numbers = if decimal {
            Numbers::new(py, true)?
        } else {
            Numbers::floats()
        };
        let out = with_text(data, max_input(&self.options), |text| {
            self.with_warm(
                |Warm {
                     checker,
                     stacks,
                     tape,
                 }| {
                    if text.len() < DETACH_AT {
                        // One pass: checked while read, the objects made meanwhile.
                        return with_keys(|keys| {
                            let mut build = PyBuild::new(py, &numbers, keys, stacks);
                            match checker.load(&self.inner, text, &mut build) {
                                Loaded::Built { .. } | Loaded::Stopped => build.finish(),
                                refused => Err(self.refusal(py, refused)),
                            }
                        });
                    }
                    // Read and checked with the GIL released, onto the warm
                    // tape; the objects made from the tape, with it.
                    let loaded = py.detach(|| checker.load(&self.inner, text, &mut *tape));
                    let out = match loaded {
                        Loaded::Built { .. } => with_keys(|keys| {
                            let mut build = PyBuild::new(py, &numbers, keys, stacks);
                            tape.replay(&mut build);
                            build.finish()
                        }),
                        refused => Err(self.refusal(py, refused)),
                    };
                    if tape.len() > KEEP_EVENTS {
                        *tape = Tape::new();
                    } else {
                        tape.clear();
                    }
                    out
                },
            )
        })?;
        match out {
            Some(value) => Ok(value),
            None => Err(PyTypeError::new_err(format!(
                "Schema.loads() takes bytes, bytearray, memoryview or str, not {}",
                data.get_type().name()?
            ))),
        }
    }

    /// The violations of ``data`` (an empty list when it is valid). ``data``
    /// is JSON text (``bytes``, ``bytearray``, ``memoryview``, ``str``),
    /// parsed strictly in Rust and never through Python objects (text that
    /// is not strict JSON raises :class:`JSONError`), or a parsed value (a
    /// ``str`` is always JSON text: pass ``'"x"'`` for the string ``x``).
    fn validate(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<ValidationError>> {
        let check = |v: &Value<'_>| match self.inner.validate(v) {
            Ok(()) => Vec::new(),
            Err(errors) => self.errors(&errors),
        };
        if is_text(data) {
            self.with_instance(py, data, check)
        } else {
            Ok(check(&convert::from_py(data)?))
        }
    }

    /// Whether ``data`` is valid: ``False`` also for JSON text that is not
    /// strict JSON (or is over the limits, or a ``str`` with a lone
    /// surrogate). ``data`` as for :meth:`validate`.
    fn is_valid(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        if !is_text(data) {
            return match convert::from_py(data) {
                Ok(v) => Ok(self.inner.is_valid(&v)),
                Err(e) if e.is_instance_of::<JSONError>(py) => Ok(false),
                Err(e) => Err(e),
            };
        }
        let verdict = with_text(data, max_input(&self.options), |text| {
            Ok(detach_if_large(py, text.len(), || {
                self.options
                    .parse(text)
                    .is_ok_and(|v| self.inner.is_valid(&v))
            }))
        });
        match verdict {
            Ok(v) => Ok(v.unwrap_or(false)),
            Err(e) if e.is_instance_of::<JSONError>(py) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Pickling: the schema's canonical text, its mode and the limits.
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let kwargs = options_kwargs(py, &self.options)?;
        kwargs.set_item("standard", self.standard)?;
        let args = PyTuple::new(py, [PyBytes::new(py, self.source.as_bytes())])?;
        Ok((args, kwargs))
    }

    fn __repr__(&self) -> String {
        format!(
            "Schema({:?}{})",
            self.source,
            if self.standard { ", standard=True" } else { "" }
        )
    }
}

/// Whether `data` is JSON text (as opposed to a parsed value).
fn is_text(data: &Bound<'_, PyAny>) -> bool {
    data.is_instance_of::<pyo3::types::PyBytes>()
        || data.is_instance_of::<pyo3::types::PyByteArray>()
        || data.is_instance_of::<pyo3::types::PyMemoryView>()
        || data.is_instance_of::<pyo3::types::PyString>()
}
