//! OpenAI Chat Completions (and DeepSeek): `chat.completion` bodies and
//! `chat.completion.chunk` streams.

use std::collections::BTreeMap;

use toolgate_json::{Object, Value};

use super::error::{Error, ErrorCode};
use super::finding::FindingCode;
use super::finish::{self, Finish};
use super::leak::{self, TextBuf};
use super::sse::{Event, Payload};
use super::walk::{self, key};
use super::{string_arguments, Arguments, CallKind, Ctx, NewCall};

/// Text members of a message or a delta that are scanned for markup.
const TEXT_FIELDS: [&str; 3] = ["content", "reasoning_content", "refusal"];

/// Reads a `chat.completion` body.
pub(crate) fn read(v: &Value, ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let o = walk::as_object(v, "")?;
    let choices = walk::req_array(o, "choices", "")?;
    let mut finish: Option<Finish> = None;
    for (i, choice) in choices.iter().enumerate() {
        let at = walk::idx("/choices", i);
        let c = walk::as_object(choice, &at)?;
        let index = walk::opt_index(c, "index", &at, i)?;
        let reason = walk::opt_str(c, "finish_reason", &at)?;
        let mut f = finish::openai_chat(reason);
        let m_at = key(&at, "message");
        let m = walk::req_object(c, "message", &at)?;
        for field in TEXT_FIELDS {
            scan_text_member(m, field, &m_at, ctx)?;
        }
        if walk::opt_str(m, "refusal", &m_at)?.is_some_and(|r| !r.is_empty()) {
            f = f.worst(Finish::refused("refusal"));
        }
        let mut calls = 0;
        let tc_at = key(&m_at, "tool_calls");
        for (j, tc) in walk::opt_array(m, "tool_calls", &m_at)?.iter().enumerate() {
            if tool_call(tc, &walk::idx(&tc_at, j), index, ctx)? {
                calls += 1;
            }
        }
        if let Some(fc) = walk::opt_object(m, "function_call", &m_at)? {
            let fc_at = key(&m_at, "function_call");
            function(fc, &fc_at, None, &fc_at, index, ctx)?;
            calls += 1;
        }
        if calls == 0 && matches!(reason, Some("tool_calls" | "function_call")) {
            ctx.findings
                .push(FindingCode::CallsExpected, key(&at, "finish_reason"));
        }
        finish = Some(match finish {
            None => f,
            Some(prev) => prev.worst(f),
        });
    }
    Ok(finish.unwrap_or_else(|| Finish::unknown("missing")))
}

/// Scans `content` (a string or an array of parts with `text`),
/// `reasoning_content` or `refusal`.
fn scan_text_member(m: &Object, field: &str, at: &str, ctx: &mut Ctx<'_>) -> Result<(), Error> {
    let f_at = key(at, field);
    match walk::opt(m, field) {
        None => {}
        Some(Value::String(s)) => leak::scan_field(s, &f_at, &mut ctx.findings),
        Some(Value::Array(parts)) => {
            for (i, part) in parts.iter().enumerate() {
                let p_at = walk::idx(&f_at, i);
                if let Some(p) = part.as_object() {
                    for text_key in ["text", "refusal"] {
                        if let Some(t) = walk::opt_str(p, text_key, &p_at)? {
                            leak::scan_field(t, &key(&p_at, text_key), &mut ctx.findings);
                        }
                    }
                }
            }
        }
        Some(other) => return Err(Error::wrong_type(f_at, "string", other.type_name())),
    }
    Ok(())
}

/// One entry of `tool_calls`; `false` when it is not a call toolgate reads.
fn tool_call(tc: &Value, at: &str, choice: usize, ctx: &mut Ctx<'_>) -> Result<bool, Error> {
    let o = walk::as_object(tc, at)?;
    let id = walk::opt_str(o, "id", at)?;
    match walk::opt_str(o, "type", at)?.unwrap_or("function") {
        "function" => {
            let f_at = key(at, "function");
            let f = walk::req_object(o, "function", at)?;
            function(f, &f_at, id, at, choice, ctx)?;
            Ok(true)
        }
        "custom" => {
            let c_at = key(at, "custom");
            let c = walk::req_object(o, "custom", at)?;
            let name = walk::req_str(c, "name", &c_at)?;
            let input = walk::req_str(c, "input", &c_at)?;
            ctx.push(NewCall {
                choice,
                kind: CallKind::Custom,
                call_id: id.map(str::to_owned),
                name: name.to_owned(),
                arguments: Arguments::FreeText(input.to_owned()),
                pointer: at.to_owned(),
                arguments_pointer: key(&c_at, "input"),
            })?;
            Ok(true)
        }
        _ => {
            ctx.findings.push(FindingCode::UnsupportedCallItem, at);
            Ok(false)
        }
    }
}

/// A `{name, arguments}` object.
fn function(
    f: &Object,
    f_at: &str,
    id: Option<&str>,
    call_at: &str,
    choice: usize,
    ctx: &mut Ctx<'_>,
) -> Result<(), Error> {
    let name = walk::req_str(f, "name", f_at)?;
    let arguments = f
        .get("arguments")
        .ok_or_else(|| Error::new(ErrorCode::MissingField, key(f_at, "arguments")))?;
    ctx.push(NewCall {
        choice,
        kind: CallKind::Function,
        call_id: id.map(str::to_owned),
        name: name.to_owned(),
        arguments: string_arguments(arguments),
        pointer: call_at.to_owned(),
        arguments_pointer: key(f_at, "arguments"),
    })
}

/// One call being assembled from stream fragments.
struct Slot {
    id: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    arguments: String,
    pointer: String,
    arguments_pointer: String,
}

/// One choice of a stream.
#[derive(Default)]
struct ChoiceState {
    finish_reason: Option<String>,
    finish_pointer: String,
    refused: bool,
    texts: [TextBuf; 3],
}

/// Reads a `chat.completion.chunk` stream ending in `data: [DONE]`.
pub(crate) fn read_stream(events: &[Event], ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let mut slots: BTreeMap<(usize, usize), Slot> = BTreeMap::new();
    let mut choices: BTreeMap<usize, ChoiceState> = BTreeMap::new();
    let mut error: Option<Finish> = None;
    let mut done = false;
    for event in events {
        if done {
            return Err(Error::new(ErrorCode::StreamProtocol, event.pointer()));
        }
        let chunk = match event.payload(ctx.parse_options())? {
            Payload::Done => {
                done = true;
                continue;
            }
            Payload::Cut => break,
            Payload::Json(v) => v,
        };
        let at = event.pointer();
        let o = walk::as_object(&chunk, &at)?;
        if let Some(e) = walk::opt(o, "error") {
            let kind = e
                .as_object()
                .and_then(|e| e.get("type").or_else(|| e.get("code")))
                .and_then(Value::as_str)
                .unwrap_or("error");
            error = Some(Finish::error(kind));
        }
        if !o.contains_key("choices") && !o.contains_key("error") {
            return Err(Error::new(ErrorCode::MissingField, key(&at, "choices")));
        }
        let c_at = key(&at, "choices");
        for (i, choice) in walk::opt_array(o, "choices", &at)?.iter().enumerate() {
            let ch_at = walk::idx(&c_at, i);
            let c = walk::as_object(choice, &ch_at)?;
            let index = walk::req_index(c, "index", &ch_at)?;
            let state = choices.entry(index).or_default();
            if let Some(r) = walk::opt_str(c, "finish_reason", &ch_at)? {
                state.finish_reason = Some(r.to_owned());
                state.finish_pointer = key(&ch_at, "finish_reason");
            }
            let Some(delta) = walk::opt_object(c, "delta", &ch_at)? else {
                continue;
            };
            let d_at = key(&ch_at, "delta");
            for (field, buf) in TEXT_FIELDS.iter().zip(state.texts.iter_mut()) {
                if let Some(t) = walk::opt_str(delta, field, &d_at)? {
                    buf.push(t, key(&d_at, field));
                    if *field == "refusal" && !t.is_empty() {
                        state.refused = true;
                    }
                }
            }
            let tc_at = key(&d_at, "tool_calls");
            for (j, fragment) in walk::opt_array(delta, "tool_calls", &d_at)?
                .iter()
                .enumerate()
            {
                fragment_into(fragment, &walk::idx(&tc_at, j), index, &mut slots, ctx)?;
            }
            if let Some(fc) = walk::opt_object(delta, "function_call", &d_at)? {
                legacy_into(fc, &key(&d_at, "function_call"), index, &mut slots, ctx)?;
            }
        }
    }
    for state in choices.values() {
        for buf in &state.texts {
            buf.scan_into(&mut ctx.findings);
        }
    }
    let mut per_choice_calls: BTreeMap<usize, usize> = BTreeMap::new();
    for ((choice, _), slot) in slots {
        let kind = slot.kind.as_deref().unwrap_or("function");
        if kind != "function" && kind != "custom" {
            ctx.findings
                .push(FindingCode::UnsupportedCallItem, slot.pointer);
            continue;
        }
        let name = slot.name.ok_or_else(|| {
            let body = if slot.pointer.ends_with("/function_call") {
                slot.pointer.clone()
            } else if kind == "custom" {
                key(&slot.pointer, "custom")
            } else {
                key(&slot.pointer, "function")
            };
            Error::new(ErrorCode::MissingField, key(&body, "name"))
        })?;
        let arguments = if kind == "custom" {
            Arguments::FreeText(slot.arguments)
        } else if slot.arguments.is_empty() {
            Arguments::EmptyText
        } else {
            Arguments::Text(slot.arguments)
        };
        *per_choice_calls.entry(choice).or_default() += 1;
        ctx.push(NewCall {
            choice,
            kind: if kind == "custom" {
                CallKind::Custom
            } else {
                CallKind::Function
            },
            call_id: slot.id,
            name,
            arguments,
            pointer: slot.pointer,
            arguments_pointer: slot.arguments_pointer,
        })?;
    }
    if !done {
        return Ok(Finish::stream_truncated());
    }
    let mut finish: Option<Finish> = error;
    for (index, state) in &choices {
        let reason = state.finish_reason.as_deref();
        let mut f = finish::openai_chat(reason);
        if state.refused {
            f = f.worst(Finish::refused("refusal"));
        }
        if matches!(reason, Some("tool_calls" | "function_call"))
            && !per_choice_calls.contains_key(index)
        {
            ctx.findings
                .push(FindingCode::CallsExpected, state.finish_pointer.clone());
        }
        finish = Some(match finish {
            None => f,
            Some(prev) => prev.worst(f),
        });
    }
    Ok(finish.unwrap_or_else(|| Finish::unknown("missing")))
}

/// Adds one legacy `delta.function_call` fragment (`name`, `arguments`:
/// the form before `tool_calls`, one call per choice) to the choice's
/// legacy slot, after its `tool_calls` slots. The call's pointer ends in
/// `/function_call`, so a rewriter can release it in the same form.
fn legacy_into(
    fc: &Object,
    at: &str,
    choice: usize,
    slots: &mut BTreeMap<(usize, usize), Slot>,
    ctx: &Ctx<'_>,
) -> Result<(), Error> {
    if !slots.contains_key(&(choice, LEGACY)) && slots.len() >= ctx.options.max_calls {
        return Err(Error::new(ErrorCode::TooManyCalls, at));
    }
    let slot = slots.entry((choice, LEGACY)).or_insert_with(|| Slot {
        id: None,
        kind: Some("function".to_owned()),
        name: None,
        arguments: String::new(),
        pointer: at.to_owned(),
        arguments_pointer: key(at, "arguments"),
    });
    if let Some(name) = walk::opt_str(fc, "name", at)? {
        if !name.is_empty() {
            if slot.name.is_some() {
                return Err(Error::new(ErrorCode::StreamProtocol, key(at, "name")));
            }
            slot.name = Some(name.to_owned());
        }
    }
    if let Some(piece) = walk::opt_str(fc, "arguments", at)? {
        slot.arguments.push_str(piece);
    }
    Ok(())
}

/// The slot index of a choice's legacy `function_call` (after every
/// `tool_calls` index).
const LEGACY: usize = usize::MAX;

/// Adds one `delta.tool_calls[]` fragment to its slot.
fn fragment_into(
    fragment: &Value,
    at: &str,
    choice: usize,
    slots: &mut BTreeMap<(usize, usize), Slot>,
    ctx: &Ctx<'_>,
) -> Result<(), Error> {
    let o = walk::as_object(fragment, at)?;
    let index = walk::req_index(o, "index", at)?;
    if index == LEGACY {
        // The legacy call's slot: no `tool_calls` index may share it.
        return Err(Error::new(ErrorCode::StreamProtocol, key(at, "index")));
    }
    if !slots.contains_key(&(choice, index)) && slots.len() >= ctx.options.max_calls {
        return Err(Error::new(ErrorCode::TooManyCalls, at));
    }
    let kind = walk::opt_str(o, "type", at)?;
    let body_key = if kind == Some("custom") || o.contains_key("custom") {
        "custom"
    } else {
        "function"
    };
    let slot = slots.entry((choice, index)).or_insert_with(|| Slot {
        id: None,
        kind: None,
        name: None,
        arguments: String::new(),
        pointer: at.to_owned(),
        arguments_pointer: key(
            &key(at, body_key),
            if body_key == "custom" {
                "input"
            } else {
                "arguments"
            },
        ),
    });
    if let Some(id) = walk::opt_str(o, "id", at)? {
        match &slot.id {
            Some(prev) if prev != id => {
                return Err(Error::new(ErrorCode::StreamProtocol, key(at, "id")))
            }
            Some(_) => {}
            None => slot.id = Some(id.to_owned()),
        }
    }
    if let Some(kind) = kind {
        match &slot.kind {
            Some(prev) if prev != kind => {
                return Err(Error::new(ErrorCode::StreamProtocol, key(at, "type")))
            }
            Some(_) => {}
            None => slot.kind = Some(kind.to_owned()),
        }
    }
    let b_at = key(at, body_key);
    let Some(body) = walk::opt_object(o, body_key, at)? else {
        return Ok(());
    };
    if let Some(name) = walk::opt_str(body, "name", &b_at)? {
        if !name.is_empty() {
            if slot.name.is_some() {
                return Err(Error::new(ErrorCode::StreamProtocol, key(&b_at, "name")));
            }
            slot.name = Some(name.to_owned());
        }
    }
    let args_key = if body_key == "custom" {
        "input"
    } else {
        "arguments"
    };
    if let Some(piece) = walk::opt_str(body, args_key, &b_at)? {
        slot.arguments.push_str(piece);
    }
    Ok(())
}
