//! Notices of held calls: when a call waits for a human, `toolgate serve`
//! tells the configured sinks (`[[approvals.notify]]`): a signed JSON
//! webhook ([`sign`]) or a Slack-compatible incoming webhook, each with
//! the tool, the user, why the call was held, its arguments (bounded and
//! escaped) and a link to its card.
//!
//! A claim is a lease ([`LEASE`]): a notice whose sender died while it
//! was `sending` is taken over by the next look of any process sharing
//! the store, and sent again (a receiver drops repeats by the delivery
//! header).
//!
//! Off the decision path: [`run`] finds the store's new pending approvals
//! (woken by a held call here, and every `[server] store_poll_ms`, at
//! least a second, for the calls other processes held), claims each
//! (approval, sink) notice once in the store (so replicas sharing it send
//! each notice once), and hands it to a bounded queue ([`QUEUE`]); a
//! notice that does not fit is dropped, counted
//! (`toolgate_notices_dropped_total` on `/metrics`) and recorded `failed`;
//! the notices claimed and not yet finished are the gauge
//! `toolgate_notices_pending`. At most [`AT_ONCE`] deliveries
//! run together, each its attempts under the sink's deadline. A sink that
//! fails, lies or hangs never approves anything and never slows a
//! decision: nothing a sink answers is read beyond its status.

pub mod sign;

mod payload;
mod send;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use toolgate::config::{NotifyKind, NotifySink};
use toolgate_store::NoticeState;
use toolgate_store::{Approval, ApprovalFilter, ApprovalId, ApprovalKind, ApprovalState};

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

/// How long a claim on a notice lasts without a sign of life from its
/// sender: past it, another process (or replica) takes the notice over
/// ([`toolgate_store::Store::reclaim_notices`]). A live sender renews its
/// claim when a delivery starts and records each attempt, at most one
/// attempt's deadline (60 s) and one pause (30 s) apart.
pub const LEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// One notice to deliver: an approval, to the sink at an index, claimed
/// at a time (the claim a delivery renews).
struct Job {
    approval: Approval,
    sink: usize,
    claimed_at: toolgate_store::Timestamp,
}

/// The time now in Unix seconds, by the service's clock.
fn unix_seconds(state: &AppState) -> u64 {
    u64::try_from(state.now().unix_seconds()).unwrap_or(0)
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
                    state.inner.notices_pending.fetch_sub(1, Ordering::Relaxed);
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
                // Counted before it can be delivered (and so uncounted).
                state.inner.notices_pending.fetch_add(1, Ordering::Relaxed);
                if let Err(full) = tx.try_send(job) {
                    let job = full.into_inner();
                    state.inner.notices_pending.fetch_sub(1, Ordering::Relaxed);
                    state.inner.notices_dropped.fetch_add(1, Ordering::Relaxed);
                    let name = settings
                        .sinks
                        .get(job.sink)
                        .map(|s| s.name().to_owned())
                        .unwrap_or_default();
                    let why = "dropped: the queue is full";
                    record(&state, job.approval.id, name, NoticeState::Failed, 0, why).await;
                }
                state.inner.notices_claimed.send_modify(|n| *n += 1);
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
    let now = state.now();
    let (jobs, found) = state
        .blocking(move |s| {
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
                                claimed_at: now,
                            });
                        }
                    }
                }
                after = list.last().map(|a| a.id).or(after);
                if list.len() < PAGE as usize {
                    break;
                }
            }
            jobs.extend(reclaimed(s, &settings, now)?);
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

/// The notices whose sender's lease ran out ([`LEASE`]), taken over at
/// `now`: those of pending approvals to sinks still configured are
/// delivered again; the others are settled `failed`, saying why.
fn reclaimed(
    s: &dyn toolgate_store::Store,
    settings: &Settings,
    now: toolgate_store::Timestamp,
) -> Result<Vec<Job>, toolgate_store::Error> {
    let lease = i64::try_from(LEASE.as_millis()).unwrap_or(i64::MAX);
    let stale_before =
        toolgate_store::Timestamp::from_unix_millis(now.unix_millis().saturating_sub(lease));
    let mut jobs = Vec::new();
    for (id, name) in s.reclaim_notices(now, stale_before, PAGE)? {
        let sink = settings.sinks.iter().position(|k| k.name() == name);
        let approval = s.get_approval(id)?.map(|a| a.as_of(now));
        match (sink, approval) {
            (Some(sink), Some(approval)) if approval.state == ApprovalState::Pending => {
                jobs.push(Job {
                    approval,
                    sink,
                    claimed_at: now,
                });
            }
            (None, _) => {
                let why = "not sent: the sink is no longer configured";
                s.record_notice(id, &name, NoticeState::Failed, 0, why, now)?;
            }
            _ => {
                let why = "not sent: the approval is no longer pending";
                s.record_notice(id, &name, NoticeState::Failed, 0, why, now)?;
            }
        }
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
    let now = state.now();
    let done = state
        .blocking(move |s| s.record_notice(id, &sink, st, attempts, &outcome, now))
        .await;
    if done.is_err() {
        toolgate_edge::log::line(
            toolgate_edge::log::Level::Error,
            "serve",
            "notice_failed",
            &format!("cannot record the notice of approval {id}"),
        );
    }
    if st != NoticeState::Sending {
        state.inner.notices_settled.send_modify(|n| *n += 1);
    }
}

/// Reads what the notice says and delivers it, recording each attempt.
async fn deliver(state: &AppState, settings: &Settings, client: &send::NoticeClient, job: Job) {
    let Some(sink) = settings.sinks.get(job.sink) else {
        return;
    };
    let a = job.approval;
    // Still this process's claim? Not when it waited in the queue past its
    // lease and another process took it over (or the store cannot say).
    let (id, name, claimed_at) = (a.id, sink.name().to_owned(), job.claimed_at);
    let renewed_at = state.now();
    let ours = state
        .blocking(move |s| s.renew_notice(id, &name, claimed_at, renewed_at))
        .await;
    if !matches!(ours, Ok(true)) {
        return;
    }
    let inner = Arc::clone(&state.inner);
    let (approval, page_url) = (a.clone(), settings.page_url.clone());
    let kind = sink.kind();
    let now = state.now();
    let body = state
        .blocking(move |s| {
            let gate = inner.gate.gate();
            let why = toolgate_store::approval_context(
                s,
                &approval,
                gate.tool_limits(&approval.tool),
                now,
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
        match send::attempt(client, sink, &body, &delivery, unix_seconds(state)).await {
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
