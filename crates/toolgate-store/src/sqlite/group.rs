//! Group commit: concurrent appenders share one transaction.
//!
//! Leader/follower: every appender queues its entry with a ticket. If no
//! commit is in flight, the appender becomes the leader: it takes the queue
//! (up to `max_batch` entries), commits them in one transaction without
//! holding the queue lock, posts each ticket's result and wakes everyone.
//! Followers sleep on the condition variable until their ticket has a
//! result, or until no commit is in flight and their entry is still queued,
//! when one of them leads the next batch. While one batch commits (an
//! fsync), the next one fills up, so throughput grows with concurrency and
//! each caller still returns only after its own record is committed.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, PoisonError};

use crate::audit::{AppendReceipt, AuditEntry};
use crate::error::{Error, ErrorCode};

pub(crate) struct GroupCommit {
    queue: Mutex<Queue>,
    wake: Condvar,
    max_batch: usize,
}

#[derive(Default)]
struct Queue {
    next_ticket: u64,
    pending: VecDeque<(u64, AuditEntry)>,
    done: HashMap<u64, Result<AppendReceipt, Error>>,
    committing: bool,
}

impl GroupCommit {
    pub(crate) fn new(max_batch: usize) -> Self {
        Self {
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            max_batch: max_batch.max(1),
        }
    }

    /// Queues `entry` and returns once a batch holding it was committed by
    /// `commit` (run by whichever caller leads that batch).
    pub(crate) fn submit<F>(&self, entry: AuditEntry, commit: F) -> Result<AppendReceipt, Error>
    where
        F: Fn(Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, Error>,
    {
        let poisoned = |_| Error::poisoned("audit queue");
        let mut q = self.queue.lock().map_err(poisoned)?;
        let ticket = q.next_ticket;
        q.next_ticket = q.next_ticket.wrapping_add(1);
        q.pending.push_back((ticket, entry));
        loop {
            if let Some(result) = q.done.remove(&ticket) {
                return result;
            }
            if !q.committing && !q.pending.is_empty() {
                q.committing = true;
                let n = q.pending.len().min(self.max_batch);
                let (tickets, entries): (Vec<u64>, Vec<AuditEntry>) = q.pending.drain(..n).unzip();
                drop(q);
                let mut guard = LeadGuard {
                    group: self,
                    tickets: Some(tickets),
                };
                let result = commit(entries);
                let tickets = guard.tickets.take().unwrap_or_default();
                q = self.queue.lock().map_err(poisoned)?;
                post(&mut q, tickets, result);
                q.committing = false;
                self.wake.notify_all();
                continue;
            }
            q = self.wake.wait(q).map_err(poisoned)?;
        }
    }
}

fn post(q: &mut Queue, tickets: Vec<u64>, result: Result<Vec<AppendReceipt>, Error>) {
    match result {
        Ok(receipts) => {
            let mut receipts = receipts.into_iter();
            for t in tickets {
                let r = receipts.next().ok_or_else(|| {
                    Error::new(ErrorCode::Internal, "a batch returned too few receipts")
                });
                q.done.insert(t, r);
            }
        }
        Err(e) => {
            for t in tickets {
                q.done.insert(t, Err(e.clone()));
            }
        }
    }
}

/// If the leader unwinds while committing, its batch fails and leadership
/// is released, so that no follower waits forever.
struct LeadGuard<'a> {
    group: &'a GroupCommit,
    tickets: Option<Vec<u64>>,
}

impl Drop for LeadGuard<'_> {
    fn drop(&mut self) {
        if let Some(tickets) = self.tickets.take() {
            let mut q = self
                .group
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let err = Error::new(ErrorCode::Internal, "the audit batch was abandoned");
            post(&mut q, tickets, Err(err));
            q.committing = false;
            self.group.wake.notify_all();
        }
    }
}
