//! A whole (not streamed) response: parsed once, decided, rebuilt. The
//! tree the gate's adapter reads the calls from is the tree the rewrite
//! rebuilds, and the envelope the gate decides is the one the rewrite
//! pairs the calls with: what leaves is built from those decisions alone.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use toolgate::adapter::ParsedBody;
use toolgate::{Context, Decisions, Envelope};
use toolgate_json::Value;
use toolgate_telemetry::RequestSpan;

use super::{decide, error, Inner};
use crate::api::Api;
use crate::{refused, rewrite};

/// The answer to a whole response `bytes` of `api`, decided as `context`
/// (`Ok` when it is handed on, `Err` when it is refused or cannot be
/// recorded). `streamed`: the request asked for a stream; `is_stream`: the
/// upstream answered with one.
pub(super) async fn answer(
    inner: &Inner,
    api: Api,
    bytes: Bytes,
    streamed: bool,
    is_stream: bool,
    context: &Context,
    span: &RequestSpan,
) -> Result<Response, Response> {
    // The one strict parse of the body, under the gate's limits, every
    // number as written. A body it refuses takes the text path below:
    // the gate reads the text itself, and the rewrite refuses it.
    let parsed = inner.adapter.parse_exact(&bytes).ok();
    if let Some(refused) =
        refused_before_deciding(inner, api, &bytes, parsed.as_ref(), streamed, is_stream)
    {
        let calls = refused::calls_in(&inner.adapter, &bytes, api.format());
        let note = format!("proxy response {}: {}", api.path(), refused.message);
        if !refused::record(&inner.gate, context, calls, refused.code, note).await {
            return Err(error(
                api,
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                "the refusal could not be recorded",
            ));
        }
        return Err(error(
            api,
            StatusCode::BAD_GATEWAY,
            refused.code,
            &refused.message,
        ));
    }
    let read = parsed
        .as_ref()
        .map(|p| inner.adapter.read_parsed(p, api.format()));
    let decided = match &read {
        Some(Ok(envelope)) => decide_envelope(inner, envelope, context.clone(), span).await,
        // Not read: the gate reads the text and refuses it as it would.
        _ => decide(inner, bytes.to_vec(), api.format(), context.clone(), span).await,
    };
    let Some(decisions) = decided else {
        return Err(error(
            api,
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "the decision could not be recorded",
        ));
    };
    if api == Api::Responses {
        // (A body the exact parse refused is refused by the rewrite below:
        // nothing of it continues.)
        if let Some(p) = &parsed {
            inner
                .continuations
                .note(&context.user, p.value(), &decisions);
        }
    }
    if let Some(r) = rewrite::refusal(&decisions, inner.config.on_deny()) {
        let status = if r.code == "call_denied" {
            StatusCode::UNPROCESSABLE_ENTITY
        } else {
            StatusCode::BAD_GATEWAY
        };
        return Err(error(api, status, r.code, &r.message));
    }
    let (envelope, rewritten) = match (parsed, read) {
        (Some(parsed), Some(Ok(envelope))) => {
            let out = rewrite::rewrite_parsed(
                api,
                parsed,
                &envelope,
                &decisions,
                inner.config.pass_through(),
                inner.config.strip_markup(),
            );
            (envelope, out)
        }
        _ => match inner.adapter.read(&bytes, api.format()) {
            Ok(envelope) => {
                let out = rewrite::rewrite_json(
                    api,
                    &bytes,
                    &envelope,
                    &decisions,
                    inner.config.pass_through(),
                    inner.config.strip_markup(),
                );
                (envelope, out)
            }
            Err(_) => {
                return Err(error(
                    api,
                    StatusCode::BAD_GATEWAY,
                    "response_refused",
                    "toolgate refused the model's response",
                ))
            }
        },
    };
    match rewritten {
        Ok(out) => {
            let mut r = Response::new(Body::from(out));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Ok(r)
        }
        Err(refusal) => {
            // Decided, but not handed on: each call is recorded as refused.
            let calls = envelope
                .calls
                .iter()
                .map(|c| (c.call_id.clone(), c.tool_name().into_owned()))
                .collect();
            let note = format!("proxy response {}: {}", api.path(), refusal.message);
            if !refused::record(&inner.gate, context, calls, refusal.code, note).await {
                return Err(error(
                    api,
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    "the refusal could not be recorded",
                ));
            }
            Err(error(
                api,
                StatusCode::BAD_GATEWAY,
                refusal.code,
                &refusal.message,
            ))
        }
    }
}

/// Why a whole (not streamed) response is refused before the gate decides
/// it: its framing is not the one asked for (an event stream for a
/// request without `stream`, a JSON body for a streamed one: the SDK
/// could not read it), or it holds an item off the pass list. `parsed`:
/// the body's tree, if it parsed.
fn refused_before_deciding(
    inner: &Inner,
    api: Api,
    bytes: &[u8],
    parsed: Option<&ParsedBody<'_>>,
    streamed: bool,
    is_stream: bool,
) -> Option<rewrite::Refusal> {
    let root: Option<&Value<'_>> = parsed.map(ParsedBody::value);
    if streamed || is_stream || (root.is_none() && toolgate::sse::looks_like_sse(bytes)) {
        let message = if streamed {
            "the upstream answered a streamed request with a whole body"
        } else {
            "the upstream answered with an event stream to a request without `stream`"
        };
        return Some(rewrite::Refusal {
            code: "framing_mismatch",
            message: format!("toolgate refused the model's response: {message}"),
        });
    }
    rewrite::check_items(api, root?, inner.config.pass_through()).err()
}

/// Decides an envelope read from the parsed body, like [`decide`].
pub(super) async fn decide_envelope(
    inner: &Inner,
    envelope: &Envelope,
    context: Context,
    span: &RequestSpan,
) -> Option<Decisions> {
    let started = std::time::SystemTime::now();
    let decisions = inner
        .gate
        .decide_envelope_async(envelope, context)
        .await
        .ok()?;
    span.decisions("proxy", &decisions, started);
    Some(decisions)
}
