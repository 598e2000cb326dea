//! `POST /v1/hooks/claude`: Claude Code's HTTP hooks (`"type": "http"`),
//! so one `toolgate serve` gates the agents of a whole team. The body is
//! the hook event Claude Code would give a command hook; the answer is the
//! JSON a command hook would print ([`toolgate::hook`]), decided as
//! `toolgate hook --agent claude` decides it.
//!
//! Claude Code takes a non-2xx answer, or none, as a non-blocking error
//! and runs the call. So this route answers **every** request `200 OK`, and
//! every failure (no or an unknown bearer token, a token that may not speak
//! for its own name, an unreadable event, a store error, a decision later
//! than [`DEADLINE`]) is a deny whose reason says `toolgate: blocked: CODE`.
//!
//! Each developer has a `[[server.token]]` of role `agent`: the token's
//! name is the user the calls are decided for (the Cedar principal), the
//! session is `claude:SESSION_ID`. `?on_hold=ask` answers held calls with
//! Claude Code's own "ask" instead of a toolgate approval.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::response::Response;
use toolgate::hook::{outside_project, Agent as HookAgent, Answer, HookEvent, OnHold, Phase};
use toolgate::sanitize::{sanitize_str, SanitizeOptions};
use toolgate::{Context, Format};
use toolgate_json::canonical::{self, Digest};
use toolgate_store::{AuditEntry, AuditVerdict};

use super::ok_json;
use crate::auth::Agent;
use crate::error::ApiError;
use crate::state::AppState;

/// The longest a hook request is decided for before it is denied.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);

/// The query of `POST /v1/hooks/claude`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HookQuery {
    on_hold: Option<String>,
}

pub(crate) async fn claude(
    State(state): State<AppState>,
    caller: Result<Agent, ApiError>,
    query: Result<Query<HookQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let answer = match tokio::time::timeout(DEADLINE, answer(&state, caller, query, body)).await {
        Ok(a) => a,
        Err(_) => Answer::blocked("timeout"),
    };
    ok_json(http_body(&answer))
}

/// A command hook's answer as an HTTP hook's body: a block (exit code 2)
/// becomes a deny with its reason.
fn http_body(answer: &Answer) -> String {
    if answer.exit == 0 && !answer.stdout.is_empty() {
        answer.stdout.clone()
    } else if answer.exit == 0 {
        "{}".to_owned()
    } else {
        let reason = answer.stderr.trim_end();
        Answer::deny(HookAgent::Claude, reason, None).stdout
    }
}

async fn answer(
    state: &AppState,
    caller: Result<Agent, ApiError>,
    query: Result<Query<HookQuery>, axum::extract::rejection::QueryRejection>,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Answer {
    let Ok(Agent(caller)) = caller else {
        return Answer::blocked("unauthorized");
    };
    let hold = match query {
        Ok(Query(HookQuery { on_hold: None })) => OnHold::Approval,
        Ok(Query(HookQuery { on_hold: Some(m) })) if m == "approval" => OnHold::Approval,
        Ok(Query(HookQuery { on_hold: Some(m) })) if m == "ask" => OnHold::Ask,
        _ => return Answer::blocked("invalid_query"),
    };
    let user = caller.actor.clone();
    if !caller.may_speak_for(&user) {
        return Answer::blocked("forbidden");
    }
    let Ok(body) = body else {
        return Answer::blocked("unreadable_event");
    };
    let event = match HookEvent::parse(HookAgent::Claude, &body) {
        Ok(e) => e,
        Err(e) => return Answer::blocked(&format!("unreadable_event ({})", e.code())),
    };
    let gate = state.inner.gate.current();
    let note = "hook:claude:http";
    match event.phase() {
        Phase::Before => {
            if let Some(pointer) = outside_project(&event) {
                let entry = entry(state, &user, &event, AuditVerdict::Deny, note)
                    .reason("path_outside_project")
                    .digest(canonical::digest(event.tool_input()));
                if !append(state, entry).await {
                    return Answer::blocked("store_unavailable");
                }
                let reason = format!("denied by toolgate: path_outside_project at {pointer}");
                return Answer::deny(HookAgent::Claude, &reason, None);
            }
            let context = Context::new(user, event.session(), 1);
            let Ok(decisions) = gate
                .decide_async(event.call_body(), Format::Mcp, context)
                .await
            else {
                return Answer::blocked("store_unavailable");
            };
            let rejected = decisions
                .rejected()
                .map_or("internal_error", |r| r.code.as_str());
            Answer::before(&event, decisions.decisions().first(), rejected, hold)
        }
        Phase::After => {
            let text = event.result_text().unwrap_or_default();
            let clean = sanitize_str(&text, &SanitizeOptions::new());
            let mut entry = entry(state, &user, &event, AuditVerdict::ToolResult, note)
                .digest(Digest::of(text.as_bytes()));
            let mut codes: Vec<&str> = Vec::new();
            for f in &clean.findings {
                if !codes.contains(&f.code.as_str()) {
                    codes.push(f.code.as_str());
                }
            }
            for c in codes {
                entry = entry.reason(c);
            }
            if !append(state, entry).await {
                return Answer::blocked("store_unavailable");
            }
            Answer::after(HookAgent::Claude, &clean)
        }
    }
}

async fn append(state: &AppState, entry: AuditEntry) -> bool {
    let store = std::sync::Arc::clone(state.inner.gate.store());
    matches!(
        tokio::task::spawn_blocking(move || store.append(entry)).await,
        Ok(Ok(_))
    )
}

fn entry(
    state: &AppState,
    user: &str,
    event: &HookEvent,
    verdict: AuditVerdict,
    note: &str,
) -> AuditEntry {
    let mut e = AuditEntry::new(state.now(), verdict)
        .user(user)
        .session(event.session())
        .tool(event.tool_name())
        .note(note);
    if let Some(id) = event.tool_use_id() {
        e = e.call_id(id);
    }
    e
}
