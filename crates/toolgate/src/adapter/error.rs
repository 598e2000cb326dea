//! Adapter errors: a stable code, the JSON Pointer of the place, and the
//! strict parser's error when the body (or one stream event) is not JSON.

use std::fmt;

/// Why a body was refused, as a stable machine-readable code.
///
/// The string returned by [`ErrorCode::as_str`] is a wire contract: an
/// existing code never changes its spelling or meaning. New codes may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The body, or one stream event's `data:` payload, is not strict JSON
    /// (duplicate keys, trailing data, limits, …). [`Error::json_error`]
    /// holds the parser's error with its own code.
    BodyInvalidJson,
    /// The body is JSON, but of no known provider shape.
    UnknownFormat,
    /// The body matches more than one provider shape.
    AmbiguousFormat,
    /// The body is a request to a model (it carries `messages`, `input` or
    /// `contents`), not a response that proposes calls.
    NotAResponse,
    /// A member the format requires is absent (or `null`).
    MissingField,
    /// A member has the wrong JSON type.
    WrongType,
    /// A member has a value the format does not allow (a `type` tag, a
    /// `jsonrpc` version, a negative index, …).
    InvalidValue,
    /// The body is not a well-formed event stream (a field name that is not
    /// UTF-8, an event before the stream's first event, …).
    InvalidStream,
    /// Stream events arrive out of protocol: a delta for an unknown call, an
    /// event after the terminal event, one index reused for two calls.
    StreamProtocol,
    /// A stream's summary event disagrees with the fragments it summarises
    /// (Responses `.done` or `output_item.done` against the joined deltas).
    StreamMismatch,
    /// More calls than [`AdapterOptions::with_max_calls`](super::AdapterOptions::with_max_calls) allows.
    TooManyCalls,
    /// More stream events than [`AdapterOptions::with_max_events`](super::AdapterOptions::with_max_events) allows.
    TooManyEvents,
    /// A stream body longer than [`AdapterOptions::with_max_stream_bytes`](super::AdapterOptions::with_max_stream_bytes).
    TooLarge,
    /// The body is the provider's error object, not a response.
    ProviderError,
    /// A shape toolgate recognises but does not read (Vertex partial
    /// function-call arguments).
    Unsupported,
}

impl ErrorCode {
    /// The stable wire name of the code, such as `missing_field`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BodyInvalidJson => "body_invalid_json",
            Self::UnknownFormat => "unknown_format",
            Self::AmbiguousFormat => "ambiguous_format",
            Self::NotAResponse => "not_a_response",
            Self::MissingField => "missing_field",
            Self::WrongType => "wrong_type",
            Self::InvalidValue => "invalid_value",
            Self::InvalidStream => "invalid_stream",
            Self::StreamProtocol => "stream_protocol",
            Self::StreamMismatch => "stream_mismatch",
            Self::TooManyCalls => "too_many_calls",
            Self::TooManyEvents => "too_many_events",
            Self::TooLarge => "too_large",
            Self::ProviderError => "provider_error",
            Self::Unsupported => "unsupported",
        }
    }

    /// Every code, in a stable order (for documentation and tests).
    pub const ALL: [ErrorCode; 15] = [
        Self::BodyInvalidJson,
        Self::UnknownFormat,
        Self::AmbiguousFormat,
        Self::NotAResponse,
        Self::MissingField,
        Self::WrongType,
        Self::InvalidValue,
        Self::InvalidStream,
        Self::StreamProtocol,
        Self::StreamMismatch,
        Self::TooManyCalls,
        Self::TooManyEvents,
        Self::TooLarge,
        Self::ProviderError,
        Self::Unsupported,
    ];

    /// A short description for people. Never contains input text.
    pub const fn description(self) -> &'static str {
        match self {
            Self::BodyInvalidJson => "body is not strict json",
            Self::UnknownFormat => "body matches no known provider format",
            Self::AmbiguousFormat => "body matches more than one provider format",
            Self::NotAResponse => "body is a request, not a model response",
            Self::MissingField => "required member is absent",
            Self::WrongType => "member has the wrong type",
            Self::InvalidValue => "member has a value the format does not allow",
            Self::InvalidStream => "body is not a well-formed event stream",
            Self::StreamProtocol => "stream events break the provider's protocol",
            Self::StreamMismatch => "stream summary disagrees with its fragments",
            Self::TooManyCalls => "response exceeds the calls limit",
            Self::TooManyEvents => "stream exceeds the events limit",
            Self::TooLarge => "stream exceeds the size limit",
            Self::ProviderError => "body is a provider error",
            Self::Unsupported => "provider feature is not supported",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A body the adapter refused: what ([`Error::code`]) and where
/// ([`Error::pointer`]).
///
/// For streams the pointer treats the body as the array of its events'
/// `data:` payloads: `/3/choices/0/delta` is inside the fourth event.
///
/// The `Display` rendering names the code, a fixed description, the pointer
/// and, for [`ErrorCode::WrongType`], the expected and found JSON types. It
/// never contains a value taken from the body.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    // Boxed so that `Result<Envelope, Error>` stays small.
    inner: Box<ErrorImpl>,
}

#[derive(Clone, PartialEq, Eq)]
struct ErrorImpl {
    code: ErrorCode,
    pointer: String,
    expected: Option<&'static str>,
    found: Option<&'static str>,
    json: Option<toolgate_json::Error>,
}

impl Error {
    pub(crate) fn new(code: ErrorCode, pointer: impl Into<String>) -> Self {
        Self {
            inner: Box::new(ErrorImpl {
                code,
                pointer: pointer.into(),
                expected: None,
                found: None,
                json: None,
            }),
        }
    }

    /// The body (or event) failed the strict parse; `prefix` locates the
    /// event within a stream (`""` for a whole body).
    pub(crate) fn json(error: toolgate_json::Error, prefix: &str) -> Self {
        let mut pointer = String::with_capacity(prefix.len() + error.pointer().len());
        pointer.push_str(prefix);
        pointer.push_str(error.pointer());
        let mut e = Self::new(ErrorCode::BodyInvalidJson, pointer);
        e.inner.json = Some(error);
        e
    }

    pub(crate) fn wrong_type(
        pointer: impl Into<String>,
        expected: &'static str,
        found: &'static str,
    ) -> Self {
        let mut e = Self::new(ErrorCode::WrongType, pointer);
        e.inner.expected = Some(expected);
        e.inner.found = Some(found);
        e
    }

    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        self.inner.code
    }

    /// The JSON Pointer (RFC 6901) of the offending place in the body; `""` is
    /// the whole body. For a missing member, the pointer names the member.
    pub fn pointer(&self) -> &str {
        &self.inner.pointer
    }

    /// For [`ErrorCode::WrongType`], the JSON type the format requires.
    pub fn expected_type(&self) -> Option<&'static str> {
        self.inner.expected
    }

    /// For [`ErrorCode::BodyInvalidJson`], the strict parser's error (its
    /// code, such as `duplicate_key`, its byte offset within the body or the
    /// event's payload, and its pointer within that JSON text).
    pub fn json_error(&self) -> Option<&toolgate_json::Error> {
        self.inner.json.as_ref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        match &i.json {
            Some(json) => write!(
                f,
                "{}: {}: {}: {} at `{}`",
                i.code.as_str(),
                i.code.description(),
                json.code().as_str(),
                json.code().description(),
                i.pointer
            ),
            None => {
                write!(f, "{}: {}", i.code.as_str(), i.code.description())?;
                if let (Some(expected), Some(found)) = (i.expected, i.found) {
                    write!(f, ": expected {expected}, found {found}")?;
                }
                write!(f, " at `{}`", i.pointer)
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.inner.code)
            .field("pointer", &self.inner.pointer)
            .field("json", &self.inner.json)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .json
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()));
            assert!(code
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_'));
        }
    }

    #[test]
    fn display_is_one_line_without_values() {
        let e = Error::wrong_type("/choices/0/message/tool_calls", "array", "string");
        assert_eq!(
            e.to_string(),
            "wrong_type: member has the wrong type: expected array, found string at `/choices/0/message/tool_calls`"
        );
        let json = toolgate_json::from_slice(br#"{"a":"secret","a":"x"}"#).unwrap_err();
        let e = Error::json(json, "/4");
        assert_eq!(
            e.to_string(),
            "body_invalid_json: body is not strict json: duplicate_key: duplicate member name at `/4`"
        );
        assert!(!format!("{e:?}").contains("secret"));
        assert!(std::error::Error::source(&e).is_some());
    }
}
