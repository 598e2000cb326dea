//! Compiles a tool's JSON Schema (draft 2020-12) into a strict validator that
//! never coerces, and lints schemas that are too loose for a tool gate.
//!
//! - [`Schema::compile`] turns a schema (a [`toolgate_json::Value`]) and
//!   [`Options`] into an immutable, cheaply cloned [`Schema`], or a
//!   [`CompileError`] naming the keyword and its schema pointer. Nothing is
//!   silently ignored in strict mode: a keyword toolgate cannot enforce is a
//!   compile error.
//! - [`Schema::is_valid`] is the fast path; [`Schema::validate`] lists every
//!   violation (up to [`Options::max_errors`]) as [`ValidationErrors`], each
//!   with a stable [`ErrorCode`], the instance JSON Pointer and the schema
//!   keyword location. [`ValidationError::masked`] renders one without any
//!   instance value, for feeding back to a model.
//! - [`Checker`] is the strict path with no tree: raw bytes in, a
//!   [`Checked`] out (on success the canonical text and its digest),
//!   validated while [`toolgate_json::Reader`] reads; whatever it cannot
//!   accept that way takes the tree path, so its verdicts are exactly
//!   [`Schema::is_valid`]'s on the parsed value.
//! - [`Checker::load`] is that path with the value out: it tells a
//!   [`Build`]er the document while it checks it, so a caller makes its own
//!   value (a Python object, say) in the same pass, with no tree between;
//!   the verdicts and errors are [`Checker::check`]'s.
//! - [`lint()`] flags schemas that are too loose for a gate, as [`Finding`]s.
//!
//! # Modes
//!
//! [`Mode::Strict`] (the default) differs from the specification where the
//! specification would let a model's mistake through:
//!
//! | | standard | strict |
//! |---|---|---|
//! | `{"type":"integer"}` vs `3.0`, `1e2`, `-0.0` | valid | `type_mismatch` |
//! | `properties` without `additionalProperties`/`unevaluatedProperties` | open | closed: `unknown_property` |
//! | `format` | annotation (unless [`Options::format_assertion`]) | assertion; a format without a checker does not compile |
//! | unknown keyword | ignored | `unknown_keyword` compile error |
//! | draft-07 keywords (`definitions`, `dependencies`, `additionalItems`) | ignored as unknown | `unsupported_keyword` |
//!
//! Both modes compare numbers exactly (decimals, no floating point) and judge
//! an instance number at its *canonical value*, the value of the canonical
//! text a tool receives ([`toolgate_json::canonical`]): an integer lexeme at
//! its exact digits, any other lexeme at the exact value of its canonical text
//! (the shortest digits of its nearest double). So `4999.99999999999999999`,
//! which a tool receives as `5000`, fails `exclusiveMaximum: 5000`, and
//! whatever is accepted is accepted again as the tool receives it. Both modes
//! treat `null` as a value (a `null` member is present, and is checked against
//! its schema), and refuse a `$schema` of draft-04/06/07 or 2019-09 with
//! `unsupported_draft` (only 2020-12 semantics are implemented; `items` arrays
//! and `definitions` have 2020-12 spellings).
//!
//! In strict mode an object schema closes only where it stands on its own: the
//! branches of `allOf`/`anyOf`/`oneOf`, `not`, `if`/`then`/`else` and
//! `dependentSchemas` are left open, and their enclosing schema closes over the
//! members they declare (as `unevaluatedProperties: false` would).
//!
//! ```
//! use toolgate_json::from_str;
//! use toolgate_schema::{ErrorCode, Options, Schema};
//!
//! let schema = from_str(r#"{
//!     "type": "object",
//!     "properties": {"amount": {"type": "integer", "minimum": 1, "maximum": 500}},
//!     "required": ["amount"]
//! }"#)?;
//! let schema = Schema::compile(&schema, &Options::new())?;
//! assert!(schema.is_valid(&from_str(r#"{"amount": 300}"#)?));
//!
//! let errors = schema.validate(&from_str(r#"{"amount": "300", "note": "x"}"#)?).unwrap_err();
//! let codes: Vec<_> = errors.iter().map(|e| e.code()).collect();
//! assert_eq!(codes, [ErrorCode::TypeMismatch, ErrorCode::UnknownProperty]);
//! assert_eq!(errors.as_slice()[0].masked(), "type_mismatch at `/amount`: expected integer");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Remote `$ref`s are never fetched: register documents with
//! [`Options::register`]. The draft 2020-12 meta-schemas are bundled.
//!
//! The design decisions, the conformance results and the expected failures
//! are in the crate's `README.md`.

mod checker;
mod compiler;
mod decimal;
mod error;
mod format;
mod keywords;
mod leaf;
mod lint;
mod load;
mod meta;
mod names;
mod options;
mod schema;
mod stream;
mod uri;
mod validator;

#[cfg(test)]
mod test_util;

pub use crate::{
    checker::{Checked, Checker, Valid},
    error::{CompileError, CompileErrorCode, ErrorCode, ValidationError, ValidationErrors},
    lint::{lint, Finding, FindingCode},
    load::{Build, Loaded},
    options::{Mode, Options},
    schema::Schema,
};
