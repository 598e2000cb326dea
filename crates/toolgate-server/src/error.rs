//! Every error the service returns: a status and a JSON body
//! `{"error": {"code", "message", "pointer"}}` with a stable code.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use toolgate_json::{canonical, Object, Value};

/// One refused request. Codes are a stable contract (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    pointer: String,
}

impl ApiError {
    /// An error with this status, code and message, at the document's root.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            pointer: String::new(),
        }
    }

    /// The JSON Pointer into the request body the error is about.
    #[must_use]
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = pointer.into();
        self
    }

    /// `400 invalid_request`: the body is strict JSON of the wrong shape.
    pub fn invalid_request(message: impl Into<String>, pointer: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message).at(pointer)
    }

    /// `400 unknown_field`: a member the request does not define.
    pub fn unknown_field(pointer: impl Into<String>) -> Self {
        let pointer = pointer.into();
        Self::new(
            StatusCode::BAD_REQUEST,
            "unknown_field",
            format!("unknown member `{pointer}`"),
        )
        .at(pointer)
    }

    /// `401 unauthorized`: no bearer token, or an unknown one.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid bearer token is required",
        )
    }

    /// `403 forbidden`: the token's role may not do this.
    pub fn forbidden(role: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("the role `{role}` may not do this"),
        )
    }

    /// `404 not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// `503 store_unavailable`: the store did not answer.
    pub fn store_unavailable(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            message,
        )
    }

    /// The stable code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The error body, canonical JSON.
    pub fn body_text(&self) -> String {
        let mut inner = Object::new();
        inner.insert("code", Value::String(self.code.into()));
        inner.insert("message", Value::String(self.message.clone().into()));
        inner.insert("pointer", Value::String(self.pointer.clone().into()));
        let mut outer = Object::new();
        outer.insert("error", Value::Object(inner));
        canonical::to_string(&Value::Object(outer))
    }
}

impl From<toolgate_store::Error> for ApiError {
    fn from(e: toolgate_store::Error) -> Self {
        use toolgate_store::ErrorCode;
        match e.code() {
            ErrorCode::NotFound => Self::not_found(e.message().to_owned()),
            ErrorCode::Conflict => Self::new(StatusCode::CONFLICT, "conflict", e.message()),
            ErrorCode::InvalidInput => {
                Self::new(StatusCode::BAD_REQUEST, "invalid_request", e.message())
            }
            code => {
                // The store's own message can name files and database
                // internals: it goes to the operator's log, the client gets
                // the code only.
                toolgate_edge::log::line(
                    toolgate_edge::log::Level::Error,
                    "serve",
                    "store_error",
                    &format!("store error: {e}"),
                );
                Self::store_unavailable(format!("the store failed: {}", code.as_str()))
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_response(self.status, self.body_text())
    }
}

/// A JSON response with this status.
pub fn json_response(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
