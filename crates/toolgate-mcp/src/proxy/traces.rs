//! The trace context of `toolgate mcp --listen`'s HTTP requests: a POST's
//! `traceparent` and `tracestate` headers, kept for the `tools/call` it
//! brought until the proxy opens that call's span. The call's own
//! `params._meta.traceparent` wins over them when it is valid (it is the
//! message's own context, and travels with it past any HTTP hop); the
//! headers are for clients that trace only their HTTP requests.

use std::sync::{Arc, PoisonError};

use axum::http::header::HeaderName;
use axum::http::HeaderMap;

use super::Shared;
use crate::frame::RequestId;

/// The most calls whose headers are kept at once; past it one kept set
/// is forgotten for each new one (a call refused before its span opens
/// leaves its headers behind).
const MAX_KEPT: usize = 1024;

/// Puts a POST's trace headers where the span of the call it brought
/// finds them.
#[derive(Clone)]
pub(crate) struct HttpTraces(pub(super) Arc<Shared>);

impl HttpTraces {
    /// Keeps `headers`' trace context for the call with (the proxy's) id
    /// `id`; nothing when there is none or telemetry is off.
    pub(crate) fn put(&self, id: &RequestId, headers: &HeaderMap) {
        if !self.0.telemetry.get().is_some_and(|t| t.is_on()) {
            return;
        }
        let mut kept = HeaderMap::new();
        for name in [
            HeaderName::from_static("traceparent"),
            HeaderName::from_static("tracestate"),
        ] {
            if let Some(v) = headers.get(&name) {
                kept.insert(name, v.clone());
            }
        }
        if kept.is_empty() {
            return;
        }
        let mut traces = self
            .0
            .http_traces
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if traces.len() >= MAX_KEPT {
            if let Some(oldest) = traces.keys().next().cloned() {
                traces.remove(&oldest);
            }
        }
        traces.insert(id.clone(), kept);
    }
}

impl Shared {
    /// The trace headers kept for call `id` (taken: each is used once).
    pub(super) fn take_http_trace(&self, id: &RequestId) -> Option<HeaderMap> {
        self.http_traces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }
}
