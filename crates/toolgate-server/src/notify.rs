//! Notices of held calls: when a call waits for a human, `toolgate serve`
//! tells the configured sinks (`[[approvals.notify]]`): a signed JSON
//! webhook ([`sign`]) or a Slack-compatible incoming webhook, each with
//! the tool, the user, why the call was held, its arguments (bounded and
//! escaped) and a link to its card.
//!
//! Off the decision path: [`run`] finds the store's new pending approvals
//! (woken by a held call here, and every `[server] store_poll_ms`, at
//! least a second, for the calls other processes held), claims each
//! (approval, sink) notice once in the store (so replicas sharing it send
//! each notice once), and hands it to a bounded queue ([`QUEUE`]); a
//! notice that does not fit is dropped, counted and recorded `failed`. At most [`AT_ONCE`] deliveries
//! run together, each its attempts under the sink's deadline. A sink that
//! fails, lies or hangs never approves anything and never slows a
//! decision: nothing a sink answers is read beyond its status.

pub mod sign;

mod payload;
mod send;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use toolgate::config::{NotifyKind, NotifySink};
use toolgate_store::{Approval, ApprovalFilter, ApprovalId, ApprovalKind, ApprovalState};
use toolgate_store::{Clock as _, NoticeState, SystemClock};

use crate::state::AppState;

pub use payload::MAX_ARGUMENT_CHARS;
pub use sign::{verify, VerifyError, MAX_AGE_SECONDS, SIGNATURE_HEADER, TIMESTAMP_HEADER};

/// The most notices waiting for a delivery slot; more are dropped.
pub const QUEUE: usize = 256;
/// The most deliveries at once.
pub const AT_ONCE: usize = 8;
/// The most pending approvals one look at the store reads.
const PAGE: u32 = 100;

/// The sinks and the page's address, from `[approvals]`.
#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) sinks: Vec<NotifySink>,
    pub(crate) page_url: Option<String>,
}

/// One notice to deliver: an approval, to the sink at an index.
struct Job {
    approval: Approval,
    sink: usize,
}

/// The time now in Unix seconds.
fn unix_seconds() -> u64 {
    u64::try_from(SystemClock::new().now().unix_seconds()).unwrap_or(0)
}

/// Finds, claims, queues and delivers notices until `stop` turns true
/// (see the module). Returns at once without sinks.
pub async fn run(state: AppState, mut stop: tokio::sync::watch::Receiver<bool>) {
    let Some(settings) = state.inner.notify.clone() else {
        return;
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Job>(QUEUE);
    let slots = Arc::new(tokio::sync::Semaphore::new(AT_ONCE));
    let client = send::client();
    {
        let (state, settings) = (state.clone(), Arc::clone(&settings));
        tokio::spawn(async move {
            while let Some(job) = rx.recv().await {
                let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                    return;
                };
                let (state, settings, client) =
                    (state.clone(), Arc::clone(&settings), client.clone());
                tokio::spawn(async move {
                    deliver(&state, &settings, &client, job).await;
                    drop(slot);
                });
            }
        });
    }
    // The ids this process has claimed notices of (or seen claimed), for
    // the last `LAG` ids: an approval whose id was taken before another's
    // but committed after it is still found.
    let mut seen: std::collections::BTreeSet<ApprovalId> = std::collections::BTreeSet::new();
    loop {
        if let Ok(jobs) = find(&state, &settings, &mut seen).await {
            for job in jobs {
                if let Err(full) = tx.try_send(job) {
                    let job = full.into_inner();
                    state.inner.notices_dropped.fetch_add(1, Ordering::Relaxed);
                    let name = settings
                        .sinks
                        .get(job.sink)
                        .map(|s| s.name().to_owned())
                        .unwrap_or_default();
                    let why = "dropped: the queue is full";
                    record(&state, job.approval.id, name, NoticeState::Failed, 0, why).await;
                }
            }
        }
        // A store that cannot be read now is read again at the next wake;
        // calls held by other processes are found within a second.
        tokio::select! {
            () = state.inner.held.notified() => {}
            () = tokio::time::sleep(state.inner.store_poll.max(POLL_AT_LEAST)) => {}
            _ = stop.wait_for(|stopping| *stopping) => return,
        }
    }
}

/// How many ids back from the newest seen each look reads again.
const LAG: u64 = 1000;
/// The most pages of pending approvals one look reads.
const PAGES: usize = 10;
/// The shortest pause between looks at the store.
const POLL_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(1);

/// The pending single approvals not yet in `seen` (ascending, from `LAG`
/// ids before the newest seen), and the notices of them this process
/// claimed.
async fn find(
    state: &AppState,
    settings: &Arc<Settings>,
    seen: &mut std::collections::BTreeSet<ApprovalId>,
) -> Result<Vec<Job>, crate::error::ApiError> {
    let settings = Arc::clone(settings);
    let floor = seen
        .iter()
        .next_back()
        .map(|max| ApprovalId::new(max.get().saturating_sub(LAG)));
    let known: Vec<ApprovalId> = seen.iter().copied().collect();
    let (jobs, found) = state
        .blocking(move |s| {
            let now = SystemClock::new().now();
            let (mut jobs, mut found) = (Vec::new(), Vec::new());
            let mut after = floor;
            for _ in 0..PAGES {
                let mut f = ApprovalFilter::new()
                    .state(ApprovalState::Pending)
                    .kind(ApprovalKind::Single)
                    .limit(PAGE);
                if let Some(c) = after {
                    f = f.after(c);
                }
                let list = s.list_approvals(&f)?;
                for a in &list {
                    if known.binary_search(&a.id).is_ok() {
                        continue;
                    }
                    found.push(a.id);
                    for (i, sink) in settings.sinks.iter().enumerate() {
                        if s.claim_notice(a.id, sink.name(), now)? {
                            jobs.push(Job {
                                approval: a.clone(),
                                sink: i,
                            });
                        }
                    }
                }
                after = list.last().map(|a| a.id).or(after);
                if list.len() < PAGE as usize {
                    break;
                }
            }
            Ok((jobs, found))
        })
        .await?;
    seen.extend(found);
    if let Some(max) = seen.iter().next_back().copied() {
        let keep = ApprovalId::new(max.get().saturating_sub(LAG));
        *seen = seen.split_off(&keep);
    }
    Ok(jobs)
}

/// Records how a notice stands; a store that cannot take it now is
/// reported on standard error (the notice itself is never retried for it).
async fn record(
    state: &AppState,
    id: ApprovalId,
    sink: String,
    st: NoticeState,
    attempts: u32,
    outcome: &str,
) {
    let outcome = outcome.to_owned();
    let done = state
        .blocking(move |s| {
            s.record_notice(id, &sink, st, attempts, &outcome, SystemClock::new().now())
        })
        .await;
    if done.is_err() {
        toolgate_edge::log::line(
            toolgate_edge::log::Level::Error,
            "serve",
            "notice_failed",
            &format!("cannot record the notice of approval {id}"),
        );
    }
}

/// Reads what the notice says and delivers it, recording each attempt.
async fn deliver(state: &AppState, settings: &Settings, client: &send::NoticeClient, job: Job) {
    let Some(sink) = settings.sinks.get(job.sink) else {
        return;
    };
    let a = job.approval;
    let inner = Arc::clone(&state.inner);
    let (approval, page_url) = (a.clone(), settings.page_url.clone());
    let kind = sink.kind();
    let body = state
        .blocking(move |s| {
            let gate = inner.gate.gate();
            let why = toolgate_store::approval_context(
                s,
                &approval,
                gate.tool_limits(&approval.tool),
                SystemClock::new().now(),
            )?;
            let held = payload::Held {
                approval: &approval,
                why: &why,
                risk: gate
                    .registry()
                    .get(&approval.tool)
                    .map(|t| t.risk().as_str()),
                link: page_url.map(|u| format!("{u}#approval-{}", approval.id)),
            };
            Ok(match kind {
                NotifyKind::Slack => payload::slack(&held),
                _ => payload::webhook(&held),
            })
        })
        .await;
    let name = sink.name().to_owned();
    let Ok(body) = body else {
        record(
            state,
            a.id,
            name,
            NoticeState::Failed,
            0,
            "the approval cannot be read",
        )
        .await;
        return;
    };
    let delivery = format!("{}-{}", a.id, sink.name());
    let mut n = 0;
    loop {
        n += 1;
        match send::attempt(client, sink, &body, &delivery, unix_seconds()).await {
            send::Attempt::Delivered(o) => {
                record(state, a.id, name, NoticeState::Delivered, n, &o).await;
                return;
            }
            send::Attempt::Final(o) => {
                record(state, a.id, name, NoticeState::Failed, n, &o).await;
                return;
            }
            send::Attempt::Again(o) if n >= sink.max_attempts() => {
                record(state, a.id, name, NoticeState::Failed, n, &o).await;
                return;
            }
            send::Attempt::Again(o) => {
                record(state, a.id, name.clone(), NoticeState::Sending, n, &o).await;
                if state.inner.stopping.load(Ordering::SeqCst) {
                    return;
                }
                tokio::time::sleep(send::pause(n)).await;
            }
        }
    }
}
