//! Running the service: [`serve`] on a listener with graceful shutdown, and
//! [`shutdown_signal`], the usual way to end it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::routes::app;
use crate::state::AppState;

/// The connections that have not yet made an authenticated request, oldest
/// first, each with the way to close it.
#[derive(Default)]
struct AnonymousConnections {
    next: u64,
    open: std::collections::BTreeMap<u64, tokio::sync::oneshot::Sender<()>>,
}

/// A connection's mark in its requests: an authenticated request takes the
/// connection out of the anonymous budget (see [`serve`]).
#[derive(Clone)]
pub(crate) struct ConnectionMark {
    id: u64,
    anonymous: Arc<std::sync::Mutex<AnonymousConnections>>,
}

impl ConnectionMark {
    /// The connection made an authenticated request: it is no longer
    /// anonymous, and never closed to make room.
    pub(crate) fn authenticated(&self) {
        lock(&self.anonymous).open.remove(&self.id);
    }
}

fn lock(
    m: &std::sync::Mutex<AnonymousConnections>,
) -> std::sync::MutexGuard<'_, AnonymousConnections> {
    // Every change is one insert or remove: a poisoned map is consistent.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The share of `max_connections` that connections which have not made an
/// authenticated request may hold (three quarters, at least one): the rest
/// stays for callers that have.
fn anonymous_budget(max: usize) -> usize {
    (max / 4 * 3).max(1)
}

/// Serves `app(state)` on `listener` (HTTP/1.1) until `shutdown` resolves:
/// it then stops accepting, lets every request in flight finish (a
/// decision's audit records are committed before its answer is written),
/// closes idle connections, and returns once every connection is closed.
///
/// Each connection has the header read timeout of the state's `[server]`
/// table; at most `max_connections` are served at once (the others wait in
/// the listener's backlog). Connections that have not yet made an
/// authenticated request (idle ones, scanners, floods) may hold at most
/// three quarters of them: when one more arrives, the oldest of them is
/// closed (after the request it is serving, if any), so that idle
/// anonymous connections never keep a caller with a token waiting.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let header_timeout = state.inner.header_timeout;
    let max = state.inner.max_connections.max(1);
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let permits = Arc::new(tokio::sync::Semaphore::new(
        usize::try_from(all).unwrap_or(1),
    ));
    let router = app(state.clone());
    let anonymous = Arc::new(std::sync::Mutex::new(AnonymousConnections::default()));
    let budget = anonymous_budget(max);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    if let Some(c) = &state.inner.checkpoints {
        tokio::spawn(checkpoints(
            state.clone(),
            Arc::clone(&c.key),
            c.sink.clone(),
            c.every,
            stop_rx.clone(),
        ));
    }
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of file descriptors, a connection reset before it
                    // was accepted…: the listener itself is fine.
                    eprintln!("toolgate serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Anonymous until it makes an authenticated request; past the
        // budget, the oldest anonymous connection is closed.
        let (evict_tx, mut evict_rx) = tokio::sync::oneshot::channel::<()>();
        let mark = {
            let mut a = lock(&anonymous);
            let id = a.next;
            a.next = a.next.wrapping_add(1);
            a.open.insert(id, evict_tx);
            while a.open.len() > budget {
                match a.open.pop_first() {
                    Some((_, evict)) => {
                        let _ = evict.send(());
                    }
                    None => break,
                }
            }
            ConnectionMark {
                id,
                anonymous: Arc::clone(&anonymous),
            }
        };
        let marked = {
            let mark = mark.clone();
            tower::ServiceExt::map_request(
                router.clone(),
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(mark.clone());
                    req
                },
            )
        };
        let service = hyper_util::service::TowerToHyperService::new(marked);
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            let _permit = permit;
            // Whatever ends the connection, it leaves the anonymous ones.
            let _leave = Leave(mark);
            let _ = stream.set_nodelay(true);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = stop.wait_for(|stopping| *stopping) => {}
                Ok(()) = &mut evict_rx => {}
            }
            // The request in flight (if any) finishes, then the connection
            // closes.
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
    }
    drop(listener);
    // Long-poll waits answer now (`timed_out`, the approval still pending)
    // instead of holding the shutdown for up to a minute.
    state
        .inner
        .stopping
        .store(true, std::sync::atomic::Ordering::SeqCst);
    state.inner.decided.notify_waiters();
    stop_tx.send_replace(true);
    // Every connection holds a permit until it is closed.
    let _all = permits.acquire_many(all).await;
    Ok(())
}

/// Takes a connection out of the anonymous ones when it ends.
struct Leave(ConnectionMark);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.authenticated();
    }
}

/// Writes a signed checkpoint of the audit chain every `every` (the first
/// one at once) until the service stops; a checkpoint that cannot be
/// written is reported on standard error and tried again at the next tick.
async fn checkpoints(
    state: AppState,
    key: Arc<toolgate_store::CheckpointKey>,
    sink: std::path::PathBuf,
    every: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(every);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.wait_for(|stopping| *stopping) => return,
        }
        let (key, sink) = (Arc::clone(&key), sink.clone());
        let written = state
            .blocking(move |s| {
                toolgate_store::write_checkpoint(s, &key, &sink, crate::state::now())
            })
            .await;
        if let Err(e) = written {
            eprintln!("toolgate serve: cannot write a checkpoint: {}", e.code());
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
