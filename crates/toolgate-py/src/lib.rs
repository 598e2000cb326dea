//! Python bindings of toolgate: the extension module `toolgate._toolgate`,
//! re-exported by the Python package `toolgate` (see `python/toolgate`).
//!
//! Built with maturin as an abi3 wheel (`pip install ./crates/toolgate-py`).
//! The functions and classes here are documented for Python users; the
//! package's type stubs (`__init__.pyi`) give their signatures.
//!
//! - `loads`, `canonical`, `digest`: the strict parser and the RFC 8785
//!   canonical form (`toolgate_json`), with `JSONError`.
//! - `Schema` (with the one-pass `Schema.loads`), `ValidationError`,
//!   `SchemaViolation`, `SchemaError`: JSON Schema in toolgate's strict
//!   mode or the standard one (`toolgate_schema`).
//! - `Gate`, `ConfigError` (`gate`), and its answer `Response`, `Call`,
//!   `Reason`, `Finding` (`response`): the gate built from a config file,
//!   as `toolgate check` builds it.
//!
//! - `verify_receipt`, `ReceiptError` (`receipt`): the executor's check of
//!   a decision's signed receipt (`toolgate::receipt`).
//! - `Approvals`, `Approval` (`approvals`, built with the store): the
//!   human side of approvals, as `toolgate approvals` does it.
//!
//! Text from Python is read by `input` (limits before work), the Python
//! value of a document is made while it is read by `build`, and pointers
//! shown in messages are masked by `redact`.

#[cfg(feature = "store")]
mod approvals;
mod build;
mod convert;
mod gate;
mod input;
mod json;
mod receipt;
mod redact;
mod response;
mod schema;

use pyo3::prelude::*;

/// The optional parts built in.
const FEATURES: &[&str] = &[
    #[cfg(feature = "store")]
    "store",
];

/// The extension module.
#[pymodule]
fn _toolgate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // What this build carries, for code (and the package's tests) that
    // needs a part a wheel may be built without.
    m.add("FEATURES", FEATURES)?;
    m.add("JSONError", py.get_type::<json::JSONError>())?;
    m.add("SchemaError", py.get_type::<schema::SchemaError>())?;
    m.add("SchemaViolation", py.get_type::<schema::SchemaViolation>())?;
    m.add("ConfigError", py.get_type::<gate::ConfigError>())?;
    m.add_function(wrap_pyfunction!(json::loads, m)?)?;
    m.add_function(wrap_pyfunction!(json::canonical, m)?)?;
    m.add_function(wrap_pyfunction!(json::digest, m)?)?;
    m.add("ReceiptError", py.get_type::<receipt::ReceiptError>())?;
    m.add_function(wrap_pyfunction!(receipt::verify_receipt, m)?)?;
    m.add_class::<schema::Schema>()?;
    m.add_class::<schema::ValidationError>()?;
    m.add_class::<gate::Gate>()?;
    m.add_class::<response::Response>()?;
    m.add_class::<response::Call>()?;
    m.add_class::<response::Reason>()?;
    m.add_class::<response::Finding>()?;
    #[cfg(feature = "store")]
    {
        m.add_class::<approvals::Approvals>()?;
        m.add_class::<approvals::Approval>()?;
    }
    Ok(())
}
