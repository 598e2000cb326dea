//! Changes pushed between replicas: PostgreSQL's `LISTEN`/`NOTIFY`.
//!
//! A write that decides an approval or sets the kill switch sends
//! `NOTIFY` on [`CHANNEL`] in its own transaction, so the notification is
//! delivered, to every listening connection of every replica, exactly when
//! the change commits (and never for a change rolled back). Each store that
//! has a subscriber keeps one connection of its own listening, on a thread
//! of its own; when that connection is lost (the server restarted, the
//! backend was ended, the network dropped) the thread reconnects, listens
//! again and pushes [`Change::Resync`], since notifications sent meanwhile
//! are gone. Pushes only wake waiters early: whoever waits keeps a slower
//! poll as the fallback.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Config, Transaction};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::changes::{Change, ChangeListener};
use crate::error::Error;

/// The notification channel every replica listens on.
pub(crate) const CHANNEL: &str = "toolgate_changes";

/// How often the listening thread looks up from its connection to see
/// whether the store was dropped.
const TICK: Duration = Duration::from_millis(250);

/// How long the thread waits before connecting again after a failure.
const RETRY: Duration = Duration::from_secs(1);

/// Sends `change` to every listener once the transaction commits.
pub(crate) fn notify(tx: &mut Transaction<'_>, change: &Change) -> Result<(), Error> {
    tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &change.payload()])
        .map_err(|e| Error::pg("announcing a change", e))?;
    Ok(())
}

/// The listeners of one store, and its listening thread (started with the
/// first listener, stopped when the store is dropped).
pub(crate) struct Listen {
    shared: Arc<Shared>,
    config: Config,
    tls: MakeRustlsConnect,
}

struct Shared {
    listeners: Mutex<Vec<ChangeListener>>,
    started: AtomicBool,
    stop: AtomicBool,
}

impl Listen {
    pub(crate) fn new(config: Config, tls: MakeRustlsConnect) -> Self {
        Self {
            shared: Arc::new(Shared {
                listeners: Mutex::new(Vec::new()),
                started: AtomicBool::new(false),
                stop: AtomicBool::new(false),
            }),
            config,
            tls,
        }
    }

    /// Adds `listener`, starting the thread if it is the first; `false`
    /// when no thread could be started (nothing will be pushed).
    pub(crate) fn subscribe(&self, listener: ChangeListener) -> bool {
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(listener);
        if self.shared.started.swap(true, Ordering::SeqCst) {
            return true;
        }
        let shared = Arc::clone(&self.shared);
        let config = self.config.clone();
        let tls = self.tls.clone();
        std::thread::Builder::new()
            .name("toolgate-pg-listen".into())
            .spawn(move || run(&shared, &config, &tls))
            .is_ok()
    }
}

impl Drop for Listen {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

impl Shared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Calls every listener, and forgets those that want no more.
    fn push(&self, change: &Change) {
        let listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let done: Vec<ChangeListener> = listeners.into_iter().filter(|l| !l(change)).collect();
        if !done.is_empty() {
            self.listeners
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|l| !done.iter().any(|d| Arc::ptr_eq(d, l)));
        }
    }
}

/// The listening thread: connect, `LISTEN`, hand every notification to
/// the listeners; on any failure start over after [`RETRY`].
fn run(shared: &Shared, config: &Config, tls: &MakeRustlsConnect) {
    let mut first = true;
    while !shared.stopped() {
        if let Ok(mut client) = config.connect(tls.clone()) {
            if client.batch_execute(&format!("LISTEN {CHANNEL}")).is_ok() {
                if !first {
                    // Whatever was sent while we were away is lost.
                    shared.push(&Change::Resync);
                }
                first = false;
                while !shared.stopped() && !client.is_closed() {
                    let mut notifications = client.notifications();
                    let mut iter = notifications.timeout_iter(TICK);
                    match iter.next() {
                        Ok(Some(n)) => shared.push(&Change::from_payload(n.payload())),
                        Ok(None) => {}
                        Err(_) => break,
                    }
                }
            }
        }
        let mut waited = Duration::ZERO;
        while waited < RETRY && !shared.stopped() {
            std::thread::sleep(TICK);
            waited += TICK;
        }
    }
}
