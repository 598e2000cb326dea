//! The body deadline: a request body that must arrive whole within the
//! listener's body timeout of its headers.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::time::Sleep;

/// The error a request body yields once its deadline has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyDeadline {
    seconds: u64,
}

impl BodyDeadline {
    /// The deadline, in whole seconds.
    pub fn seconds(&self) -> u64 {
        self.seconds
    }
}

impl std::fmt::Display for BodyDeadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the body did not arrive within {} seconds", self.seconds)
    }
}

impl std::error::Error for BodyDeadline {}

/// Whether `e`, or any error it was caused by, is a [`BodyDeadline`]: the
/// body was read past its deadline (answer `408`).
pub fn is_body_deadline(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<BodyDeadline>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// A request body with a deadline set when its headers arrived.
pub(crate) struct Deadlined {
    inner: Incoming,
    late: Pin<Box<Sleep>>,
    seconds: u64,
    expired: bool,
}

impl Deadlined {
    pub(crate) fn new(inner: Incoming, timeout: std::time::Duration) -> Self {
        Self {
            inner,
            late: Box::pin(tokio::time::sleep(timeout)),
            seconds: timeout.as_secs(),
            expired: false,
        }
    }
}

impl Body for Deadlined {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.expired {
            return Poll::Ready(None);
        }
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|r| r.map_err(Into::into)));
        }
        if this.late.as_mut().poll(cx).is_ready() {
            this.expired = true;
            return Poll::Ready(Some(Err(Box::new(BodyDeadline {
                seconds: this.seconds,
            }))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.expired || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
