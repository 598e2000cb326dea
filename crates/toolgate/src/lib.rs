//! toolgate: a strict gate between the tool calls a language model proposes
//! and their execution.
//!
//! The gate reads a provider's raw response with an [`adapter`] into one
//! [`Envelope`]: the [`ProposedCall`]s it carries, how the turn ended
//! ([`Finish`]) and what was noticed on the way ([`Finding`]). The stages
//! that decide each call know nothing about providers.

pub mod adapter;
pub mod sanitize;
pub mod config;
pub mod registry;
pub mod url_guard;

// The public interface is:
pub use crate::adapter::{
    read, AdapterOptions, Arguments, CallKind, Envelope, Error as AdapterError,
    ErrorCode as AdapterErrorCode, Finding, FindingCode, Finish, Format, ProposedCall,
};
