//! Provider adapters: one raw response body in, one [`Envelope`] out.
//!
//! An adapter knows where a provider puts tool calls, their arguments and its
//! finish signal; the gate's stages know nothing about providers. The body is
//! read with the strict parser ([`toolgate_json`]) as a whole, so a duplicate
//! member name anywhere in it, in the envelope or inside an inline arguments
//! object, refuses the body ([`ErrorCode::BodyInvalidJson`] with the parser's
//! `duplicate_key` and the pointer of the object) before any value is built.
//!
//! ```
//! use toolgate::adapter::{read, Arguments, Format};
//!
//! let body = br#"{"id":"msg_1","type":"message","role":"assistant","content":[
//!   {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
//!   "stop_reason":"tool_use"}"#;
//! let envelope = read(body, Format::Auto)?;
//! assert_eq!(envelope.format, Format::Anthropic);
//! assert!(envelope.finish.is_complete());
//! let call = &envelope.calls[0];
//! assert_eq!(call.name, "get_weather");
//! assert_eq!(call.arguments_pointer, "/content/0/input");
//! assert!(matches!(call.arguments, Arguments::Value(_)));
//!
//! let dup = br#"{"id":"msg_2","type":"message","role":"assistant","content":[
//!   {"type":"tool_use","id":"toolu_2","name":"transfer","input":{"amount":10,"amount":10000}}],
//!   "stop_reason":"tool_use"}"#;
//! let err = read(dup, Format::Auto).unwrap_err();
//! assert_eq!(err.code().as_str(), "body_invalid_json");
//! assert_eq!(err.json_error().map(|e| e.code().as_str()), Some("duplicate_key"));
//! assert_eq!(err.pointer(), "/content/0/input");
//! # Ok::<(), toolgate::adapter::Error>(())
//! ```
//!
//! # Formats
//!
//! | [`Format`] | body | calls | arguments |
//! |---|---|---|---|
//! | `OpenAiChat` (also DeepSeek) | `chat.completion` or its SSE chunks | `choices[i].message.tool_calls[j]` (`type: function`; `custom` tools; the deprecated `function_call`) | `function.arguments`, a string |
//! | `OpenAiResponses` | `response` or its SSE events | `output[k]` with `type: function_call` (and `custom_tool_call`) | `arguments`, a string |
//! | `Anthropic` | `message` or its SSE events | `content[k]` with `type: tool_use` | `input`, an object (a string when streamed) |
//! | `Gemini` | `GenerateContentResponse`, an array of them, or their SSE chunks | `candidates[c].content.parts[p].functionCall` | `args`, an object |
//! | `Mcp` | one JSON-RPC message or a batch | a request with `method: "tools/call"` | `params.arguments`, an object |
//!
//! [`Format::Auto`] sniffs the body: an event stream when its first non-blank
//! line is an SSE field, JSON otherwise; then the shape picks the provider
//! (`jsonrpc`, `choices`, `object: "response"`, `type: "message"`,
//! `candidates`; for streams the first classifiable event). No match is
//! `unknown_format`, several are `ambiguous_format`, a request body is
//! `not_a_response`, a bare provider error object is `provider_error`.
//!
//! # Decisions this module makes
//!
//! - **Calls come only from the structured fields.** Text (`content`,
//!   `reasoning_content`, `refusal`, text and thinking blocks, text parts) is
//!   scanned for tool-call markup, which yields a [`Finding`], never a call.
//! - **Several choices** (`n > 1`, several Gemini candidates): every choice
//!   is read; each call records its [`ProposedCall::choice`], calls are in
//!   choice order, and [`Envelope::finish`] is the worst finish of all
//!   choices, so one truncated choice holds back the calls of every choice.
//! - **Arguments are reported as they are**: [`Arguments::Value`] for an
//!   inline value (an object, or `null`, an array, …, which the gate denies
//!   `not_object`), [`Arguments::Text`] for a string to be parsed strictly by
//!   the gate, [`Arguments::EmptyText`] for `""` (read as `{}`),
//!   [`Arguments::Absent`] when the format allows leaving them out (Gemini
//!   `args`, MCP `params.arguments`; read as `{}`).
//! - **Names are exact**: the JSON string after unescaping, no trimming, no
//!   case folding, no normalisation (`"ref\u0075nd"` is `refund`).
//! - **Streams** are assembled as the official SDKs do, but conflicts are
//!   errors instead of silent merges: an OpenAI chat index reused with a new
//!   id or a second name is `stream_protocol` (never `a` with `{}{"x":1}`); a
//!   Responses `.done` or `output_item.done` that differs from the joined
//!   deltas is `stream_mismatch`. A stream without its terminal event
//!   (`[DONE]`, `response.completed`/`.incomplete`/`.failed`, `message_stop`;
//!   for Gemini a last chunk with a `finishReason`) is
//!   [`Finish::Truncated`] with reason `stream_truncated`; its calls are
//!   still listed so that each can be denied. Pointers into a stream treat
//!   the body as the array of its events' payloads: `/3/delta` is inside the
//!   fourth event.
//! - **Bounds**: the strict parser's limits for the body and each event
//!   ([`AdapterOptions::with_parse_options`]), stream bytes, stream events,
//!   calls per response and findings per response.

mod anthropic;
mod detect;
mod error;
mod finding;
mod finish;
mod gemini;
mod leak;
mod mcp;
mod openai_chat;
mod parsed;
mod responses;
mod span;
mod sse;
mod walk;

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use toolgate_json::{Object, ParseOptions, Value};

pub use self::error::{Error, ErrorCode};
pub use self::finding::{Finding, FindingCode};
pub use self::finish::Finish;
pub use self::parsed::ParsedBody;

use self::finding::Findings;

/// Reads one response body with the default options.
pub fn read(body: &[u8], format: Format) -> Result<Envelope, Error> {
    AdapterOptions::new().read(body, format)
}

/// A provider's wire format, or [`Format::Auto`] to detect it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Format {
    /// Detect the format from the body.
    #[default]
    Auto,
    /// OpenAI Chat Completions, and compatible APIs such as DeepSeek's.
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
    /// MCP JSON-RPC messages (`tools/call` requests).
    Mcp,
}

impl Format {
    /// Every format, `Auto` first.
    pub const ALL: [Format; 6] = [
        Self::Auto,
        Self::OpenAiChat,
        Self::OpenAiResponses,
        Self::Anthropic,
        Self::Gemini,
        Self::Mcp,
    ];

    /// The stable name: `auto`, `openai`, `responses`, `anthropic`, `gemini`,
    /// `mcp`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::OpenAiChat => "openai",
            Self::OpenAiResponses => "responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name given to [`Format::from_str`] is not a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormatName;

impl fmt::Display for UnknownFormatName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "unknown format name: expected one of auto, openai, responses, anthropic, gemini, mcp",
        )
    }
}

impl std::error::Error for UnknownFormatName {}

impl FromStr for Format {
    type Err = UnknownFormatName;

    /// Accepts the stable names and the aliases `openai-chat`, `deepseek`,
    /// `openai-responses`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "auto" => Self::Auto,
            "openai" | "openai-chat" | "deepseek" => Self::OpenAiChat,
            "responses" | "openai-responses" => Self::OpenAiResponses,
            "anthropic" => Self::Anthropic,
            "gemini" => Self::Gemini,
            "mcp" => Self::Mcp,
            _ => return Err(UnknownFormatName),
        })
    }
}

/// What one response proposes: its calls, how it finished, and what was
/// noticed on the way.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Envelope {
    /// The format the body was read as (never [`Format::Auto`]).
    pub format: Format,
    /// Whether the body was an event stream.
    pub streamed: bool,
    /// The proposed calls, in order (choice, then position).
    pub calls: Vec<ProposedCall>,
    /// How the turn ended; the worst finish over all choices.
    pub finish: Finish,
    /// Response-level findings (tool-call markup in text, server-side calls,
    /// …), in the order found.
    pub findings: Vec<Finding>,
}

/// One proposed tool call, exactly as the provider sent it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProposedCall {
    /// Position in [`Envelope::calls`].
    pub index: usize,
    /// The choice (OpenAI) or candidate (Gemini) it belongs to; 0 elsewhere.
    pub choice: usize,
    /// A function call, or a custom tool's free-text call.
    pub kind: CallKind,
    /// The provider's call id (`call_…`, `toolu_…`, the Responses `call_id`,
    /// the Gemini `functionCall.id`, the MCP JSON-RPC `id` with a number
    /// rendered as its lexeme), if there is one.
    pub call_id: Option<String>,
    /// The tool name, exactly: JSON-unescaped, otherwise untouched.
    pub name: String,
    /// The namespace the call names its tool in (a Responses
    /// `function_call`'s `namespace`), exactly; `None` when it names none.
    /// A namespaced call is a call to another tool than the same name
    /// without one: the gate matches both ([`ProposedCall::tool_name`]).
    pub namespace: Option<String>,
    /// The arguments, as sent.
    pub arguments: Arguments,
    /// The JSON Pointer of the call object in the body (for a stream, in the
    /// event that opened it).
    pub pointer: String,
    /// The JSON Pointer of the arguments in the body (for a stream, where the
    /// first fragment was or would be). Errors inside [`Arguments::Text`] are
    /// relative to the text, not to this pointer.
    pub arguments_pointer: String,
    /// How many bytes of the body the arguments took as received: an
    /// inline value's JSON text, whitespace inside it included; a string's
    /// contents between its quotes, escapes as written. `None` where the
    /// arguments were joined from stream fragments or are absent; the gate
    /// then counts the text it parses. The gate holds this to the tool's
    /// `max_argument_bytes`, so whitespace or escapes cannot walk around it.
    pub received_bytes: Option<usize>,
}

impl ProposedCall {
    /// The name the call's tool is registered under: `namespace.name` for
    /// a namespaced call, else the name.
    pub fn tool_name(&self) -> Cow<'_, str> {
        match &self.namespace {
            Some(ns) => Cow::Owned(format!("{ns}.{}", self.name)),
            None => Cow::Borrowed(&self.name),
        }
    }
}

/// The kind of a proposed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallKind {
    /// A function tool: arguments are JSON.
    Function,
    /// An OpenAI custom tool: the input is free text
    /// ([`Arguments::FreeText`]), not JSON.
    Custom,
}

/// A call's arguments, as the provider sent them.
///
/// `Debug` shows the variant and the size, never the content: arguments may
/// hold secrets.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub enum Arguments {
    /// An inline value, strictly parsed with the body (Anthropic `input`,
    /// Gemini `args`, MCP `params.arguments`, or a non-string `arguments`
    /// member). Any JSON type: a non-object is the gate's `not_object`.
    Value(Value<'static>),
    /// A non-empty JSON text inside a string (OpenAI `function.arguments`,
    /// Responses `arguments`, a streamed Anthropic `input`), to be parsed
    /// strictly by the gate.
    Text(String),
    /// The arguments string was `""`: read as `{}`.
    EmptyText,
    /// The arguments member is absent where the format allows it: read as
    /// `{}`.
    Absent,
    /// A custom tool's free-text input: not JSON; read as a JSON string.
    FreeText(String),
}

impl Arguments {
    /// The arguments as a value: `Text` parsed with `options`, `EmptyText`
    /// and `Absent` as `{}`, `FreeText` as a string.
    pub fn resolve(
        &self,
        options: &ParseOptions,
    ) -> Result<Cow<'_, Value<'_>>, toolgate_json::Error> {
        match self {
            Self::Value(v) => Ok(Cow::Borrowed(v)),
            Self::Text(t) => options.parse(t.as_bytes()).map(Cow::Owned),
            Self::EmptyText | Self::Absent => Ok(Cow::Owned(Value::Object(Object::new()))),
            Self::FreeText(t) => Ok(Cow::Owned(Value::String(Cow::Borrowed(t)))),
        }
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Value(v) => write!(f, "Value(<{}>)", v.type_name()),
            Self::Text(t) => write!(f, "Text(<{} bytes>)", t.len()),
            Self::EmptyText => f.write_str("EmptyText"),
            Self::Absent => f.write_str("Absent"),
            Self::FreeText(t) => write!(f, "FreeText(<{} bytes>)", t.len()),
        }
    }
}

/// How the adapters read: the parser's limits and the adapters' own bounds.
///
/// ```
/// use toolgate::adapter::{AdapterOptions, Format};
///
/// let options = AdapterOptions::new().with_max_calls(1);
/// let body = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
///   "tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":"{}"}},
///                 {"id":"b","type":"function","function":{"name":"y","arguments":"{}"}}]}}]}"#;
/// let err = options.read(body, Format::OpenAiChat).unwrap_err();
/// assert_eq!(err.code().as_str(), "too_many_calls");
/// assert_eq!(err.pointer(), "/choices/0/message/tool_calls/1");
/// ```
#[derive(Debug, Clone)]
pub struct AdapterOptions {
    parse: ParseOptions,
    max_calls: usize,
    max_events: usize,
    max_stream_bytes: usize,
    max_findings: usize,
}

impl Default for AdapterOptions {
    fn default() -> Self {
        Self {
            // Numbers keep their lexemes; stage 3 holds each call's
            // arguments to exactness under the tool's options.
            parse: ParseOptions::new().allow_rounding(true),
            max_calls: Self::DEFAULT_MAX_CALLS,
            max_events: Self::DEFAULT_MAX_EVENTS,
            max_stream_bytes: Self::DEFAULT_MAX_STREAM_BYTES,
            max_findings: Self::DEFAULT_MAX_FINDINGS,
        }
    }
}

impl AdapterOptions {
    /// Default calls per response.
    pub const DEFAULT_MAX_CALLS: usize = 128;
    /// Default events per stream.
    pub const DEFAULT_MAX_EVENTS: usize = 100_000;
    /// Default stream size in bytes (8 MiB, like the parser's input limit).
    pub const DEFAULT_MAX_STREAM_BYTES: usize = 8 << 20;
    /// Findings kept per response; later ones are dropped.
    pub const DEFAULT_MAX_FINDINGS: usize = 64;

    /// Every bound at its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// The strict parser's options for the body and for each event payload.
    pub fn with_parse_options(mut self, parse: ParseOptions) -> Self {
        self.parse = parse;
        self
    }

    /// Calls per response; one more is `too_many_calls`.
    pub fn with_max_calls(mut self, max: usize) -> Self {
        self.max_calls = max;
        self
    }

    /// Events per stream; one more is `too_many_events`.
    pub fn with_max_events(mut self, max: usize) -> Self {
        self.max_events = max;
        self
    }

    /// Bytes per stream; a longer stream is `too_large`. (A JSON body is
    /// bounded by the parser's input limit.)
    pub fn with_max_stream_bytes(mut self, max: usize) -> Self {
        self.max_stream_bytes = max;
        self
    }

    /// Findings kept per response.
    pub fn with_max_findings(mut self, max: usize) -> Self {
        self.max_findings = max;
        self
    }

    /// The parser options in force.
    pub fn parse_options(&self) -> &ParseOptions {
        &self.parse
    }

    /// Reads one response body as `format` (or detects it).
    pub fn read(&self, body: &[u8], format: Format) -> Result<Envelope, Error> {
        if sse::looks_like_sse(body) {
            let mut ctx = Ctx {
                options: self,
                calls: Vec::new(),
                findings: Findings::new(self.max_findings),
            };
            if body.len() > self.max_stream_bytes {
                return Err(Error::new(ErrorCode::TooLarge, ""));
            }
            let events = sse::split(body, self.max_events)?;
            let format = match format {
                Format::Auto => detect::stream(&events, &self.parse)?,
                f => f,
            };
            let finish = match format {
                Format::OpenAiChat => openai_chat::read_stream(&events, &mut ctx)?,
                Format::OpenAiResponses => responses::read_stream(&events, &mut ctx)?,
                Format::Anthropic => anthropic::read_stream(&events, &mut ctx)?,
                Format::Gemini => gemini::read_stream(&events, &mut ctx)?,
                Format::Mcp | Format::Auto => return Err(Error::new(ErrorCode::Unsupported, "")),
            };
            let mut envelope = ctx.into_envelope(format, true, finish);
            for call in &mut envelope.calls {
                // Only inline values come whole from one event; joined
                // fragments are counted by the gate as parsed.
                if matches!(call.arguments, Arguments::Value(_)) {
                    call.received_bytes = stream_received_len(&events, &call.arguments_pointer);
                }
            }
            return Ok(envelope);
        }
        let value = self.parse.parse(body).map_err(|e| Error::json(e, ""))?;
        self.read_tree(body, &value, format)
    }

    /// Reads the JSON body `body` from its tree `value`, parsed from it
    /// under these options' limits.
    fn read_tree(&self, body: &[u8], value: &Value<'_>, format: Format) -> Result<Envelope, Error> {
        let mut ctx = Ctx {
            options: self,
            calls: Vec::new(),
            findings: Findings::new(self.max_findings),
        };
        detect::refuse_non_responses(value, format)?;
        let format = match format {
            Format::Auto => detect::body(value)?,
            f => f,
        };
        let finish = match format {
            Format::OpenAiChat => openai_chat::read(value, &mut ctx)?,
            Format::OpenAiResponses => responses::read(value, &mut ctx)?,
            Format::Anthropic => anthropic::read(value, &mut ctx)?,
            Format::Gemini => gemini::read(value, &mut ctx)?,
            Format::Mcp | Format::Auto => mcp::read(value, &mut ctx)?,
        };
        let format = if format == Format::Auto {
            Format::Mcp
        } else {
            format
        };
        let mut envelope = ctx.into_envelope(format, false, finish);
        for call in &mut envelope.calls {
            if matches!(call.arguments, Arguments::Value(_) | Arguments::Text(_)) {
                call.received_bytes = span::received_len(body, &call.arguments_pointer);
            }
        }
        Ok(envelope)
    }
}

/// The received length of the value at `pointer` in a stream, whose first
/// token is the event's index.
fn stream_received_len(events: &[sse::Event], pointer: &str) -> Option<usize> {
    let rest = pointer.strip_prefix('/')?;
    let (index, inner) = match rest.find('/') {
        Some(i) => (rest.get(..i)?, rest.get(i..)?),
        None => (rest, ""),
    };
    let event = events.get(index.parse::<usize>().ok()?)?;
    span::received_len(&event.data, inner)
}

/// What an adapter fills while it reads.
pub(crate) struct Ctx<'o> {
    pub(crate) options: &'o AdapterOptions,
    calls: Vec<ProposedCall>,
    pub(crate) findings: Findings,
}

/// A call before it has its index.
pub(crate) struct NewCall {
    pub(crate) choice: usize,
    pub(crate) kind: CallKind,
    pub(crate) call_id: Option<String>,
    pub(crate) name: String,
    pub(crate) arguments: Arguments,
    pub(crate) pointer: String,
    pub(crate) arguments_pointer: String,
}

impl Ctx<'_> {
    /// Fails with `too_many_calls` at `pointer` if one more call is too many.
    pub(crate) fn check_room(&self, pointer: &str) -> Result<(), Error> {
        if self.calls.len() >= self.options.max_calls {
            return Err(Error::new(ErrorCode::TooManyCalls, pointer));
        }
        Ok(())
    }

    pub(crate) fn push(&mut self, call: NewCall) -> Result<(), Error> {
        self.push_in(None, call)
    }

    /// Pushes a call that names its tool in `namespace`.
    pub(crate) fn push_in(
        &mut self,
        namespace: Option<String>,
        call: NewCall,
    ) -> Result<(), Error> {
        self.check_room(&call.pointer)?;
        self.calls.push(ProposedCall {
            index: self.calls.len(),
            choice: call.choice,
            kind: call.kind,
            call_id: call.call_id,
            name: call.name,
            namespace,
            arguments: call.arguments,
            pointer: call.pointer,
            arguments_pointer: call.arguments_pointer,
            received_bytes: None,
        });
        Ok(())
    }

    pub(crate) fn parse_options(&self) -> &ParseOptions {
        &self.options.parse
    }

    fn into_envelope(mut self, format: Format, streamed: bool, finish: Finish) -> Envelope {
        let mut seen = std::collections::HashSet::new();
        for call in &self.calls {
            if let Some(id) = &call.call_id {
                if !seen.insert(id.as_str()) {
                    self.findings
                        .push(FindingCode::DuplicateCallId, call.pointer.clone());
                }
            }
        }
        Envelope {
            format,
            streamed,
            calls: self.calls,
            finish,
            findings: self.findings.into_vec(),
        }
    }
}

/// Arguments from a member that should be a JSON string: `""` is
/// [`Arguments::EmptyText`], any other string [`Arguments::Text`], any other
/// JSON value is reported as it is.
pub(crate) fn string_arguments(v: &Value<'_>) -> Arguments {
    match v {
        Value::String(s) if s.is_empty() => Arguments::EmptyText,
        Value::String(s) => Arguments::Text(s.to_string()),
        other => Arguments::Value(other.clone().into_owned()),
    }
}
