//! A Responses conversation continued with `previous_response_id` after
//! the proxy withheld a call. The upstream stored the response with the
//! call in it; the application never saw the call, so its next request
//! carries no output for it, and the upstream would refuse the request
//! ("no tool output found for function call …"). The proxy remembers, per
//! user and response id, the calls it withheld, with their feedback; when
//! a request continues from that response without an output for such a
//! call, the proxy supplies one (a `function_call_output` and its kin)
//! whose output is the feedback text, before the upstream sees it. The
//! same holds for a conversation (`conversation`): what its responses
//! withheld is supplied once, to the next request in it (the upstream then
//! holds those outputs).
//!
//! Bounded: at most [`MAX_RESPONSES`] responses are remembered (the
//! oldest are forgotten: a conversation continued from a forgotten one is
//! answered by the upstream's own error, as without the proxy), at most
//! [`MAX_CALLS`] calls per response, feedback of at most
//! [`MAX_FEEDBACK_BYTES`].

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use toolgate::{Decisions, Verdict};
use toolgate_json::{Object, Value};

use crate::rewrite::feedback_text;

/// The most responses remembered.
pub const MAX_RESPONSES: usize = 4096;
/// The most withheld calls remembered per response.
pub const MAX_CALLS: usize = 64;
/// The longest feedback remembered, in bytes.
pub const MAX_FEEDBACK_BYTES: usize = 1024;
/// The longest response or call id remembered, in bytes.
const MAX_ID_BYTES: usize = 256;

/// One withheld call: its id, the type of the output that answers it, and
/// the feedback.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Withheld {
    call_id: String,
    output_type: &'static str,
    feedback: String,
}

/// The withheld calls of recent responses, by (user, response id).
#[derive(Default)]
pub struct Continuations {
    inner: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    order: VecDeque<(String, String)>,
    calls: HashMap<(String, String), Vec<Withheld>>,
}

/// The output item type that answers a call item of type `kind`, for the
/// call items a client answers itself.
fn output_type(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "function_call" => "function_call_output",
        "custom_tool_call" => "custom_tool_call_output",
        "local_shell_call" => "local_shell_call_output",
        "shell_call" => "shell_call_output",
        "apply_patch_call" => "apply_patch_call_output",
        _ => return None,
    })
}

fn s(t: &str) -> Value<'static> {
    Value::String(Cow::Owned(t.to_owned()))
}

fn cap(t: &str, max: usize) -> String {
    let mut end = t.len().min(max);
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    t.get(..end).unwrap_or_default().to_owned()
}

impl Continuations {
    /// Notes the calls of a Responses answer (`upstream`: the upstream's
    /// response object, as it stored it) that were not released: every
    /// call item whose call the gate did not allow.
    pub fn note(&self, user: &str, upstream: &Value<'_>, decisions: &Decisions) {
        let Some(id) = upstream.pointer("/id").and_then(Value::as_str) else {
            return;
        };
        if id.is_empty() || id.len() > MAX_ID_BYTES || user.len() > MAX_ID_BYTES {
            return;
        }
        let mut withheld = Vec::new();
        for item in upstream
            .pointer("/output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let kind = item.pointer("/type").and_then(Value::as_str).unwrap_or("");
            let (Some(output_type), Some(call_id)) = (
                output_type(kind),
                item.pointer("/call_id").and_then(Value::as_str),
            ) else {
                continue;
            };
            if call_id.is_empty() || call_id.len() > MAX_ID_BYTES {
                continue;
            }
            let decision = decisions
                .decisions()
                .iter()
                .find(|d| d.call_id() == Some(call_id));
            let feedback = match decision {
                Some(d) if d.verdict() == Verdict::Allow => continue,
                Some(d) => feedback_text(d),
                None => format!("[toolgate] the call {call_id} was withheld"),
            };
            if withheld.len() < MAX_CALLS {
                withheld.push(Withheld {
                    call_id: call_id.to_owned(),
                    output_type,
                    feedback: cap(&feedback, MAX_FEEDBACK_BYTES),
                });
            }
        }
        if withheld.is_empty() {
            return;
        }
        let conversation = conversation_id(upstream).map(str::to_owned);
        let mut m = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = conversation {
            // A conversation collects what each of its responses withheld,
            // until a request in it is supplied with them.
            let key = (user.to_owned(), format!("conversation:{c}"));
            let mut list = m.calls.remove(&key).unwrap_or_default();
            m.order.retain(|k| *k != key);
            for w in &withheld {
                if list.len() < MAX_CALLS && !list.iter().any(|l| l.call_id == w.call_id) {
                    list.push(w.clone());
                }
            }
            m.calls.insert(key.clone(), list);
            m.order.push_back(key);
        }
        let key = (user.to_owned(), format!("response:{id}"));
        if m.calls.insert(key.clone(), withheld).is_none() {
            m.order.push_back(key);
        }
        while m.order.len() > MAX_RESPONSES {
            if let Some(old) = m.order.pop_front() {
                m.calls.remove(&old);
            }
        }
    }

    /// Notes the calls of a Responses stream, as received (`raw`): the
    /// response object of its terminal event, or, for a stream without
    /// one, its id and the items of its `response.output_item.*` events.
    pub fn note_stream(&self, user: &str, raw: &[u8], decisions: &Decisions) {
        let (items, pending) = toolgate::sse::read_all(raw, raw.len(), raw.len());
        let events: Vec<toolgate::sse::Event> = items
            .into_iter()
            .filter_map(Result::ok)
            .chain(pending)
            .collect();
        let mut id: Option<String> = None;
        let mut conversation: Option<Value<'static>> = None;
        let mut items: Vec<Value<'static>> = Vec::new();
        for e in &events {
            let Ok(v) = toolgate_json::from_slice(&e.data) else {
                continue;
            };
            if let Some(r) = v.pointer("/response") {
                if r.pointer("/output")
                    .and_then(Value::as_array)
                    .is_some_and(|o| !o.is_empty())
                {
                    self.note(user, r, decisions);
                    return;
                }
                if let Some(i) = r.pointer("/id").and_then(Value::as_str) {
                    id.get_or_insert_with(|| i.to_owned());
                }
                if let Some(c) = r.pointer("/conversation") {
                    conversation.get_or_insert_with(|| c.clone().into_owned());
                }
            }
            let kind = v.pointer("/type").and_then(Value::as_str).unwrap_or("");
            if kind == "response.output_item.done" || kind == "response.output_item.added" {
                if let Some(item) = v.pointer("/item") {
                    items.push(item.clone().into_owned());
                }
            }
        }
        if let Some(id) = id {
            let mut o = Object::new();
            o.insert("id", s(&id));
            o.insert("output", Value::Array(items));
            if let Some(c) = conversation {
                o.insert("conversation", c);
            }
            self.note(user, &Value::Object(o), decisions);
        }
    }

    /// Supplies, in a Responses request that continues a remembered
    /// response (`previous_response_id`) or conversation (`conversation`),
    /// an output for each withheld call the request does not answer, before
    /// its own input; the call ids supplied. A response's calls are
    /// supplied to every request continuing from it; a conversation's only
    /// once (the upstream then holds the outputs).
    pub fn supply(&self, user: &str, root: &mut Value<'static>) -> Vec<String> {
        let previous = root
            .pointer("/previous_response_id")
            .and_then(Value::as_str)
            .map(|p| format!("response:{p}"));
        let conversation = conversation_id(root).map(|c| format!("conversation:{c}"));
        let withheld = {
            let mut m = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(p) = previous {
                match m.calls.get(&(user.to_owned(), p)) {
                    Some(w) => w.clone(),
                    None => return Vec::new(),
                }
            } else if let Some(c) = conversation {
                let key = (user.to_owned(), c);
                match m.calls.remove(&key) {
                    Some(w) => {
                        m.order.retain(|k| *k != key);
                        w
                    }
                    None => return Vec::new(),
                }
            } else {
                return Vec::new();
            }
        };
        let Value::Object(o) = root else {
            return Vec::new();
        };
        // The request's own input, as a list of items.
        let mut input = match o.remove("input") {
            Some(Value::Array(items)) => items,
            Some(Value::String(text)) => {
                let mut m = Object::new();
                m.insert("role", s("user"));
                m.insert("content", Value::String(text));
                vec![Value::Object(m)]
            }
            Some(other) => {
                o.insert("input", other);
                return Vec::new();
            }
            None => Vec::new(),
        };
        let answered = |call_id: &str, items: &[Value<'static>]| {
            items.iter().any(|i| {
                let kind = i.pointer("/type").and_then(Value::as_str).unwrap_or("");
                let id_member = if kind == "local_shell_call_output" {
                    "/id"
                } else {
                    "/call_id"
                };
                kind.ends_with("_output")
                    && i.pointer(id_member).and_then(Value::as_str) == Some(call_id)
            })
        };
        let mut supplied = Vec::new();
        let mut outputs = Vec::new();
        for w in &withheld {
            if answered(&w.call_id, &input) {
                continue;
            }
            outputs.push(Value::Object(output_item(w)));
            supplied.push(w.call_id.clone());
        }
        outputs.append(&mut input);
        o.insert("input", Value::Array(outputs));
        supplied
    }
}

/// The conversation a response belongs to or a request continues:
/// `conversation` as an id or as `{"id": …}`.
fn conversation_id<'v>(v: &'v Value<'_>) -> Option<&'v str> {
    let c = v.pointer("/conversation")?;
    let id = c.as_str().or_else(|| c.pointer("/id")?.as_str())?;
    (!id.is_empty() && id.len() <= MAX_ID_BYTES).then_some(id)
}

/// The output item that answers a withheld call with its feedback.
fn output_item(w: &Withheld) -> Object<'static> {
    let mut item = Object::new();
    item.insert("type", s(w.output_type));
    match w.output_type {
        "local_shell_call_output" => {
            item.insert("id", s(&w.call_id));
            item.insert("output", s(&w.feedback));
        }
        "shell_call_output" => {
            item.insert("call_id", s(&w.call_id));
            let mut outcome = Object::new();
            outcome.insert("type", s("exit"));
            outcome.insert("exit_code", Value::from(1_i64));
            let mut entry = Object::new();
            entry.insert("stdout", s(""));
            entry.insert("stderr", s(&w.feedback));
            entry.insert("outcome", Value::Object(outcome));
            item.insert("output", Value::Array(vec![Value::Object(entry)]));
        }
        "apply_patch_call_output" => {
            item.insert("call_id", s(&w.call_id));
            item.insert("status", s("failed"));
            item.insert("output", s(&w.feedback));
        }
        _ => {
            item.insert("call_id", s(&w.call_id));
            item.insert("output", s(&w.feedback));
        }
    }
    item
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]
mod tests {
    use super::*;
    use toolgate::config::Config;
    use toolgate::{Context, Format, Gate};
    use toolgate_testkit::{shop_dir, shop_file};

    /// The shop's Responses answer: `call_fetch_7a` (the metadata service,
    /// denied) and `call_fetch_7b` (allowed), decided for alice.
    fn decided() -> (Value<'static>, Decisions) {
        let body =
            std::fs::read(shop_dir().join("responses/responses-fetch-metadata.json")).unwrap();
        let config = Config::load(shop_file("toolgate.toml")).unwrap();
        let gate = Gate::from_config(&config).unwrap();
        let context = Context::new("alice", "s", 1);
        let d = gate.decide(&body, Format::OpenAiResponses, &context, &context);
        (toolgate_json::from_slice(&body).unwrap().into_owned(), d)
    }

    fn request(text: &str) -> Value<'static> {
        toolgate_json::from_slice(text.as_bytes())
            .unwrap()
            .into_owned()
    }

    #[test]
    fn a_continued_conversation_gets_the_withheld_calls_output() {
        let (upstream, d) = decided();
        let c = Continuations::default();
        c.note("alice", &upstream, &d);
        let mut r = request(
            r#"{"model":"m","previous_response_id":"resp_shop_07","input":[{"type":"function_call_output","call_id":"call_fetch_7b","output":"ok"}]}"#,
        );
        assert_eq!(c.supply("alice", &mut r), ["call_fetch_7a"]);
        let input = r.pointer("/input").and_then(Value::as_array).unwrap();
        assert_eq!(input.len(), 2);
        assert_eq!(
            input[0].pointer("/type").and_then(Value::as_str),
            Some("function_call_output")
        );
        assert_eq!(
            input[0].pointer("/call_id").and_then(Value::as_str),
            Some("call_fetch_7a")
        );
        let text = input[0].pointer("/output").and_then(Value::as_str).unwrap();
        assert!(
            text.starts_with("[toolgate] the call call_fetch_7a was not run"),
            "{text}"
        );
        assert_eq!(
            input[1].pointer("/call_id").and_then(Value::as_str),
            Some("call_fetch_7b")
        );
        // A string input becomes a user message after the supplied output.
        let mut r = request(r#"{"previous_response_id":"resp_shop_07","input":"and now?"}"#);
        assert_eq!(c.supply("alice", &mut r).len(), 1);
        assert_eq!(
            r.pointer("/input/1/role").and_then(Value::as_str),
            Some("user")
        );
        assert_eq!(
            r.pointer("/input/1/content").and_then(Value::as_str),
            Some("and now?")
        );
        // Answered already, another user's, another response: nothing.
        let mut r = request(
            r#"{"previous_response_id":"resp_shop_07","input":[{"type":"function_call_output","call_id":"call_fetch_7a","output":"mine"}]}"#,
        );
        assert!(c.supply("alice", &mut r).is_empty());
        let mut r = request(r#"{"previous_response_id":"resp_shop_07","input":"x"}"#);
        assert!(c.supply("bob", &mut r).is_empty());
        assert_eq!(r.pointer("/input").and_then(Value::as_str), Some("x"));
        let mut r = request(r#"{"previous_response_id":"resp_other","input":"x"}"#);
        assert!(c.supply("alice", &mut r).is_empty());
    }

    #[test]
    fn a_stream_is_remembered_from_its_events() {
        let (upstream, d) = decided();
        let mut raw = String::new();
        for (i, item) in upstream
            .pointer("/output")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .enumerate()
        {
            raw.push_str(&format!(
                "event: response.output_item.done\ndata: {{\"type\":\"response.output_item.done\",\"output_index\":{i},\"item\":{}}}\n\n",
                toolgate_json::canonical::to_string(item)
            ));
        }
        let created = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_shop_07\",\"output\":[]}}\n\n";
        let c = Continuations::default();
        c.note_stream("alice", format!("{created}{raw}").as_bytes(), &d);
        let mut r = request(r#"{"previous_response_id":"resp_shop_07","input":"x"}"#);
        assert_eq!(c.supply("alice", &mut r), ["call_fetch_7a"]);
    }

    #[test]
    fn a_conversations_withheld_calls_are_supplied_once() {
        let (mut upstream, d) = decided();
        if let Value::Object(o) = &mut upstream {
            let mut c = Object::new();
            c.insert("id", s("conv_1"));
            o.insert("conversation", Value::Object(c));
        }
        let c = Continuations::default();
        c.note("alice", &upstream, &d);
        let mut r = request(r#"{"conversation":"conv_1","input":"next"}"#);
        assert_eq!(c.supply("alice", &mut r), ["call_fetch_7a"]);
        assert_eq!(
            r.pointer("/input/0/call_id").and_then(Value::as_str),
            Some("call_fetch_7a")
        );
        let mut r = request(r#"{"conversation":{"id":"conv_1"},"input":"again"}"#);
        assert!(c.supply("alice", &mut r).is_empty(), "{r:?}");
        // The response itself still answers a continuation from it.
        let mut r = request(r#"{"previous_response_id":"resp_shop_07","input":"x"}"#);
        assert_eq!(c.supply("alice", &mut r), ["call_fetch_7a"]);
    }

    #[test]
    fn memory_is_bounded() {
        let (mut upstream, d) = decided();
        let c = Continuations::default();
        for i in 0..=MAX_RESPONSES {
            if let Some(Value::String(id)) = upstream.pointer_mut("/id") {
                *id = Cow::Owned(format!("resp_{i}"));
            }
            c.note("alice", &upstream, &d);
        }
        let m = c.inner.lock().unwrap();
        assert_eq!(m.calls.len(), MAX_RESPONSES);
        assert_eq!(m.order.len(), MAX_RESPONSES);
        assert!(!m
            .calls
            .contains_key(&("alice".to_owned(), "response:resp_0".to_owned())));
        assert!(m
            .calls
            .contains_key(&("alice".to_owned(), format!("response:resp_{MAX_RESPONSES}"))));
    }
}
