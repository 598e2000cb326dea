//! toolgate: a strict gate between the tool calls a language model proposes
//! and their execution.
//!
//! # Brief overview
//!
//! A model's tool call is untrusted text. The gate reads a provider's raw
//! response with an [`adapter`] into one [`Envelope`]: the
//! [`ProposedCall`]s it carries, how the turn ended ([`Finish`]) and what
//! was noticed on the way ([`Finding`]). The stages that decide each call
//! know nothing about providers. Each call gets one sealed [`Decision`]:
//! allow, deny or needs approval, the reasons with JSON Pointers, and for a
//! call that may run, the canonical arguments the gate checked
//! ([`Decision::executable_args`]): run the tool with those, never with the
//! model's text.
//!
//! The paved path, from a config (`toolgate.toml`, see [`config`]):
//!
//! ```no_run
//! use toolgate::config::Config;
//! use toolgate::{Context, Format, Gate, Verdict};
//!
//! let config = Config::load("examples/shop/toolgate.toml")?;
//! let gate = Gate::from_config(&config)?;
//! let context = Context::new("alice", "session-1", 1);
//! # let body: &[u8] = b"{}";
//! let decisions = gate.decide(body, Format::Auto, &context, &context);
//! for d in decisions.decisions() {
//!     match (d.verdict(), d.executable_args()) {
//!         (Verdict::Allow, Some(args)) => { /* run d.tool() with args */ }
//!         _ => { /* return d.feedback() to the model as the tool result */ }
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Here the caller's [`Context`] is also the state (approvals, counters,
//! kill switch) it asserts. With a store, `toolgate_store::StoreGate`
//! (`StoreGate::from_config`) keeps that state, shared by processes and
//! replicas, and audits every decision before it is returned. This crate
//! knows no database: it owns the state traits it decides with
//! ([`StateView`], [`KillSwitch`]); the store crate implements them.
//!
//! # Where each threat is stopped
//!
//! The threats are DESIGN.md's; the stages run in this order for every
//! call ([`Gate::decide`] in `src/gate.rs`), and a later stage never
//! undoes an earlier deny.
//!
//! | Threat | Stage | Where |
//! |---|---|---|
//! | 1. a parser that drops information (duplicate keys, `NaN`, `1e400`, more precision than a double holds, depth, size) | strict parse of the body and of the arguments (`number_too_precise` unless a tool sets `round_numbers`); canonical form and digest | `toolgate-json` (`parser.rs`, `number.rs`, `canonical.rs`); `src/stage/parse.rs` |
//! | 2. a validator that coerces (`"1200"`, `true` as 1, unknown members) | schema, no coercion | `toolgate-schema` (`keywords/`); `src/stage/schema.rs` |
//! | 3. the right shape, the wrong act (another user's order, SSRF, no approval) | argument policies (a tool's URL policies, the default URL guard on every other URL-looking string, hosts resolved where a resolver is configured); authorization (Cedar); risk tier and approval | `src/stage/policy.rs`, `src/stage/default_urls.rs`, `src/url_guard.rs`; `src/stage/authorize.rs`, `src/authz/`; `src/stage/approval.rs` |
//! | 4. output cut off (`length`, `max_tokens`) | finish: a turn that did not complete denies every call | `src/adapter/finish.rs`, `src/stage/finish.rs` |
//! | 5. calls taken from free text (markup in prose or pages) | adapters read structured tool-call fields only; markup is a finding | `src/adapter/` (one file per provider), `src/adapter/leak.rs` |
//! | 6. the loop runs away, probes, learns internals | limits (turns, calls, repeated rejections), replays, kill switch; feedback with codes and pointers only | `src/stage/limits.rs`, `src/stage/kill_switch.rs`, `src/gate.rs` (replays), `src/feedback.rs` |
//! | 7. tool results carry instructions or markup back in | the tool-result sanitizer | `src/sanitize.rs`, `src/sanitize/` |
//! | unknown or look-alike tool names | registry, exact names | `src/stage/registry.rs`, `src/registry.rs` |
//! | a deny edited into an allow after the fact | [`Decision`] is sealed; only monotone operations from outside | `src/decision.rs` |

pub mod adapter;
mod authorize;
pub mod authz;
pub mod config;
mod context;
pub mod danger;
mod decider;
mod decision;
pub mod feedback;
mod fsread;
mod gate;
pub mod hidden;
pub mod hook;
pub mod identifier;
pub mod limit;
mod reason;
pub mod receipt;
pub mod registry;
pub mod sanitize;
pub mod sse;
mod stage;
pub mod url_guard;
pub mod wire;

// The public interface is:
pub use crate::adapter::{
    read, AdapterOptions, Arguments, CallKind, Envelope, Error as AdapterError,
    ErrorCode as AdapterErrorCode, Finding, FindingCode, Finish, Format, ProposedCall,
};
pub use crate::authorize::{
    Authorization, Authorizer, AuthzRequest, AuthzVerdict, DenyAll, PolicyFact,
};
pub use crate::authz::CedarAuthorizer;
pub use crate::config::RefusedArguments;
pub use crate::context::{
    Approval, ApprovalGrant, ApprovalKey, ApprovalScope, Context, ContextError, ContextErrorKind,
    KillSwitch, LimitEvent, Rejection, StateError, StateView,
};
pub use crate::decider::Decider;
pub use crate::decision::{
    ApprovalRef, Decision, Decisions, PinnedUrl, Verdict, ESCALATED_DENY_FEEDBACK,
    ESCALATED_HOLD_FEEDBACK,
};
pub use crate::gate::{FromConfigError, Gate, GateBuilder, GateError};
pub use crate::reason::{Code, Reason};
