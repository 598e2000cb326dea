//! toolgate's state: a hash-chained audit log, approvals bound to the exact
//! arguments, per-session counters and the kill switch.
//!
//! # Brief overview
//!
//! - [`Store`] is the trait the gate and the service use. Every method is
//!   synchronous, every error is a typed [`Error`] with an [`ErrorCode`],
//!   and every error means *deny* (`store_unavailable`).
//! - [`SqliteStore`] is the embedded implementation: one SQLite file in WAL
//!   mode, shared safely by several processes, with versioned migrations.
//!   [`SqliteOptions`] sets the busy timeout, durability, escalation
//!   threshold and the [`Clock`].
//! - [`PgStore`] is the shared implementation: one PostgreSQL database for
//!   several gate replicas (one chain, one approvals queue, one kill switch),
//!   with the same records and hashes. [`PgOptions`] sets its timeouts,
//!   connections, escalation threshold and clock.
//! - The audit log holds one [`AuditRecord`] per decision or change of
//!   state, built from an [`AuditEntry`] and chained by SHA-256; the exact
//!   wire format and hash preimage are in [`audit`]. [`Store::verify`]
//!   returns a [`Verification`] naming the first broken record;
//!   [`write_checkpoint`] signs the chain's heads with a [`CheckpointKey`]
//!   (Ed25519) into a sink outside the store, and [`verify_checkpoints`]
//!   finds a log cut short and its head rewritten, which the chain alone
//!   cannot. A record naming an identifier longer than
//!   [`toolgate::identifier::MAX_IDENTIFIER_BYTES`] is refused.
//! - [`Approval`]s are bound to (user, session, tool, argument digest),
//!   expire, and are used once ([`Store::consume`]); standing approvals cover
//!   a tool for a user until a time. Pending ones are capped per session,
//!   user and requester ([`PendingLimits`]).
//! - [`ToolPin`]s keep each tool definition an MCP server showed, per
//!   upstream, by the digest of its canonical form, with what a human made
//!   of it (approved, pending, rejected; at most
//!   [`MAX_PENDING_PINS_PER_UPSTREAM`] pending, the newest definition of a
//!   tool replacing older pending ones), and [`CatalogPin`]s each whole
//!   catalog by its digest ([`Store::observe_catalog`],
//!   [`Store::approve_pin`]); an approval of a call made under a pinned
//!   definition is bound to it too ([`bound_digest`]).
//! - [`SessionCounters`] count turns, calls and rejections and escalate a
//!   session after repeated rejections; [`KillSwitchState`] stops writes or
//!   everything, in every process sharing the store.
//! - [`StoreGate`] puts a [`toolgate::Gate`] on a store: its state view
//!   reads the kill switch, session counters and approvals from the store,
//!   and every decision is audited before it is returned. Build it from a
//!   config with [`open_config_store`] and [`StoreGate::configured`]. The
//!   gate itself knows no database: this crate depends on it, never the
//!   other way.
//! - Times are [`Timestamp`]s (Unix milliseconds) passed by the caller or
//!   read from the store's [`Clock`] ([`SystemClock`], [`ManualClock`]).
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_store::{AuditEntry, ManualClock, SqliteOptions, Store, Timestamp, AuditVerdict};
//!
//! let t0 = Timestamp::from_unix_seconds(1_767_225_600);
//! let store = SqliteOptions::new()
//!     .clock(Arc::new(ManualClock::new(t0)))
//!     .open_in_memory()?; // `.open("toolgate.db")` for a file
//! let args = toolgate_json::from_str(r#"{"order_id":"o-1","amount":30}"#)?;
//! let digest = toolgate_json::canonical::digest(&args);
//! store.append(
//!     AuditEntry::new(t0, AuditVerdict::NeedsApproval)
//!         .user("alice").session("s-1").tool("refund").call_id("call_1")
//!         .arguments(&args, &[], &store.redaction_key()?)?,
//! )?;
//!
//! let in_an_hour = Timestamp::from_unix_seconds(1_767_229_200);
//! let id = store.request_approval("alice", "s-1", "refund", &digest, in_an_hour)?;
//! store.approve(id, "bob", "checked the order")?;
//! let now = Timestamp::from_unix_seconds(1_767_225_700);
//! assert!(store.consume("alice", "s-1", "refund", &digest, now)?.is_some());
//! assert!(store.consume("alice", "s-1", "refund", &digest, now)?.is_none()); // used once
//! assert!(store.verify()?.is_intact());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Crate features
//!
//! None. SQLite is compiled in (`rusqlite`'s `bundled`); the PostgreSQL
//! client (`postgres`, with TLS by rustls as the URL's `sslmode` asks) is
//! always built too.

#![deny(missing_docs)]

mod approval;
mod asked;
pub mod audit;
mod changes;
mod checkpoint;
mod entity_source;
mod error;
mod group;
mod held_facts;
mod id;
mod kill;
mod notice;
mod persist;
mod pg;
mod pin;
mod result_record;
mod rules;
mod session;
mod sqlite;
mod store;
mod time;
mod why;

pub use crate::entity_source::{connect_source, PgEntitySource};
pub use crate::persist::secrets::{redacted_arguments, REDACTED};
#[cfg(feature = "tokio")]
pub use crate::persist::Unfinished;
pub use crate::result_record::ToolResultRecord;
// The public interface is:
pub use crate::{
    approval::{
        bound_digest, Approval, ApprovalFilter, ApprovalId, ApprovalKind, ApprovalState,
        ApprovalUse, ApprovalVote, PendingLimits, Quorum, MAX_QUORUM,
    },
    asked::asking_record,
    audit::{
        AppendReceipt, AuditEntry, AuditFilter, AuditRecord, AuditVerdict, BreakKind, ChainBreak,
        RedactionKey, Verification, GENESIS,
    },
    changes::{Change, ChangeListener},
    checkpoint::{
        verify_checkpoints, write_checkpoint, ChainHead, Checkpoint, CheckpointKey,
        CheckpointPublicKey, CheckpointReport,
    },
    error::{Error, ErrorCode},
    id::ParseIdError,
    kill::{KillMode, KillSwitchState},
    notice::{Notice, NoticeState, MAX_NOTICE_OUTCOME_BYTES},
    persist::{
        exhausted_tools, open_config_store, open_store, OpenError, OpenErrorKind, StoreGate,
        StoreOptions, StoreUrl, UsageOf, ESCALATED_DENY_FEEDBACK, ESCALATED_HOLD_FEEDBACK,
    },
    pg::{PgOptions, PgStore, PG_SCHEMA_VERSION},
    pin::{
        approved_before, diff_definitions, CatalogPin, DefinitionDiff, DiffOp, MemberChange,
        PinFilter, PinFirst, PinId, PinState, SeenTool, ToolPin, MAX_DEFINITION_BYTES,
        MAX_PENDING_PINS_PER_UPSTREAM,
    },
    session::SessionCounters,
    sqlite::{Durability, SqliteOptions, SqliteStore, SCHEMA_VERSION},
    store::{AppendDone, DecisionReads, Store},
    time::{Clock, ManualClock, SystemClock, Timestamp},
    why::{approval_context, used_of, ApprovalContext, LimitUse, RECENT_DECISIONS},
};
