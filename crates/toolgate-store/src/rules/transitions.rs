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
//! | `denied`, `expired` | refused | refused |
//!
//! A refusal is a `conflict` error naming the approval and why. Using an
//! approval ([`crate::Store::consume`]) is the backends' conditional
//! update; the record it appends is [`used_entry`].

use toolgate_json::Digest;

use crate::approval::{Approval, ApprovalId, ApprovalKind, ApprovalState};
use crate::audit::{AppendReceipt, AuditEntry, Verdict};
use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

/// What a human does to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Approve a pending approval.
    Grant,
    /// Deny a pending approval, or revoke an approved one.
    Deny,
}

impl Decision {
    /// The state the approval moves to.
    pub(crate) const fn state(self) -> ApprovalState {
        match self {
            Self::Grant => ApprovalState::Approved,
            Self::Deny => ApprovalState::Denied,
        }
    }

    /// The verdict of the record it appends.
    pub(crate) const fn verdict(self) -> Verdict {
        match self {
            Self::Grant => Verdict::ApprovalGranted,
            Self::Deny => Verdict::ApprovalDenied,
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
    id: ApprovalId,
    actor: &str,
    note: Option<&str>,
) -> AuditEntry {
    let mut e = AuditEntry::new(now, Verdict::ApprovalGranted)
        .user(user)
        .tool(tool)
        .approval(id)
        .actor(actor);
    e.note = note.map(str::to_owned);
    e
}

/// The record of approval `id` letting a call through; a standing
/// approval's says so in its note.
pub(crate) fn used_entry(
    now: Timestamp,
    call: (&str, &str, &str, &Digest),
    id: ApprovalId,
    kind: ApprovalKind,
) -> AuditEntry {
    let (user, session, tool, digest) = call;
    let e = AuditEntry::new(now, Verdict::ApprovalUsed)
        .user(user)
        .session(session)
        .tool(tool)
        .digest(*digest)
        .approval(id);
    match kind {
        ApprovalKind::Standing => e.note("standing"),
        ApprovalKind::Single => e,
    }
}

/// A backend's write transaction, as [`decide_in`] needs it.
pub(crate) trait DecideTx {
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
}

/// Approves or denies approval `id` inside `tx`: the move, its record, and
/// the approval as it now stands.
pub(crate) fn decide_in(
    tx: &mut impl DecideTx,
    id: ApprovalId,
    decision: Decision,
    actor: &str,
    note: &str,
    now: Timestamp,
) -> Result<Approval, Error> {
    let a = tx
        .approval(id)?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no approval `{id}`")))?;
    let state = decide(&a, decision, now)?;
    let note = crate::rules::optional(note);
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
        }
    }

    /// A move's result: the new state, or the refusal's message.
    type Outcome = Result<ApprovalState, String>;

    /// Every stored state, kind, use and expiry against both decisions:
    /// the move it makes or the refusal's message.
    #[test]
    fn every_move_is_allowed_or_refused_as_the_table_says() {
        use ApprovalKind::{Single, Standing};
        use ApprovalState::{Approved, Denied, Expired, Pending};
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
    fn the_records_name_the_call_the_actor_and_the_note() {
        let a = approval(ApprovalKind::Single, ApprovalState::Pending, false, 2_000);
        let e = decided_entry(
            NOW,
            Decision::Deny,
            &a,
            "bob",
            crate::rules::optional("too much"),
        );
        assert_eq!(e.verdict, Verdict::ApprovalDenied);
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
        assert_eq!((e.verdict, e.note), (Verdict::ApprovalGranted, None));

        let d = Digest::of(b"x");
        let single = used_entry(NOW, ("u", "s", "t", &d), a.id, ApprovalKind::Single);
        assert_eq!(single.verdict, Verdict::ApprovalUsed);
        assert_eq!((single.digest, single.note), (Some(d), None));
        let standing = used_entry(NOW, ("u", "s", "t", &d), a.id, ApprovalKind::Standing);
        assert_eq!(standing.note.as_deref(), Some("standing"));
        assert_eq!(standing.session.as_deref(), Some("s"));

        let g = standing_entry(NOW, "u", "t", a.id, "bob", None);
        assert_eq!(
            (g.verdict, g.session, g.digest),
            (Verdict::ApprovalGranted, None, None)
        );
    }
}
