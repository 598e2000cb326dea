//! Server-sent events framing (the WHATWG `text/event-stream` rules), bounded.
//!
//! Lines end at CRLF, LF or CR. `data:` lines of one event are joined with
//! `\n`; a blank line dispatches the event when it has data. `event:` names
//! the event; `id:`, `retry:` and unknown fields are ignored; lines that start
//! with `:` are comments. An event still pending at the end of the body is
//! dispatched too, marked `terminated: false`, so that a stream whose last
//! payload was cut can be told from one that merely lacks a final blank line.

use toolgate_json::{ParseOptions, Value};

use super::error::{Error, ErrorCode};
use super::walk;

/// One dispatched event.
pub(crate) struct Event {
    /// Position among the dispatched events: the first token of pointers.
    pub(crate) index: usize,
    /// The `event:` field, if any.
    pub(crate) name: Option<String>,
    /// The joined `data:` lines.
    pub(crate) data: Vec<u8>,
    /// Whether a blank line ended the event.
    pub(crate) terminated: bool,
}

/// What an event carries.
pub(crate) enum Payload<'e> {
    /// `data: [DONE]` (OpenAI chat's terminal event).
    Done,
    /// A strict JSON payload.
    Json(Value<'e>),
    /// The final event was cut inside its JSON: the stream is truncated.
    Cut,
}

impl Event {
    /// `/<index>`: the pointer of the event's payload.
    pub(crate) fn pointer(&self) -> String {
        walk::idx("", self.index)
    }

    /// Parses the payload strictly.
    pub(crate) fn payload(&self, options: &ParseOptions) -> Result<Payload<'_>, Error> {
        if self.data == b"[DONE]" {
            return Ok(Payload::Done);
        }
        match options.parse(&self.data) {
            Ok(v) => Ok(Payload::Json(v)),
            Err(e) if !self.terminated && e.code() == toolgate_json::ErrorCode::Truncated => {
                Ok(Payload::Cut)
            }
            Err(e) => Err(Error::json(e, &self.pointer())),
        }
    }
}

/// Whether the body starts like an event stream (its first non-blank line is
/// an SSE field or a comment) rather than a JSON text.
pub(crate) fn looks_like_sse(body: &[u8]) -> bool {
    let start = body
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .unwrap_or(body.len());
    let rest = body.get(start..).unwrap_or_default();
    [&b"data:"[..], b"event:", b"id:", b"retry:", b":"]
        .iter()
        .any(|p| rest.starts_with(p))
        || rest == b"data"
        || rest.starts_with(b"data\n")
        || rest.starts_with(b"data\r")
}

/// Splits the body into events; at most `max_events` of them.
pub(crate) fn split(body: &[u8], max_events: usize) -> Result<Vec<Event>, Error> {
    let mut events = Vec::new();
    let mut name: Option<String> = None;
    let mut data: Vec<u8> = Vec::new();
    let mut has_data = false;
    let mut pos = 0;
    while pos < body.len() {
        let rest = body.get(pos..).unwrap_or_default();
        let end = rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        let line = rest.get(..end).unwrap_or_default();
        let mut next = pos + end;
        if body.get(next) == Some(&b'\r') && body.get(next + 1) == Some(&b'\n') {
            next += 2;
        } else if next < body.len() {
            next += 1;
        }
        pos = next;
        if line.is_empty() {
            if has_data {
                push(&mut events, &mut name, &mut data, true, max_events)?;
                has_data = false;
            } else {
                name = None;
            }
            continue;
        }
        if line.first() == Some(&b':') {
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = line.get(colon + 1..).unwrap_or_default();
                let value = value.strip_prefix(b" ").unwrap_or(value);
                (line.get(..colon).unwrap_or_default(), value)
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if has_data {
                    data.push(b'\n');
                }
                data.extend_from_slice(value);
                has_data = true;
            }
            b"event" => {
                let text = std::str::from_utf8(value).map_err(|_| {
                    Error::new(ErrorCode::InvalidStream, walk::idx("", events.len()))
                })?;
                name = Some(text.to_owned());
            }
            _ => {}
        }
    }
    if has_data {
        push(&mut events, &mut name, &mut data, false, max_events)?;
    }
    Ok(events)
}

fn push(
    events: &mut Vec<Event>,
    name: &mut Option<String>,
    data: &mut Vec<u8>,
    terminated: bool,
    max_events: usize,
) -> Result<(), Error> {
    if events.len() >= max_events {
        return Err(Error::new(
            ErrorCode::TooManyEvents,
            walk::idx("", events.len()),
        ));
    }
    events.push(Event {
        index: events.len(),
        name: name.take(),
        data: std::mem::take(data),
        terminated,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_events() {
        let body = b": comment\r\nevent: a\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\nid: 3\ndata:[DONE]\n\nevent: lonely\n\ndata: {\"y\"";
        let events = split(body, 10).unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].name.as_deref(), Some("a"));
        assert_eq!(events[0].data, b"{\"x\":\n1}");
        assert!(events[0].terminated);
        assert_eq!(events[1].data, b"[DONE]");
        assert!(events[2].name.is_none());
        assert!(!events[2].terminated);
        let options = ParseOptions::new();
        assert!(matches!(events[1].payload(&options), Ok(Payload::Done)));
        assert!(matches!(events[2].payload(&options), Ok(Payload::Cut)));
    }

    #[test]
    fn bounds_events() {
        let body = "data: 1\n\n".repeat(5);
        assert_eq!(
            split(body.as_bytes(), 4).err().map(|e| e.code()),
            Some(ErrorCode::TooManyEvents)
        );
        assert_eq!(split(body.as_bytes(), 5).map(|e| e.len()).ok(), Some(5));
    }

    #[test]
    fn sniffs() {
        assert!(looks_like_sse(b"\n data: x"));
        assert!(looks_like_sse(b"event: x"));
        assert!(looks_like_sse(b": hi"));
        assert!(!looks_like_sse(b" {\"data\":1}"));
        assert!(!looks_like_sse(b"database"));
    }
}
