//! `loads`, `canonical`, `digest` and `JSONError`.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use toolgate_json::{canonical as canon, Limit, Limits, ParseOptions, Value};

use crate::convert;

pyo3::create_exception!(
    toolgate,
    JSONError,
    PyValueError,
    "A JSON text the strict parser refuses.\n\n\
     Attributes: ``code`` (the stable code, such as ``duplicate_key``), \
     ``pointer`` (the JSON Pointer of the place), ``line`` and ``column`` \
     (one-based; the column counts bytes), ``offset`` (zero-based byte \
     offset). The message never contains text from the input."
);

/// The `JSONError` of a parse error, with its attributes set.
pub(crate) fn json_error(py: Python<'_>, e: &toolgate_json::Error) -> PyErr {
    let err = JSONError::new_err(e.to_string());
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", e.code().as_str())?;
        value.setattr("pointer", e.pointer())?;
        value.setattr("line", e.line())?;
        value.setattr("column", e.column())?;
        value.setattr("offset", e.offset())?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// The parse options from keyword arguments: the limits by name
/// (`max_input_bytes`, `max_depth`, `max_string_bytes`,
/// `max_object_members`, `max_array_items`, `max_values`) and
/// `allow_noncharacters`.
pub(crate) fn options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<ParseOptions> {
    let mut limits = Limits::new();
    let mut allow_noncharacters = false;
    if let Some(kwargs) = kwargs {
        for (key, value) in kwargs.iter() {
            let name: String = key.extract()?;
            if name == "allow_noncharacters" {
                allow_noncharacters = value.extract::<bool>()?;
                continue;
            }
            let Some(limit) = Limit::ALL.iter().find(|l| l.name() == name) else {
                return Err(PyTypeError::new_err(format!(
                    "unknown keyword argument `{name}` (the limits are {}, and allow_noncharacters)",
                    Limit::ALL.map(Limit::name).join(", ")
                )));
            };
            if value.is_instance_of::<pyo3::types::PyBool>() {
                return Err(PyTypeError::new_err(format!("`{name}` must be an int")));
            }
            let n: usize = value.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "`{name}` must be between 1 and {}",
                    limit.ceiling()
                ))
            })?;
            limits = limits
                .set(*limit, n)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
    }
    Ok(ParseOptions::new()
        .with_limits(limits)
        .allow_noncharacters(allow_noncharacters))
}

/// Parses JSON text strictly.
pub(crate) fn parse<'a>(
    py: Python<'_>,
    options: &ParseOptions,
    text: &'a [u8],
) -> PyResult<Value<'a>> {
    options.parse(text).map_err(|e| json_error(py, &e))
}

/// JSON text (`bytes`, `bytearray`) parsed strictly, or a Python value
/// converted strictly: a `str` is a value, the JSON string, so that
/// `canonical(loads(text)) == canonical(text)` for every text.
fn value_of(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Value<'static>> {
    let options = options(kwargs)?;
    if data.is_instance_of::<pyo3::types::PyString>() {
        return convert::from_py(data);
    }
    match convert::raw_text(data)? {
        Some(Cow::Borrowed(text)) => Ok(parse(py, &options, text)?.into_owned()),
        Some(Cow::Owned(text)) => Ok(parse(py, &options, &text)?.into_owned()),
        None => convert::from_py(data),
    }
}

/// Parses JSON text strictly: a drop-in for ``json.loads`` where strictness
/// matters.
///
/// ``data`` is ``bytes``, ``bytearray`` or ``str``. Integers of any size come
/// back as exact ``int``; other numbers as ``float``. Duplicate member
/// names (also spelled with escapes), ``NaN``, ``Infinity``, ``1e400``,
/// comments, trailing commas, lone surrogates, invalid UTF-8 and a cut-off
/// text are refused with :class:`JSONError`. Keyword arguments set the limits
/// (``max_input_bytes``, ``max_depth``, ``max_string_bytes``,
/// ``max_object_members``, ``max_array_items``, ``max_values``) and
/// ``allow_noncharacters``.
#[pyfunction]
#[pyo3(signature = (data, /, **limits))]
pub(crate) fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = options(limits)?;
    let Some(text) = convert::raw_text(data)? else {
        return Err(PyTypeError::new_err(format!(
            "loads() takes bytes, bytearray or str, not {}",
            data.get_type().name()?
        )));
    };
    let value = parse(py, &options, &text)?;
    convert::to_py(py, &value)
}

/// The RFC 8785 canonical text of a value, as UTF-8 ``bytes``: the exact
/// bytes ``toolgate json check --canonical`` prints and a tool receives.
///
/// ``data`` is JSON text as ``bytes`` or ``bytearray`` (parsed strictly,
/// with the limits of :func:`loads`) or a Python value (``dict`` with
/// ``str`` keys, ``list``, ``str``, ``int``, finite ``float``, ``bool``,
/// ``None``; anything else is a ``TypeError``). A ``str`` is a value, the
/// JSON string: ``canonical(loads(text)) == canonical(text)``.
#[pyfunction]
#[pyo3(signature = (data, /, **limits))]
pub(crate) fn canonical<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let value = value_of(py, data, limits)?;
    Ok(PyBytes::new(py, canon::to_string(&value).as_bytes()))
}

/// ``"sha256:"`` and the SHA-256 of the canonical text, in hex: the digest
/// ``toolgate json check`` prints and approvals are bound to. ``data`` as
/// for :func:`canonical`.
#[pyfunction]
#[pyo3(signature = (data, /, **limits))]
pub(crate) fn digest<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyDict>>,
) -> PyResult<String> {
    let value = value_of(py, data, limits)?;
    Ok(canon::digest(&value).to_string())
}
