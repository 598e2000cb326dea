//! Between Python objects and `toolgate_json::Value`, strictly.
//!
//! Python to JSON takes exactly `dict` (with `str` keys), `list`, `str`,
//! `int`, `float` (finite), `bool` and `None`, by exact type: a subclass, a
//! tuple, a set, bytes or any other object is a `TypeError`; `bool` is never
//! an integer. JSON to Python gives integers of any size as exact `int`s,
//! other numbers as `float`s.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use toolgate_json::{pointer, Limit, Number, Object, Value};

/// Decimal digits converted by one `int(str)` or `str(int)` call: below
/// CPython's default `sys.get_int_max_str_digits()` (4300).
const DIGITS_PER_CALL: usize = 4000;

/// JSON text given as `bytes`, `bytearray` or `str` (UTF-8 encoded), or
/// `None` when `obj` is none of them.
pub(crate) fn raw_text<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Option<Cow<'a, [u8]>>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(Cow::Borrowed(b.as_bytes())));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(Cow::Owned(b.to_vec())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str() {
            Ok(text) => Ok(Some(Cow::Borrowed(text.as_bytes()))),
            // A `str` holding a lone surrogate has no UTF-8 form.
            Err(_) => Err(PyValueError::new_err(
                "lone_surrogate: the str holds a lone surrogate and is not text",
            )),
        };
    }
    Ok(None)
}

/// The JSON value of a Python object (see the module documentation).
pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value<'static>> {
    let mut path = String::new();
    from_py_at(obj, &mut path, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, path: &mut String, depth: usize) -> PyResult<Value<'static>> {
    if depth > Limit::Depth.ceiling() {
        return Err(PyValueError::new_err(format!(
            "too_deep: nesting exceeds {} at `{path}`",
            Limit::Depth.ceiling()
        )));
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
            None => Err(PyValueError::new_err(format!(
                "non_finite_number: a float that is not finite at `{path}`"
            ))),
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
                    "a dict key must be a str, not {}, in the object at `{path}`",
                    type_name(&key)
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
        "{} is not a JSON value (dict, list, str, int, float, bool or None) at `{path}`",
        type_name(obj)
    )))
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
        return Err(PyValueError::new_err(format!(
            "lone_surrogate: a str holds a lone surrogate at `{path}`"
        )));
    };
    if text.chars().any(is_noncharacter) {
        return Err(PyValueError::new_err(format!(
            "noncharacter: a str holds a unicode noncharacter at `{path}`"
        )));
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
    Number::from_lexeme(&lexeme)
        .map_err(|e| PyValueError::new_err(format!("the int at `{path}` is not a number: {e}")))
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

/// The Python object of a JSON value.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => number_to_py(py, n)?,
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (name, v) in members.iter() {
                dict.set_item(name, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

fn number_to_py<'py>(py: Python<'py>, n: &Number) -> PyResult<Bound<'py, PyAny>> {
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
