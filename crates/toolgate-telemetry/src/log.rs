//! The decision log: one event per decision, as a text line or a JSON
//! line with the trace and span ids, on standard error (or a buffer, for
//! tests). It names the tool, the call, the verdict, the code and the
//! approval; argument values only for a tool in `record_arguments`, and
//! then redacted as the audit log redacts.

use std::io::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use toolgate::Decision;
use toolgate_edge::config::{DecisionLog, LogFormat};

use crate::span::{bounded, MAX_ATTRIBUTE_BYTES};

/// Where log lines go.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum LogSink {
    /// Standard error, a line at a time.
    #[default]
    Stderr,
    /// A buffer (tests read what was written).
    Buffer(Arc<Mutex<Vec<u8>>>),
}

#[derive(Debug)]
pub(crate) struct Logger {
    format: LogFormat,
    level: Option<&'static str>,
    sink: LogSink,
}

impl Logger {
    pub(crate) fn new(format: LogFormat, level: DecisionLog, sink: LogSink) -> Self {
        Self {
            format,
            level: level.level(),
            sink,
        }
    }

    /// Whether an event per decision is written.
    pub(crate) fn on(&self) -> bool {
        self.level.is_some()
    }

    /// Writes the event of decision `d` (`ids`: its trace and span ids).
    pub(crate) fn decision(
        &self,
        ids: Option<(String, String)>,
        surface: &'static str,
        d: &Decision,
        arguments: Option<&str>,
    ) {
        let Some(level) = self.level else {
            return;
        };
        let tool = bounded(d.tool(), MAX_ATTRIBUTE_BYTES);
        let call_id = d.call_id().map(|c| bounded(c, MAX_ATTRIBUTE_BYTES));
        let code = d.reasons().first().map(|r| r.code.as_str());
        let approval = d.approval().map(|a| a.as_str());
        let mut line = match self.format {
            LogFormat::Json => {
                let mut o = Map::new();
                let ms = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                o.insert("ts_ms".into(), json!(ms));
                o.insert("level".into(), json!(level));
                o.insert("event".into(), json!("decision"));
                o.insert("source".into(), json!(surface));
                o.insert("surface".into(), json!(surface));
                if let Some((trace, span)) = &ids {
                    o.insert("trace_id".into(), json!(trace));
                    o.insert("span_id".into(), json!(span));
                }
                o.insert("tool".into(), json!(tool));
                if let Some(c) = call_id {
                    o.insert("call_id".into(), json!(c));
                }
                o.insert("verdict".into(), json!(d.verdict().as_str()));
                if let Some(c) = code {
                    o.insert("code".into(), json!(c));
                }
                if let Some(a) = approval {
                    o.insert("approval".into(), json!(a));
                }
                if let Some(a) = arguments {
                    o.insert("arguments".into(), json!(a));
                }
                Value::Object(o).to_string()
            }
            _ => {
                let mut s = format!(
                    "{level} decision surface={surface} verdict={} tool={tool:?}",
                    d.verdict().as_str()
                );
                if let Some(c) = call_id {
                    s.push_str(&format!(" call_id={c:?}"));
                }
                if let Some(c) = code {
                    s.push_str(&format!(" code={c}"));
                }
                if let Some(a) = approval {
                    s.push_str(&format!(" approval={a}"));
                }
                if let Some((trace, span)) = &ids {
                    s.push_str(&format!(" trace_id={trace} span_id={span}"));
                }
                if let Some(a) = arguments {
                    s.push_str(&format!(" arguments={a}"));
                }
                s
            }
        };
        line.push('\n');
        match &self.sink {
            LogSink::Stderr => {
                let _ = std::io::stderr().lock().write_all(line.as_bytes());
            }
            LogSink::Buffer(b) => b
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(line.as_bytes()),
        }
    }
}
