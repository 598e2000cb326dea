//! The matching rule: what a request is matched on, and the first
//! recording that matches it.

use std::fmt;

use toolgate_json::Value;

use super::load::{Recording, Recordings, MANIFEST};
use crate::Api;

/// What a request is matched on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The route.
    pub api: Api,
    /// Whether it says `"stream": true`.
    pub stream: bool,
    /// Its `model`, if it is a string.
    pub model: Option<String>,
    /// The text of its last user message, if it has one.
    pub user: Option<String>,
}

/// The text of a request's last user message:
///
/// - Chat Completions and Messages: the last item of `messages` whose
///   `role` is `user`; its `content` when that is a string, else its parts
///   of type `text` (their `text`, joined with a line feed).
/// - Responses: `input` when that is a string; else the last item of
///   `input` whose `role` is `user`, its `content` when a string, else its
///   parts of type `input_text`, joined the same way.
///
/// `None` when the request has no such message (a message of images only
/// has the text `""`).
pub fn last_user_text(api: Api, request: &Value) -> Option<String> {
    let (list, part) = match api {
        Api::ChatCompletions | Api::Messages => (request.pointer("/messages")?, "text"),
        Api::Responses => {
            let input = request.pointer("/input")?;
            if let Some(s) = input.as_str() {
                return Some(s.to_owned());
            }
            (input, "input_text")
        }
    };
    let message = list
        .as_array()?
        .iter()
        .rev()
        .find(|m| m.pointer("/role").and_then(Value::as_str) == Some("user"))?;
    let content = message.pointer("/content")?;
    if let Some(s) = content.as_str() {
        return Some(s.to_owned());
    }
    let texts: Vec<&str> = content
        .as_array()?
        .iter()
        .filter(|p| p.pointer("/type").and_then(Value::as_str) == Some(part))
        .filter_map(|p| p.pointer("/text").and_then(Value::as_str))
        .collect();
    Some(texts.join("\n"))
}

impl Asked {
    /// What `request` (a route's parsed body) is matched on, or why it
    /// cannot be matched.
    pub fn of(api: Api, request: &Value) -> Result<Self, &'static str> {
        if request.as_object().is_none() {
            return Err("the request body is not a JSON object");
        }
        let stream = match request.pointer("/stream") {
            None | Some(Value::Null) => false,
            Some(v) => v.as_bool().ok_or("`stream` must be true or false")?,
        };
        Ok(Self {
            api,
            stream,
            model: request
                .pointer("/model")
                .and_then(Value::as_str)
                .map(str::to_owned),
            user: last_user_text(api, request),
        })
    }

    fn matches(&self, r: &Recording) -> bool {
        let same = |want: &Option<String>, got: &Option<String>| {
            want.as_ref().is_none_or(|w| got.as_ref() == Some(w))
        };
        r.api == self.api
            && r.stream == self.stream
            && same(&r.model, &self.model)
            && same(&r.user, &self.user)
    }
}

/// No recording matches a request: what it was matched on, for the error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoMatch(pub Asked);

/// At most this many characters of a request's text in an error.
const QUOTED_CHARS: usize = 120;

fn quoted(text: Option<&str>) -> String {
    match text {
        None => "none".to_owned(),
        Some(t) => {
            let mut cut: String = t.chars().take(QUOTED_CHARS).collect();
            if cut.len() < t.len() {
                cut.push('…');
            }
            toolgate_json::canonical::to_string(&Value::String(cut.into()))
        }
    }
}

impl fmt::Display for NoMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.0;
        write!(
            f,
            "no recording in {MANIFEST} matches POST {} with stream {}, model {} and last user message {} (a recording matches on its route, an .sse body for stream true, its `model` and its `user`)",
            a.api.path(),
            a.stream,
            quoted(a.model.as_deref()),
            quoted(a.user.as_deref()),
        )
    }
}

impl Recordings {
    /// The first recording that matches `asked`.
    pub fn find(&self, asked: &Asked) -> Result<&Recording, NoMatch> {
        self.list
            .iter()
            .find(|r| asked.matches(r))
            .ok_or_else(|| NoMatch(asked.clone()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        reason = "test code: a failed assumption should fail the test loudly"
    )]

    use super::*;

    fn user(api: Api, body: &str) -> Option<String> {
        last_user_text(api, &toolgate_json::from_str(body).unwrap())
    }

    #[test]
    fn the_last_user_message_of_each_api() {
        let chat = r#"{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"x"},
            {"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]},
            {"role":"tool","content":"r"}]}"#;
        assert_eq!(user(Api::ChatCompletions, chat).as_deref(), Some("a\nb"));
        let messages =
            r#"{"messages":[{"role":"user","content":[{"type":"tool_result","content":"r"}]}]}"#;
        assert_eq!(user(Api::Messages, messages).as_deref(), Some(""));
        assert_eq!(
            user(Api::Responses, r#"{"input":"hi"}"#).as_deref(),
            Some("hi")
        );
        let responses = r#"{"input":[{"role":"user","content":[{"type":"input_text","text":"q"}]},
            {"type":"function_call_output","call_id":"c","output":"o"}]}"#;
        assert_eq!(user(Api::Responses, responses).as_deref(), Some("q"));
        assert_eq!(user(Api::ChatCompletions, r#"{"messages":[]}"#), None);
        assert_eq!(user(Api::ChatCompletions, r#"{}"#), None);
    }

    #[test]
    fn what_a_request_is_matched_on() {
        let body = toolgate_json::from_str(r#"{"model":"m","stream":true,"input":"x"}"#).unwrap();
        let a = Asked::of(Api::Responses, &body).unwrap();
        assert!(a.stream);
        assert_eq!(a.model.as_deref(), Some("m"));
        let bad = toolgate_json::from_str(r#"{"stream":"yes"}"#).unwrap();
        assert!(Asked::of(Api::Responses, &bad).is_err());
        let bad = toolgate_json::from_str("[]").unwrap();
        assert!(Asked::of(Api::Responses, &bad).is_err());
    }

    #[test]
    fn the_error_quotes_a_bounded_escaped_excerpt() {
        let long = format!("\"{}\n", "a".repeat(500));
        let e = NoMatch(Asked {
            api: Api::Messages,
            stream: false,
            model: None,
            user: Some(long),
        })
        .to_string();
        assert!(
            e.contains("POST /v1/messages with stream false, model none"),
            "{e}"
        );
        assert!(e.contains("last user message \"\\\"aaa"), "{e}");
        assert!(e.contains("a…\" (a recording"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
