//! toolgate's telemetry: OpenTelemetry traces and metrics over OTLP, the
//! W3C trace context read from callers and passed upstream, and the
//! decision log.
//!
//! # The contract
//!
//! - **One span per request or frame, one child span per decision.** An
//!   edge (the HTTP API, the model-API proxy, the MCP proxy) opens a
//!   [`RequestSpan`] for what it was asked, inside the caller's trace when
//!   the caller sent a `traceparent`, and records each call the gate
//!   decided as a child span named `execute_tool {tool}` carrying the
//!   OpenTelemetry GenAI attributes (`gen_ai.operation.name` =
//!   `execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//!   `gen_ai.tool.type`) and toolgate's own (`toolgate.verdict`,
//!   `toolgate.code`, `toolgate.approval`).
//! - **No argument values, no results**, unless `[telemetry]
//!   record_arguments` names the tool: then its arguments go on the span as
//!   `gen_ai.tool.call.arguments`, with every value the audit log keeps as a
//!   digest replaced by `"[redacted]"`. Tool results never go on a span.
//! - **Exporting never slows or fails a decision.** A finished span is put
//!   on a bounded queue without waiting; when the queue is full it is
//!   dropped and counted ([`Telemetry::dropped_spans`]). Export happens on
//!   a task of its own, and its failures are counted too.
//! - **Metrics** go over OTLP as well: the decisions by verdict and tool
//!   (configured tools only, like the Prometheus page), a latency
//!   histogram per stage, and, once an edge hands over its store
//!   ([`Telemetry::observe_store`]), the gauges the dashboard shows:
//!   approvals pending and the oldest one's age, the kill switch, and how
//!   long reading them took the store.
//! - **The decision log**: one event per decision at the configured level,
//!   as text or as a JSON line with the trace and span ids; it names the
//!   tool, the verdict and the code, never argument values.

mod export;
mod gauges;
mod log;
mod metrics;
mod span;
mod telemetry;

// The public interface is:
pub use crate::log::LogSink;
pub use crate::span::RequestSpan;
pub use crate::telemetry::{Stage, StartError, Telemetry};
