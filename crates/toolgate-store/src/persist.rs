//! The gate on a store: state read from a [`Store`], every decision audited
//! before it is returned; documented on [`StoreGate`].
//!
//! Design notes are in `persist/README.md`.

mod exhausted;
mod in_flight;
mod open;
#[cfg(feature = "tokio")]
mod run;
pub(crate) mod secrets;
mod state;
#[cfg(test)]
mod two_phase_tests;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::{
    ApprovalId, AuditEntry, AuditVerdict, Clock, ErrorCode as StoreErrorCode, PendingLimits,
    Quorum, Store, SystemClock, Timestamp,
};
use toolgate_json::canonical::Digest;

use toolgate::{Code, Context, Decision, Decisions, Envelope, Format, Gate, Verdict};

pub use self::exhausted::{exhausted_tools, UsageOf};
pub use self::open::{
    open_config_store, open_store, OpenError, OpenErrorKind, StoreOptions, StoreUrl,
};
#[cfg(feature = "tokio")]
pub use self::run::Unfinished;
pub use toolgate::config::RefusedArguments;

use self::in_flight::{InFlight, Reservation};
use self::state::StoreState;

pub use toolgate::{ESCALATED_DENY_FEEDBACK, ESCALATED_HOLD_FEEDBACK};

/// What [`StoreGate::prepare`] decides: a raw body, or an envelope an
/// adapter read already.
#[derive(Clone, Copy)]
pub(crate) enum Input<'a> {
    Body(&'a [u8], Format),
    /// Built only by the async entry (`decide_envelope_async`).
    #[cfg_attr(
        not(feature = "tokio"),
        allow(dead_code, reason = "only the async entry builds it")
    )]
    Envelope(&'a Envelope),
}

/// A [`Gate`] whose state lives in a [`Store`], and whose every decision is
/// audited before it is returned (DESIGN.md contracts 7 and 8).
///
/// [`StoreGate::decide_and_record`] runs the gate with a state view over the
/// store, then, for each decision, in this order:
///
/// 1. **needs approval**: a pending approval bound to (user, session, tool,
///    argument digest) is created (or the pending one for the same call is
///    reused, atomically: one pending approval per call, whatever arrives
///    together), expiring after [`StoreGate::approval_expiry`]; its id is in
///    [`Decision::approval`]. A new one beyond the caps on waiting
///    approvals ([`StoreGate::with_pending_limits`]) is not created: the
///    call is denied `approval_queue_full`.
/// 2. **session counters**: a denied call is counted ([`Store::record_call`])
///    with its reason codes and a marker of its tool and argument shape; an
///    allowed call is counted when it ends a run of rejections (the counters
///    hold what the gate reads; the audit log holds every call).
/// 3. **audit**: one record per decision (user, session, tool, call id,
///    verdict, reason codes, policy ids, argument digest, canonical arguments
///    with secret fields replaced by their digest), all records of one
///    response in one transaction (a single record joins the store's group
///    commit), committed before the decisions are returned.
///
/// Any store error in these steps turns an allow or a needs-approval into a
/// deny `store_unavailable` (fail closed); if the audit records cannot be
/// committed, every decision is a deny `store_unavailable`.
///
/// What the state view answers:
///
/// - **kill switch**: read afresh from the store for every call (a flip by
///   any process sharing the store is honoured on the next decision); the
///   stricter of the store's and the context's.
/// - **approvals**: the approval stage *uses* the approval: the lookup is
///   [`Store::consume`], atomic across threads and processes, so a single
///   approval lets exactly one identical call through. If the audit record
///   of that call then fails, the call is denied and the approval stays used
///   (fail closed: a human approves again).
/// - **repeated rejections**: the consecutive rejections of the session's
///   calls of the same tool and argument shape.
/// - **escalation**: once the store escalated the session (after the
///   store's `escalate_after` rejections), its further non-read calls need
///   a human approval, and the feedback of every call stops carrying reason
///   codes and pointers ([`ESCALATED_DENY_FEEDBACK`],
///   [`ESCALATED_HOLD_FEEDBACK`]).
///
/// Time is the store gate's [`Clock`], never the context's `now`: a caller
/// must not be able to revive an expired approval. The context's
/// `approvals` and `rejections` are ignored: the store holds them.
pub struct StoreGate {
    gate: Gate,
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    approval_expiry: Duration,
    pending_limits: PendingLimits,
    /// `[approvals]`, for its two-person rules (`[[approvals.quorum]]`).
    approvals: toolgate::config::ApprovalsConfig,
    refused_arguments: RefusedArguments,
    /// Responses decided on the two-phase path whose records are not yet
    /// committed, per session (see [`StoreGate::prepare`]).
    in_flight: Arc<InFlight>,
}

impl StoreGate {
    /// How long a pending approval waits for a human by default: one hour.
    pub const DEFAULT_APPROVAL_EXPIRY: Duration = Duration::from_secs(3600);

    /// The default caps on approvals waiting for a human: 20 per session,
    /// 100 per user (`[approvals] max_pending_per_session`,
    /// `max_pending_per_user`).
    pub const DEFAULT_PENDING_LIMITS: PendingLimits = PendingLimits::new(20, 100);

    /// The gate over `store`, with the system clock and the default expiry.
    pub fn new(gate: Gate, store: Arc<dyn Store>) -> Self {
        Self {
            gate,
            store,
            clock: Arc::new(SystemClock::new()),
            approval_expiry: Self::DEFAULT_APPROVAL_EXPIRY,
            pending_limits: Self::DEFAULT_PENDING_LIMITS,
            approvals: toolgate::config::ApprovalsConfig::default(),
            refused_arguments: RefusedArguments::Text,
            in_flight: Arc::default(),
        }
    }

    /// The config's settings for the state: `[approvals]` (expiry, caps on
    /// waiting approvals) and `[store] refused_arguments`. Every surface
    /// that builds a store gate from a config (`check`, `serve`, its
    /// reload, the Python package) sets them here, alike.
    #[must_use]
    pub fn configured(self, config: &toolgate::config::Config) -> Self {
        let approvals = config.approvals();
        self.with_approval_expiry(approvals.expiry())
            .with_pending_limits(
                PendingLimits::new(
                    approvals.max_pending_per_session(),
                    approvals.max_pending_per_user(),
                )
                .with_per_requester(approvals.max_pending_per_token()),
            )
            .with_quorum_rules(approvals)
            .with_refused_arguments(config.store().refused_arguments())
    }

    /// The two-person rules of `approvals` (`[[approvals.quorum]]`): a
    /// held call's new pending approval needs the distinct approvers its
    /// tool's matching rules ask for ([`Quorum`]).
    #[must_use]
    pub fn with_quorum_rules(mut self, approvals: &toolgate::config::ApprovalsConfig) -> Self {
        self.approvals = approvals.clone();
        self
    }

    /// The gate a config describes ([`Gate::from_config`]) on `store`, with
    /// the config's settings for the state ([`StoreGate::configured`]). The
    /// paved path, with [`open_config_store`] for the config's own store:
    ///
    /// ```no_run
    /// use toolgate::config::Config;
    /// use toolgate_store::{open_config_store, StoreGate, StoreOptions};
    ///
    /// let config = Config::load("examples/shop/toolgate.toml")?;
    /// let store = open_config_store(&config, StoreOptions::new())?;
    /// let gate = StoreGate::from_config(&config, store)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_config(
        config: &toolgate::config::Config,
        store: Arc<dyn Store>,
    ) -> Result<Self, toolgate::FromConfigError> {
        let gate = Gate::from_config_with(config, &crate::entity_source::connect_source)?;
        Ok(Self::new(gate, store).configured(config))
    }

    /// How long a pending approval (and so the approval granted on it)
    /// stays usable after the call that asked for it.
    #[must_use]
    pub fn with_approval_expiry(mut self, expiry: Duration) -> Self {
        self.approval_expiry = expiry;
        self
    }

    /// The caps on unexpired pending approvals per session and per user: a
    /// held call that would add one beyond either is denied
    /// `approval_queue_full` (one model must not bury the approvers'
    /// queue).
    #[must_use]
    pub fn with_pending_limits(mut self, limits: PendingLimits) -> Self {
        self.pending_limits = limits;
        self
    }

    /// How calls whose arguments never parsed are audited (the config's
    /// `[store] refused_arguments`; by default their bounded text).
    #[must_use]
    pub fn with_refused_arguments(mut self, mode: RefusedArguments) -> Self {
        self.refused_arguments = mode;
        self
    }

    /// The clock decisions, approvals and audit records are timed by (use
    /// the store's clock).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The time now, by this gate's clock (what its records are timed by).
    pub fn now(&self) -> crate::time::Timestamp {
        self.clock.now()
    }

    /// This gate's clock (a gate rebuilt on the same store keeps it).
    pub fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    /// The gate.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// How long a pending approval stays usable.
    pub fn approval_expiry(&self) -> Duration {
        self.approval_expiry
    }

    /// The caps on waiting approvals.
    pub fn pending_limits(&self) -> PendingLimits {
        self.pending_limits
    }

    /// Decides every call of one raw response body and audits every
    /// decision before returning them. Never fails, never panics.
    ///
    /// A context whose user or session is longer than
    /// [`toolgate::identifier::MAX_IDENTIFIER_BYTES`] has every call denied
    /// `identifier_too_long` by the gate before it reads any state; the
    /// store sees such a user or session only by digest
    /// ([`toolgate::identifier::bounded`]), in the counters and records.
    pub fn decide_and_record(&self, body: &[u8], format: Format, context: &Context) -> Decisions {
        let safe = bounded_context(context);
        let stored = safe.as_ref();
        let now = self.clock.now();
        let responses = self.count_response(stored);
        let turn = effective_turn(&responses, stored);
        let state = StoreState::new(self.store.as_ref(), stored, responses, now);
        let decisions = self.gate.decide(body, format, context, &state);
        self.record(decisions, stored, turn, now, &state)
    }

    /// [`StoreGate::decide_and_record`] for a caller that decides one
    /// response and exits (`toolgate hook`), in one commit where it can:
    /// decides reading the store (its read-only half); a response whose
    /// one record is all there is to write commits it with the session's
    /// response count and the call id its allowed call claims, in one
    /// transaction ([`AuditEntry::counting_response_as`],
    /// [`AuditEntry::claiming_call`]), instead of a commit for each first.
    /// If another process counted a response of the session or claimed the
    /// id in between, that commit fails writing nothing, and the response
    /// is decided again by [`StoreGate::decide_and_record`]; so is any
    /// other response. Blocks on the store's writes.
    pub fn decide_and_record_once(
        &self,
        body: &[u8],
        format: Format,
        context: &Context,
    ) -> Decisions {
        match self.prepare_with(Input::Body(body, format), context, true) {
            Prepared::Ready(mut unrecorded) => {
                let committed = match <[AuditEntry; 1]>::try_from(unrecorded.take_entries()) {
                    Ok([mut entry]) => {
                        // Another process (a parallel hook) may count a
                        // response of the session, or claim the call's
                        // id, between the reads and the commit: then the
                        // commit fails, writing nothing, and the response
                        // is decided again on the path that writes
                        // first.
                        if let Some(n) = unrecorded.responses {
                            entry = entry.counting_response_as(n);
                        }
                        match self.store.append(entry) {
                            Ok(_) => true,
                            Err(e) if e.code() == StoreErrorCode::Conflict => {
                                drop(unrecorded);
                                return self.decide_and_record(body, format, context);
                            }
                            Err(_) => false,
                        }
                    }
                    // INVARIANT: `prepare` readies exactly one record; any
                    // other count is not committed and so denies.
                    Err(_) => false,
                };
                self.finish(unrecorded, committed)
            }
            Prepared::Decided(decided) => self.record_decided(decided, context),
            Prepared::Again => self.decide_and_record(body, format, context),
        }
    }

    /// [`StoreGate::decide_and_record`] for an envelope already read.
    pub fn decide_envelope_and_record(&self, envelope: &Envelope, context: &Context) -> Decisions {
        let safe = bounded_context(context);
        let stored = safe.as_ref();
        let now = self.clock.now();
        let responses = self.count_response(stored);
        let turn = effective_turn(&responses, stored);
        let state = StoreState::new(self.store.as_ref(), stored, responses, now);
        let decisions = self.gate.decide_envelope(envelope, context, &state);
        self.record(decisions, stored, turn, now, &state)
    }

    /// The first half of [`StoreGate::decide_and_record`] for a caller that
    /// must not wait on the store's writes (an async runtime's thread, with
    /// a store whose [`Store::quick_reads`] holds): decides reading the
    /// store only, and returns the decisions with their audit records not
    /// yet committed. Commit [`Unrecorded::take_entries`] (one record:
    /// [`Store::append_deferred`]), then pass the outcome to
    /// [`StoreGate::finish`]; never hand out the decisions before.
    ///
    /// The response's turn is the store's count read now
    /// ([`Store::responses`]) plus the responses of the session this gate
    /// decided on this path whose records are not committed yet, plus one:
    /// concurrent responses of a session get consecutive turns. The one
    /// record counts the response in the store as it commits
    /// ([`AuditEntry::counts_response`]).
    ///
    /// `None` when the decisions need another write first (a call that
    /// uses or asks for an approval, a call id claimed by an allowed
    /// non-read call, a denial or a body refused, which are counted, an
    /// allowed call that ends a run of rejections, a response that is not
    /// exactly one record): nothing was written; call
    /// [`StoreGate::decide_and_record`] on a thread that may block.
    #[cfg(test)]
    pub(crate) fn decide_unrecorded(
        &self,
        body: &[u8],
        format: Format,
        context: &Context,
    ) -> Option<Unrecorded> {
        match self.prepare(Input::Body(body, format), context) {
            Prepared::Ready(unrecorded) => Some(unrecorded),
            Prepared::Decided(_) | Prepared::Again => None,
        }
    }

    /// Decides reading the store only (the first half of
    /// [`StoreGate::decide_and_record`]), and says what remains to be done
    /// before the decisions may be returned: the building block of
    /// `StoreGate::decide_async` (the `tokio` feature). Never hand out
    /// decisions before their records are committed: [`Prepared::Ready`]
    /// through [`StoreGate::finish`], [`Prepared::Decided`] through
    /// [`StoreGate::record_decided`] (it writes: call it where blocking is
    /// allowed), [`Prepared::Again`] through [`StoreGate::decide_and_record`].
    #[cfg_attr(
        not(any(test, feature = "tokio")),
        allow(dead_code, reason = "decide_async's first half (the tokio feature)")
    )]
    pub(crate) fn prepare(&self, input: Input<'_>, original: &Context) -> Prepared {
        self.prepare_with(input, original, false)
    }

    /// [`StoreGate::prepare`]; with `defer_claims`, a call id an allowed
    /// call claims is claimed by its record's commit
    /// ([`AuditEntry::claiming_call`]), which fails with `conflict` if it
    /// was claimed meanwhile: only for a caller that then decides again on
    /// the writing path ([`StoreGate::decide_and_record_once`]).
    fn prepare_with(&self, input: Input<'_>, original: &Context, defer_claims: bool) -> Prepared {
        let safe = bounded_context(original);
        let context = safe.as_ref();
        let now = self.clock.now();
        let (reservation, others) = self.in_flight.reserve(&context.session);
        let reads = self.store.decision_reads(&context.session);
        let responses = reads
            .responses
            .map(|n| n.saturating_add(others).saturating_add(1));
        let turn = effective_turn(&responses, context);
        let responses_read = responses.is_ok();
        let responses_now = responses.as_ref().ok().copied();
        let state = StoreState::read(
            self.store.as_ref(),
            context,
            responses,
            reads.counters,
            reads.kill_switch,
            now,
        )
        .reads_only();
        let state = if defer_claims {
            state.deferring_claims()
        } else {
            state
        };
        let ds = match input {
            Input::Body(body, format) => self.gate.decide(body, format, original, &state),
            Input::Envelope(envelope) => self.gate.decide_envelope(envelope, original, &state),
        };
        let claims = state.deferred_claims();
        if state.wanted_write() || !responses_read {
            // The gate wanted a write (using an approval, claiming a call
            // id): its decisions are not the ones a writing view gives.
            return Prepared::Again;
        }
        let escalated = state.escalated();
        let consecutive = state.has_consecutive_rejections();
        let writes = consecutive
            || ds.decisions().iter().any(|d| {
                d.verdict() != Verdict::Allow || !d.charges().is_empty() || !d.labels().is_empty()
            })
            || (ds.decisions().is_empty() && ds.rejected().is_some());
        if !writes {
            let mut unrecorded = self.unrecorded(ds, context, now, escalated);
            if let Ok([entry]) = <[AuditEntry; 1]>::try_from(unrecorded.take_entries()) {
                let entry = match claims.as_slice() {
                    [] => entry,
                    [id] if entry.call_id.as_ref() == Some(id) => entry.claiming_call(),
                    // Claims the one record cannot make: decide again on
                    // the writing path.
                    _ => return Prepared::Again,
                };
                unrecorded.entries = vec![entry.counting_response()];
                unrecorded.reservation = Some(reservation);
                unrecorded.responses = responses_now;
                return Prepared::Ready(unrecorded);
            }
            // Not exactly one record: decide again on the writing path
            // (rare: a response without calls, or several allowed calls).
            return Prepared::Again;
        }
        if !claims.is_empty() {
            // A claim left to a commit that will not be made.
            return Prepared::Again;
        }
        Prepared::Decided(Decided {
            decisions: ds,
            now,
            turn,
            escalated,
            consecutive,
            reservation,
        })
    }

    /// The second half for decisions made with reads alone that need
    /// writes (a deny, a hold, a refused body, an allow ending a run of
    /// rejections): the counters, the pending approvals and the audit
    /// records, the first of which counts the response as it commits. The
    /// pipeline does not run again.
    #[cfg_attr(
        not(feature = "tokio"),
        allow(
            dead_code,
            reason = "the second half is decide_async's (the tokio feature)"
        )
    )]
    pub(crate) fn record_decided(&self, decided: Decided, context: &Context) -> Decisions {
        let Decided {
            decisions,
            now,
            turn,
            escalated,
            consecutive,
            reservation,
        } = decided;
        let written = Written {
            turn,
            now,
            escalated,
            consecutive,
            counting: true,
        };
        let safe = bounded_context(context);
        self.write(decisions, &safe, &written, Some(reservation))
    }

    /// Counts the response in the store (a write), adding the session's
    /// responses decided on the two-phase path and not yet committed.
    fn count_response(&self, context: &Context) -> Result<u64, crate::Error> {
        let others = self.in_flight.count(&context.session);
        self.store
            .count_response(&context.session)
            .map(|n| n.saturating_add(others))
    }

    /// The decisions of `unrecorded`, once its audit records were
    /// `committed`, or not: then every decision is a deny
    /// `store_unavailable` (as it is when the records were not taken).
    pub(crate) fn finish(&self, unrecorded: Unrecorded, committed: bool) -> Decisions {
        let Unrecorded {
            decisions: mut ds,
            entries,
            escalated,
            reservation,
            responses: _,
        } = unrecorded;
        // Committed or not, the response is no longer in flight.
        drop(reservation);
        if !committed || !entries.is_empty() {
            self.gate.deny_all_after(&mut ds, Code::StoreUnavailable);
        }
        // 4. An escalated session learns nothing more from the feedback.
        if escalated {
            ds.escalate();
        }
        ds
    }

    fn record(
        &self,
        ds: Decisions,
        context: &Context,
        turn: u64,
        now: Timestamp,
        state: &StoreState<'_>,
    ) -> Decisions {
        let written = Written {
            turn,
            now,
            escalated: state.escalated(),
            consecutive: state.has_consecutive_rejections(),
            counting: false,
        };
        self.write(ds, context, &written, None)
    }

    /// Pending approvals, session counters and audit records for decisions
    /// made, then the decisions: every deny or hold is written before it is
    /// returned.
    fn write(
        &self,
        mut ds: Decisions,
        context: &Context,
        written: &Written,
        reservation: Option<Reservation>,
    ) -> Decisions {
        let Written {
            turn,
            now,
            escalated,
            consecutive,
            counting,
        } = *written;
        // 1. Pending approvals.
        for d in ds.decisions_mut() {
            if d.verdict() != Verdict::NeedsApproval {
                continue;
            }
            let id = d.digest().ok_or(None).and_then(|digest| {
                self.pending(context, d.tool(), &digest, now)
                    .map_err(|e| Some(e.code()))
            });
            match id {
                Ok(id) => {
                    self.keep_facts(d, id);
                    d.await_approval(id.into());
                }
                Err(Some(StoreErrorCode::QueueFull)) => {
                    self.gate.deny_after(d, Code::ApprovalQueueFull);
                }
                Err(_) => self.gate.deny_after(d, Code::StoreUnavailable),
            }
        }
        // 2. Session counters, at the turn the gate decided at.
        if ds.decisions().is_empty() {
            if let Some(r) = &ds.rejected() {
                // A refused body counts as a rejected call of the session.
                // Already denied: a counter that cannot be written changes
                // nothing here.
                let _ignored = self.store.record_call(
                    &context.session,
                    turn,
                    AuditVerdict::Deny,
                    &[r.code.as_str()],
                );
            }
        }
        // Only what the gate reads is written: every rejection, and the
        // allowed call that clears a run of rejections. Allowed calls of a
        // clean session, and held calls (neither), cost no write here: the
        // audit log holds every call.
        let mut rejections_pending = consecutive;
        for d in ds.decisions_mut() {
            let needed = match d.verdict() {
                Verdict::Deny => true,
                Verdict::Allow => rejections_pending,
                Verdict::NeedsApproval => false,
            };
            if !needed {
                continue;
            }
            rejections_pending = d.verdict() == Verdict::Deny;
            let mut reasons: Vec<String> = d
                .reasons()
                .iter()
                .map(|r| r.code.as_str().to_owned())
                .collect();
            if d.verdict() == Verdict::Deny {
                if let Some(shape) = &d.shape() {
                    reasons.push(state::shape_marker(d.tool(), shape));
                }
            }
            let reasons: Vec<&str> = reasons.iter().map(String::as_str).collect();
            if self
                .store
                .record_call(&context.session, turn, audit_verdict(d.verdict()), &reasons)
                .is_err()
            {
                self.gate.deny_after(d, Code::StoreUnavailable);
            }
        }
        // 3. Audit, committed before anything is returned. One record goes
        // through group commit (`append`); several are one transaction, all
        // or none (`append_all`).
        let mut unrecorded = self.unrecorded(ds, context, now, escalated);
        let mut entries = unrecorded.take_entries();
        unrecorded.reservation = reservation;
        if counting {
            // The response is counted with its first record, as on the
            // read-only path; without a record, on its own.
            if entries.is_empty() {
                if self.store.count_response(&context.session).is_err() {
                    return self.finish(unrecorded, false);
                }
            } else {
                let first = entries.remove(0).counting_response();
                entries.insert(0, first);
            }
        }
        let appended = match entries.len() {
            0 => Ok(Vec::new()),
            1 => entries
                .pop()
                .map_or(Ok(Vec::new()), |e| self.store.append(e).map(|r| vec![r])),
            _ => self.store.append_all(entries),
        };
        let Ok(receipts) = appended else {
            return self.finish(unrecorded, false);
        };
        // A limit the store found crossed when the record committed (a
        // concurrent call, on this replica or another, counted first): the
        // record says deny, so does the decision.
        for (d, receipt) in unrecorded.decisions.decisions_mut().zip(&receipts) {
            match receipt.refused {
                Some("rate_limited") => self.gate.deny_after(d, Code::RateLimited),
                Some(_) => self.gate.deny_after(d, Code::BudgetExceeded),
                None => {}
            }
        }
        self.finish(unrecorded, true)
    }

    /// The decisions with their audit records, to be committed.
    fn unrecorded(
        &self,
        ds: Decisions,
        context: &Context,
        now: Timestamp,
        escalated: bool,
    ) -> Unrecorded {
        let mut entries: Vec<AuditEntry> = ds
            .decisions()
            .iter()
            .map(|d| self.entry(d, context, now))
            .collect();
        if ds.decisions().is_empty() && ds.verdict() == Verdict::Deny {
            let mut e = AuditEntry::new(now, AuditVerdict::Deny)
                .user(context.user.as_str())
                .session(context.session.as_str());
            for r in ds.rejected().into_iter().chain(ds.findings().iter()) {
                if ds.rejected().is_some() || r.code.finding_denies() {
                    e = e.reason(r.code.as_str());
                }
            }
            entries.push(e);
        }
        Unrecorded {
            decisions: ds,
            entries,
            escalated,
            reservation: None,
            responses: None,
        }
    }

    /// The pending approval for this exact call: the store's unexpired
    /// pending one for the same (user, session, tool, digest), or a new one
    /// within the caps (one atomic step in the store).
    fn pending(
        &self,
        context: &Context,
        tool: &str,
        digest: &Digest,
        now: Timestamp,
    ) -> Result<ApprovalId, crate::Error> {
        // Bound to the tool's definition too when the caller pinned it, and
        // to the upstream the call goes to.
        let key = crate::approval::bound_digest(
            digest,
            context.tool_definition(tool),
            context.upstream.as_deref(),
        );
        let risk = self
            .gate
            .registry()
            .get(tool)
            .map(toolgate::registry::Tool::risk);
        let need = self.approvals.quorum_for(tool, risk);
        self.store.request_approval_with(
            &context.user,
            &context.session,
            tool,
            &key,
            now.saturating_add(self.approval_expiry),
            self.pending_limits,
            context.requester.as_deref(),
            context.upstream.as_deref(),
            Quorum::new(need.approvers, need.not_own),
        )
    }

    /// Keeps what the policies that held `d` read with its approval `id`,
    /// redacted ([`crate::held_facts`]). Shown to approvers only: a store
    /// that cannot keep them now leaves the approval without them rather
    /// than failing the decision.
    fn keep_facts(&self, d: &Decision, id: ApprovalId) {
        let Some(tool) = self.gate.registry().get(d.tool()) else {
            return;
        };
        if d.held_facts().is_empty() {
            return;
        }
        let facts = crate::held_facts::redact(tool, d.canonical_args(), d.held_facts());
        let _ = self.store.set_approval_facts(id, &facts);
    }

    /// The audit entry of one decision.
    fn entry(&self, d: &Decision, context: &Context, now: Timestamp) -> AuditEntry {
        let mut e = AuditEntry::new(now, audit_verdict(d.verdict()))
            .user(context.user.as_str())
            .session(context.session.as_str())
            .tool(d.tool());
        if let Some(tool) = self.gate.registry().get(d.tool()) {
            e = e.risk(tool.risk().as_str());
        }
        if let (None, Some(raw)) = (&d.canonical_args(), &d.received_arguments()) {
            e = match self.refused_arguments {
                RefusedArguments::Text => e.refused_text(raw),
                // No key, no digest: the record keeps nothing of the text
                // rather than an unkeyed digest a reader could test guesses
                // against.
                RefusedArguments::Digest => match self.store.redaction_key() {
                    Ok(key) => e.refused_digest(raw.as_bytes(), &key),
                    Err(_) => e,
                },
                // A setting this store does not know: keep nothing of the
                // text, the choice that reveals least.
                _ => e,
            };
        }
        if let Some(id) = &d.call_id() {
            e = e.call_id(*id);
        }
        if d.verdict() == Verdict::Allow {
            e.charges = d.charges().to_vec();
            e.labels = d.labels().to_vec();
        }
        for r in d.reasons() {
            e = e.reason(r.code.as_str());
        }
        for p in d.policies() {
            e = e.policy(p.as_str());
        }
        if let Some(id) = d
            .approval()
            .and_then(|a| a.as_str().parse::<ApprovalId>().ok())
        {
            e = e.approval(id);
        }
        if let Some(digest) = d.digest() {
            e = e.digest(digest);
        }
        if let (Some(text), Some(tool)) = (&d.canonical_args(), self.gate.registry().get(d.tool()))
        {
            if let Ok(value) = tool.parse_options().parse(text.as_bytes()) {
                let secrets = secrets::pointers(tool, &value);
                let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
                // A secret pointer the store refuses, or a key it cannot
                // read, leaves the arguments out rather than recording them
                // unredacted or under a guessable digest.
                if let Ok(key) = self.store.redaction_key() {
                    if let Ok(with_args) = e.clone().arguments(&value, &secrets, &key) {
                        e = with_args;
                    }
                }
            }
        }
        e
    }
}

/// The gate over the store: decides and records
/// ([`StoreGate::decide_and_record`]).
impl toolgate::Decider for StoreGate {
    fn decide_body(&self, body: &[u8], format: Format, context: &Context) -> Decisions {
        self.decide_and_record(body, format, context)
    }
}

/// Decisions of one response whose audit records are not committed yet:
/// from [`StoreGate::decide_unrecorded`], turned into the decisions by
/// [`StoreGate::finish`] once [`Unrecorded::take_entries`] are committed.
#[derive(Debug)]
#[must_use = "the decisions count only once their audit records are committed"]
pub(crate) struct Unrecorded {
    decisions: Decisions,
    entries: Vec<AuditEntry>,
    escalated: bool,
    /// The response's place among its session's responses in flight,
    /// given up when this is finished or dropped.
    reservation: Option<Reservation>,
    /// The session's response count its record's commit brings, as read
    /// when it was decided (the response's turn).
    responses: Option<u64>,
}

/// What the read-only half found ([`StoreGate::prepare`]).
#[derive(Debug)]
#[must_use = "the decisions count only once their audit records are committed"]
#[cfg_attr(
    not(feature = "tokio"),
    allow(
        dead_code,
        reason = "the second half is decide_async's (the tokio feature)"
    )
)]
pub(crate) enum Prepared {
    /// Every call allowed, one record: commit it
    /// ([`Unrecorded::take_entries`]), then [`StoreGate::finish`].
    Ready(Unrecorded),
    /// Decided; writes remain ([`StoreGate::record_decided`]).
    Decided(Decided),
    /// The gate wanted a write while deciding: nothing was written; decide
    /// on the writing path ([`StoreGate::decide_and_record`]).
    Again,
}

/// Decisions made with reads alone whose writes (counters, pending
/// approvals, audit records) are still to be done.
#[derive(Debug)]
#[must_use = "the decisions count only once their audit records are committed"]
#[cfg_attr(
    not(feature = "tokio"),
    allow(
        dead_code,
        reason = "the second half is decide_async's (the tokio feature)"
    )
)]
pub(crate) struct Decided {
    decisions: Decisions,
    now: Timestamp,
    turn: u64,
    escalated: bool,
    consecutive: bool,
    reservation: Reservation,
}

/// What writing a response's decisions needs to know of the run.
#[derive(Debug, Clone, Copy)]
struct Written {
    /// The turn the gate decided at.
    turn: u64,
    now: Timestamp,
    /// Whether the session was escalated when the run started.
    escalated: bool,
    /// Whether it had rejections not yet cleared.
    consecutive: bool,
    /// Whether the response is still to be counted (with its first record).
    counting: bool,
}

impl Unrecorded {
    /// The audit records to commit, in order (all in one transaction when
    /// there are several).
    pub(crate) fn take_entries(&mut self) -> Vec<AuditEntry> {
        std::mem::take(&mut self.entries)
    }
}

impl fmt::Debug for StoreGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreGate")
            .field("gate", &self.gate)
            .field("approval_expiry", &self.approval_expiry)
            .field("pending_limits", &self.pending_limits)
            .finish_non_exhaustive()
    }
}

/// `context` with its user and session as the store may keep them: itself
/// when both are within [`toolgate::identifier::MAX_IDENTIFIER_BYTES`],
/// else a copy naming the oversized ones by digest (the gate, given the
/// original, denies every call `identifier_too_long`).
fn bounded_context(context: &Context) -> std::borrow::Cow<'_, Context> {
    use toolgate::identifier::{bounded, within};
    if within(&context.user) && within(&context.session) {
        return std::borrow::Cow::Borrowed(context);
    }
    let mut safe = context.clone();
    safe.user = bounded(&context.user).into_owned();
    safe.session = bounded(&context.session).into_owned();
    std::borrow::Cow::Owned(safe)
}

/// The turn a response is decided at with the store: the store's count,
/// or the context's turn if higher; the context's when the count failed
/// (every call is then denied `store_unavailable` anyway).
fn effective_turn(responses: &Result<u64, crate::Error>, context: &Context) -> u64 {
    let own = u64::from(context.turn);
    responses.as_ref().map_or(own, |&n| n.max(own))
}

fn audit_verdict(v: Verdict) -> AuditVerdict {
    match v {
        Verdict::Allow => AuditVerdict::Allow,
        Verdict::NeedsApproval => AuditVerdict::NeedsApproval,
        Verdict::Deny => AuditVerdict::Deny,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use std::sync::Arc;

    use super::InFlight;

    fn len(in_flight: &InFlight) -> usize {
        in_flight.0.lock().unwrap().len()
    }

    /// Issue 29, item 9: the process's per-session state of the two-phase
    /// path holds only the responses in flight: a million sessions through
    /// it leave it empty (the store keeps the counts), and a session's
    /// count is exact while its responses overlap, from several threads.
    #[test]
    fn issue_29_9_the_in_flight_map_holds_only_what_is_in_flight() {
        let in_flight = Arc::new(InFlight::default());
        for i in 0..1_000_000u32 {
            let (reservation, before) = in_flight.reserve(&format!("s-{i}"));
            assert_eq!(before, 0);
            drop(reservation);
        }
        assert_eq!(len(&in_flight), 0);
        std::thread::scope(|s| {
            for t in 0..4 {
                let in_flight = &in_flight;
                s.spawn(move || {
                    for i in 0..50_000u32 {
                        let a = in_flight.reserve(&format!("t{t}-{}", i % 64));
                        let b = in_flight.reserve(&format!("t{t}-{}", i % 64));
                        assert_eq!(b.1, a.1 + 1);
                        assert!(in_flight.count(&format!("t{t}-{}", i % 64)) >= 2);
                    }
                });
            }
        });
        assert_eq!(len(&in_flight), 0);
    }
}
