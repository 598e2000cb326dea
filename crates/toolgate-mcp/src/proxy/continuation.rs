//! Continuations: a call a human approved, whose server then asked the
//! client for input (`input_required`, 2026-07-28), is retried by the
//! client with the server's `requestState`. The gate asks for a human again
//! (the approval was used when the call was let through); that retry is
//! the same call continued, so it needs no second approval: when its tool,
//! the digest of its canonical arguments and the server's `requestState`
//! are those of an approved call the server asked input for in this run,
//! it is let through once (the new pending approval withdrawn, an `allow`
//! record with the reason `approved_continuation`). Any other retry is
//! decided as any call. At most [`MAX_CONTINUATIONS`] are remembered.

use std::sync::Arc;

use toolgate_json::canonical::{self, Digest};
use toolgate_json::{Object, Value};
use toolgate_store::{ApprovalId, AuditEntry, AuditVerdict};

use super::{finding, hold::CallCtl, rewrite_arguments, Shared, Sides};
use crate::frame::{self, RequestId};
use crate::results;

/// The most continuations one run remembers (the oldest go first).
pub(super) const MAX_CONTINUATIONS: usize = 16;

/// An approved call the server asked input for.
pub(super) struct Continuation {
    tool: String,
    digest: Digest,
    state: String,
}

impl Shared {
    /// The server asked input for the approved call of `tool` with
    /// arguments of `digest`, under `state`.
    pub(super) fn note_continuation(&self, tool: &str, digest: Digest, state: &str) {
        let mut st = self.lock();
        st.continuations
            .retain(|c| !(c.tool == tool && c.digest == digest));
        if st.continuations.len() >= MAX_CONTINUATIONS {
            st.continuations.remove(0);
        }
        st.continuations.push(Continuation {
            tool: tool.to_owned(),
            digest,
            state: state.to_owned(),
        });
    }

    /// Whether the call `value` continues an approved call (used up).
    pub(super) fn take_continuation(&self, value: &Value<'static>) -> bool {
        let (Some(state), Some(tool)) = (
            value
                .pointer("/params/requestState")
                .and_then(Value::as_str),
            value.pointer("/params/name").and_then(Value::as_str),
        ) else {
            return false;
        };
        let digest = match value.pointer("/params/arguments") {
            Some(a) => canonical::digest(a),
            None => canonical::digest(&Value::Object(Object::new())),
        };
        let mut st = self.lock();
        let found = st
            .continuations
            .iter()
            .position(|c| c.tool == tool && c.digest == digest && c.state == state);
        match found {
            Some(at) => {
                st.continuations.remove(at);
                true
            }
            None => false,
        }
    }

    /// Lets a continuation through although the gate asked for a human:
    /// the new pending approval is withdrawn, the call forwarded with its
    /// canonical arguments and audited `allow` (`approved_continuation`).
    pub(super) async fn continue_approved(
        self: &Arc<Self>,
        id: RequestId,
        value: Value<'static>,
        d: &toolgate::Decision,
        sides: Sides,
        ctl: &CallCtl,
    ) {
        if let Some(a) = d
            .approval()
            .and_then(|a| a.as_str().parse::<ApprovalId>().ok())
        {
            self.withdraw(a, "the continuation of a call a human approved")
                .await;
        }
        let args = value
            .pointer("/params/arguments")
            .map_or_else(|| "{}".to_owned(), canonical::to_string);
        let Some(forward) = rewrite_arguments(&value, &args, None) else {
            let answer = results::text_result("denied by toolgate: internal_error", true);
            sides.to_client(frame::result_answer(&id, answer)).await;
            return;
        };
        let tool = d.tool().to_owned();
        let digest = d.digest();
        let me = Arc::clone(self);
        let (entry_tool, call_id) = (tool.clone(), id.to_string());
        let recorded = tokio::task::spawn_blocking(move || {
            let mut entry = AuditEntry::new(me.gate.now(), AuditVerdict::Allow)
                .user(me.user.as_str())
                .session(me.session.as_str())
                .tool(entry_tool)
                .call_id(call_id)
                .reason("approved_continuation")
                .note("mcp input_required retry");
            if let Some(d) = digest {
                entry = entry.digest(d);
            }
            me.gate.store().append(entry).is_ok()
        })
        .await;
        if !matches!(recorded, Ok(true)) {
            finding("the audit record of a continuation could not be written");
            let answer = results::text_result("refused by toolgate: store_unavailable", true);
            sides.to_client(frame::result_answer(&id, answer)).await;
            return;
        }
        self.forward(id, tool, forward, digest, sides, ctl).await;
    }
}
