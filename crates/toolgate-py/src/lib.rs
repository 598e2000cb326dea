//! Python bindings of toolgate: the extension module `toolgate._toolgate`,
//! re-exported by the Python package `toolgate` (see `python/toolgate`).
//!
//! Built with maturin as an abi3 wheel (`pip install ./crates/toolgate-py`).
//! The functions and classes here are documented for Python users; the
//! package's type stubs (`__init__.pyi`) give their signatures.
//!
//! - `loads`, `canonical`, `digest`: the strict parser and the RFC 8785
//!   canonical form (`toolgate_json`), with `JSONError`.
//! - `Schema`, `ValidationError`, `SchemaError`: JSON Schema in toolgate's
//!   strict mode or the standard one (`toolgate_schema`).
//! - `Gate`, `Response`, `Call`, `Reason`, `Finding`, `ConfigError`: the gate
//!   built from a config file, as `toolgate check` builds it.
//! - `verify_receipt`, `ReceiptError`: the executor's check of a decision's
//!   signed receipt (`toolgate::receipt`).

mod convert;
mod gate;
mod json;
mod receipt;
mod schema;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _toolgate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("JSONError", py.get_type::<json::JSONError>())?;
    m.add("SchemaError", py.get_type::<schema::SchemaError>())?;
    m.add("ConfigError", py.get_type::<gate::ConfigError>())?;
    m.add_function(wrap_pyfunction!(json::loads, m)?)?;
    m.add_function(wrap_pyfunction!(json::canonical, m)?)?;
    m.add_function(wrap_pyfunction!(json::digest, m)?)?;
    m.add("ReceiptError", py.get_type::<receipt::ReceiptError>())?;
    m.add_function(wrap_pyfunction!(receipt::verify_receipt, m)?)?;
    m.add_class::<schema::Schema>()?;
    m.add_class::<schema::ValidationError>()?;
    m.add_class::<gate::Gate>()?;
    m.add_class::<gate::Response>()?;
    m.add_class::<gate::Call>()?;
    m.add_class::<gate::Reason>()?;
    m.add_class::<gate::Finding>()?;
    Ok(())
}
