//! Server-sent events, read incrementally from an upstream's body: bytes in,
//! whole events out, by the gate's one event-stream reader
//! ([`toolgate::sse`]: lines end at CR LF, LF or a lone CR, however the
//! bytes are split), so that the events the proxy passes on are the events
//! the gate decides.

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event:` name, if any.
    pub name: Option<String>,
    /// The `data:` lines, joined with LF.
    pub data: String,
}

impl Event {
    /// The event as written on the wire, ending in a blank line.
    pub fn to_wire(&self) -> String {
        let mut out = String::new();
        if let Some(n) = &self.name {
            out.push_str("event: ");
            out.push_str(n);
            out.push('\n');
        }
        for line in self.data.split('\n') {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// Why a stream could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// An event, or the stream, grew past its cap.
    TooLarge,
    /// Bytes that are not UTF-8.
    NotUtf8,
}

/// The incremental reader: the one event-stream reader of the gate
/// ([`toolgate::sse::Reader`]), whose events the proxy passes on as text,
/// with a cap on the whole stream.
#[derive(Debug)]
pub struct Reader {
    inner: toolgate::sse::Reader,
    total: usize,
    max_total: usize,
}

impl Reader {
    /// A reader that refuses a stream longer than `max_total` bytes.
    pub fn new(max_total: usize) -> Self {
        Self {
            inner: toolgate::sse::Reader::new(max_total, max_total),
            total: 0,
            max_total,
        }
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, SseError> {
        self.total = self.total.saturating_add(bytes.len());
        if self.total > self.max_total {
            return Err(SseError::TooLarge);
        }
        let mut items = Vec::new();
        self.inner.push(bytes, &mut items);
        items
            .into_iter()
            .map(|item| match item {
                Ok(e) => Ok(Event {
                    name: e.name,
                    data: String::from_utf8(e.data).map_err(|_| SseError::NotUtf8)?,
                }),
                Err(toolgate::sse::SseError::NotUtf8) => Err(SseError::NotUtf8),
                Err(_) => Err(SseError::TooLarge),
            })
            .collect()
    }

    /// Ends the stream: whether an event with data was left without the
    /// blank line that ends it (which the reader never delivers).
    pub fn has_partial(&mut self) -> bool {
        self.inner.finish().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_pushes_and_line_endings() {
        let mut r = Reader::new(1 << 20);
        assert!(r.push(b"event: a\r\ndata: {\"x\"").unwrap().is_empty());
        let got = r.push(b":1}\r\n\r\n: comment\n\ndata: [DONE]\n\n").unwrap();
        assert_eq!(
            got,
            vec![
                Event {
                    name: Some("a".into()),
                    data: "{\"x\":1}".into()
                },
                Event {
                    name: None,
                    data: "[DONE]".into()
                }
            ]
        );
        let got = r.push(b"data: 1\r").unwrap();
        assert!(got.is_empty());
        let got = r.push(b"\ndata: 2\r\r").unwrap();
        let one = Event {
            name: None,
            data: "1\n2".into(),
        };
        assert_eq!(
            got,
            vec![one],
            "a CR at a push's end and an LF next: one ending"
        );
    }

    #[test]
    fn caps_and_encoding_are_enforced() {
        let mut r = Reader::new(8);
        assert_eq!(r.push(b"data: 123456\n\n"), Err(SseError::TooLarge));
        let mut r = Reader::new(64);
        assert_eq!(r.push(b"data: \xff\n\n"), Err(SseError::NotUtf8));
    }

    #[test]
    fn wire_form_round_trips() {
        let e = Event {
            name: Some("message_stop".into()),
            data: "{}".into(),
        };
        let mut r = Reader::new(1 << 10);
        assert_eq!(r.push(e.to_wire().as_bytes()).unwrap(), vec![e]);
    }
}
