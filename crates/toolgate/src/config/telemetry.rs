//! The `[telemetry]` table: where OpenTelemetry traces and metrics go over
//! OTLP, how many traces are kept, which tools' argument values may go on a
//! span, and the decision log's form and level.

use toml::Spanned;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;
use crate::registry::Registry;

/// Spans waiting for export when `queue_size` is not given.
pub const DEFAULT_QUEUE_SIZE: usize = 2048;
/// The largest `queue_size` accepted.
pub const MAX_QUEUE_SIZE: usize = 65_536;
/// Seconds between OTLP metric exports when `metrics_seconds` is not given.
pub const DEFAULT_METRICS_SECONDS: u64 = 60;
/// The `service.name` when `service_name` is not given.
pub const DEFAULT_SERVICE_NAME: &str = "toolgate";
/// The longest `endpoint` or `service_name` accepted, in bytes.
const MAX_TEXT_BYTES: usize = 2048;
/// The longest `metrics_seconds` accepted: a day.
const MAX_METRICS_SECONDS: u64 = 86_400;

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTelemetry {
    pub(crate) endpoint: Option<Spanned<String>>,
    pub(crate) protocol: Option<RawProtocol>,
    pub(crate) sample_ratio: Option<Spanned<f64>>,
    pub(crate) service_name: Option<Spanned<String>>,
    pub(crate) queue_size: Option<Spanned<u64>>,
    pub(crate) metrics_seconds: Option<Spanned<u64>>,
    pub(crate) record_arguments: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) log_format: Option<RawLogFormat>,
    pub(crate) decision_log: Option<RawDecisionLog>,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
pub(crate) enum RawProtocol {
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    #[serde(rename = "grpc")]
    Grpc,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawLogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawDecisionLog {
    Off,
    Debug,
    Info,
}

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// OTLP/HTTP with protobuf bodies (`/v1/traces`, `/v1/metrics`).
    #[default]
    HttpProtobuf,
    /// OTLP/gRPC.
    Grpc,
}

/// How log events are written to standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LogFormat {
    /// Free text, one line per event.
    #[default]
    Text,
    /// One JSON object per line, with the trace and span ids.
    Json,
}

/// The level of the one event written per decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum DecisionLog {
    /// No event per decision.
    #[default]
    Off,
    /// At level `debug`.
    Debug,
    /// At level `info`.
    Info,
}

impl DecisionLog {
    /// The level's name, or `None` when off.
    pub fn level(self) -> Option<&'static str> {
        match self {
            Self::Off => None,
            Self::Debug => Some("debug"),
            Self::Info => Some("info"),
        }
    }
}

/// The `[telemetry]` table.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetryConfig {
    endpoint: Option<String>,
    protocol: OtlpProtocol,
    sample_ratio: f64,
    service_name: String,
    queue_size: usize,
    metrics_seconds: u64,
    record_arguments: Vec<String>,
    log_format: LogFormat,
    decision_log: DecisionLog,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self {
            endpoint: None,
            protocol: OtlpProtocol::default(),
            sample_ratio: 1.0,
            service_name: DEFAULT_SERVICE_NAME.to_owned(),
            queue_size: DEFAULT_QUEUE_SIZE,
            metrics_seconds: DEFAULT_METRICS_SECONDS,
            record_arguments: Vec::new(),
            log_format: LogFormat::default(),
            decision_log: DecisionLog::default(),
        }
    }
}

impl TelemetryConfig {
    /// The OTLP receiver's base URL; `None`: nothing is exported.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    /// The OTLP transport.
    pub fn protocol(&self) -> OtlpProtocol {
        self.protocol
    }

    /// The share of root traces kept, from 0 to 1.
    pub fn sample_ratio(&self) -> f64 {
        self.sample_ratio
    }

    /// The `service.name` resource attribute.
    pub fn service_name(&self) -> &str {
        &self.service_name
    }

    /// Spans waiting for export at most.
    pub fn queue_size(&self) -> usize {
        self.queue_size
    }

    /// Seconds between OTLP metric exports; 0: none.
    pub fn metrics_seconds(&self) -> u64 {
        self.metrics_seconds
    }

    /// Whether `tool`'s (redacted) argument values may go on its spans.
    pub fn records_arguments(&self, tool: &str) -> bool {
        self.record_arguments.iter().any(|t| t == tool)
    }

    /// How log events are written.
    pub fn log_format(&self) -> LogFormat {
        self.log_format
    }

    /// The level of the event per decision.
    pub fn decision_log(&self) -> DecisionLog {
        self.decision_log
    }
}

impl Loader<'_> {
    /// `[telemetry]`: an `http(s)://` endpoint, a ratio within 0 and 1,
    /// bounded sizes, and configured tools in `record_arguments`.
    pub(super) fn telemetry(
        &self,
        raw: &RawConfig,
        registry: &Registry,
    ) -> Result<TelemetryConfig, Error> {
        let t = &raw.telemetry;
        let mut out = TelemetryConfig::default();
        if let Some(e) = &t.endpoint {
            let url = e.get_ref();
            let valid = (url.starts_with("http://") || url.starts_with("https://"))
                && url.len() <= MAX_TEXT_BYTES
                && !url.chars().any(|c| c.is_whitespace() || c.is_control())
                && url.split("://").nth(1).is_some_and(|rest| !rest.is_empty());
            if !valid {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    e.span().start,
                    "endpoint",
                    "`endpoint` must be an `http://` or `https://` URL",
                ));
            }
            out.endpoint = Some(url.trim_end_matches('/').to_owned());
        }
        if let Some(p) = t.protocol {
            out.protocol = match p {
                RawProtocol::HttpProtobuf => OtlpProtocol::HttpProtobuf,
                RawProtocol::Grpc => OtlpProtocol::Grpc,
            };
        }
        if let Some(r) = &t.sample_ratio {
            let v = *r.get_ref();
            if !(0.0..=1.0).contains(&v) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    r.span().start,
                    "sample_ratio",
                    "`sample_ratio` must be between 0 and 1",
                ));
            }
            out.sample_ratio = v;
        }
        if let Some(n) = &t.service_name {
            let name = n.get_ref();
            if name.is_empty() || name.len() > MAX_TEXT_BYTES || name.chars().any(char::is_control)
            {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    n.span().start,
                    "service_name",
                    "`service_name` must be non-empty text without control characters",
                ));
            }
            out.service_name = name.clone();
        }
        if let Some(q) = &t.queue_size {
            let n = *q.get_ref();
            if n == 0 || n > MAX_QUEUE_SIZE as u64 {
                return Err(self.at_key(
                    ErrorCode::InvalidLimit,
                    q.span().start,
                    "queue_size",
                    format!("`queue_size` must be between 1 and {MAX_QUEUE_SIZE}"),
                ));
            }
            out.queue_size = usize::try_from(n).unwrap_or(MAX_QUEUE_SIZE);
        }
        if let Some(s) = &t.metrics_seconds {
            let n = *s.get_ref();
            if n > MAX_METRICS_SECONDS {
                return Err(self.at_key(
                    ErrorCode::InvalidLimit,
                    s.span().start,
                    "metrics_seconds",
                    format!("`metrics_seconds` must be at most {MAX_METRICS_SECONDS}"),
                ));
            }
            out.metrics_seconds = n;
        }
        if let Some(list) = &t.record_arguments {
            for tool in list.get_ref() {
                if !registry.contains(tool.get_ref()) {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        tool.span().start,
                        "record_arguments",
                        format!(
                            "`record_arguments` names `{}`, which is not a configured tool",
                            tool.get_ref().escape_debug()
                        ),
                    ));
                }
                out.record_arguments.push(tool.get_ref().clone());
            }
        }
        if let Some(f) = t.log_format {
            out.log_format = match f {
                RawLogFormat::Text => LogFormat::Text,
                RawLogFormat::Json => LogFormat::Json,
            };
        }
        if let Some(d) = t.decision_log {
            out.decision_log = match d {
                RawDecisionLog::Off => DecisionLog::Off,
                RawDecisionLog::Debug => DecisionLog::Debug,
                RawDecisionLog::Info => DecisionLog::Info,
            };
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, DecisionLog, LogFormat, OtlpProtocol};

    const TOOL: &str =
        "[[tool]]\nname = \"get\"\nrisk = \"read\"\nschema = { type = \"object\" }\n";

    fn parse(telemetry: &str) -> Result<Config, crate::config::Error> {
        Config::parse(
            &format!("{TOOL}[telemetry]\n{telemetry}"),
            "/tmp/toolgate.toml",
        )
    }

    #[test]
    fn the_defaults_export_nothing_and_log_no_decision() {
        let c = parse("").unwrap();
        let t = c.telemetry();
        assert_eq!(t.endpoint(), None);
        assert_eq!(t.protocol(), OtlpProtocol::HttpProtobuf);
        assert!((t.sample_ratio() - 1.0).abs() < f64::EPSILON);
        assert_eq!(t.log_format(), LogFormat::Text);
        assert_eq!(t.decision_log(), DecisionLog::Off);
        assert!(!t.records_arguments("get"));
    }

    #[test]
    fn every_key_is_read() {
        let c = parse(
            "endpoint = \"http://127.0.0.1:4318/\"\nprotocol = \"grpc\"\nsample_ratio = 0.01\n\
             service_name = \"gw\"\nqueue_size = 16\nmetrics_seconds = 0\n\
             record_arguments = [\"get\"]\nlog_format = \"json\"\ndecision_log = \"info\"\n",
        )
        .unwrap();
        let t = c.telemetry();
        assert_eq!(t.endpoint(), Some("http://127.0.0.1:4318"));
        assert_eq!(t.protocol(), OtlpProtocol::Grpc);
        assert!((t.sample_ratio() - 0.01).abs() < f64::EPSILON);
        assert_eq!(t.service_name(), "gw");
        assert_eq!(t.queue_size(), 16);
        assert_eq!(t.metrics_seconds(), 0);
        assert!(t.records_arguments("get"));
        assert_eq!(t.log_format(), LogFormat::Json);
        assert_eq!(t.decision_log(), DecisionLog::Info);
    }

    #[test]
    fn bad_values_are_refused_with_their_key() {
        for (text, key) in [
            ("endpoint = \"ftp://x\"", "endpoint"),
            ("endpoint = \"http://\"", "endpoint"),
            ("sample_ratio = 1.5", "sample_ratio"),
            ("sample_ratio = -0.1", "sample_ratio"),
            ("queue_size = 0", "queue_size"),
            ("queue_size = 65537", "queue_size"),
            ("metrics_seconds = 86401", "metrics_seconds"),
            ("record_arguments = [\"nope\"]", "record_arguments"),
            ("service_name = \"\"", "service_name"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.to_string().contains(key), "{text}: {e}");
        }
        for text in [
            "protocol = \"http/json\"",
            "decision_log = \"trace\"",
            "log_format = \"xml\"",
            "unknown = 1",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }
}
