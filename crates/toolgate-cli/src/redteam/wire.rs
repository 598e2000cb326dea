//! One proposed call, wrapped in each provider format `toolgate check`
//! reads, as JSON and as a stream. The arguments go in as raw text: as the
//! JSON string the provider sends (OpenAI, Responses), or inline where the
//! provider puts an object (Anthropic, Gemini, MCP), so that what the
//! attack spelled (a duplicate key, `NaN`, an escape) reaches the gate as
//! the model would send it.

use std::fmt::Write as _;

/// A provider format, JSON or streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI Chat Completions (and DeepSeek), one JSON body.
    Openai,
    /// OpenAI Chat Completions, an SSE stream of chunks.
    OpenaiStream,
    /// OpenAI Responses, one JSON body.
    Responses,
    /// OpenAI Responses, an SSE stream of events.
    ResponsesStream,
    /// Anthropic Messages, one JSON body.
    Anthropic,
    /// Anthropic Messages, an SSE stream of events.
    AnthropicStream,
    /// Gemini `generateContent`, one JSON body.
    Gemini,
    /// Gemini `streamGenerateContent?alt=sse`.
    GeminiStream,
    /// An MCP `tools/call` request.
    Mcp,
}

impl Wire {
    /// Every format.
    pub const ALL: [Wire; 9] = [
        Wire::Openai,
        Wire::OpenaiStream,
        Wire::Responses,
        Wire::ResponsesStream,
        Wire::Anthropic,
        Wire::AnthropicStream,
        Wire::Gemini,
        Wire::GeminiStream,
        Wire::Mcp,
    ];

    /// The name in reports and case files.
    pub fn as_str(self) -> &'static str {
        match self {
            Wire::Openai => "openai",
            Wire::OpenaiStream => "openai-sse",
            Wire::Responses => "responses",
            Wire::ResponsesStream => "responses-sse",
            Wire::Anthropic => "anthropic",
            Wire::AnthropicStream => "anthropic-sse",
            Wire::Gemini => "gemini",
            Wire::GeminiStream => "gemini-sse",
            Wire::Mcp => "mcp",
        }
    }

    /// Whether the body is an event stream.
    pub fn streamed(self) -> bool {
        matches!(
            self,
            Wire::OpenaiStream | Wire::ResponsesStream | Wire::AnthropicStream | Wire::GeminiStream
        )
    }

    /// Whether the format has a finish signal that can say "cut off".
    pub fn can_truncate(self) -> bool {
        self != Wire::Mcp
    }
}

/// How the response around the call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A complete turn that proposes the call.
    Complete,
    /// The provider's "out of tokens" finish (`length`, `max_tokens`, …).
    Truncated,
    /// A stream that stops mid-arguments, with no finish or terminal event.
    Cut,
}

/// One call to wrap.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// The call id.
    pub id: &'a str,
    /// The tool name as the model spelled it.
    pub name: &'a str,
    /// The arguments text.
    pub args: &'a str,
}

/// The body of a response (or MCP request) proposing `call`, with `text`
/// before it when given; `None` when the format cannot express it (a cut
/// for a body that is not a stream, a truncation for MCP).
pub fn body(wire: Wire, call: Option<&Call<'_>>, text: Option<&str>, end: End) -> Option<String> {
    if (end == End::Cut && !wire.streamed()) || (end == End::Truncated && !wire.can_truncate()) {
        return None;
    }
    Some(match wire {
        Wire::Openai => openai(call, text, end),
        Wire::OpenaiStream => openai_stream(call, text, end),
        Wire::Responses => responses(call, text, end),
        Wire::ResponsesStream => responses_stream(call, text, end),
        Wire::Anthropic => anthropic(call, text, end),
        Wire::AnthropicStream => anthropic_stream(call, text, end),
        Wire::Gemini => gemini(call, text, end, false),
        Wire::GeminiStream => gemini(call, text, end, true),
        Wire::Mcp => mcp(call?),
    })
}

/// `body` (a JSON body of `wire` proposing `args`) with a second
/// arguments member (`dup`) right after the first: the envelope's own
/// duplicate key. `None` for a stream.
pub fn with_second_arguments(wire: Wire, body: &str, args: &str, dup: &str) -> Option<String> {
    let (first, second) = match wire {
        Wire::Openai | Wire::Responses => (
            format!("\"arguments\":{}", quote(args)),
            format!("\"arguments\":{}", quote(dup)),
        ),
        Wire::Anthropic => (format!("\"input\":{args}"), format!("\"input\":{dup}")),
        Wire::Gemini => (format!("\"args\":{args}"), format!("\"args\":{dup}")),
        Wire::Mcp => (
            format!("\"arguments\":{args}"),
            format!("\"arguments\":{dup}"),
        ),
        _ => return None,
    };
    body.contains(&first)
        .then(|| body.replacen(&first, &format!("{first},{second}"), 1))
}

/// `s` as a JSON string literal (the canonical serializer's escaping).
pub fn quote(s: &str) -> String {
    toolgate_json::canonical::to_string(&toolgate_json::Value::String(std::borrow::Cow::Borrowed(
        s,
    )))
}

/// The arguments text in pieces, as a stream delivers it: three fragments
/// split on character boundaries (a cut keeps only the first half).
fn fragments(args: &str, end: End) -> Vec<&str> {
    let chars: Vec<usize> = args.char_indices().map(|(i, _)| i).collect();
    let at = |n: usize| {
        chars
            .get(chars.len() * n / 3)
            .copied()
            .unwrap_or(args.len())
    };
    let (a, b) = (at(1), at(2));
    let all = [
        args.get(..a).unwrap_or(""),
        args.get(a..b).unwrap_or(""),
        args.get(b..).unwrap_or(""),
    ];
    if end == End::Cut {
        let half = chars.get(chars.len() / 2).copied().unwrap_or(0);
        return vec![args.get(..half).unwrap_or("")];
    }
    all.into_iter().filter(|f| !f.is_empty()).collect()
}

fn sse(out: &mut String, event: Option<&str>, data: &str) {
    if let Some(e) = event {
        let _ = writeln!(out, "event: {e}");
    }
    let _ = write!(out, "data: {data}\n\n");
}

fn openai(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    let finish = match (end, call) {
        (End::Complete, Some(_)) => "tool_calls",
        (End::Complete, None) => "stop",
        _ => "length",
    };
    let content = text.map_or_else(|| "null".to_owned(), quote);
    let calls = call.map_or(String::new(), |c| {
        format!(
            r#","tool_calls":[{{"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}]"#,
            quote(c.id),
            quote(c.name),
            quote(c.args)
        )
    });
    format!(
        r#"{{"id":"chatcmpl-rt","object":"chat.completion","created":1767225600,"model":"redteam","choices":[{{"index":0,"finish_reason":"{finish}","message":{{"role":"assistant","content":{content}{calls}}}}}]}}"#
    )
}

/// An OpenAI chat completion proposing every one of `calls` (parallel
/// calls in one response).
pub fn openai_calls(calls: &[Call<'_>]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|c| {
            format!(
                r#"{{"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}"#,
                quote(c.id),
                quote(c.name),
                quote(c.args)
            )
        })
        .collect();
    format!(
        r#"{{"id":"chatcmpl-rt","object":"chat.completion","created":1767225600,"model":"redteam","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}]}}"#,
        calls.join(",")
    )
}

fn openai_stream(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    let chunk = |delta: &str, finish: &str| {
        format!(
            r#"{{"id":"chatcmpl-rt","object":"chat.completion.chunk","created":1767225600,"model":"redteam","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
        )
    };
    let mut out = String::new();
    sse(
        &mut out,
        None,
        &chunk(r#"{"role":"assistant","content":""}"#, "null"),
    );
    if let Some(t) = text {
        sse(
            &mut out,
            None,
            &chunk(&format!(r#"{{"content":{}}}"#, quote(t)), "null"),
        );
    }
    if let Some(c) = call {
        let head = format!(
            r#"{{"tool_calls":[{{"index":0,"id":{},"type":"function","function":{{"name":{},"arguments":""}}}}]}}"#,
            quote(c.id),
            quote(c.name)
        );
        sse(&mut out, None, &chunk(&head, "null"));
        for f in fragments(c.args, end) {
            let d = format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}"#,
                quote(f)
            );
            sse(&mut out, None, &chunk(&d, "null"));
        }
    }
    if end == End::Cut {
        return out;
    }
    let finish = match (end, call) {
        (End::Complete, Some(_)) => r#""tool_calls""#,
        (End::Complete, None) => r#""stop""#,
        _ => r#""length""#,
    };
    sse(&mut out, None, &chunk("{}", finish));
    sse(&mut out, None, "[DONE]");
    out
}

fn responses_item(c: &Call<'_>, status: &str) -> String {
    format!(
        r#"{{"type":"function_call","id":"fc_rt","call_id":{},"name":{},"arguments":{},"status":"{status}"}}"#,
        quote(c.id),
        quote(c.name),
        quote(c.args)
    )
}

fn responses_message(t: &str) -> String {
    format!(
        r#"{{"type":"message","id":"msg_rt","status":"completed","role":"assistant","content":[{{"type":"output_text","text":{},"annotations":[]}}]}}"#,
        quote(t)
    )
}

fn responses_object(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    let (status, details, item_status) = match end {
        End::Complete => ("completed", "null", "completed"),
        _ => (
            "incomplete",
            r#"{"reason":"max_output_tokens"}"#,
            "incomplete",
        ),
    };
    let mut items = Vec::new();
    if let Some(t) = text {
        items.push(responses_message(t));
    }
    if let Some(c) = call {
        items.push(responses_item(c, item_status));
    }
    format!(
        r#"{{"id":"resp_rt","object":"response","created_at":1767225600,"status":"{status}","incomplete_details":{details},"error":null,"model":"redteam","parallel_tool_calls":true,"output":[{}]}}"#,
        items.join(",")
    )
}

fn responses(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    responses_object(call, text, end)
}

fn responses_stream(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    let mut out = String::new();
    let mut seq = 0u32;
    let mut event = |out: &mut String, name: &str, rest: &str| {
        seq += 1;
        sse(
            out,
            Some(name),
            &format!(r#"{{"type":"{name}","sequence_number":{seq}{rest}}}"#),
        );
    };
    event(
        &mut out,
        "response.created",
        r#","response":{"id":"resp_rt","object":"response","status":"in_progress","output":[]}"#,
    );
    let mut index = 0;
    if let Some(t) = text {
        event(
            &mut out,
            "response.output_item.done",
            &format!(r#","output_index":0,"item":{}"#, responses_message(t)),
        );
        index = 1;
    }
    if let Some(c) = call {
        let added = Call {
            args: "",
            ..c.clone()
        };
        event(
            &mut out,
            "response.output_item.added",
            &format!(
                r#","output_index":{index},"item":{}"#,
                responses_item(&added, "in_progress")
            ),
        );
        for f in fragments(c.args, end) {
            event(
                &mut out,
                "response.function_call_arguments.delta",
                &format!(
                    r#","item_id":"fc_rt","output_index":{index},"delta":{}"#,
                    quote(f)
                ),
            );
        }
        if end == End::Cut {
            return out;
        }
        event(
            &mut out,
            "response.function_call_arguments.done",
            &format!(
                r#","item_id":"fc_rt","output_index":{index},"name":{},"arguments":{}"#,
                quote(c.name),
                quote(c.args)
            ),
        );
        let status = if end == End::Complete {
            "completed"
        } else {
            "incomplete"
        };
        event(
            &mut out,
            "response.output_item.done",
            &format!(
                r#","output_index":{index},"item":{}"#,
                responses_item(c, status)
            ),
        );
    } else if end == End::Cut {
        return out;
    }
    let terminal = if end == End::Complete {
        "response.completed"
    } else {
        "response.incomplete"
    };
    event(
        &mut out,
        terminal,
        &format!(r#","response":{}"#, responses_object(call, text, end)),
    );
    out
}

fn anthropic_stop(call: Option<&Call<'_>>, end: End) -> &'static str {
    match (end, call) {
        (End::Complete, Some(_)) => "tool_use",
        (End::Complete, None) => "end_turn",
        _ => "max_tokens",
    }
}

fn anthropic(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    let mut blocks = Vec::new();
    if let Some(t) = text {
        blocks.push(format!(r#"{{"type":"text","text":{}}}"#, quote(t)));
    }
    if let Some(c) = call {
        blocks.push(format!(
            r#"{{"type":"tool_use","id":{},"name":{},"input":{}}}"#,
            quote(c.id),
            quote(c.name),
            c.args
        ));
    }
    format!(
        r#"{{"id":"msg_rt","type":"message","role":"assistant","model":"redteam","content":[{}],"stop_reason":"{}","stop_sequence":null,"usage":{{"input_tokens":1,"output_tokens":1}}}}"#,
        blocks.join(","),
        anthropic_stop(call, end)
    )
}

fn anthropic_stream(call: Option<&Call<'_>>, text: Option<&str>, end: End) -> String {
    let mut out = String::new();
    sse(
        &mut out,
        Some("message_start"),
        r#"{"type":"message_start","message":{"id":"msg_rt","type":"message","role":"assistant","model":"redteam","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#,
    );
    let mut index = 0;
    if let Some(t) = text {
        sse(
            &mut out,
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        );
        sse(
            &mut out,
            Some("content_block_delta"),
            &format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{}}}}}"#,
                quote(t)
            ),
        );
        sse(
            &mut out,
            Some("content_block_stop"),
            r#"{"type":"content_block_stop","index":0}"#,
        );
        index = 1;
    }
    if let Some(c) = call {
        sse(
            &mut out,
            Some("content_block_start"),
            &format!(
                r#"{{"type":"content_block_start","index":{index},"content_block":{{"type":"tool_use","id":{},"name":{},"input":{{}}}}}}"#,
                quote(c.id),
                quote(c.name)
            ),
        );
        for f in fragments(c.args, end) {
            sse(
                &mut out,
                Some("content_block_delta"),
                &format!(
                    r#"{{"type":"content_block_delta","index":{index},"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
                    quote(f)
                ),
            );
        }
        if end == End::Cut {
            return out;
        }
        sse(
            &mut out,
            Some("content_block_stop"),
            &format!(r#"{{"type":"content_block_stop","index":{index}}}"#),
        );
    } else if end == End::Cut {
        return out;
    }
    sse(
        &mut out,
        Some("message_delta"),
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"{}","stop_sequence":null}},"usage":{{"output_tokens":1}}}}"#,
            anthropic_stop(call, end)
        ),
    );
    sse(&mut out, Some("message_stop"), r#"{"type":"message_stop"}"#);
    out
}

fn gemini(call: Option<&Call<'_>>, text: Option<&str>, end: End, stream: bool) -> String {
    let finish = if end == End::Complete {
        "STOP"
    } else {
        "MAX_TOKENS"
    };
    let candidate = |parts: &[String], finish: Option<&str>| {
        let finish = finish.map_or(String::new(), |f| format!(r#","finishReason":"{f}""#));
        format!(
            r#"{{"candidates":[{{"index":0{finish},"content":{{"role":"model","parts":[{}]}}}}],"modelVersion":"redteam"}}"#,
            parts.join(",")
        )
    };
    let text_part = text.map(|t| format!(r#"{{"text":{}}}"#, quote(t)));
    let call_part = call.map(|c| {
        format!(
            r#"{{"functionCall":{{"id":{},"name":{},"args":{}}}}}"#,
            quote(c.id),
            quote(c.name),
            c.args
        )
    });
    if !stream {
        let parts: Vec<String> = text_part.into_iter().chain(call_part).collect();
        return candidate(&parts, Some(finish));
    }
    // Each chunk a whole response; the call arrives whole in the last one.
    let mut out = String::new();
    if let Some(t) = text_part {
        sse(&mut out, None, &candidate(&[t], None));
    }
    if end == End::Cut {
        return out;
    }
    let parts: Vec<String> = call_part.into_iter().collect();
    sse(&mut out, None, &candidate(&parts, Some(finish)));
    out
}

fn mcp(call: &Call<'_>) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":{},"arguments":{}}}}}"#,
        quote(call.name),
        call.args
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_join_to_the_arguments_and_a_cut_keeps_half() {
        let args = r#"{"a":"ü€x","b":1}"#;
        assert_eq!(fragments(args, End::Complete).concat(), args);
        let cut = fragments(args, End::Cut).concat();
        assert!(args.starts_with(&cut) && cut.len() < args.len(), "{cut}");
    }

    #[test]
    fn mcp_has_no_truncation_and_json_bodies_no_cut() {
        let c = Call {
            id: "c",
            name: "t",
            args: "{}",
        };
        assert!(body(Wire::Mcp, Some(&c), None, End::Truncated).is_none());
        assert!(body(Wire::Openai, Some(&c), None, End::Cut).is_none());
        assert!(body(Wire::OpenaiStream, Some(&c), None, End::Cut).is_some());
    }
}
