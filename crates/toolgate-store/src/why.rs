//! What an approver decides on, read once for every surface that shows an
//! approval (the page, `GET /v1/approvals/{id}`, `toolgate approvals
//! show`): the record of the call that asked (its arguments, reasons and
//! the policies that held it), the approvers so far, what else the session
//! did (its latest decisions), the labels it holds, what the user and
//! the session used of each configured `[[limit]]`, and what the policies
//! that held it read.
//!
//! Everything here comes from callers and models (users, sessions, tools,
//! arguments): each surface escapes it as it escapes the rest of an
//! approval.

use toolgate::limit::{Amount, Limit, Scope};

use crate::approval::{Approval, ApprovalVote};
use crate::asked::asking_record;
use crate::audit::{AuditEntry, AuditFilter, AuditRecord, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::store::Store;
use crate::time::Timestamp;

/// The most recent decisions of the session shown with an approval.
pub const RECENT_DECISIONS: u32 = 10;

/// What one `[[limit]]` counted for the approval's user or session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitUse {
    /// The limit's name.
    pub name: String,
    /// Whose calls it counts: `user`, `session` or `global`.
    pub scope: &'static str,
    /// What was used in its window up to now.
    pub used: Amount,
    /// Its cap.
    pub cap: Amount,
    /// Its window, in seconds.
    pub window_seconds: u64,
}

/// What an approver decides on ([`approval_context`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalContext {
    /// The audit record of the call that asked for it: its arguments
    /// (canonical, secrets redacted), call id, reason codes and the
    /// policies that held it.
    pub asked: Option<AuditEntry>,
    /// The approvers so far, in order.
    pub votes: Vec<ApprovalVote>,
    /// The session's latest decisions (allow, deny, needs approval),
    /// newest first, at most [`RECENT_DECISIONS`].
    pub recent: Vec<AuditRecord>,
    /// The labels the session holds.
    pub labels: Vec<String>,
    /// What the user and the session used of each `[[limit]]` counting
    /// them (and of the global ones).
    pub usage: Vec<LimitUse>,
    /// What the policies that held the call read (such as the order's
    /// total), arguments the config marks secret redacted: each value as
    /// Cedar writes it, from the call's entities (which a caller may have
    /// asserted), so shown as text, escaped.
    pub facts: Vec<toolgate::PolicyFact>,
}

/// What an approver decides on for approval `a`, at `now`, with the
/// config's `limits`.
///
/// # Errors
///
/// When the store cannot be read.
pub fn approval_context(
    store: &dyn Store,
    a: &Approval,
    limits: &[Limit],
    now: Timestamp,
) -> Result<ApprovalContext, Error> {
    let asked = asking_record(store, a)?;
    let votes = store.approval_votes(a.id)?;
    let (recent, labels) = match &a.session {
        Some(session) => {
            let filter = AuditFilter::new()
                .session(session.clone())
                .verdicts([
                    AuditVerdict::Allow,
                    AuditVerdict::Deny,
                    AuditVerdict::NeedsApproval,
                ])
                .newest_first()
                .limit(RECENT_DECISIONS);
            let mut recent = store.list(&filter)?;
            // Pages come oldest first: newest first reads better here.
            recent.reverse();
            (recent, store.session_labels(session)?)
        }
        None => (Vec::new(), Vec::new()),
    };
    let mut usage = Vec::new();
    for limit in limits {
        let key = match limit.scope {
            Scope::User => limit.key(&a.user, "", None),
            Scope::Session => match &a.session {
                Some(s) => limit.key("", s, None),
                None => continue,
            },
            Scope::Global => limit.key("", "", None),
            // A token's usage is its own, not the user's; others to come
            // are not shown rather than guessed.
            _ => continue,
        };
        let used = used_of(store, limit, &key, now)?;
        usage.push(LimitUse {
            name: limit.name.clone(),
            scope: limit.scope.as_str(),
            used,
            cap: limit.cap(),
            window_seconds: limit.window_seconds,
        });
    }
    let facts = store.approval_facts(a.id)?;
    Ok(ApprovalContext {
        asked,
        votes,
        recent,
        labels,
        usage,
        facts,
    })
}

/// What `limit` counted under `key` in its window up to `now` (what
/// `toolgate usage` shows too).
///
/// # Errors
///
/// When the store cannot be read, or the amounts overflow.
pub fn used_of(
    store: &dyn Store,
    limit: &Limit,
    key: &str,
    now: Timestamp,
) -> Result<Amount, Error> {
    let window = i64::try_from(limit.window_ms()).unwrap_or(i64::MAX);
    let since = Timestamp::from_unix_millis(now.unix_millis().saturating_sub(window));
    if let Some(used) = store.limit_used(key, since)? {
        return Ok(used);
    }
    let events = store.limit_events(key, since)?;
    events
        .iter()
        .try_fold(Amount::ZERO, |s, (_, a)| s.checked_add(*a))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::Corrupt,
                format!("the usage of `{}` does not add up", limit.name),
            )
        })
}
