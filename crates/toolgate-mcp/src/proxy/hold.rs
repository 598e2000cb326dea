//! Calls held for a human: the wait, and its end.

use std::sync::Arc;
use std::time::Duration;

use toolgate_json::{canonical, Object, Value};
use toolgate_store::{ApprovalId, ApprovalState};

use super::{finding, Shared, Sides};
use crate::frame::RequestId;

impl Shared {
    /// Holds a call that needs `approval` until a human decides it or the
    /// configured hold ends, polling the store; sends the client a progress
    /// notification each second when its request carried a
    /// `_meta.progressToken`.
    pub(super) async fn hold(
        &self,
        id: &RequestId,
        value: &Value<'static>,
        approval: ApprovalId,
        sides: &Sides,
    ) -> Held {
        let token = value.pointer("/params/_meta/progressToken").cloned();
        let start = tokio::time::Instant::now();
        let deadline = start + self.options.hold;
        let mut next_progress = start;
        let mut progress: u64 = 0;
        loop {
            let gate = Arc::clone(&self.gate);
            let state = tokio::task::spawn_blocking(move || gate.store().get_approval(approval))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .map(|a| a.state);
            match state {
                Some(ApprovalState::Approved) => return Held::Approved,
                Some(ApprovalState::Denied | ApprovalState::Expired) | None => {
                    return Held::Refused
                }
                Some(_) => {}
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                finding(&format!(
                    "tools/call {id}: approval {approval} not decided within the hold"
                ));
                return Held::Waiting;
            }
            if let (Some(t), true) = (&token, now >= next_progress) {
                progress += 1;
                sides
                    .to_client(progress_notification(t, progress, approval))
                    .await;
                next_progress = now + Duration::from_secs(1);
            }
            tokio::time::sleep(Duration::from_millis(200).min(deadline - now)).await;
        }
    }
}

/// How a held call's wait ended.
pub(super) enum Held {
    /// A human approved it: decide it again.
    Approved,
    /// A human denied it, or the approval expired or is gone.
    Refused,
    /// Nobody decided within the hold: answer it as pending.
    Waiting,
}

/// `notifications/progress` for a held call.
pub(super) fn progress_notification(
    token: &Value<'static>,
    progress: u64,
    approval: ApprovalId,
) -> String {
    let mut params = Object::new();
    params.insert("progressToken", token.clone());
    params.insert(
        "progress",
        Value::Number(toolgate_json::Number::from(progress)),
    );
    params.insert(
        "message",
        Value::String(std::borrow::Cow::Owned(format!(
            "waiting for a human to approve approval {approval}"
        ))),
    );
    let mut o = Object::new();
    o.insert("jsonrpc", Value::String(std::borrow::Cow::Borrowed("2.0")));
    o.insert(
        "method",
        Value::String(std::borrow::Cow::Borrowed("notifications/progress")),
    );
    o.insert("params", Value::Object(params));
    canonical::to_string(&Value::Object(o))
}
