//! Audit records of what the MCP proxy refuses before any decision: client
//! frames the strict parser refuses (over stdio or HTTP), requests and
//! notifications of either side whose method is off the pass list, and
//! HTTP requests refused for their token, `Host` or `Origin`, session or
//! mirrored headers.
//!
//! A flood must not grow the log without bound, so records are aggregated
//! per kind: the first refusal of a kind (where, reason code, user) in a
//! [`WINDOW`] is recorded at once, the next ones in that window are only
//! counted, and when the window ends one more record says how many there
//! were (`note`: `… N more within 10 s`). At most one record per kind per
//! window, and kinds are bounded: the reason codes are the proxy's own,
//! the places fixed, the users those of the config's tokens (or none).
//! The records are `unauthorized` (no valid token), `forbidden` (`Host`,
//! `Origin`) or `deny` (anything else), with the reason code as their
//! reason and the place in their note.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::Duration;

use toolgate_store::{AuditEntry, AuditVerdict, StoreGate};

/// The most [`Refusals::flush`] waits for records still being written.
const FLUSH_WAIT: Duration = Duration::from_secs(5);

/// How long refusals of one kind are counted into one record.
pub const WINDOW: Duration = Duration::from_secs(10);

/// What a refusal is recorded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// No valid bearer token: `unauthorized`.
    Unauthorized,
    /// `Host` or `Origin` refused: `forbidden`.
    Forbidden,
    /// Anything else refused: `deny`.
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    kind: Kind,
    place: &'static str,
    code: &'static str,
    user: Option<String>,
}

/// The refusals counted in the current window of each kind.
pub(crate) struct Refusals {
    gate: Arc<StoreGate>,
    windows: Mutex<HashMap<Key, u64>>,
    /// Whether the task ending the windows runs.
    ticking: AtomicBool,
    /// Records written off the caller's thread and not finished yet, so
    /// that the proxy's end waits for them and none is lost at exit.
    writing: Arc<(Mutex<u64>, Condvar)>,
    me: Weak<Refusals>,
}

impl Refusals {
    /// Records through `gate`'s store; a task ends each window (started
    /// with the first refusal).
    pub(crate) fn new(gate: Arc<StoreGate>) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            gate,
            windows: Mutex::new(HashMap::new()),
            ticking: AtomicBool::new(false),
            writing: Arc::new((Mutex::new(0), Condvar::new())),
            me: me.clone(),
        })
    }

    /// Starts the task that ends each window, once, on the current runtime.
    fn tick(&self) {
        if self.ticking.load(Ordering::Relaxed) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.ticking.swap(true, Ordering::Relaxed) {
            return;
        }
        let weak = self.me.clone();
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(WINDOW).await;
                let Some(me) = weak.upgrade() else { return };
                me.end_window(false);
            }
        });
    }

    /// One refusal at `place` (such as `mcp http`) for `code`, by `user`
    /// when the request named one.
    pub(crate) fn record(
        &self,
        kind: Kind,
        place: &'static str,
        code: &'static str,
        user: Option<&str>,
    ) {
        self.tick();
        let key = Key {
            kind,
            place,
            code,
            user: user.map(|u| u.chars().take(128).collect()),
        };
        let first = {
            let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
            match windows.get_mut(&key) {
                Some(n) => {
                    *n = n.saturating_add(1);
                    false
                }
                None => {
                    windows.insert(key.clone(), 0);
                    true
                }
            }
        };
        if first {
            self.write(&key, None, false);
        }
    }

    /// Writes the counts of the current window now (the proxy ends), and
    /// waits (at most [`FLUSH_WAIT`]) for the records still being written
    /// off the caller's thread: when the proxy's run returns, every
    /// refusal it made is in the log.
    pub(crate) fn flush(&self) {
        self.end_window(true);
        let (count, done) = &*self.writing;
        let pending = count.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = done
            .wait_timeout_while(pending, FLUSH_WAIT, |n| *n > 0)
            .unwrap_or_else(PoisonError::into_inner);
    }

    /// The window ends: one record per kind with refusals beyond its
    /// first, and the counts start again.
    fn end_window(&self, blocking: bool) {
        let ended: Vec<(Key, u64)> = {
            let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
            windows.drain().collect()
        };
        for (key, more) in ended {
            if more > 0 {
                self.write(&key, Some(more), blocking);
            }
        }
    }

    /// Appends the record: off the caller's thread unless `blocking`.
    fn write(&self, key: &Key, more: Option<u64>, blocking: bool) {
        let verdict = match key.kind {
            Kind::Unauthorized => AuditVerdict::Unauthorized,
            Kind::Forbidden => AuditVerdict::Forbidden,
            Kind::Deny => AuditVerdict::Deny,
        };
        let note = match more {
            None => format!("{}: refused", key.place),
            Some(n) => format!("{}: {n} more within {} s", key.place, WINDOW.as_secs()),
        };
        let mut entry = AuditEntry::new(self.gate.now(), verdict)
            .reason(key.code)
            .note(note);
        if let Some(u) = &key.user {
            entry = entry.user(u.as_str());
        }
        let store = std::sync::Arc::clone(self.gate.store());
        let append = move || {
            if store.append(entry).is_err() {
                toolgate_edge::log::line(
                    toolgate_edge::log::Level::Error,
                    "mcp",
                    "audit_failed",
                    "the audit record of a refusal could not be written",
                );
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if !blocking => {
                let writing = Arc::clone(&self.writing);
                {
                    let mut n = writing.0.lock().unwrap_or_else(PoisonError::into_inner);
                    *n = n.saturating_add(1);
                }
                runtime.spawn_blocking(move || {
                    append();
                    let mut n = writing.0.lock().unwrap_or_else(PoisonError::into_inner);
                    *n = n.saturating_sub(1);
                    writing.1.notify_all();
                });
            }
            _ => append(),
        }
    }
}

impl Drop for Refusals {
    fn drop(&mut self) {
        // The counts of the last window are not lost.
        self.end_window(true);
    }
}
