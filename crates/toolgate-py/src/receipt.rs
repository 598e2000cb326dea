//! `verify_receipt` and `ReceiptError`: the executor's check of a gate's
//! signed receipt (`toolgate::receipt`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use toolgate::receipt::{self, ReceiptPublicKey};

pyo3::create_exception!(
    toolgate,
    ReceiptError,
    PyValueError,
    "A receipt that does not let the call run.\n\n\
     Attribute: ``code``, one of ``receipt_malformed``, \
     ``receipt_bad_signature``, ``receipt_not_allowed``, \
     ``receipt_other_tool``, ``receipt_other_arguments``, \
     ``receipt_expired``."
);

/// Checks that ``receipt`` lets the caller run ``tool`` with exactly
/// ``arguments`` (the canonical argument text the decision carried, as
/// ``str`` or UTF-8 ``bytes``, byte for byte): signed by ``public_key``
/// (64 hex digits), verdict allow, for that tool and the SHA-256 of those
/// bytes, and not expired at ``now`` (unix seconds; the system clock when
/// omitted).
///
/// Returns what the receipt says, as a dict: ``call_id`` (or ``None``),
/// ``tool``, ``args`` (``sha256:…``), ``verdict``, ``issued`` and
/// ``expires``. Raises ``ReceiptError`` (with ``code``) otherwise, and
/// ``ValueError`` for a public key that is not one.
#[pyfunction]
#[pyo3(signature = (receipt, tool, arguments, public_key, now = None))]
pub(crate) fn verify_receipt<'py>(
    py: Python<'py>,
    receipt: &str,
    tool: &str,
    arguments: &Bound<'py, PyAny>,
    public_key: &str,
    now: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let text: String = if let Ok(s) = arguments.extract::<String>() {
        s
    } else if let Ok(b) = arguments.cast::<PyBytes>() {
        String::from_utf8(b.as_bytes().to_vec())
            .map_err(|_| PyValueError::new_err("`arguments` is not UTF-8"))?
    } else {
        return Err(PyTypeError::new_err(
            "`arguments` must be the canonical argument text (str or bytes)",
        ));
    };
    let key = ReceiptPublicKey::from_hex(public_key).ok_or_else(|| {
        PyValueError::new_err("`public_key` is not an Ed25519 public key as 64 hex digits")
    })?;
    let now = match now {
        Some(n) => n,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    match receipt::verify(receipt, tool, &text, &key, now) {
        Ok(claims) => {
            let d = PyDict::new(py);
            d.set_item("call_id", claims.call_id)?;
            d.set_item("tool", claims.tool)?;
            d.set_item("args", claims.args)?;
            d.set_item("verdict", claims.verdict.as_str())?;
            d.set_item("issued", claims.issued)?;
            d.set_item("expires", claims.expires)?;
            Ok(d)
        }
        Err(e) => {
            let err = ReceiptError::new_err(e.to_string());
            err.value(py).setattr("code", e.as_str())?;
            Err(err)
        }
    }
}
