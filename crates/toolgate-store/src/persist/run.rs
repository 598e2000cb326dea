//! The one async entry point: decide, record, then answer, without
//! blocking an async runtime's thread on the store's writes.

use std::fmt;
use std::sync::Arc;

use toolgate::{Context, Decisions, Envelope, Format};

use super::{Input, Prepared, StoreGate};
use crate::AuditEntry;

/// A decision that did not finish: the blocking task that was deciding or
/// recording it panicked or was cancelled. Nothing was returned to the
/// caller as a verdict; treat it as a deny (`store_unavailable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unfinished;

impl fmt::Display for Unfinished {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the decision did not finish")
    }
}

impl std::error::Error for Unfinished {}

impl StoreGate {
    /// [`StoreGate::decide_and_record`] for a caller on a tokio runtime:
    /// every decision is audited before it is returned, and the pipeline
    /// runs once per response.
    ///
    /// With a store whose reads are quick ([`crate::Store::quick_reads`]),
    /// the gate decides on this thread reading the store only. A response
    /// whose calls are all allowed has one record, committed by the store's
    /// group commit while this future waits without blocking the thread. A
    /// deny, a hold no approval covers ([`crate::Store::may_cover`]) or a
    /// refused body is decided here too and only written (counters, pending
    /// approvals, records) on a blocking thread: it is not decided again.
    /// Only when the gate wanted a write while deciding (using an approval,
    /// claiming a call id) is the response decided on the blocking thread
    /// instead, with a view that writes.
    pub async fn decide_async(
        self: &Arc<Self>,
        body: Vec<u8>,
        format: Format,
        context: Context,
    ) -> Result<Decisions, Unfinished> {
        self.run(Owned::Body(body, format), context).await
    }

    /// [`StoreGate::decide_async`] for an envelope an adapter read already
    /// (a caller that parsed the body once for its own use too,
    /// [`toolgate::adapter::ParsedBody`]): the same decisions, recorded the
    /// same way, without the body read again. The envelope is copied only
    /// when the decision moves to a blocking thread.
    pub async fn decide_envelope_async(
        self: &Arc<Self>,
        envelope: &Envelope,
        context: Context,
    ) -> Result<Decisions, Unfinished> {
        self.run(Owned::Borrowed(envelope), context).await
    }

    async fn run(
        self: &Arc<Self>,
        response: Owned<'_>,
        context: Context,
    ) -> Result<Decisions, Unfinished> {
        if !self.store.quick_reads() {
            return self.blocking_decide(response, context).await;
        }
        match self.prepare(response.input(), &context) {
            Prepared::Ready(mut unrecorded) => {
                let committed = match <[AuditEntry; 1]>::try_from(unrecorded.take_entries()) {
                    Ok([entry]) => {
                        let (tx, rx) = tokio::sync::oneshot::channel();
                        self.store.append_deferred(
                            entry,
                            Box::new(move |result| {
                                // The caller may have gone; the record is
                                // committed all the same.
                                let _ignored = tx.send(result.is_ok());
                            }),
                        );
                        // A dropped callback: the record was not committed.
                        rx.await.unwrap_or(false)
                    }
                    // INVARIANT: `prepare` readies exactly one record; any
                    // other count is not committed and so denies.
                    Err(_) => false,
                };
                Ok(self.finish(unrecorded, committed))
            }
            Prepared::Decided(decided) => {
                let gate = Arc::clone(self);
                tokio::task::spawn_blocking(move || gate.record_decided(decided, &context))
                    .await
                    .map_err(|_| Unfinished)
            }
            Prepared::Again => self.blocking_decide(response, context).await,
        }
    }

    async fn blocking_decide(
        self: &Arc<Self>,
        response: Owned<'_>,
        context: Context,
    ) -> Result<Decisions, Unfinished> {
        let gate = Arc::clone(self);
        let response = response.into_owned();
        tokio::task::spawn_blocking(move || match response {
            Owned::Body(body, format) => gate.decide_and_record(&body, format, &context),
            Owned::Envelope(envelope) => gate.decide_envelope_and_record(&envelope, &context),
            Owned::Borrowed(envelope) => gate.decide_envelope_and_record(envelope, &context),
        })
        .await
        .map_err(|_| Unfinished)
    }
}

/// What [`StoreGate::run`] decides, owned where a blocking thread needs it.
enum Owned<'a> {
    Body(Vec<u8>, Format),
    Envelope(Envelope),
    Borrowed(&'a Envelope),
}

impl Owned<'_> {
    fn input(&self) -> Input<'_> {
        match self {
            Self::Body(body, format) => Input::Body(body, *format),
            Self::Envelope(envelope) => Input::Envelope(envelope),
            Self::Borrowed(envelope) => Input::Envelope(envelope),
        }
    }

    /// The same, owning what it decides.
    fn into_owned(self) -> Owned<'static> {
        match self {
            Self::Body(body, format) => Owned::Body(body, format),
            Self::Envelope(envelope) => Owned::Envelope(envelope),
            Self::Borrowed(envelope) => Owned::Envelope(envelope.clone()),
        }
    }
}
