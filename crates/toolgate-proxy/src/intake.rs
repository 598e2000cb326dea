//! What the proxy does with a caller's request before the upstream sees
//! it, beyond rewriting it (`request.rs`): a refused request is answered
//! in the provider's error shape and audited.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use toolgate_store::{AuditEntry, AuditVerdict, StoreGate, ToolResultRecord};

use crate::api::Api;
use crate::request::{OfferedTool, RequestRefused};
use crate::server::Audited;
use toolgate_edge::config::OfferedTools;
use toolgate_json::canonical::Digest;

/// An error response in the provider's shape.
pub(crate) fn error(api: Api, status: StatusCode, code: &str, message: &str) -> Response {
    let mut r = Response::new(Body::from(api.error_body(code, message)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// A request refused by the rewrite: `400` with the refusal's code, and an
/// audit record: `tool_result` naming the code for a history toolgate
/// cannot read whole (nothing of the request's text is recorded), one
/// `tool_offered` per differing tool for `offered_tool_mismatch`. A store that
/// cannot take the record makes it `503 store_unavailable`.
pub(crate) async fn refuse(
    gate: &Arc<StoreGate>,
    api: Api,
    user: &str,
    session: &str,
    refused: &RequestRefused,
) -> Response {
    let entries = if refused.offered.is_empty() {
        vec![gate.tool_result(
            ToolResultRecord::new(format!("proxy request {} refused", api.path()))
                .user(user)
                .session(session)
                .finding(refused.code),
        )]
    } else {
        offered_entries(gate, api, user, session, &refused.offered)
    };
    if !append(gate, entries).await {
        return error(
            api,
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the refusal could not be recorded",
        );
    }
    error(api, StatusCode::BAD_REQUEST, refused.code, &refused.message)
}

async fn append(gate: &Arc<StoreGate>, entries: Vec<AuditEntry>) -> bool {
    let gate = Arc::clone(gate);
    tokio::task::spawn_blocking(move || gate.store().append_all(entries).is_ok())
        .await
        .unwrap_or(false)
}

fn offered_entries(
    gate: &StoreGate,
    api: Api,
    user: &str,
    session: &str,
    offered: &[OfferedTool],
) -> Vec<AuditEntry> {
    let now = gate.now();
    offered
        .iter()
        .map(|o| {
            let did = match o.action {
                OfferedTools::Replace => "replaced",
                OfferedTools::Refuse => "refused",
                _ => "reported",
            };
            AuditEntry::new(now, AuditVerdict::ToolOffered)
                .user(user)
                .session(session)
                .tool(o.tool.as_str())
                .digest(o.digest)
                .reason("offered_schema_differs")
                .note(format!("proxy request {} {did}", api.path()))
        })
        .collect()
}

/// Records a `tool_offered` audit record for each registered tool the
/// request offered with another schema, once per (user, session, tool,
/// offered schema) while the proxy remembers it (`audited`, bounded);
/// whether they are committed.
pub(crate) async fn audit_offered(
    gate: &Arc<StoreGate>,
    audited: &Mutex<Audited>,
    api: Api,
    user: &str,
    session: &str,
    offered: &[OfferedTool],
) -> bool {
    let key = |o: &OfferedTool| {
        let mut text = String::from("offered\n");
        for part in [user, session, o.tool.as_str(), o.action.as_str()] {
            text.push_str(&part.len().to_string());
            text.push(':');
            text.push_str(part);
        }
        text.push_str(&o.digest.to_hex());
        Digest::of(text.as_bytes())
    };
    let fresh: Vec<(Digest, OfferedTool)> = {
        let seen = audited.lock().unwrap_or_else(PoisonError::into_inner);
        offered
            .iter()
            .map(|o| (key(o), o.clone()))
            .filter(|(k, _)| !seen.contains(k))
            .collect()
    };
    if fresh.is_empty() {
        return true;
    }
    let list: Vec<OfferedTool> = fresh.iter().map(|(_, o)| o.clone()).collect();
    if !append(gate, offered_entries(gate, api, user, session, &list)).await {
        return false;
    }
    let mut seen = audited.lock().unwrap_or_else(PoisonError::into_inner);
    for (k, _) in fresh {
        seen.insert(k);
    }
    true
}

/// A route answered from a model's stored output (`responses.retrieve`,
/// `chat.completions.retrieve`, a batch's results, …): its calls were never
/// decided, so it is never forwarded, whatever `forward` lists. `403
/// stored_output_refused` in the provider's shape.
pub(crate) fn stored_output_refused(api: Api) -> Response {
    error(
        api,
        StatusCode::FORBIDDEN,
        "stored_output_refused",
        "toolgate does not hand on a model's stored output (a stored response or completion, a batch's results, a file's content): its tool calls were never decided; use the response the proxy returned when it was created",
    )
}

#[cfg(test)]
mod tests {
    use toolgate_store::{ManualClock, SqliteOptions, Timestamp};

    use super::*;

    #[test]
    fn offered_tool_records_are_timed_by_the_gates_clock() {
        let config = toolgate::config::Config::parse(
            "[[tool]]\nname = \"a\"\nrisk = \"read\"\nschema = { type = \"object\" }\n",
            "/nowhere/toolgate.toml",
        )
        .unwrap();
        let gate = toolgate::Gate::builder(config.registry().clone())
            .authorizer(toolgate::danger::NoAuthorization)
            .build()
            .unwrap();
        let store = Arc::new(SqliteOptions::new().open_in_memory().unwrap());
        let clock = ManualClock::new(Timestamp::from_unix_seconds(1_000_000));
        let gate = StoreGate::new(gate, store).with_clock(Arc::new(clock.clone()));
        let offered = [OfferedTool {
            tool: "a".into(),
            digest: Digest::of(b"{}"),
            action: OfferedTools::Report,
        }];
        let entries = offered_entries(&gate, Api::ChatCompletions, "alice", "s", &offered);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].time, Timestamp::from_unix_seconds(1_000_000));
    }
}
