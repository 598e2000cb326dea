//! The one outbound client, from the side of a receiver that misbehaves:
//! one that answers too much (announced or streamed), one that redirects
//! to another receiver, one that never answers, one that answers slowly
//! byte by byte. Each is held to the same bounds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use toolgate_edge::outbound::{get, Outbound, OutboundError};

/// A receiver that reads one request head per connection and answers with
/// `answer(stream)`; returns its URL and how many connections it took.
async fn receiver<F, Fut>(answer: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/keys", listener.local_addr().unwrap());
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let answer = Arc::clone(&answer);
            tokio::spawn(async move {
                read_head(&mut stream).await;
                answer(stream).await;
            });
        }
    });
    (url, hits)
}

async fn read_head(stream: &mut TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
}

fn client() -> Outbound {
    Outbound::new()
        .with_max_body(1024)
        .with_deadline(Duration::from_secs(5))
}

fn request(url: &str) -> hyper::Request<Full<Bytes>> {
    get(url, "application/json").unwrap()
}

#[tokio::test]
async fn an_answer_at_the_bound_is_read_and_one_byte_more_is_refused() {
    for (len, fits) in [(1024usize, true), (1025, false)] {
        let (url, _) = receiver(move |mut s| async move {
            let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {len}\r\n\r\n");
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(&vec![b'x'; len]).await;
        })
        .await;
        let got = client().send(request(&url)).await;
        if fits {
            assert_eq!(got.unwrap().body().len(), 1024);
        } else {
            assert_eq!(got.unwrap_err(), OutboundError::TooLarge(1024));
        }
    }
}

#[tokio::test]
async fn an_endless_streamed_answer_is_cut_at_the_bound() {
    let (url, _) = receiver(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        // Chunks of 256 bytes until the client hangs up.
        let chunk = format!("100\r\n{}\r\n", "y".repeat(256));
        while s.write_all(chunk.as_bytes()).await.is_ok() {}
    })
    .await;
    let got = client().send(request(&url)).await;
    assert_eq!(got.unwrap_err(), OutboundError::TooLarge(1024));
}

#[tokio::test]
async fn a_redirect_is_refused_and_its_target_never_asked() {
    let (target, target_hits) = receiver(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .await;
    })
    .await;
    for status in [301u16, 302, 303, 307, 308] {
        let to = target.clone();
        let (url, _) = receiver(move |mut s| {
            let to = to.clone();
            async move {
                let head = format!(
                    "HTTP/1.1 {status} Moved\r\nlocation: {to}\r\ncontent-length: 0\r\n\r\n"
                );
                let _ = s.write_all(head.as_bytes()).await;
            }
        })
        .await;
        let got = client().send(request(&url)).await;
        assert_eq!(got.unwrap_err(), OutboundError::Redirect(status));
        let got = client().status(request(&url)).await;
        assert_eq!(got.unwrap_err(), OutboundError::Redirect(status));
    }
    assert_eq!(
        target_hits.load(Ordering::SeqCst),
        0,
        "a redirect was followed"
    );
}

/// A receiver that takes the request and never answers: the deadline ends
/// it (on tokio's paused clock, which advances once everything waits).
#[tokio::test(start_paused = true)]
async fn a_receiver_that_never_answers_meets_the_deadline() {
    let (url, _) = receiver(|s| async move {
        std::future::pending::<()>().await;
        drop(s);
    })
    .await;
    let deadline = Duration::from_millis(700);
    let started = tokio::time::Instant::now();
    let got = client().with_deadline(deadline).send(request(&url)).await;
    assert_eq!(got.unwrap_err(), OutboundError::Deadline(deadline));
    assert!(started.elapsed() >= deadline);
    assert_eq!(
        OutboundError::Deadline(deadline).to_string(),
        "no answer within 700 ms"
    );
}

/// Headers in time, then the body one byte a second: the deadline covers
/// the body too, not only the headers.
#[tokio::test(start_paused = true)]
async fn a_body_that_trickles_meets_the_same_deadline() {
    let (url, _) = receiver(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n")
            .await;
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if s.write_all(b"z").await.is_err() {
                return;
            }
        }
    })
    .await;
    let deadline = Duration::from_secs(3);
    let got = client().with_deadline(deadline).send(request(&url)).await;
    assert_eq!(got.unwrap_err(), OutboundError::Deadline(deadline));
}

#[tokio::test]
async fn no_receiver_is_a_connection_error_that_does_not_name_the_url() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/secret-path", listener.local_addr().unwrap());
    drop(listener);
    let err = client().status(request(&url)).await.unwrap_err();
    assert_eq!(err, OutboundError::Connect);
    assert!(err.is_transient());
    assert!(!err.to_string().contains("secret-path"));
}
