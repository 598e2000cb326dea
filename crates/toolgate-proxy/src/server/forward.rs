//! Routes the config forwards unchanged (token counts sanitized and
//! audited first); every other route is 404.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use toolgate_telemetry::RequestSpan;

use super::{audit_results, caller, error, read_all, read_request, send, traced, Inner, Proxy};
use crate::api::Api;
use crate::request::{rewrite_request, RequestOptions};
use crate::{intake, upstream};

/// Routes the config forwards unchanged; every other route is 404.
pub(super) async fn other(State(p): State<Proxy>, req: Request) -> Response {
    let span = p.inner.telemetry().request("proxy forward", req.headers());
    traced(&span, forward(&p, req, &span).await)
}

async fn forward(p: &Proxy, req: Request, span: &RequestSpan) -> Response {
    let inner = &p.inner;
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let api = if path.starts_with("/v1/messages") {
        Api::Messages
    } else {
        Api::ChatCompletions
    };
    if toolgate_edge::config::is_stored_output_route(&method, &path) {
        return intake::stored_output_refused(api);
    }
    if !inner.config.forwards(&method, &path) {
        return error(
            api,
            StatusCode::NOT_FOUND,
            "not_found",
            "this route is not served by the proxy",
        );
    }
    let base = match api {
        Api::Messages => inner.config.anthropic().or(inner.config.openai()),
        _ => inner.config.openai().or(inner.config.anthropic()),
    };
    let known = caller(&inner.config, inner.jwt.get(), req.headers()).await;
    let (Some(base), Ok((user, session))) = (base, known) else {
        return error(
            api,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the request names no known user",
        );
    };
    let (parts, body) = req.into_parts();
    toolgate_edge::authenticated(&parts.extensions);
    let body = match read_request(api, body, inner.max_request_bytes).await {
        Ok(b) => b,
        Err(r) => return *r,
    };
    // A token count carries the history a request does: its tool results
    // are sanitized and audited as a request's are.
    let counted = match (method.as_str(), path.as_str()) {
        ("POST", "/v1/messages/count_tokens") => Some(Api::Messages),
        ("POST", "/v1/responses/input_tokens") => Some(Api::Responses),
        _ => None,
    };
    let body = match counted {
        Some(api) => match sanitized_count(inner, api, &user, &session, body).await {
            Ok(b) => b,
            Err(r) => return r,
        },
        None => body,
    };
    let response = match send(inner, api, parts.method.clone(), base, &parts, body, span).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let timeout = inner.config.upstream_timeout();
    let (rparts, rbody) = response.into_parts();
    match read_all(rbody, inner.max_response_bytes, timeout).await {
        Ok(bytes) => {
            let mut r = Response::new(Body::from(bytes));
            *r.status_mut() = rparts.status;
            *r.headers_mut() = upstream::returned_headers(&rparts.headers);
            r
        }
        Err(f) => error(api, f.0, f.1, f.2),
    }
    .into_response()
}

/// A token count's body with its history's tool results sanitized (and
/// audited) as [`rewrite_request`] does a request's; the tools are not
/// narrowed (nothing is generated).
async fn sanitized_count(
    inner: &Inner,
    api: Api,
    user: &str,
    session: &str,
    body: Bytes,
) -> Result<Bytes, Response> {
    let mut root = match toolgate_json::from_slice(&body) {
        Ok(v) if v.as_object().is_some() => v.into_owned(),
        _ => {
            return Err(error(
                api,
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "the request body is not one strict JSON object (no duplicate keys, no NaN)",
            ))
        }
    };
    let options = RequestOptions {
        narrowed: None,
        registry: &inner.registry,
        wrap_results: inner.config.wrap_results(),
        offered_tools: inner.config.offered_tools(),
        deepseek: inner.config.deepseek(),
    };
    let (changed, report) = match rewrite_request(api, &mut root, &options) {
        Ok(r) => r,
        Err(refused) => {
            return Err(intake::refuse(&inner.gate, api, user, session, &refused).await);
        }
    };
    if !audit_results(inner, api, user, session, &report.results).await {
        return Err(error(
            api,
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the tool results' findings could not be recorded",
        ));
    }
    Ok(if changed {
        Bytes::from(toolgate_json::canonical::to_string(&root))
    } else {
        body
    })
}
