//! What the proxy does with a caller's request before the upstream sees
//! it, beyond rewriting it (`request.rs`): a refused request is answered
//! in the provider's error shape and audited.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use toolgate_store::{AuditEntry, Clock as _, StoreGate, SystemClock, Verdict as AuditVerdict};

use crate::api::Api;
use crate::request::RequestRefused;

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

/// A request whose history toolgate cannot read whole: `400` with the
/// refusal's code, and a `tool_result` audit record naming it (the reason
/// is the code; nothing of the request's text is recorded). A store that
/// cannot take the record makes it `503 store_unavailable`.
pub(crate) async fn refuse(
    gate: &Arc<StoreGate>,
    api: Api,
    user: &str,
    session: &str,
    refused: &RequestRefused,
) -> Response {
    let entry = AuditEntry::new(SystemClock::new().now(), AuditVerdict::ToolResult)
        .user(user)
        .session(session)
        .reason(refused.code)
        .note(format!("proxy request {} refused", api.path()));
    let gate = Arc::clone(gate);
    let committed =
        tokio::task::spawn_blocking(move || gate.store().append_all(vec![entry]).is_ok())
            .await
            .unwrap_or(false);
    if !committed {
        return error(
            api,
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the refusal could not be recorded",
        );
    }
    error(api, StatusCode::BAD_REQUEST, refused.code, &refused.message)
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
