//! The HTTP handlers, one module per resource, and [`app`], the router
//! that maps every route to its handler. The results, reload, OpenAPI and
//! approvals-page handlers live with their concerns (`results`, `live`,
//! `openapi`, `ui`).

pub(crate) mod approvals;
pub(crate) mod audit;
mod decide;
pub(crate) mod health;
mod hooks;
mod kill;
mod metrics;
mod notices;
pub(crate) mod pins;

use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use self::approvals::{approve, deny, get_approval, list_approvals, wait};
use self::audit::audit;
use self::decide::decide;
use self::health::{healthz, readyz};
use self::kill::{get_kill, set_kill};
use self::metrics::metrics;
use self::pins::{approve_pin, get_pin, list_pins, reject_pin};
use crate::error::{json_response, ApiError};
use crate::state::AppState;
use crate::{live, openapi, results, ui};

/// The router with every route of the service.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/v1/decide", post(decide))
        .route("/v1/approvals", get(list_approvals))
        .route("/v1/approvals/{id}", get(get_approval))
        .route("/v1/approvals/{id}/approve", post(approve))
        .route("/v1/approvals/{id}/deny", post(deny))
        .route("/v1/approvals/{id}/wait", get(wait))
        .route("/v1/pins", get(list_pins))
        .route("/v1/pins/{id}", get(get_pin))
        .route("/v1/pins/{id}/approve", post(approve_pin))
        .route("/v1/pins/{id}/reject", post(reject_pin))
        .route("/v1/kill", get(get_kill).post(set_kill))
        .route("/v1/audit", get(audit))
        .route("/v1/notices", get(notices::list_notices))
        .route("/v1/results", post(results::results))
        .route("/v1/hooks/claude", post(hooks::claude))
        .route("/v1/reload", post(live::reload))
        .route("/openapi.json", get(openapi::document))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .merge(ui::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// A `200 OK` with a JSON body.
fn ok_json(body: String) -> Response {
    json_response(StatusCode::OK, body)
}

/// A `400 invalid_query` saying what is wrong with the query.
fn invalid_query(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", message)
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "the route does not take this method",
    )
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}
