//! The three front ends accept and refuse the same event-stream line
//! endings: the gate's adapters (what `toolgate serve`, `check` and the
//! proxies' decisions read), the API proxy's stream (what it passes on) and
//! this proxy's HTTP upstream (what reaches the MCP client) deliver the same
//! events from the same bytes, however they are split into chunks. CR LF,
//! LF and a lone CR end a line (a CR at a chunk's end and an LF at the next
//! one's start are one ending); NEL, LS, PS, VT and FF do not, and an event
//! that no blank line ends is never delivered.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use toolgate::{AdapterOptions, Format};

use super::SseLines;

const CALL: &str = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]},"finish_reason":null}]}"#;
const STOP: &str = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#;

/// A chat stream whose lines end with `eol` and whose events end with
/// `blank` (the ending of the empty line).
fn chat(eol: &str, blank: &str) -> String {
    let mut s = format!(": keep-alive{eol}{blank}");
    for data in [CALL, STOP, "[DONE]"] {
        s.push_str(&format!("event: chunk{eol}data: {data}{eol}{blank}"));
    }
    s
}

/// The events the API proxy passes on.
fn proxy_events(chunks: &[&[u8]]) -> Vec<String> {
    let mut r = toolgate_proxy::SseReader::new(1 << 16);
    let mut out = Vec::new();
    for c in chunks {
        out.extend(r.push(c).unwrap().into_iter().map(|e| e.data));
    }
    out
}

/// The messages this proxy's upstream hands on.
fn mcp_events(chunks: &[&[u8]]) -> Vec<String> {
    let mut r = SseLines::new(1 << 16);
    chunks.iter().flat_map(|c| r.push(c)).collect()
}

/// The events the gate's adapters read (its one reader, whole body), and
/// whether an event was left that no blank line ended.
fn gate_events(body: &[u8]) -> (Vec<String>, bool) {
    let (items, pending) = toolgate::sse::read_all(body, usize::MAX, usize::MAX);
    let events = items
        .into_iter()
        .map(|i| String::from_utf8(i.unwrap().data).unwrap())
        .collect();
    (events, pending.is_some())
}

/// Every split of `body` into two chunks, and into three with a middle
/// chunk of one or two bytes, agrees with `expected` at all three front
/// ends.
fn agree(body: &[u8], expected: &[&str], cut: bool) {
    let (gate, pending) = gate_events(body);
    assert_eq!(gate, expected, "gate: {body:?}");
    assert_eq!(pending, cut, "gate: {body:?}");
    for a in 0..=body.len() {
        for b in a..=body.len().min(a + 2) {
            let chunks = [&body[..a], &body[a..b], &body[b..]];
            assert_eq!(
                proxy_events(&chunks),
                expected,
                "proxy: {body:?} at {a}, {b}"
            );
            assert_eq!(mcp_events(&chunks), expected, "mcp: {body:?} at {a}, {b}");
        }
    }
}

#[test]
fn the_front_ends_accept_the_same_line_endings() {
    let endings = [
        ("\n", "\n"),
        ("\r\n", "\r\n"),
        ("\r", "\r"),
        ("\r\n", "\r"),
        ("\n", "\r\n"),
        ("\n", "\r"),
    ];
    // (A CR that ends a line and an LF after it are one ending, not a
    // line and a blank line.)
    for (eol, blank) in endings {
        let body = chat(eol, blank);
        agree(body.as_bytes(), &[CALL, STOP, "[DONE]"], false);
        let envelope = AdapterOptions::default()
            .read(body.as_bytes(), Format::Auto)
            .unwrap();
        assert_eq!(envelope.calls.len(), 1, "{body:?}");
        assert_eq!(envelope.calls[0].tool_name(), "lookup", "{body:?}");
    }
}

#[test]
fn the_front_ends_refuse_the_same_non_endings() {
    // Characters other specifications call line breaks are text here.
    for not_an_ending in ["\u{85}", "\u{2028}", "\u{2029}", "\u{b}", "\u{c}", "\0"] {
        let body = format!("data: 1{not_an_ending}data: 2\n\n");
        let one = format!("1{not_an_ending}data: 2");
        agree(body.as_bytes(), &[one.as_str()], false);
    }
    // An event that no blank line ends is not delivered, whichever ending
    // its last line has.
    for tail in ["", "\n", "\r", "\r\n"] {
        let body = format!("data: 1\n\ndata: 2{tail}");
        agree(body.as_bytes(), &["1"], true);
    }
    // A blank line without data delivers nothing.
    agree(b"event: a\r\n\r\n\r\r\n\n", &[], false);
}
