//! The [`StateView`] over a [`Store`], for one decision run.

use std::cell::{Cell, RefCell};

use crate::{KillMode, KillSwitchState, SessionCounters, Store, Timestamp};
use toolgate_json::canonical::Digest;

use toolgate::{ApprovalGrant, ApprovalKey, Context, KillSwitch, StateError, StateView};

/// The state of one `decide_and_record` run: the store, the context's own
/// kill switch, the session's counters as they were when the run started,
/// and the run's time.
pub(crate) struct StoreState<'a> {
    store: &'a dyn Store,
    context_kill: KillSwitch,
    session: &'a str,
    /// The tool definitions the caller pinned (the approvals' binding).
    definitions: &'a [(String, Digest)],
    /// The upstream the calls go to (the approvals' binding too).
    upstream: Option<&'a str>,
    counters: Result<SessionCounters, StateError>,
    /// The kill switch read with the counters, for the run's first look
    /// at it (later looks read it afresh).
    kill_read: Cell<Option<Result<KillSwitchState, crate::Error>>>,
    /// The session's responses counted by the store, this one included.
    responses: Result<u64, StateError>,
    now: Timestamp,
    /// Whether writes (using an approval, claiming a call id) are refused
    /// and noted in `wanted_write`.
    read_only: bool,
    wanted_write: Cell<bool>,
    /// Whether a read-only view answers a claim of a call id by reading
    /// whether it was claimed, leaving the claim to the record's commit
    /// ([`crate::AuditEntry::claims_call`]).
    defer_claims: bool,
    /// The call ids claimed so, for the record's commit.
    deferred: RefCell<Vec<String>>,
}

impl<'a> StoreState<'a> {
    /// Reads the session's counters once; the kill switch is read per call.
    /// `responses` is the store's count of the session's responses, this
    /// one included ([`Store::count_response`]).
    pub(crate) fn new(
        store: &'a dyn Store,
        context: &'a Context,
        responses: Result<u64, crate::Error>,
        now: Timestamp,
    ) -> Self {
        let counters = store.session(&context.session);
        Self {
            store,
            context_kill: context.kill_switch,
            session: &context.session,
            definitions: &context.tool_definitions,
            upstream: context.upstream.as_deref(),
            counters: counters.map_err(unavailable),
            kill_read: Cell::new(None),
            responses: responses.map_err(unavailable),
            now,
            read_only: false,
            wanted_write: Cell::new(false),
            defer_claims: false,
            deferred: RefCell::new(Vec::new()),
        }
    }

    /// [`StoreState::new`] with the session's counters and the kill switch
    /// read already ([`Store::decision_reads`]); the kill switch serves the
    /// run's first look at it.
    pub(crate) fn read(
        store: &'a dyn Store,
        context: &'a Context,
        responses: Result<u64, crate::Error>,
        counters: Result<SessionCounters, crate::Error>,
        kill_switch: Result<KillSwitchState, crate::Error>,
        now: Timestamp,
    ) -> Self {
        Self {
            store,
            context_kill: context.kill_switch,
            session: &context.session,
            definitions: &context.tool_definitions,
            upstream: context.upstream.as_deref(),
            counters: counters.map_err(unavailable),
            kill_read: Cell::new(Some(kill_switch)),
            responses: responses.map_err(unavailable),
            now,
            read_only: false,
            wanted_write: Cell::new(false),
            defer_claims: false,
            deferred: RefCell::new(Vec::new()),
        }
    }

    /// A read-only view ([`StoreState::reads_only`]) that answers a claim
    /// of a call id `true` (the gate has read that it was not claimed) and
    /// leaves the claim to the record's commit
    /// ([`StoreState::deferred_claims`]), which fails if the id was claimed
    /// meanwhile.
    pub(crate) fn deferring_claims(mut self) -> Self {
        self.defer_claims = true;
        self
    }

    /// The call ids claimed by reading only, in order.
    pub(crate) fn deferred_claims(&self) -> Vec<String> {
        self.deferred.borrow().clone()
    }

    /// A view that only reads: a call that needs an approval looked up (and
    /// so used) or its call id claimed, both writes, fails instead, and
    /// [`StoreState::wanted_write`] says so; the run must then be redone
    /// with a writing view.
    pub(crate) fn reads_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Whether a read-only view refused a write.
    pub(crate) fn wanted_write(&self) -> bool {
        self.wanted_write.get()
    }

    fn refuse_write(&self, what: &str) -> Result<(), StateError> {
        if self.read_only {
            self.wanted_write.set(true);
            return Err(StateError::new(format!("{what} is a write")));
        }
        Ok(())
    }

    /// Whether the session was escalated when the run started (an unreadable
    /// session counts as escalated: its feedback carries no details).
    pub(crate) fn escalated(&self) -> bool {
        self.counters
            .as_ref()
            .map_or(true, SessionCounters::is_escalated)
    }

    /// Whether the session had rejections not yet cleared by an allowed
    /// call when the run started (an unreadable session counts as having
    /// them).
    pub(crate) fn has_consecutive_rejections(&self) -> bool {
        self.counters.as_ref().map_or(true, |c| {
            c.consecutive_rejections > 0 || !c.consecutive_by_reason.is_empty()
        })
    }

    fn counters_of(&self, session: &str) -> Result<Option<&SessionCounters>, StateError> {
        let counters = self.counters.as_ref().map_err(Clone::clone)?;
        Ok((session == self.session).then_some(counters))
    }
}

impl StateView for StoreState<'_> {
    fn kill_switch(&self) -> Result<KillSwitch, StateError> {
        let state = match self.kill_read.take() {
            Some(read) => read,
            None => self.store.kill_switch(),
        }
        .map_err(unavailable)?;
        let stored = match state.mode {
            KillMode::Off => KillSwitch::Off,
            KillMode::DenyWrites => KillSwitch::DenyWrites,
            // `DenyAll` and any mode this build does not know: fail closed.
            _ => KillSwitch::DenyAll,
        };
        Ok(stricter(stored, self.context_kill))
    }

    /// Uses the approval: [`Store::consume`] at the run's time (the `now`
    /// the gate passes is the context's and is not trusted here). Approvals
    /// used by earlier calls of the response are used up already, so `skip`
    /// needs no check.
    fn find_approval(
        &self,
        key: &ApprovalKey<'_>,
        _now: u64,
        _skip: &[String],
    ) -> Result<Option<ApprovalGrant>, StateError> {
        // The approval's key: the argument digest, bound to the tool's
        // definition when the caller pinned one and to the upstream the
        // call goes to (see `bound_digest`).
        let definition = self
            .definitions
            .iter()
            .find(|(t, _)| t == key.tool)
            .map(|(_, d)| d);
        let digest = crate::approval::bound_digest(key.digest, definition, self.upstream);
        if self.read_only {
            // A read first: when nothing covers the call, the hold is final
            // without a write; when something may, the run is redone with a
            // view that uses it.
            let may = self
                .store
                .may_cover(key.user, key.session, key.tool, &digest, self.now)
                .map_err(unavailable)?;
            if !may {
                return Ok(None);
            }
        }
        self.refuse_write("using an approval")?;
        let used = self
            .store
            .consume_routed(
                key.user,
                key.session,
                key.tool,
                &digest,
                self.upstream,
                self.now,
            )
            .map_err(unavailable)?;
        Ok(used.map(|u| ApprovalGrant::new(u.id.to_string())))
    }

    /// The session's consecutive rejections of this tool and shape.
    fn rejections(&self, session: &str, tool: &str, shape: &Digest) -> Result<u32, StateError> {
        let n = match self.counters_of(session)? {
            // Nothing counted per reason: no marker to build and look up.
            Some(c) if c.consecutive_by_reason.is_empty() => 0,
            Some(c) => c.consecutive(&shape_marker(tool, shape)),
            None => self
                .store
                .session(session)
                .map_err(unavailable)?
                .consecutive(&shape_marker(tool, shape)),
        };
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// The store's count before this response. Only the run's own session
    /// is counted.
    fn earlier_responses(&self, session: &str) -> Result<u64, StateError> {
        if session != self.session {
            return Err(StateError::new("responses of another session"));
        }
        let n = self.responses.as_ref().map_err(Clone::clone)?;
        Ok(n.saturating_sub(1))
    }

    /// [`Store::claim_call`]: atomic across threads, processes and
    /// replicas.
    /// [`Store::call_allowed`]: a read.
    fn call_allowed(&self, session: &str, call_id: &str) -> Result<bool, StateError> {
        self.store
            .call_allowed(session, call_id)
            .map_err(unavailable)
    }

    fn claim_call(&self, session: &str, call_id: &str) -> Result<bool, StateError> {
        if self.read_only && self.defer_claims && session == self.session {
            // The gate read whether the id was claimed just before
            // (`StateView::call_allowed`); one claimed since fails the
            // record's commit.
            let mut deferred = self.deferred.borrow_mut();
            if deferred.iter().any(|c| c == call_id) {
                return Ok(false);
            }
            deferred.push(call_id.to_owned());
            return Ok(true);
        }
        self.refuse_write("claiming a call id")?;
        self.store.claim_call(session, call_id).map_err(unavailable)
    }

    /// [`Store::limit_events`]: the usage committed so far; the store
    /// judges the call's charges again when its record commits.
    fn limit_events(
        &self,
        key: &str,
        since_ms: u64,
    ) -> Result<Vec<(u64, toolgate::limit::Amount)>, StateError> {
        let since = Timestamp::from_unix_millis(i64::try_from(since_ms).unwrap_or(i64::MAX));
        let events = self.store.limit_events(key, since).map_err(unavailable)?;
        Ok(events
            .into_iter()
            .map(|(at, a)| (u64::try_from(at.unix_millis()).unwrap_or(0), a))
            .collect())
    }

    /// [`Store::limit_used`]: the running total, when it tells the sum.
    fn limit_used(
        &self,
        key: &str,
        since_ms: u64,
    ) -> Result<Option<toolgate::limit::Amount>, StateError> {
        let since = Timestamp::from_unix_millis(i64::try_from(since_ms).unwrap_or(i64::MAX));
        self.store.limit_used(key, since).map_err(unavailable)
    }

    /// [`Store::session_labels`], for the run's own session only.
    fn session_labels(&self, session: &str) -> Result<Vec<String>, StateError> {
        if session != self.session {
            return Err(StateError::new("labels of another session"));
        }
        self.store.session_labels(session).map_err(unavailable)
    }

    /// The store gate's clock: windows are judged at the time the records
    /// are written with.
    fn now_millis(&self) -> Option<u64> {
        u64::try_from(self.now.unix_millis()).ok()
    }

    fn escalated(&self, session: &str) -> Result<bool, StateError> {
        match self.counters_of(session)? {
            Some(c) => Ok(c.is_escalated()),
            None => Ok(self
                .store
                .session(session)
                .map_err(unavailable)?
                .is_escalated()),
        }
    }
}

/// The session-counter reason that counts a tool's rejected calls of one
/// argument shape: `repeat:TOOL:sha256:…`.
pub(crate) fn shape_marker(tool: &str, shape: &Digest) -> String {
    format!("repeat:{tool}:{shape}")
}

fn stricter(a: KillSwitch, b: KillSwitch) -> KillSwitch {
    let rank = |k: KillSwitch| match k {
        KillSwitch::Off => 0,
        KillSwitch::DenyWrites => 1,
        _ => 2,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

fn unavailable(e: crate::Error) -> StateError {
    StateError::new(format!("store: {}", e.code()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stricter_kill_switch_wins() {
        use KillSwitch::{DenyAll, DenyWrites, Off};
        assert_eq!(stricter(Off, Off), Off);
        assert_eq!(stricter(Off, DenyWrites), DenyWrites);
        assert_eq!(stricter(DenyAll, DenyWrites), DenyAll);
        assert_eq!(stricter(DenyWrites, DenyAll), DenyAll);
    }
}
