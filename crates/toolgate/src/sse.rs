//! Server-sent events (`text/event-stream`), read the one way every front
//! end reads them: the gate's adapters, the API proxy's stream and the MCP
//! proxy's upstream all split a stream with this [`Reader`], so that what a
//! proxy releases and what the gate decides are the same events.
//!
//! # The rules
//!
//! They are the event-stream rules of the HTML specification (the
//! "interpreting an event stream" section):
//!
//! - A line ends at CR LF, at LF or at a lone CR. A CR that ends one chunk
//!   and an LF that starts the next are one line ending, however the bytes
//!   were split.
//! - One byte order mark at the start of the stream is skipped.
//! - A blank line dispatches the event, if it has data (a `data` field,
//!   even an empty one); without data it only forgets the event's name.
//! - A line that starts with `:` is a comment. Otherwise the field name is
//!   the text before the first `:` (the whole line without one) and the
//!   value the text after it, less one leading space.
//! - `data` lines of one event are joined with LF; `event` names the
//!   event; `id`, `retry` and unknown fields are ignored.
//! - At the end of the stream, [`Reader::finish`] reads a last line that
//!   has no line ending and hands back an event that no blank line ended,
//!   so that a caller can tell a cut stream from a finished one (the
//!   specification drops such an event; callers that pass events on do too).
//!
//! # Bounds
//!
//! A line longer than the reader's line bound, or an event whose data grows
//! past its event bound, is refused: [`Reader::push`] reports it once, as
//! an error in place of that event, and the reader skips the rest of the
//! event. An event name that is not UTF-8 is refused the same way. Memory
//! held between pushes is at most one line and one event.
//!
//! ```
//! use toolgate::sse::Reader;
//!
//! let mut reader = Reader::new(1024, 4096);
//! let mut events = Vec::new();
//! reader.push(b"event: delta\r", &mut events);
//! reader.push(b"\ndata: {}\r\r", &mut events);
//! let event = events.remove(0).unwrap();
//! assert_eq!(event.name.as_deref(), Some("delta"));
//! assert_eq!(event.data, b"{}");
//! assert!(reader.finish().is_none());
//! ```

use std::fmt;

/// One event of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event` field, if the event had one.
    pub name: Option<String>,
    /// The `data` lines, joined with LF.
    pub data: Vec<u8>,
}

/// Why the reader refused an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// A line grew past the reader's line bound.
    LineTooLong,
    /// An event's data grew past the reader's event bound.
    EventTooLarge,
    /// An event name that is not UTF-8.
    NotUtf8,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::LineTooLong => "an event-stream line is longer than allowed",
            Self::EventTooLarge => "an event's data is larger than allowed",
            Self::NotUtf8 => "an event name is not UTF-8",
        })
    }
}

impl std::error::Error for SseError {}

/// What [`Reader::push`] hands back: each event a push completed, or, in
/// its place, why it was refused.
pub type Item = Result<Event, SseError>;

/// The incremental, bounded reader: bytes in, events out.
#[derive(Debug)]
pub struct Reader {
    max_line: usize,
    max_event: usize,
    /// The line read so far, when it spans pushes.
    line: Vec<u8>,
    /// The last push ended with a CR: an LF that starts the next one
    /// belongs to that line ending.
    after_cr: bool,
    /// Still at the start of the stream (a byte order mark may come).
    at_start: bool,
    /// The rest of the current line is skipped (it grew past the bound).
    skip_line: bool,
    /// The rest of the current event is skipped (it was refused).
    skip_event: bool,
    name: Option<String>,
    data: Vec<u8>,
    has_data: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Reader {
    /// A reader that refuses a line longer than `max_line` bytes (its line
    /// ending not counted) and an event whose data is longer than
    /// `max_event` bytes.
    pub fn new(max_line: usize, max_event: usize) -> Self {
        Self {
            max_line,
            max_event,
            line: Vec::new(),
            after_cr: false,
            at_start: true,
            skip_line: false,
            skip_event: false,
            name: None,
            data: Vec::new(),
            has_data: false,
        }
    }

    /// Reads `bytes`, the next piece of the stream, and appends the events
    /// they complete (or why one was refused) to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<Item>) {
        if bytes.is_empty() {
            return;
        }
        if self.at_start {
            // The byte order mark may itself arrive split.
            let have = self.line.len() + bytes.len();
            let mut head = self.line.clone();
            head.extend_from_slice(bytes.get(..BOM.len().min(bytes.len())).unwrap_or_default());
            let n = head.len().min(BOM.len());
            if head.get(..n) == BOM.get(..n) && have < BOM.len() {
                self.line = head;
                return;
            }
            self.at_start = false;
            if head.starts_with(BOM) {
                let used = BOM.len() - self.line.len();
                self.line.clear();
                bytes = bytes.get(used..).unwrap_or_default();
            } else if !self.line.is_empty() {
                let held = std::mem::take(&mut self.line);
                self.push(&held, out);
            }
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (piece, rest) = bytes.split_at(end);
            let rest = match rest {
                [b'\r', b'\n', tail @ ..] => tail,
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [_, tail @ ..] => tail,
                [] => &[],
            };
            if self.line.is_empty() {
                self.end_line(piece, out);
            } else {
                self.extend_line(piece, out);
                let line = std::mem::take(&mut self.line);
                self.end_line(&line, out);
            }
            bytes = rest;
        }
        self.extend_line(bytes, out);
    }

    /// Ends the stream: reads a last line that had no line ending and
    /// returns the event no blank line ended, if one has data.
    pub fn finish(&mut self) -> Option<Event> {
        let mut out = Vec::new();
        self.after_cr = false;
        if !self.line.is_empty() || self.skip_line {
            let line = std::mem::take(&mut self.line);
            if self.at_start && line.as_slice() != BOM {
                self.at_start = false;
                self.end_line(&line, &mut out);
            } else if !self.at_start {
                self.end_line(&line, &mut out);
            }
        }
        let pending = (self.has_data && !self.skip_event).then(|| Event {
            name: self.name.take(),
            data: std::mem::take(&mut self.data),
        });
        self.reset_event();
        pending
    }

    /// Adds the part of a line that a push ended inside of.
    fn extend_line(&mut self, piece: &[u8], out: &mut Vec<Item>) {
        if self.skip_line || piece.is_empty() {
            return;
        }
        if self.line.len() + piece.len() > self.max_line {
            self.line.clear();
            self.skip_line = true;
            self.refuse(SseError::LineTooLong, out);
            return;
        }
        self.line.extend_from_slice(piece);
    }

    fn refuse(&mut self, error: SseError, out: &mut Vec<Item>) {
        if !self.skip_event {
            out.push(Err(error));
        }
        self.skip_event = true;
        self.data.clear();
        self.name = None;
    }

    fn reset_event(&mut self) {
        self.name = None;
        self.data.clear();
        self.has_data = false;
        self.skip_event = false;
    }

    /// Interprets one whole line.
    fn end_line(&mut self, line: &[u8], out: &mut Vec<Item>) {
        if std::mem::take(&mut self.skip_line) {
            return;
        }
        if line.len() > self.max_line {
            self.refuse(SseError::LineTooLong, out);
            return;
        }
        if line.is_empty() {
            if self.has_data && !self.skip_event {
                out.push(Ok(Event {
                    name: self.name.take(),
                    data: std::mem::take(&mut self.data),
                }));
            }
            self.reset_event();
            return;
        }
        if line.first() == Some(&b':') || self.skip_event {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = line.get(colon + 1..).unwrap_or_default();
                (
                    line.get(..colon).unwrap_or_default(),
                    value.strip_prefix(b" ").unwrap_or(value),
                )
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                let joined = self.data.len() + usize::from(self.has_data) + value.len();
                if joined > self.max_event {
                    self.refuse(SseError::EventTooLarge, out);
                    return;
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => match std::str::from_utf8(value) {
                Ok(name) => self.name = Some(name.to_owned()),
                Err(_) => self.refuse(SseError::NotUtf8, out),
            },
            _ => {}
        }
    }
}

/// Reads a whole body: its events (or why one was refused), then the event
/// the body ended inside of, if any.
pub fn read_all(body: &[u8], max_line: usize, max_event: usize) -> (Vec<Item>, Option<Event>) {
    let mut reader = Reader::new(max_line, max_event);
    let mut out = Vec::new();
    reader.push(body, &mut out);
    let pending = reader.finish();
    (out, pending)
}

/// Whether a body starts like an event stream (its first non-blank line is
/// an event-stream field or a comment) rather than a JSON text.
pub fn looks_like_sse(body: &[u8]) -> bool {
    let body = body.strip_prefix(BOM).unwrap_or(body);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

    use super::*;

    fn events(chunks: &[&[u8]], max_line: usize, max_event: usize) -> Vec<Item> {
        let mut r = Reader::new(max_line, max_event);
        let mut out = Vec::new();
        for c in chunks {
            r.push(c, &mut out);
        }
        out
    }

    fn data(items: &[Item]) -> Vec<String> {
        items
            .iter()
            .map(|i| match i {
                Ok(e) => String::from_utf8(e.data.clone()).unwrap(),
                Err(e) => format!("{e:?}"),
            })
            .collect()
    }

    #[test]
    fn every_line_ending_at_every_split_is_one_ending() {
        for stream in [
            &b"event: a\ndata: 1\ndata: 2\n\ndata: 3\n\n"[..],
            b"event: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata: 3\r\n\r\n",
            b"event: a\rdata: 1\rdata: 2\r\rdata: 3\r\r",
            b"\xEF\xBB\xBFevent: a\r\ndata: 1\rdata: 2\n\r\ndata: 3\r\r",
        ] {
            for cut in 0..=stream.len() {
                for cut2 in cut..=stream.len() {
                    let got = events(
                        &[&stream[..cut], &stream[cut..cut2], &stream[cut2..]],
                        64,
                        64,
                    );
                    assert_eq!(data(&got), ["1\n2", "3"], "{stream:?} cut at {cut}, {cut2}");
                    assert_eq!(got[0].as_ref().unwrap().name.as_deref(), Some("a"));
                    assert_eq!(got[1].as_ref().unwrap().name, None);
                }
            }
        }
    }

    #[test]
    fn cr_then_lf_in_the_next_push_is_not_a_blank_line() {
        let got = events(&[b"data: 1\r", b"\ndata: 2\r", b"\n\r", b"\n"], 64, 64);
        assert_eq!(data(&got), ["1\n2"]);
    }

    #[test]
    fn fields_comments_and_the_end() {
        let mut r = Reader::new(64, 64);
        let mut out = Vec::new();
        r.push(
            b": hi\nid: 7\nretry: 5\nfoo\ndata\n\nevent: lonely\n\ndata:x\n\ndata: {",
            &mut out,
        );
        assert_eq!(data(&out), ["", "x"]);
        assert_eq!(
            out[1].as_ref().unwrap().name,
            None,
            "a blank line forgets the name"
        );
        assert_eq!(r.finish().unwrap().data, b"{");
        assert!(r.finish().is_none());
        let (items, pending) = read_all(b"data: 1\n\ndata: 2", 64, 64);
        assert_eq!(data(&items), ["1"]);
        assert_eq!(pending.unwrap().data, b"2");
    }

    #[test]
    fn bounds_refuse_one_event_and_the_stream_goes_on() {
        let got = events(&[b"data: 12345678", b"9\ndata: x\n\ndata: ok\n\n"], 8, 64);
        assert_eq!(data(&got), ["LineTooLong", "ok"]);
        let got = events(&[b"data: 123456\ndata: 123456\n\ndata: ok\n\n"], 64, 10);
        assert_eq!(data(&got), ["EventTooLarge", "ok"]);
        let got = events(&[b"event: \xff\ndata: 1\n\ndata: ok\n\n"], 64, 10);
        assert_eq!(data(&got), ["NotUtf8", "ok"]);
        let mut r = Reader::new(4, 4);
        let mut out = Vec::new();
        r.push(b"data: 123456", &mut out);
        assert!(r.finish().is_none(), "a refused event is not handed back");
        assert_eq!(data(&out), ["LineTooLong"]);
    }

    #[test]
    fn a_lone_bom_or_its_start_is_not_data() {
        assert_eq!(
            data(&events(&[b"\xEF", b"\xBB", b"\xBFdata: 1\n\n"], 64, 64)),
            ["1"]
        );
        assert_eq!(
            data(&events(&[b"\xEF", b"data: 1\n\n"], 64, 64)),
            Vec::<String>::new()
        );
        let mut r = Reader::new(64, 64);
        r.push(b"\xEF\xBB", &mut Vec::new());
        assert!(r.finish().is_none());
    }

    #[test]
    fn sniffs() {
        assert!(looks_like_sse(b"\n data: x"));
        assert!(looks_like_sse(b"\xEF\xBB\xBFdata: x"));
        assert!(looks_like_sse(b"event: x"));
        assert!(looks_like_sse(b": hi"));
        assert!(!looks_like_sse(b" {\"data\":1}"));
        assert!(!looks_like_sse(b"database"));
    }
}
