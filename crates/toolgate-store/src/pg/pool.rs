//! A small fixed pool of PostgreSQL connections that reconnect by
//! themselves.
//!
//! Each slot holds a connection or nothing. A slot is connected when it is
//! first used, and again after its connection was lost (the server
//! restarted, an administrator ended the backend, the network dropped): a
//! call that fails because the database is away fails with
//! `store_unavailable`, and the next call after the database returns
//! connects afresh, without a restart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, ErrorCode};

use super::statements::Prepared;

/// A pooled connection and its prepared statements (prepared on first use).
pub(crate) struct Conn {
    client: Client,
    prepared: Option<Prepared>,
}

pub(crate) struct Pool {
    config: Config,
    /// The TLS client `sslmode` and `sslrootcert` asked for (see `tls`).
    tls: MakeRustlsConnect,
    /// Run on every new connection (session settings).
    setup: String,
    slots: Vec<Mutex<Option<Conn>>>,
    next: AtomicUsize,
}

impl Pool {
    pub(crate) fn new(config: Config, tls: MakeRustlsConnect, setup: String, size: usize) -> Self {
        Self {
            config,
            tls,
            setup,
            slots: (0..size.max(1)).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
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

    /// Runs `f` on a pooled connection and its prepared statements,
    /// connecting and preparing first if needed. A connection that failed
    /// with `store_unavailable` (or is closed) is dropped, so the next call
    /// connects afresh.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut Client, &Prepared) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut slot = self.slot()?;
        if slot.as_ref().is_some_and(|c| c.client.is_closed()) {
            if let Some(c) = slot.take() {
                drop_elsewhere(vec![c.client]);
            }
        }
        let conn = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(Conn {
                client: self.connect()?,
                prepared: None,
            }),
        };
        let result = match &conn.prepared {
            Some(p) => f(&mut conn.client, p),
            None => match Prepared::new(&mut conn.client) {
                Ok(p) => f(&mut conn.client, conn.prepared.insert(p)),
                Err(e) => Err(e),
            },
        };
        let lost = conn.client.is_closed()
            || result
                .as_ref()
                .is_err_and(|e| e.code() == ErrorCode::Unavailable);
        if lost {
            if let Some(c) = slot.take() {
                drop_elsewhere(vec![c.client]);
            }
        }
        result
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
