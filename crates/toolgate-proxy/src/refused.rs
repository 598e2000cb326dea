//! The audit of a response or stream the proxy refuses as a whole: one
//! `deny` record per call it held, with the refusal's code, so that the
//! log says which calls never reached the application and why (never one
//! record without a tool for a response that held calls).

use std::sync::Arc;

use toolgate::{AdapterOptions, Context, Format};
use toolgate_store::{AuditEntry, AuditVerdict, StoreGate};

use crate::stream::HeldCall;

/// A call named by a refused response: its id and tool as the upstream
/// gave them.
pub(crate) type Named = (Option<String>, String);

/// The calls a body holds as the gate's adapter reads it (none when it
/// cannot be read).
pub(crate) fn calls_in(adapter: &AdapterOptions, body: &[u8], format: Format) -> Vec<Named> {
    adapter.read(body, format).map_or_else(
        |_| Vec::new(),
        |e| {
            e.calls
                .into_iter()
                .take(HeldCall::MAX_CALLS)
                .map(|c| (c.call_id.clone(), c.tool_name().into_owned()))
                .collect()
        },
    )
}

/// The calls a stream's rewriter held.
pub(crate) fn held<'a>(calls: impl Iterator<Item = &'a HeldCall>) -> Vec<Named> {
    calls.map(|c| (c.call_id.clone(), c.name.clone())).collect()
}

/// Records the refusal: one `deny` per call with `code` and the `note`, or
/// one record without a tool when the response held none. Whether the
/// records were committed.
pub(crate) async fn record(
    gate: &Arc<StoreGate>,
    context: &Context,
    calls: Vec<Named>,
    code: &'static str,
    note: String,
) -> bool {
    let now = gate.now();
    let entry = || {
        AuditEntry::new(now, AuditVerdict::Deny)
            .user(context.user.as_str())
            .session(context.session.as_str())
            .reason(code)
            .note(note.clone())
    };
    let entries: Vec<AuditEntry> = if calls.is_empty() {
        vec![entry()]
    } else {
        calls
            .into_iter()
            .map(|(id, name)| {
                let e = entry().tool(name);
                match id {
                    Some(id) => e.call_id(id),
                    None => e,
                }
            })
            .collect()
    };
    let gate = Arc::clone(gate);
    tokio::task::spawn_blocking(move || gate.store().append_all(entries).is_ok())
        .await
        .unwrap_or(false)
}
