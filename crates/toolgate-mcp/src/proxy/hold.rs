//! Calls held for a human: the wait, its end, and its withdrawal.
//!
//! Every `tools/call` of the client is *live* from the frame that asks for
//! it until it is forwarded to the server or answered: its [`CallCtl`] is
//! in the run's state under its request id. A `notifications/cancelled`
//! naming a live call (from the client over stdio, POSTed over HTTP, or
//! sent by the HTTP layer when the client dropped its request) cancels it:
//! the call is never forwarded and gets no answer, and a pending approval
//! requested for it is withdrawn in the store at once (audited
//! `approval_withdrawn`), so a human approving it afterwards is refused
//! and nothing runs. The client closing its side cancels every live call
//! the same way. A cancellation naming a call already forwarded goes on
//! to the server (it knows that id); any other is dropped.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use toolgate_json::{canonical, Object, Value};
use toolgate_store::{ApprovalId, ApprovalState};

use super::{finding, Shared, Sides};
use crate::frame::RequestId;

/// Who withdraws an approval, in the audit record.
const WITHDRAWN_BY: &str = "toolgate mcp";

/// A live call's cancellation: set once, seen by its task.
#[derive(Default)]
pub(super) struct CallCtl {
    inner: Mutex<Live>,
    cancelled: Notify,
}

#[derive(Default)]
struct Live {
    /// Why it was cancelled, once it was.
    cancelled: Option<&'static str>,
    /// The pending approval requested for it, while it is held.
    approval: Option<ApprovalId>,
}

impl CallCtl {
    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the call was cancelled.
    pub(super) fn is_cancelled(&self) -> bool {
        self.live().cancelled.is_some()
    }

    /// Marks it cancelled for `why`; the approval it held, to withdraw
    /// (taken: exactly one side withdraws it).
    fn cancel(&self, why: &'static str) -> Option<ApprovalId> {
        let approval = {
            let mut live = self.live();
            live.cancelled.get_or_insert(why);
            live.approval.take()
        };
        self.cancelled.notify_waiters();
        approval
    }

    /// Records the pending approval the call waits for; when the call was
    /// cancelled already, the reason (the caller withdraws it).
    fn hold(&self, approval: ApprovalId) -> Option<&'static str> {
        let mut live = self.live();
        if live.cancelled.is_none() {
            live.approval = Some(approval);
        }
        live.cancelled
    }

    /// The call stopped waiting for `approval` (a human decided it).
    fn release(&self) {
        self.live().approval = None;
    }
}

impl Shared {
    /// The call `id` starts: live until [`Shared::end_call`]; `None` when a
    /// call with that id is live or forwarded already.
    pub(super) fn start_call(&self, id: &RequestId) -> Option<Arc<CallCtl>> {
        let mut state = self.lock();
        if state.pending.contains_key(id) || state.live.contains_key(id) {
            return None;
        }
        let ctl = Arc::new(CallCtl::default());
        state.live.insert(id.clone(), Arc::clone(&ctl));
        Some(ctl)
    }

    /// The call `id` was answered or forwarded: no longer live.
    pub(super) fn end_call(&self, id: &RequestId, ctl: &Arc<CallCtl>) {
        let ended = {
            let mut state = self.lock();
            if state.live.get(id).is_some_and(|c| Arc::ptr_eq(c, ctl)) {
                state.live.remove(id);
            }
            state.live.is_empty()
        };
        if ended {
            self.idle.notify_waiters();
        }
    }

    /// The client cancelled request `id`: when it is a live call, it is
    /// cancelled (its approval withdrawn before this returns) and `true`;
    /// `false` for any other id (the caller passes the cancellation on).
    pub(super) async fn cancel(&self, id: &RequestId, why: &'static str) -> bool {
        let approval = {
            let state = self.lock();
            match state.live.get(id) {
                Some(ctl) => ctl.cancel(why),
                None => return false,
            }
        };
        finding(&format!("tools/call {id} cancelled: {why}"));
        if let Some(a) = approval {
            self.withdraw(a, why).await;
        }
        true
    }

    /// The client is gone: every live call is cancelled and its approval
    /// withdrawn; returns once they are (or after a few seconds).
    pub(super) async fn cancel_all(&self, why: &'static str) {
        let approvals: Vec<ApprovalId> = {
            let state = self.lock();
            state.live.values().filter_map(|c| c.cancel(why)).collect()
        };
        for a in approvals {
            self.withdraw(a, why).await;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.lock().live.is_empty() {
                return;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return;
            }
        }
    }

    /// Withdraws `approval` in the store (audited `approval_withdrawn`).
    pub(super) async fn withdraw(&self, approval: ApprovalId, why: &'static str) {
        let gate = Arc::clone(&self.gate);
        let done =
            tokio::task::spawn_blocking(move || gate.store().withdraw(approval, WITHDRAWN_BY, why))
                .await;
        match done {
            Ok(Ok(_)) => finding(&format!("approval {approval} withdrawn: {why}")),
            Ok(Err(e)) => finding(&format!(
                "approval {approval} could not be withdrawn: {}",
                e.code().as_str()
            )),
            Err(_) => finding(&format!("approval {approval} could not be withdrawn")),
        }
    }

    /// Registers `approval` as what `ctl`'s call waits for; `true` when the
    /// call was cancelled already (its approval is then withdrawn here).
    pub(super) async fn held_for(&self, ctl: &CallCtl, approval: ApprovalId) -> bool {
        match ctl.hold(approval) {
            None => false,
            Some(why) => {
                self.withdraw(approval, why).await;
                true
            }
        }
    }

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
        ctl: &CallCtl,
    ) -> Held {
        let token = value.pointer("/params/_meta/progressToken").cloned();
        let start = tokio::time::Instant::now();
        let deadline = start + self.options.hold;
        let mut next_progress = start;
        let mut progress: u64 = 0;
        loop {
            let cancelled = ctl.cancelled.notified();
            tokio::pin!(cancelled);
            cancelled.as_mut().enable();
            if ctl.is_cancelled() {
                // Withdrawn by whoever cancelled it.
                return Held::Cancelled;
            }
            let gate = Arc::clone(&self.gate);
            let state = tokio::task::spawn_blocking(move || gate.store().get_approval(approval))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .map(|a| a.state);
            match state {
                Some(ApprovalState::Approved) => {
                    ctl.release();
                    if ctl.is_cancelled() {
                        return Held::Cancelled;
                    }
                    return Held::Approved;
                }
                Some(ApprovalState::Pending) => {}
                Some(_) | None => {
                    ctl.release();
                    return Held::Refused;
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                finding(&format!(
                    "tools/call {id}: approval {approval} not decided within the hold"
                ));
                ctl.release();
                return Held::Waiting;
            }
            if let (Some(t), true) = (&token, now >= next_progress) {
                progress += 1;
                sides
                    .to_client(progress_notification(t, progress, approval))
                    .await;
                next_progress = now + Duration::from_secs(1);
            }
            let pause = Duration::from_millis(200).min(deadline - now);
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = &mut cancelled => {}
            }
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
    /// The client cancelled it (or went away): its approval is withdrawn,
    /// and it gets no answer.
    Cancelled,
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
