//! The methods beside `tools/*`: which pass, which are refused, and the
//! answers that carry third-party text toward the model, read before they
//! do.
//!
//! - Client requests pass only when [`CLIENT_METHODS`] names them; `tasks/*`
//!   and every other method are answered `-32601` (`refused by toolgate:
//!   method_not_passed`) and never reach the server. toolgate does not
//!   support tasks: a task-augmented `tools/call` (`params.task`) is refused
//!   (`tasks_not_supported`, audited), and the `tasks` capability is taken
//!   out of the server's `initialize` and `server/discover` answers.
//! - `resources/read` and `prompts/get` answers are rebuilt from what was
//!   read ([`results::Reader`]): every text sanitized and capped, an
//!   unknown content type refused, and audited (`tool_result`, the URI or
//!   prompt name as its tool, `mcp resources/read` or `mcp prompts/get` as
//!   its note) before the client sees them.
//! - `resources/list`, `resources/templates/list`, `prompts/list` and
//!   `completion/complete` answers are rebuilt from a pass list, their
//!   texts cleaned as tool definitions are ([`super::catalogs`]).
//! - Notifications pass only when [`CLIENT_NOTIFICATIONS`] (from the
//!   client) or [`SERVER_NOTIFICATIONS`] (from the server) names them; any
//!   other is dropped. Every refused method and notification, of either
//!   side, is audited (aggregated: [`crate::refusals`]).
//! - Server requests pass only when [`SERVER_METHODS`] names them; the
//!   texts of `sampling/createMessage` (its messages and system prompt) and
//!   `elicitation/create` (its message) are sanitized and audited the same
//!   way. Any other server request is answered `-32601` and never reaches
//!   the client.

use std::borrow::Cow;

use toolgate_json::{canonical, Object, Value};

use super::catalogs::Catalog;
use super::{finding, Shared};
use crate::frame::{self, RequestId};
use crate::results::{Reader, ResultReport};

/// The client requests that pass (`tools/call` is gated, the reads are
/// checked, the rest go on as they are).
pub(super) const CLIENT_METHODS: [&str; 15] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

/// The client's notifications that pass to the server
/// (`notifications/cancelled` of a call toolgate holds is toolgate's).
pub(super) const CLIENT_NOTIFICATIONS: [&str; 4] = [
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// The server's notifications that pass to the client
/// (`notifications/tools/list_changed` once the new list is checked;
/// `notifications/tasks/*` never: toolgate does not support tasks).
pub(super) const SERVER_NOTIFICATIONS: [&str; 8] = [
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/resources/updated",
    "notifications/resources/list_changed",
    "notifications/prompts/list_changed",
    "notifications/tools/list_changed",
    "notifications/elicitation/complete",
];

/// The server requests that pass (sampling and elicitation read first).
pub(super) const SERVER_METHODS: [&str; 4] = [
    "ping",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
];

/// The longest URI or prompt name an audit record keeps, in characters.
const MAX_NAME_CHARS: usize = 256;

/// A forwarded client request whose answer is read before it passes.
#[derive(Debug, Clone)]
pub(super) enum Read {
    /// `initialize` or `server/discover`: the `tasks` capability removed.
    Handshake,
    /// `resources/read` of this URI.
    Resource(String),
    /// `prompts/get` of this prompt.
    Prompt(String),
    /// A list (`resources/list`, `resources/templates/list`,
    /// `prompts/list`) or `completion/complete`: rebuilt ([`catalogs`]).
    Catalog(Catalog),
}

/// Whether a client request of `method` passes; its answer's reading.
pub(super) fn client_request(method: &str, value: &Value<'static>) -> Result<Option<Read>, ()> {
    if !CLIENT_METHODS.contains(&method) {
        return Err(());
    }
    let name = |pointer: &str| {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .chars()
            .take(MAX_NAME_CHARS)
            .collect::<String>()
    };
    Ok(match method {
        "initialize" | "server/discover" => Some(Read::Handshake),
        "resources/read" => Some(Read::Resource(name("/params/uri"))),
        "prompts/get" => Some(Read::Prompt(name("/params/name"))),
        _ => Catalog::of(method).map(Read::Catalog),
    })
}

/// Why a client request of `method` does not pass.
pub(super) fn refused_code(method: &str) -> &'static str {
    if method.starts_with("tasks/") {
        "tasks_not_supported"
    } else {
        "method_not_passed"
    }
}

/// The answer to a client request of a method that does not pass.
pub(super) fn refused_method(id: &RequestId, method: &str) -> String {
    let code = refused_code(method);
    finding(&format!("client request refused: {code}"));
    frame::error_answer(
        Some(id),
        frame::METHOD_NOT_FOUND,
        &format!("refused by toolgate: {code}"),
    )
}

impl Shared {
    /// The server's answer to a read request, as the client gets it.
    pub(super) async fn read_answer(
        &self,
        id: &RequestId,
        value: &Value<'static>,
        read: Read,
    ) -> String {
        let Some(result) = value.as_object().and_then(|o| o.get("result")) else {
            // An error answer: its code alone (its text is the server's).
            let code = value
                .pointer("/error/code")
                .and_then(Value::as_number)
                .and_then(toolgate_json::Number::as_i64)
                .unwrap_or(frame::INTERNAL_ERROR);
            return frame::error_answer(Some(id), code, "refused by the server");
        };
        let (name, note, checked) = match read {
            Read::Handshake => return frame::result_answer(id, without_tasks(result)),
            Read::Catalog(c) => {
                return match c.rebuild(result) {
                    Ok(v) => frame::result_answer(id, v),
                    Err(code) => {
                        finding(&format!("server answer refused: {code}"));
                        self.refuse_at(c.place(), code);
                        frame::error_answer(
                            Some(id),
                            frame::INTERNAL_ERROR,
                            &format!("refused by toolgate: {code}"),
                        )
                    }
                }
            }
            Read::Resource(uri) => (uri, "mcp resources/read", self.read_resource(result)),
            Read::Prompt(name) => (name, "mcp prompts/get", self.read_prompt(result)),
        };
        let (answer, report) = match checked {
            Ok(ok) => ok,
            Err((code, report)) => (
                Err(frame::error_answer(
                    Some(id),
                    frame::INTERNAL_ERROR,
                    &format!("refused by toolgate: {code}"),
                )),
                report,
            ),
        };
        let digest = match &answer {
            Ok(v) => Some(canonical::digest(v)),
            Err(_) => None,
        };
        if !self
            .record_read(name, id.to_string(), note, &report, digest)
            .await
        {
            finding("the audit record of a read could not be written");
            return frame::error_answer(
                Some(id),
                frame::INTERNAL_ERROR,
                "refused by toolgate: store_unavailable",
            );
        }
        match answer {
            Ok(v) => frame::result_answer(id, v),
            Err(line) => line,
        }
    }

    /// A `resources/read` result: its `contents`, each read.
    fn read_resource(&self, result: &Value<'static>) -> Checked {
        let mut reader = Reader::new(self.options.max_result_bytes);
        let Some(contents) = result.pointer("/contents").and_then(Value::as_array) else {
            return Err(("invalid_result", reader.into_report()));
        };
        let mut out = Vec::with_capacity(contents.len());
        for c in contents {
            match reader.resource_contents(c) {
                Ok(v) => out.push(v),
                Err(code) => return Err((code, reader.into_report())),
            }
        }
        let mut o = Object::new();
        o.insert("contents", Value::Array(out));
        Ok((Ok(Value::Object(o)), reader.into_report()))
    }

    /// A `prompts/get` result: its description and messages, each read.
    fn read_prompt(&self, result: &Value<'static>) -> Checked {
        let mut reader = Reader::new(self.options.max_result_bytes);
        let Some(messages) = result.pointer("/messages").and_then(Value::as_array) else {
            return Err(("invalid_result", reader.into_report()));
        };
        let mut o = Object::new();
        if let Some(d) = result.pointer("/description").and_then(Value::as_str) {
            let clean = reader.text(d);
            o.insert("description", Value::String(Cow::Owned(clean)));
        }
        let mut out = Vec::with_capacity(messages.len());
        for m in messages {
            match message(&mut reader, m) {
                Ok(v) => out.push(v),
                Err(code) => return Err((code, reader.into_report())),
            }
        }
        o.insert("messages", Value::Array(out));
        Ok((Ok(Value::Object(o)), reader.into_report()))
    }

    /// A server request on its way to the client: `Ok` with the line to
    /// send (its texts read and audited when it carries any toward the
    /// model), `Err` with the error answer for the server.
    pub(super) async fn server_request(
        &self,
        id: &RequestId,
        method: &str,
        value: &Value<'static>,
        line: String,
    ) -> Result<String, String> {
        if !SERVER_METHODS.contains(&method) {
            finding("server request refused: method_not_passed");
            self.refuse_at("mcp server request", "method_not_passed");
            return Err(frame::error_answer(
                Some(id),
                frame::METHOD_NOT_FOUND,
                "refused by toolgate: method_not_passed",
            ));
        }
        let mut reader = Reader::new(self.options.max_result_bytes);
        let params = value.pointer("/params").and_then(Value::as_object);
        let (rebuilt, note) = match (method, params) {
            ("sampling/createMessage", Some(p)) => (sampling(&mut reader, p), "mcp sampling"),
            ("elicitation/create", Some(p)) => (elicitation(&mut reader, p), "mcp elicitation"),
            ("sampling/createMessage" | "elicitation/create", None) => {
                (Err("invalid_request"), "mcp server request")
            }
            _ => return Ok(line),
        };
        let params = match rebuilt {
            Ok(p) => p,
            Err(code) => {
                let report = reader.into_report();
                let _ = self
                    .record_read(method.to_owned(), id.to_string(), note, &report, None)
                    .await;
                return Err(frame::error_answer(
                    Some(id),
                    frame::INVALID_PARAMS,
                    &format!("refused by toolgate: {code}"),
                ));
            }
        };
        let mut o = value.as_object().cloned().unwrap_or_default();
        o.insert("params", Value::Object(params));
        let out = Value::Object(o);
        let report = reader.into_report();
        let digest = Some(canonical::digest(&out));
        if !self
            .record_read(method.to_owned(), id.to_string(), note, &report, digest)
            .await
        {
            return Err(frame::error_answer(
                Some(id),
                frame::INTERNAL_ERROR,
                "refused by toolgate: store_unavailable",
            ));
        }
        Ok(canonical::to_string(&out))
    }

    /// A forwarded call's `input_required` result (the server asks the
    /// client for input, 2026-07-28): rebuilt from `inputRequests` (each an
    /// `elicitation/create`, `sampling/createMessage` or `roots/list`
    /// request, its texts read as a server request's) and `requestState`
    /// (a string, passed as it is: the client sends it back to the server
    /// with its retry, which toolgate decides as any call), audited
    /// (`tool_result`, reason `input_required`). Anything else in it, or a
    /// request of another method, refuses the result.
    pub(super) async fn input_required_answer(
        &self,
        id: &RequestId,
        result: &Value<'static>,
        tool: &str,
        call_id: &str,
        approved: Option<toolgate_json::canonical::Digest>,
    ) -> String {
        let mut reader = Reader::new(self.options.max_result_bytes);
        let rebuilt = input_required(&mut reader, result);
        if let (Ok(v), Some(digest)) = (&rebuilt, approved) {
            // A human approved this call: its retry continues it.
            if let Some(state) = v.pointer("/requestState").and_then(Value::as_str) {
                self.note_continuation(tool, digest, state);
            }
        }
        let mut report = reader.into_report();
        let answer = match rebuilt {
            Ok(v) => v,
            Err(code) => {
                report.refused = Some(code);
                crate::results::text_result(&format!("refused by toolgate: {code}"), true)
            }
        };
        let mut report_codes = report.clone();
        if report_codes.refused.is_none() {
            report_codes.refused = Some("input_required");
        }
        let digest = Some(canonical::digest(&answer));
        if !self
            .record_read(
                tool.to_owned(),
                call_id.to_owned(),
                "mcp result",
                &report_codes,
                digest,
            )
            .await
        {
            return frame::result_answer(
                id,
                crate::results::text_result("refused by toolgate: store_unavailable", true),
            );
        }
        frame::result_answer(id, answer)
    }

    /// The `tool_result` record of a read: what was found as its reasons.
    async fn record_read(
        &self,
        name: String,
        call_id: String,
        note: &'static str,
        report: &ResultReport,
        digest: Option<toolgate_json::canonical::Digest>,
    ) -> bool {
        let mut reasons: Vec<String> = report.refused.iter().map(|c| (*c).to_owned()).collect();
        reasons.extend(report.findings.iter().map(|f| f.as_str().to_owned()));
        if report.truncated && !reasons.iter().any(|r| r == "truncated") {
            reasons.push("truncated".to_owned());
        }
        self.record_note(name, call_id, reasons, digest, note).await
    }
}

/// What reading an answer gives: the value (or a ready error line) and
/// the findings; `Err` with the refusing code.
type Checked = Result<(Result<Value<'static>, String>, ResultReport), (&'static str, ResultReport)>;

/// One prompt or sampling message: `role` and its content (one block, or
/// an array of blocks), read.
fn message(reader: &mut Reader, m: &Value<'_>) -> Result<Value<'static>, &'static str> {
    let m = m.as_object().ok_or("invalid_result")?;
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .ok_or("invalid_result")?;
    if role != "user" && role != "assistant" {
        return Err("invalid_result");
    }
    let content = match m.get("content").ok_or("invalid_result")? {
        Value::Array(blocks) => Value::Array(
            blocks
                .iter()
                .map(|b| reader.block(b))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        block => reader.block(block)?,
    };
    let mut out = Object::new();
    out.insert("role", Value::String(Cow::Owned(role.to_owned())));
    out.insert("content", content);
    Ok(Value::Object(out))
}

/// `sampling/createMessage` params with its messages and system prompt
/// read; its other members (model preferences, limits) as they are.
fn sampling(reader: &mut Reader, p: &Object<'static>) -> Result<Object<'static>, &'static str> {
    let mut out = p.clone();
    let messages = p
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("invalid_request")?;
    let read = messages
        .iter()
        .map(|m| message(reader, m))
        .collect::<Result<Vec<_>, _>>()?;
    out.insert("messages", Value::Array(read));
    if let Some(s) = p.get("systemPrompt") {
        let s = s.as_str().ok_or("invalid_request")?;
        let clean = reader.text(s);
        out.insert("systemPrompt", Value::String(Cow::Owned(clean)));
    }
    Ok(out)
}

/// `elicitation/create` params with its message read.
fn elicitation(reader: &mut Reader, p: &Object<'static>) -> Result<Object<'static>, &'static str> {
    let mut out = p.clone();
    let m = p
        .get("message")
        .and_then(Value::as_str)
        .ok_or("invalid_request")?;
    let clean = reader.text(m);
    out.insert("message", Value::String(Cow::Owned(clean)));
    Ok(out)
}

/// An `input_required` result rebuilt from what was read.
fn input_required(
    reader: &mut Reader,
    result: &Value<'static>,
) -> Result<Value<'static>, &'static str> {
    let o = result.as_object().ok_or("invalid_result")?;
    let requests = o
        .get("inputRequests")
        .and_then(Value::as_object)
        .ok_or("invalid_result")?;
    let state = o
        .get("requestState")
        .map(|s| s.as_str().ok_or("invalid_result"))
        .transpose()?;
    let mut read = Object::new();
    for (key, request) in requests.iter() {
        let r = request.as_object().ok_or("invalid_result")?;
        let method = r
            .get("method")
            .and_then(Value::as_str)
            .ok_or("invalid_result")?;
        let params = r.get("params").and_then(Value::as_object);
        let params = match (method, params) {
            ("elicitation/create", Some(p)) => elicitation(reader, p)?,
            ("sampling/createMessage", Some(p)) => sampling(reader, p)?,
            ("roots/list", p) => p.cloned().unwrap_or_default(),
            _ => return Err("invalid_result"),
        };
        let mut out = Object::new();
        out.insert("method", Value::String(Cow::Owned(method.to_owned())));
        out.insert("params", Value::Object(params));
        read.insert(crate::pins::clean_text(key), Value::Object(out));
    }
    let mut out = Object::new();
    out.insert("resultType", Value::String(Cow::Borrowed("input_required")));
    out.insert("inputRequests", Value::Object(read));
    if let Some(s) = state {
        out.insert("requestState", Value::String(Cow::Owned(s.to_owned())));
    }
    Ok(Value::Object(out))
}

/// An `initialize` or `server/discover` result without the `tasks`
/// capability (toolgate does not support tasks).
fn without_tasks(result: &Value<'static>) -> Value<'static> {
    let Some(mut o) = result.as_object().cloned() else {
        return result.clone();
    };
    if let Some(Value::Object(caps)) = o.get("capabilities").cloned() {
        let mut caps = caps;
        caps.remove("tasks");
        o.insert("capabilities", Value::Object(caps));
    }
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn tasks_and_unknown_methods_do_not_pass() {
        let v = Value::Null;
        assert!(client_request("tasks/get", &v).is_err());
        assert!(client_request("tasks/result", &v).is_err());
        assert!(client_request("x/unknown", &v).is_err());
        assert!(matches!(client_request("tools/list", &v), Ok(None)));
        let result = toolgate_json::from_str(
            r#"{"capabilities":{"tools":{},"tasks":{"requests":{}}},"protocolVersion":"2025-11-25"}"#,
        )
        .unwrap()
        .into_owned();
        assert_eq!(
            without_tasks(&result).to_canonical_string(),
            r#"{"capabilities":{"tools":{}},"protocolVersion":"2025-11-25"}"#
        );
    }
}
