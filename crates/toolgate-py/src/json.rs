//! `loads`, `canonical`, `digest` and `JSONError`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::marker::Ungil;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use toolgate_json::{canonical as canon, ErrorCode, Limit, Limits, ParseOptions, Value};

use crate::convert::{self, Numbers};
use crate::input::with_text;
use crate::redact::Known;

pyo3::create_exception!(
    toolgate,
    JSONError,
    PyValueError,
    "A JSON text the strict parser refuses.\n\n\
     Attributes: ``code`` (the stable code, such as ``duplicate_key``), \
     ``pointer`` (the JSON Pointer of the place, with every member name the \
     input chose masked as ``*``), ``exact_pointer`` (the same with the \
     input's own names: never show it to a model), ``line`` and ``column`` \
     (one-based, the column in bytes; 0 when the text was refused before \
     it was read), ``offset`` (zero-based byte offset). The message and \
     ``str(e)`` never contain text from the input."
);

/// Inputs at least this long are read with the GIL released, so that other
/// Python threads run meanwhile; below it, releasing costs more than it
/// frees.
pub(crate) const DETACH_AT: usize = 16 * 1024;

/// Runs `f` with the GIL released when `len` is at least [`DETACH_AT`].
pub(crate) fn detach_if_large<T, F>(py: Python<'_>, len: usize, f: F) -> T
where
    F: Ungil + FnOnce() -> T,
    T: Ungil,
{
    if len >= DETACH_AT {
        py.detach(f)
    } else {
        f()
    }
}

/// Where and why a text was refused.
pub(crate) struct Place<'a> {
    pub(crate) code: ErrorCode,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) offset: usize,
    /// The exact pointer, input names and all.
    pub(crate) pointer: &'a str,
}

/// The `JSONError` of a refusal: the message and `pointer` show only the
/// names `known` lists (and array indexes), `exact_pointer` everything.
pub(crate) fn json_error_at(py: Python<'_>, place: &Place<'_>, known: &Known) -> PyErr {
    let shown = known.redact(place.pointer);
    let mut message = format!("{}: {}", place.code.as_str(), place.code.description());
    if place.line > 0 {
        message.push_str(&format!(" at line {} column {}", place.line, place.column));
    }
    if place.code == ErrorCode::DuplicateKey {
        message.push_str(&format!(" in object at `{shown}`"));
    } else {
        message.push_str(&format!(" at `{shown}`"));
    }
    let err = JSONError::new_err(message);
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("code", place.code.as_str())?;
        value.setattr("pointer", shown)?;
        value.setattr("exact_pointer", place.pointer)?;
        value.setattr("line", place.line)?;
        value.setattr("column", place.column)?;
        value.setattr("offset", place.offset)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(other) => other,
    }
}

/// The `JSONError` of a parse error.
pub(crate) fn json_error(py: Python<'_>, e: &toolgate_json::Error, known: &Known) -> PyErr {
    json_error_at(
        py,
        &Place {
            code: e.code(),
            line: e.line(),
            column: e.column(),
            offset: e.offset(),
            pointer: e.pointer(),
        },
        known,
    )
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

/// The options as keyword arguments again (those that differ from the
/// defaults), for pickling.
pub(crate) fn options_kwargs<'py>(
    py: Python<'py>,
    options: &ParseOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(py);
    for limit in Limit::ALL {
        let n = options.limits().get(limit);
        if n != limit.default_value() {
            kwargs.set_item(limit.name(), n)?;
        }
    }
    // (The options tell their noncharacter rule only by using it.)
    if options.parse("\"\u{FDD0}\"".as_bytes()).is_ok() {
        kwargs.set_item("allow_noncharacters", true)?;
    }
    Ok(kwargs)
}

/// The largest input the options accept, in bytes.
pub(crate) fn max_input(options: &ParseOptions) -> usize {
    options.limits().get(Limit::InputBytes)
}

/// Parses JSON text strictly, with the GIL released for a large text.
pub(crate) fn parse<'a>(
    py: Python<'_>,
    options: &ParseOptions,
    text: &'a [u8],
    known: &Known,
) -> PyResult<Value<'a>> {
    detach_if_large(py, text.len(), || options.parse(text)).map_err(|e| json_error(py, &e, known))
}

/// JSON text (`bytes`, `bytearray`, `memoryview`) parsed strictly, or a
/// Python value converted strictly: a `str` is a value, the JSON string, so
/// that `canonical(loads(text)) == canonical(text)` for every text.
fn canonical_of(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let options = options(kwargs)?;
    if !data.is_instance_of::<pyo3::types::PyString>() {
        let text = with_text(data, max_input(&options), |text| {
            let value = parse(py, &options, text, &Known::none())?;
            Ok(detach_if_large(py, text.len(), || canon::to_string(&value)))
        })?;
        if let Some(text) = text {
            return Ok(text);
        }
    }
    Ok(canon::to_string(&convert::from_py(data)?))
}

/// Parses JSON text strictly: a drop-in for ``json.loads`` where strictness
/// matters.
///
/// ``data`` is ``bytes``, ``bytearray``, ``memoryview`` or ``str``.
/// Integers of any size come back as exact ``int``; other numbers as
/// ``float``, or as exact ``decimal.Decimal`` with ``decimal=True``.
/// Duplicate member names (also spelled with escapes), ``NaN``,
/// ``Infinity``, ``1e400``, comments, trailing commas, lone surrogates,
/// invalid UTF-8 and a cut-off text are refused with :class:`JSONError`,
/// whose message never holds text from the input. Keyword arguments set the
/// limits (``max_input_bytes``, ``max_depth``, ``max_string_bytes``,
/// ``max_object_members``, ``max_array_items``, ``max_values``), checked
/// before the text is copied or encoded, and ``allow_noncharacters``.
#[pyfunction]
#[pyo3(signature = (data, /, *, decimal = false, **limits))]
pub(crate) fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    decimal: bool,
    limits: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let options = options(limits)?;
    let numbers = Numbers::new(py, decimal)?;
    let value = with_text(data, max_input(&options), |text| {
        let value = parse(py, &options, text, &Known::none())?;
        convert::to_py(py, &value, &numbers)
    })?;
    match value {
        Some(value) => Ok(value),
        None => Err(PyTypeError::new_err(format!(
            "loads() takes bytes, bytearray, memoryview or str, not {}",
            data.get_type().name()?
        ))),
    }
}

/// The RFC 8785 canonical text of a value, as UTF-8 ``bytes``: the exact
/// bytes ``toolgate json check --canonical`` prints and a tool receives.
///
/// ``data`` is JSON text as ``bytes``, ``bytearray`` or ``memoryview``
/// (parsed strictly, with the limits of :func:`loads`) or a Python value
/// (``dict`` with ``str`` keys, ``list``, ``str``, ``int``, finite
/// ``float``, ``bool``, ``None``; anything else is a ``TypeError``). A
/// ``str`` is a value, the JSON string: ``canonical(loads(text)) ==
/// canonical(text)``.
#[pyfunction]
#[pyo3(signature = (data, /, **limits))]
pub(crate) fn canonical<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let text = canonical_of(py, data, limits)?;
    Ok(PyBytes::new(py, text.as_bytes()))
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
    let text = canonical_of(py, data, limits)?;
    Ok(detach_if_large(py, text.len(), || {
        canon::Digest::of(text.as_bytes()).to_string()
    }))
}
