//! [`serve`]: the accept loop every front end runs.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use tokio::sync::{watch, Semaphore};

use crate::admission::{self, Admit, Admitted};
use crate::body::Deadlined;
use crate::limits::Limits;

/// Serves `router` on `listener` (HTTP/1.1) within `limits` until
/// `shutdown` resolves. Then it stops accepting, awaits `stopping()` (the
/// front end's own stop: ending long polls, event streams, sessions), lets
/// every request in flight finish, closes idle connections, and returns
/// once every connection is closed (or once `limits`' drain timeout has
/// passed, if it has one).
///
/// Each request carries its connection's mark, which [`authenticated`]
/// reads, and a body with the limits' deadline.
///
/// [`authenticated`]: crate::authenticated
pub async fn serve<S, F>(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: S,
) -> std::io::Result<()>
where
    S: FnOnce() -> F,
    F: Future<Output = ()>,
{
    let max = limits.connections();
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let permits = Arc::new(Semaphore::new(usize::try_from(all).unwrap_or(1)));
    let book = admission::Shared::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, a connection reset before it
                    // was accepted…: the listener itself is fine, and the
                    // pause lets descriptors free up.
                    crate::log::line(
                        crate::log::Level::Warn,
                        "edge",
                        "accept_failed",
                        &format!("accept failed: {e}"),
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let admitted = match admission::admit(
            &book,
            peer.ip(),
            limits.address_budget(),
            limits.anonymous_budget(),
        ) {
            Admit::Yes(a) => a,
            Admit::OverAddressBudget => continue,
        };
        let stop = stop_rx.clone();
        let limits = limits.clone();
        let router = router.clone();
        tokio::spawn(async move {
            let _permit = permit;
            connection(stream, router, &limits, admitted, stop).await;
        });
    }
    drop(listener);
    stopping().await;
    stop_tx.send_replace(true);
    // Every connection holds a permit until it is closed.
    let drained = permits.acquire_many(all);
    match limits.drain_deadline() {
        Some(d) => {
            let _ = tokio::time::timeout(d, drained).await;
        }
        None => {
            let _ = drained.await;
        }
    }
    Ok(())
}

/// Serves one connection until it ends, the listener stops, or the
/// pre-authentication budget closes it.
async fn connection(
    stream: tokio::net::TcpStream,
    router: Router,
    limits: &Limits,
    admitted: Admitted,
    mut stop: watch::Receiver<bool>,
) {
    let Admitted {
        mark,
        mut evicted,
        leave,
    } = admitted;
    // Whatever ends the connection, it leaves the book.
    let _leave = leave;
    // Stream events go out as they are written (no Nagle delay).
    let _ = stream.set_nodelay(true);
    let body_timeout = limits.body_deadline();
    let marked = tower::ServiceExt::map_request(
        router,
        move |req: hyper::Request<hyper::body::Incoming>| {
            let (mut parts, body) = req.into_parts();
            parts.extensions.insert(mark.clone());
            hyper::Request::from_parts(parts, Body::new(Deadlined::new(body, body_timeout)))
        },
    );
    let service = hyper_util::service::TowerToHyperService::new(marked);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.header_deadline());
    let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = stop.wait_for(|stopping| *stopping) => {}
        Ok(()) = &mut evicted => {}
    }
    // The request in flight (if any) finishes, then the connection closes.
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}
