#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! The listener from the attacker's side: raw TCP clients against
//! [`toolgate_edge::serve`] with a small router, one threat per test.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Extensions, StatusCode};
use axum::routing::{get, post};
use axum::Router;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{oneshot, Notify};
use toolgate_edge::Limits;

/// What a handler in flight waits on, and says it has reached.
#[derive(Clone, Default)]
struct Gate {
    reached: Arc<Notify>,
    release: Arc<Notify>,
}

fn router(gate: Gate) -> Router {
    Router::new()
        .route("/hello", get(|| async { "hello" }))
        .route(
            "/auth",
            get(|extensions: Extensions| async move {
                toolgate_edge::authenticated(&extensions);
                "in"
            }),
        )
        .route(
            "/echo",
            post(|body: Body| async move {
                match axum::body::to_bytes(body, 1 << 20).await {
                    Ok(b) => (StatusCode::OK, b.len().to_string()),
                    Err(e) if toolgate_edge::is_body_deadline(&e) => {
                        (StatusCode::REQUEST_TIMEOUT, e.to_string())
                    }
                    Err(_) => (StatusCode::BAD_REQUEST, String::new()),
                }
            }),
        )
        .route(
            "/slow",
            get(move || async move {
                let released = gate.release.notified();
                gate.reached.notify_one();
                released.await;
                "done"
            }),
        )
}

/// A listener serving [`router`] within `limits`; its address, the way to
/// stop it, whether its own stop ran, and its end.
struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    stopped: Arc<AtomicBool>,
    done: tokio::task::JoinHandle<std::io::Result<()>>,
    gate: Gate,
}

async fn start(limits: Limits) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    let stopped = Arc::new(AtomicBool::new(false));
    let gate = Gate::default();
    let flag = Arc::clone(&stopped);
    let done = tokio::spawn(toolgate_edge::serve(
        listener,
        router(gate.clone()),
        limits,
        async move {
            let _ = rx.await;
        },
        move || async move { flag.store(true, Ordering::SeqCst) },
    ));
    Running {
        addr,
        stop: Some(tx),
        stopped,
        done,
        gate,
    }
}

async fn connect_from(from: [u8; 4], to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    socket.connect(to).await.unwrap()
}

/// Sends `request` and reads one response's status (a `Content-Length`
/// body), or `None` if the connection closed first.
async fn exchange(s: &mut TcpStream, request: &str) -> Option<u16> {
    s.write_all(request.as_bytes()).await.ok()?;
    read_status(s).await
}

async fn read_status(s: &mut TcpStream) -> Option<u16> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(30), s.read(&mut byte)).await {
            Ok(Ok(1)) => raw.push(byte[0]),
            Ok(_) => return None,
            Err(_) => panic!("no answer in 30 s"),
        }
    }
    let head = String::from_utf8_lossy(&raw).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).await.ok()?;
    head.split(' ').nth(1).and_then(|c| c.parse().ok())
}

/// Whether the listener closed `s` (no answer, end of stream).
async fn is_closed(s: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    match tokio::time::timeout(Duration::from_secs(30), s.read_to_end(&mut rest)).await {
        Ok(Ok(_)) => !rest.starts_with(b"HTTP/1.1 200"),
        Ok(Err(_)) => true,
        Err(_) => false,
    }
}

const HELLO: &str = "GET /hello HTTP/1.1\r\nHost: edge\r\n\r\n";
const AUTH: &str = "GET /auth HTTP/1.1\r\nHost: edge\r\n\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_that_never_ends_is_cut_off_at_the_header_deadline() {
    let r = start(Limits::new().header_timeout(Duration::from_millis(300))).await;
    let mut s = TcpStream::connect(r.addr).await.unwrap();
    s.write_all(b"GET /hello HTTP/1.1\r\nHost: edge\r\nX-Slow:")
        .await
        .unwrap();
    assert!(is_closed(&mut s).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_does_not_arrive_in_time_fails_as_a_deadline() {
    let r = start(Limits::new().body_timeout(Duration::from_millis(300))).await;
    let mut s = TcpStream::connect(r.addr).await.unwrap();
    let status = exchange(
        &mut s,
        "POST /echo HTTP/1.1\r\nHost: edge\r\nContent-Length: 10\r\n\r\n{",
    )
    .await;
    assert_eq!(status, Some(408));
    // A whole body within the deadline is read.
    let mut s = TcpStream::connect(r.addr).await.unwrap();
    let status = exchange(
        &mut s,
        "POST /echo HTTP/1.1\r\nHost: edge\r\nContent-Length: 2\r\n\r\n{}",
    )
    .await;
    assert_eq!(status, Some(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_past_its_budget_is_closed_at_once_and_others_are_served() {
    let r = start(Limits::new().per_address(2)).await;
    let mut first = connect_from([127, 0, 0, 1], r.addr).await;
    let _second = connect_from([127, 0, 0, 1], r.addr).await;
    let mut third = connect_from([127, 0, 0, 1], r.addr).await;
    assert!(is_closed(&mut third).await);
    // Another address is served.
    let mut other = connect_from([127, 0, 0, 2], r.addr).await;
    assert_eq!(exchange(&mut other, HELLO).await, Some(200));
    // A place of the address frees when one of its connections ends.
    assert_eq!(exchange(&mut first, HELLO).await, Some(200));
    drop(first);
    // The listener sees the close on its own time: retry until it has.
    let mut served = false;
    for _ in 0..100 {
        let mut again = connect_from([127, 0, 0, 1], r.addr).await;
        if exchange(&mut again, HELLO).await == Some(200) {
            served = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(served);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_address_closes_its_own_connections_not_a_quiet_ones() {
    // Eight places: anonymous connections may hold six.
    let r = start(Limits::new().max_connections(8)).await;
    let mut quiet = connect_from([127, 0, 0, 1], r.addr).await;
    let mut flood = Vec::new();
    for _ in 0..7 {
        flood.push(connect_from([127, 0, 0, 2], r.addr).await);
    }
    // The seventh anonymous connection closed the flooder's oldest, not
    // the quiet (older) one.
    assert!(is_closed(&mut flood[0]).await);
    assert_eq!(exchange(&mut quiet, HELLO).await, Some(200));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authenticated_connection_is_never_closed_for_room() {
    // Two places: anonymous connections may hold one.
    let r = start(Limits::new().max_connections(2)).await;
    let mut caller = TcpStream::connect(r.addr).await.unwrap();
    assert_eq!(exchange(&mut caller, AUTH).await, Some(200));
    let mut idle = TcpStream::connect(r.addr).await.unwrap();
    // The cap is reached; one more anonymous connection waits for a place
    // and, when it is accepted, closes the idle anonymous one.
    let mut next = TcpStream::connect(r.addr).await.unwrap();
    next.write_all(HELLO.as_bytes()).await.unwrap();
    assert_eq!(exchange(&mut caller, HELLO).await, Some(200));
    drop(caller);
    assert_eq!(read_status(&mut next).await, Some(200));
    assert!(is_closed(&mut idle).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_lets_the_request_in_flight_finish_then_returns() {
    let mut r = start(Limits::new()).await;
    let mut s = TcpStream::connect(r.addr).await.unwrap();
    let reached = r.gate.reached.notified();
    s.write_all(b"GET /slow HTTP/1.1\r\nHost: edge\r\n\r\n")
        .await
        .unwrap();
    reached.await;
    let mut idle = TcpStream::connect(r.addr).await.unwrap();
    assert_eq!(exchange(&mut idle, HELLO).await, Some(200));
    r.stop.take().unwrap().send(()).unwrap();
    // The idle keep-alive connection is closed; the request in flight is
    // not cut off.
    assert!(is_closed(&mut idle).await);
    assert!(r.stopped.load(Ordering::SeqCst));
    assert!(!r.done.is_finished());
    r.gate.release.notify_one();
    assert_eq!(read_status(&mut s).await, Some(200));
    r.done.await.unwrap().unwrap();
    // The listener is closed.
    assert!(TcpStream::connect(r.addr).await.is_err());
}
