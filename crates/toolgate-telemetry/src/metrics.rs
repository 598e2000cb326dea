//! The OTLP metrics: the decisions by verdict and tool (configured tools
//! only, as on the Prometheus page), a latency histogram per stage, and
//! the spans the export queue dropped.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::Resource;
use toolgate::registry::Registry;
use toolgate::Verdict;
use toolgate_edge::config::OtlpProtocol;

use crate::export::{Counts, OtlpHttp};
use crate::telemetry::{Stage, StartError};

/// The `tool` attribute of a call whose tool is not configured (the same
/// value as the Prometheus page's).
pub(crate) const OTHER_TOOL: &str = "(other)";

/// The latency buckets, in seconds (the Prometheus histogram's).
const BOUNDARIES: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The verdicts, in the order of [`verdict_index`].
const VERDICTS: [Verdict; 3] = [Verdict::Allow, Verdict::NeedsApproval, Verdict::Deny];

const fn verdict_index(v: Verdict) -> usize {
    match v {
        Verdict::Allow => 0,
        Verdict::NeedsApproval => 1,
        Verdict::Deny => 2,
    }
}

/// The attributes of a decision's count, per verdict.
type ByVerdict = [[KeyValue; 2]; 3];

fn by_verdict(tool: &str) -> ByVerdict {
    let tool = opentelemetry::StringValue::from(tool.to_owned());
    VERDICTS.map(|v| {
        [
            KeyValue::new("verdict", v.as_str()),
            KeyValue::new("tool", tool.clone()),
        ]
    })
}

/// The instruments and the provider that exports them. Every attribute
/// set a measurement uses is built once here (a configured tool's name is
/// shared, not copied per decision).
pub(crate) struct Instruments {
    provider: SdkMeterProvider,
    decisions: Counter<u64>,
    stages: Histogram<f64>,
    by_tool: HashMap<String, ByVerdict>,
    other_tool: ByVerdict,
    rejected: [KeyValue; 2],
    stage_attributes: [[KeyValue; 1]; 3],
    observing: std::sync::OnceLock<()>,
}

impl Instruments {
    /// Instruments exported to `endpoint` every `every`.
    pub(crate) fn start(
        protocol: OtlpProtocol,
        endpoint: &str,
        handle: &tokio::runtime::Handle,
        resource: Resource,
        every: Duration,
        counts: Arc<Counts>,
        registry: &Registry,
    ) -> Result<Self, StartError> {
        let exporter = exporter(protocol, endpoint, handle)?;
        let reader = PeriodicReader::builder(exporter)
            .with_interval(every)
            .build();
        let provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();
        let meter = provider.meter("toolgate");
        let decisions = meter
            .u64_counter("toolgate.decisions")
            .with_description("Decisions by verdict and tool")
            .build();
        let stages = meter
            .f64_histogram("toolgate.stage.duration")
            .with_description("Latency of each stage: a request, a decision, an upstream's answer")
            .with_unit("s")
            .with_boundaries(BOUNDARIES.to_vec())
            .build();
        let dropped = Arc::clone(&counts);
        meter
            .u64_observable_counter("toolgate.telemetry.spans")
            .with_description(
                "Spans by what became of them: exported, failed, dropped (queue full)",
            )
            .with_callback(move |o| {
                for (outcome, n) in [
                    ("exported", &dropped.exported),
                    ("failed", &dropped.failed),
                    ("dropped", &dropped.dropped),
                ] {
                    o.observe(
                        n.load(Ordering::Relaxed),
                        &[KeyValue::new("outcome", outcome)],
                    );
                }
            })
            .build();
        Ok(Self {
            provider,
            decisions,
            stages,
            by_tool: registry
                .iter()
                .map(|t| (t.name().to_owned(), by_verdict(t.name())))
                .collect(),
            other_tool: by_verdict(OTHER_TOOL),
            rejected: [
                KeyValue::new("verdict", Verdict::Deny.as_str()),
                KeyValue::new("tool", ""),
            ],
            stage_attributes: [Stage::Request, Stage::Decide, Stage::Upstream]
                .map(|s| [KeyValue::new("stage", s.as_str())]),
            observing: std::sync::OnceLock::new(),
        })
    }

    /// Counts a decision on a call to `tool` (one that is not configured
    /// counts as [`OTHER_TOOL`]).
    pub(crate) fn decision(&self, verdict: Verdict, tool: &str) {
        let attributes = self.by_tool.get(tool).unwrap_or(&self.other_tool);
        if let Some(a) = attributes.get(verdict_index(verdict)) {
            self.decisions.add(1, a);
        }
    }

    /// Counts a response refused whole (no call to name).
    pub(crate) fn rejected(&self) {
        self.decisions.add(1, &self.rejected);
    }

    /// Records a stage's latency.
    pub(crate) fn stage(&self, stage: Stage, took: Duration) {
        let i = match stage {
            Stage::Request => 0,
            Stage::Decide => 1,
            Stage::Upstream => 2,
        };
        if let Some(a) = self.stage_attributes.get(i) {
            self.stages.record(took.as_secs_f64(), a);
        }
    }

    /// Reads the store's gauges ([`crate::gauges`]) at each export; once.
    pub(crate) fn observe_store(&self, store: std::sync::Arc<dyn toolgate_store::Store>) {
        if self.observing.set(()).is_ok() {
            crate::gauges::observe(&self.provider.meter("toolgate"), store);
        }
    }

    /// Exports once more and stops.
    pub(crate) fn shutdown(&self) {
        let _ = self.provider.shutdown();
    }
}

fn exporter(
    protocol: OtlpProtocol,
    endpoint: &str,
    handle: &tokio::runtime::Handle,
) -> Result<opentelemetry_otlp::MetricExporter, StartError> {
    let built = match protocol {
        #[cfg(feature = "grpc")]
        OtlpProtocol::Grpc => opentelemetry_otlp::MetricExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build(),
        #[cfg(not(feature = "grpc"))]
        OtlpProtocol::Grpc => {
            return Err(StartError::new(
                "[telemetry] protocol = \"grpc\" needs a toolgate built with the `grpc` feature; use \"http/protobuf\"",
            ))
        }
        _ => opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(OtlpHttp::new(handle.clone(), Duration::from_secs(10)))
            .with_endpoint(format!("{endpoint}/v1/metrics"))
            .build(),
    };
    built.map_err(|e| StartError::new(format!("[telemetry] cannot export metrics: {e}")))
}
