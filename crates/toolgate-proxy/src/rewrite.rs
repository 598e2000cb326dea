//! What the application receives in place of the model's calls: a call the
//! gate allowed keeps its place with its arguments replaced by the canonical
//! value the gate checked; a call it did not allow is withheld (removed), and
//! the model-safe feedback stands in its place as assistant text
//! (`on_deny = "feedback"`), or the whole response becomes an error
//! (`on_deny = "error"`). Items the provider runs or the gate cannot read
//! (server-side tools, unsupported call items) are removed unless
//! `pass_through` names their type. Every response carries a `toolgate`
//! member: one entry per proposed call (call id, tool, verdict, reason
//! codes, the pending approval's id, the digest), for the application to
//! act on. With `strip_markup`, text in which the gate found tool-call
//! markup is replaced (streamed text has passed already: there the markup
//! is reported, not stripped).

use std::borrow::Cow;

use toolgate::adapter::{Envelope, FindingCode, ProposedCall};
use toolgate::config::OnDeny;
use toolgate::{Code, Decision, Decisions, Verdict};
use toolgate_json::{Object, Value};

use crate::api::Api;

/// A response that is not handed on: why, in words safe to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// A stable code: `response_refused`, `call_denied`.
    pub code: &'static str,
    /// The message.
    pub message: String,
}

/// The text that takes a withheld call's place.
pub fn feedback_text(d: &Decision) -> String {
    let id = d.call_id().unwrap_or("-");
    let mut text = format!("[toolgate] the call {id} was not run: {}", d.feedback());
    if d.verdict() == Verdict::NeedsApproval {
        if let Some(a) = d.approval() {
            text.push_str(&format!(" (approval {} pending)", a.as_str()));
        }
    }
    text
}

/// Whether a response with these decisions is refused whole: its body was
/// refused, or `on_deny = "error"` and a call was not allowed.
pub fn refusal(decisions: &Decisions, on_deny: OnDeny) -> Option<Refusal> {
    if let Some(r) = decisions.rejected() {
        return Some(Refusal {
            code: "response_refused",
            message: format!("toolgate refused the model's response: {}", r.code),
        });
    }
    if on_deny == OnDeny::Error {
        let withheld: Vec<String> = decisions
            .decisions()
            .iter()
            .filter(|d| d.verdict() != Verdict::Allow)
            .map(feedback_text)
            .collect();
        if !withheld.is_empty() {
            return Some(Refusal {
                code: "call_denied",
                message: withheld.join("; "),
            });
        }
    }
    None
}

/// The `toolgate` member: one entry per proposed call.
pub fn summary(decisions: &Decisions) -> Value<'static> {
    let s = |t: &str| Value::String(Cow::Owned(t.to_owned()));
    let calls = decisions
        .decisions()
        .iter()
        .map(|d| {
            let mut o = Object::new();
            o.insert("call_id", d.call_id().map_or(Value::Null, s));
            o.insert("tool", s(d.tool()));
            o.insert("verdict", s(d.verdict().as_str()));
            o.insert(
                "reasons",
                Value::Array(d.reasons().iter().map(|r| s(r.code.as_str())).collect()),
            );
            o.insert(
                "approval",
                d.approval().map_or(Value::Null, |a| s(a.as_str())),
            );
            o.insert(
                "digest",
                d.digest().map_or(Value::Null, |g| s(&g.to_string())),
            );
            Value::Object(o)
        })
        .collect();
    let mut o = Object::new();
    o.insert("verdict", s(decisions.verdict().as_str()));
    o.insert("calls", Value::Array(calls));
    Value::Object(o)
}

/// Whether a finding is about an item that must not reach the application
/// unless `pass_through` names its type.
pub fn blocks_item(code: Code) -> bool {
    matches!(
        code,
        Code::Finding(FindingCode::ServerSideCall | FindingCode::UnsupportedCallItem)
    )
}

/// `pointer` split into its parent and its last token as an index.
fn parent_index(pointer: &str) -> Option<(&str, usize)> {
    let (parent, last) = pointer.rsplit_once('/')?;
    Some((parent, last.parse().ok()?))
}

fn string(t: &str) -> Value<'static> {
    Value::String(Cow::Owned(t.to_owned()))
}

/// The text that replaces a text holding tool-call markup, with
/// `strip_markup`.
pub const MARKUP_REMOVED: &str = "[toolgate] this text held tool-call markup and was removed";

/// The non-streamed response `body`, rewritten (see the module docs). With
/// `strip_markup`, a text in which the gate found tool-call markup (DSML,
/// special tokens, tags, a JSON call) is replaced by [`MARKUP_REMOVED`].
pub fn rewrite_json(
    api: Api,
    body: &[u8],
    envelope: &Envelope,
    decisions: &Decisions,
    pass_through: &[String],
    strip_markup: bool,
) -> Result<Vec<u8>, Refusal> {
    let broken = || Refusal {
        code: "response_refused",
        message: "toolgate could not rewrite the model's response".to_owned(),
    };
    let mut root = toolgate_json::from_slice(body)
        .map_err(|_| broken())?
        .into_owned();
    let pairs: Vec<(&ProposedCall, &Decision)> =
        envelope.calls.iter().zip(decisions.decisions()).collect();
    if pairs.len() != envelope.calls.len() || pairs.len() != decisions.decisions().len() {
        return Err(broken());
    }
    // Canonical arguments in place.
    for (call, d) in &pairs {
        if d.verdict() != Verdict::Allow {
            continue;
        }
        let canonical = d.executable_args().ok_or_else(broken)?;
        let value = match api {
            Api::Messages => toolgate_json::from_slice(canonical.as_bytes())
                .map_err(|_| broken())?
                .into_owned(),
            Api::ChatCompletions | Api::Responses => string(canonical),
        };
        let slot = root
            .pointer_mut(&call.arguments_pointer)
            .ok_or_else(broken)?;
        *slot = value;
    }
    if strip_markup {
        for f in decisions.findings() {
            if let Code::Finding(code) = f.code {
                // Reasoning passes unchanged (DeepSeek needs it back as it
                // came); only the answer's text is replaced.
                let reasoning =
                    f.pointer.ends_with("/reasoning_content") || f.pointer.ends_with("/thinking");
                if code.is_text_leak() && !reasoning {
                    if let Some(slot @ Value::String(_)) = root.pointer_mut(&f.pointer) {
                        *slot = string(MARKUP_REMOVED);
                    }
                }
            }
        }
    }
    // What is removed: withheld calls, and items no call stands for.
    let mut removals: Vec<(String, usize)> = Vec::new();
    let mut feedback: Vec<(String, String)> = Vec::new();
    for (call, d) in &pairs {
        if d.verdict() == Verdict::Allow {
            continue;
        }
        if let Some(message) = legacy_function_call(api, &call.pointer) {
            withhold_legacy_function_call(&mut root, message, &mut feedback, d);
            continue;
        }
        let (parent, index) = parent_index(&call.pointer).ok_or_else(broken)?;
        removals.push((parent.to_owned(), index));
        feedback.push((parent.to_owned(), feedback_text(d)));
    }
    for f in decisions.findings().iter().filter(|f| blocks_item(f.code)) {
        let kind = root
            .pointer(&f.pointer)
            .and_then(Value::as_object)
            .and_then(|o| o.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if pass_through.iter().any(|p| p == kind) {
            continue;
        }
        if let Some((parent, index)) = parent_index(&f.pointer) {
            if !removals.contains(&(parent.to_owned(), index)) {
                removals.push((parent.to_owned(), index));
                feedback.push((
                    parent.to_owned(),
                    format!(
                        "[toolgate] an item of type `{}` was withheld: {}",
                        safe(kind),
                        f.code
                    ),
                ));
            }
        }
    }
    removals.sort_by_key(|r| std::cmp::Reverse(r.1));
    for (parent, index) in &removals {
        if let Some(Value::Array(items)) = root.pointer_mut(parent) {
            if *index < items.len() {
                items.remove(*index);
            }
        }
    }
    match api {
        Api::ChatCompletions => chat_after(&mut root, &feedback),
        Api::Responses => responses_after(&mut root, &feedback),
        Api::Messages => messages_after(&mut root, &feedback),
    }
    if let Value::Object(o) = &mut root {
        o.insert("toolgate", summary(decisions));
    }
    Ok(toolgate_json::canonical::to_string(&root).into_bytes())
}

/// A chat call's pointer when it is a legacy message-level
/// `function_call` (a member, not an array entry): the message's pointer.
fn legacy_function_call(api: Api, pointer: &str) -> Option<&str> {
    (api == Api::ChatCompletions)
        .then(|| pointer.strip_suffix("/function_call"))
        .flatten()
}

/// Withholds a legacy `function_call`: the member is removed, its feedback
/// joins the message's content as a withheld `tool_calls` entry's does,
/// and a `function_call` finish becomes `stop`.
fn withhold_legacy_function_call(
    root: &mut Value<'static>,
    message: &str,
    feedback: &mut Vec<(String, String)>,
    d: &Decision,
) {
    if let Some(Value::Object(m)) = root.pointer_mut(message) {
        m.remove("function_call");
    }
    feedback.push((format!("{message}/tool_calls"), feedback_text(d)));
    if let Some(choice) = message.strip_suffix("/message") {
        if let Some(Value::Object(c)) = root.pointer_mut(choice) {
            if c.get("finish_reason").and_then(Value::as_str) == Some("function_call") {
                c.insert("finish_reason", string("stop"));
            }
        }
    }
}

/// Text a provider gave, shown inside feedback: printable ASCII only.
fn safe(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

/// Chat: feedback joins the message's content; a message left without
/// calls loses `tool_calls` and finishes `stop`.
fn chat_after(root: &mut Value<'static>, feedback: &[(String, String)]) {
    let Some(Value::Array(choices)) = root.pointer_mut("/choices") else {
        return;
    };
    for (i, choice) in choices.iter_mut().enumerate() {
        let tool_calls = format!("/choices/{i}/message/tool_calls");
        let texts: Vec<&str> = feedback
            .iter()
            .filter(|(p, _)| *p == tool_calls)
            .map(|(_, t)| t.as_str())
            .collect();
        let Value::Object(c) = choice else { continue };
        let mut emptied = false;
        if let Some(Value::Object(m)) = c.get_mut("message") {
            if !texts.is_empty() {
                let joined = texts.join("\n");
                let content = match m.get("content").and_then(Value::as_str) {
                    Some(t) if !t.is_empty() => format!("{t}\n\n{joined}"),
                    _ => joined,
                };
                m.insert("content", string(&content));
            }
            if m.get("tool_calls")
                .and_then(Value::as_array)
                .is_some_and(<[_]>::is_empty)
            {
                m.remove("tool_calls");
                emptied = true;
            }
        }
        if emptied && c.get("finish_reason").and_then(Value::as_str) == Some("tool_calls") {
            c.insert("finish_reason", string("stop"));
        }
    }
}

/// Responses: feedback becomes one assistant message item at the end.
fn responses_after(root: &mut Value<'static>, feedback: &[(String, String)]) {
    if feedback.is_empty() {
        return;
    }
    let Some(Value::Array(output)) = root.pointer_mut("/output") else {
        return;
    };
    let text: Vec<&str> = feedback.iter().map(|(_, t)| t.as_str()).collect();
    let item = feedback_item(&text.join("\n"));
    output.push(Value::Object(item));
}

/// The Responses output item that carries feedback: an assistant message.
pub fn feedback_item(text: &str) -> Object<'static> {
    let mut part = Object::new();
    part.insert("type", string("output_text"));
    part.insert("text", string(text));
    part.insert("annotations", Value::Array(Vec::new()));
    let mut item = Object::new();
    item.insert("type", string("message"));
    item.insert("id", string("msg_toolgate"));
    item.insert("status", string("completed"));
    item.insert("role", string("assistant"));
    item.insert("content", Value::Array(vec![Value::Object(part)]));
    item
}

/// Messages: feedback becomes a text block at the end; a message left
/// without `tool_use` blocks stops `end_turn`.
fn messages_after(root: &mut Value<'static>, feedback: &[(String, String)]) {
    let mut has_tool_use = false;
    if let Some(Value::Array(content)) = root.pointer_mut("/content") {
        if !feedback.is_empty() {
            let text: Vec<&str> = feedback.iter().map(|(_, t)| t.as_str()).collect();
            let mut block = Object::new();
            block.insert("type", string("text"));
            block.insert("text", string(&text.join("\n")));
            content.push(Value::Object(block));
        }
        has_tool_use = content.iter().any(|b| {
            b.as_object()
                .and_then(|o| o.get("type"))
                .and_then(Value::as_str)
                == Some("tool_use")
        });
    }
    if !has_tool_use {
        if let Value::Object(o) = root {
            if o.get("stop_reason").and_then(Value::as_str) == Some("tool_use") {
                o.insert("stop_reason", string("end_turn"));
            }
        }
    }
}
