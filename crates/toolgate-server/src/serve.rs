//! Running the service: [`serve`] on a listener with graceful shutdown, and
//! [`shutdown_signal`], the usual way to end it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::routes::app;
use crate::state::AppState;

/// Serves `app(state)` on `listener` (HTTP/1.1) until `shutdown` resolves:
/// it then stops accepting, lets every request in flight finish (a
/// decision's audit records are committed before its answer is written),
/// closes idle connections, and returns once every connection is closed.
///
/// The listener is the edge's ([`toolgate_edge::serve`]) with the state's
/// `[server]` limits: the header and body deadlines and `max_connections`
/// (the others wait in the listener's backlog). Connections that have not
/// yet made an authenticated request (idle ones, scanners, floods) may hold
/// at most three quarters of them: when one more arrives, the oldest of
/// them is closed (after the request it is serving, if any), so that idle
/// anonymous connections never keep a caller with a token waiting.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.inner.limits.clone();
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
    if state.inner.notify.is_some() {
        tokio::spawn(crate::notify::run(state.clone(), stop_rx));
    }
    let router = app(state.clone());
    toolgate_edge::serve(listener, router, limits, shutdown, || async move {
        // Long-poll waits answer now (`timed_out`, the approval still
        // pending) instead of holding the shutdown for up to a minute.
        state
            .inner
            .stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        state.inner.decided.notify_waiters();
        stop_tx.send_replace(true);
    })
    .await
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
        let (key, sink, now) = (Arc::clone(&key), sink.clone(), state.now());
        let written = state
            .blocking(move |s| toolgate_store::write_checkpoint(s, &key, &sink, now))
            .await;
        if let Err(e) = written {
            toolgate_edge::log::line(
                toolgate_edge::log::Level::Error,
                "serve",
                "checkpoint_failed",
                &format!("cannot write a checkpoint: {}", e.code()),
            );
        }
        state.inner.checkpoint_tries.send_modify(|n| *n += 1);
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
