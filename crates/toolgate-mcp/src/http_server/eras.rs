//! The two eras of a POSTed message: 2025-11-25 sessions (`initialize`,
//! then requests carrying `Mcp-Session-Id`) and 2026-07-28 stateless
//! requests whose mirrored headers must match their body.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::admit::Caller;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use toolgate_json::{canonical, Object, Value};

use super::session::{self, exchange, Session};
use super::{
    accepted, json_response, message_id, not_found_session, note, printable, rpc_error, upstream,
    Accept, HttpProxy, HEADER_MISMATCH, LEGACY_VERSIONS, MODERN_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::frame::{self, Message, RequestId};
use crate::refusals::Kind;

/// `initialize` without a session: a new session, its id in the answer.
pub(super) async fn initialize(
    p: &HttpProxy,
    token: &Caller,
    headers: &HeaderMap,
    message: Message,
    line: String,
    accept: Accept,
) -> Response {
    if let Err(r) = legacy_version_header(headers, &message) {
        p.inner.refused(
            Kind::Deny,
            "unsupported_protocol_version",
            Some(token.user()),
        );
        return *r;
    }
    let Message::Request { id, .. } = message else {
        return not_found_session();
    };
    let mut random = [0u8; 16];
    if getrandom::fill(&mut random).is_err() {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(&id),
            frame::INTERNAL_ERROR,
            "refused by toolgate: internal_error",
        );
    }
    let sid: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let session = match p.inner.open(sid.clone(), token.user(), &sid, false) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    note(&format!(
        "session {sid} opened for `{}`",
        printable(token.user())
    ));
    let mut r = exchange(p, &session, id, None, line, None, accept).await;
    if let Ok(v) = HeaderValue::from_str(&sid) {
        r.headers_mut().insert("mcp-session-id", v);
    }
    r
}

/// A message in an open session.
pub(super) async fn legacy(
    p: &HttpProxy,
    token: &Caller,
    sid: &str,
    headers: &HeaderMap,
    message: Message,
    line: String,
    accept: Accept,
) -> Response {
    if let Err(r) = legacy_version_header(headers, &message) {
        p.inner.refused(
            Kind::Deny,
            "unsupported_protocol_version",
            Some(token.user()),
        );
        return *r;
    }
    let Some(session) = find_session(p, token, sid) else {
        return not_found_session();
    };
    match message {
        Message::Request { id, method, value } => {
            if method == "initialize" {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(&id),
                    frame::INVALID_REQUEST,
                    "refused by toolgate: the session is initialized already",
                );
            }
            let token = value
                .pointer("/params/_meta/progressToken")
                .map(canonical::to_string);
            if method == "tools/call" {
                session.traces.put(&id, headers);
            }
            exchange(p, &session, id, None, line, token, accept).await
        }
        Message::Notification { method } if method == "notifications/cancelled" => {
            // The cancelled request's own exchange ends: no answer comes.
            let sent = session.send(&line).await;
            if let Some(id) = toolgate_json::from_str(&line).ok().and_then(|v| {
                v.pointer("/params/requestId")
                    .and_then(RequestId::from_value)
            }) {
                session::forget(&session, &id);
            }
            if sent {
                accepted()
            } else {
                not_found_session()
            }
        }
        Message::Notification { .. } | Message::Response { .. } => {
            if session.send(&line).await {
                accepted()
            } else {
                not_found_session()
            }
        }
    }
}

/// The session `sid` if it exists and was opened by this token's user.
/// A refusal is audited (`unknown_session`).
pub(super) fn find_session(p: &HttpProxy, token: &Caller, sid: &str) -> Option<Arc<Session>> {
    let session = p.inner.lock_sessions().get(sid).cloned();
    let found =
        session.filter(|s| s.user == token.user() && !s.modern && s.alive.load(Ordering::Relaxed));
    if found.is_none() {
        p.inner
            .refused(Kind::Deny, "unknown_session", Some(token.user()));
    }
    found
}

/// A session-era `MCP-Protocol-Version` header must be one of
/// [`LEGACY_VERSIONS`].
pub(super) fn legacy_version_header(
    headers: &HeaderMap,
    message: &Message,
) -> Result<(), Box<Response>> {
    match headers.get("mcp-protocol-version") {
        None => Ok(()),
        Some(v) if v.to_str().is_ok_and(|v| LEGACY_VERSIONS.contains(&v)) => Ok(()),
        Some(_) => Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            message_id(message),
            frame::INVALID_REQUEST,
            "refused by toolgate: unsupported MCP-Protocol-Version",
        ))),
    }
}

/// A 2026-07-28 message: the headers must mirror the body, the version must
/// be served; a request goes to the user's connection under an id of the
/// proxy's.
pub(super) async fn modern(
    p: &HttpProxy,
    token: &Caller,
    headers: &HeaderMap,
    message: Message,
    value: Value<'static>,
    accept: Accept,
) -> Response {
    let inner = &p.inner;
    let id = message_id(&message);
    let method = value.pointer("/method").and_then(Value::as_str);
    let version = value
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str);
    if let Message::Request { .. } = &message {
        let caps = value.pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities");
        if version.is_none() || caps.is_none_or(|c| c.as_object().is_none()) {
            inner.refused(Kind::Deny, "missing_meta", Some(token.user()));
            return rpc_error(
                StatusCode::BAD_REQUEST,
                id,
                frame::INVALID_PARAMS,
                "refused by toolgate: _meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities",
            );
        }
    }
    // The mirrored headers.
    let mut checks: Vec<(&str, Option<&str>)> = vec![("MCP-Protocol-Version", version)];
    checks.push(("Mcp-Method", method));
    let name = match method {
        Some("tools/call" | "prompts/get") => Some(value.pointer("/params/name")),
        Some("resources/read") => Some(value.pointer("/params/uri")),
        _ => None,
    };
    if let Some(n) = name {
        checks.push(("Mcp-Name", n.and_then(Value::as_str)));
    }
    for (header_name, body) in checks {
        let given = headers
            .get(header_name)
            .and_then(|v| v.to_str().ok())
            .and_then(header_value);
        if body.is_none() && given.is_none() && header_name == "MCP-Protocol-Version" {
            // A notification without a version: nothing to mirror.
            continue;
        }
        if given.as_deref() != body {
            note(&format!(
                "request refused: {header_name} does not match the body"
            ));
            inner.refused(Kind::Deny, "header_mismatch", Some(token.user()));
            return rpc_error(
                StatusCode::BAD_REQUEST,
                id,
                HEADER_MISMATCH,
                &format!("Header mismatch: the {header_name} header does not match the body"),
            );
        }
    }
    if let Some(v) = version {
        if v != MODERN_VERSION {
            inner.refused(
                Kind::Deny,
                "unsupported_protocol_version",
                Some(token.user()),
            );
            return unsupported_version(id, v);
        }
    }
    if !matches!(message, Message::Request { .. }) {
        // 2026-07-28 defines no client-to-server notification over HTTP
        // and no server request to answer: nothing to forward.
        return accepted();
    }
    let gate_session = token
        .session()
        .map_or_else(|| format!("mcp-http-{}", token.user()), str::to_owned);
    let key = format!("modern\u{0}{}\u{0}{gate_session}", token.user());
    let existing = inner.lock_sessions().get(&key).cloned();
    let session = match existing.filter(|s| s.alive.load(Ordering::Relaxed)) {
        Some(s) => s,
        None => match inner.open(key, token.user(), &gate_session, true) {
            Ok(s) => s,
            Err(r) => return *r,
        },
    };
    match message {
        Message::Request { id, value, .. } => {
            // The proxy's own id on the shared connection.
            let own = format!("tg-{}", inner.next());
            let Some(mut o) = value.as_object().cloned() else {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    Some(&id),
                    frame::INVALID_REQUEST,
                    "refused by toolgate: not_a_message",
                );
            };
            o.insert("id", Value::String(std::borrow::Cow::Owned(own.clone())));
            let progress = value
                .pointer("/params/_meta/progressToken")
                .map(canonical::to_string);
            let line = canonical::to_string(&Value::Object(o));
            let Some(own_id) = RequestId::from_value(&Value::String(own.into())) else {
                return not_found_session();
            };
            if value.pointer("/method").and_then(Value::as_str) == Some("tools/call") {
                session.traces.put(&own_id, headers);
            }
            exchange(
                p,
                &session,
                own_id,
                Some(id.to_value()),
                line,
                progress,
                accept,
            )
            .await
        }
        Message::Notification { .. } | Message::Response { .. } => accepted(),
    }
}

/// A mirrored header's value: `=?base64?…?=` decoded.
pub(super) fn header_value(text: &str) -> Option<String> {
    match text
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => String::from_utf8(upstream::base64_decode(b64)?).ok(),
        None => Some(text.to_owned()),
    }
}

pub(super) fn unsupported_version(id: Option<&RequestId>, requested: &str) -> Response {
    let mut data = Object::new();
    data.insert(
        "supported",
        Value::Array(vec![Value::String(std::borrow::Cow::Borrowed(
            MODERN_VERSION,
        ))]),
    );
    data.insert(
        "requested",
        Value::String(std::borrow::Cow::Owned(requested.to_owned())),
    );
    let mut error = Object::new();
    error.insert(
        "code",
        Value::Number(toolgate_json::Number::from(UNSUPPORTED_PROTOCOL_VERSION)),
    );
    error.insert(
        "message",
        Value::String(std::borrow::Cow::Borrowed("Unsupported protocol version")),
    );
    error.insert("data", Value::Object(data));
    let mut o = Object::new();
    o.insert("jsonrpc", Value::String(std::borrow::Cow::Borrowed("2.0")));
    o.insert("id", id.map_or(Value::Null, RequestId::to_value));
    o.insert("error", Value::Object(error));
    json_response(
        StatusCode::BAD_REQUEST,
        canonical::to_string(&Value::Object(o)),
    )
}
