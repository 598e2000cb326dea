//! Between Python objects and `toolgate_json::Value`, strictly.
//!
//! Python to JSON takes exactly `dict` (with `str` keys), `list`, `str`,
//! `int`, `float` (finite), `bool` and `None`, by exact type: a subclass, a
//! tuple, a set, bytes or any other object is a `TypeError`; `bool` is never
//! an integer; a value the strict profile refuses (a lone surrogate, a
//! noncharacter, an infinite float, too deep) is a `JSONError` with its
//! code. JSON to Python gives integers of any size as exact `int`s, other
//! numbers as `float`s or, on request, `decimal.Decimal`s.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use toolgate_json::{pointer, ErrorCode, Limit, Number, Object, Value};

use crate::json::{json_error_at, Place};
use crate::redact::Known;

/// Decimal digits converted by one `int(str)` or `str(int)` call: below
/// CPython's default `sys.get_int_max_str_digits()` (4300).
const DIGITS_PER_CALL: usize = 4000;

/// The JSON value of a Python object (see the module documentation).
pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value<'static>> {
    let mut path = String::new();
    from_py_at(obj, &mut path, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, path: &mut String, depth: usize) -> PyResult<Value<'static>> {
    if depth > Limit::Depth.ceiling() {
        return Err(value_error(obj.py(), ErrorCode::TooDeep, path));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.is_truthy()?));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(Value::Number(int_number(obj, path)?));
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        let f: f64 = obj.extract()?;
        return match Number::from_f64(f) {
            Some(n) => Ok(Value::Number(n)),
            None => Err(value_error(obj.py(), ErrorCode::NonFiniteNumber, path)),
        };
    }
    if obj.is_exact_instance_of::<PyString>() {
        return Ok(Value::String(Cow::Owned(string(obj, path)?)));
    }
    if obj.is_exact_instance_of::<PyList>() {
        let list = obj.cast::<PyList>()?;
        let mut items = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let len = path.len();
            pointer::push_index(path, i);
            items.push(from_py_at(&item, path, depth + 1)?);
            path.truncate(len);
        }
        return Ok(Value::Array(items));
    }
    if obj.is_exact_instance_of::<PyDict>() {
        let dict = obj.cast::<PyDict>()?;
        let mut members = Object::new();
        for (key, value) in dict.iter() {
            if !key.is_exact_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "a dict key must be a str, not {}, in the object at `{}`",
                    type_name(&key),
                    Known::none().redact(path)
                )));
            }
            let name = string(&key, path)?;
            let len = path.len();
            pointer::push_token(path, &name);
            let v = from_py_at(&value, path, depth + 1)?;
            path.truncate(len);
            members.insert(name, v);
        }
        return Ok(Value::Object(members));
    }
    Err(PyTypeError::new_err(format!(
        "{} is not a JSON value (dict, list, str, int, float, bool or None) at `{}`",
        type_name(obj),
        Known::none().redact(path)
    )))
}

/// The `JSONError` of a Python value the strict profile refuses: the code,
/// the value's pointer (input names masked in the message and `pointer`).
fn value_error(py: Python<'_>, code: ErrorCode, path: &str) -> PyErr {
    json_error_at(
        py,
        &Place {
            code,
            line: 0,
            column: 0,
            offset: 0,
            pointer: path,
        },
        &Known::none(),
    )
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "an object".to_owned(), |n| format!("`{n}`"))
}

/// A `str`'s text: no lone surrogate, no noncharacter (the strict parser
/// refuses both, so no JSON text it accepts holds one).
fn string(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<String> {
    let s = obj.cast::<PyString>()?;
    let Ok(text) = s.to_str() else {
        return Err(value_error(obj.py(), ErrorCode::LoneSurrogate, path));
    };
    if text.chars().any(is_noncharacter) {
        return Err(value_error(obj.py(), ErrorCode::Noncharacter, path));
    }
    Ok(text.to_owned())
}

fn is_noncharacter(c: char) -> bool {
    let c = u32::from(c);
    (0xFDD0..=0xFDEF).contains(&c) || c & 0xFFFE == 0xFFFE
}

/// An exact `int`'s number, of any size.
fn int_number(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<Number> {
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(Number::from(v));
    }
    let negative = obj.lt(0)?;
    let magnitude = if negative { obj.neg()? } else { obj.clone() };
    let mut lexeme = String::new();
    if negative {
        lexeme.push('-');
    }
    int_digits(&magnitude, &mut lexeme)?;
    Number::from_lexeme(&lexeme).map_err(|e| value_error(obj.py(), e.code(), path))
}

/// Appends the decimal digits of a non-negative `int`, in pieces that stay
/// under CPython's limit on `str(int)`.
fn int_digits(n: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    let bits: usize = n.call_method0("bit_length")?.extract()?;
    // 3.32 bits a digit: fewer than DIGITS_PER_CALL digits.
    if bits < DIGITS_PER_CALL * 3 {
        out.push_str(n.str()?.to_str()?);
        return Ok(());
    }
    // Split at about half the digits: n = high * 10^k + low.
    let k = bits * 3 / 20;
    let ten = 10_i64.into_pyobject(n.py())?;
    let divisor = ten.pow(k, n.py().None())?;
    let (high, low): (Bound<'_, PyAny>, Bound<'_, PyAny>) = n.divmod(&divisor)?.extract()?;
    int_digits(&high, out)?;
    let mut low_digits = String::new();
    int_digits(&low, &mut low_digits)?;
    for _ in low_digits.len()..k {
        out.push('0');
    }
    out.push_str(&low_digits);
    Ok(())
}

/// How non-integer numbers come out: `float` (the nearest double), or
/// `decimal.Decimal` of the exact lexeme.
pub(crate) struct Numbers<'py> {
    decimal: Option<Bound<'py, PyAny>>,
}

impl<'py> Numbers<'py> {
    /// `decimal.Decimal` for non-integers when `decimal`, else `float`.
    pub(crate) fn new(py: Python<'py>, decimal: bool) -> PyResult<Self> {
        let decimal = if decimal {
            Some(py.import("decimal")?.getattr("Decimal")?)
        } else {
            None
        };
        Ok(Self { decimal })
    }

    /// `float` for non-integers.
    pub(crate) fn floats() -> Self {
        Self { decimal: None }
    }
}

/// Member names of at most this many bytes are kept in the key cache.
const CACHED_KEY_BYTES: usize = 32;
/// Slots in the key cache (a power of two).
const KEY_SLOTS: usize = 512;

/// One slot of the key cache: a name and its `str`.
pub(crate) type KeySlot = Option<(Box<str>, Py<PyString>)>;

thread_local! {
    /// The `str` objects of recent member names, by a hash of their bytes,
    /// kept from one conversion to the next on this thread: the names a
    /// program's tools use are made once. At most `KEY_SLOTS` names of at
    /// most `CACHED_KEY_BYTES` bytes each (a new name takes its slot's
    /// place), so input cannot grow it.
    static KEYS: std::cell::RefCell<Vec<KeySlot>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The `str` of a member name, from the cache when it is there.
pub(crate) fn key<'py>(
    py: Python<'py>,
    keys: &mut Vec<KeySlot>,
    name: &str,
) -> Bound<'py, PyString> {
    if name.len() > CACHED_KEY_BYTES {
        return PyString::new(py, name);
    }
    if keys.is_empty() {
        keys.resize_with(KEY_SLOTS, || None);
    }
    let slot = slot_of(name.as_bytes());
    if let Some(Some((cached, s))) = keys.get(slot) {
        if &**cached == name {
            return s.bind(py).clone();
        }
    }
    let s = PyString::new(py, name);
    if let Some(entry) = keys.get_mut(slot) {
        *entry = Some((name.into(), s.clone().unbind()));
    }
    s
}

/// The key cache's slot of a name of at most [`CACHED_KEY_BYTES`] bytes:
/// its first and last bytes (eight, or four, overlapping when the name is
/// shorter) and its length, mixed by one multiplication. Names that differ
/// only in their middle bytes share a slot, and take turns in it.
#[inline]
fn slot_of(name: &[u8]) -> usize {
    let (a, b) = match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
        (Some(a), Some(b)) => (u64::from_le_bytes(*a), u64::from_le_bytes(*b)),
        _ => match (name.first_chunk::<4>(), name.last_chunk::<4>()) {
            (Some(a), Some(b)) => (
                u64::from(u32::from_le_bytes(*a)),
                u64::from(u32::from_le_bytes(*b)),
            ),
            _ => (name.iter().fold(0u64, |w, &x| (w << 8) | u64::from(x)), 0),
        },
    };
    let len = name.len() as u64;
    let h = (a ^ b.rotate_left(29) ^ len.rotate_left(58)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // The top bits, as many as index the slots.
    (h >> (64 - KEY_SLOTS.trailing_zeros())) as usize
}

/// The Python object of a JSON value.
pub(crate) fn to_py<'py>(
    py: Python<'py>,
    value: &Value<'_>,
    numbers: &Numbers<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    with_keys(|keys| to_py_with(py, value, numbers, keys))
}

/// Runs `f` with this thread's key cache.
pub(crate) fn with_keys<R>(f: impl FnOnce(&mut Vec<KeySlot>) -> R) -> R {
    KEYS.with(|keys| match keys.try_borrow_mut() {
        Ok(mut keys) => f(&mut keys),
        // (Not reentered; should it be, a cache of its own.)
        Err(_) => f(&mut Vec::new()),
    })
}

pub(crate) fn to_py_with<'py>(
    py: Python<'py>,
    value: &Value<'_>,
    numbers: &Numbers<'py>,
    keys: &mut Vec<KeySlot>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n, numbers)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(to_py_with(py, item, numbers, keys)?);
            }
            PyList::new(py, out)?.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (name, v) in members.iter() {
                dict.set_item(key(py, keys, name), to_py_with(py, v, numbers, keys)?)?;
            }
            dict.into_any()
        }
    })
}

/// The Python number of a JSON number: `int`, or `float` or `Decimal`.
pub(crate) fn number_to_py<'py>(
    py: Python<'py>,
    n: &Number,
    numbers: &Numbers<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    if let Some(v) = n.as_i64() {
        return Ok(v.into_pyobject(py)?.into_any());
    }
    if n.is_integer_lexeme() {
        let lexeme = n.lexeme();
        let (negative, digits) = match lexeme.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, &*lexeme),
        };
        let v = int_from_digits(py, digits)?;
        return if negative { v.neg() } else { Ok(v) };
    }
    if let Some(decimal) = &numbers.decimal {
        // The lexeme as written: `Decimal` reads every JSON number exactly.
        return decimal.call1((&*n.lexeme(),));
    }
    match n.as_f64() {
        Some(f) => Ok(PyFloat::new(py, f).into_any()),
        None => Err(PyValueError::new_err(
            "number_out_of_range: a number with no double value",
        )),
    }
}

/// The `int` of a string of decimal digits of any length, in pieces that
/// stay under CPython's limit on `int(str)`.
fn int_from_digits<'py>(py: Python<'py>, digits: &str) -> PyResult<Bound<'py, PyAny>> {
    if digits.len() <= DIGITS_PER_CALL {
        return py.get_type::<PyInt>().call1((digits,));
    }
    let mid = digits.len() / 2;
    let (high, low) = (
        digits.get(..mid).unwrap_or_default(),
        digits.get(mid..).unwrap_or_default(),
    );
    let ten = 10_i64.into_pyobject(py)?;
    let scale = ten.pow(low.len(), py.None())?;
    int_from_digits(py, high)?
        .mul(scale)?
        .add(int_from_digits(py, low)?)
}
