//! `GET /v1/audit`: pages of the audit log, filtered, and the audit kinds
//! it filters by.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use toolgate_store::{AuditFilter, AuditVerdict, Timestamp};

use super::{invalid_query, ok_json};
use crate::auth::Admin;
use crate::error::ApiError;
use crate::extract::StrictQuery;
use crate::state::AppState;
use crate::wire;

/// The query of `GET /v1/audit`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditQuery {
    limit: Option<u32>,
    before: Option<u64>,
    after: Option<u64>,
    user: Option<String>,
    session: Option<String>,
    tool: Option<String>,
    verdict: Option<String>,
    kind: Option<String>,
    since: Option<i64>,
    until: Option<i64>,
}

/// The verdicts of an audit `kind` (none for a kind that is not one).
pub(crate) fn kind_verdicts(kind: &str) -> Vec<AuditVerdict> {
    AuditVerdict::ALL
        .into_iter()
        .filter(|v| v.kind() == kind)
        .collect()
}

/// The audit kinds `GET /v1/audit?kind=` accepts: the kind of every
/// verdict ([`AuditVerdict::kind`]), so that every record can be found by one.
pub const AUDIT_KINDS: [&str; 10] = [
    "decision",
    "approval",
    "kill_switch",
    "auth",
    "reload",
    "result",
    "pin",
    "offered",
    "checkpoint",
    "limit",
];

/// `GET /v1/audit`: without a cursor, the newest page; `before=SEQ` pages
/// back (the page's first `seq` is the next cursor), `after=SEQ` pages
/// forward; both filter, so pages never assume gapless numbers.
pub(super) async fn audit(
    State(state): State<AppState>,
    Admin(_caller): Admin,
    StrictQuery(q): StrictQuery<AuditQuery>,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let mut filter = AuditFilter::new().limit(limit);
    if let Some(v) = q.verdict.as_deref() {
        let v = AuditVerdict::parse(v).ok_or_else(|| {
            invalid_query(format!("`verdict`: no verdict `{}`", v.escape_debug()))
        })?;
        filter = filter.verdict(v);
    }
    if let Some(k) = q.kind.as_deref() {
        let verdicts = kind_verdicts(k);
        if verdicts.is_empty() {
            return Err(invalid_query(format!(
                "`kind` must be one of {}",
                AUDIT_KINDS.join(", ")
            )));
        }
        filter = filter.verdicts(verdicts);
    }
    for (name, value) in [
        ("user", &q.user),
        ("session", &q.session),
        ("tool", &q.tool),
    ] {
        if value.as_deref().is_some_and(str::is_empty) {
            return Err(invalid_query(format!("`{name}` must not be empty")));
        }
    }
    if let Some(u) = q.user {
        filter = filter.user(u);
    }
    if let Some(s) = q.session {
        filter = filter.session(s);
    }
    if let Some(t) = q.tool {
        filter = filter.tool(t);
    }
    filter.since = q.since.map(Timestamp::from_unix_millis);
    filter.until = q.until.map(Timestamp::from_unix_millis);
    // Sequence numbers fit SQLite's signed integers.
    let max_seq = u64::try_from(i64::MAX).unwrap_or(u64::MAX);
    for (name, value) in [("before", q.before), ("after", q.after)] {
        if value.is_some_and(|v| v > max_seq) {
            return Err(invalid_query(format!("`{name}` is too large")));
        }
    }
    filter.after = q.after;
    filter.before = q.before;
    let backward = q.after.is_none();
    if backward {
        filter = filter.newest_first();
    }
    let records = state.blocking(move |s| s.list(&filter)).await?;
    let full = records.len() >= usize::try_from(limit).unwrap_or(usize::MAX);
    let next_before = if backward && full {
        records.first().map(|r| r.seq)
    } else {
        None
    };
    let next_after = if !backward && full {
        records.last().map(|r| r.seq)
    } else {
        None
    };
    Ok(ok_json(wire::audit_page(&records, next_before, next_after)))
}

#[cfg(test)]
mod tests {
    use super::{kind_verdicts, AUDIT_KINDS};
    use toolgate_store::AuditVerdict;

    #[test]
    fn every_verdict_is_in_exactly_one_listed_kind() {
        for v in AuditVerdict::ALL {
            let kinds: Vec<_> = AUDIT_KINDS
                .iter()
                .filter(|k| kind_verdicts(k).contains(&v))
                .collect();
            assert_eq!(kinds.len(), 1, "{v}: {kinds:?}");
        }
        for k in AUDIT_KINDS {
            assert!(!kind_verdicts(k).is_empty(), "{k}");
        }
    }
}
