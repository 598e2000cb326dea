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

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::audit::{AppendReceipt, AuditEntry};
use crate::error::{Error, ErrorCode};

pub(crate) struct GroupCommit {
    queue: Mutex<Queue>,
    max_batch: usize,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<(AuditEntry, Arc<Slot>)>,
    /// Whether some appender leads (commits, or was told to and will).
    leading: bool,
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
    pub(crate) fn new(max_batch: usize) -> Self {
        Self {
            queue: Mutex::new(Queue::default()),
            max_batch: max_batch.max(1),
        }
    }

    /// Queues `entry` and returns once a batch holding it was committed by
    /// `commit` (run by whichever caller leads that batch).
    pub(crate) fn submit<F>(&self, entry: AuditEntry, commit: F) -> Result<AppendReceipt, Error>
    where
        F: Fn(Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error>,
    {
        let slot = Slot::new();
        let lead_now = {
            let mut q = lock(&self.queue);
            q.pending.push_back((entry, Arc::clone(&slot)));
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
            let batch: Vec<(AuditEntry, Arc<Slot>)> = {
                let mut q = lock(&self.queue);
                let n = q.pending.len().min(self.max_batch);
                q.pending.drain(..n).collect()
            };
            let mut guard = LeadGuard {
                group: self,
                slots: Vec::with_capacity(batch.len()),
                armed: true,
            };
            let mut entries = Vec::with_capacity(batch.len());
            for (entry, s) in batch {
                entries.push(entry);
                guard.slots.push(s);
            }
            let result = commit(entries);
            guard.armed = false;
            // Only the leader posts results, so an entry of its own that
            // was not in this batch (the queue was longer than a batch) is
            // still queued: lead the next batch too.
            let Some(own) = post(&guard.slots, result, &slot) else {
                continue;
            };
            self.pass_lead();
            return own;
        }
    }

    /// Gives the lead to the oldest queued appender, or gives it up.
    fn pass_lead(&self) {
        let mut q = lock(&self.queue);
        match q.pending.front() {
            Some((_, next)) => {
                let next = Arc::clone(next);
                drop(q);
                next.set(State::Lead);
            }
            None => q.leading = false,
        }
    }
}

/// Posts a batch's results to its slots, waking each appender; returns the
/// result for `own` instead of posting it, if `own` was in the batch.
fn post(
    slots: &[Arc<Slot>],
    result: Result<Vec<AppendReceipt>, Error>,
    own: &Arc<Slot>,
) -> Option<Result<AppendReceipt, Error>> {
    let mut mine = None;
    let mut receipts = match result {
        Ok(r) => Ok(r.into_iter()),
        Err(e) => Err(e),
    };
    for s in slots {
        let r = match &mut receipts {
            Ok(it) => it.next().ok_or_else(|| {
                Error::new(ErrorCode::Internal, "a batch returned too few receipts")
            }),
            Err(e) => Err(e.clone()),
        };
        if Arc::ptr_eq(s, own) {
            mine = Some(r);
        } else {
            s.set(State::Done(r));
        }
    }
    mine
}

/// If the leader unwinds while committing, its batch fails and the lead
/// passes on, so that no appender waits forever.
struct LeadGuard<'a> {
    group: &'a GroupCommit,
    slots: Vec<Arc<Slot>>,
    /// Cleared once the commit returned and its results are posted.
    armed: bool,
}

impl Drop for LeadGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let err = Error::new(ErrorCode::Internal, "the audit batch was abandoned");
        for s in self.slots.drain(..) {
            s.set(State::Done(Err(err.clone())));
        }
        self.group.pass_lead();
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
    use crate::audit::Verdict;
    use crate::time::Timestamp;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn entry() -> AuditEntry {
        AuditEntry::new(Timestamp::from_unix_seconds(1), Verdict::Allow)
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
        assert!(!lock(&group.queue).leading);
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
            Ok(entries
                .iter()
                .map(|_| AppendReceipt {
                    seq: 7,
                    hash: toolgate_json::Digest::of(b""),
                })
                .collect())
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
            Ok(entries
                .iter()
                .map(|_| AppendReceipt {
                    seq: 1,
                    hash: toolgate_json::Digest::of(b""),
                })
                .collect())
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
}
