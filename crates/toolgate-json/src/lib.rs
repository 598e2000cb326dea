//! A strict, bounded JSON parser for untrusted text, and the canonical form of
//! what it accepts.
//!
//! toolgate reads every tool-call argument with this parser. It accepts exactly
//! RFC 8259 JSON under the I-JSON profile (RFC 7493) and loses nothing:
//!
//! - [`from_slice`] (or [`ParseOptions::parse`]) turns bytes into a [`Value`],
//!   or an [`Error`] with a stable [`ErrorCode`], the byte offset, line,
//!   column and the JSON Pointer of the place.
//! - [`Value`] keeps numbers exactly ([`Number`]: integer lexemes of any
//!   length, finite doubles otherwise) and objects as [`Object`]s whose member
//!   names are unique.
//! - [`canonical::to_string`] and [`canonical::digest`] give the RFC 8785
//!   canonical text of a value and its SHA-256 digest: the bytes a tool
//!   receives and the fingerprint an approval is bound to.
//! - [`Reader`] is the same profile without a tree: raw bytes in, events to
//!   a [`Visitor`] (a validator can check the document as it is read) and
//!   the canonical text out; it accepts exactly what [`from_slice`] accepts.
//!   [`visit`] tells a parsed [`Value`] to a visitor as the reader tells its
//!   text, and a [`Tape`] keeps what a reader told, to tell it again later
//!   (read without a lock, build where it is held).
//! - [`Limits`] bounds the work: input bytes, nesting depth, string bytes,
//!   members per object, items per array and values in total. Each is on by
//!   default, has its own error code and a hard ceiling.
//!
//! # What is rejected
//!
//! | input | code |
//! |---|---|
//! | comments, single quotes, trailing commas, leading zeros, `+1`, `.5`, non-JSON whitespace | `invalid_syntax` |
//! | `NaN`, `Infinity`, `-Infinity`, `1e400` | `non_finite_number` |
//! | `1e-400` (non-zero, rounds to zero) | `number_out_of_range` |
//! | `{"a":1,"a":2}`, also `{"limit":1,"\u006cimit":2}`, at any depth | `duplicate_key` |
//! | invalid UTF-8, overlongs, encoded surrogates, UTF-16/32 text | `invalid_utf8` |
//! | a leading byte order mark | `byte_order_mark` |
//! | `"\ud800"`, `"\udc00\ud800"` | `lone_surrogate` |
//! | U+FDD0..U+FDEF, U+xFFFE, U+xFFFF, raw or escaped | `noncharacter` |
//! | raw U+0000..U+001F in a string | `control_character` |
//! | `"\x"`, `"\u12G4"` | `invalid_escape` |
//! | `{"amount": 300` (the input ends early) | `truncated` |
//! | `{} x` | `trailing_data` |
//! | over a limit | `too_large`, `too_deep`, `string_too_long`, `too_many_members`, `too_many_items`, `too_many_values` |
//!
//! Integer lexemes are accepted at any length and kept exactly: range is the
//! schema's business. The parser never recurses, so a 100,000-deep input is
//! refused with `too_deep` like a 65-deep one.
//!
//! ```
//! use toolgate_json::{canonical, from_slice};
//!
//! let v = from_slice(br#"{"b": 1.0, "a": "x\u00e9"}"#)?;
//! assert_eq!(canonical::to_string(&v), r#"{"a":"xé","b":1}"#);
//! # Ok::<(), toolgate_json::Error>(())
//! ```

pub mod canonical;
mod error;
mod limits;
mod number;
mod parser;
pub mod pointer;
mod reader;
mod replay;
mod value;

pub use crate::{
    canonical::Digest,
    error::{Error, ErrorCode},
    limits::{Limit, LimitError, Limits},
    number::NumberError,
    parser::{from_slice, from_str, ParseOptions},
    reader::{Name, Read, Reader, Visitor},
    replay::{visit, Tape},
    value::{Number, Object, Value},
};
