//! Streams, rewritten as they pass: text (and reasoning) events go on as
//! they arrive; every tool call's events are held back; the finish is held
//! until the stream's terminal event. Then the whole stream, as received, is
//! decided by the gate, and only then are the calls released, each whole in
//! one event with the canonical arguments, or withheld with feedback in
//! their place, and the finish rewritten to match what was released.
//!
//! A stream that breaks, sends an error or garbage, or ends without its
//! terminal event never releases a call: [`Rewriter::event`] reports it
//! broken and the proxy ends the stream with an error event.
//!
//! The rewriters are plain state machines over [`Event`]s (no I/O), so the
//! fuzz target drives them as the proxy does.

use std::borrow::Cow;

use toolgate::adapter::{Envelope, ProposedCall};
use toolgate::{Decision, Decisions};
use toolgate_json::{canonical, Object, Value};

use crate::api::Api;
use crate::items::{disposition, part_known, strip_toolgate, unknown_part, Disposition, TOOLGATE};
use crate::members::{self, Shape};
use crate::rewrite::{chat_call, feedback_text, legacy_call, responses_call, summary};
use crate::sse::Event;

/// What one upstream event leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Events to send on now (possibly none).
    Emit(String),
    /// The terminal event arrived: decide, then [`Rewriter::finish`].
    End,
}

/// Why a stream cannot be handed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken(pub &'static str);

/// A call the stream held back (as the upstream named it), for the audit
/// record of a stream refused as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeldCall {
    /// The provider's call id, if it gave one (at most
    /// [`HeldCall::MAX_LEN`] bytes).
    pub call_id: Option<String>,
    /// The tool's name as the upstream gave it (at most
    /// [`HeldCall::MAX_LEN`] bytes); `""` when none came.
    pub name: String,
}

impl HeldCall {
    /// The longest id or name kept, in bytes; longer ones are cut.
    pub const MAX_LEN: usize = 256;
    /// The most calls kept per stream (the adapter's default cap).
    pub const MAX_CALLS: usize = toolgate::AdapterOptions::DEFAULT_MAX_CALLS;
}

/// `s` cut to at most [`HeldCall::MAX_LEN`] bytes at a character boundary.
fn bounded(s: &str) -> String {
    let mut end = s.len().min(HeldCall::MAX_LEN);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or_default().to_owned()
}

/// One stream's rewriter.
#[derive(Debug)]
pub struct Rewriter {
    api: Api,
    pass_through: Vec<String>,
    /// Chat: the held chunks that carry a finish, and those after them.
    held: Vec<Value<'static>>,
    /// Chat: the first chunk's identity members, for the chunks made here.
    template: Object<'static>,
    /// Messages/Responses: upstream block or item index → the index sent.
    map: Vec<(u64, Option<u64>)>,
    /// Messages/Responses: the type each upstream block or item started as.
    kinds: Vec<(u64, String)>,
    next_index: u64,
    /// Messages: the held `message_delta`; Responses: the terminal event.
    terminal: Option<(String, Value<'static>)>,
    sequence: u64,
    ended: bool,
    /// The calls held back, by their upstream position (chat: choice and
    /// index; elsewhere the block or item index).
    held_calls: Vec<((u64, u64), HeldCall)>,
    /// Chat: the choices seen.
    choices: Vec<u64>,
    /// Responses: each passed item as it was sent, by the index sent.
    sent_items: Vec<(u64, Value<'static>)>,
}

fn s(t: &str) -> Value<'static> {
    Value::String(Cow::Owned(t.to_owned()))
}

fn num(n: u64) -> Value<'static> {
    Value::Number(n.into())
}

fn field<'v>(v: &'v Value<'static>, name: &str) -> Option<&'v Value<'static>> {
    v.as_object().and_then(|o| o.get(name))
}

fn type_of<'a>(v: &'a Value<'_>) -> &'a str {
    v.as_object()
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// An event's `type` and `sequence_number`, and its `inner` object (when
/// it has one) rebuilt from `list` with its `items` emptied: nothing else
/// of it goes on.
fn state_event(
    v: &Value<'static>,
    inner: &str,
    list: &[(&'static str, Shape)],
    items: &str,
) -> Value<'static> {
    let mut out = Object::new();
    if let Some(o) = v.as_object() {
        for k in ["type", "sequence_number"] {
            if let Some(x) = o.get(k) {
                out.insert(k, x.clone());
            }
        }
        if let Some(Value::Object(state)) = o.get(inner) {
            let mut state = members::rebuild(list, state);
            state.insert(items.to_owned(), Value::Array(Vec::new()));
            out.insert(inner.to_owned(), Value::Object(state));
        }
    }
    Value::Object(out)
}

/// An upstream event as sent on: its `toolgate` members removed.
fn upstream_event(name: Option<&str>, mut data: Value<'static>) -> String {
    strip_toolgate(&mut data);
    data_event(name, &data)
}

fn data_event(name: Option<&str>, data: &Value<'_>) -> String {
    Event {
        name: name.map(str::to_owned),
        data: canonical::to_string(data),
    }
    .to_wire()
}

impl Rewriter {
    /// A rewriter for `api`'s stream; `pass_through` names the non-function
    /// item types that may go on.
    pub fn new(api: Api, pass_through: &[String]) -> Self {
        Self {
            api,
            pass_through: pass_through.to_vec(),
            held: Vec::new(),
            template: Object::new(),
            map: Vec::new(),
            kinds: Vec::new(),
            next_index: 0,
            terminal: None,
            sequence: 0,
            ended: false,
            held_calls: Vec::new(),
            choices: Vec::new(),
            sent_items: Vec::new(),
        }
    }

    /// The calls the stream held back so far, as the upstream named them
    /// (at most [`HeldCall::MAX_CALLS`]).
    pub fn held_calls(&self) -> impl Iterator<Item = &HeldCall> {
        self.held_calls.iter().map(|(_, c)| c)
    }

    /// Notes a held call at `at`, or what more it says of one noted.
    fn hold(&mut self, at: (u64, u64), call_id: Option<&str>, name: Option<&str>) {
        if let Some((_, c)) = self.held_calls.iter_mut().find(|(p, _)| *p == at) {
            if c.call_id.is_none() {
                c.call_id = call_id.map(bounded);
            }
            if c.name.is_empty() {
                c.name = name.map(bounded).unwrap_or_default();
            }
            return;
        }
        if self.held_calls.len() < HeldCall::MAX_CALLS {
            self.held_calls.push((
                at,
                HeldCall {
                    call_id: call_id.map(bounded),
                    name: name.map(bounded).unwrap_or_default(),
                },
            ));
        }
    }

    /// Whether the terminal event was seen.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Reads one upstream event.
    pub fn event(&mut self, e: &Event) -> Result<Step, Broken> {
        if self.ended {
            return Err(Broken("events after the stream's end"));
        }
        match self.api {
            Api::ChatCompletions => self.chat(e),
            Api::Messages => self.messages(e),
            Api::Responses => self.responses(e),
        }
    }

    fn parse(data: &str) -> Result<Value<'static>, Broken> {
        toolgate_json::from_slice(data.as_bytes())
            .map(Value::into_owned)
            .map_err(|_| Broken("an event that is not strict JSON"))
    }

    fn out_index(&mut self, upstream: u64, keep: bool) -> Option<u64> {
        if let Some((_, out)) = self.map.iter().find(|(u, _)| *u == upstream) {
            return *out;
        }
        let out = keep.then(|| {
            let i = self.next_index;
            self.next_index += 1;
            i
        });
        self.map.push((upstream, out));
        out
    }

    fn kind_of(&self, upstream: u64) -> &str {
        self.kinds
            .iter()
            .find(|(u, _)| *u == upstream)
            .map_or("", |(_, k)| k.as_str())
    }

    fn mapped(&self, upstream: u64) -> Option<u64> {
        self.map
            .iter()
            .find(|(u, _)| *u == upstream)
            .and_then(|(_, o)| *o)
    }

    // --- Chat Completions -------------------------------------------------

    fn chat(&mut self, e: &Event) -> Result<Step, Broken> {
        if e.data == "[DONE]" {
            self.ended = true;
            return Ok(Step::End);
        }
        let mut chunk = Self::parse(&e.data)?;
        let Value::Object(o) = &mut chunk else {
            return Err(Broken("a chunk that is not an object"));
        };
        if o.contains_key("error") {
            return Err(Broken("the upstream sent an error"));
        }
        // Read whole before anything of it goes on: a chunk the gate
        // could not read is never sent.
        let Some(Value::Array(choices)) = o.get_mut("choices") else {
            return Err(Broken("a chunk without a `choices` array"));
        };
        let mut finished = false;
        let mut content = choices.is_empty();
        for c in choices.iter_mut() {
            let Value::Object(c) = c else {
                return Err(Broken("a choice that is not an object"));
            };
            let index = c
                .get("index")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64())
                .ok_or(Broken("a choice without an index"))?;
            if !self.choices.contains(&index) {
                self.choices.push(index);
            }
            match c.get("finish_reason") {
                None | Some(Value::Null) => {}
                Some(Value::String(_)) => finished = true,
                Some(_) => return Err(Broken("a finish reason that is not a string")),
            }
            // A chunk's choice carries a delta, never a whole message.
            c.remove("message");
            let delta = match c.get_mut("delta") {
                None | Some(Value::Null) => continue,
                Some(Value::Object(d)) => d,
                Some(_) => return Err(Broken("a delta that is not an object")),
            };
            for k in ["content", "reasoning_content", "refusal", "role"] {
                if !matches!(delta.get(k), None | Some(Value::Null | Value::String(_))) {
                    return Err(Broken("a delta whose text is not a string"));
                }
            }
            // Only the members on the pass list are handed on.
            if crate::items::chat_member_off_list(delta).is_some() {
                return Err(Broken("a delta member off the pass list"));
            }
            let fragments = match delta.remove("tool_calls") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(f)) => f,
                Some(_) => return Err(Broken("`tool_calls` that is not an array")),
            };
            for f in &fragments {
                self.chat_fragment(index, f)?;
            }
            match delta.remove("function_call") {
                None | Some(Value::Null) => {}
                Some(Value::Object(f)) => {
                    let name = f.get("name").and_then(Value::as_str);
                    self.hold((index, u64::MAX), None, name);
                }
                Some(_) => return Err(Broken("a `function_call` that is not an object")),
            }
            content |= delta
                .iter()
                .any(|(k, v)| k != "role" && !v.is_null() && v.as_str() != Some(""));
            content |= delta.get("role").is_some();
        }
        // The chunk goes on rebuilt: its state from the pass list, each
        // choice's logprobs checked against the text it releases.
        let mut chunk = members::rebuild(&members::CHAT_RESPONSE, o);
        if let Some(Value::Array(cs)) = chunk.get_mut("choices") {
            for c in cs.iter_mut() {
                if let Value::Object(c) = c {
                    *c = members::chat_choice(c);
                }
            }
        }
        if self.template.is_empty() {
            self.template = chunk.clone();
            self.template.remove("choices");
            self.template.remove("usage");
        }
        let chunk = Value::Object(chunk);
        if finished || !self.held.is_empty() {
            self.held.push(chunk);
            return Ok(Step::Emit(String::new()));
        }
        Ok(Step::Emit(if content {
            upstream_event(None, chunk)
        } else {
            String::new()
        }))
    }

    /// One `tool_calls` fragment: read (types checked, the call's type on
    /// the pass list) and held.
    fn chat_fragment(&mut self, choice: u64, f: &Value<'static>) -> Result<(), Broken> {
        let Some(f) = f.as_object() else {
            return Err(Broken("a tool call fragment that is not an object"));
        };
        let index = f
            .get("index")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
            .ok_or(Broken("a tool call fragment without an index"))?;
        let kind = match f.get("type") {
            None | Some(Value::Null) => None,
            Some(Value::String(k)) => Some(k.as_ref()),
            Some(_) => return Err(Broken("a tool call type that is not a string")),
        };
        if kind.is_some_and(|k| disposition(Api::ChatCompletions, k, &[]) != Disposition::Gate) {
            return Err(Broken("a tool call of a type off the pass list"));
        }
        let id = match f.get("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id.as_ref()),
            Some(_) => return Err(Broken("a tool call id that is not a string")),
        };
        let mut name = None;
        for body in ["function", "custom"] {
            match f.get(body) {
                None | Some(Value::Null) => {}
                Some(Value::Object(b)) => {
                    for k in ["name", "arguments", "input"] {
                        if !matches!(b.get(k), None | Some(Value::Null | Value::String(_))) {
                            return Err(Broken("a tool call fragment of the wrong type"));
                        }
                    }
                    name = name.or(b.get("name").and_then(Value::as_str));
                }
                Some(_) => return Err(Broken("a tool call fragment of the wrong type")),
            }
        }
        self.hold((choice, index), id, name.filter(|n| !n.is_empty()));
        Ok(())
    }

    fn chat_chunk(&self, choice: u64, delta: Object<'static>) -> String {
        let mut c = Object::new();
        c.insert("index", num(choice));
        c.insert("delta", Value::Object(delta));
        c.insert("finish_reason", Value::Null);
        let mut o = self.template.clone();
        if !o.contains_key("object") {
            o.insert("object", s("chat.completion.chunk"));
        }
        o.insert("choices", Value::Array(vec![Value::Object(c)]));
        data_event(None, &Value::Object(o))
    }

    fn chat_finish(
        &mut self,
        pairs: &[(&ProposedCall, &Decision)],
        decisions: &Decisions,
    ) -> String {
        let mut out = String::new();
        let mut choices: Vec<u64> = pairs
            .iter()
            .map(|(c, _)| u64::try_from(c.choice).unwrap_or(0))
            .collect();
        choices.dedup();
        let mut released_in: Vec<u64> = Vec::new();
        let mut legacy_in: Vec<u64> = Vec::new();
        for &choice in &choices {
            let mine = pairs
                .iter()
                .filter(|(c, _)| u64::try_from(c.choice).unwrap_or(0) == choice);
            let mut calls = Vec::new();
            let mut legacy = None;
            let mut texts = Vec::new();
            for (call, d) in mine {
                if call.pointer.ends_with("/function_call") {
                    // The legacy form goes on in its own form.
                    match d.executable_args().and_then(|a| legacy_call(call, a)) {
                        Some(f) => legacy = Some(f),
                        None => texts.push(feedback_text(d)),
                    }
                    continue;
                }
                let released = d.executable_args().and_then(|args| {
                    chat_call(call, args, Some(u64::try_from(calls.len()).unwrap_or(0)))
                });
                match released {
                    Some(tc) => calls.push(tc),
                    None => texts.push(feedback_text(d)),
                }
            }
            if let Some(f) = legacy {
                let mut delta = Object::new();
                delta.insert("function_call", f);
                out.push_str(&self.chat_chunk(choice, delta));
                legacy_in.push(choice);
            }
            if !texts.is_empty() {
                let mut delta = Object::new();
                delta.insert("content", s(&format!("\n\n{}", texts.join("\n"))));
                out.push_str(&self.chat_chunk(choice, delta));
            }
            if !calls.is_empty() {
                let mut delta = Object::new();
                delta.insert("tool_calls", Value::Array(calls));
                out.push_str(&self.chat_chunk(choice, delta));
                released_in.push(choice);
            }
        }
        // The verdicts, where the SDKs' accumulators keep a message's
        // members (`get_final_completion()`): one delta per choice.
        let summary_value = summary(decisions);
        for choice in self.choices.clone() {
            let mut delta = Object::new();
            delta.insert(TOOLGATE, summary_value.clone());
            out.push_str(&self.chat_chunk(choice, delta));
        }
        let held = std::mem::take(&mut self.held);
        let last = held.len().saturating_sub(1);
        for (i, mut chunk) in held.into_iter().enumerate() {
            if let Value::Object(o) = &mut chunk {
                if let Some(Value::Array(cs)) = o.get_mut("choices") {
                    for c in cs.iter_mut() {
                        let Value::Object(c) = c else { continue };
                        let index = c
                            .get("index")
                            .and_then(Value::as_number)
                            .and_then(|n| n.as_u64())
                            .unwrap_or(0);
                        let reason = c
                            .get("finish_reason")
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                        if choices.contains(&index) {
                            if released_in.contains(&index) {
                                c.insert("finish_reason", s("tool_calls"));
                            } else if legacy_in.contains(&index) {
                                c.insert("finish_reason", s("function_call"));
                            } else if matches!(
                                reason.as_deref(),
                                Some("tool_calls" | "function_call")
                            ) {
                                c.insert("finish_reason", s("stop"));
                            }
                        }
                    }
                }
            }
            strip_toolgate(&mut chunk);
            if let Value::Object(o) = &mut chunk {
                if i == last {
                    o.insert(TOOLGATE, summary_value.clone());
                }
            }
            out.push_str(&data_event(None, &chunk));
        }
        out.push_str("data: [DONE]\n\n");
        out
    }

    // --- Anthropic Messages -----------------------------------------------

    fn messages(&mut self, e: &Event) -> Result<Step, Broken> {
        let mut v = Self::parse(&e.data)?;
        let kind = e.name.clone().unwrap_or_else(|| type_of(&v).to_owned());
        if kind != type_of(&v) {
            return Err(Broken("an event whose name and type differ"));
        }
        let index = v
            .as_object()
            .and_then(|o| o.get("index"))
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        match kind.as_str() {
            // The message's state goes on without content: blocks arrive
            // (and are checked) one by one.
            "message_start" => Ok(Step::Emit(data_event(
                Some(&kind),
                &state_event(&v, "message", &members::MESSAGES_RESPONSE, "content"),
            ))),
            "ping" => Ok(Step::Emit(data_event(
                Some(&kind),
                &state_event(&v, "", &[], ""),
            ))),
            "content_block_start" => {
                let index = index.ok_or(Broken("a block without an index"))?;
                let block = field(&v, "content_block")
                    .map(type_of)
                    .unwrap_or("")
                    .to_owned();
                if self.map.iter().any(|(u, _)| *u == index) {
                    return Err(Broken("a block started twice"));
                }
                let keep = match disposition(Api::Messages, &block, &self.pass_through) {
                    Disposition::Pass => true,
                    Disposition::Gate => {
                        let b = field(&v, "content_block");
                        let text = |k: &str| b.and_then(|b| field(b, k)).and_then(Value::as_str);
                        self.hold((0, index), text("id"), text("name"));
                        false
                    }
                    Disposition::Refuse => {
                        return Err(Broken("a block of a type off the pass list"))
                    }
                };
                self.kinds.push((index, block.clone()));
                match self.out_index(index, keep) {
                    Some(out) => {
                        if let Value::Object(o) = &mut v {
                            o.insert("index", num(out));
                        }
                        Ok(Step::Emit(upstream_event(Some(&kind), v)))
                    }
                    None => Ok(Step::Emit(String::new())),
                }
            }
            "content_block_delta" | "content_block_stop" => {
                let index = index.ok_or(Broken("a block event without an index"))?;
                if !self.map.iter().any(|(u, _)| *u == index) {
                    return Err(Broken("an event for a block never started"));
                }
                // A text block carries text, never a call's input.
                let delta = field(&v, "delta").map(type_of).unwrap_or("");
                let text_like = matches!(
                    self.kind_of(index),
                    "text" | "thinking" | "redacted_thinking"
                );
                if kind == "content_block_delta"
                    && text_like
                    && !matches!(
                        delta,
                        "text_delta" | "thinking_delta" | "signature_delta" | "citations_delta"
                    )
                {
                    return Err(Broken("a text block with a delta that is not text"));
                }
                // What the delta carries is of the type the gate reads.
                let member = match delta {
                    "text_delta" => Some("text"),
                    "thinking_delta" => Some("thinking"),
                    "signature_delta" => Some("signature"),
                    _ => None,
                };
                if let Some(m) = member {
                    let d = field(&v, "delta");
                    if d.and_then(|d| field(d, m))
                        .and_then(Value::as_str)
                        .is_none()
                    {
                        return Err(Broken("a delta whose text is not a string"));
                    }
                }
                match self.mapped(index) {
                    Some(out) => {
                        if let Value::Object(o) = &mut v {
                            o.insert("index", num(out));
                        }
                        Ok(Step::Emit(upstream_event(Some(&kind), v)))
                    }
                    None => Ok(Step::Emit(String::new())),
                }
            }
            "message_delta" => {
                self.terminal = Some((kind, v));
                Ok(Step::Emit(String::new()))
            }
            "message_stop" => {
                if self.terminal.is_none() {
                    return Err(Broken("a message that stopped without its delta"));
                }
                self.ended = true;
                Ok(Step::End)
            }
            "error" => Err(Broken("the upstream sent an error")),
            // An event of a kind off the pass list carries what the gate
            // never read: the stream is refused (and audited).
            _ => Err(Broken("an event of a kind off the pass list")),
        }
    }

    fn block(&mut self, kind: &str, index: u64, body: Value<'static>) -> String {
        let mut o = Object::new();
        o.insert("type", s(kind));
        o.insert("index", num(index));
        match kind {
            "content_block_start" => o.insert("content_block", body),
            "content_block_delta" => o.insert("delta", body),
            _ => None,
        };
        data_event(Some(kind), &Value::Object(o))
    }

    /// One block, whole, at the next index: its start, one delta, its stop.
    fn whole_block(&mut self, start: Object<'static>, delta: Object<'static>) -> String {
        let i = self.next_index;
        self.next_index += 1;
        let mut out = self.block("content_block_start", i, Value::Object(start));
        out.push_str(&self.block("content_block_delta", i, Value::Object(delta)));
        out.push_str(&self.block("content_block_stop", i, Value::Null));
        out
    }

    fn messages_finish(
        &mut self,
        pairs: &[(&ProposedCall, &Decision)],
        decisions: &Decisions,
    ) -> String {
        let mut out = String::new();
        let mut released = false;
        let mut texts = Vec::new();
        for (call, d) in pairs {
            match d.executable_args() {
                Some(args) => {
                    released = true;
                    let mut start = Object::new();
                    start.insert("type", s("tool_use"));
                    start.insert("id", call.call_id.as_deref().map_or(Value::Null, s));
                    start.insert("name", s(&call.name));
                    start.insert("input", Value::Object(Object::new()));
                    let mut delta = Object::new();
                    delta.insert("type", s("input_json_delta"));
                    delta.insert("partial_json", s(args));
                    out.push_str(&self.whole_block(start, delta));
                }
                _ => texts.push(feedback_text(d)),
            }
        }
        if !texts.is_empty() {
            let mut start = Object::new();
            start.insert("type", s("text"));
            start.insert("text", s(""));
            let mut delta = Object::new();
            delta.insert("type", s("text_delta"));
            delta.insert("text", s(&texts.join("\n")));
            out.push_str(&self.whole_block(start, delta));
        }
        if let Some((kind, v)) = self.terminal.take() {
            out.push_str(&data_event(
                Some(&kind),
                &message_delta(&v, released, decisions),
            ));
        }
        out.push_str(&data_event(Some("message_stop"), &{
            let mut o = Object::new();
            o.insert("type", s("message_stop"));
            Value::Object(o)
        }));
        out
    }

    // --- Responses --------------------------------------------------------

    fn responses(&mut self, e: &Event) -> Result<Step, Broken> {
        let v = Self::parse(&e.data)?;
        let kind = e.name.clone().unwrap_or_else(|| type_of(&v).to_owned());
        if kind != type_of(&v) {
            return Err(Broken("an event whose name and type differ"));
        }
        if let Some(n) = field(&v, "sequence_number")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
        {
            self.sequence = self.sequence.max(n);
        }
        let output_index = field(&v, "output_index")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64());
        match kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                // Only the response's state goes on, with no output: items
                // arrive (and are checked) one by one.
                Ok(Step::Emit(data_event(
                    Some(&kind),
                    &state_event(&v, "response", &members::RESPONSES_RESPONSE, "output"),
                )))
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.check_final_output(&v)?;
                self.terminal = Some((kind, v));
                self.ended = true;
                Ok(Step::End)
            }
            "error" => Err(Broken("the upstream sent an error")),
            "response.output_item.added" => {
                let index = output_index.ok_or(Broken("an item without an output index"))?;
                let item = field(&v, "item").map(type_of).unwrap_or("").to_owned();
                if self.map.iter().any(|(u, _)| *u == index) {
                    return Err(Broken("an item added twice"));
                }
                let keep = match disposition(Api::Responses, &item, &self.pass_through) {
                    Disposition::Pass => true,
                    Disposition::Gate => {
                        self.hold_item(index, &v);
                        false
                    }
                    Disposition::Refuse => {
                        return Err(Broken("an item of a type off the pass list"))
                    }
                };
                if field(&v, "item").is_some_and(|i| unknown_part(Api::Responses, i).is_some()) {
                    return Err(Broken("an item holding a part off the pass list"));
                }
                self.kinds.push((index, item.clone()));
                self.emit_mapped(&kind, v, index, keep)
            }
            _ => match output_index {
                Some(index) => {
                    if !self.map.iter().any(|(u, _)| *u == index) {
                        return Err(Broken("an event for an item never added"));
                    }
                    // A text delta is a string, as the gate reads it.
                    let text_delta =
                        kind.ends_with("text.delta") || kind == "response.refusal.delta";
                    if text_delta && field(&v, "delta").and_then(Value::as_str).is_none() {
                        return Err(Broken("a delta whose text is not a string"));
                    }
                    // An item keeps the type it was added as, and a message
                    // or reasoning item carries only its own events.
                    let added = self.kind_of(index).to_owned();
                    if let Some(item) = field(&v, "item") {
                        if type_of(item) != added {
                            return Err(Broken("an item that changed its type"));
                        }
                        if unknown_part(Api::Responses, item).is_some() {
                            return Err(Broken("an item holding a part off the pass list"));
                        }
                    }
                    if let Some(part) = field(&v, "part") {
                        if matches!(added.as_str(), "message" | "reasoning")
                            && !part_known(&added, part)
                        {
                            return Err(Broken("a part off the pass list"));
                        }
                    }
                    let own = [
                        "response.output_item.",
                        "response.output_text.",
                        "response.content_part.",
                        "response.refusal.",
                        "response.reasoning",
                    ];
                    if matches!(added.as_str(), "message" | "reasoning")
                        && !own.iter().any(|p| kind.starts_with(p))
                    {
                        return Err(Broken("an event that does not belong to its item"));
                    }
                    let keep = self.mapped(index).is_some();
                    if kind == "response.output_item.done" && !keep {
                        self.hold_item(index, &v);
                    }
                    self.emit_mapped(&kind, v, index, keep)
                }
                // Other events without an item: nothing checked rides on
                // them, but nothing needs them either.
                None => Ok(Step::Emit(String::new())),
            },
        }
    }

    fn emit_mapped(
        &mut self,
        kind: &str,
        mut v: Value<'static>,
        index: u64,
        keep: bool,
    ) -> Result<Step, Broken> {
        match self.out_index(index, keep) {
            Some(out) => {
                strip_toolgate(&mut v);
                // Logprobs go on only where they spell the text released.
                crate::members::responses_event_logprobs(&mut v);
                if let Value::Object(o) = &mut v {
                    o.insert("output_index", num(out));
                }
                // The item as it was sent, for the terminal event's output.
                if kind.starts_with("response.output_item.") {
                    if let Some(item) = field(&v, "item") {
                        let item = item.clone();
                        match self.sent_items.iter_mut().find(|(i, _)| *i == out) {
                            Some((_, slot)) => *slot = item,
                            None => self.sent_items.push((out, item)),
                        }
                    }
                }
                Ok(Step::Emit(data_event(Some(kind), &v)))
            }
            None => Ok(Step::Emit(String::new())),
        }
    }

    /// Notes the call item of an `output_item` event at `index` as held.
    fn hold_item(&mut self, index: u64, v: &Value<'static>) {
        let item = field(v, "item");
        let text = |k: &str| item.and_then(|i| field(i, k)).and_then(Value::as_str);
        let name = match (text("namespace"), text("name")) {
            (Some(ns), Some(name)) => Some(format!("{ns}.{name}")),
            (_, name) => name.map(str::to_owned),
        };
        self.hold((0, index), text("call_id"), name.as_deref());
    }

    /// The terminal event's `response.output`, read whole: every item must
    /// be one the stream added, at its index, of the type it was added as.
    /// (The gate compares each call item with the call the stream
    /// assembled.) Anything else refuses the stream.
    fn check_final_output(&self, v: &Value<'static>) -> Result<(), Broken> {
        let output = match v.pointer("/response/output") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(items)) => items,
            Some(_) => return Err(Broken("a final output that is not an array")),
        };
        for (k, item) in output.iter().enumerate() {
            let k = u64::try_from(k).map_err(|_| Broken("a final output too long"))?;
            let added = self
                .kinds
                .iter()
                .find(|(u, _)| *u == k)
                .map(|(_, kind)| kind.as_str());
            if added != Some(type_of(item))
                || !item.as_object().is_some_and(|o| o.contains_key("type"))
            {
                return Err(Broken("the final output holds an item the stream did not"));
            }
        }
        Ok(())
    }

    fn responses_event(&mut self, kind: &str, mut members: Object<'static>) -> String {
        self.sequence += 1;
        members.insert("type", s(kind));
        members.insert("sequence_number", num(self.sequence));
        data_event(Some(kind), &Value::Object(members))
    }

    /// An item added and done at the next output index.
    fn responses_item(&mut self, item: &Object<'static>) -> String {
        let i = self.next_index;
        self.next_index += 1;
        let mut out = String::new();
        for kind in ["response.output_item.added", "response.output_item.done"] {
            let mut m = Object::new();
            m.insert("output_index", num(i));
            m.insert("item", Value::Object(item.clone()));
            out.push_str(&self.responses_event(kind, m));
        }
        out
    }

    fn responses_finish(
        &mut self,
        pairs: &[(&ProposedCall, &Decision)],
        decisions: &Decisions,
    ) -> String {
        let mut out = String::new();
        let mut texts = Vec::new();
        // The output as the application saw it: the items passed, as sent,
        // then the calls released, then the feedback.
        let mut output: Vec<(u64, Value<'static>)> = std::mem::take(&mut self.sent_items);
        output.sort_by_key(|(i, _)| *i);
        let mut output: Vec<Value<'static>> = output.into_iter().map(|(_, v)| v).collect();
        for (call, d) in pairs {
            let released = d.executable_args().and_then(|args| {
                responses_call(call, args, &format!("fc_toolgate_{}", call.index))
            });
            match released {
                Some(item) => {
                    out.push_str(&self.responses_item(&item));
                    output.push(Value::Object(item));
                }
                None => texts.push(feedback_text(d)),
            }
        }
        if !texts.is_empty() {
            let item = crate::rewrite::feedback_item(&texts.join("\n"));
            out.push_str(&self.responses_item(&item));
            output.push(Value::Object(item));
        }
        if let Some((kind, v)) = self.terminal.take() {
            let mut v = state_event(&v, "response", &members::RESPONSES_RESPONSE, "output");
            self.sequence += 1;
            if let Value::Object(o) = &mut v {
                o.insert("sequence_number", num(self.sequence));
                if let Some(Value::Object(r)) = o.get_mut("response") {
                    r.insert("output", Value::Array(output));
                    r.insert(TOOLGATE, summary(decisions));
                }
            }
            out.push_str(&data_event(Some(&kind), &v));
        }
        out
    }

    /// The closing events, once the gate has decided the whole stream.
    pub fn finish(mut self, envelope: &Envelope, decisions: &Decisions) -> Result<String, Broken> {
        if decisions.rejected().is_some() {
            return Err(Broken("the gate refused the stream"));
        }
        if envelope.calls.len() != decisions.decisions().len() {
            return Err(Broken("the calls read and decided differ"));
        }
        let pairs: Vec<(&ProposedCall, &Decision)> =
            envelope.calls.iter().zip(decisions.decisions()).collect();
        Ok(match self.api {
            Api::ChatCompletions => self.chat_finish(&pairs, decisions),
            Api::Messages => self.messages_finish(&pairs, decisions),
            Api::Responses => self.responses_finish(&pairs, decisions),
        })
    }
}

/// The terminal `message_delta`, rebuilt (never the upstream's copy
/// filtered): the stop reason (`tool_use` becomes `end_turn` when no call
/// was released) and stop sequence when they are strings or null, the
/// usage's numbers (and its objects of numbers), and toolgate's verdicts.
/// Any other member the upstream sent is not handed on.
fn message_delta(v: &Value<'static>, released: bool, decisions: &Decisions) -> Value<'static> {
    let mut delta = Object::new();
    for k in ["stop_reason", "stop_sequence"] {
        match v.pointer(&format!("/delta/{k}")) {
            Some(t @ Value::String(_)) => {
                delta.insert(k, t.clone());
            }
            _ => {
                delta.insert(k, Value::Null);
            }
        }
    }
    if !released && delta.get("stop_reason").and_then(Value::as_str) == Some("tool_use") {
        delta.insert("stop_reason", s("end_turn"));
    }
    let usage = match v.pointer("/usage") {
        Some(Value::Object(u)) => members::counts(u),
        _ => Object::new(),
    };
    let mut o = Object::new();
    o.insert("type", s("message_delta"));
    o.insert("delta", Value::Object(delta));
    o.insert("usage", Value::Object(usage));
    o.insert(TOOLGATE, summary(decisions));
    Value::Object(o)
}
