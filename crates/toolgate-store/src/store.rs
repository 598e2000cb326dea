//! The [`Store`] trait.

use std::io::Write;

use toolgate::PolicyFact;
use toolgate_json::Digest;

use crate::approval::{
    Approval, ApprovalFilter, ApprovalId, ApprovalUse, ApprovalVote, PendingLimits, Quorum,
};
use crate::audit::{
    AppendReceipt, AuditEntry, AuditFilter, AuditRecord, AuditVerdict, RedactionKey, Verification,
};
use crate::changes::ChangeListener;
use crate::error::Error;
use crate::kill::{KillMode, KillSwitchState};
use crate::notice::{Notice, NoticeState};
use crate::pin::{CatalogPin, PinFilter, PinFirst, PinId, PinState, SeenTool, ToolPin};
use crate::session::SessionCounters;
use crate::time::Timestamp;

/// Hears the result of [`Store::append_deferred`]: called exactly once.
pub type AppendDone = Box<dyn FnOnce(Result<AppendReceipt, Error>) + Send>;

/// The gate's state: audit log, approvals, session counters and kill switch.
///
/// Every method is synchronous and may block on the database (at most the
/// busy timeout waiting for another writer, plus the commit); an async
/// service calls it from `spawn_blocking`. Every error means *deny*
/// (`store_unavailable`): nothing is allowed on a store that cannot answer.
///
/// Every write commits durably before it returns and appends its audit
/// record in the same transaction as the change it records, so the log
/// never misses a change and never holds one that did not happen.
///
/// Implementations: [`crate::SqliteStore`] (embedded) and
/// [`crate::PgStore`] (one PostgreSQL database shared by several gate
/// replicas), with the same contract, records and hashes.
pub trait Store: Send + Sync {
    // ---- audit log ----

    /// Appends one record to the chain and returns once it is committed.
    /// Concurrent callers are committed together (group commit), each with
    /// its own acknowledgement.
    fn append(&self, entry: AuditEntry) -> Result<AppendReceipt, Error>;

    /// [`Store::append`] for callers that must not block (an async
    /// runtime's threads): queues the record and returns; `done` is called
    /// exactly once with the result, after the record is committed (or its
    /// commit failed), from a thread of the store's. The default appends on
    /// the calling thread, blocking, and calls `done` before returning;
    /// [`crate::SqliteStore`] hands the record to its group commit's
    /// committer thread.
    fn append_deferred(&self, entry: AuditEntry, done: AppendDone) {
        done(self.append(entry));
    }

    /// Whether the reads a decision makes ([`Store::kill_switch`],
    /// [`Store::session`]) answer in microseconds from local storage, never
    /// waiting on a network or a lock held across a commit, and
    /// [`Store::append_deferred`] never blocks: then an async service may
    /// decide on its runtime's threads. Default `false`.
    fn quick_reads(&self) -> bool {
        false
    }

    /// Registers `listener` for the changes this store pushes (approvals
    /// decided, the kill switch set, by this process or another sharing
    /// the store) and says whether it pushes any: `false` (the default)
    /// means nothing will be called and the caller must poll.
    /// [`crate::PgStore`] pushes through PostgreSQL's `LISTEN`/`NOTIFY`,
    /// the notification sent in the same transaction as the change, so it
    /// is delivered once the change is committed; after its listening
    /// connection was lost and is back, it pushes [`crate::Change::Resync`].
    /// Pushes are a fast path, not a guarantee: keep polling, more slowly.
    fn subscribe(&self, listener: ChangeListener) -> bool {
        let _ = listener;
        false
    }

    /// Appends several records in one transaction, in order: all or none.
    fn append_all(&self, entries: Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error>;

    /// The key that redacted argument values are digested under (see
    /// [`AuditEntry::arguments`]): created at random with the database, the
    /// same for every process and replica sharing it.
    fn redaction_key(&self) -> Result<RedactionKey, Error>;

    /// Walks the whole chain and names the first broken record.
    fn verify(&self) -> Result<Verification, Error>;

    /// The last `n` records, oldest first.
    fn tail(&self, n: u32) -> Result<Vec<AuditRecord>, Error>;

    /// One page of records matching `filter`, by ascending `seq`.
    fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditRecord>, Error>;

    /// Writes every record as JSON Lines (see [`crate::audit`]); returns how
    /// many.
    fn export_jsonl(&self, out: &mut dyn Write) -> Result<u64, Error>;

    // ---- approvals ----

    /// [`Store::request_approval_within`] without caps.
    fn request_approval(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        expires_at: Timestamp,
    ) -> Result<ApprovalId, Error> {
        self.request_approval_within(
            user,
            session,
            tool,
            digest,
            expires_at,
            PendingLimits::unlimited(),
            None,
            None,
        )
    }

    /// The pending single approval for exactly this call, atomically: the
    /// unexpired pending one for (user, session, tool, digest) if there is
    /// one, else a new one expiring at `expires_at` (a pending one past its
    /// time is marked expired first). The database holds at most one
    /// pending approval per call (a unique index), so identical calls
    /// arriving together, from threads or replicas, share one. A new one
    /// beyond `limits` (unexpired pending approvals of the session, of the
    /// user, and those `requester` asked for, whatever users it named) is
    /// refused with `approval_queue_full`. `upstream` names where the
    /// call goes (the MCP proxy's route), kept with the approval for the
    /// humans deciding; the digest is bound to it already
    /// ([`crate::bound_digest`]).
    #[allow(
        clippy::too_many_arguments,
        reason = "one call's key, its expiry and its caps"
    )]
    fn request_approval_within(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        expires_at: Timestamp,
        limits: PendingLimits,
        requester: Option<&str>,
        upstream: Option<&str>,
    ) -> Result<ApprovalId, Error> {
        self.request_approval_with(
            user,
            session,
            tool,
            digest,
            expires_at,
            limits,
            requester,
            upstream,
            Quorum::ONE,
        )
    }

    /// [`Store::request_approval_within`], and a new approval needs
    /// `quorum` (distinct approvers; whether the call's own user is
    /// refused as one). A pending approval already waiting for the call
    /// keeps the quorum it was created with.
    #[allow(
        clippy::too_many_arguments,
        reason = "one call's key, its expiry, its caps and its quorum"
    )]
    fn request_approval_with(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        expires_at: Timestamp,
        limits: PendingLimits,
        requester: Option<&str>,
        upstream: Option<&str>,
        quorum: Quorum,
    ) -> Result<ApprovalId, Error>;

    /// Claims the notice of approval `id` to `sink` at `now`: `true` once
    /// per (approval, sink) across every process and replica sharing the
    /// store, `false` after. The default refuses (a store that keeps no
    /// notices).
    fn claim_notice(&self, id: ApprovalId, sink: &str, now: Timestamp) -> Result<bool, Error> {
        let _ = (id, sink, now);
        Err(no_notices())
    }

    /// Takes over the notices whose sender seems dead: those still
    /// `sending` that nobody touched since `stale_before` (the claimer's
    /// lease ran out: a live sender records each attempt, and renews its
    /// claim when a delivery starts). Each is claimed anew at `now` and
    /// returned once across replicas, at most `limit`, oldest first. The
    /// default refuses.
    fn reclaim_notices(
        &self,
        now: Timestamp,
        stale_before: Timestamp,
        limit: u32,
    ) -> Result<Vec<(ApprovalId, String)>, Error> {
        let _ = (now, stale_before, limit);
        Err(no_notices())
    }

    /// Renews the claim on the notice of approval `id` to `sink` made at
    /// `claimed_at`, at `now`: `false` when it is no longer that claim
    /// (another replica reclaimed it, or it is settled), and then it is
    /// not this process's to send. The default refuses.
    fn renew_notice(
        &self,
        id: ApprovalId,
        sink: &str,
        claimed_at: Timestamp,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let _ = (id, sink, claimed_at, now);
        Err(no_notices())
    }

    /// Records how the claimed notice of approval `id` to `sink` stands
    /// after `attempts` attempts (`outcome` cut to
    /// [`crate::MAX_NOTICE_OUTCOME_BYTES`]).
    fn record_notice(
        &self,
        id: ApprovalId,
        sink: &str,
        state: NoticeState,
        attempts: u32,
        outcome: &str,
        now: Timestamp,
    ) -> Result<(), Error> {
        let _ = (id, sink, state, attempts, outcome, now);
        Err(no_notices())
    }

    /// The most recently changed notices, newest first, at most `limit`.
    fn list_notices(&self, limit: u32) -> Result<Vec<Notice>, Error> {
        let _ = limit;
        Err(no_notices())
    }

    /// Keeps `facts` (what the policies that held its call read,
    /// redacted, [`toolgate::PolicyFact`]) with single approval `id`,
    /// unless it keeps some already: identical calls share one approval,
    /// and the first asker's facts stay. The default refuses (a store that
    /// keeps none).
    fn set_approval_facts(&self, id: ApprovalId, facts: &[PolicyFact]) -> Result<(), Error> {
        let _ = (id, facts);
        Err(Error::new(
            crate::error::ErrorCode::Unavailable,
            "this store keeps no policy facts",
        ))
    }

    /// The facts kept with approval `id` (none for an approval without).
    fn approval_facts(&self, id: ApprovalId) -> Result<Vec<PolicyFact>, Error> {
        let _ = id;
        Ok(Vec::new())
    }

    /// The approvers who approved single approval `id` so far, in the
    /// order they approved (empty for an unknown id).
    fn approval_votes(&self, id: ApprovalId) -> Result<Vec<ApprovalVote>, Error>;

    /// A human approves a pending, unexpired approval (audited
    /// `approval_granted`). `not_found` or `conflict` otherwise. Under a
    /// [`Quorum`] of more than one, `actor` (the approver's identity)
    /// adds one vote (audited `approval_voted`) and the approval stays
    /// pending until the quorum's distinct approvers approved; an approver
    /// who already approved it, or (with `not_own`) the call's own user,
    /// is refused with `conflict`.
    fn approve(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, Error>;

    /// A human denies a pending approval, or revokes an approved one that is
    /// not used yet (audited `approval_denied`).
    fn deny(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, Error>;

    /// Withdraws a pending single approval whose call is gone (its client
    /// cancelled it or went away) before a human decided, audited
    /// `approval_withdrawn`: it is `withdrawn` from then on, and approving
    /// it is refused (`conflict`). `conflict` when it is not pending (a
    /// human decided first). The default, for stores without the state,
    /// denies it instead (the call still never runs).
    fn withdraw(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, Error> {
        self.deny(id, actor, note)
    }

    /// Grants a standing approval: `tool` for `user` until `until` (audited
    /// `approval_granted`), for calls routed to no named upstream
    /// ([`Store::grant_standing_for`]).
    fn grant_standing(
        &self,
        user: &str,
        tool: &str,
        until: Timestamp,
        actor: &str,
        note: &str,
    ) -> Result<ApprovalId, Error> {
        self.grant_standing_for(user, tool, None, until, actor, note)
    }

    /// Grants a standing approval: `tool` for `user` until `until`, bound
    /// to `upstream` (audited `approval_granted`). It covers only calls
    /// routed to exactly that upstream; one granted without an upstream
    /// covers only calls routed to none (the API proxy, the hook, the
    /// service), never a call an MCP proxy routes to a named upstream.
    fn grant_standing_for(
        &self,
        user: &str,
        tool: &str,
        upstream: Option<&str>,
        until: Timestamp,
        actor: &str,
        note: &str,
    ) -> Result<ApprovalId, Error>;

    /// Whether an approval may cover this call at `now` (what
    /// [`Store::consume`] would use), without using it: a read. `false`
    /// means none covers it at the time of the read, so a decision that
    /// must not write can hold the call without trying to use one. The
    /// default answers `true` ("maybe": the caller then uses
    /// [`Store::consume`]).
    fn may_cover(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let _ = (user, session, tool, digest, now);
        Ok(true)
    }

    /// [`Store::consume_routed`] of a call routed to no named upstream.
    fn consume(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        now: Timestamp,
    ) -> Result<Option<ApprovalUse>, Error> {
        self.consume_routed(user, session, tool, digest, None, now)
    }

    /// Atomically uses an approval covering this call at `now`: first a
    /// single approval bound to exactly (user, session, tool, digest),
    /// approved, unexpired and unused, which is then used up; else a
    /// standing approval for (user, tool) bound to the same `upstream`
    /// (both `None`, or the same name). Audited `approval_used` in the
    /// same transaction. `None`: the call is not covered. Exactly one of
    /// several concurrent callers (threads or processes) gets a single
    /// approval.
    fn consume_routed(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        upstream: Option<&str>,
        now: Timestamp,
    ) -> Result<Option<ApprovalUse>, Error>;

    /// One approval.
    fn get_approval(&self, id: ApprovalId) -> Result<Option<Approval>, Error>;

    /// One page of approvals matching `filter`, by ascending id (or
    /// descending, [`ApprovalFilter::newest_first`]), each as it stands now
    /// ([`Approval::as_of`]).
    fn list_approvals(&self, filter: &ApprovalFilter) -> Result<Vec<Approval>, Error>;

    /// How many approvals match `filter`, whatever its cursors and limit:
    /// one aggregate query (the pending gauge, the page's true count).
    fn count_approvals(&self, filter: &ApprovalFilter) -> Result<u64, Error>;

    // ---- sessions ----

    /// Counts one call of `session` in `turn` with its verdict (`allow`,
    /// `deny` or `needs_approval`; others are `invalid_input`) and reason
    /// codes; returns the counters after it.
    fn record_call(
        &self,
        session: &str,
        turn: u64,
        verdict: AuditVerdict,
        reasons: &[&str],
    ) -> Result<SessionCounters, Error>;

    /// The counters of `session` (all zero if it has no calls yet).
    fn session(&self, session: &str) -> Result<SessionCounters, Error>;

    /// Counts one decided response of `session` and returns how many the
    /// session has now, this one included: the gate's turn number, which
    /// callers cannot set. Atomic: concurrent callers (threads, processes,
    /// replicas sharing the database) each get their own number.
    fn count_response(&self, session: &str) -> Result<u64, Error>;

    /// How many responses of `session` were counted so far, without
    /// counting one (a read: see [`Store::quick_reads`]). A response
    /// decided on this read is counted by its audit record's commit
    /// ([`AuditEntry::counts_response`]).
    fn responses(&self, session: &str) -> Result<u64, Error>;

    /// The reads a decision on `session` starts with: its responses
    /// ([`Store::responses`]), its counters ([`Store::session`]) and the
    /// kill switch ([`Store::kill_switch`]), each with its own result. The
    /// default makes the three calls; [`crate::SqliteStore`] reads them in
    /// one read transaction on one connection.
    fn decision_reads(&self, session: &str) -> DecisionReads {
        DecisionReads {
            responses: self.responses(session),
            counters: self.session(session),
            kill_switch: self.kill_switch(),
        }
    }

    /// Records that the call `call_id` of `session` is allowed: `true` if
    /// it is the first time, `false` if a call with this id was already
    /// allowed in the session (a replay). Atomic like
    /// [`Store::count_response`]: of several concurrent claims of one id,
    /// exactly one gets `true`.
    fn claim_call(&self, session: &str, call_id: &str) -> Result<bool, Error>;

    /// Whether the call `call_id` of `session` was already allowed
    /// ([`Store::claim_call`] returned `true` for it), without claiming it:
    /// a read.
    fn call_allowed(&self, session: &str, call_id: &str) -> Result<bool, Error>;

    // ---- limits and session labels ----

    /// The usage of one limit key ([`toolgate::limit::Limit::key`]) counted
    /// after `since` (exclusive): when each counted call ran and what it
    /// added. Counted calls are stored by the audit records of allowed
    /// decisions ([`AuditEntry::charges`]), judged again in their
    /// transaction. The default refuses: a store that keeps no usage lets
    /// no limited call through (fail closed).
    fn limit_events(
        &self,
        key: &str,
        since: Timestamp,
    ) -> Result<Vec<(Timestamp, toolgate::limit::Amount)>, Error> {
        let _ = (key, since);
        Err(no_limits())
    }

    /// The exact sum of what one limit key counted after `since` (what
    /// [`Store::limit_events`]' amounts add up to), from the key's running
    /// total kept with its events, when that can tell it: one row read
    /// instead of the window's events. `None` when it cannot (read the
    /// events). The default: `None`.
    fn limit_used(
        &self,
        key: &str,
        since: Timestamp,
    ) -> Result<Option<toolgate::limit::Amount>, Error> {
        let _ = (key, since);
        Ok(None)
    }

    /// The labels `session` holds, sorted: added by the audit records of
    /// its allowed calls of labelled tools ([`AuditEntry::labels`]). The
    /// default refuses.
    fn session_labels(&self, session: &str) -> Result<Vec<String>, Error> {
        let _ = session;
        Err(no_limits())
    }

    /// An operator forgets every counted call of one limit key (a user's
    /// refunds after a mistake was cleared up), audited `limit_reset` in
    /// the same transaction (the key in `reasons`, `actor`, `note`).
    /// Returns how many counted calls were forgotten. The default refuses.
    fn reset_limit(&self, key: &str, actor: &str, note: &str) -> Result<u64, Error> {
        let _ = (key, actor, note);
        Err(no_limits())
    }

    // ---- tool pins ----

    /// A catalog (`tools/list`) of `upstream` whose digest is `catalog`,
    /// with the definitions it holds: each definition's state, in order,
    /// in one transaction. A definition the store has seen keeps its
    /// state; a new one is stored pending (audited `pin_pending`), or
    /// approved when the store holds no pin of `upstream` yet and `first`
    /// is [`PinFirst::Trust`] (audited `pin_approved`,
    /// `trust_on_first_use`). See [`ToolPin`]. The default refuses: a
    /// store that keeps no pins shows no tool (fail closed).
    fn observe_catalog(
        &self,
        upstream: &str,
        catalog: &Digest,
        tools: &[SeenTool],
        first: PinFirst,
    ) -> Result<Vec<PinState>, Error> {
        let _ = (upstream, catalog, tools, first);
        Err(no_pins())
    }

    /// The state of this exact definition of `tool`, `None` if the store
    /// has never seen it.
    fn pin_state(
        &self,
        upstream: &str,
        tool: &str,
        digest: &Digest,
    ) -> Result<Option<PinState>, Error> {
        let _ = (upstream, tool, digest);
        Err(no_pins())
    }

    /// One pin.
    fn get_pin(&self, id: PinId) -> Result<Option<ToolPin>, Error> {
        let _ = id;
        Err(no_pins())
    }

    /// One page of pins matching `filter`, by ascending id.
    fn list_pins(&self, filter: &PinFilter) -> Result<Vec<ToolPin>, Error> {
        let _ = filter;
        Err(no_pins())
    }

    /// A human approves a pending or rejected definition (audited
    /// `pin_approved`); `not_found` or `conflict` otherwise.
    fn approve_pin(&self, id: PinId, actor: &str, note: &str) -> Result<ToolPin, Error> {
        let _ = (id, actor, note);
        Err(no_pins())
    }

    /// A human rejects a pending definition or revokes an approved one
    /// (audited `pin_rejected`); `not_found` or `conflict` otherwise.
    fn reject_pin(&self, id: PinId, actor: &str, note: &str) -> Result<ToolPin, Error> {
        let _ = (id, actor, note);
        Err(no_pins())
    }

    /// The catalog of `upstream` seen last, if any.
    fn latest_catalog(&self, upstream: &str) -> Result<Option<CatalogPin>, Error> {
        let _ = upstream;
        Err(no_pins())
    }

    // ---- kill switch ----

    /// The kill switch, read afresh from the database.
    fn kill_switch(&self) -> Result<KillSwitchState, Error>;

    // ---- health ----

    /// Checks that the store answers and takes a write now: the service's
    /// readiness probe. The default reads the kill switch;
    /// [`crate::SqliteStore`] and [`crate::PgStore`] also commit a write to
    /// a probe row of their own (nothing else changes), so whatever would
    /// make an audit append fail (a read-only or immutable file, a full
    /// disk, a write lock held past the busy timeout, a standby) fails the
    /// probe too.
    fn ping(&self) -> Result<(), Error> {
        self.kill_switch().map(|_| ())
    }

    /// Flips the kill switch (audited `kill_switch`).
    fn set_kill_switch(
        &self,
        mode: KillMode,
        reason: &str,
        actor: &str,
    ) -> Result<KillSwitchState, Error>;
}

/// The refusal of a store that keeps no tool pins.
fn no_pins() -> Error {
    Error::new(
        crate::error::ErrorCode::Unavailable,
        "this store keeps no tool pins",
    )
}

/// The refusal of a store that keeps no notices.
fn no_notices() -> Error {
    Error::new(
        crate::error::ErrorCode::Unavailable,
        "this store keeps no notices of held calls",
    )
}

/// The refusal of a store that keeps no limit usage or labels.
fn no_limits() -> Error {
    Error::new(
        crate::error::ErrorCode::Unavailable,
        "this store keeps no limit usage or session labels",
    )
}

/// What [`Store::decision_reads`] read.
#[derive(Debug)]
#[non_exhaustive]
pub struct DecisionReads {
    /// The session's responses counted so far.
    pub responses: Result<u64, Error>,
    /// The session's counters.
    pub counters: Result<SessionCounters, Error>,
    /// The kill switch.
    pub kill_switch: Result<KillSwitchState, Error>,
}
