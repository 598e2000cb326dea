//! Anthropic Messages: `message` bodies and their event streams.

use toolgate_json::{Object, Value};

use super::error::{Error, ErrorCode};
use super::finding::FindingCode;
use super::finish::{self, Finish};
use super::leak::{self, TextBuf};
use super::sse::{Event, Payload};
use super::walk::{self, key};
use super::{Arguments, CallKind, Ctx, NewCall};

/// Blocks of tools that Anthropic runs itself.
const SERVER_SIDE: [&str; 2] = ["server_tool_use", "mcp_tool_use"];

/// Reads a `message` body.
pub(crate) fn read(v: &Value, ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let o = walk::as_object(v, "")?;
    if let Some(kind) = walk::opt_str(o, "type", "")? {
        if kind != "message" {
            return Err(Error::new(ErrorCode::InvalidValue, "/type"));
        }
    }
    let stop = walk::opt_str(o, "stop_reason", "")?;
    let finish = finish::anthropic(stop, refusal_category(o, "")?);
    let mut calls = 0;
    for (k, block) in walk::req_array(o, "content", "")?.iter().enumerate() {
        let at = walk::idx("/content", k);
        let b = walk::as_object(block, &at)?;
        let kind = walk::req_str(b, "type", &at)?;
        match kind {
            "tool_use" => {
                let input = b
                    .get("input")
                    .ok_or_else(|| Error::new(ErrorCode::MissingField, key(&at, "input")))?;
                ctx.push(NewCall {
                    choice: 0,
                    kind: CallKind::Function,
                    call_id: walk::opt_str(b, "id", &at)?.map(str::to_owned),
                    name: walk::req_str(b, "name", &at)?.to_owned(),
                    arguments: Arguments::Value(input.clone().into_owned()),
                    arguments_pointer: key(&at, "input"),
                    pointer: at,
                })?;
                calls += 1;
            }
            "text" | "thinking" => {
                if let Some(t) = walk::opt_str(b, kind, &at)? {
                    leak::scan_field(t, &key(&at, kind), &mut ctx.findings);
                }
            }
            _ => other_block(kind, &at, ctx),
        }
    }
    if calls == 0 && stop == Some("tool_use") {
        ctx.findings
            .push(FindingCode::CallsExpected, "/stop_reason");
    }
    Ok(finish)
}

/// `stop_details.category` of a refusal.
fn refusal_category<'a>(o: &'a Object, at: &str) -> Result<Option<&'a str>, Error> {
    let d_at = key(at, "stop_details");
    match walk::opt_object(o, "stop_details", at)? {
        Some(d) => walk::opt_str(d, "category", &d_at),
        None => Ok(None),
    }
}

/// A block that is neither a call nor scanned text.
fn other_block(kind: &str, at: &str, ctx: &mut Ctx<'_>) {
    if SERVER_SIDE.contains(&kind) {
        ctx.findings.push(FindingCode::ServerSideCall, at);
    } else if !(kind == "redacted_thinking"
        || kind.ends_with("_result")
        || kind == "container_upload")
    {
        ctx.findings.push(FindingCode::UnrecognizedItem, at);
    }
}

/// One content block of a stream.
enum Block {
    Tool {
        id: Option<String>,
        name: String,
        input: Value<'static>,
        joined: String,
        pointer: String,
    },
    Text(TextBuf),
    Other,
}

/// Reads a Messages event stream.
pub(crate) fn read_stream(events: &[Event], ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let mut started = false;
    let mut blocks: Vec<(Block, bool)> = Vec::new();
    let mut stop_reason: Option<String> = None;
    let mut category: Option<String> = None;
    let mut stop_pointer = String::new();
    let mut terminal: Option<Finish> = None;
    let mut tools = 0usize;
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
        if event.name.as_deref().is_some_and(|n| n != kind) {
            return Err(Error::new(ErrorCode::StreamProtocol, key(&at, "type")));
        }
        if !started && !matches!(kind, "message_start" | "ping" | "error") {
            return Err(Error::new(ErrorCode::StreamProtocol, at));
        }
        match kind {
            "message_start" => {
                if started {
                    return Err(Error::new(ErrorCode::StreamProtocol, at));
                }
                let m_at = key(&at, "message");
                let m = walk::req_object(o, "message", &at)?;
                if !walk::opt_array(m, "content", &m_at)?.is_empty() {
                    return Err(Error::new(ErrorCode::StreamProtocol, key(&m_at, "content")));
                }
                started = true;
            }
            "content_block_start" => {
                let index = walk::req_index(o, "index", &at)?;
                if index != blocks.len() {
                    return Err(Error::new(ErrorCode::StreamProtocol, key(&at, "index")));
                }
                let b_at = key(&at, "content_block");
                let b = walk::req_object(o, "content_block", &at)?;
                let block_kind = walk::req_str(b, "type", &b_at)?;
                let block = match block_kind {
                    "tool_use" => {
                        if tools >= ctx.options.max_calls {
                            return Err(Error::new(ErrorCode::TooManyCalls, b_at));
                        }
                        tools += 1;
                        Block::Tool {
                            id: walk::opt_str(b, "id", &b_at)?.map(str::to_owned),
                            name: walk::req_str(b, "name", &b_at)?.to_owned(),
                            input: b
                                .get("input")
                                .cloned()
                                .map_or_else(|| Value::Object(Object::new()), Value::into_owned),
                            joined: String::new(),
                            pointer: b_at,
                        }
                    }
                    "text" | "thinking" => {
                        let mut buf = TextBuf::default();
                        if let Some(t) = walk::opt_str(b, block_kind, &b_at)? {
                            buf.push(t, key(&b_at, block_kind));
                        }
                        Block::Text(buf)
                    }
                    _ => {
                        other_block(block_kind, &b_at, ctx);
                        Block::Other
                    }
                };
                blocks.push((block, true));
            }
            "content_block_delta" => {
                let index = walk::req_index(o, "index", &at)?;
                let (block, open) = blocks
                    .get_mut(index)
                    .ok_or_else(|| Error::new(ErrorCode::StreamProtocol, key(&at, "index")))?;
                if !*open {
                    return Err(Error::new(ErrorCode::StreamProtocol, key(&at, "index")));
                }
                let d_at = key(&at, "delta");
                let d = walk::req_object(o, "delta", &at)?;
                let delta_kind = walk::req_str(d, "type", &d_at)?;
                match (block, delta_kind) {
                    (Block::Tool { joined, .. }, "input_json_delta") => {
                        joined.push_str(walk::req_str(d, "partial_json", &d_at)?);
                    }
                    (Block::Tool { .. }, _) => {
                        return Err(Error::new(ErrorCode::StreamProtocol, key(&d_at, "type")));
                    }
                    (Block::Text(buf), "text_delta") => {
                        buf.push(walk::req_str(d, "text", &d_at)?, key(&d_at, "text"));
                    }
                    (Block::Text(buf), "thinking_delta") => {
                        buf.push(walk::req_str(d, "thinking", &d_at)?, key(&d_at, "thinking"));
                    }
                    (Block::Text(_), "input_json_delta") => {
                        return Err(Error::new(ErrorCode::StreamProtocol, key(&d_at, "type")));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = walk::req_index(o, "index", &at)?;
                match blocks.get_mut(index) {
                    Some((_, open)) if *open => *open = false,
                    _ => return Err(Error::new(ErrorCode::StreamProtocol, key(&at, "index"))),
                }
            }
            "message_delta" => {
                let d_at = key(&at, "delta");
                if let Some(d) = walk::opt_object(o, "delta", &at)? {
                    if let Some(r) = walk::opt_str(d, "stop_reason", &d_at)? {
                        stop_reason = Some(r.to_owned());
                        stop_pointer = key(&d_at, "stop_reason");
                    }
                    if let Some(c) = refusal_category(d, &d_at)? {
                        category = Some(c.to_owned());
                    }
                }
            }
            "message_stop" => {
                if blocks.iter().any(|(_, open)| *open) {
                    return Err(Error::new(ErrorCode::StreamProtocol, at));
                }
                terminal = Some(finish::anthropic(
                    stop_reason.as_deref(),
                    category.as_deref(),
                ));
            }
            "error" => {
                let e_at = key(&at, "error");
                let code = match walk::opt_object(o, "error", &at)? {
                    Some(e) => walk::opt_str(e, "type", &e_at)?.unwrap_or("error"),
                    None => "error",
                };
                terminal = Some(Finish::error(code));
            }
            _ => {}
        }
    }
    let mut calls = 0;
    for (block, _) in blocks {
        match block {
            Block::Tool {
                id,
                name,
                input,
                joined,
                pointer,
            } => {
                let (arguments, arguments_pointer) = if joined.is_empty() {
                    (Arguments::Value(input), key(&pointer, "input"))
                } else {
                    (Arguments::Text(joined), key(&pointer, "input"))
                };
                ctx.push(NewCall {
                    choice: 0,
                    kind: CallKind::Function,
                    call_id: id,
                    name,
                    arguments,
                    pointer,
                    arguments_pointer,
                })?;
                calls += 1;
            }
            Block::Text(buf) => buf.scan_into(&mut ctx.findings),
            Block::Other => {}
        }
    }
    if calls == 0 && stop_reason.as_deref() == Some("tool_use") {
        ctx.findings.push(FindingCode::CallsExpected, stop_pointer);
    }
    Ok(terminal.unwrap_or_else(Finish::stream_truncated))
}
