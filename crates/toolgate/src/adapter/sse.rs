//! A response body's server-sent events, as the adapters see them: the
//! events the one event-stream reader ([`crate::sse`]) splits, numbered.
//! An event still pending at the end of the body is kept too, marked
//! `terminated: false`, so that a stream whose last payload was cut can be
//! told from one that merely lacks a final blank line.

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

pub(crate) use crate::sse::looks_like_sse;

/// Splits the body into events with the one event-stream reader
/// ([`crate::sse`]); at most `max_events` of them. The body is bounded by
/// the caller, so lines and events are bounded by it.
pub(crate) fn split(body: &[u8], max_events: usize) -> Result<Vec<Event>, Error> {
    let (items, pending) = crate::sse::read_all(body, usize::MAX, usize::MAX);
    let mut events = Vec::new();
    for item in items {
        match item {
            Ok(e) => push(&mut events, e, true, max_events)?,
            Err(_) => {
                return Err(Error::new(
                    ErrorCode::InvalidStream,
                    walk::idx("", events.len()),
                ))
            }
        }
    }
    if let Some(e) = pending {
        push(&mut events, e, false, max_events)?;
    }
    Ok(events)
}

fn push(
    events: &mut Vec<Event>,
    event: crate::sse::Event,
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
        name: event.name,
        data: event.data,
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
}
