//! The `[telemetry]` table: where OpenTelemetry traces and metrics go over
//! OTLP, how many traces are kept, which tools' argument values may go on a
//! span, and the decision log's form and level: the three front ends
//! (and `toolgate-telemetry`, which exports) read it.

use toolgate::config::front::{RawDecisionLog, RawLogFormat, RawProtocol};
use toolgate::config::{Config, Error, ErrorCode};

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

impl TelemetryConfig {
    /// `config`'s `[telemetry]` table, checked: an `http(s)://` endpoint,
    /// a ratio within 0 and 1, bounded sizes, and configured tools in
    /// `record_arguments`. The error is placed at the key, as
    /// [`Config::load`] places its own.
    ///
    /// # Errors
    ///
    /// The first value refused, with its [`ErrorCode`] and position.
    pub fn from_config(config: &Config) -> Result<Self, Error> {
        let t = &config.front_end_tables().telemetry;
        let registry = config.registry();
        let mut out = TelemetryConfig::default();
        if let Some(e) = &t.endpoint {
            let url = e.get_ref();
            let valid = (url.starts_with("http://") || url.starts_with("https://"))
                && url.len() <= MAX_TEXT_BYTES
                && !url.chars().any(|c| c.is_whitespace() || c.is_control())
                && url.split("://").nth(1).is_some_and(|rest| !rest.is_empty());
            if !valid {
                return Err(config.error_at_key(
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
                return Err(config.error_at_key(
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
                return Err(config.error_at_key(
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
                return Err(config.error_at_key(
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
                return Err(config.error_at_key(
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
                    return Err(config.error_at_key(
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
    use super::super::test_support::{refused, refused_by_core, table};
    use super::*;

    const TOOL: &str =
        "[[tool]]\nname = \"get\"\nrisk = \"read\"\nschema = { type = \"object\" }\n";

    fn telemetry(lines: &str) -> Result<TelemetryConfig, Error> {
        table(
            &format!("{TOOL}[telemetry]\n{lines}"),
            TelemetryConfig::from_config,
        )
    }

    #[test]
    fn the_defaults_export_nothing_and_log_no_decision() {
        let t = table("", TelemetryConfig::from_config).unwrap();
        assert_eq!(t, TelemetryConfig::default());
        assert_eq!(telemetry("").unwrap(), t);
        assert_eq!(t.endpoint(), None);
        assert_eq!(t.protocol(), OtlpProtocol::HttpProtobuf);
        assert!((t.sample_ratio() - 1.0).abs() < f64::EPSILON);
        assert_eq!(t.service_name(), DEFAULT_SERVICE_NAME);
        assert_eq!(t.queue_size(), DEFAULT_QUEUE_SIZE);
        assert_eq!(t.metrics_seconds(), DEFAULT_METRICS_SECONDS);
        assert_eq!(t.log_format(), LogFormat::Text);
        assert_eq!(t.decision_log(), DecisionLog::Off);
        assert_eq!(t.decision_log().level(), None);
        assert!(!t.records_arguments("get"));
    }

    #[test]
    fn every_key_is_read() {
        let t = telemetry(
            "endpoint = \"http://127.0.0.1:4318/\"\nprotocol = \"grpc\"\nsample_ratio = 0.01\n\
             service_name = \"gw\"\nqueue_size = 65536\nmetrics_seconds = 0\n\
             record_arguments = [\"get\"]\nlog_format = \"json\"\ndecision_log = \"info\"\n",
        )
        .unwrap();
        // The endpoint loses its trailing `/`.
        assert_eq!(t.endpoint(), Some("http://127.0.0.1:4318"));
        assert_eq!(t.protocol(), OtlpProtocol::Grpc);
        assert!((t.sample_ratio() - 0.01).abs() < f64::EPSILON);
        assert_eq!(t.service_name(), "gw");
        assert_eq!(t.queue_size(), MAX_QUEUE_SIZE);
        assert_eq!(t.metrics_seconds(), 0);
        assert!(t.records_arguments("get"));
        assert!(!t.records_arguments("Get"));
        assert_eq!(t.log_format(), LogFormat::Json);
        assert_eq!(t.decision_log(), DecisionLog::Info);
        assert_eq!(t.decision_log().level(), Some("info"));
        let t = telemetry("decision_log = \"debug\"\nsample_ratio = 0\nmetrics_seconds = 86400\n")
            .unwrap();
        assert_eq!(t.decision_log().level(), Some("debug"));
        assert!(t.sample_ratio().abs() < f64::EPSILON);
        assert_eq!(t.metrics_seconds(), 86_400);
    }

    #[test]
    fn bad_values_are_refused_at_their_key() {
        let long = format!("endpoint = \"https://{}\"", "a".repeat(2048));
        for (line, code, key, says) in [
            (
                "endpoint = \"ftp://x\"",
                ErrorCode::InvalidValue,
                "endpoint",
                "`endpoint` must be an `http://` or `https://` URL",
            ),
            (
                "endpoint = \"http://\"",
                ErrorCode::InvalidValue,
                "endpoint",
                "`endpoint` must be",
            ),
            (
                "endpoint = \"http://a b\"",
                ErrorCode::InvalidValue,
                "endpoint",
                "`endpoint` must be",
            ),
            (
                long.as_str(),
                ErrorCode::InvalidValue,
                "endpoint",
                "`endpoint` must be",
            ),
            (
                "sample_ratio = 1.5",
                ErrorCode::InvalidValue,
                "sample_ratio",
                "`sample_ratio` must be between 0 and 1",
            ),
            (
                "sample_ratio = -0.1",
                ErrorCode::InvalidValue,
                "sample_ratio",
                "between 0 and 1",
            ),
            (
                "sample_ratio = nan",
                ErrorCode::InvalidValue,
                "sample_ratio",
                "between 0 and 1",
            ),
            (
                "queue_size = 0",
                ErrorCode::InvalidLimit,
                "queue_size",
                "`queue_size` must be between 1 and 65536",
            ),
            (
                "queue_size = 65537",
                ErrorCode::InvalidLimit,
                "queue_size",
                "between 1 and 65536",
            ),
            (
                "metrics_seconds = 86401",
                ErrorCode::InvalidLimit,
                "metrics_seconds",
                "`metrics_seconds` must be at most 86400",
            ),
            (
                "record_arguments = [\"nope\"]",
                ErrorCode::InvalidValue,
                "record_arguments",
                "`nope`, which is not a configured tool",
            ),
            (
                "service_name = \"\"",
                ErrorCode::InvalidValue,
                "service_name",
                "non-empty text",
            ),
            (
                "service_name = \"a\\tb\"",
                ErrorCode::InvalidValue,
                "service_name",
                "without control characters",
            ),
        ] {
            let (got, at, column, got_key, message) = refused(
                &format!("{TOOL}[telemetry]\n{line}\n"),
                TelemetryConfig::from_config,
            );
            assert_eq!((got, at, got_key.as_str()), (code, Some(6), key), "{line}");
            assert!(column.is_some(), "{line}");
            assert!(message.contains(says), "{line}: {message}");
        }
    }

    #[test]
    fn wrong_types_and_unknown_keys_are_the_core_loaders_refusals() {
        for (line, code, key) in [
            (
                "protocol = \"http/json\"",
                ErrorCode::InvalidValue,
                "protocol",
            ),
            (
                "decision_log = \"trace\"",
                ErrorCode::InvalidValue,
                "decision_log",
            ),
            (
                "log_format = \"xml\"",
                ErrorCode::InvalidValue,
                "log_format",
            ),
            ("queue_size = -1", ErrorCode::InvalidValue, "queue_size"),
            (
                "sample_ratio = \"all\"",
                ErrorCode::InvalidType,
                "sample_ratio",
            ),
            (
                "record_arguments = \"get\"",
                ErrorCode::InvalidType,
                "record_arguments",
            ),
            ("unknown = 1", ErrorCode::UnknownKey, "unknown"),
        ] {
            let (got, at, got_key) = refused_by_core(&format!("{TOOL}[telemetry]\n{line}\n"));
            assert_eq!((got, got_key.as_str()), (code, key), "{line}");
            assert_eq!(at, Some(6), "{line}");
        }
    }
}
