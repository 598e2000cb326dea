//! toolgate: a strict gate between the tool calls a language model proposes
//! and their execution.
//!
//! The gate reads a provider's raw response with an [`adapter`] into one
//! [`Envelope`]: the [`ProposedCall`]s it carries, how the turn ended
//! ([`Finish`]) and what was noticed on the way ([`Finding`]). The stages
//! that decide each call know nothing about providers.

pub mod adapter;
mod authorize;
pub mod authz;
pub mod config;
mod context;
pub mod danger;
mod decision;
pub mod feedback;
mod fsread;
mod gate;
mod reason;
pub mod registry;
pub mod sanitize;
mod stage;
pub mod url_guard;
pub mod wire;

// The public interface is:
pub use crate::adapter::{
    read, AdapterOptions, Arguments, CallKind, Envelope, Error as AdapterError,
    ErrorCode as AdapterErrorCode, Finding, FindingCode, Finish, Format, ProposedCall,
};
pub use crate::authorize::{Authorization, Authorizer, AuthzRequest, AuthzVerdict, DenyAll};
pub use crate::authz::CedarAuthorizer;
pub use crate::config::RefusedArguments;
pub use crate::context::{
    Approval, ApprovalGrant, ApprovalKey, ApprovalScope, Context, ContextError, ContextErrorKind,
    KillSwitch, Rejection, StateError, StateView,
};
pub use crate::decision::{
    ApprovalRef, Decision, Decisions, PinnedUrl, Verdict, ESCALATED_DENY_FEEDBACK,
    ESCALATED_HOLD_FEEDBACK,
};
pub use crate::gate::{FromConfigError, Gate, GateBuilder, GateError};
pub use crate::reason::{Code, Reason};
