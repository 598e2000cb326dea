//! [`Telemetry`]: made once from the config by an edge, shared by its
//! requests.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use http::HeaderMap;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_http::HeaderExtractor;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use toolgate::config::Config;
use toolgate::registry::Registry;
use toolgate_edge::config::{OtlpProtocol, TelemetryConfig};

use crate::export::{Bounded, Counts, OtlpHttp};
use crate::log::{LogSink, Logger};
use crate::metrics::Instruments;
use crate::span::RequestSpan;

/// How long one export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// A stage whose latency is measured (`toolgate.stage.duration`'s
/// `stage` attribute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// A whole request or frame, from its arrival to its answer.
    Request,
    /// The gate's decision on a response or call, with its audit record.
    Decide,
    /// The wait for an upstream's answer.
    Upstream,
}

impl Stage {
    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Decide => "decide",
            Self::Upstream => "upstream",
        }
    }
}

/// Why telemetry cannot start: the message names the key.
#[derive(Debug)]
pub struct StartError(String);

impl StartError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

/// An edge's telemetry: cheap to clone; with no `[telemetry]` endpoint and
/// no decision log it does nothing.
#[derive(Clone, Default)]
pub struct Telemetry {
    pub(crate) inner: Option<Arc<Inner>>,
}

pub(crate) struct Inner {
    pub(crate) tracer: SdkTracer,
    provider: SdkTracerProvider,
    pub(crate) propagator: TraceContextPropagator,
    counts: Arc<Counts>,
    pump: Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub(crate) metrics: Option<Instruments>,
    pub(crate) log: Logger,
    pub(crate) config: TelemetryConfig,
    pub(crate) registry: Registry,
}

impl fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telemetry")
            .field("on", &self.inner.is_some())
            .finish_non_exhaustive()
    }
}

impl Telemetry {
    /// Telemetry that records nothing.
    pub const fn off() -> Self {
        Self { inner: None }
    }

    /// The telemetry `config`'s `[telemetry]` table asks for, exporting on
    /// the current Tokio runtime. Off when the table names no endpoint and
    /// no decision log.
    pub fn start(config: &Config) -> Result<Self, StartError> {
        let telemetry =
            TelemetryConfig::from_config(config).map_err(|e| StartError::new(e.to_string()))?;
        Self::start_with(config, &telemetry, LogSink::Stderr)
    }

    /// As [`Telemetry::start`], with `telemetry` in place of the config's
    /// table and the decision log written to `sink`.
    pub fn start_with(
        config: &Config,
        telemetry: &TelemetryConfig,
        sink: LogSink,
    ) -> Result<Self, StartError> {
        if telemetry.log_format() == toolgate_edge::config::LogFormat::Json {
            // Every line the process writes, not only the decisions.
            toolgate_edge::log::use_json();
        }
        let log = Logger::new(telemetry.log_format(), telemetry.decision_log(), sink);
        if telemetry.endpoint().is_none() && !log.on() {
            return Ok(Self::off());
        }
        let counts = Arc::new(Counts::default());
        let resource = Resource::builder_empty()
            .with_service_name(telemetry.service_name().to_owned())
            .build();
        let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
            telemetry.sample_ratio(),
        )));
        let mut builder = SdkTracerProvider::builder()
            .with_sampler(sampler)
            .with_resource(resource.clone());
        let mut pump = None;
        let mut metrics = None;
        if let Some(endpoint) = telemetry.endpoint() {
            let handle = tokio::runtime::Handle::try_current()
                .map_err(|_| StartError::new("[telemetry] needs a Tokio runtime to export on"))?;
            let mut exporter = span_exporter(telemetry.protocol(), endpoint, &handle)?;
            opentelemetry_sdk::trace::SpanExporter::set_resource(&mut exporter, &resource);
            let (processor, task) = Bounded::start(
                &handle,
                telemetry.queue_size(),
                exporter,
                Arc::clone(&counts),
            );
            builder = builder.with_span_processor(processor);
            pump = Some(task);
            if telemetry.metrics_seconds() > 0 {
                metrics = Some(Instruments::start(
                    telemetry.protocol(),
                    endpoint,
                    &handle,
                    resource,
                    Duration::from_secs(telemetry.metrics_seconds()),
                    Arc::clone(&counts),
                    config.registry(),
                )?);
            }
        }
        let provider = builder.build();
        let tracer = provider.tracer("toolgate");
        Ok(Self {
            inner: Some(Arc::new(Inner {
                tracer,
                provider,
                propagator: TraceContextPropagator::new(),
                counts,
                pump: Mutex::new(pump),
                metrics,
                log,
                config: telemetry.clone(),
                registry: config.registry().clone(),
            })),
        })
    }

    /// Whether anything is recorded.
    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    /// A span for a request that came with `headers` (its `traceparent`
    /// and `tracestate`, when valid, make it a child of the caller's span).
    pub fn request(&self, name: &'static str, headers: &HeaderMap) -> RequestSpan {
        let Some(inner) = &self.inner else {
            return RequestSpan::off();
        };
        let parent = inner.propagator.extract(&HeaderExtractor(headers));
        RequestSpan::start(Arc::clone(inner), name, &parent)
    }

    /// A span for a frame whose trace context came as text (an MCP
    /// request's `_meta.traceparent` and `_meta.tracestate`).
    pub fn frame(
        &self,
        name: &'static str,
        traceparent: Option<&str>,
        tracestate: Option<&str>,
    ) -> RequestSpan {
        self.frame_within(name, traceparent, tracestate, None)
    }

    /// As [`Telemetry::frame`], for a frame that came in an HTTP request
    /// with `headers`: the frame's own context (`_meta`) wins when its
    /// `traceparent` is valid; else the request's `traceparent` and
    /// `tracestate` headers are read.
    pub fn frame_within(
        &self,
        name: &'static str,
        traceparent: Option<&str>,
        tracestate: Option<&str>,
        headers: Option<&HeaderMap>,
    ) -> RequestSpan {
        let Some(inner) = &self.inner else {
            return RequestSpan::off();
        };
        let mut meta = HeaderMap::new();
        for (key, value) in [("traceparent", traceparent), ("tracestate", tracestate)] {
            if let Some(v) = value.and_then(|v| http::HeaderValue::from_str(v).ok()) {
                meta.insert(key, v);
            }
        }
        let mut parent = inner.propagator.extract(&HeaderExtractor(&meta));
        if let Some(h) = headers {
            if !parent.span().span_context().is_valid() {
                parent = inner.propagator.extract(&HeaderExtractor(h));
            }
        }
        RequestSpan::start(Arc::clone(inner), name, &parent)
    }

    /// Exports the gauges read from `store` with the OTLP metrics:
    /// `toolgate.approvals.pending`, `toolgate.approvals.oldest_pending.age`
    /// (s), `toolgate.kill_switch` (by `mode`) and
    /// `toolgate.store.read.duration` (s). Read on the metric reader's
    /// thread, at most once a second, never on a decision's path. The
    /// first store handed over is kept; nothing without OTLP metrics.
    pub fn observe_store(&self, store: Arc<dyn toolgate_store::Store>) {
        if let Some(m) = self.inner.as_ref().and_then(|i| i.metrics.as_ref()) {
            m.observe_store(store);
        }
    }

    /// Records how long `stage` took (OTLP metrics only).
    pub fn stage(&self, stage: Stage, took: Duration) {
        if let Some(m) = self.inner.as_ref().and_then(|i| i.metrics.as_ref()) {
            m.stage(stage, took);
        }
    }

    /// Spans dropped because the export queue was full.
    pub fn dropped_spans(&self) -> u64 {
        self.count(|c| c.dropped.load(Ordering::Relaxed))
    }

    /// Spans the receiver did not take (unreachable, refused, late).
    pub fn failed_spans(&self) -> u64 {
        self.count(|c| c.failed.load(Ordering::Relaxed))
    }

    /// Spans the receiver took.
    pub fn exported_spans(&self) -> u64 {
        self.count(|c| c.exported.load(Ordering::Relaxed))
    }

    fn count(&self, f: impl Fn(&Counts) -> u64) -> u64 {
        self.inner.as_ref().map_or(0, |i| f(&i.counts))
    }

    /// Ends the export: what is queued is sent (within a few seconds), the
    /// metrics are exported once more.
    pub async fn shutdown(&self) {
        let Some(inner) = &self.inner else {
            return;
        };
        let _ = inner.provider.shutdown();
        let task = inner
            .pump
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
        if let Some(m) = &inner.metrics {
            m.shutdown();
        }
    }
}

/// The OTLP span exporter for `protocol` at `endpoint`.
fn span_exporter(
    protocol: OtlpProtocol,
    endpoint: &str,
    handle: &tokio::runtime::Handle,
) -> Result<opentelemetry_otlp::SpanExporter, StartError> {
    let built = match protocol {
        #[cfg(feature = "grpc")]
        OtlpProtocol::Grpc => opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .with_timeout(EXPORT_TIMEOUT)
            .build(),
        #[cfg(not(feature = "grpc"))]
        OtlpProtocol::Grpc => {
            return Err(StartError::new(
                "[telemetry] protocol = \"grpc\" needs a toolgate built with the `grpc` feature; use \"http/protobuf\"",
            ))
        }
        _ => opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(OtlpHttp::new(handle.clone(), EXPORT_TIMEOUT))
            .with_endpoint(format!("{endpoint}/v1/traces"))
            .with_timeout(EXPORT_TIMEOUT)
            .build(),
    };
    built.map_err(|e| StartError::new(format!("[telemetry] cannot export traces: {e}")))
}
