//! Which approval state may move to which, and the audit entry each move
//! appends.
//!
//! | from (as stored) | approve | deny (revoke) |
//! |---|---|---|
//! | `pending`, not past `expires_at` | `approved` | `denied` |
//! | `pending`, past `expires_at` | refused: expired | `denied` |
//! | `approved` single, unused | refused | `denied` (revoked) |
//! | `approved` single, used | refused: used | refused: used |
//! | `approved` standing | refused | `denied` (revoked), used or not |
//! | `denied`, `expired`, `withdrawn` | refused | refused |
//!
//! Withdrawing (the call's client cancelled it or went away) moves only a
//! `pending` single approval, expired or not, to `withdrawn`; every other
//! state refuses it.
//!
//! A refusal is a `conflict` error naming the approval and why.
//!
//! Approving a single approval is a vote ([`vote`]): the approver's
//! identity is recorded once per approval (a second approval by the same
//! identity is refused, whatever token or login it came through), and the
//! approval moves to `approved` only with the vote that reaches its
//! [`Quorum`]; the votes before are audited `approval_voted`. With the
//! quorum's `not_own`, the call's own user is refused as an approver. A
//! single denial by any approver denies it.
//!
//! A call that needs a human gets one pending single approval
//! ([`request_in`]): a pending one for the same call past its time is
//! expired first, a pending one for the same call is returned as it is,
//! and a new one is refused beyond the pending caps. A call is let through
//! by an approval ([`consume_in`]): the oldest approved, unused, unexpired
//! single approval bound to it, used once (if it was used meanwhile,
//! nothing is: no standing approval stands in for it); else the oldest
//! approved, unexpired standing approval of the user for the tool.

use toolgate_json::Digest;

use crate::approval::{
    check_pending_limits, Approval, ApprovalId, ApprovalKind, ApprovalState, ApprovalUse,
    PendingLimits, Quorum,
};
use crate::audit::{AppendReceipt, AuditEntry, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

/// What a human does to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Approve a pending approval.
    Grant,
    /// Deny a pending approval, or revoke an approved one.
    Deny,
    /// Withdraw a pending approval whose call is gone.
    Withdraw,
}

impl Decision {
    /// The state the approval moves to.
    pub(crate) const fn state(self) -> ApprovalState {
        match self {
            Self::Grant => ApprovalState::Approved,
            Self::Deny => ApprovalState::Denied,
            Self::Withdraw => ApprovalState::Withdrawn,
        }
    }

    /// The verdict of the record it appends.
    pub(crate) const fn verdict(self) -> AuditVerdict {
        match self {
            Self::Grant => AuditVerdict::ApprovalGranted,
            Self::Deny => AuditVerdict::ApprovalDenied,
            Self::Withdraw => AuditVerdict::ApprovalWithdrawn,
        }
    }
}

/// The state `decision` moves `a` (as stored) to at `now`, or the
/// `conflict` that refuses it.
pub(crate) fn decide(
    a: &Approval,
    decision: Decision,
    now: Timestamp,
) -> Result<ApprovalState, Error> {
    let allowed = match decision {
        Decision::Grant => a.state == ApprovalState::Pending,
        Decision::Deny => {
            a.state == ApprovalState::Pending
                || (a.state == ApprovalState::Approved
                    && (a.kind == ApprovalKind::Standing || a.used_at.is_none()))
        }
        Decision::Withdraw => a.state == ApprovalState::Pending && a.kind == ApprovalKind::Single,
    };
    let id = a.id;
    if !allowed {
        let what = if a.used_at.is_some() {
            "used"
        } else {
            a.state.as_str()
        };
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("approval `{id}` is already {what}"),
        ));
    }
    if decision == Decision::Grant && now >= a.expires_at {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("approval `{id}` has expired"),
        ));
    }
    Ok(decision.state())
}

/// The record of `actor` deciding `a`: who, where, which call.
pub(crate) fn decided_entry(
    now: Timestamp,
    decision: Decision,
    a: &Approval,
    actor: &str,
    note: Option<&str>,
) -> AuditEntry {
    let mut e = AuditEntry::new(now, decision.verdict())
        .user(&a.user)
        .tool(&a.tool)
        .approval(a.id)
        .actor(actor);
    e.session.clone_from(&a.session);
    e.digest = a.digest;
    e.note = note.map(str::to_owned);
    e
}

/// The record of `actor` granting standing approval `id`.
pub(crate) fn standing_entry(
    now: Timestamp,
    user: &str,
    tool: &str,
    upstream: Option<&str>,
    id: ApprovalId,
    actor: &str,
    note: Option<&str>,
) -> AuditEntry {
    let mut e = AuditEntry::new(now, AuditVerdict::ApprovalGranted)
        .user(user)
        .tool(tool)
        .approval(id)
        .actor(actor);
    // The upstream the grant is bound to leads the note.
    e.note = match (upstream, note) {
        (Some(u), Some(n)) => Some(format!("upstream {u}: {n}")),
        (Some(u), None) => Some(format!("upstream {u}")),
        (None, n) => n.map(str::to_owned),
    };
    e
}

/// A call a single approval is bound to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) user: &'a str,
    pub(crate) session: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) digest: &'a Digest,
    /// Who asked (the front end's authenticated caller), if known.
    pub(crate) requester: Option<&'a str>,
    /// The upstream the call goes to, if named.
    pub(crate) upstream: Option<&'a str>,
    /// Who must approve a new pending approval for it.
    pub(crate) quorum: Quorum,
}

impl<'a> Call<'a> {
    /// The call of `tool` by `user` in `session` with arguments of `digest`.
    pub(crate) fn new(user: &'a str, session: &'a str, tool: &'a str, digest: &'a Digest) -> Self {
        Self {
            user,
            session,
            tool,
            digest,
            requester: None,
            upstream: None,
            quorum: Quorum::ONE,
        }
    }

    /// The same call, whose new pending approval needs `quorum`.
    pub(crate) fn needing(mut self, quorum: Quorum) -> Self {
        self.quorum = quorum;
        self
    }

    /// The same call, asked for by `requester`.
    pub(crate) fn requested_by(mut self, requester: Option<&'a str>) -> Self {
        self.requester = requester;
        self
    }

    /// The same call, going to `upstream`.
    pub(crate) fn routed_to(mut self, upstream: Option<&'a str>) -> Self {
        self.upstream = upstream;
        self
    }
}

/// The record of approval `id` letting `call` through; a standing
/// approval's says so in its note.
pub(crate) fn used_entry(
    now: Timestamp,
    call: Call<'_>,
    id: ApprovalId,
    kind: ApprovalKind,
) -> AuditEntry {
    let e = AuditEntry::new(now, AuditVerdict::ApprovalUsed)
        .user(call.user)
        .session(call.session)
        .tool(call.tool)
        .digest(*call.digest)
        .approval(id);
    match kind {
        ApprovalKind::Standing => e.note("standing"),
        ApprovalKind::Single => e,
    }
}

/// A backend's write transaction, as the moves need it.
pub(crate) trait ApprovalTx {
    /// The approval `id`, locked until the transaction ends where the
    /// backend locks rows; `None` if there is none.
    fn approval(&mut self, id: ApprovalId) -> Result<Option<Approval>, Error>;
    /// Moves `a` to `state`, decided by `actor` at `now`; `false` if its row
    /// changed since it was read.
    fn set_decided(
        &mut self,
        a: &Approval,
        state: ApprovalState,
        actor: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error>;
    /// Appends a record in the same transaction.
    fn append_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error>;
    /// Records `approver`'s approval of `a` (read in this transaction, its
    /// row locked where the backend locks rows) and counts it in its
    /// `votes`; `false` if `approver` already approved it (nothing
    /// changes).
    fn add_vote(
        &mut self,
        a: &Approval,
        approver: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error>;

    /// Holds back other transactions requesting approvals for `user` until
    /// this one ends, where the backend's write lock does not already.
    fn lock_requests(&mut self, user: &str) -> Result<(), Error>;
    /// The same for the approvals `requester` asked for.
    fn lock_requester(&mut self, requester: &str) -> Result<(), Error>;
    /// The pending single approvals `requester` asked for, not past their
    /// time at `now`.
    fn count_requested(&mut self, requester: &str, now: Timestamp) -> Result<u64, Error>;
    /// Marks a pending approval for `call` past its time at `now` expired.
    fn expire_stale(&mut self, call: Call<'_>, now: Timestamp) -> Result<(), Error>;
    /// The pending single approval for `call`, if any.
    fn find_pending(&mut self, call: Call<'_>) -> Result<Option<ApprovalId>, Error>;
    /// The pending single approvals of `user` (in `session`, if given) not
    /// past their time at `now`.
    fn count_pending(
        &mut self,
        user: &str,
        session: Option<&str>,
        now: Timestamp,
    ) -> Result<u64, Error>;
    /// Inserts a pending single approval for `call`; `None` if another
    /// transaction's pending approval for the call won.
    fn insert_pending(
        &mut self,
        call: Call<'_>,
        now: Timestamp,
        expires_at: Timestamp,
    ) -> Result<Option<ApprovalId>, Error>;

    /// The oldest approved, unused single approval bound to `call` and not
    /// past its time at `now`.
    fn find_single(&mut self, call: Call<'_>, now: Timestamp) -> Result<Option<ApprovalId>, Error>;
    /// Marks single approval `id` used at `now` if it is still approved
    /// and unused; whether it was.
    fn use_single(&mut self, id: ApprovalId, now: Timestamp) -> Result<bool, Error>;
    /// Uses the oldest approved standing approval of `user` for `tool`
    /// bound to `upstream` (both `None`, or the same name) not past its
    /// time at `now`: its id, or `None`.
    fn use_standing(
        &mut self,
        user: &str,
        tool: &str,
        upstream: Option<&str>,
        now: Timestamp,
    ) -> Result<Option<ApprovalId>, Error>;
}

/// The pending approval for `call` inside `tx`: the one already waiting, or
/// a new one expiring at `expires_at`, within `limits`.
pub(crate) fn request_in(
    tx: &mut impl ApprovalTx,
    call: Call<'_>,
    expires_at: Timestamp,
    limits: PendingLimits,
    now: Timestamp,
) -> Result<ApprovalId, Error> {
    crate::rules::record::check_identifiers(&[
        ("user", call.user),
        ("session", call.session),
        ("tool", call.tool),
        ("requester", call.requester.unwrap_or_default()),
        ("upstream", call.upstream.unwrap_or_default()),
    ])?;
    tx.lock_requests(call.user)?;
    if let Some(r) = call.requester {
        tx.lock_requester(r)?;
    }
    tx.expire_stale(call, now)?;
    if let Some(id) = tx.find_pending(call)? {
        return Ok(id);
    }
    let in_session = tx.count_pending(call.user, Some(call.session), now)?;
    let of_user = tx.count_pending(call.user, None, now)?;
    let of_requester = match call.requester {
        Some(r) => tx.count_requested(r, now)?,
        None => 0,
    };
    check_pending_limits(limits, in_session, of_user, of_requester)?;
    match tx.insert_pending(call, now, expires_at)? {
        Some(id) => Ok(id),
        None => tx.find_pending(call)?.ok_or_else(|| {
            Error::new(ErrorCode::Conflict, "the call's approval changed meanwhile")
        }),
    }
}

/// How an approver's approval of a pending approval counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vote {
    /// As a vote towards its quorum (every single approval; the last vote
    /// approves it).
    Counts,
    /// As the decision itself (a standing approval, which is granted, never
    /// voted on).
    Single,
}

/// Whether `approver` may approve `a` (pending, not expired: [`decide`]
/// said so) and how it counts: the quorum's `not_own` refuses the call's
/// own user. Identities compare exactly: the approver's identity is the
/// one their login or token is bound to, never a name they type.
pub(crate) fn vote(a: &Approval, approver: &str) -> Result<Vote, Error> {
    if a.kind != ApprovalKind::Single {
        return Ok(Vote::Single);
    }
    if a.quorum.not_own && approver == a.user {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "approval `{}` is for a call of `{}`'s own: another approver must decide it",
                a.id,
                approver.escape_debug()
            ),
        ));
    }
    Ok(Vote::Counts)
}

/// The refusal of a second approval by the same approver.
fn already_voted(a: &Approval, approver: &str) -> Error {
    Error::new(
        ErrorCode::Conflict,
        format!(
            "approval `{}` is already approved by `{}`: it needs {} distinct approvers",
            a.id,
            approver.escape_debug(),
            a.quorum.approvers
        ),
    )
}

/// The record of `approver` approving `a` without reaching its quorum:
/// `votes` of the quorum's approvers so far.
pub(crate) fn voted_entry(
    now: Timestamp,
    a: &Approval,
    approver: &str,
    votes: u32,
    note: Option<&str>,
) -> AuditEntry {
    let mut e = AuditEntry::new(now, AuditVerdict::ApprovalVoted)
        .user(&a.user)
        .tool(&a.tool)
        .approval(a.id)
        .actor(approver);
    e.session.clone_from(&a.session);
    e.digest = a.digest;
    let count = format!("{votes} of {}", a.quorum.approvers);
    e.note = Some(match note {
        Some(n) => format!("{count}: {n}"),
        None => count,
    });
    e
}

/// Lets `call` through by an approval inside `tx`, with its record; `None`
/// if none covers it.
pub(crate) fn consume_in(
    tx: &mut impl ApprovalTx,
    call: Call<'_>,
    now: Timestamp,
) -> Result<Option<ApprovalUse>, Error> {
    let (id, kind) = match tx.find_single(call, now)? {
        Some(id) => {
            if !tx.use_single(id, now)? {
                return Ok(None);
            }
            (id, ApprovalKind::Single)
        }
        None => match tx.use_standing(call.user, call.tool, call.upstream, now)? {
            Some(id) => (id, ApprovalKind::Standing),
            None => return Ok(None),
        },
    };
    let receipt = tx.append_entry(used_entry(now, call, id, kind))?;
    Ok(Some(ApprovalUse {
        id,
        kind,
        seq: receipt.seq,
    }))
}

/// Approves or denies approval `id` inside `tx`: the move, its record, and
/// the approval as it now stands.
pub(crate) fn decide_in(
    tx: &mut impl ApprovalTx,
    id: ApprovalId,
    decision: Decision,
    actor: &str,
    note: &str,
    now: Timestamp,
) -> Result<Approval, Error> {
    crate::rules::record::check_note(note)?;
    let a = tx
        .approval(id)?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no approval `{id}`")))?;
    let state = decide(&a, decision, now)?;
    let note = crate::rules::optional(note);
    if decision == Decision::Grant && vote(&a, actor)? == Vote::Counts {
        if !tx.add_vote(&a, actor, now, note)? {
            return Err(already_voted(&a, actor));
        }
        let votes = a.votes.saturating_add(1);
        if votes < a.quorum.approvers {
            tx.append_entry(voted_entry(now, &a, actor, votes, note))?;
            return tx
                .approval(id)?
                .ok_or_else(|| Error::new(ErrorCode::Internal, "a voted approval vanished"));
        }
    }
    if !tx.set_decided(&a, state, actor, now, note)? {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("approval `{id}` changed meanwhile"),
        ));
    }
    tx.append_entry(decided_entry(now, decision, &a, actor, note))?;
    tx.approval(id)?
        .ok_or_else(|| Error::new(ErrorCode::Internal, "a decided approval vanished"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    const NOW: Timestamp = Timestamp::from_unix_millis(1_000);

    fn approval(kind: ApprovalKind, state: ApprovalState, used: bool, expires: i64) -> Approval {
        Approval {
            id: ApprovalId::new(7),
            kind,
            user: "alice".into(),
            session: (kind == ApprovalKind::Single).then(|| "s-1".into()),
            tool: "refund".into(),
            digest: (kind == ApprovalKind::Single).then(|| Digest::of(b"args")),
            created_at: Timestamp::from_unix_millis(0),
            expires_at: Timestamp::from_unix_millis(expires),
            state,
            decided_by: None,
            decided_at: None,
            note: None,
            used_at: used.then_some(Timestamp::from_unix_millis(500)),
            uses: u64::from(used),
            upstream: None,
            quorum: Quorum::ONE,
            votes: 0,
        }
    }

    /// A move's result: the new state, or the refusal's message.
    type Outcome = Result<ApprovalState, String>;

    /// Every stored state, kind, use and expiry against both decisions:
    /// the move it makes or the refusal's message.
    #[test]
    fn every_move_is_allowed_or_refused_as_the_table_says() {
        use ApprovalKind::{Single, Standing};
        use ApprovalState::{Approved, Denied, Expired, Pending, Withdrawn};
        let live = 2_000;
        let past = 1_000; // expires_at == now: expired
        let ok = |s: ApprovalState| Ok::<_, String>(s);
        let refused = |why: &str| Err::<ApprovalState, _>(format!("approval `7` {why}"));
        #[rustfmt::skip]
        let table: Vec<(ApprovalKind, ApprovalState, bool, i64, Decision, Outcome)> = vec![
            (Single, Pending, false, live, Decision::Grant, ok(Approved)),
            (Single, Pending, false, live, Decision::Deny, ok(Denied)),
            (Single, Pending, false, past, Decision::Grant, refused("has expired")),
            (Single, Pending, false, past, Decision::Deny, ok(Denied)),
            (Single, Approved, false, live, Decision::Grant, refused("is already approved")),
            (Single, Approved, false, live, Decision::Deny, ok(Denied)),
            (Single, Approved, false, past, Decision::Deny, ok(Denied)),
            (Single, Approved, true, live, Decision::Grant, refused("is already used")),
            (Single, Approved, true, live, Decision::Deny, refused("is already used")),
            (Single, Denied, false, live, Decision::Grant, refused("is already denied")),
            (Single, Denied, false, live, Decision::Deny, refused("is already denied")),
            (Single, Expired, false, live, Decision::Grant, refused("is already expired")),
            (Single, Expired, false, live, Decision::Deny, refused("is already expired")),
            (Standing, Approved, false, live, Decision::Grant, refused("is already approved")),
            (Standing, Approved, false, live, Decision::Deny, ok(Denied)),
            (Standing, Approved, true, live, Decision::Grant, refused("is already used")),
            (Standing, Approved, true, live, Decision::Deny, ok(Denied)),
            (Standing, Approved, true, past, Decision::Deny, ok(Denied)),
            (Standing, Denied, true, live, Decision::Grant, refused("is already used")),
            (Standing, Denied, false, live, Decision::Deny, refused("is already denied")),
            (Single, Pending, false, live, Decision::Withdraw, ok(Withdrawn)),
            (Single, Pending, false, past, Decision::Withdraw, ok(Withdrawn)),
            (Single, Approved, false, live, Decision::Withdraw, refused("is already approved")),
            (Single, Approved, true, live, Decision::Withdraw, refused("is already used")),
            (Single, Denied, false, live, Decision::Withdraw, refused("is already denied")),
            (Single, Expired, false, live, Decision::Withdraw, refused("is already expired")),
            (Single, Withdrawn, false, live, Decision::Grant, refused("is already withdrawn")),
            (Single, Withdrawn, false, live, Decision::Deny, refused("is already withdrawn")),
            (Single, Withdrawn, false, live, Decision::Withdraw, refused("is already withdrawn")),
            (Standing, Approved, false, live, Decision::Withdraw, refused("is already approved")),
        ];
        for (i, (kind, state, used, expires, decision, want)) in table.into_iter().enumerate() {
            let a = approval(kind, state, used, expires);
            let got = decide(&a, decision, NOW).map_err(|e| {
                assert_eq!(e.code(), ErrorCode::Conflict, "row {i}");
                e.message().to_owned()
            });
            assert_eq!(
                got, want,
                "row {i}: {kind:?} {state:?} used={used} {decision:?}"
            );
        }
    }

    #[test]
    fn a_quorum_refuses_the_calls_own_user_only_when_it_says_so() {
        let mut a = approval(ApprovalKind::Single, ApprovalState::Pending, false, 2_000);
        assert_eq!(vote(&a, "alice").unwrap(), Vote::Counts);
        a.quorum = Quorum::new(2, true);
        let e = vote(&a, "alice").unwrap_err();
        assert_eq!(e.code(), ErrorCode::Conflict);
        assert!(e.message().contains("own"), "{}", e.message());
        assert_eq!(vote(&a, "bob").unwrap(), Vote::Counts);
        // Identities compare exactly: no case folding, no trimming.
        assert_eq!(vote(&a, "Alice").unwrap(), Vote::Counts);
        let standing = approval(ApprovalKind::Standing, ApprovalState::Pending, false, 2_000);
        assert_eq!(vote(&standing, "alice").unwrap(), Vote::Single);

        let e = voted_entry(NOW, &a, "bob", 1, Some("looks fine"));
        assert_eq!(e.verdict, AuditVerdict::ApprovalVoted);
        assert_eq!(e.note.as_deref(), Some("1 of 2: looks fine"));
        assert_eq!(e.actor.as_deref(), Some("bob"));
        assert_eq!(Quorum::new(0, false).approvers, 1);
        assert_eq!(
            Quorum::new(99, false).approvers,
            crate::approval::MAX_QUORUM
        );
    }

    #[test]
    fn the_records_name_the_call_the_actor_and_the_note() {
        let a = approval(ApprovalKind::Single, ApprovalState::Pending, false, 2_000);
        let e = decided_entry(
            NOW,
            Decision::Deny,
            &a,
            "bob",
            crate::rules::optional("too much"),
        );
        assert_eq!(e.verdict, AuditVerdict::ApprovalDenied);
        assert_eq!(
            (e.user.as_deref(), e.session.as_deref(), e.tool.as_deref()),
            (Some("alice"), Some("s-1"), Some("refund"))
        );
        assert_eq!((e.digest, e.approval), (a.digest, Some(a.id)));
        assert_eq!(
            (e.actor.as_deref(), e.note.as_deref()),
            (Some("bob"), Some("too much"))
        );
        let e = decided_entry(NOW, Decision::Grant, &a, "bob", crate::rules::optional(""));
        assert_eq!((e.verdict, e.note), (AuditVerdict::ApprovalGranted, None));

        let d = Digest::of(b"x");
        let call = Call {
            user: "u",
            session: "s",
            tool: "t",
            digest: &d,
            requester: None,
            upstream: None,
            quorum: Quorum::ONE,
        };
        let single = used_entry(NOW, call, a.id, ApprovalKind::Single);
        assert_eq!(single.verdict, AuditVerdict::ApprovalUsed);
        assert_eq!((single.digest, single.note), (Some(d), None));
        let standing = used_entry(NOW, call, a.id, ApprovalKind::Standing);
        assert_eq!(standing.note.as_deref(), Some("standing"));
        assert_eq!(standing.session.as_deref(), Some("s"));

        let g = standing_entry(NOW, "u", "t", None, a.id, "bob", None);
        assert_eq!(
            (g.verdict, g.session, g.digest),
            (AuditVerdict::ApprovalGranted, None, None)
        );
        let routed = standing_entry(NOW, "u", "t", Some("shop"), a.id, "bob", Some("x"));
        assert_eq!(routed.note.as_deref(), Some("upstream shop: x"));
    }

    /// A transaction that answers from fields and logs what it was asked.
    #[derive(Default)]
    struct Fake {
        pending: Vec<Option<ApprovalId>>,
        counts: (u64, u64),
        inserted: Option<ApprovalId>,
        single: Option<ApprovalId>,
        single_still_unused: bool,
        standing: Option<ApprovalId>,
        log: Vec<&'static str>,
        appended: Vec<AuditEntry>,
    }

    impl ApprovalTx for Fake {
        fn approval(&mut self, _: ApprovalId) -> Result<Option<Approval>, Error> {
            Ok(None)
        }
        fn set_decided(
            &mut self,
            _: &Approval,
            _: ApprovalState,
            _: &str,
            _: Timestamp,
            _: Option<&str>,
        ) -> Result<bool, Error> {
            Ok(false)
        }
        fn add_vote(
            &mut self,
            _: &Approval,
            _: &str,
            _: Timestamp,
            _: Option<&str>,
        ) -> Result<bool, Error> {
            Ok(false)
        }
        fn append_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
            self.log.push("append");
            self.appended.push(entry);
            Ok(AppendReceipt {
                seq: 41,
                hash: Digest::of(b""),
                refused: None,
            })
        }
        fn lock_requests(&mut self, _: &str) -> Result<(), Error> {
            self.log.push("lock");
            Ok(())
        }
        fn lock_requester(&mut self, _: &str) -> Result<(), Error> {
            Ok(())
        }
        fn count_requested(&mut self, _: &str, _: Timestamp) -> Result<u64, Error> {
            Ok(0)
        }
        fn expire_stale(&mut self, _: Call<'_>, _: Timestamp) -> Result<(), Error> {
            self.log.push("expire");
            Ok(())
        }
        fn find_pending(&mut self, _: Call<'_>) -> Result<Option<ApprovalId>, Error> {
            self.log.push("find");
            Ok(self.pending.pop().flatten())
        }
        fn count_pending(&mut self, _: &str, s: Option<&str>, _: Timestamp) -> Result<u64, Error> {
            self.log.push("count");
            Ok(if s.is_some() {
                self.counts.0
            } else {
                self.counts.1
            })
        }
        fn insert_pending(
            &mut self,
            _: Call<'_>,
            _: Timestamp,
            _: Timestamp,
        ) -> Result<Option<ApprovalId>, Error> {
            self.log.push("insert");
            Ok(self.inserted)
        }
        fn find_single(&mut self, _: Call<'_>, _: Timestamp) -> Result<Option<ApprovalId>, Error> {
            Ok(self.single)
        }
        fn use_single(&mut self, _: ApprovalId, _: Timestamp) -> Result<bool, Error> {
            self.log.push("use single");
            Ok(self.single_still_unused)
        }
        fn use_standing(
            &mut self,
            _: &str,
            _: &str,
            _: Option<&str>,
            _: Timestamp,
        ) -> Result<Option<ApprovalId>, Error> {
            self.log.push("use standing");
            Ok(self.standing)
        }
    }

    const LIMITS: PendingLimits = PendingLimits {
        per_session: 2,
        per_user: 3,
        per_requester: u32::MAX,
    };

    fn request(tx: &mut Fake) -> Result<ApprovalId, Error> {
        let d = Digest::of(b"args");
        let call = Call {
            user: "alice",
            session: "s-1",
            tool: "refund",
            digest: &d,
            requester: None,
            upstream: None,
            quorum: Quorum::ONE,
        };
        request_in(tx, call, Timestamp::from_unix_millis(9_000), LIMITS, NOW)
    }

    fn consume(tx: &mut Fake) -> Option<ApprovalUse> {
        let d = Digest::of(b"args");
        let call = Call {
            user: "alice",
            session: "s-1",
            tool: "refund",
            digest: &d,
            requester: None,
            upstream: None,
            quorum: Quorum::ONE,
        };
        consume_in(tx, call, NOW).unwrap()
    }

    #[test]
    fn a_request_returns_the_waiting_approval_or_one_new_within_the_caps() {
        let id = ApprovalId::new(3);
        let mut tx = Fake {
            pending: vec![Some(id)],
            ..Fake::default()
        };
        assert_eq!(request(&mut tx).unwrap(), id);
        assert_eq!(tx.log, ["lock", "expire", "find"]);

        let mut tx = Fake {
            counts: (1, 2),
            inserted: Some(ApprovalId::new(4)),
            ..Fake::default()
        };
        assert_eq!(request(&mut tx).unwrap(), ApprovalId::new(4));
        assert_eq!(
            tx.log,
            ["lock", "expire", "find", "count", "count", "insert"]
        );
        assert!(tx.appended.is_empty(), "a request appends no record");

        for counts in [(2, 0), (0, 3)] {
            let mut tx = Fake {
                counts,
                inserted: Some(ApprovalId::new(4)),
                ..Fake::default()
            };
            assert_eq!(request(&mut tx).unwrap_err().code(), ErrorCode::QueueFull);
            assert!(!tx.log.contains(&"insert"), "{counts:?}");
        }

        // Another transaction's pending approval for the call won: it is
        // the answer; if it is gone too, a conflict.
        let mut tx = Fake {
            pending: vec![Some(id), None],
            ..Fake::default()
        };
        assert_eq!(request(&mut tx).unwrap(), id);
        let mut tx = Fake::default();
        let e = request(&mut tx).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Conflict);
    }

    #[test]
    fn a_call_uses_its_single_approval_once_else_a_standing_one() {
        let single = ApprovalId::new(5);
        let standing = ApprovalId::new(6);
        let mut tx = Fake {
            single: Some(single),
            single_still_unused: true,
            standing: Some(standing),
            ..Fake::default()
        };
        let used = consume(&mut tx).unwrap();
        assert_eq!(
            (used.id, used.kind, used.seq),
            (single, ApprovalKind::Single, 41)
        );
        assert_eq!(tx.log, ["use single", "append"]);
        assert_eq!(tx.appended[0].note, None);

        // The single approval was used meanwhile: nothing lets the call
        // through, not even a standing approval.
        let mut tx = Fake {
            single: Some(single),
            single_still_unused: false,
            standing: Some(standing),
            ..Fake::default()
        };
        assert_eq!(consume(&mut tx), None);
        assert_eq!(tx.log, ["use single"]);

        let mut tx = Fake {
            standing: Some(standing),
            ..Fake::default()
        };
        let used = consume(&mut tx).unwrap();
        assert_eq!((used.id, used.kind), (standing, ApprovalKind::Standing));
        assert_eq!(tx.appended[0].note.as_deref(), Some("standing"));
        assert_eq!(tx.appended[0].verdict, AuditVerdict::ApprovalUsed);

        let mut tx = Fake::default();
        assert_eq!(consume(&mut tx), None);
        assert!(tx.appended.is_empty());
    }
}
