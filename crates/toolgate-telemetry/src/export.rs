//! The way out: the OTLP exporters' HTTP client is the edge's one outbound
//! client ([`toolgate_edge::Outbound`]: hyper and rustls with the Web PKI
//! roots, a deadline, a bounded answer, no redirects), and the bounded
//! queue between a finished span and its export.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use opentelemetry::Context;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use tokio::sync::{mpsc, Notify};
use toolgate_edge::Outbound;

/// The largest answer read from a receiver.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Spans sent in one export at most.
const MAX_BATCH: usize = 512;

/// What happened to the spans: counters read by the metrics pages.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub(crate) dropped: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) exported: AtomicU64,
}

/// An OTLP/HTTP client whose requests run on the runtime it was made on,
/// whoever polls them (the SDK's metric reader polls from a thread of its
/// own), each within `timeout`.
pub(crate) struct OtlpHttp {
    handle: tokio::runtime::Handle,
    client: Outbound,
}

impl OtlpHttp {
    /// A client on `handle`'s runtime.
    pub(crate) fn new(handle: tokio::runtime::Handle, timeout: Duration) -> Self {
        Self {
            handle,
            client: Outbound::new()
                .with_deadline(timeout)
                .with_max_body(MAX_ANSWER_BYTES),
        }
    }
}

impl fmt::Debug for OtlpHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpHttp")
            .field("timeout", &self.client.deadline())
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl HttpClient for OtlpHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let task = self.handle.spawn(async move {
            let (parts, body) = request.into_parts();
            let request = hyper::Request::from_parts(parts, Full::new(body));
            client
                .send(request)
                .await
                .map_err(|e| Box::new(e) as HttpError)
        });
        task.await?
    }
}

/// The span processor: a finished, sampled span goes on a bounded queue
/// without waiting; a full queue drops it and counts the drop.
#[derive(Debug)]
pub(crate) struct Bounded {
    queue: mpsc::Sender<SpanData>,
    closed: Arc<Notify>,
    counts: Arc<Counts>,
}

impl Bounded {
    /// A processor with room for `size` spans, whose exports `exporter`
    /// makes on a task of `handle`'s runtime.
    pub(crate) fn start<E: SpanExporter + 'static>(
        handle: &tokio::runtime::Handle,
        size: usize,
        exporter: E,
        counts: Arc<Counts>,
    ) -> (Self, tokio::task::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel(size.max(1));
        let closed = Arc::new(Notify::new());
        let task = handle.spawn(pump(rx, exporter, Arc::clone(&closed), Arc::clone(&counts)));
        (
            Self {
                queue: tx,
                closed,
                counts,
            },
            task,
        )
    }
}

impl SpanProcessor for Bounded {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        if self.queue.try_send(span).is_err() {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.closed.notify_one();
        Ok(())
    }
}

/// Exports what the queue holds, in batches of what has arrived (at most
/// [`MAX_BATCH`]), until the queue closes or the processor shuts down
/// (then what is left is exported once more).
async fn pump<E: SpanExporter>(
    mut rx: mpsc::Receiver<SpanData>,
    exporter: E,
    closed: Arc<Notify>,
    counts: Arc<Counts>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        let n = tokio::select! {
            n = rx.recv_many(&mut batch, MAX_BATCH) => n,
            () = closed.notified() => {
                rx.close();
                while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
                    export(&exporter, &mut batch, &counts).await;
                }
                break;
            }
        };
        if n == 0 {
            break;
        }
        export(&exporter, &mut batch, &counts).await;
    }
    let _ = exporter.shutdown();
}

async fn export<E: SpanExporter>(exporter: &E, batch: &mut Vec<SpanData>, counts: &Counts) {
    let n = u64::try_from(batch.len()).unwrap_or(u64::MAX);
    match exporter.export(std::mem::take(batch)).await {
        Ok(()) => counts.exported.fetch_add(n, Ordering::Relaxed),
        Err(_) => counts.failed.fetch_add(n, Ordering::Relaxed),
    };
}
