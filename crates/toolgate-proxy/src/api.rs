//! The three gated routes and what differs between their providers: the
//! gate's format, where the upstream is, and the shape of an error.

use toolgate::Format;
use toolgate_json::{canonical, Object, Value};

/// A gated route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST /v1/chat/completions` (OpenAI and compatible APIs: DeepSeek,
    /// Gemini's OpenAI endpoint, local servers).
    ChatCompletions,
    /// `POST /v1/responses`.
    Responses,
    /// `POST /v1/messages` (Anthropic).
    Messages,
}

impl Api {
    /// The route's path.
    pub fn path(self) -> &'static str {
        match self {
            Api::ChatCompletions => "/v1/chat/completions",
            Api::Responses => "/v1/responses",
            Api::Messages => "/v1/messages",
        }
    }

    /// The format the gate reads the route's responses as.
    pub fn format(self) -> Format {
        match self {
            Api::ChatCompletions => Format::OpenAiChat,
            Api::Responses => Format::OpenAiResponses,
            Api::Messages => Format::Anthropic,
        }
    }

    /// Whether the route is Anthropic's.
    pub fn is_anthropic(self) -> bool {
        self == Api::Messages
    }

    /// An error body in the provider's shape: `code` a stable toolgate code,
    /// `message` safe to show (never upstream internals).
    pub fn error_body(self, code: &str, message: &str) -> Vec<u8> {
        let s = |t: &str| Value::String(t.to_owned().into());
        let mut error = Object::new();
        if self.is_anthropic() {
            error.insert("type", s(code));
            error.insert("message", s(message));
            let mut o = Object::new();
            o.insert("type", s("error"));
            o.insert("error", Value::Object(error));
            canonical::to_string(&Value::Object(o)).into_bytes()
        } else {
            error.insert("message", s(message));
            error.insert("type", s("toolgate_error"));
            error.insert("param", Value::Null);
            error.insert("code", s(code));
            let mut o = Object::new();
            o.insert("error", Value::Object(error));
            canonical::to_string(&Value::Object(o)).into_bytes()
        }
    }

    /// An error as a stream's last event, in the provider's shape.
    pub fn error_event(self, code: &str, message: &str) -> String {
        let data = String::from_utf8(self.error_body(code, message)).unwrap_or_default();
        crate::sse::Event {
            name: self.is_anthropic().then(|| "error".to_owned()),
            data,
        }
        .to_wire()
    }
}
