//! The operator's log: every line toolgate's long-running front ends
//! (`serve`, `proxy`, `mcp`) write to standard error goes through
//! [`line()`], as text by default or, once [`use_json`] was called (the
//! config's `[telemetry] log_format = "json"`), as one JSON object per
//! line in one schema:
//!
//! | member | always | value |
//! | --- | --- | --- |
//! | `ts_ms` | yes | milliseconds since the Unix epoch |
//! | `level` | yes | `debug`, `info`, `warn` or `error` |
//! | `event` | yes | a stable name: `listening`, `stopped`, `decision`, … |
//! | `source` | yes | who wrote it: `serve`, `proxy`, `mcp`, `edge`, `jwt`, `replay` |
//! | `message` | no | the text line's words, for a person |
//! | others | no | the event's own members (a decision's `tool`, `verdict`, …) |
//!
//! The text form is the line a person reads, as it always was:
//! `toolgate: MESSAGE` (the edge), `toolgate serve: MESSAGE`,
//! `toolgate: mcp: MESSAGE`.
//! No line holds an argument value or a secret: callers pass codes,
//! names and counts, as they do today.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// How serious a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Level {
    /// Detail for debugging.
    Debug,
    /// Normal operation (listening, stopped).
    Info,
    /// Something an operator should look at; the process goes on.
    Warn,
    /// A failure (a record not written, a store error).
    Error,
}

impl Level {
    /// The `level` member's value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

static JSON: AtomicBool = AtomicBool::new(false);

/// From now on every line is a JSON object (the process's whole life:
/// a front end calls it once it has read its config).
pub fn use_json() {
    JSON.store(true, Ordering::Relaxed);
}

/// Whether lines are JSON.
pub fn is_json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// Writes one line: `event` from `source`, with `message` for a person.
pub fn line(level: Level, source: &'static str, event: &'static str, message: &str) {
    line_with(level, source, event, Some(message), Map::new());
}

/// Writes one line with the event's own `fields` (JSON: members beside
/// the schema's; text: `key=value` after the message).
pub fn line_with(
    level: Level,
    source: &'static str,
    event: &'static str,
    message: Option<&str>,
    fields: Map<String, Value>,
) {
    let mut text = if is_json() {
        let mut o = Map::new();
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        o.insert("ts_ms".into(), Value::from(ms));
        o.insert("level".into(), Value::from(level.as_str()));
        o.insert("event".into(), Value::from(event));
        o.insert("source".into(), Value::from(source));
        if let Some(m) = message {
            o.insert("message".into(), Value::from(m));
        }
        for (k, v) in fields {
            o.entry(k).or_insert(v);
        }
        Value::Object(o).to_string()
    } else {
        let mut s = match source {
            "serve" => "toolgate serve: ".to_owned(),
            "edge" | "jwt" => "toolgate: ".to_owned(),
            other => format!("toolgate: {other}: "),
        };
        if let Some(m) = message {
            s.push_str(m);
        } else {
            s.push_str(event);
        }
        for (k, v) in &fields {
            match v {
                Value::String(t) => s.push_str(&format!(" {k}={t:?}")),
                other => s.push_str(&format!(" {k}={other}")),
            }
        }
        s
    };
    text.push('\n');
    write(text.as_bytes());
}

fn write(bytes: &[u8]) {
    let _ = std::io::stderr().lock().write_all(bytes);
}
