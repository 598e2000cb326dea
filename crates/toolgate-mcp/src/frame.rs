//! The frame layer: one JSON-RPC message per line (MCP stdio), each read by
//! the strict parser before anything looks at it.
//!
//! [`read_line`] takes one line off a stream without ever holding more than
//! the frame cap (a longer line is consumed to its end and reported
//! [`Line::TooLong`]). [`decode`] parses a line strictly (toolgate-json:
//! UTF-8 only, duplicate keys refused after unescaping, finite numbers,
//! bounded depth) and sorts it into a [`Message`]; a frame it refuses is a
//! [`FrameError`] with the JSON-RPC code to answer with and, when it can be
//! told without trusting the refused text, the request id to answer.

use std::borrow::Cow;
use std::fmt;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};
use toolgate_json::{canonical, Limit, Limits, Object, ParseOptions, Value};

/// JSON-RPC `-32700`: the frame is not (strict) JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC `-32600`: the frame is JSON but not a JSON-RPC message.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC `-32601`: the method is not served (or not passed on).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC `-32602`: the parameters of a request are malformed.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC `-32603`: the proxy could not answer.
pub const INTERNAL_ERROR: i64 = -32603;

/// One line read by [`read_line`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Line {
    /// A line within the cap, without its `\n` (or `\r\n`).
    Frame(Vec<u8>),
    /// A line longer than the cap: consumed and dropped.
    TooLong,
}

/// Reads the next non-empty line of `reader`, at most `max` bytes (the line
/// break not counted); `None` at the end of the stream. A last line without
/// a line break is a line. Memory is bounded by `max` whatever the input.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    loop {
        let mut line: Vec<u8> = Vec::new();
        let mut too_long = false;
        let mut any = false;
        loop {
            let available = reader.fill_buf().await?;
            if available.is_empty() {
                if !any {
                    return Ok(None);
                }
                break;
            }
            any = true;
            let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (available.get(..at).unwrap_or_default(), Some(at + 1)),
                None => (available, None),
            };
            if !too_long {
                if line.len().saturating_add(chunk.len()) > max.saturating_add(1) {
                    // One byte of slack for a `\r` before the `\n`.
                    too_long = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(available.len());
            reader.consume(used);
            if done.is_some() {
                break;
            }
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if too_long || line.len() > max {
            return Ok(Some(Line::TooLong));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            // Blank lines carry no message.
            continue;
        }
        return Ok(Some(Line::Frame(line)));
    }
}

/// A JSON-RPC request id: a string or a number, kept as its canonical JSON
/// text (the key pending requests are found by) and as the value to echo.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestId(String);

impl RequestId {
    /// The id of a member value: strings and numbers only (JSON-RPC 2.0).
    pub fn from_value(v: &Value<'_>) -> Option<Self> {
        match v {
            Value::String(_) | Value::Number(_) => Some(Self(canonical::to_string(v))),
            _ => None,
        }
    }

    /// The id as JSON text (`3`, `"abc"`).
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// The id as a value, for an answer.
    pub fn to_value(&self) -> Value<'static> {
        toolgate_json::from_str(&self.0)
            .map(Value::into_owned)
            .unwrap_or(Value::Null)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A message, strictly parsed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A request: a method and an id.
    Request {
        /// The id.
        id: RequestId,
        /// The method, such as `tools/call`.
        method: String,
        /// The whole message.
        value: Value<'static>,
    },
    /// A notification: a method, no id.
    Notification {
        /// The method.
        method: String,
    },
    /// A response: an id and a `result` or an `error`.
    Response {
        /// The id.
        id: RequestId,
        /// The whole message.
        value: Value<'static>,
    },
}

/// A refused frame: the JSON-RPC code to answer with, the id to answer (when
/// the frame is a request whose id can be told), and a message naming only
/// the rule broken (never the frame's content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    code: i64,
    id: Option<RequestId>,
    reason: &'static str,
}

impl FrameError {
    fn new(code: i64, id: Option<RequestId>, reason: &'static str) -> Self {
        Self { code, id, reason }
    }

    /// A frame longer than the cap.
    pub fn too_long() -> Self {
        Self::new(PARSE_ERROR, None, "frame_too_large")
    }

    /// The JSON-RPC code to answer with.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The id of the refused request, when the frame is one and its id can
    /// be told.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The rule the frame broke: a strict-parse code such as
    /// `duplicate_key` or `invalid_utf8`, or `frame_too_large`,
    /// `not_a_message`, `batch_not_supported`.
    pub fn reason(&self) -> &'static str {
        self.reason
    }

    /// The JSON-RPC error answer (`id` null when unknown), one line.
    pub fn answer(&self) -> String {
        error_answer(
            self.id.as_ref(),
            self.code,
            &format!("refused by toolgate: {}", self.reason),
        )
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "frame refused: {}", self.reason)
    }
}

impl std::error::Error for FrameError {}

/// The parse options for frames of at most `max_frame_bytes`: every other
/// limit at its default, strings as long as a frame.
pub fn parse_options(max_frame_bytes: usize) -> ParseOptions {
    let bytes = max_frame_bytes.clamp(1, Limit::InputBytes.ceiling());
    let limits = Limits::new()
        .set(Limit::InputBytes, bytes)
        .and_then(|l| l.set(Limit::StringBytes, bytes))
        .unwrap_or_default();
    ParseOptions::new().with_limits(limits)
}

/// Parses one frame strictly and sorts it. Never panics.
pub fn decode(frame: &[u8], options: &ParseOptions) -> Result<Message, FrameError> {
    let value = match options.parse(frame) {
        Ok(v) => v.into_owned(),
        Err(e) => {
            return Err(FrameError::new(
                PARSE_ERROR,
                lenient_request_id(frame),
                e.code().as_str(),
            ))
        }
    };
    let o = match &value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(FrameError::new(
                INVALID_REQUEST,
                None,
                "batch_not_supported",
            ))
        }
        _ => return Err(FrameError::new(INVALID_REQUEST, None, "not_a_message")),
    };
    let id = o.get("id").and_then(RequestId::from_value);
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(FrameError::new(INVALID_REQUEST, id, "not_a_message"));
    }
    match (o.get("method"), o.get("id")) {
        (Some(Value::String(m)), None) => Ok(Message::Notification {
            method: m.to_string(),
        }),
        (Some(Value::String(m)), Some(_)) => match id {
            Some(id) => Ok(Message::Request {
                id,
                method: m.to_string(),
                value,
            }),
            None => Err(FrameError::new(INVALID_REQUEST, None, "not_a_message")),
        },
        (None, Some(_)) if o.contains_key("result") || o.contains_key("error") => match id {
            Some(id) => Ok(Message::Response { id, value }),
            None => Err(FrameError::new(INVALID_REQUEST, None, "not_a_message")),
        },
        _ => Err(FrameError::new(INVALID_REQUEST, id, "not_a_message")),
    }
}

/// A JSON-RPC error answer, one line of canonical JSON.
pub fn error_answer(id: Option<&RequestId>, code: i64, message: &str) -> String {
    let mut error = Object::new();
    error.insert("code", number(code));
    error.insert("message", Value::String(Cow::Owned(message.to_owned())));
    let mut o = Object::new();
    o.insert("jsonrpc", Value::String(Cow::Borrowed("2.0")));
    o.insert("id", id.map_or(Value::Null, RequestId::to_value));
    o.insert("error", Value::Object(error));
    canonical::to_string(&Value::Object(o))
}

/// A JSON-RPC result answer, one line of canonical JSON.
pub fn result_answer(id: &RequestId, result: Value<'_>) -> String {
    let mut o = Object::new();
    o.insert("jsonrpc", Value::String(Cow::Borrowed("2.0")));
    o.insert("id", id.to_value());
    o.insert("result", result);
    canonical::to_string(&Value::Object(o))
}

/// A JSON number value of an integer.
pub(crate) fn number(n: i64) -> Value<'static> {
    toolgate_json::Number::from_lexeme(&n.to_string()).map_or(Value::Null, Value::Number)
}

/// The id of a frame the strict parser refused, read leniently only to
/// address the error answer (never to forward anything): the top-level
/// `id` of an object that also has a `method`, when it is a string or a
/// number and appears once. Anything doubtful (a duplicated `id`, an id of
/// another type, text that is not JSON even leniently) gives `None`, and
/// the answer's id is null.
fn lenient_request_id(frame: &[u8]) -> Option<RequestId> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

    #[derive(Default)]
    struct Top {
        id: Option<LenientId>,
        ids: usize,
        method: bool,
    }
    enum LenientId {
        Str(String),
        Num(String),
    }
    struct IdSeed;
    impl<'de> serde::de::DeserializeSeed<'de> for IdSeed {
        type Value = Option<LenientId>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            // Any other shape is no id.
            d.deserialize_any(AnyId)
        }
    }
    struct AnyId;
    impl<'de> Visitor<'de> for AnyId {
        type Value = Option<LenientId>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an id")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(LenientId::Str(v.to_owned())))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(LenientId::Num(v.to_string())))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(LenientId::Num(v.to_string())))
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }
    struct TopVisitor;
    impl<'de> Visitor<'de> for TopVisitor {
        type Value = Top;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
            let mut top = Top::default();
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                match key.as_ref() {
                    "id" => {
                        top.ids = top.ids.saturating_add(1);
                        top.id = map.next_value_seed(IdSeed)?;
                    }
                    "method" => {
                        top.method = true;
                        map.next_value::<IgnoredAny>()?;
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(top)
        }
    }
    let text = std::str::from_utf8(frame).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de.deserialize_map(TopVisitor).ok()?;
    if top.ids != 1 || !top.method {
        return None;
    }
    let value = match top.id? {
        LenientId::Str(s) => Value::String(Cow::Owned(s)),
        LenientId::Num(n) => Value::Number(toolgate_json::Number::from_lexeme(&n).ok()?),
    };
    RequestId::from_value(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ParseOptions {
        parse_options(1024)
    }

    #[test]
    fn sorts_requests_notifications_and_responses() {
        let m = decode(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            &opts(),
        )
        .unwrap();
        assert!(matches!(m, Message::Request { ref method, .. } if method == "tools/list"));
        let m = decode(
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &opts(),
        )
        .unwrap();
        assert!(matches!(m, Message::Notification { .. }));
        let m = decode(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#, &opts()).unwrap();
        assert!(matches!(m, Message::Response { ref id, .. } if id.as_json() == "\"a\""));
    }

    #[test]
    fn a_duplicate_key_is_refused_with_the_request_id() {
        let e = decode(
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"/tmp/ok","path":"/etc/shadow"}}}"#,
            &opts(),
        )
        .unwrap_err();
        assert_eq!(e.code(), PARSE_ERROR);
        assert_eq!(e.reason(), "duplicate_key");
        assert_eq!(
            e.answer(),
            r#"{"error":{"code":-32700,"message":"refused by toolgate: duplicate_key"},"id":8,"jsonrpc":"2.0"}"#
        );
    }

    #[test]
    fn a_doubtful_id_is_not_answered() {
        for frame in [
            &br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}"#[..],
            br#"{"jsonrpc":"2.0","id":1.5,"method":"x","a":1,"a":2}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"a":1,"a":2}"#,
            b"\xff{}",
        ] {
            let e = decode(frame, &opts()).unwrap_err();
            assert_eq!(e.id(), None, "{frame:?}");
        }
    }

    #[test]
    fn non_utf8_batches_and_non_messages_are_refused() {
        let e = decode(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}",
            &opts(),
        )
        .unwrap_err();
        assert_eq!(e.reason(), "invalid_utf8");
        let e = decode(br#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#, &opts()).unwrap_err();
        assert_eq!(e.reason(), "batch_not_supported");
        let e = decode(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, &opts()).unwrap_err();
        assert_eq!((e.code(), e.reason()), (INVALID_REQUEST, "not_a_message"));
        assert_eq!(e.id().map(RequestId::as_json), Some("1"));
        let e = decode(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, &opts()).unwrap_err();
        assert_eq!(e.reason(), "not_a_message");
    }

    #[tokio::test]
    async fn lines_are_capped_without_holding_more_than_the_cap() {
        let input = b"{\"a\":1}\r\n\n0123456789abcdef\nlast".to_vec();
        let mut r = tokio::io::BufReader::with_capacity(4, &input[..]);
        assert_eq!(
            read_line(&mut r, 8).await.unwrap(),
            Some(Line::Frame(b"{\"a\":1}".to_vec()))
        );
        assert_eq!(read_line(&mut r, 8).await.unwrap(), Some(Line::TooLong));
        assert_eq!(
            read_line(&mut r, 8).await.unwrap(),
            Some(Line::Frame(b"last".to_vec()))
        );
        assert_eq!(read_line(&mut r, 8).await.unwrap(), None);
        // Exactly at the cap passes; one byte more does not.
        let mut r = &b"12345678\n123456789\n"[..];
        assert_eq!(
            read_line(&mut r, 8).await.unwrap(),
            Some(Line::Frame(b"12345678".to_vec()))
        );
        assert_eq!(read_line(&mut r, 8).await.unwrap(), Some(Line::TooLong));
    }
}
