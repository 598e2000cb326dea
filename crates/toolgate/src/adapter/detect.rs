//! Format detection, and refusal of bodies that are not responses.

use toolgate_json::{Object, ParseOptions, Value};

use super::error::{Error, ErrorCode};
use super::sse::{Event, Payload};
use super::Format;

/// Members that only a response (or an MCP message) has.
const RESPONSE_KEYS: [&str; 6] = [
    "choices",
    "output",
    "content",
    "candidates",
    "jsonrpc",
    "status",
];

/// How many events stream detection looks at before giving up.
const SNIFF_EVENTS: usize = 16;

/// Refuses a bare provider error object (`provider_error`) and a request
/// body (`not_a_response`), whatever the format.
pub(crate) fn refuse_non_responses(v: &Value, format: Format) -> Result<(), Error> {
    let Some(o) = v.as_object() else {
        return Ok(());
    };
    if RESPONSE_KEYS.iter().any(|k| o.contains_key(k)) || format == Format::Mcp {
        return Ok(());
    }
    if o.get("error").is_some_and(|e| !e.is_null()) {
        return Err(Error::new(ErrorCode::ProviderError, "/error"));
    }
    for key in ["messages", "contents", "input"] {
        if o.contains_key(key) {
            let mut p = String::new();
            toolgate_json::pointer::push_token(&mut p, key);
            return Err(Error::new(ErrorCode::NotAResponse, p));
        }
    }
    Ok(())
}

/// The format of a JSON body.
pub(crate) fn body(v: &Value) -> Result<Format, Error> {
    match v {
        Value::Object(o) => one(object_formats(o), ""),
        Value::Array(items) if !items.is_empty() => {
            let mut formats: Option<Vec<Format>> = None;
            for item in items {
                let found = item.as_object().map(object_formats).unwrap_or_default();
                let keep: Vec<Format> = found
                    .into_iter()
                    .filter(|f| matches!(f, Format::Mcp | Format::Gemini))
                    .collect();
                formats = Some(match formats {
                    None => keep,
                    Some(prev) => prev.into_iter().filter(|f| keep.contains(f)).collect(),
                });
            }
            one(formats.unwrap_or_default(), "")
        }
        _ => Err(Error::new(ErrorCode::UnknownFormat, "")),
    }
}

fn one(formats: Vec<Format>, at: &str) -> Result<Format, Error> {
    match formats.as_slice() {
        [f] => Ok(*f),
        [] => Err(Error::new(ErrorCode::UnknownFormat, at)),
        _ => Err(Error::new(ErrorCode::AmbiguousFormat, at)),
    }
}

fn str_member<'a>(o: &'a Object, name: &str) -> Option<&'a str> {
    o.get(name).and_then(Value::as_str)
}

/// Every format whose marks the object carries.
fn object_formats(o: &Object) -> Vec<Format> {
    let mut found = Vec::new();
    let object = str_member(o, "object");
    let kind = str_member(o, "type");
    if o.contains_key("jsonrpc") {
        found.push(Format::Mcp);
    }
    if o.contains_key("choices")
        || matches!(object, Some("chat.completion" | "chat.completion.chunk"))
    {
        found.push(Format::OpenAiChat);
    }
    if object == Some("response") || (o.contains_key("output") && o.contains_key("status")) {
        found.push(Format::OpenAiResponses);
    }
    if kind == Some("message") || (o.contains_key("content") && o.contains_key("stop_reason")) {
        found.push(Format::Anthropic);
    }
    if o.contains_key("candidates") || o.contains_key("promptFeedback") {
        found.push(Format::Gemini);
    }
    found
}

/// The format an event names or carries, if any.
fn event_format(name: Option<&str>, payload: Option<&Object>) -> Vec<Format> {
    let mut found = Vec::new();
    let mut add = |f: Format| {
        if !found.contains(&f) {
            found.push(f);
        }
    };
    let kind = payload.and_then(|o| str_member(o, "type"));
    for tag in [name, kind].into_iter().flatten() {
        if tag.starts_with("response.") {
            add(Format::OpenAiResponses);
        }
        if matches!(
            tag,
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
                | "message_delta"
                | "message_stop"
        ) {
            add(Format::Anthropic);
        }
    }
    if let Some(o) = payload {
        if o.contains_key("choices") || str_member(o, "object") == Some("chat.completion.chunk") {
            add(Format::OpenAiChat);
        }
        if o.contains_key("candidates") || o.contains_key("promptFeedback") {
            add(Format::Gemini);
        }
    }
    found
}

/// The format of an event stream: the first event that names one decides.
pub(crate) fn stream(events: &[Event], options: &ParseOptions) -> Result<Format, Error> {
    for event in events.iter().take(SNIFF_EVENTS) {
        let value = match event.payload(options)? {
            Payload::Json(v) => Some(v),
            Payload::Done | Payload::Cut => None,
        };
        let found = event_format(
            event.name.as_deref(),
            value.as_ref().and_then(Value::as_object),
        );
        if !found.is_empty() {
            return one(found, &event.pointer());
        }
    }
    Err(Error::new(ErrorCode::UnknownFormat, ""))
}
