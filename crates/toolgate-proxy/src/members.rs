//! The state of a response, rebuilt from a pass list: its top level, a
//! Chat Completions choice, an Anthropic stream's `message_start.message`
//! and a Responses stream's `response`. (Output items and message members
//! are the item table's, [`crate::items`]: an item off that list refuses
//! the response.) A state member goes on when it is on its API's list and
//! its value has the shape the list names; any other member, or one of
//! another shape, is not handed on. The lists hold what the providers
//! document: identity, status, usage counts and the request's own
//! settings echoed back.
//!
//! A Chat choice's `logprobs` repeat the choice's text token by token, so
//! they go on only for text that reaches the application as the model
//! wrote it, and only when they spell it: their tokens (and their bytes,
//! when given) joined must equal the text released. When the gate
//! replaced the text (`strip_markup`) or added feedback to it, or the
//! tokens spell anything else, the choice's `logprobs` are `null`. An
//! entry is rebuilt from `token`, `logprob`, `bytes` and `top_logprobs`
//! (the alternatives the model did not choose, each rebuilt the same way).

use toolgate_json::{Object, Value};

use crate::api::Api;

/// The shape a state member's value must have to go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A string or `null`.
    Text,
    /// A number or `null`.
    Number,
    /// A boolean or `null`.
    Flag,
    /// Usage: its numbers, and its objects of numbers, only.
    Counts,
    /// The request's own settings echoed back (tools, instructions,
    /// metadata): any value.
    Echo,
    /// Items: rebuilt by the item rewriter.
    Items,
}

use Shape::{Counts, Echo, Flag, Items, Number, Text};

/// A Chat Completions response (and stream chunk).
pub(crate) const CHAT_RESPONSE: [(&str, Shape); 8] = [
    ("id", Text),
    ("object", Text),
    ("created", Number),
    ("model", Text),
    ("system_fingerprint", Text),
    ("service_tier", Text),
    ("usage", Counts),
    ("choices", Items),
];

/// A Chat Completions choice (and a chunk's); its `logprobs` are rebuilt
/// by [`logprobs`].
pub(crate) const CHAT_CHOICE: [(&str, Shape); 4] = [
    ("index", Number),
    ("finish_reason", Text),
    ("message", Items),
    ("delta", Items),
];

/// An Anthropic message (and a stream's `message_start.message`).
pub(crate) const MESSAGES_RESPONSE: [(&str, Shape); 9] = [
    ("id", Text),
    ("type", Text),
    ("role", Text),
    ("model", Text),
    ("content", Items),
    ("stop_reason", Text),
    ("stop_sequence", Text),
    ("usage", Counts),
    ("container", Echo),
];

/// A Responses response (and a stream's `response`).
pub(crate) const RESPONSES_RESPONSE: [(&str, Shape); 34] = [
    ("id", Text),
    ("object", Text),
    ("created_at", Number),
    ("completed_at", Number),
    ("status", Text),
    ("background", Flag),
    ("error", Echo),
    ("incomplete_details", Echo),
    ("instructions", Echo),
    ("max_output_tokens", Number),
    ("max_tool_calls", Number),
    ("model", Text),
    ("output", Items),
    ("parallel_tool_calls", Flag),
    ("previous_response_id", Text),
    ("conversation", Echo),
    ("prompt", Echo),
    ("prompt_cache_key", Text),
    ("prompt_cache_retention", Text),
    ("reasoning", Echo),
    ("safety_identifier", Text),
    ("service_tier", Text),
    ("store", Flag),
    ("temperature", Number),
    ("text", Echo),
    ("tool_choice", Echo),
    ("tools", Echo),
    ("top_logprobs", Number),
    ("top_p", Number),
    ("truncation", Text),
    ("usage", Counts),
    ("user", Text),
    ("metadata", Echo),
    ("frequency_penalty", Number),
];

/// The list of `api`'s response top level.
pub(crate) fn response_list(api: Api) -> &'static [(&'static str, Shape)] {
    match api {
        Api::ChatCompletions => &CHAT_RESPONSE,
        Api::Responses => &RESPONSES_RESPONSE,
        Api::Messages => &MESSAGES_RESPONSE,
    }
}

/// `o` rebuilt from `list`: the members on it whose values have their
/// shape, in the list's order.
pub(crate) fn rebuild(list: &[(&'static str, Shape)], o: &Object<'static>) -> Object<'static> {
    let mut out = Object::new();
    for (name, shape) in list {
        let Some(v) = o.get(name) else { continue };
        let kept = match (shape, v) {
            (_, Value::Null) | (Echo | Items, _) => Some(v.clone()),
            (Text, Value::String(_)) | (Number, Value::Number(_)) | (Flag, Value::Bool(_)) => {
                Some(v.clone())
            }
            (Counts, Value::Object(u)) => Some(Value::Object(counts(u))),
            _ => None,
        };
        if let Some(v) = kept {
            out.insert(*name, v);
        }
    }
    out
}

/// A usage object rebuilt: its numbers (or nulls) and its objects of
/// numbers, nothing else.
pub(crate) fn counts(u: &Object<'static>) -> Object<'static> {
    let is_number = |v: &Value<'_>| v.as_number().is_some() || v.is_null();
    let mut out = Object::new();
    for (k, m) in u.iter() {
        let keep = match m {
            Value::Object(inner) => inner.iter().all(|(_, n)| is_number(n)),
            other => is_number(other),
        };
        if keep {
            out.insert(k.to_owned(), m.clone());
        }
    }
    out
}

/// A Chat choice (a response's or a chunk's) rebuilt from
/// [`CHAT_CHOICE`], its `logprobs` checked against the text released in
/// it (`content`, `refusal`: the message's or the delta's, as they go on).
pub(crate) fn chat_choice(c: &Object<'static>) -> Object<'static> {
    let mut out = rebuild(&CHAT_CHOICE, c);
    let text = |k: &str| {
        ["message", "delta"]
            .iter()
            .find_map(|m| out.get(m))
            .and_then(|m| m.as_object())
            .and_then(|m| m.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let (content, refusal) = (text("content"), text("refusal"));
    if c.contains_key("logprobs") {
        out.insert("logprobs", logprobs(c.get("logprobs"), &content, &refusal));
    }
    out
}

/// A choice's `logprobs`, rebuilt (see the module docs): `null` unless
/// each list spells the text released under its name.
pub(crate) fn logprobs(
    lp: Option<&Value<'static>>,
    content: &str,
    refusal: &str,
) -> Value<'static> {
    let Some(Value::Object(lp)) = lp else {
        return Value::Null;
    };
    let mut out = Object::new();
    for (list, text) in [("content", content), ("refusal", refusal)] {
        match lp.get(list) {
            None => {}
            // No tokens: nothing of the text is repeated.
            Some(Value::Null) => {
                out.insert(list, Value::Null);
            }
            Some(Value::Array(entries)) => {
                let Some(rebuilt) = spelled(entries, text) else {
                    return Value::Null;
                };
                out.insert(list, Value::Array(rebuilt));
            }
            Some(_) => return Value::Null,
        }
    }
    Value::Object(out)
}

/// A Responses output `item` with the `logprobs` of each of its
/// `output_text` parts rebuilt ([`text_logprobs`] against the part's
/// `text`). So a text the gate replaced (`strip_markup`) is not repeated
/// token by token.
pub(crate) fn responses_item_logprobs(mut item: Value<'static>) -> Value<'static> {
    if let Some(Value::Array(parts)) = item.pointer_mut("/content") {
        for part in parts.iter_mut() {
            if let Value::Object(part) = part {
                text_logprobs(part, "text");
            }
        }
    }
    item
}

/// A Responses stream event with the `logprobs` it carries rebuilt: an
/// `output_text` delta's against its `delta`, a done text's against its
/// `text`, a content part's and an output item's parts' against their
/// `text`.
pub(crate) fn responses_event_logprobs(v: &mut Value<'static>) {
    let Value::Object(o) = v else {
        return;
    };
    if o.contains_key("delta") {
        text_logprobs(o, "delta");
    } else {
        text_logprobs(o, "text");
    }
    if let Some(Value::Object(part)) = o.get_mut("part") {
        text_logprobs(part, "text");
    }
    if let Some(item) = o.get_mut("item") {
        *item = responses_item_logprobs(std::mem::replace(item, Value::Null));
    }
}

/// The `logprobs` list of `o`, if it has one, kept (each entry rebuilt)
/// only when their tokens spell exactly the text under `text_key` as
/// released; otherwise `[]`.
fn text_logprobs(o: &mut Object<'static>, text_key: &str) {
    let Some(lp) = o.get("logprobs") else {
        return;
    };
    let text = o.get(text_key).and_then(Value::as_str).unwrap_or("");
    let rebuilt = match lp {
        Value::Null => Value::Null,
        Value::Array(entries) => {
            spelled(entries, text).map_or(Value::Array(Vec::new()), Value::Array)
        }
        _ => Value::Array(Vec::new()),
    };
    o.insert("logprobs", rebuilt);
}

/// `entries` rebuilt when their tokens (and bytes, when every entry has
/// them) spell `text`.
fn spelled(entries: &[Value<'static>], text: &str) -> Option<Vec<Value<'static>>> {
    let mut tokens = String::new();
    let mut bytes: Option<Vec<u8>> = Some(Vec::new());
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let (entry, token, b) = entry(e, true)?;
        tokens.push_str(&token);
        bytes = match (bytes, b) {
            (Some(mut all), Some(b)) => {
                all.extend_from_slice(&b);
                Some(all)
            }
            _ => None,
        };
        out.push(entry);
    }
    let bytes_agree = bytes.is_none_or(|b| b == text.as_bytes());
    (tokens == text && bytes_agree).then_some(out)
}

/// One logprobs entry rebuilt, its token and its bytes; `None` when a
/// member has the wrong shape.
fn entry(
    e: &Value<'static>,
    with_alternatives: bool,
) -> Option<(Value<'static>, String, Option<Vec<u8>>)> {
    let o = e.as_object()?;
    let token = o.get("token")?.as_str()?.to_owned();
    let logprob = o.get("logprob")?;
    logprob.as_number()?;
    let bytes = match o.get("bytes") {
        None | Some(Value::Null) => None,
        Some(Value::Array(b)) => Some(
            b.iter()
                .map(|n| {
                    n.as_number()
                        .and_then(|n| n.as_u64())
                        .and_then(|n| u8::try_from(n).ok())
                })
                .collect::<Option<Vec<u8>>>()?,
        ),
        Some(_) => return None,
    };
    let mut out = Object::new();
    out.insert("token", Value::String(token.clone().into()));
    out.insert("logprob", logprob.clone());
    out.insert(
        "bytes",
        bytes.as_ref().map_or(Value::Null, |b| {
            Value::Array(
                b.iter()
                    .map(|n| Value::Number(u64::from(*n).into()))
                    .collect(),
            )
        }),
    );
    if with_alternatives {
        let alternatives = match o.get("top_logprobs") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|t| entry(t, false).map(|(v, _, _)| v))
                .collect::<Option<Vec<_>>>()?,
            Some(_) => return None,
        };
        out.insert("top_logprobs", Value::Array(alternatives));
    }
    Some((Value::Object(out), token, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(text: &str) -> Object<'static> {
        toolgate_json::from_slice(text.as_bytes())
            .unwrap()
            .into_owned()
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn members_off_the_list_or_of_another_shape_are_not_handed_on() {
        let o = obj(
            r#"{"id":"x","created":"yesterday","model":null,"usage":{"a":1,"b":"text","c":{"d":2},"e":{"f":"g"}},"extra":1}"#,
        );
        assert_eq!(
            toolgate_json::canonical::to_string(&Value::Object(rebuild(&CHAT_RESPONSE, &o))),
            r#"{"id":"x","model":null,"usage":{"a":1,"c":{"d":2}}}"#
        );
    }

    #[test]
    fn logprobs_spell_their_text_or_are_null() {
        let lp = toolgate_json::from_slice(
            br#"{"content":[{"token":"h","logprob":-1,"bytes":[104],"top_logprobs":[{"token":"H","logprob":-2,"bytes":[72],"x":1}]},{"token":"i","logprob":0}],"refusal":null}"#,
        )
        .unwrap()
        .into_owned();
        let out = logprobs(Some(&lp), "hi", "");
        assert_eq!(
            toolgate_json::canonical::to_string(&out),
            r#"{"content":[{"bytes":[104],"logprob":-1,"token":"h","top_logprobs":[{"bytes":[72],"logprob":-2,"token":"H"}]},{"bytes":null,"logprob":0,"token":"i","top_logprobs":[]}],"refusal":null}"#
        );
        assert_eq!(logprobs(Some(&lp), "hi!", ""), Value::Null);
        assert_ne!(
            logprobs(Some(&lp), "hi", "no"),
            Value::Null,
            "no refusal tokens repeat nothing"
        );
        assert_eq!(logprobs(None, "hi", ""), Value::Null);
    }
}
