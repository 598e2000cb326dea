//! Server-sent events, read incrementally from an upstream's body: bytes in,
//! whole events out. Lines end in LF or CR LF; an event ends at a blank
//! line. Comments (`:`) are dropped; `event:` and `data:` are kept (several
//! `data:` lines joined with LF, as the SSE specification says).

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

/// The incremental reader.
#[derive(Debug)]
pub struct Reader {
    pending: Vec<u8>,
    total: usize,
    max_total: usize,
}

impl Reader {
    /// A reader that refuses a stream longer than `max_total` bytes.
    pub fn new(max_total: usize) -> Self {
        Self {
            pending: Vec::new(),
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
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some((end, next)) = block_end(&self.pending) {
            let block = self.pending.get(..end).unwrap_or_default();
            let text = std::str::from_utf8(block).map_err(|_| SseError::NotUtf8)?;
            if let Some(e) = parse_block(text) {
                events.push(e);
            }
            self.pending.drain(..next);
        }
        Ok(events)
    }

    /// Whether bytes of an unfinished event are left (a stream that ends
    /// here was cut).
    pub fn has_partial(&self) -> bool {
        self.pending.iter().any(|b| !b.is_ascii_whitespace())
    }
}

/// The end of the first event block and where the next one starts.
fn block_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while i < buf.len() {
        if buf.get(i) == Some(&b'\n') {
            // LF LF, or LF CR LF.
            match (buf.get(i + 1), buf.get(i + 2)) {
                (Some(b'\n'), _) => return Some((i, i + 2)),
                (Some(b'\r'), Some(b'\n')) => return Some((i, i + 3)),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

fn parse_block(text: &str) -> Option<Event> {
    let mut event = Event::default();
    let mut any = false;
    let mut data: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() || line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => {
                event.name = Some(value.to_owned());
                any = true;
            }
            "data" => {
                data.push(value);
                any = true;
            }
            _ => {}
        }
    }
    event.data = data.join("\n");
    any.then_some(event)
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
        assert!(!r.has_partial());
        r.push(b"data: {").unwrap();
        assert!(r.has_partial());
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
