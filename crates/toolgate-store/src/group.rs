//! Group commit: concurrent appenders share one transaction.
//!
//! Leader/follower: every appender queues its entry with a slot of its own
//! and sleeps on that slot. If no commit is in flight, the appender leads:
//! it takes the queue (up to `max_batch` entries), commits them in one
//! transaction without holding the queue lock, and posts each entry's result
//! to its slot, waking exactly that appender. If entries are still queued,
//! leadership passes to the oldest one's appender, and only that one is
//! woken; nobody else wakes for a batch that is not theirs. While one batch
//! commits (an fsync), the next one fills up, so throughput grows with
//! concurrency and each caller still returns only after its own record is
//! committed.
//!
//! Deferred appenders ([`GroupCommit::submit_deferred`], for async callers
//! that must not block) queue their entry with a callback instead of a slot
//! and return at once. Their entries are committed by whoever leads; when
//! nobody does, or the lead would pass to a deferred entry, the store's
//! committer thread (started on the first deferred append) takes the lead
//! and commits until the queue is empty. Each callback is called once, with
//! its entry's result, after the batch holding it committed or failed.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crate::audit::{AppendReceipt, AuditEntry};
use crate::error::{Error, ErrorCode};
use crate::store::AppendDone;

/// Commits one batch in one transaction: a receipt per entry, in order.
pub(crate) type CommitFn =
    Arc<dyn Fn(Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error> + Send + Sync>;

pub(crate) struct GroupCommit {
    shared: Arc<Shared>,
    max_batch: usize,
    /// What the committer thread commits with; `None`: no deferred appends.
    deferred: Option<CommitFn>,
    /// The committer thread, once a deferred append started it.
    committer: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the committer thread (lead given, or stop).
    committer_wake: Condvar,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<(AuditEntry, Waiter)>,
    /// Whether some appender or the committer thread leads (commits, or was
    /// told to and will).
    leading: bool,
    /// The committer thread is to take the lead.
    committer_leads: bool,
    /// The store is dropped: the committer thread empties the queue and
    /// ends.
    stop: bool,
}

/// Who hears an entry's result.
enum Waiter {
    /// A blocked appender.
    Slot(Arc<Slot>),
    /// A deferred appender's callback.
    Done(AppendDone),
}

impl Waiter {
    fn post(self, result: Result<AppendReceipt, Error>) {
        match self {
            Waiter::Slot(s) => s.set(State::Done(result)),
            Waiter::Done(done) => done(result),
        }
    }
}

/// Where one appender waits for its result or for the lead.
struct Slot {
    state: Mutex<State>,
    wake: Condvar,
}

enum State {
    Waiting,
    Lead,
    Done(Result<AppendReceipt, Error>),
}

impl Slot {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::Waiting),
            wake: Condvar::new(),
        })
    }

    fn set(&self, state: State) {
        *lock(&self.state) = state;
        self.wake.notify_one();
    }

    /// Sleeps until the slot is no longer waiting; takes what it holds.
    fn wait(&self) -> State {
        let mut s = lock(&self.state);
        while matches!(*s, State::Waiting) {
            s = self.wake.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        std::mem::replace(&mut *s, State::Waiting)
    }
}

/// Every critical section here only moves values: a panic cannot leave a
/// half-updated queue or slot, so a poisoned lock is still consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl GroupCommit {
    /// A group commit for blocking appenders only.
    pub(crate) fn new(max_batch: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue::default()),
                committer_wake: Condvar::new(),
            }),
            max_batch: max_batch.max(1),
            deferred: None,
            committer: Mutex::new(None),
        }
    }

    /// A group commit that also takes deferred appends, committed with
    /// `commit` on the committer thread.
    pub(crate) fn with_committer(max_batch: usize, commit: CommitFn) -> Self {
        let mut group = Self::new(max_batch);
        group.deferred = Some(commit);
        group
    }

    /// Queues `entry` and returns at once; `done` is called with its result
    /// once a batch holding it was committed (on the committer thread, or by
    /// a blocked appender that leads). If the committer thread cannot be
    /// started, `done` gets an error and nothing is queued.
    pub(crate) fn submit_deferred(&self, entry: AuditEntry, done: AppendDone) {
        // Refused before it joins a batch, whose other records it would fail.
        if let Err(e) = crate::rules::record::check_bounds(&entry) {
            done(Err(e));
            return;
        }
        if let Err(e) = self.start_committer() {
            done(Err(e));
            return;
        }
        let mut q = lock(&self.shared.queue);
        q.pending.push_back((entry, Waiter::Done(done)));
        if !q.leading {
            q.leading = true;
            q.committer_leads = true;
            drop(q);
            self.shared.committer_wake.notify_one();
        }
    }

    fn start_committer(&self) -> Result<(), Error> {
        let mut thread = lock(&self.committer);
        if thread.is_some() {
            return Ok(());
        }
        let commit = self.deferred.clone().ok_or_else(|| {
            Error::new(ErrorCode::Internal, "this store takes no deferred appends")
        })?;
        let shared = Arc::clone(&self.shared);
        let max_batch = self.max_batch;
        let handle = std::thread::Builder::new()
            .name("toolgate-commit".to_owned())
            .spawn(move || committer(&shared, &commit, max_batch))
            .map_err(|e| {
                Error::new(
                    ErrorCode::Unavailable,
                    format!("cannot start the audit committer thread: {e}"),
                )
            })?;
        *thread = Some(handle);
        Ok(())
    }

    /// Queues `entry` and returns once a batch holding it was committed by
    /// `commit` (run by whichever caller leads that batch).
    pub(crate) fn submit<F>(&self, entry: AuditEntry, commit: F) -> Result<AppendReceipt, Error>
    where
        F: Fn(Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error>,
    {
        // Refused before it joins a batch, whose other records it would fail.
        crate::rules::record::check_bounds(&entry)?;
        let slot = Slot::new();
        let lead_now = {
            let mut q = lock(&self.shared.queue);
            q.pending
                .push_back((entry, Waiter::Slot(Arc::clone(&slot))));
            !std::mem::replace(&mut q.leading, true)
        };
        if !lead_now {
            match slot.wait() {
                State::Done(result) => return result,
                State::Lead | State::Waiting => {}
            }
        }
        // Leading: commit batches until this appender's own entry is done.
        loop {
            let (entries, waiters) = self.shared.take_batch(self.max_batch);
            let mut guard = LeadGuard {
                shared: &self.shared,
                waiters,
            };
            let result = commit(entries);
            // Only the leader posts results, so an entry of its own that
            // was not in this batch (the queue was longer than a batch) is
            // still queued: lead the next batch too.
            let Some(own) = post(std::mem::take(&mut guard.waiters), result, Some(&slot)) else {
                continue;
            };
            self.shared.pass_lead();
            return own;
        }
    }
}

impl Drop for GroupCommit {
    /// Stops the committer thread once it has emptied the queue.
    fn drop(&mut self) {
        let thread = lock(&self.committer).take();
        if let Some(thread) = thread {
            lock(&self.shared.queue).stop = true;
            self.shared.committer_wake.notify_one();
            // A panic there was caught per batch; nothing left to report.
            let _ignored = thread.join();
        }
    }
}

impl Shared {
    /// Takes up to `max` queued entries, with who waits for each.
    fn take_batch(&self, max: usize) -> (Vec<AuditEntry>, Vec<Waiter>) {
        let mut q = lock(&self.queue);
        let n = q.pending.len().min(max);
        q.pending.drain(..n).unzip()
    }

    /// Gives the lead to the oldest queued appender (the committer thread
    /// if that one is deferred), or gives it up.
    fn pass_lead(&self) {
        let mut q = lock(&self.queue);
        match q.pending.front() {
            Some((_, Waiter::Slot(next))) => {
                let next = Arc::clone(next);
                drop(q);
                next.set(State::Lead);
            }
            Some((_, Waiter::Done(_))) => {
                q.committer_leads = true;
                drop(q);
                self.committer_wake.notify_one();
            }
            None => q.leading = false,
        }
    }
}

/// The committer thread: waits for the lead, commits until the queue is
/// empty, gives the lead up; ends when the store is dropped.
fn committer(shared: &Shared, commit: &CommitFn, max_batch: usize) {
    loop {
        {
            let mut q = lock(&shared.queue);
            while !q.committer_leads && !q.stop {
                q = shared
                    .committer_wake
                    .wait(q)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if !q.committer_leads {
                // Stopped, not leading: whoever leads empties the queue.
                return;
            }
            q.committer_leads = false;
        }
        loop {
            let (entries, waiters) = shared.take_batch(max_batch);
            if entries.is_empty() {
                break;
            }
            let result = catch_unwind(AssertUnwindSafe(|| commit(entries))).unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorCode::Internal,
                    "the audit batch was abandoned",
                ))
            });
            post(waiters, result, None);
        }
        // The queue was empty a moment ago: give the lead up, or keep it
        // if an entry came in since.
        let mut q = lock(&shared.queue);
        if q.pending.is_empty() {
            q.leading = false;
        } else {
            q.committer_leads = true;
        }
    }
}

/// The next entry's result from a batch's outcome.
fn next_receipt(
    receipts: &mut Result<std::vec::IntoIter<AppendReceipt>, Error>,
) -> Result<AppendReceipt, Error> {
    match receipts {
        Ok(it) => it
            .next()
            .ok_or_else(|| Error::new(ErrorCode::Internal, "a batch returned too few receipts")),
        Err(e) => Err(e.clone()),
    }
}

/// Posts a batch's results to its waiters; returns the result for `own`
/// (the leading appender's slot) instead of posting it, if it was in the
/// batch.
fn post(
    waiters: Vec<Waiter>,
    result: Result<Vec<AppendReceipt>, Error>,
    own: Option<&Arc<Slot>>,
) -> Option<Result<AppendReceipt, Error>> {
    let mut mine = None;
    let mut receipts = result.map(Vec::into_iter);
    for w in waiters {
        let r = next_receipt(&mut receipts);
        match w {
            Waiter::Slot(s) if own.is_some_and(|own| Arc::ptr_eq(&s, own)) => mine = Some(r),
            w => w.post(r),
        }
    }
    mine
}

/// If the leader unwinds while committing, its batch fails and the lead
/// passes on, so that no appender waits forever.
struct LeadGuard<'a> {
    shared: &'a Shared,
    /// The batch's waiters, until the results are posted.
    waiters: Vec<Waiter>,
}

impl Drop for LeadGuard<'_> {
    fn drop(&mut self) {
        if self.waiters.is_empty() {
            return;
        }
        let err = Error::new(ErrorCode::Internal, "the audit batch was abandoned");
        for w in self.waiters.drain(..) {
            w.post(Err(err.clone()));
        }
        self.shared.pass_lead();
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::panic,
        reason = "test code: a failed assumption should fail the test loudly"
    )]

    use super::*;
    use crate::audit::AuditVerdict;
    use crate::time::Timestamp;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn entry() -> AuditEntry {
        AuditEntry::new(Timestamp::from_unix_seconds(1), AuditVerdict::Allow)
    }

    /// A receipt for each entry, all with `seq`.
    fn receipts(entries: &[AuditEntry], seq: u64) -> Vec<AppendReceipt> {
        entries
            .iter()
            .map(|_| AppendReceipt {
                seq,
                hash: toolgate_json::Digest::of(b""),
                refused: None,
            })
            .collect()
    }

    /// Many threads, small batches: every appender gets exactly its own
    /// receipt, each entry is committed once, and nobody hangs.
    #[test]
    fn every_appender_gets_its_own_receipt_once() {
        let group = GroupCommit::new(3);
        let next = AtomicUsize::new(0);
        let committed = AtomicUsize::new(0);
        let commit = |entries: Vec<AuditEntry>| {
            committed.fetch_add(entries.len(), Ordering::SeqCst);
            std::thread::yield_now();
            Ok(entries
                .iter()
                .map(|_| {
                    let seq = next.fetch_add(1, Ordering::SeqCst) as u64 + 1;
                    AppendReceipt {
                        seq,
                        hash: toolgate_json::Digest::of(b""),
                        refused: None,
                    }
                })
                .collect())
        };
        let mut seqs: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    s.spawn(|| {
                        (0..200)
                            .map(|_| group.submit(entry(), commit).unwrap().seq)
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        seqs.sort_unstable();
        assert_eq!(committed.load(Ordering::SeqCst), 3200);
        assert_eq!(seqs, (1..=3200).collect::<Vec<u64>>());
        assert!(!lock(&group.shared.queue).leading);
    }

    /// A failing batch fails each of its appenders, and the next batch
    /// commits.
    #[test]
    fn a_failed_batch_fails_its_own_appenders_only() {
        let group = GroupCommit::new(64);
        let calls = AtomicUsize::new(0);
        let commit = |entries: Vec<AuditEntry>| {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                return Err(Error::new(ErrorCode::Busy, "first batch fails"));
            }
            Ok(receipts(&entries, 7))
        };
        assert_eq!(
            group.submit(entry(), commit).unwrap_err().code(),
            ErrorCode::Busy
        );
        assert_eq!(group.submit(entry(), commit).unwrap().seq, 7);
    }

    /// A leader that panics while committing fails its batch and passes the
    /// lead on: the other appenders finish.
    #[test]
    fn a_panicking_leader_does_not_strand_the_others() {
        let group = GroupCommit::new(1);
        let calls = AtomicUsize::new(0);
        let commit = |entries: Vec<AuditEntry>| {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                std::thread::sleep(std::time::Duration::from_millis(50));
                panic!("commit panics");
            }
            Ok(receipts(&entries, 1))
        };
        std::thread::scope(|s| {
            let first = s.spawn(|| group.submit(entry(), commit));
            std::thread::sleep(std::time::Duration::from_millis(10));
            let others: Vec<_> = (0..4)
                .map(|_| s.spawn(|| group.submit(entry(), commit)))
                .collect();
            assert!(first.join().is_err());
            for h in others {
                assert_eq!(h.join().unwrap().unwrap().seq, 1);
            }
        });
    }

    fn counting_commit(next: &Arc<AtomicUsize>) -> CommitFn {
        let next = Arc::clone(next);
        Arc::new(move |entries: Vec<AuditEntry>| {
            std::thread::yield_now();
            Ok(entries
                .iter()
                .map(|_| AppendReceipt {
                    seq: next.fetch_add(1, Ordering::SeqCst) as u64 + 1,
                    hash: toolgate_json::Digest::of(b""),
                    refused: None,
                })
                .collect())
        })
    }

    /// Deferred and blocking appenders mixed, in small batches: every
    /// callback is called exactly once with its own receipt, every blocked
    /// appender returns, and the lead is given up at the end.
    #[test]
    fn deferred_and_blocking_appenders_each_get_their_receipt_once() {
        let next = Arc::new(AtomicUsize::new(0));
        let commit = counting_commit(&next);
        let group = GroupCommit::with_committer(4, Arc::clone(&commit));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            for t in 0..8 {
                let (group, commit, tx) = (&group, &commit, tx.clone());
                s.spawn(move || {
                    for _ in 0..200 {
                        if t % 2 == 0 {
                            let tx = tx.clone();
                            group.submit_deferred(
                                entry(),
                                Box::new(move |r| tx.send(r.unwrap().seq).unwrap()),
                            );
                        } else {
                            let seq = group.submit(entry(), |b| commit(b)).unwrap().seq;
                            tx.send(seq).unwrap();
                        }
                    }
                });
            }
        });
        drop(tx);
        let mut seqs: Vec<u64> = rx.iter().collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (1..=1600).collect::<Vec<u64>>());
        // The committer runs a batch's callbacks before it gives up the
        // lead: the last receipt can arrive while it still leads. It must
        // give the lead up soon after, with nothing left pending.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let q = lock(&group.shared.queue);
            assert!(q.pending.is_empty());
            if !q.leading {
                break;
            }
            drop(q);
            assert!(
                std::time::Instant::now() < deadline,
                "the lead was never given up"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// A commit that fails or panics on the committer thread fails its own
    /// callbacks only; the thread lives on and commits the next entries.
    #[test]
    fn the_committer_survives_a_failing_and_a_panicking_batch() {
        let calls = Arc::new(AtomicUsize::new(0));
        let commit: CommitFn = {
            let calls = Arc::clone(&calls);
            Arc::new(
                move |entries: Vec<AuditEntry>| match calls.fetch_add(1, Ordering::SeqCst) {
                    0 => Err(Error::new(ErrorCode::Busy, "first batch fails")),
                    1 => panic!("second batch panics"),
                    _ => Ok(receipts(&entries, 9)),
                },
            )
        };
        let group = GroupCommit::with_committer(64, commit);
        let submit = || {
            let (tx, rx) = std::sync::mpsc::channel();
            group.submit_deferred(
                entry(),
                Box::new(move |r| tx.send(r.map(|r| r.seq)).unwrap()),
            );
            rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap()
        };
        assert_eq!(submit().unwrap_err().code(), ErrorCode::Busy);
        assert_eq!(submit().unwrap_err().code(), ErrorCode::Internal);
        assert_eq!(submit().unwrap(), 9);
    }

    /// A group commit made for blocking appenders only refuses a deferred
    /// append through its callback.
    #[test]
    fn a_group_commit_without_a_committer_refuses_deferred_appends() {
        let group = GroupCommit::new(4);
        let (tx, rx) = std::sync::mpsc::channel();
        group.submit_deferred(entry(), Box::new(move |r| tx.send(r.is_ok()).unwrap()));
        assert_eq!(rx.try_recv(), Ok(false));
        assert!(lock(&group.shared.queue).pending.is_empty());
    }

    /// Dropping the group commit with deferred entries still queued commits
    /// them before the committer thread ends: no callback is lost.
    #[test]
    fn dropping_the_group_commit_commits_what_is_queued() {
        let next = Arc::new(AtomicUsize::new(0));
        let slow: CommitFn = {
            let inner = counting_commit(&next);
            Arc::new(move |entries| {
                std::thread::sleep(std::time::Duration::from_millis(2));
                inner(entries)
            })
        };
        let group = GroupCommit::with_committer(2, slow);
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..50 {
            let tx = tx.clone();
            group.submit_deferred(entry(), Box::new(move |r| tx.send(r.unwrap().seq).unwrap()));
        }
        drop(group);
        drop(tx);
        assert_eq!(rx.iter().count(), 50);
        assert_eq!(next.load(Ordering::SeqCst), 50);
    }
}
