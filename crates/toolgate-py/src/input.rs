//! JSON text handed in from Python, with the size limit applied before any
//! work: `bytes` and a `memoryview` of a whole `bytes` object are read in
//! place; a `bytearray` or any other `memoryview` is copied once (after the
//! limit passed: a mutable buffer cannot be lent to a parse that runs
//! without the GIL, while another thread may change it); a `str` is read in
//! place when it is ASCII and encoded once otherwise, after its length in
//! code points (at most its UTF-8 length) passed the limit.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};
use toolgate_json::ErrorCode;

use crate::json::{json_error_at, Place};
use crate::redact::Known;

/// Runs `f` on the bytes of JSON text given as `bytes`, `bytearray`,
/// `memoryview` or `str`; `Ok(None)` when `obj` is none of them. Text over
/// `max_bytes` is refused (`too_large`) before it is copied or encoded; a
/// `str` holding a lone surrogate is refused (`lone_surrogate`).
pub(crate) fn with_text<R>(
    obj: &Bound<'_, PyAny>,
    max_bytes: usize,
    f: impl FnOnce(&[u8]) -> PyResult<R>,
) -> PyResult<Option<R>> {
    let py = obj.py();
    if let Ok(b) = obj.cast::<PyBytes>() {
        // The parser checks the length before it reads anything.
        return f(b.as_bytes()).map(Some);
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        check_len(py, b.len(), max_bytes)?;
        return f(&b.to_vec()).map(Some);
    }
    if let Ok(view) = obj.cast::<PyMemoryView>() {
        let nbytes: usize = view.getattr("nbytes")?.extract()?;
        check_len(py, nbytes, max_bytes)?;
        let base = view.getattr("obj")?;
        if let Ok(b) = base.cast::<PyBytes>() {
            if b.as_bytes().len() == nbytes && view.getattr("c_contiguous")?.is_truthy()? {
                return f(b.as_bytes()).map(Some);
            }
        }
        let copy = view.call_method0("tobytes")?;
        let copy = copy.cast::<PyBytes>()?;
        return f(copy.as_bytes()).map(Some);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        // Each code point is at least one UTF-8 byte.
        check_len(py, s.len()?, max_bytes)?;
        if s.call_method0("isascii")?.is_truthy()? {
            // The str's own bytes: an ASCII str is its UTF-8 form.
            return match s.to_str() {
                Ok(text) => f(text.as_bytes()).map(Some),
                Err(_) => Err(lone_surrogate(s)),
            };
        }
        // Encoded into a temporary (not cached on the str).
        let encoded = match s.encode_utf8() {
            Ok(b) => b,
            Err(_) => return Err(lone_surrogate(s)),
        };
        return f(encoded.as_bytes()).map(Some);
    }
    Ok(None)
}

/// The length check done before the text is copied or encoded.
fn check_len(py: Python<'_>, len: usize, max_bytes: usize) -> PyResult<()> {
    if len <= max_bytes {
        return Ok(());
    }
    Err(json_error_at(
        py,
        &Place {
            code: ErrorCode::TooLarge,
            line: 0,
            column: 0,
            offset: max_bytes,
            pointer: "",
        },
        &Known::none(),
    ))
}

/// The `JSONError` of a `str` with a lone surrogate: it has no UTF-8 form.
/// The place is that of the surrogate in the text encoded with it
/// (`surrogatepass`), where the parser would have found it.
fn lone_surrogate(s: &Bound<'_, PyString>) -> PyErr {
    let py = s.py();
    let (line, column, offset) = s
        .call_method1("encode", ("utf-8", "surrogatepass"))
        .ok()
        .and_then(|b| {
            let bytes = b.cast::<PyBytes>().ok()?.as_bytes().to_vec();
            // A surrogate encodes as ED A0..BF xx.
            let offset = bytes
                .windows(2)
                .position(|w| matches!(w, [0xED, 0xA0..=0xBF]))?;
            let before = bytes.get(..offset)?;
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            Some((line, offset - start + 1, offset))
        })
        .unwrap_or((0, 0, 0));
    json_error_at(
        py,
        &Place {
            code: ErrorCode::LoneSurrogate,
            line,
            column,
            offset,
            pointer: "",
        },
        &Known::none(),
    )
}
