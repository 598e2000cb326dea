//! The strict JSON extractor: `Content-Type: application/json`, a body cap,
//! and toolgate-json's strict parser (duplicate keys, lone surrogates,
//! trailing data… are refused with the parser's code and pointer).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use serde::de::DeserializeOwned;
use toolgate_json::{Limit, Limits, ParseOptions, Value};

use crate::error::ApiError;
use crate::state::AppState;

/// A request body parsed strictly into a JSON value.
#[derive(Debug, Clone)]
pub struct StrictJson(pub Value<'static>);

impl FromRequest<AppState> for StrictJson {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        match read(req, state, false).await? {
            Some(v) => Ok(Self(v)),
            None => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                "the body is empty",
            )),
        }
    }
}

/// An optional strict JSON body: an empty body is `None`.
#[derive(Debug, Clone)]
pub struct MaybeJson(pub Option<Value<'static>>);

impl FromRequest<AppState> for MaybeJson {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        read(req, state, true).await.map(Self)
    }
}

/// The cap on a body read before its sender is known (`POST /ui/login`):
/// a token in a small object needs no more.
pub const ANONYMOUS_MAX_BODY_BYTES: usize = 4096;
/// How long such a body may take to arrive: a connection slot held by an
/// anonymous slow body is freed this soon.
pub const ANONYMOUS_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

/// A strict JSON body from a sender not yet known: at most
/// [`ANONYMOUS_MAX_BODY_BYTES`] within [`ANONYMOUS_BODY_TIMEOUT`].
pub(crate) async fn read_anonymous(req: Request) -> Result<Value<'static>, ApiError> {
    read_limited(req, ANONYMOUS_MAX_BODY_BYTES, ANONYMOUS_BODY_TIMEOUT, false)
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", "the body is empty"))
}

async fn read(
    req: Request,
    state: &AppState,
    optional: bool,
) -> Result<Option<Value<'static>>, ApiError> {
    read_limited(req, state.max_body_bytes(), state.body_timeout(), optional).await
}

async fn read_limited(
    req: Request,
    cap: usize,
    timeout: std::time::Duration,
    optional: bool,
) -> Result<Option<Value<'static>>, ApiError> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    let has_type = req.headers().contains_key(header::CONTENT_TYPE);
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is larger than {cap} bytes"),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > u64::try_from(cap).unwrap_or(u64::MAX)) {
        return Err(too_large());
    }
    if !is_json && (has_type || !optional) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be `Content-Type: application/json`",
        ));
    }
    let late = || {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the body did not arrive within {} seconds",
                timeout.as_secs()
            ),
        )
    };
    // The edge's body deadline (the connection's) and this request's own
    // (shorter for an anonymous login) both answer `408`.
    let bytes: Bytes =
        match tokio::time::timeout(timeout, axum::body::to_bytes(req.into_body(), cap)).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(e)) if is_length_limit(&e) => return Err(too_large()),
            Ok(Err(e)) if toolgate_edge::is_body_deadline(&e) => return Err(late()),
            Ok(Err(_)) => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "the body could not be read (cut off or malformed framing)",
                ))
            }
            Err(_) => return Err(late()),
        };
    if bytes.is_empty() {
        return Ok(None);
    }
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be `Content-Type: application/json`",
        ));
    }
    parse(&bytes, cap).map(Some)
}

/// Whether reading the body failed because it is larger than the cap.
fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// Parses a request body strictly; the string limit is the body cap (a raw
/// provider response travels as one string).
pub fn parse(bytes: &[u8], cap: usize) -> Result<Value<'static>, ApiError> {
    let limits = Limits::new()
        .set(Limit::InputBytes, cap)
        .and_then(|l| l.set(Limit::StringBytes, cap))
        .unwrap_or_default();
    let value = ParseOptions::new()
        .with_limits(limits)
        .parse(bytes)
        .map_err(|e| {
            let code = match e.code() {
                toolgate_json::ErrorCode::DuplicateKey => "duplicate_key",
                _ => "invalid_json",
            };
            ApiError::new(
                StatusCode::BAD_REQUEST,
                code,
                format!(
                    "the body is not strict JSON: {}: {}",
                    e.code().as_str(),
                    e.code().description()
                ),
            )
            .at(e.pointer().to_owned())
        })?;
    Ok(value.into_owned())
}

/// Query parameters; unknown or malformed ones are `400 invalid_query`.
#[derive(Debug, Clone)]
pub struct StrictQuery<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for StrictQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(q)| StrictQuery(q))
            .map_err(|e| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_query",
                    query_problem(&e.body_text()),
                )
            })
    }
}

/// The framework's query rejection in toolgate's words: which parameter,
/// and what it must be. Values are never echoed.
fn query_problem(framework: &str) -> String {
    let detail = framework
        .split_once("query string: ")
        .map_or(framework, |(_, d)| d);
    // The detail may start with the parameter's path (`timeout: …`).
    let (name, problem) = detail.split_once(": ").unwrap_or(("", detail));
    let (name, problem) = if name.contains(' ') {
        ("", detail)
    } else {
        (name, problem)
    };
    for (prefix, says) in [
        ("unknown field `", "unknown parameter"),
        ("duplicate field `", "parameter given twice:"),
    ] {
        if let Some(rest) = problem.strip_prefix(prefix) {
            let field = rest.split_once('`').map_or(rest, |(n, _)| n);
            return format!("{says} `{}`", field.escape_debug());
        }
    }
    let what = if problem.contains("float") {
        "a number"
    } else if problem.contains("digit") || problem.contains("integer") {
        "a whole number in range"
    } else if problem.contains("bool") {
        "`true` or `false`"
    } else {
        "a valid value"
    };
    if name.is_empty() {
        format!("the query string is not valid: parameters must be {what}")
    } else {
        format!("parameter `{}` must be {what}", name.escape_debug())
    }
}
