//! [`RequestSpan`]: the span of one request or frame, the decisions made
//! for it as its children, and the trace context passed upstream.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::header::HeaderName;
use http::{HeaderMap, HeaderValue};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanKind, Status, TraceContextExt as _, TraceFlags, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
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
        let (_, cx) = self.live()?;
        let tp = traceparent_of(cx.span().span_context())?;
        std::str::from_utf8(&tp).ok().map(str::to_owned)
    }

    /// Sets `traceparent` (and `tracestate`, when the caller sent one) in
    /// `headers` to this span's, replacing the caller's: the upstream's span
    /// becomes a child of this one. Nothing changes when telemetry is off.
    ///
    /// Written here rather than by the SDK's propagator (the same W3C
    /// text, without its formatting machinery): this runs for every
    /// request, sampled or not.
    pub fn inject(&self, headers: &mut HeaderMap) {
        let Some((_, cx)) = self.live() else {
            return;
        };
        headers.remove(TRACEPARENT);
        headers.remove(TRACESTATE);
        let span = cx.span();
        let sc = span.span_context();
        let Some(tp) = traceparent_of(sc) else {
            return;
        };
        if let Ok(v) = HeaderValue::from_bytes(&tp) {
            headers.insert(TRACEPARENT, v);
        }
        let state = sc.trace_state().header();
        if !state.is_empty() {
            if let Ok(v) = HeaderValue::from_str(&state) {
                headers.insert(TRACESTATE, v);
            }
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
            let span = cx.span();
            if span.is_recording() {
                span.set_attribute(KeyValue::new(key, value));
            }
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

    /// Marks the request as failed, as the OpenTelemetry conventions say
    /// for a server's span: status error, described and named in
    /// `error.type` by `error_type` (toolgate's code, or an HTTP status
    /// such as `"502"` for an upstream's answer passed on).
    pub fn failed(&self, error_type: &'static str) {
        if let Some((_, cx)) = self.live() {
            let span = cx.span();
            if span.is_recording() {
                span.set_attribute(KeyValue::new("error.type", error_type));
                span.set_status(Status::error(error_type));
            }
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
                m.rejected();
            }
        }
        for d in decisions.decisions() {
            self.decision(surface, d, started);
        }
    }

    /// Records one decision as a child span (see [`RequestSpan::decisions`]).
    ///
    /// Only a sampled request's decisions become spans: for the others
    /// (the sampler's verdict follows the request's, so their spans would
    /// be dropped unseen) no span, attribute or name is built; the metrics
    /// count them all, and the decision log names the request's span.
    pub fn decision(&self, surface: &'static str, d: &Decision, started: SystemTime) {
        let Some((inner, cx)) = self.live() else {
            return;
        };
        let sampled = cx.span().span_context().is_sampled();
        let logged = inner.log.on();
        let arguments = if sampled || logged {
            arguments_of(inner, d)
        } else {
            None
        };
        let ids = if sampled {
            let sc = child_span(inner, cx, surface, d, started, arguments.as_deref());
            sc.is_valid()
                .then(|| (sc.trace_id().to_string(), sc.span_id().to_string()))
        } else if logged {
            self.ids()
        } else {
            None
        };
        if let Some(m) = &inner.metrics {
            m.decision(d.verdict(), d.tool());
        }
        if logged {
            inner.log.decision(ids, surface, d, arguments.as_deref());
        }
    }
}

/// The span of decision `d`, a child of `cx`'s span, ended at once.
fn child_span(
    inner: &Inner,
    cx: &Context,
    surface: &'static str,
    d: &Decision,
    started: SystemTime,
    arguments: Option<&str>,
) -> SpanContext {
    let tool = bounded(d.tool(), MAX_ATTRIBUTE_BYTES);
    let code = d.reasons().first().map(|r| r.code.as_str());
    let mut attributes = Vec::with_capacity(10);
    attributes.extend([
        KeyValue::new("gen_ai.operation.name", "execute_tool"),
        KeyValue::new("gen_ai.tool.name", tool.to_owned()),
        KeyValue::new("gen_ai.tool.type", "function"),
        KeyValue::new("toolgate.verdict", d.verdict().as_str()),
        KeyValue::new("toolgate.surface", surface),
        KeyValue::new(
            "toolgate.call.index",
            i64::try_from(d.index()).unwrap_or(i64::MAX),
        ),
    ]);
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
    if let Some(args) = arguments {
        attributes.push(KeyValue::new("gen_ai.tool.call.arguments", args.to_owned()));
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
    sc
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

const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The W3C `traceparent` of `sc` (`00-TRACE-SPAN-FLAGS`, lowercase hex,
/// only the sampled flag passed on, as the SDK's propagator writes it), or
/// `None` for an invalid context.
fn traceparent_of(sc: &SpanContext) -> Option<[u8; 55]> {
    if !sc.is_valid() {
        return None;
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [b'-'; 55];
    let flags = (sc.trace_flags() & TraceFlags::SAMPLED).to_u8();
    let trace = sc.trace_id().to_bytes();
    let span = sc.span_id().to_bytes();
    let fields: [(usize, &[u8]); 4] = [(0, &[0]), (3, &trace), (36, &span), (53, &[flags])];
    for (at, bytes) in fields {
        for (i, b) in bytes.iter().enumerate() {
            let hi = at + 2 * i;
            if let (Some(h), Some(l)) =
                (HEX.get(usize::from(b >> 4)), HEX.get(usize::from(b & 0xf)))
            {
                if let Some(slot) = out.get_mut(hi..hi + 2) {
                    slot.copy_from_slice(&[*h, *l]);
                }
            }
        }
    }
    Some(out)
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
