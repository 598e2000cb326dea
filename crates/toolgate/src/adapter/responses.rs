//! OpenAI Responses: `response` bodies and their event streams.

use std::collections::{BTreeMap, HashSet};

use toolgate_json::{Object, Value};

use super::error::{Error, ErrorCode};
use super::finding::FindingCode;
use super::finish::{self, Finish};
use super::leak::{self, TextBuf};
use super::sse::{Event, Payload};
use super::walk::{self, key};
use super::{string_arguments, Arguments, CallKind, Ctx, NewCall};

/// Output items that run inside OpenAI: they cannot be gated here.
const SERVER_SIDE: [&str; 6] = [
    "mcp_call",
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "tool_search_call",
];

/// Output items the client executes, which toolgate does not read.
const CLIENT_UNSUPPORTED: [&str; 6] = [
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "computer_call",
    "mcp_approval_request",
    "function_shell_call",
];

/// Output items that are neither calls nor text.
const INERT: [&str; 2] = ["mcp_list_tools", "compaction"];

/// Reads a `response` body.
pub(crate) fn read(v: &Value, ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let o = walk::as_object(v, "")?;
    let mut finish = response_finish(o, "")?;
    let output = walk::req_array(o, "output", "")?;
    for (k, item) in output.iter().enumerate() {
        let at = walk::idx("/output", k);
        let io = walk::as_object(item, &at)?;
        let kind = walk::req_str(io, "type", &at)?;
        match kind {
            "function_call" | "custom_tool_call" => {
                let call = call_item(io, &at, kind)?;
                if call.status.as_deref() == Some("incomplete") {
                    finish = finish.worst(Finish::truncated("item_incomplete"));
                }
                let namespace = call.namespace.clone();
                ctx.push_in(namespace, call.into_new_call(&at))?;
            }
            _ => {
                if other_item(io, kind, &at, ctx)? {
                    finish = finish.worst(Finish::refused("refusal"));
                }
            }
        }
    }
    Ok(finish)
}

/// The finish of a `response` object: `status`, `incomplete_details.reason`
/// and `error`.
fn response_finish(o: &Object, at: &str) -> Result<Finish, Error> {
    let status = walk::opt_str(o, "status", at)?;
    let details_at = key(at, "incomplete_details");
    let incomplete = match walk::opt_object(o, "incomplete_details", at)? {
        Some(d) => walk::opt_str(d, "reason", &details_at)?,
        None => None,
    };
    let mut f = finish::responses(status, incomplete);
    if let Some(e) = walk::opt(o, "error") {
        let code = e
            .as_object()
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str)
            .unwrap_or("error");
        f = Finish::error(code).worst(f);
    }
    Ok(f)
}

/// A `function_call` or `custom_tool_call` item.
struct CallItem {
    kind: CallKind,
    id: Option<String>,
    call_id: Option<String>,
    name: String,
    namespace: Option<String>,
    arguments: Value<'static>,
    status: Option<String>,
}

impl CallItem {
    fn args_key(&self) -> &'static str {
        match self.kind {
            CallKind::Custom => "input",
            CallKind::Function => "arguments",
        }
    }

    fn into_new_call(self, at: &str) -> NewCall {
        let arguments_pointer = key(at, self.args_key());
        let arguments = match self.kind {
            CallKind::Custom => {
                Arguments::FreeText(self.arguments.as_str().unwrap_or_default().to_owned())
            }
            CallKind::Function => string_arguments(&self.arguments),
        };
        NewCall {
            choice: 0,
            kind: self.kind,
            call_id: self.call_id,
            name: self.name,
            arguments,
            pointer: at.to_owned(),
            arguments_pointer,
        }
    }
}

fn call_item(o: &Object, at: &str, kind: &str) -> Result<CallItem, Error> {
    let kind = if kind == "custom_tool_call" {
        CallKind::Custom
    } else {
        CallKind::Function
    };
    let args_key = match kind {
        CallKind::Custom => "input",
        CallKind::Function => "arguments",
    };
    let arguments = o
        .get(args_key)
        .ok_or_else(|| Error::new(ErrorCode::MissingField, key(at, args_key)))?;
    if kind == CallKind::Custom && arguments.as_str().is_none() {
        return Err(Error::wrong_type(
            key(at, args_key),
            "string",
            arguments.type_name(),
        ));
    }
    Ok(CallItem {
        kind,
        id: walk::opt_str(o, "id", at)?.map(str::to_owned),
        call_id: walk::opt_str(o, "call_id", at)?.map(str::to_owned),
        name: walk::req_str(o, "name", at)?.to_owned(),
        namespace: walk::opt_str(o, "namespace", at)?.map(str::to_owned),
        arguments: arguments.clone().into_owned(),
        status: walk::opt_str(o, "status", at)?.map(str::to_owned),
    })
}

/// Any other output item: text is scanned, server-side and unsupported calls
/// are findings. Returns whether the item carries a refusal.
fn other_item(o: &Object, kind: &str, at: &str, ctx: &mut Ctx<'_>) -> Result<bool, Error> {
    let mut refused = false;
    match kind {
        "message" => {
            let c_at = key(at, "content");
            for (i, part) in walk::opt_array(o, "content", at)?.iter().enumerate() {
                let p_at = walk::idx(&c_at, i);
                let p = walk::as_object(part, &p_at)?;
                for text_key in ["text", "refusal"] {
                    if let Some(t) = walk::opt_str(p, text_key, &p_at)? {
                        leak::scan_field(t, &key(&p_at, text_key), &mut ctx.findings);
                    }
                }
                if walk::opt_str(p, "type", &p_at)? == Some("refusal") {
                    refused = true;
                }
            }
        }
        "reasoning" => {
            for list in ["summary", "content"] {
                let l_at = key(at, list);
                for (i, part) in walk::opt_array(o, list, at)?.iter().enumerate() {
                    let p_at = walk::idx(&l_at, i);
                    if let Some(t) = part
                        .as_object()
                        .map(|p| walk::opt_str(p, "text", &p_at))
                        .transpose()?
                        .flatten()
                    {
                        leak::scan_field(t, &key(&p_at, "text"), &mut ctx.findings);
                    }
                }
            }
        }
        _ if SERVER_SIDE.contains(&kind) => ctx.findings.push(FindingCode::ServerSideCall, at),
        _ if CLIENT_UNSUPPORTED.contains(&kind) => {
            ctx.findings.push(FindingCode::UnsupportedCallItem, at)
        }
        _ if INERT.contains(&kind) => {}
        _ => ctx.findings.push(FindingCode::UnrecognizedItem, at),
    }
    Ok(refused)
}

/// One call item being assembled from stream events.
struct Slot {
    kind: CallKind,
    id: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    joined: String,
    args_done: bool,
    item_done: bool,
    status: Option<String>,
    pointer: String,
    arguments_pointer: String,
}

/// Text kinds of a stream, per output index.
const TEXT_EVENTS: [&str; 4] = [
    "response.output_text.delta",
    "response.refusal.delta",
    "response.reasoning_text.delta",
    "response.reasoning_summary_text.delta",
];

/// Reads a Responses event stream.
pub(crate) fn read_stream(events: &[Event], ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let mut slots: BTreeMap<usize, Slot> = BTreeMap::new();
    let mut added: HashSet<usize> = HashSet::new();
    let mut texts: BTreeMap<(usize, usize), TextBuf> = BTreeMap::new();
    let mut refused = false;
    let mut terminal: Option<Finish> = None;
    let mut final_output: Option<(Value, String)> = None;
    let mut sequence: Option<usize> = None;
    for event in events {
        if terminal.is_some() {
            return Err(Error::new(ErrorCode::StreamProtocol, event.pointer()));
        }
        let v = match event.payload(ctx.parse_options())? {
            Payload::Json(v) => v,
            Payload::Cut => break,
            Payload::Done => return Err(Error::new(ErrorCode::StreamProtocol, event.pointer())),
        };
        let at = event.pointer();
        let o = walk::as_object(&v, &at)?;
        let kind = walk::req_str(o, "type", &at)?;
        if event.name.as_deref().is_some_and(|n| n != kind)
            || !(kind.starts_with("response.") || kind == "error")
        {
            return Err(Error::new(ErrorCode::StreamProtocol, key(&at, "type")));
        }
        if walk::opt(o, "sequence_number").is_some() {
            let n = walk::req_index(o, "sequence_number", &at)?;
            if sequence.is_some_and(|prev| n <= prev) {
                return Err(Error::new(
                    ErrorCode::StreamProtocol,
                    key(&at, "sequence_number"),
                ));
            }
            sequence = Some(n);
        }
        match kind {
            "response.output_item.added" => {
                let index = walk::req_index(o, "output_index", &at)?;
                let i_at = key(&at, "item");
                let item = walk::req_object(o, "item", &at)?;
                let item_kind = walk::req_str(item, "type", &i_at)?;
                if !added.insert(index) {
                    return Err(Error::new(
                        ErrorCode::StreamProtocol,
                        key(&at, "output_index"),
                    ));
                }
                if matches!(item_kind, "function_call" | "custom_tool_call") {
                    new_slot(item, item_kind, &i_at, index, &mut slots, ctx)?;
                } else if other_item(item, item_kind, &i_at, ctx)? {
                    refused = true;
                }
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                let slot = find_slot(o, &at, &mut slots)?;
                if slot.args_done || slot.item_done {
                    return Err(Error::new(ErrorCode::StreamProtocol, at));
                }
                slot.joined.push_str(walk::req_str(o, "delta", &at)?);
            }
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                let args_key = if kind.starts_with("response.custom") {
                    "input"
                } else {
                    "arguments"
                };
                let slot = find_slot(o, &at, &mut slots)?;
                if slot.args_done || slot.item_done {
                    return Err(Error::new(ErrorCode::StreamProtocol, at));
                }
                if walk::req_str(o, args_key, &at)? != slot.joined {
                    return Err(Error::new(ErrorCode::StreamMismatch, key(&at, args_key)));
                }
                if let Some(name) = walk::opt_str(o, "name", &at)? {
                    check_same(&mut slot.name, name, &key(&at, "name"))?;
                }
                slot.args_done = true;
            }
            "response.output_item.done" => {
                let index = walk::req_index(o, "output_index", &at)?;
                let i_at = key(&at, "item");
                let item = walk::req_object(o, "item", &at)?;
                let item_kind = walk::req_str(item, "type", &i_at)?;
                if matches!(item_kind, "function_call" | "custom_tool_call") {
                    if !slots.contains_key(&index) {
                        new_slot(item, item_kind, &i_at, index, &mut slots, ctx)?;
                    }
                    let slot = slots
                        .get_mut(&index)
                        .ok_or_else(|| Error::new(ErrorCode::StreamProtocol, i_at.clone()))?;
                    if slot.item_done {
                        return Err(Error::new(ErrorCode::StreamProtocol, at));
                    }
                    item_matches(item, &i_at, slot)?;
                    slot.item_done = true;
                    slot.status = walk::opt_str(item, "status", &i_at)?.map(str::to_owned);
                } else if !added.contains(&index) && other_item(item, item_kind, &i_at, ctx)? {
                    refused = true;
                }
            }
            _ if TEXT_EVENTS.contains(&kind) => {
                let index = walk::opt_index(o, "output_index", &at, 0)?;
                let which = TEXT_EVENTS
                    .iter()
                    .position(|k| *k == kind)
                    .unwrap_or_default();
                let delta = walk::req_str(o, "delta", &at)?;
                if kind == "response.refusal.delta" && !delta.is_empty() {
                    refused = true;
                }
                texts
                    .entry((index, which))
                    .or_default()
                    .push(delta, key(&at, "delta"));
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let f = match walk::opt_object(o, "response", &at)? {
                    Some(r) => {
                        let r_at = key(&at, "response");
                        if let Some(out) = walk::opt(r, "output") {
                            final_output = Some((out.clone(), key(&r_at, "output")));
                        }
                        response_finish(r, &r_at)?
                    }
                    None => finish::responses(kind.strip_prefix("response."), None),
                };
                terminal = Some(f);
            }
            "error" => {
                let code = walk::opt_str(o, "code", &at)?.unwrap_or("error");
                terminal = Some(Finish::error(code));
            }
            _ => {}
        }
    }
    for buf in texts.values() {
        buf.scan_into(&mut ctx.findings);
    }
    if let Some((output, o_at)) = &final_output {
        compare_final(output, o_at, &slots)?;
    }
    let mut finish = match terminal {
        Some(f) => f,
        None => Finish::stream_truncated(),
    };
    if refused {
        finish = finish.worst(Finish::refused("refusal"));
    }
    for slot in slots.into_values() {
        if !slot.item_done || slot.status.as_deref() == Some("incomplete") {
            finish = finish.worst(Finish::truncated("item_incomplete"));
        }
        let name = slot
            .name
            .ok_or_else(|| Error::new(ErrorCode::MissingField, key(&slot.pointer, "name")))?;
        let arguments = match slot.kind {
            CallKind::Custom => Arguments::FreeText(slot.joined),
            CallKind::Function if slot.joined.is_empty() => Arguments::EmptyText,
            CallKind::Function => Arguments::Text(slot.joined),
        };
        ctx.push_in(
            slot.namespace,
            NewCall {
                choice: 0,
                kind: slot.kind,
                call_id: slot.call_id,
                name,
                arguments,
                pointer: slot.pointer,
                arguments_pointer: slot.arguments_pointer,
            },
        )?;
    }
    Ok(finish)
}

fn new_slot(
    item: &Object,
    item_kind: &str,
    i_at: &str,
    index: usize,
    slots: &mut BTreeMap<usize, Slot>,
    ctx: &Ctx<'_>,
) -> Result<(), Error> {
    if slots.len() >= ctx.options.max_calls {
        return Err(Error::new(ErrorCode::TooManyCalls, i_at));
    }
    let kind = if item_kind == "custom_tool_call" {
        CallKind::Custom
    } else {
        CallKind::Function
    };
    let args_key = if kind == CallKind::Custom {
        "input"
    } else {
        "arguments"
    };
    let initial = walk::opt_str(item, args_key, i_at)?.unwrap_or_default();
    slots.insert(
        index,
        Slot {
            kind,
            id: walk::opt_str(item, "id", i_at)?.map(str::to_owned),
            call_id: walk::opt_str(item, "call_id", i_at)?.map(str::to_owned),
            name: walk::opt_str(item, "name", i_at)?.map(str::to_owned),
            namespace: walk::opt_str(item, "namespace", i_at)?.map(str::to_owned),
            joined: initial.to_owned(),
            args_done: false,
            item_done: false,
            status: None,
            pointer: i_at.to_owned(),
            arguments_pointer: key(i_at, args_key),
        },
    );
    Ok(())
}

/// The slot an arguments event is for: by `item_id`, else by `output_index`.
fn find_slot<'s>(
    o: &Object,
    at: &str,
    slots: &'s mut BTreeMap<usize, Slot>,
) -> Result<&'s mut Slot, Error> {
    let item_id = walk::opt_str(o, "item_id", at)?;
    let index = match walk::opt(o, "output_index") {
        Some(_) => Some(walk::req_index(o, "output_index", at)?),
        None => None,
    };
    let found = slots.iter_mut().find(|(i, s)| match (item_id, index) {
        (Some(id), Some(index)) => s.id.as_deref() == Some(id) && **i == index,
        (Some(id), None) => s.id.as_deref() == Some(id),
        (None, Some(index)) => **i == index,
        (None, None) => false,
    });
    found
        .map(|(_, s)| s)
        .ok_or_else(|| Error::new(ErrorCode::StreamProtocol, at))
}

/// A name (or id) that must not change once known.
fn check_same(slot: &mut Option<String>, value: &str, at: &str) -> Result<(), Error> {
    match slot {
        Some(prev) if prev != value => Err(Error::new(ErrorCode::StreamMismatch, at)),
        Some(_) => Ok(()),
        None => {
            *slot = Some(value.to_owned());
            Ok(())
        }
    }
}

/// `output_item.done` must repeat what the stream assembled.
fn item_matches(item: &Object, at: &str, slot: &mut Slot) -> Result<(), Error> {
    let args_key = if slot.kind == CallKind::Custom {
        "input"
    } else {
        "arguments"
    };
    let args = walk::req_str(item, args_key, at)?;
    if args != slot.joined {
        return Err(Error::new(ErrorCode::StreamMismatch, key(at, args_key)));
    }
    check_same(
        &mut slot.name,
        walk::req_str(item, "name", at)?,
        &key(at, "name"),
    )?;
    // The namespace is part of the tool's identity: the whole item must
    // name the one the item was added with (or none, as it was).
    if walk::opt_str(item, "namespace", at)? != slot.namespace.as_deref() {
        return Err(Error::new(ErrorCode::StreamMismatch, key(at, "namespace")));
    }
    if let Some(id) = walk::opt_str(item, "id", at)? {
        check_same(&mut slot.id, id, &key(at, "id"))?;
    }
    if let Some(call_id) = walk::opt_str(item, "call_id", at)? {
        check_same(&mut slot.call_id, call_id, &key(at, "call_id"))?;
    }
    Ok(())
}

/// The terminal event's `response.output`, when it lists items, must list
/// exactly the call items the stream assembled, with the same arguments.
fn compare_final(output: &Value, at: &str, slots: &BTreeMap<usize, Slot>) -> Result<(), Error> {
    let items = output
        .as_array()
        .ok_or_else(|| Error::wrong_type(at, "array", output.type_name()))?;
    if items.is_empty() {
        return Ok(());
    }
    let mut matched = HashSet::new();
    for (k, item) in items.iter().enumerate() {
        let i_at = walk::idx(at, k);
        let o = walk::as_object(item, &i_at)?;
        let kind = walk::req_str(o, "type", &i_at)?;
        if !matches!(kind, "function_call" | "custom_tool_call") {
            continue;
        }
        let call = call_item(o, &i_at, kind)?;
        let slot = slots.iter().find(|(_, s)| {
            (call.id.is_some() && s.id == call.id)
                || (call.id.is_none() && call.call_id.is_some() && s.call_id == call.call_id)
        });
        let Some((index, slot)) = slot else {
            return Err(Error::new(ErrorCode::StreamMismatch, i_at));
        };
        let same = call.arguments.as_str() == Some(slot.joined.as_str())
            && slot.name.as_deref() == Some(call.name.as_str())
            && call.namespace == slot.namespace
            && (call.call_id.is_none() || call.call_id == slot.call_id);
        if !same || !matched.insert(*index) {
            return Err(Error::new(ErrorCode::StreamMismatch, i_at));
        }
    }
    if let Some((_, slot)) = slots.iter().find(|(i, _)| !matched.contains(*i)) {
        return Err(Error::new(ErrorCode::StreamMismatch, slot.pointer.clone()));
    }
    Ok(())
}
