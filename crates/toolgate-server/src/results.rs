//! `POST /v1/results`: a tool's result in, the sanitized result out
//! ([`toolgate::sanitize`], threat 7).
//!
//! Request: `{"tool": "…", "result": …, "call_id": "…", "session": "…"}`.
//! `tool` must be a registered tool (exact name); `result` is the tool's
//! output, a string (sanitized as is) or any other JSON value (sanitized as
//! its canonical text); `call_id` and `session` are optional and echoed.
//!
//! Answer: `{"tool", "call_id", "session", "content", "wrapped",
//! "truncated", "changed", "findings": [{"code", "offset"}]}`: `content` is
//! the cleaned text, `wrapped` the text wrapped as untrusted data for the
//! model's next turn, `changed` whether `content` differs from the result's
//! text, `findings` what the sanitizer noticed (codes as in
//! [`toolgate::sanitize::FindingCode`], offsets into `content`). The
//! sanitizer's limits are its defaults (64 KiB of text, 64 findings).
//!
//! A result with findings is audited before the answer: a `tool_result`
//! record (the caller's token as `actor`, the tool, call and session, the
//! distinct finding codes as reasons, the digest of the result's text); a
//! store that cannot take it answers `503 store_unavailable`.

use std::borrow::Cow;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use toolgate::identifier::MAX_IDENTIFIER_BYTES;
use toolgate::sanitize::{sanitize_str, SanitizeOptions};
use toolgate_json::canonical::Digest;
use toolgate_json::{canonical, Number, Object, Value};
use toolgate_store::ToolResultRecord;

use crate::auth::Agent;
use crate::error::{json_response, ApiError};
use crate::extract::StrictJson;
use crate::state::AppState;
use crate::wire::{bounded_member, object, only, string_member};

/// A parsed `POST /v1/results` body.
struct ResultRequest {
    tool: String,
    result: String,
    call_id: Option<String>,
    session: Option<String>,
}

impl ResultRequest {
    fn from_value(v: &Value<'static>) -> Result<Self, ApiError> {
        let o = object(v)?;
        only(o, &["tool", "result", "call_id", "session"])?;
        let tool = string_member(o, "tool", true)?.unwrap_or_default();
        let result = match o.get("result") {
            None => {
                return Err(ApiError::invalid_request(
                    "missing member `result`",
                    "/result",
                ))
            }
            Some(Value::String(s)) => s.to_string(),
            Some(other) => canonical::to_string(other),
        };
        Ok(Self {
            tool,
            result,
            call_id: bounded_member(o, "call_id", false, MAX_IDENTIFIER_BYTES)?,
            session: bounded_member(o, "session", false, MAX_IDENTIFIER_BYTES)?,
        })
    }
}

fn opt_string(s: Option<String>) -> Value<'static> {
    s.map_or(Value::Null, |s| Value::String(Cow::Owned(s)))
}

fn count(n: usize) -> Value<'static> {
    Value::Number(Number::from(u64::try_from(n).unwrap_or(u64::MAX)))
}

pub(crate) async fn results(
    State(state): State<AppState>,
    Agent(caller): Agent,
    StrictJson(value): StrictJson,
) -> Result<Response, ApiError> {
    let req = ResultRequest::from_value(&value)?;
    if !state.inner.gate.gate().registry().contains(&req.tool) {
        return Err(ApiError::invalid_request(
            format!("no registered tool `{}`", req.tool.escape_debug()),
            "/tool",
        ));
    }
    // Bounded work: the sanitizer reads at most its cap.
    let clean = sanitize_str(&req.result, &SanitizeOptions::new());
    if !clean.findings.is_empty() {
        let mut record = ToolResultRecord::new("/v1/results")
            .actor(caller.actor)
            .tool(req.tool.as_str())
            .digest(Digest::of(req.result.as_bytes()));
        if let Some(c) = &req.call_id {
            record = record.call_id(c.as_str());
        }
        if let Some(se) = &req.session {
            record = record.session(se.as_str());
        }
        for f in &clean.findings {
            record = record.finding(f.code.as_str());
        }
        let entry = state.inner.gate.current().tool_result(record);
        let store = std::sync::Arc::clone(state.inner.gate.store());
        tokio::task::spawn_blocking(move || store.append(entry))
            .await
            .map_err(|_| ApiError::store_unavailable("the result's record did not finish"))?
            .map_err(|_| {
                ApiError::store_unavailable("the result's findings could not be recorded")
            })?;
    }
    let body = {
        let mut o = Object::new();
        o.insert("tool", Value::String(Cow::Owned(req.tool)));
        o.insert("call_id", opt_string(req.call_id));
        o.insert("session", opt_string(req.session));
        o.insert("changed", Value::Bool(clean.text != req.result));
        o.insert("truncated", Value::Bool(clean.truncated));
        o.insert(
            "findings",
            Value::Array(
                clean
                    .findings
                    .iter()
                    .map(|f| {
                        let mut fo = Object::new();
                        fo.insert("code", Value::String(Cow::Borrowed(f.code.as_str())));
                        fo.insert("offset", count(f.offset));
                        Value::Object(fo)
                    })
                    .collect(),
            ),
        );
        o.insert("content", Value::String(Cow::Owned(clean.text)));
        o.insert("wrapped", Value::String(Cow::Owned(clean.wrapped)));
        canonical::to_string(&Value::Object(o))
    };
    Ok(json_response(StatusCode::OK, body))
}
