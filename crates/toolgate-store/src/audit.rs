//! The audit log: records, the hash chain and its wire format.
//!
//! # Wire format: one audit record
//!
//! Every decision and every change of state is one record. A record is
//! written as one RFC 8785 canonical JSON object (members sorted, no
//! whitespace, shortest numbers) and exported as one line of JSON Lines
//! ([`crate::Store::export_jsonl`]):
//!
//! ```json
//! {"actor":null,"approval":null,"arguments":{"order_id":"o-1","amount":30},"call_id":"call_1","digest":"sha256:…","hash":"sha256:…","note":null,"policies":["owner-may-refund"],"prev":"sha256:…","reasons":[],"seq":42,"session":"s-42","time":1767225600000,"tool":"refund","user":"alice","v":2,"verdict":"allow"}
//! ```
//!
//! | member | type | meaning |
//! |---|---|---|
//! | `v` | `1`, `2` or `3` | the record's format version: `2` for every record a single chain (SQLite) writes now, `3` for every record a segmented log (PostgreSQL) writes now, `1` for records written before them (see [Versions](#versions)) |
//! | `seq` | integer ≥ 1 | position in the log: in a single chain 1, 2, 3, … without gaps; in a segmented log increasing along each segment, with gaps (see [Segments](#segments)) |
//! | `segment`, `sseq` | integers ≥ 1, version 3 only | the segment the record was appended to (the `seq` of the segment's first record) and its position in it: 1, 2, 3, … without gaps |
//! | `time` | integer | when it was decided, Unix milliseconds (given by the caller) |
//! | `verdict` | string | see [`AuditVerdict`]: `allow`, `deny`, `needs_approval`, `approval_granted`, `approval_denied`, `approval_used`, `kill_switch`, `unauthorized`, `forbidden`, `config_reload`, `tool_result`, `pin_pending`, `pin_approved`, `pin_rejected`, `tool_offered` |
//! | `user`, `session`, `tool`, `call_id` | string or `null` | who, in which conversation, which tool, which call of the provider's response |
//! | `reasons` | array of strings | reason codes (for `kill_switch`: the new mode, `off`, `deny_writes` or `deny_all`; for `unauthorized`: `missing_token`, `malformed_token` or `unknown_token`; for `forbidden`: `role:` and the token's role; for `config_reload`: `applied` or `refused`; for `tool_result`: what was found in the result, e.g. `chat_token`, `truncated`, `output_schema_mismatch`, `upstream_timeout`; for `pin_pending`: the findings in the definition's text, e.g. `hidden:description:zero_width`; for `pin_approved`: `trust_on_first_use` when no human approved it) |
//! | `policies` | array of strings | the ids of the policies that decided |
//! | `digest` | `"sha256:"` + 64 hex digits, or `null` | SHA-256 of the canonical arguments, *before* redaction: the value approvals bind to |
//! | `arguments` | JSON or `null` | the canonical arguments, each secret field (JSON Pointers given by the caller) replaced by the string `"hmac-sha256:…"`: HMAC-SHA256 of its own canonical text under the store's [`RedactionKey`] |
//! | `refused_arguments` | object, or absent | a call whose arguments were never parsed into a value (they did not parse, or the call was denied before: an unknown tool, a response refused as a whole): what was received, bounded. `{"bytes": N, "text": "…", "truncated": false}`: the raw text (a string's contents, an inline value's JSON text), at most 4,096 bytes, cut at a character boundary, `truncated` when cut; or, when the store's config says `refused_arguments = "digest"`, `{"bytes": N, "hmac": "hmac-sha256:…"}` under the store's [`RedactionKey`]. `N` is the whole text's length |
//! | `risk` | string, or absent | the tool's risk tier (`read`, `write`, `destructive`) in the config that decided; absent for an unknown tool and for records that are not calls |
//! | `approval` | string or `null` | the approval the record concerns: its id in decimal digits, the same id `/v1/decide` and `/v1/approvals` give (`"7"`); a version-1 record carries it as an integer (`7`) |
//! | `actor` | string or `null` | the human (or system) who approved, denied or flipped the kill switch; the token's name for `forbidden` and `config_reload` (never the token itself) |
//! | `note` | string or `null` | the actor's note, the kill switch's reason; `"standing"` for the use of a standing approval; the method and route for `unauthorized` and `forbidden`; why a reload was refused |
//! | `prev` | `"sha256:"` + 64 hex digits | the previous record's `hash`; 64 zeros for record 1 |
//! | `hash` | `"sha256:"` + 64 hex digits | this record's hash |
//!
//! `refused_arguments` and `risk` are written only when present, so a record
//! without them (every record written before they existed) has the body,
//! and the hash, it always had.
//!
//! ## Versions
//!
//! Each record keeps the version it was written with, and is rendered,
//! hashed and verified in that version's format, so a record's body (and
//! its hash) never changes once written:
//!
//! | `v` | differs in |
//! |---|---|
//! | `1` | `approval` is an integer (`"approval":7`) |
//! | `2` | `approval` is a string of decimal digits (`"approval":"7"`), like every other place an approval id appears |
//! | `3` | as `2`, with `segment` and `sseq` in the body: a record of a segmented log |
//!
//! A single chain (SQLite) writes [`RECORD_VERSION`], a segmented log
//! (PostgreSQL) [`SEGMENT_RECORD_VERSION`]. A stored record of any other
//! version cannot be read: [`crate::Store::verify`] names it `malformed`.
//!
//! ## The chain
//!
//! The *body* of a record is its canonical JSON object without `prev` and
//! `hash`. Its hash is
//!
//! ```text
//! hash(n) = SHA-256( prev(n) ‖ body(n) )      prev(n) = hash(n-1), prev(1) = 32 zero bytes
//! ```
//!
//! where `prev(n)` is the 32 raw bytes of the previous hash and `body(n)` the
//! UTF-8 bytes of the body. To check an exported line by hand: remove `hash`
//! and `prev`, canonicalize what remains (it already is canonical), prepend the
//! 32 bytes that `prev` spells in hex, hash, and compare with `hash`; then
//! check that `prev` equals the previous line's `hash`.
//!
//! Because `seq` is in the body and every hash covers its predecessor, a
//! changed, deleted, reordered or inserted record breaks the chain at that
//! record ([`crate::Store::verify`] names it). The store also keeps the chain's
//! head (last `seq` and `hash`), so a record cut from the end or appended
//! around the store is named too. Someone who can rewrite the whole file can
//! rewrite the whole chain: keep the head that [`Verification::head`] reports
//! somewhere else (a log shipper, a ticket) to pin history up to that point.
//!
//! ## Segments
//!
//! The PostgreSQL store, shared by several replicas, keeps one log made of
//! chains rather than one chain, so that replicas never wait for one
//! another's commits:
//!
//! - Each store (each replica process) appends to a *segment* of its own:
//!   a chain whose records have `sseq` 1, 2, 3, … and
//!   `hash = SHA-256(prev ‖ body)` as above, `prev` being the previous
//!   record *of the segment*. Only that store writes the segment's head, so
//!   its lock is never contended by other replicas.
//! - `seq` comes from one database sequence, drawn after the segment's head
//!   is locked: it is unique in the log and grows along each segment, and
//!   it is in each record's body, so no record can be moved in the order.
//!   Numbers drawn by a transaction that rolled back are never used: gaps
//!   are not breaks.
//! - The *root chain* ties the segments together: the records written
//!   before the log was segmented (version 1 or 2, a single chain), then
//!   the first record of each segment, in the order they were opened. A
//!   segment's first record has `prev` = the root chain's last hash (its
//!   `segment` is its own `seq`), and opening a segment is the one moment a
//!   replica locks the root's head: once per process.
//!
//! So the records of every segment hang off the root chain: a record
//! changed, removed, moved or relinked in any segment, a whole segment
//! removed, or a segment opened around the store breaks a hash or a link,
//! and the stored heads (the root's, and each segment's) name a tail cut
//! from a segment or a record appended past it. What the log proves about
//! the order of records in *different* segments is their `seq`: the order
//! in which they drew their numbers (within a replica, the order they
//! committed in), fixed by the hashes; it does not prove that one replica
//! saw another's record. [`Verification::head`] is the last record by
//! `seq`; to pin a segmented log outside the store, keep each segment's
//! head (the last record of each `segment` in an export).
//!
//! To check an export of a segmented log by hand: group the lines by
//! `segment` (lines without it are the root chain's first records), check
//! each line's hash as above, that each segment's lines link by `prev` in
//! `sseq` order with `seq` increasing, and that the root chain (lines
//! without `segment`, then each segment's first line, by `seq`) links by
//! `prev` from 32 zero bytes.
//!
//! Secret fields are replaced by a keyed digest: HMAC-SHA256 under a random
//! 32-byte key that the store creates once and keeps in its own database
//! ([`crate::Store::redaction_key`]). Whoever reads records (the API, the
//! approvals page, an export) cannot test guesses of a low-entropy secret (a
//! 4-digit PIN) against them; equal secrets still give equal digests within
//! one store, so records can be correlated. Whoever can read the database
//! itself has the key.

use std::borrow::Cow;
use std::fmt;

use toolgate_json::{canonical, Digest, Object, Value};

use crate::approval::ApprovalId;
use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

mod redact;
mod text;

pub(crate) use self::redact::redact;
pub(crate) use self::text::str_array;
use self::text::{json_str, write_record};

/// The version new records are written with, their `v` member. Records
/// written before it keep their own version (see the module's
/// [versions](crate::audit#versions)).
pub const RECORD_VERSION: u32 = 2;

/// The version of records written to a segmented log (PostgreSQL, where
/// each store appends to a chain segment of its own): version 2 with the
/// record's `segment` and `sseq` in its body (see the module's
/// [segments](crate::audit#segments)).
pub const SEGMENT_RECORD_VERSION: u32 = 3;

/// The record versions this build reads, renders and verifies.
pub(crate) const RECORD_VERSIONS: [u32; 3] = [1, RECORD_VERSION, SEGMENT_RECORD_VERSION];

/// The stored version `v` if this build can read it.
pub(crate) fn record_version(v: i64) -> Option<u32> {
    u32::try_from(v)
        .ok()
        .filter(|v| RECORD_VERSIONS.contains(v))
}

/// The longest raw text of refused arguments kept in a record, in bytes.
pub const REFUSED_TEXT_MAX: usize = 4096;

/// The hash before the first record: 32 zero bytes.
pub const GENESIS: Digest = Digest::from_bytes([0; 32]);

/// What a record says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuditVerdict {
    /// `allow`: the call may run.
    Allow,
    /// `deny`: the call was refused.
    Deny,
    /// `needs_approval`: the call waits for a human.
    NeedsApproval,
    /// `approval_granted`: a human approved (or granted a standing approval).
    ApprovalGranted,
    /// `approval_denied`: a human denied (or revoked) an approval.
    ApprovalDenied,
    /// `approval_used`: an approval let a call through.
    ApprovalUsed,
    /// `approval_voted`: an approver approved a single approval that needs
    /// more distinct approvers ([`crate::Quorum`]); `actor` names the
    /// approver, `note` holds how many of how many approved (`1 of 2`)
    /// and their note. The last approver's approval is `approval_granted`.
    ApprovalVoted,
    /// `approval_withdrawn`: a pending approval was withdrawn because the
    /// call it was requested for is gone (its client cancelled it or went
    /// away); `actor` names who withdrew it, `note` why.
    ApprovalWithdrawn,
    /// `kill_switch`: the kill switch changed; `reasons` holds the new mode.
    KillSwitch,
    /// `unauthorized`: a request to the service without a valid token;
    /// `reasons` says why, `note` names the route.
    Unauthorized,
    /// `forbidden`: a valid token whose role may not use the route;
    /// `actor` is the token's name, `note` the route.
    Forbidden,
    /// `config_reload`: the service re-read its config; `reasons` is
    /// `applied` or `refused` (and `note` then says why).
    ConfigReload,
    /// `tool_result`: a tool's result on its way back to the model was
    /// checked; `reasons` holds what was found (the sanitizer's finding
    /// codes, or why the result was refused), `call_id` the call it
    /// answers, `note` where it passed (for example `mcp result`).
    ToolResult,
    /// `pin_pending`: the MCP proxy saw a tool definition no human has
    /// approved (new, changed or renamed); `tool` is its name, `digest`
    /// the definition's digest, `note` the upstream, `reasons` the
    /// findings in its text.
    PinPending,
    /// `pin_approved`: a tool definition was approved, by `actor` (a human,
    /// or `trust-on-first-use` with the reason `trust_on_first_use` for
    /// the first catalog of an upstream).
    PinApproved,
    /// `pin_rejected`: a human rejected (or revoked) a tool definition.
    PinRejected,
    /// `tool_offered`: a request to the API proxy offered the model a
    /// registered tool whose definition differs from the registered one;
    /// `tool` is its name, `digest` the offered schema's digest, `reasons`
    /// what differs (`offered_schema_differs`), `note` what the proxy did
    /// (`reported`, `replaced`, `refused`).
    ToolOffered,
    /// `checkpoint`: a signed checkpoint of the chain's heads was written
    /// (see [`crate::write_checkpoint`]); `note` holds its digest and how
    /// many records it covers.
    Checkpoint,
    /// `limit_reset`: an operator forgot a limit key's counted calls
    /// ([`crate::Store::reset_limit`]); `reasons` holds the key, `actor`
    /// who, `note` why.
    LimitReset,
}

impl AuditVerdict {
    /// Every verdict, in the order of the kinds ([`AuditVerdict::kind`]).
    pub const ALL: [Self; 19] = [
        Self::Allow,
        Self::Deny,
        Self::NeedsApproval,
        Self::ApprovalGranted,
        Self::ApprovalDenied,
        Self::ApprovalUsed,
        Self::ApprovalWithdrawn,
        Self::ApprovalVoted,
        Self::KillSwitch,
        Self::Unauthorized,
        Self::Forbidden,
        Self::ConfigReload,
        Self::ToolResult,
        Self::PinPending,
        Self::PinApproved,
        Self::PinRejected,
        Self::ToolOffered,
        Self::Checkpoint,
        Self::LimitReset,
    ];

    /// The kind of record this verdict belongs to (what `GET /v1/audit
    /// ?kind=` filters by): `decision`, `approval`, `kill_switch`, `auth`,
    /// `reload`, `result`, `pin`, `offered`, `checkpoint` or `limit`. Every verdict
    /// has one, so every record can be found by its kind.
    pub const fn kind(self) -> &'static str {
        match self {
            Self::Allow | Self::Deny | Self::NeedsApproval => "decision",
            Self::ApprovalGranted
            | Self::ApprovalDenied
            | Self::ApprovalUsed
            | Self::ApprovalWithdrawn
            | Self::ApprovalVoted => "approval",
            Self::KillSwitch => "kill_switch",
            Self::Unauthorized | Self::Forbidden => "auth",
            Self::ConfigReload => "reload",
            Self::ToolResult => "result",
            Self::PinPending | Self::PinApproved | Self::PinRejected => "pin",
            Self::ToolOffered => "offered",
            Self::Checkpoint => "checkpoint",
            Self::LimitReset => "limit",
        }
    }

    /// The wire name, e.g. `needs_approval`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
            Self::NeedsApproval => "needs_approval",
            Self::ApprovalGranted => "approval_granted",
            Self::ApprovalDenied => "approval_denied",
            Self::ApprovalUsed => "approval_used",
            Self::ApprovalVoted => "approval_voted",
            Self::ApprovalWithdrawn => "approval_withdrawn",
            Self::KillSwitch => "kill_switch",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::ConfigReload => "config_reload",
            Self::ToolResult => "tool_result",
            Self::PinPending => "pin_pending",
            Self::PinApproved => "pin_approved",
            Self::PinRejected => "pin_rejected",
            Self::ToolOffered => "tool_offered",
            Self::Checkpoint => "checkpoint",
            Self::LimitReset => "limit_reset",
        }
    }

    /// The verdict with this wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "allow" => Self::Allow,
            "deny" => Self::Deny,
            "needs_approval" => Self::NeedsApproval,
            "approval_granted" => Self::ApprovalGranted,
            "approval_denied" => Self::ApprovalDenied,
            "approval_used" => Self::ApprovalUsed,
            "approval_voted" => Self::ApprovalVoted,
            "approval_withdrawn" => Self::ApprovalWithdrawn,
            "kill_switch" => Self::KillSwitch,
            "unauthorized" => Self::Unauthorized,
            "forbidden" => Self::Forbidden,
            "config_reload" => Self::ConfigReload,
            "tool_result" => Self::ToolResult,
            "pin_pending" => Self::PinPending,
            "pin_approved" => Self::PinApproved,
            "pin_rejected" => Self::PinRejected,
            "tool_offered" => Self::ToolOffered,
            "checkpoint" => Self::Checkpoint,
            "limit_reset" => Self::LimitReset,
            _ => return None,
        })
    }
}

impl fmt::Display for AuditVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One audit record as the caller gives it, before it has a place in the
/// chain. Build it with [`AuditEntry::new`] and the setters.
///
/// ```
/// use toolgate_store::{AuditEntry, Timestamp, AuditVerdict};
///
/// let args = toolgate_json::from_str(r#"{"order_id":"o-1","card":"4111"}"#)?;
/// let key = toolgate_store::RedactionKey::from_bytes([7; 32]);
/// let entry = AuditEntry::new(Timestamp::from_unix_seconds(1_767_225_600), AuditVerdict::Allow)
///     .user("alice")
///     .session("s-42")
///     .tool("refund")
///     .call_id("call_1")
///     .policy("owner-may-refund")
///     .arguments(&args, &["/card"], &key)?;
/// assert!(entry.arguments.as_deref().is_some_and(|a| !a.contains("4111")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditEntry {
    /// When it was decided.
    pub time: Timestamp,
    /// What was decided.
    pub verdict: AuditVerdict,
    /// The end user.
    pub user: Option<String>,
    /// The session (conversation).
    pub session: Option<String>,
    /// The tool's exact name.
    pub tool: Option<String>,
    /// The provider's call id.
    pub call_id: Option<String>,
    /// Reason codes.
    pub reasons: Vec<String>,
    /// Ids of the policies that decided.
    pub policies: Vec<String>,
    /// The digest of the canonical arguments (before redaction).
    pub digest: Option<Digest>,
    /// The canonical arguments with secret fields replaced by their digest.
    pub arguments: Option<String>,
    /// The approval concerned.
    pub approval: Option<ApprovalId>,
    /// Who acted (approvals, kill switch).
    pub actor: Option<String>,
    /// A note (the actor's, or the kill switch's reason).
    pub note: Option<String>,
    /// The tool's risk tier (`read`, `write`, `destructive`).
    pub risk: Option<String>,
    /// What was received of arguments that were never parsed: canonical JSON
    /// text of `{"bytes", "text", "truncated"}` or `{"bytes", "hmac"}` (see
    /// the module's wire format).
    pub refused_arguments: Option<String>,
    /// Not part of the record: its commit also counts one decided response
    /// of its session (the count [`crate::Store::count_response`] keeps),
    /// in the same transaction, so that a response decided without a
    /// write before it is counted exactly when its record is.
    pub counts_response: bool,
    /// Not part of the record: with [`AuditEntry::counts_response`], the
    /// count of its session's responses the commit must reach (the turn
    /// its response was decided at, from a read); another count (another
    /// process counted a response of the session meanwhile) fails the
    /// commit with `conflict`, and nothing is written.
    pub expects_responses: Option<u64>,
    /// Not part of the record: its commit claims its call id in its
    /// session ([`crate::Store::claim_call`]), in the same transaction; a
    /// call id claimed already (a replay, or another process's claim made
    /// meanwhile) fails the commit with `conflict`, and nothing is written.
    pub claims_call: bool,
    /// Not part of the record: what the call adds to each limit counting
    /// it ([`toolgate::Decision::charges`]), judged again and stored in the
    /// record's transaction; an allowed record a limit refuses there is
    /// written as a deny with the limit's code
    /// ([`AppendReceipt::refused`]).
    pub charges: Vec<toolgate::limit::Charge>,
    /// Not part of the record: the labels an allowed call brings into its
    /// session ([`toolgate::Decision::labels`]), added in the record's
    /// transaction.
    pub labels: Vec<String>,
}

impl AuditEntry {
    /// An entry with only a time and a verdict.
    pub fn new(time: Timestamp, verdict: AuditVerdict) -> Self {
        Self {
            time,
            verdict,
            user: None,
            session: None,
            tool: None,
            call_id: None,
            reasons: Vec::new(),
            policies: Vec::new(),
            digest: None,
            arguments: None,
            approval: None,
            actor: None,
            note: None,
            risk: None,
            refused_arguments: None,
            counts_response: false,
            expects_responses: None,
            claims_call: false,
            charges: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// Makes the record's commit count one response of its session (see
    /// [`AuditEntry::counts_response`]).
    #[must_use]
    pub fn counting_response(mut self) -> Self {
        self.counts_response = true;
        self
    }

    /// Makes the record's commit count one response of its session and
    /// fail unless the count reaches `responses` (see
    /// [`AuditEntry::expects_responses`]).
    #[must_use]
    pub fn counting_response_as(mut self, responses: u64) -> Self {
        self.counts_response = true;
        self.expects_responses = Some(responses);
        self
    }

    /// Makes the record's commit claim its call id (see
    /// [`AuditEntry::claims_call`]).
    #[must_use]
    pub fn claiming_call(mut self) -> Self {
        self.claims_call = true;
        self
    }

    /// Sets the tool's risk tier.
    #[must_use]
    pub fn risk(mut self, tier: impl Into<String>) -> Self {
        self.risk = Some(tier.into());
        self
    }

    /// Records arguments that were never parsed by their raw text: at most
    /// [`REFUSED_TEXT_MAX`] bytes of it, cut at a character boundary, with
    /// the whole text's length and whether it was cut.
    #[must_use]
    pub fn refused_text(mut self, raw: &str) -> Self {
        let mut end = raw.len().min(REFUSED_TEXT_MAX);
        while !raw.is_char_boundary(end) {
            end -= 1;
        }
        let kept = raw.get(..end).unwrap_or_default();
        let mut out = String::with_capacity(kept.len() + 48);
        out.push_str("{\"bytes\":");
        out.push_str(&raw.len().to_string());
        out.push_str(",\"text\":");
        json_str(&mut out, kept);
        out.push_str(",\"truncated\":");
        out.push_str(if end < raw.len() { "true" } else { "false" });
        out.push('}');
        self.refused_arguments = Some(out);
        self
    }

    /// Records arguments that were never parsed by their length and their
    /// HMAC-SHA256 under `key` only (`refused_arguments = "digest"`).
    #[must_use]
    pub fn refused_digest(mut self, raw: &[u8], key: &RedactionKey) -> Self {
        let mut out = String::with_capacity(96);
        out.push_str("{\"bytes\":");
        out.push_str(&raw.len().to_string());
        out.push_str(",\"hmac\":");
        json_str(&mut out, &key.digest(raw));
        out.push('}');
        self.refused_arguments = Some(out);
        self
    }

    /// Sets the user.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Sets the session.
    #[must_use]
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Sets the tool.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Sets the call id.
    #[must_use]
    pub fn call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }

    /// Adds a reason code.
    #[must_use]
    pub fn reason(mut self, code: impl Into<String>) -> Self {
        self.reasons.push(code.into());
        self
    }

    /// Adds a policy id.
    #[must_use]
    pub fn policy(mut self, id: impl Into<String>) -> Self {
        self.policies.push(id.into());
        self
    }

    /// Sets the argument digest without recording the arguments.
    #[must_use]
    pub fn digest(mut self, digest: Digest) -> Self {
        self.digest = Some(digest);
        self
    }

    /// Records the arguments: their digest, and their canonical text with the
    /// value at each of `secrets` (JSON Pointers) replaced by the string
    /// `"hmac-sha256:…"` of that value's canonical text under `key` (the
    /// store's, [`crate::Store::redaction_key`]). A pointer that names no
    /// value is skipped; one that does not start with `/` is an
    /// `invalid_input` error (`""`, the whole value, is allowed).
    pub fn arguments(
        mut self,
        arguments: &Value<'_>,
        secrets: &[&str],
        key: &RedactionKey,
    ) -> Result<Self, Error> {
        self.digest = Some(canonical::digest(arguments));
        self.arguments = Some(canonical::to_string(&redact(arguments, secrets, key)?));
        Ok(self)
    }

    /// Sets the approval concerned.
    #[must_use]
    pub fn approval(mut self, id: ApprovalId) -> Self {
        self.approval = Some(id);
        self
    }

    /// Sets the actor.
    #[must_use]
    pub fn actor(mut self, actor: impl Into<String>) -> Self {
        self.actor = Some(actor.into());
        self
    }

    /// Sets the note.
    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// The store's secret for redacted argument values: their audit text is
/// `"hmac-sha256:"` and the hex HMAC-SHA256 of their canonical text under
/// this key. Each store creates one at random when its database is created
/// (see [`crate::Store::redaction_key`]); its `Debug` shows nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct RedactionKey([u8; 32]);

impl RedactionKey {
    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key from bytes read back from a database; `None` unless 32 long.
    pub(crate) fn from_slice(bytes: &[u8]) -> Option<Self> {
        <[u8; 32]>::try_from(bytes).ok().map(Self)
    }

    /// `"hmac-sha256:"` and the hex HMAC-SHA256 of `text` under this key.
    pub fn digest(&self, text: &[u8]) -> String {
        use hmac::Mac as _;
        // HMAC takes keys of any length: this cannot fail.
        let mac = <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(&self.0)
            .map(|m| m.chain_update(text).finalize().into_bytes());
        let mut out = String::with_capacity(12 + 64);
        out.push_str("hmac-sha256:");
        if let Ok(bytes) = mac {
            for b in bytes {
                out.push_str(&format!("{b:02x}"));
            }
        }
        out
    }
}

impl fmt::Debug for RedactionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RedactionKey(..)")
    }
}

/// A committed record: the entry, its place in the chain and its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditRecord {
    /// The format version it was written with, its `v` member
    /// ([`RECORD_VERSION`] for records written now).
    pub version: u32,
    /// Position in the log, from 1: consecutive in a single chain; in a
    /// segmented log increasing along each segment, with gaps.
    pub seq: u64,
    /// The segment it was appended to: `0` in a single chain (versions 1
    /// and 2), else the `seq` of the segment's first record (version 3).
    pub segment: u64,
    /// Position in its segment, from 1 (`seq` in a single chain).
    pub sseq: u64,
    /// The previous record's hash ([`GENESIS`] for record 1).
    pub prev: Digest,
    /// This record's hash.
    pub hash: Digest,
    /// What was recorded.
    pub entry: AuditEntry,
}

impl AuditRecord {
    /// The record as one line of the JSON Lines export (canonical JSON, with
    /// `prev` and `hash`; no trailing newline). See the module's wire format.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        write_record(
            &mut out,
            self.place(),
            self.version,
            &self.entry,
            Some((&self.prev, &self.hash)),
        );
        out
    }

    /// The hash this record should have given its `prev`.
    pub fn expected_hash(&self) -> Digest {
        chain_hash(&self.prev, self.place(), self.version, &self.entry)
    }

    fn place(&self) -> Place {
        Place {
            seq: self.seq,
            segment: self.segment,
            sseq: self.sseq,
        }
    }
}

/// The acknowledgement of a committed record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppendReceipt {
    /// The record's position in the chain.
    pub seq: u64,
    /// The record's hash.
    pub hash: Digest,
    /// The code of the limit that refused the allowed call at commit
    /// (`rate_limited`, `budget_exceeded`): the record was written as that
    /// deny, and the call must not run.
    pub refused: Option<&'static str>,
}

/// Which records [`crate::Store::list`] returns: all filters must match;
/// pages go forward by `seq`, or backward with [`AuditFilter::newest_first`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuditFilter {
    /// Only records after this `seq` (the cursor: the last `seq` of the
    /// previous page).
    pub after: Option<u64>,
    /// Only records before this `seq` (the cursor going backward: the
    /// first `seq` of the previous page).
    pub before: Option<u64>,
    /// The newest matching records instead of the oldest: the page is the
    /// last `limit` matches (still returned by ascending `seq`).
    pub newest_first: bool,
    /// At most this many records (default 100).
    pub limit: u32,
    /// Only this user's.
    pub user: Option<String>,
    /// Only this session's.
    pub session: Option<String>,
    /// Only this tool's.
    pub tool: Option<String>,
    /// Only this verdict.
    pub verdict: Option<AuditVerdict>,
    /// Only one of these verdicts (empty: any).
    pub verdicts: Vec<AuditVerdict>,
    /// Only records at or after this time.
    pub since: Option<Timestamp>,
    /// Only records before this time.
    pub until: Option<Timestamp>,
}

impl Default for AuditFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl AuditFilter {
    /// Every record, first page of 100.
    pub fn new() -> Self {
        Self {
            after: None,
            before: None,
            newest_first: false,
            limit: 100,
            user: None,
            session: None,
            tool: None,
            verdict: None,
            verdicts: Vec::new(),
            since: None,
            until: None,
        }
    }

    /// Records after `seq`.
    #[must_use]
    pub fn after(mut self, seq: u64) -> Self {
        self.after = Some(seq);
        self
    }

    /// Records before `seq`.
    #[must_use]
    pub fn before(mut self, seq: u64) -> Self {
        self.before = Some(seq);
        self
    }

    /// The newest `limit` matches rather than the oldest (pages go
    /// backward with [`AuditFilter::before`]); still by ascending `seq`.
    #[must_use]
    pub fn newest_first(mut self) -> Self {
        self.newest_first = true;
        self
    }

    /// Only records with one of `verdicts`.
    #[must_use]
    pub fn verdicts(mut self, verdicts: impl IntoIterator<Item = AuditVerdict>) -> Self {
        self.verdicts = verdicts.into_iter().collect();
        self
    }

    /// At most `limit` records.
    #[must_use]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = limit;
        self
    }

    /// Only this user's.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Only this session's.
    #[must_use]
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Only this tool's.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Only this verdict.
    #[must_use]
    pub fn verdict(mut self, verdict: AuditVerdict) -> Self {
        self.verdict = Some(verdict);
        self
    }

    /// Only records in `[since, until)`.
    #[must_use]
    pub fn between(mut self, since: Timestamp, until: Timestamp) -> Self {
        self.since = Some(since);
        self.until = Some(until);
        self
    }
}

/// The result of walking the chain, or every chain of a segmented log
/// ([`crate::Store::verify`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verification {
    /// How many records were checked.
    pub records: u64,
    /// The last intact record's `seq` and hash (`0` and [`GENESIS`] when
    /// there is none): pin it outside the store (in a segmented log, the
    /// last by `seq`; see the module's [segments](crate::audit#segments)).
    pub head: (u64, Digest),
    /// The first broken record, if any.
    pub broken: Option<ChainBreak>,
}

impl Verification {
    /// Whether the whole chain is intact.
    pub fn is_intact(&self) -> bool {
        self.broken.is_none()
    }
}

/// Where and how the chain is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChainBreak {
    /// The first broken record's `seq`.
    pub seq: u64,
    /// What is wrong with it.
    pub kind: BreakKind,
}

impl fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record {}: {}", self.seq, self.kind.as_str())
    }
}

/// What is wrong with a broken record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BreakKind {
    /// `changed`: its content does not match its hash.
    Changed,
    /// `missing`: there is no record with this `seq` (deleted). In a
    /// segmented log the `seq` named is one past the last record before the
    /// gap in its segment, or the `seq` a head names.
    Missing,
    /// `relinked`: its `prev` is not the previous record's hash (reordered,
    /// inserted, or its predecessor was rewritten).
    Relinked,
    /// `malformed`: the row cannot be read as a record.
    Malformed,
    /// `unexpected`: a record past the chain's recorded head (inserted
    /// around the store).
    Unexpected,
}

impl BreakKind {
    /// The wire name, e.g. `changed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Changed => "changed",
            Self::Missing => "missing",
            Self::Relinked => "relinked",
            Self::Malformed => "malformed",
            Self::Unexpected => "unexpected",
        }
    }
}

/// Where a record stands: its `seq`, and its segment and place in it (in a
/// single chain, segment `0` and `sseq` = `seq`; only version 3 bodies
/// carry them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) seq: u64,
    pub(crate) segment: u64,
    pub(crate) sseq: u64,
}

impl Place {
    /// Record `seq` of a single chain.
    pub(crate) fn single(seq: u64) -> Self {
        Self {
            seq,
            segment: 0,
            sseq: seq,
        }
    }
}

/// `SHA-256(prev ‖ body)`, the body in the format of `version`.
pub(crate) fn chain_hash(prev: &Digest, at: Place, version: u32, entry: &AuditEntry) -> Digest {
    let mut pre = Vec::with_capacity(320);
    pre.extend_from_slice(prev.as_bytes());
    let mut body = String::with_capacity(256);
    write_record(&mut body, at, version, entry, None);
    pre.extend_from_slice(body.as_bytes());
    Digest::of(&pre)
}

/// Parses a digest as records and exports spell it: `sha256:` and 64
/// lower-case hex digits.
pub fn parse_digest(s: &str) -> Option<Digest> {
    let hex = s.strip_prefix("sha256:")?;
    if hex.len() != 64 {
        return None;
    }
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        let pair = hex.get(i * 2..i * 2 + 2)?;
        if pair.bytes().any(|c| c.is_ascii_uppercase()) {
            return None;
        }
        *b = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(Digest::from_bytes(bytes))
}

#[cfg(test)]
mod tests;
