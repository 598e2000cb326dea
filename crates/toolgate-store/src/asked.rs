//! The audit record of the call that asked for an approval: what a human
//! decides on (its arguments, call id and reasons), for every surface that
//! shows an approval (the page, the API, the CLI).

use std::time::Duration;

use crate::approval::Approval;
use crate::audit::{AuditEntry, AuditFilter, AuditVerdict};
use crate::error::Error;
use crate::store::Store;
use crate::time::Timestamp;

/// How far before an approval's creation its request's audit record may be
/// (the gate's clock and the store's clock are read separately).
const RECORD_SLACK: Duration = Duration::from_secs(60);

/// The audit record of the call that asked for approval `a` (the first
/// `needs_approval` record naming it), if the log holds one.
///
/// # Errors
///
/// When the store cannot be read.
pub fn asking_record(store: &dyn Store, a: &Approval) -> Result<Option<AuditEntry>, Error> {
    let since = a.created_at.saturating_sub(RECORD_SLACK);
    let mut filter = AuditFilter::new()
        .user(a.user.clone())
        .tool(a.tool.clone())
        .verdict(AuditVerdict::NeedsApproval)
        .between(since, Timestamp::from_unix_millis(i64::MAX))
        .limit(200);
    if let Some(s) = &a.session {
        filter = filter.session(s.clone());
    }
    loop {
        let page = store.list(&filter)?;
        if let Some(r) = page.iter().find(|r| r.entry.approval == Some(a.id)) {
            return Ok(Some(r.entry.clone()));
        }
        match page.last() {
            Some(last) if page.len() >= 200 => filter = filter.after(last.seq),
            _ => return Ok(None),
        }
    }
}
