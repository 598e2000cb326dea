//! What the application receives in place of the model's response: built
//! from decisions, never filtered from the upstream's copy. Each output
//! item is classified by the pass list ([`crate::items`]): a call the gate
//! allowed is rebuilt from its decision (its identity as the gate read it,
//! the canonical value it checked); a call it did not allow is withheld,
//! and the model-safe feedback stands in its place as assistant text
//! (`on_deny = "feedback"`), or the whole response becomes an error
//! (`on_deny = "error"`); text passes; any other item refuses the whole
//! response. Every response carries a `toolgate` member (an upstream's
//! own is removed, at any depth): one entry per proposed call (call id,
//! tool, verdict, reason codes, the pending approval's id, the digest), for
//! the application to act on. With `strip_markup`, text in which the gate
//! found tool-call markup is replaced (streamed text has passed already:
//! there the markup is reported, not stripped).

use std::borrow::Cow;

use toolgate::adapter::{CallKind, Envelope, ParsedBody, ProposedCall};
use toolgate::{Code, Decision, Decisions, Verdict};
use toolgate_edge::config::OnDeny;
use toolgate_json::{Object, Value};

use crate::api::Api;
use crate::items::{
    disposition, item_role, refused_message, strip_toolgate, unknown_part, Disposition, ItemRole,
    TOOLGATE,
};
use crate::members;

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
            // With `[gate] receipt_key`: the signed receipt the executor
            // checks (absent otherwise, as in the decision's wire form).
            if let Some(receipt) = d.receipt() {
                o.insert("receipt", s(receipt));
            }
            Value::Object(o)
        })
        .collect();
    let mut o = Object::new();
    o.insert("verdict", s(decisions.verdict().as_str()));
    o.insert("calls", Value::Array(calls));
    Value::Object(o)
}

fn string(t: &str) -> Value<'static> {
    Value::String(Cow::Owned(t.to_owned()))
}

/// The text that replaces a text holding tool-call markup, with
/// `strip_markup`.
pub const MARKUP_REMOVED: &str = "[toolgate] this text held tool-call markup and was removed";

/// The non-streamed response `body`, rebuilt (see the module docs): every
/// output item is classified by the pass list ([`crate::item_role`]); a
/// call is released rebuilt from its decision (its identity as read, the
/// canonical arguments) or withheld, text passes, and an item of any other
/// type refuses the whole response (`item_refused`). With `strip_markup`,
/// a text in which the gate found tool-call markup (DSML, special tokens,
/// tags, a JSON call) is replaced by [`MARKUP_REMOVED`].
pub fn rewrite_json(
    api: Api,
    body: &[u8],
    envelope: &Envelope,
    decisions: &Decisions,
    pass_through: &[String],
    strip_markup: bool,
) -> Result<Vec<u8>, Refusal> {
    let root = toolgate_json::from_slice(body).map_err(|_| broken())?;
    rewrite_tree(api, root, envelope, decisions, pass_through, strip_markup)
}

/// [`rewrite_json`] for a body parsed once
/// ([`AdapterOptions::parse_exact`](toolgate::adapter::AdapterOptions::parse_exact)),
/// whose `envelope` the adapter read from the same tree
/// ([`AdapterOptions::read_parsed`](toolgate::adapter::AdapterOptions::read_parsed))
/// and the gate decided: the same output as [`rewrite_json`] gives for
/// the body's text, without parsing it again.
pub fn rewrite_parsed(
    api: Api,
    parsed: ParsedBody<'_>,
    envelope: &Envelope,
    decisions: &Decisions,
    pass_through: &[String],
    strip_markup: bool,
) -> Result<Vec<u8>, Refusal> {
    rewrite_tree(
        api,
        parsed.into_value(),
        envelope,
        decisions,
        pass_through,
        strip_markup,
    )
}

fn rewrite_tree(
    api: Api,
    root: Value<'_>,
    envelope: &Envelope,
    decisions: &Decisions,
    pass_through: &[String],
    strip_markup: bool,
) -> Result<Vec<u8>, Refusal> {
    let mut root = root.into_owned();
    let pairs: Vec<(&ProposedCall, &Decision)> =
        envelope.calls.iter().zip(decisions.decisions()).collect();
    if pairs.len() != envelope.calls.len() || pairs.len() != decisions.decisions().len() {
        return Err(broken());
    }
    check_items(api, &root, pass_through)?;
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
    strip_toolgate(&mut root);
    let released = Released { pairs: &pairs };
    match api {
        Api::ChatCompletions => rebuild_chat(&mut root, &released)?,
        Api::Responses => rebuild_responses(&mut root, &released)?,
        Api::Messages => rebuild_messages(&mut root, &released)?,
    }
    // The state around the items is rebuilt from its pass list, each Chat
    // choice's logprobs checked against the text released in it.
    let Value::Object(top) = &root else {
        return Err(broken());
    };
    let mut top = members::rebuild(members::response_list(api), top);
    if api == Api::ChatCompletions {
        if let Some(Value::Array(choices)) = top.get_mut("choices") {
            for c in choices.iter_mut() {
                if let Value::Object(o) = c {
                    *o = members::chat_choice(o);
                }
            }
        }
    }
    top.insert(TOOLGATE, summary(decisions));
    Ok(toolgate_json::canonical::to_string(&Value::Object(top)).into_bytes())
}

fn broken() -> Refusal {
    Refusal {
        code: "response_refused",
        message: "toolgate could not rewrite the model's response".to_owned(),
    }
}

/// The refusal of a response holding an item of type `kind` that is not on
/// the pass list.
pub(crate) fn item_refused(kind: &str) -> Refusal {
    Refusal {
        code: "item_refused",
        message: refused_message(kind),
    }
}

/// The type of an item (`""` when it has none).
fn kind_of<'v>(item: &'v Value<'_>) -> &'v str {
    item.as_object()
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Whether every output item of the response `root` is on the pass list
/// (with `pass_through`): a call, text, or a built-in item it names.
pub fn check_items(api: Api, root: &Value<'_>, pass_through: &[String]) -> Result<(), Refusal> {
    let mut kinds: Vec<&str> = Vec::new();
    match api {
        Api::ChatCompletions => {
            for choice in root
                .pointer("/choices")
                .and_then(Value::as_array)
                .unwrap_or_default()
            {
                if let Some(member) = choice
                    .pointer("/message")
                    .and_then(Value::as_object)
                    .and_then(crate::items::chat_member_off_list)
                {
                    return Err(Refusal {
                        code: "item_refused",
                        message: crate::items::refused_member_message(member),
                    });
                }
                let calls = choice
                    .pointer("/message/tool_calls")
                    .and_then(Value::as_array)
                    .unwrap_or_default();
                // An entry without a `type` is a function call (as the
                // gate reads it).
                kinds.extend(calls.iter().map(
                    |c| match c.as_object().and_then(|o| o.get("type")) {
                        None | Some(Value::Null) => "function",
                        Some(_) => kind_of(c),
                    },
                ));
            }
        }
        Api::Responses | Api::Messages => {
            let list = if api == Api::Responses {
                "/output"
            } else {
                "/content"
            };
            let items = root
                .pointer(list)
                .and_then(Value::as_array)
                .unwrap_or_default();
            if let Some(part) = items.iter().find_map(|i| unknown_part(api, i)) {
                return Err(item_refused(part));
            }
            kinds.extend(items.iter().map(kind_of));
        }
    }
    match kinds
        .into_iter()
        .find(|k| disposition(api, k, pass_through) == Disposition::Refuse)
    {
        Some(k) => Err(item_refused(k)),
        None => Ok(()),
    }
}

/// The calls of a response with their decisions, found by the pointer of
/// the call in the body.
struct Released<'a> {
    pairs: &'a [(&'a ProposedCall, &'a Decision)],
}

impl<'a> Released<'a> {
    /// The call read at `pointer` and its decision: an item the gate did
    /// not read as a call is never released.
    fn at(&self, pointer: &str) -> Result<(&'a ProposedCall, &'a Decision), Refusal> {
        self.pairs
            .iter()
            .find(|(c, _)| c.pointer == pointer)
            .copied()
            .ok_or_else(broken)
    }
}

/// The arguments a released call carries: the canonical text, or for a
/// custom tool's free text the text itself.
fn released_text(call: &ProposedCall, canonical: &str) -> Option<String> {
    match call.kind {
        CallKind::Custom => toolgate_json::from_slice(canonical.as_bytes())
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned)),
        _ => Some(canonical.to_owned()),
    }
}

/// A legacy Chat Completions `function_call` (`name`, `arguments`)
/// rebuilt from its decision; `None` for any call that is not a function.
pub(crate) fn legacy_call(call: &ProposedCall, canonical: &str) -> Option<Value<'static>> {
    if call.kind != CallKind::Function {
        return None;
    }
    let mut f = Object::new();
    f.insert("name", string(&call.name));
    f.insert("arguments", string(canonical));
    Some(Value::Object(f))
}

/// A Chat Completions `tool_calls` entry rebuilt from its decision.
pub(crate) fn chat_call(
    call: &ProposedCall,
    canonical: &str,
    index: Option<u64>,
) -> Option<Value<'static>> {
    let text = released_text(call, canonical)?;
    let (kind, args_key) = match call.kind {
        CallKind::Custom => ("custom", "input"),
        _ => ("function", "arguments"),
    };
    let mut f = Object::new();
    f.insert("name", string(&call.name));
    f.insert(args_key, string(&text));
    let mut tc = Object::new();
    if let Some(i) = index {
        tc.insert("index", Value::Number(i.into()));
    }
    tc.insert("id", call.call_id.as_deref().map_or(Value::Null, string));
    tc.insert("type", string(kind));
    tc.insert(kind, Value::Object(f));
    Some(Value::Object(tc))
}

/// A Responses call item rebuilt from its decision.
pub(crate) fn responses_call(
    call: &ProposedCall,
    canonical: &str,
    id: &str,
) -> Option<Object<'static>> {
    let text = released_text(call, canonical)?;
    let (kind, args_key) = match call.kind {
        CallKind::Custom => ("custom_tool_call", "input"),
        _ => ("function_call", "arguments"),
    };
    let mut item = Object::new();
    item.insert("type", string(kind));
    item.insert("id", string(id));
    item.insert(
        "call_id",
        call.call_id.as_deref().map_or(Value::Null, string),
    );
    item.insert("name", string(&call.name));
    // The identity the gate checked: a namespaced call stays in its
    // namespace.
    if let Some(ns) = &call.namespace {
        item.insert("namespace", string(ns));
    }
    item.insert(args_key, string(&text));
    item.insert("status", string("completed"));
    Some(item)
}

/// An Anthropic `tool_use` block rebuilt from its decision, its `input`
/// the canonical value.
fn messages_call(call: &ProposedCall, canonical: &str) -> Option<Value<'static>> {
    let input = toolgate_json::from_slice(canonical.as_bytes())
        .ok()?
        .into_owned();
    let mut block = Object::new();
    block.insert("type", string("tool_use"));
    block.insert("id", call.call_id.as_deref().map_or(Value::Null, string));
    block.insert("name", string(&call.name));
    block.insert("input", input);
    Some(Value::Object(block))
}

/// Chat: each choice's calls rebuilt from their decisions; feedback joins
/// the message's content; a message left without calls finishes `stop`.
fn rebuild_chat(root: &mut Value<'static>, released: &Released<'_>) -> Result<(), Refusal> {
    let Some(Value::Array(choices)) = root.pointer_mut("/choices") else {
        return Err(broken());
    };
    for (i, choice) in choices.iter_mut().enumerate() {
        let Value::Object(c) = choice else {
            return Err(broken());
        };
        let Some(Value::Object(m)) = c.get_mut("message") else {
            return Err(broken());
        };
        let at = format!("/choices/{i}/message");
        let mut calls = Vec::new();
        let mut texts = Vec::new();
        let upstream_calls = match m.remove("tool_calls") {
            Some(Value::Array(items)) => items,
            None | Some(Value::Null) => Vec::new(),
            Some(_) => return Err(broken()),
        };
        for j in 0..upstream_calls.len() {
            let (call, d) = released.at(&format!("{at}/tool_calls/{j}"))?;
            match d.executable_args() {
                Some(args) => calls.push(chat_call(call, args, None).ok_or_else(broken)?),
                None => texts.push(feedback_text(d)),
            }
        }
        let mut legacy = false;
        if let Some(fc) = m.remove("function_call") {
            if !fc.is_null() {
                let (call, d) = released.at(&format!("{at}/function_call"))?;
                match d.executable_args().and_then(|a| legacy_call(call, a)) {
                    Some(f) => {
                        m.insert("function_call", f);
                        legacy = true;
                    }
                    None => texts.push(feedback_text(d)),
                }
            }
        }
        if !texts.is_empty() {
            let joined = texts.join("\n");
            let content = match m.get("content").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => format!("{t}\n\n{joined}"),
                _ => joined,
            };
            m.insert("content", string(&content));
        }
        let none_left = calls.is_empty() && !legacy;
        if !calls.is_empty() {
            m.insert("tool_calls", Value::Array(calls));
        }
        let reason = c.get("finish_reason").and_then(Value::as_str);
        if none_left && matches!(reason, Some("tool_calls" | "function_call")) {
            c.insert("finish_reason", string("stop"));
        }
    }
    Ok(())
}

/// Responses: the output rebuilt item by item; feedback becomes one
/// assistant message item at the end.
fn rebuild_responses(root: &mut Value<'static>, released: &Released<'_>) -> Result<(), Refusal> {
    let Some(Value::Array(output)) = root.pointer_mut("/output") else {
        return Err(broken());
    };
    let upstream = std::mem::take(output);
    let mut texts = Vec::new();
    for (k, item) in upstream.into_iter().enumerate() {
        if item_role(Api::Responses, kind_of(&item)) != ItemRole::Call {
            // A message's parts go on as read, their logprobs rebuilt
            // against the text released (see `members`).
            output.push(members::responses_item_logprobs(item));
            continue;
        }
        let (call, d) = released.at(&format!("/output/{k}"))?;
        match d.executable_args() {
            Some(args) => {
                let id = item
                    .as_object()
                    .and_then(|o| o.get("id"))
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("fc_toolgate_{}", call.index), str::to_owned);
                output.push(Value::Object(
                    responses_call(call, args, &id).ok_or_else(broken)?,
                ));
            }
            None => texts.push(feedback_text(d)),
        }
    }
    if !texts.is_empty() {
        output.push(Value::Object(feedback_item(&texts.join("\n"))));
    }
    Ok(())
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

/// Messages: the content rebuilt block by block; feedback becomes a text
/// block at the end; a message left without `tool_use` blocks stops
/// `end_turn`.
fn rebuild_messages(root: &mut Value<'static>, released: &Released<'_>) -> Result<(), Refusal> {
    let Some(Value::Array(content)) = root.pointer_mut("/content") else {
        return Err(broken());
    };
    let upstream = std::mem::take(content);
    let mut texts = Vec::new();
    let mut has_tool_use = false;
    for (k, block) in upstream.into_iter().enumerate() {
        if item_role(Api::Messages, kind_of(&block)) != ItemRole::Call {
            content.push(block);
            continue;
        }
        let (call, d) = released.at(&format!("/content/{k}"))?;
        match d.executable_args() {
            Some(args) => {
                content.push(messages_call(call, args).ok_or_else(broken)?);
                has_tool_use = true;
            }
            None => texts.push(feedback_text(d)),
        }
    }
    if !texts.is_empty() {
        let mut block = Object::new();
        block.insert("type", string("text"));
        block.insert("text", string(&texts.join("\n")));
        content.push(Value::Object(block));
    }
    if !has_tool_use {
        if let Value::Object(o) = root {
            if o.get("stop_reason").and_then(Value::as_str) == Some("tool_use") {
                o.insert("stop_reason", string("end_turn"));
            }
        }
    }
    Ok(())
}
