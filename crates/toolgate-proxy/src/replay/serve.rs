//! The HTTP side of `toolgate replay`: the three routes answered from the
//! recordings, everything else refused with a clear error.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;

use super::load::Recordings;
use super::matching::Asked;
use crate::Api;

/// The largest request body read, in bytes, unless the caller says.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 8 << 20;

struct Replay {
    recordings: Recordings,
    max_request_bytes: usize,
}

fn answer(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn error(api: Api, status: StatusCode, code: &str, message: &str) -> Response {
    answer(status, "application/json", api.error_body(code, message))
}

/// The routes, answering from `recordings`; request bodies over
/// `max_request_bytes` are refused (`413`).
pub fn router(recordings: Recordings, max_request_bytes: usize) -> Router {
    let state = Arc::new(Replay {
        recordings,
        max_request_bytes,
    });
    Router::new().fallback(handle).with_state(state)
}

/// Serves `recordings` on `listener` until `shutdown` completes, within the
/// edge's default limits.
pub async fn serve(
    listener: tokio::net::TcpListener,
    recordings: Recordings,
    max_request_bytes: usize,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    toolgate_edge::serve(
        listener,
        router(recordings, max_request_bytes),
        toolgate_edge::Limits::new(),
        shutdown,
        || async {},
    )
    .await
}

async fn handle(State(replay): State<Arc<Replay>>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    let api = [Api::ChatCompletions, Api::Responses, Api::Messages]
        .into_iter()
        .find(|a| a.path() == path);
    let Some(api) = api.filter(|_| req.method() == Method::POST) else {
        let shape = if path.starts_with("/v1/messages") {
            Api::Messages
        } else {
            Api::ChatCompletions
        };
        let method = req.method().as_str().to_owned();
        eprintln!("toolgate: replay: {method} {path}: not a replayed route");
        return error(
            shape,
            StatusCode::NOT_FOUND,
            "unknown_route",
            &format!(
                "toolgate replay answers POST /v1/chat/completions, POST /v1/responses and POST /v1/messages only, not {method} {}",
                path.chars().take(200).collect::<String>()
            ),
        );
    };
    let bytes = match axum::body::to_bytes(req.into_body(), replay.max_request_bytes).await {
        Ok(b) => b,
        Err(e) if toolgate_edge::is_body_deadline(&e) => {
            return error(
                api,
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                "the request body did not arrive in time",
            )
        }
        Err(_) => {
            return error(
                api,
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                &format!(
                    "the request body is larger than {} bytes (--max-request-bytes)",
                    replay.max_request_bytes
                ),
            )
        }
    };
    let body = match toolgate_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return error(
                api,
                StatusCode::BAD_REQUEST,
                "invalid_request",
                &format!("the request body is not strict JSON: {e}"),
            )
        }
    };
    let asked = match Asked::of(api, &body) {
        Ok(a) => a,
        Err(why) => return error(api, StatusCode::BAD_REQUEST, "invalid_request", why),
    };
    match replay.recordings.find(&asked) {
        Ok(r) => {
            eprintln!("toolgate: replay: POST {path}: {}", r.body_file);
            let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::OK);
            let kind = if r.stream {
                "text/event-stream"
            } else {
                "application/json"
            };
            answer(status, kind, r.body.clone())
        }
        Err(miss) => {
            eprintln!("toolgate: replay: {miss}");
            error(
                api,
                StatusCode::NOT_FOUND,
                "no_recording",
                &format!("{miss} ({})", replay.recordings.manifest().display()),
            )
        }
    }
}
