//! [`RequestSpan`]: the span of one request or frame, the decisions made
//! for it as its children, and the trace context passed upstream.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::HeaderMap;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_http::HeaderInjector;
use toolgate::{Decision, Decisions, Verdict};

use crate::telemetry::{Inner, Stage};

/// The longest text (a tool name, a call id) put on a span, in bytes; a
/// longer one is cut at a character boundary.
pub(crate) const MAX_ATTRIBUTE_BYTES: usize = 256;
/// The longest arguments put on a span (`record_arguments`), in bytes.
const MAX_ARGUMENT_BYTES: usize = 8192;

/// The span of one request (or MCP frame): a child of the caller's span
/// when the caller sent a valid trace context. Clones share it; it ends
/// when the last clone is dropped (a streamed answer's task holds one).
#[derive(Clone)]
pub struct RequestSpan {
    on: Option<Arc<Live>>,
}

struct Live {
    inner: Arc<Inner>,
    cx: Context,
    started: std::time::Instant,
}

impl std::fmt::Debug for RequestSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestSpan")
            .field("traceparent", &self.traceparent())
            .finish()
    }
}

impl RequestSpan {
    pub(crate) fn off() -> Self {
        Self { on: None }
    }

    fn live(&self) -> Option<(&Arc<Inner>, &Context)> {
        self.on.as_ref().map(|l| (&l.inner, &l.cx))
    }

    pub(crate) fn start(inner: Arc<Inner>, name: &'static str, parent: &Context) -> Self {
        let span = inner
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .start_with_context(&inner.tracer, parent);
        let cx = parent.with_span(span);
        Self {
            on: Some(Arc::new(Live {
                inner,
                cx,
                started: std::time::Instant::now(),
            })),
        }
    }

    /// The `traceparent` that makes an upstream's span a child of this one
    /// (`None` when telemetry is off).
    pub fn traceparent(&self) -> Option<String> {
        let (inner, cx) = self.live()?;
        let mut headers = HeaderMap::new();
        inner
            .propagator
            .inject_context(cx, &mut HeaderInjector(&mut headers));
        headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Sets `traceparent` (and `tracestate`, when the caller sent one) in
    /// `headers` to this span's, replacing the caller's: the upstream's span
    /// becomes a child of this one. Nothing changes when telemetry is off.
    pub fn inject(&self, headers: &mut HeaderMap) {
        if let Some((inner, cx)) = self.live() {
            headers.remove("traceparent");
            headers.remove("tracestate");
            inner
                .propagator
                .inject_context(cx, &mut HeaderInjector(headers));
        }
    }

    /// The trace id and this span's id, as hex (for log lines).
    pub fn ids(&self) -> Option<(String, String)> {
        let (_, cx) = self.live()?;
        let sc = cx.span().span_context().clone();
        sc.is_valid()
            .then(|| (sc.trace_id().to_string(), sc.span_id().to_string()))
    }

    /// Sets a bounded attribute on the request's span: a route, an API, an
    /// HTTP status (never a value taken from the caller's body).
    pub fn attribute(&self, key: &'static str, value: impl Into<opentelemetry::Value>) {
        if let Some((_, cx)) = self.live() {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// Marks the request as failed with toolgate's error `code`.
    pub fn error(&self, code: &'static str) {
        if let Some((_, cx)) = self.live() {
            cx.span()
                .set_attribute(KeyValue::new("toolgate.code", code));
            cx.span().set_status(Status::error(code));
        }
    }

    /// Records `decisions`, made from `started` until now (`took`), as
    /// children of this span, in the metrics and in the decision log
    /// (`surface`: `api`, `proxy`, `mcp`).
    pub fn decisions(&self, surface: &'static str, decisions: &Decisions, started: SystemTime) {
        let Some((inner, _)) = self.live() else {
            return;
        };
        let took = started.elapsed().unwrap_or(Duration::ZERO);
        if let Some(m) = &inner.metrics {
            m.stage(Stage::Decide, took);
        }
        if let Some(r) = decisions.rejected() {
            self.attribute("toolgate.verdict", Verdict::Deny.as_str());
            self.attribute("toolgate.code", r.code.as_str());
            if let Some(m) = &inner.metrics {
                m.decision(Verdict::Deny.as_str(), "");
            }
        }
        for d in decisions.decisions() {
            self.decision(surface, d, started);
        }
    }

    /// Records one decision as a child span (see [`RequestSpan::decisions`]).
    pub fn decision(&self, surface: &'static str, d: &Decision, started: SystemTime) {
        let Some((inner, cx)) = self.live() else {
            return;
        };
        let tool = bounded(d.tool(), MAX_ATTRIBUTE_BYTES);
        let code = d.reasons().first().map(|r| r.code.as_str());
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", tool.to_owned()),
            KeyValue::new("gen_ai.tool.type", "function"),
            KeyValue::new("toolgate.verdict", d.verdict().as_str()),
            KeyValue::new("toolgate.surface", surface),
            KeyValue::new(
                "toolgate.call.index",
                i64::try_from(d.index()).unwrap_or(i64::MAX),
            ),
        ];
        if let Some(id) = d.call_id() {
            attributes.push(KeyValue::new(
                "gen_ai.tool.call.id",
                bounded(id, MAX_ATTRIBUTE_BYTES).to_owned(),
            ));
        }
        if let Some(code) = code {
            attributes.push(KeyValue::new("toolgate.code", code));
        }
        if let Some(a) = d.approval() {
            attributes.push(KeyValue::new(
                "toolgate.approval",
                bounded(a.as_str(), MAX_ATTRIBUTE_BYTES).to_owned(),
            ));
        }
        let arguments = arguments_of(inner, d);
        if let Some(args) = &arguments {
            attributes.push(KeyValue::new("gen_ai.tool.call.arguments", args.clone()));
        }
        let mut span = inner
            .tracer
            .span_builder(format!("execute_tool {tool}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(started)
            .with_attributes(attributes)
            .start_with_context(&inner.tracer, cx);
        if d.verdict() == Verdict::Deny {
            span.set_status(Status::error(code.unwrap_or("denied")));
        }
        let sc = span.span_context().clone();
        span.end();
        if let Some(m) = &inner.metrics {
            let configured = inner.registry.contains(d.tool());
            m.decision(
                d.verdict().as_str(),
                if configured {
                    d.tool()
                } else {
                    crate::metrics::OTHER_TOOL
                },
            );
        }
        inner.log.decision(
            sc.is_valid()
                .then(|| (sc.trace_id().to_string(), sc.span_id().to_string())),
            surface,
            d,
            arguments.as_deref(),
        );
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(m) = &self.inner.metrics {
            m.stage(Stage::Request, self.started.elapsed());
        }
        self.cx.span().end();
    }
}

/// The call's arguments for its span, when `record_arguments` names its
/// tool: redacted as the audit log redacts, and bounded.
fn arguments_of(inner: &Inner, d: &Decision) -> Option<String> {
    if !inner.config.records_arguments(d.tool()) {
        return None;
    }
    let tool = inner.registry.get(d.tool())?;
    let text = toolgate_store::redacted_arguments(tool, d.canonical_args()?)?;
    (text.len() <= MAX_ARGUMENT_BYTES).then_some(text)
}

/// `s` cut to at most `max` bytes at a character boundary.
pub(crate) fn bounded(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}
