//! `Schema`, `ValidationError` and `SchemaError`.

use std::borrow::Cow;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use toolgate_json::{ParseOptions, Value};
use toolgate_schema::{Mode, Options};

use crate::convert;
use crate::json::parse;

pyo3::create_exception!(
    toolgate,
    SchemaError,
    PyValueError,
    "A JSON Schema that does not compile.\n\n\
     Attributes: ``code`` (the stable code, such as ``unknown_keyword``), \
     ``pointer`` (the JSON Pointer of the offending keyword in the schema) \
     and ``keyword`` (its name, the pointer's last token)."
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
/// instance.
#[pyclass(frozen, eq, module = "toolgate")]
#[derive(PartialEq)]
pub(crate) struct ValidationError {
    /// The stable code, such as ``type_mismatch``.
    #[pyo3(get)]
    code: &'static str,
    /// The JSON Pointer of the offending value in the instance (``""`` is the root).
    #[pyo3(get)]
    instance_pointer: String,
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
/// ``schema`` is JSON text (``bytes``, ``bytearray``, ``str``: parsed
/// strictly) or a parsed value (``dict`` or ``bool``). A schema that does not
/// compile raises :class:`SchemaError` with the keyword and its pointer.
///
/// In strict mode ``integer`` takes only integer lexemes (``3.0`` is not
/// one), an object schema with ``properties`` is closed unless it says
/// otherwise, ``format`` asserts and unknown keywords are errors.
#[pyclass(frozen, module = "toolgate")]
pub(crate) struct Schema {
    inner: toolgate_schema::Schema,
    options: ParseOptions,
}

impl Schema {
    /// The instance: JSON text parsed strictly (`Err` for text that is
    /// not strict JSON), or a Python value converted strictly.
    fn with_instance<T>(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        f: impl FnOnce(&Value<'_>) -> T,
    ) -> PyResult<T> {
        match convert::raw_text(data)? {
            Some(Cow::Borrowed(text)) => Ok(f(&parse(py, &self.options, text)?)),
            Some(Cow::Owned(text)) => Ok(f(&parse(py, &self.options, &text)?)),
            None => Ok(f(&convert::from_py(data)?)),
        }
    }
}

#[pymethods]
impl Schema {
    #[new]
    #[pyo3(signature = (schema, *, standard = false))]
    fn new(py: Python<'_>, schema: &Bound<'_, PyAny>, standard: bool) -> PyResult<Self> {
        let options = ParseOptions::new();
        let value = match convert::raw_text(schema)? {
            Some(text) => parse(py, &options, &text)?.into_owned(),
            None => convert::from_py(schema)?,
        };
        let mode = if standard {
            Mode::Standard
        } else {
            Mode::Strict
        };
        let inner = toolgate_schema::Schema::compile(&value, &Options::new().mode(mode))
            .map_err(|e| schema_error(py, &e))?;
        Ok(Self { inner, options })
    }

    /// The violations of ``data`` (an empty list when it is valid). ``data``
    /// is JSON text (``bytes``, ``bytearray``, ``str``), parsed strictly in
    /// Rust and never through Python objects (text that is not strict JSON
    /// raises :class:`JSONError`), or a parsed value (a ``str`` is always
    /// JSON text: pass ``'"x"'`` for the string ``x``).
    fn validate(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<ValidationError>> {
        self.with_instance(py, data, |v| match self.inner.validate(v) {
            Ok(()) => Vec::new(),
            Err(errors) => errors
                .iter()
                .map(|e| ValidationError {
                    code: e.code().as_str(),
                    instance_pointer: e.instance_pointer().to_owned(),
                    keyword_location: e.keyword_location().to_owned(),
                    message: e.message().to_owned(),
                })
                .collect(),
        })
    }

    /// Whether ``data`` is valid: ``False`` also for JSON text that is not
    /// strict JSON. ``data`` as for :meth:`validate`.
    fn is_valid(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        match convert::raw_text(data)? {
            Some(text) => Ok(self
                .options
                .parse(&text)
                .is_ok_and(|v| self.inner.is_valid(&v))),
            None => self.with_instance(py, data, |v| self.inner.is_valid(v)),
        }
    }
}
