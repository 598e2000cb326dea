//! A small fixed pool of PostgreSQL connections that reconnect by
//! themselves.
//!
//! Each slot holds a connection or nothing. A slot is connected when it is
//! first used, and again after its connection was lost (the server
//! restarted, an administrator ended the backend, a failover, the network
//! dropped).
//!
//! A lost connection costs no call while the database is live:
//! - Before a pooled connection is handed out, what the server sent it
//!   while it sat idle is read without waiting (no round trip): a backend
//!   that was ended has said so, and the connection is replaced.
//! - Connections are counted in *generations*. When one is found dead, the
//!   pool moves to the next generation and replaces every connection of the
//!   older one as it is next taken (one backend ended usually means all
//!   were: a restart, a failover, `pg_terminate_backend` of a role).
//! - A call whose connection is found gone runs once more, on a fresh
//!   connection, when nothing it did can have taken effect: a read, or a
//!   write whose `COMMIT` was not yet sent (the server rolls back a
//!   transaction whose connection ended). A `COMMIT` whose answer was lost
//!   is looked up on a new connection by its transaction id
//!   (`txid_status`): committed is a success, rolled back runs once more,
//!   and an outcome that cannot be learnt fails with `store_unavailable`
//!   (the gate denies); it never runs twice.
//!
//! While the database is away every call fails with `store_unavailable`,
//! and the next call after it returns connects afresh, without a restart.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, ErrorCode};

use super::statements::Prepared;

/// How long [`Pool::outcome`] waits for an ended backend to finish its
/// transaction, and how often it asks.
const OUTCOME_WAIT: Duration = Duration::from_secs(5);
const OUTCOME_POLL: Duration = Duration::from_millis(10);

/// A pooled connection, its prepared statements (prepared on first use)
/// and the generation it was opened in.
pub(crate) struct Conn {
    client: Client,
    prepared: Option<Prepared>,
    generation: u64,
}

/// What a call did before it failed, as far as a retry is concerned.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    commit_sent: bool,
    rolled_back: bool,
}

impl Progress {
    /// Called right before a `COMMIT` is sent: from here on the outcome of
    /// a lost connection is unknown, and the call is not run again...
    pub(crate) fn committing(&mut self) {
        self.commit_sent = true;
    }

    /// ... unless the server says the transaction was rolled back (see
    /// [`Pool::outcome`]).
    pub(crate) fn rolled_back(&mut self) {
        self.rolled_back = true;
    }

    fn may_retry(&self) -> bool {
        !self.commit_sent || self.rolled_back
    }
}

pub(crate) struct Pool {
    config: Config,
    /// The TLS client `sslmode` and `sslrootcert` asked for (see `tls`).
    tls: MakeRustlsConnect,
    /// Run on every new connection (session settings).
    setup: String,
    slots: Vec<Mutex<Option<Conn>>>,
    next: AtomicUsize,
    /// Connections opened before this generation are replaced when next
    /// taken.
    generation: AtomicU64,
}

impl Pool {
    pub(crate) fn new(config: Config, tls: MakeRustlsConnect, setup: String, size: usize) -> Self {
        Self {
            config,
            tls,
            setup,
            slots: (0..size.max(1)).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
        }
    }

    /// A new connection, outside the pool (migrations, checks at open).
    pub(crate) fn connect(&self) -> Result<Client, Error> {
        let mut client = self
            .config
            .connect(self.tls.clone())
            .map_err(|e| Error::pg("connecting to the database", e))?;
        if !self.setup.is_empty() {
            client
                .batch_execute(&self.setup)
                .map_err(|e| Error::pg("configuring the connection", e))?;
        }
        Ok(client)
    }

    /// A free slot (the first free one from a rotating start), else waits
    /// for one.
    fn slot(&self) -> Result<MutexGuard<'_, Option<Conn>>, Error> {
        let n = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            if let Some(m) = self.slots.get((start + k) % n) {
                match m.try_lock() {
                    Ok(guard) => return Ok(guard),
                    Err(TryLockError::WouldBlock) => {}
                    Err(TryLockError::Poisoned(_)) => {
                        return Err(Error::poisoned("database connection"))
                    }
                }
            }
        }
        self.slots
            .get(start % n)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "the connection pool is empty"))?
            .lock()
            .map_err(|_| Error::poisoned("database connection"))
    }

    /// Runs a read `f` on a pooled connection and its prepared statements,
    /// connecting and preparing first if needed. A read whose connection is
    /// found gone runs once more, on a fresh connection.
    pub(crate) fn with<T>(
        &self,
        mut f: impl FnMut(&mut Client, &Prepared) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.run(|client, prepared, _| f(client, prepared))
    }

    /// Runs `f` (a transaction, which calls [`Progress::committing`] right
    /// before its `COMMIT`) like [`Pool::with`], but once more only if its
    /// connection was found gone before the `COMMIT` was sent.
    pub(crate) fn run<T>(
        &self,
        mut f: impl FnMut(&mut Client, &Prepared, &mut Progress) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut slot = self.slot()?;
        let mut progress = Progress::default();
        let (result, lost) = self.attempt(&mut slot, &mut f, &mut progress);
        if result.is_ok() || !lost || !progress.may_retry() {
            return result;
        }
        // INVARIANT: the failed attempt emptied the slot, so this one runs
        // on a fresh connection of the current generation.
        let mut progress = Progress::default();
        self.attempt(&mut slot, &mut f, &mut progress).0
    }

    /// One try of `f` on the slot's connection (a live one of the current
    /// generation, connected if needed); says whether the connection was
    /// lost. A lost connection is dropped, and so is one that failed with
    /// `store_unavailable`.
    fn attempt<T>(
        &self,
        slot: &mut Option<Conn>,
        f: &mut impl FnMut(&mut Client, &Prepared, &mut Progress) -> Result<T, Error>,
        progress: &mut Progress,
    ) -> (Result<T, Error>, bool) {
        if let Some(mut c) = slot.take() {
            if c.generation >= self.generation.load(Ordering::Acquire) {
                if alive(&mut c.client) {
                    *slot = Some(c);
                } else {
                    self.found_dead(c);
                }
            } else {
                drop_elsewhere(vec![c.client]);
            }
        }
        let conn = match slot {
            Some(c) => c,
            None => {
                // Read the generation before connecting: a connection found
                // dead meanwhile may be older than this one, never newer.
                let generation = self.generation.load(Ordering::Acquire);
                match self.connect() {
                    Ok(client) => slot.insert(Conn {
                        client,
                        prepared: None,
                        generation,
                    }),
                    Err(e) => return (Err(e), false),
                }
            }
        };
        let result = match &conn.prepared {
            Some(p) => f(&mut conn.client, p, progress),
            None => match Prepared::new(&mut conn.client) {
                Ok(p) => f(&mut conn.client, conn.prepared.insert(p), progress),
                Err(e) => Err(e),
            },
        };
        let lost = conn.client.is_closed() || result.as_ref().is_err_and(connection_lost);
        let failed = result
            .as_ref()
            .is_err_and(|e| e.code() == ErrorCode::Unavailable);
        if lost {
            if let Some(c) = slot.take() {
                self.found_dead(c);
            }
        } else if failed {
            if let Some(c) = slot.take() {
                drop_elsewhere(vec![c.client]);
            }
        }
        (result, lost)
    }

    /// Whether the transaction `xid`, whose connection was lost while its
    /// `COMMIT` was under way, committed: asked on a new connection, once
    /// the ended backend has finished with it (`txid_status`). `None` when
    /// that cannot be learnt within a few seconds.
    pub(crate) fn outcome(&self, xid: i64) -> Option<bool> {
        let mut client = self.connect().ok()?;
        let mut waited = Duration::ZERO;
        let outcome = loop {
            let status: Option<String> = client
                .query_one("SELECT txid_status($1)", &[&xid])
                .and_then(|r| r.try_get(0))
                .ok()?;
            match status.as_deref() {
                Some("committed") => break Some(true),
                Some("aborted") => break Some(false),
                Some("in progress") if waited < OUTCOME_WAIT => {
                    std::thread::sleep(OUTCOME_POLL);
                    waited += OUTCOME_POLL;
                }
                _ => break None,
            }
        };
        drop_elsewhere(vec![client]);
        outcome
    }

    /// Drops a dead connection and retires its generation.
    fn found_dead(&self, c: Conn) {
        self.generation
            .fetch_max(c.generation.saturating_add(1), Ordering::AcqRel);
        drop_elsewhere(vec![c.client]);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let clients: Vec<Client> = self
            .slots
            .iter_mut()
            .filter_map(|m| m.get_mut().unwrap_or_else(PoisonError::into_inner).take())
            .map(|c| c.client)
            .collect();
        drop_elsewhere(clients);
    }
}

/// Whether an idle connection is still usable: reads, without waiting,
/// what the server sent it meanwhile (an ended backend sends an error and
/// closes; a closed socket reads as its end).
fn alive(client: &mut Client) -> bool {
    if client.is_closed() {
        return false;
    }
    let mut pending = client.notifications();
    let mut iter = pending.iter();
    // Pooled connections listen to nothing: a notification is dropped.
    loop {
        match iter.next() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => return false,
        }
    }
    drop(iter);
    drop(pending);
    !client.is_closed()
}

/// Whether `e` says the connection is gone (rather than that the statement
/// failed): the socket closed or failed, the server ended the backend or is
/// shutting down, or a connection exception.
pub(crate) fn connection_lost(e: &Error) -> bool {
    use std::error::Error as _;
    if e.code() != ErrorCode::Unavailable {
        return false;
    }
    let Some(pg) = e.source().and_then(|s| s.downcast_ref::<postgres::Error>()) else {
        return false;
    };
    if pg.is_closed() {
        return true;
    }
    if let Some(db) = pg.as_db_error() {
        let code = db.code().code();
        // admin_shutdown, crash_shutdown, cannot_connect_now, and class 08
        // (connection exception).
        return matches!(code, "57P01" | "57P02" | "57P03") || code.starts_with("08");
    }
    pg.source()
        .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
}

/// Closing a connection runs its own small runtime, which must not happen
/// on a thread inside an async runtime (the service drops its store there):
/// close them on a thread of their own.
fn drop_elsewhere(clients: Vec<Client>) {
    if clients.is_empty() {
        return;
    }
    let _closed = std::thread::Builder::new()
        .name("toolgate-pg-close".into())
        .spawn(move || drop(clients))
        .map(std::thread::JoinHandle::join);
}
