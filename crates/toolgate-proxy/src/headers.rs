//! The upstream's response headers an SDK reads, passed on to the caller
//! on every route: an allowlist, never the upstream's whole header set.
//!
//! | header | read by |
//! |---|---|
//! | `x-request-id` | `openai`: `response._request_id` |
//! | `request-id` | `anthropic`: `message._request_id` |
//! | `openai-processing-ms`, `openai-version`, `openai-organization`, `openai-project` | OpenAI's own metadata |
//! | `anthropic-organization-id` | Anthropic's own metadata |
//! | `x-ratelimit-*`, `anthropic-ratelimit-*` | rate-limit state |
//! | `retry-after`, `retry-after-ms`, `x-should-retry` | the SDKs' retry logic |
//!
//! A value passes only as visible ASCII (and spaces) of at most
//! [`MAX_VALUE_BYTES`], and at most [`MAX_HEADERS`] headers pass.
//!
//! The gated routes' handlers run inside [`scoped`]: the upstream request
//! ([`record`]) notes the upstream's headers, the request rewrite notes
//! what it found about the request ([`note_request_findings`]: the
//! `x-toolgate-request-findings` header) and the outputs it supplied
//! ([`note_supplied`]: `x-toolgate-supplied-outputs`), and whatever response the
//! handler builds (rewritten, refused, or a stream) leaves with them.

use std::cell::RefCell;
use std::future::Future;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::Response;

use crate::request::RequestReport;

/// Headers passed by name.
const EXACT: &[&str] = &[
    "x-request-id",
    "request-id",
    "openai-processing-ms",
    "openai-version",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
];

/// Headers passed by prefix.
const PREFIXES: &[&str] = &["x-ratelimit-", "anthropic-ratelimit-"];

/// The longest value passed on.
pub const MAX_VALUE_BYTES: usize = 256;
/// The most headers passed on from one response.
pub const MAX_HEADERS: usize = 32;

/// Whether the upstream header `name` (lower-case) is passed on.
pub fn passes(name: &str) -> bool {
    EXACT.contains(&name)
        || PREFIXES
            .iter()
            .any(|p| name.starts_with(p) && name.len() > p.len())
}

/// The allowlisted headers of `upstream`.
pub fn passed_on(upstream: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in upstream {
        if out.len() >= MAX_HEADERS {
            break;
        }
        let clean = value.len() <= MAX_VALUE_BYTES
            && value.as_bytes().iter().all(|b| (0x20..0x7f).contains(b));
        if clean && passes(name.as_str()) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

tokio::task_local! {
    static UPSTREAM: RefCell<Option<HeaderMap>>;
}

/// Notes the upstream response's headers for the handler running in
/// [`scoped`] (nothing outside it).
pub fn record(upstream: &HeaderMap) {
    let _outside = UPSTREAM.try_with(|slot| {
        let mut slot = slot.borrow_mut();
        let h = slot.get_or_insert_with(HeaderMap::new);
        for (name, value) in &passed_on(upstream) {
            h.insert(name.clone(), value.clone());
        }
    });
}

/// Notes what the request rewrite found about the request itself, for the
/// `x-toolgate-request-findings` header of the handler's response:
/// comma-separated `code=subject` entries (`offered_schema_differs=refund`,
/// `deepseek_reasoning_missing=/messages/3`), at most 2 KiB.
pub fn note_request_findings(report: &RequestReport) {
    let mut entries: Vec<String> = report
        .offered
        .iter()
        .map(|o| format!("offered_schema_differs={}", o.tool))
        .collect();
    entries.extend(report.notes.iter().map(|n| format!("{}={}", n.code, n.at)));
    note_list("x-toolgate-request-findings", &entries);
}

/// Notes the calls whose outputs the proxy supplied to a continued
/// conversation, for the `x-toolgate-supplied-outputs` header
/// (comma-separated call ids).
pub fn note_supplied(call_ids: &[String]) {
    note_list("x-toolgate-supplied-outputs", call_ids);
}

/// Notes a header of comma-separated entries (visible ASCII, no commas
/// inside an entry, at most 2 KiB: entries past it are left out).
fn note_list(name: &'static str, entries: &[String]) {
    let mut value = String::new();
    for e in entries {
        let e: String = e
            .chars()
            .filter(|c| c.is_ascii_graphic() && *c != ',')
            .collect();
        if value.len() + e.len() + 1 > 2048 {
            break;
        }
        if !value.is_empty() {
            value.push(',');
        }
        value.push_str(&e);
    }
    if value.is_empty() {
        return;
    }
    let Ok(v) = HeaderValue::from_str(&value) else {
        return;
    };
    let _outside = UPSTREAM.try_with(|slot| {
        slot.borrow_mut()
            .get_or_insert_with(HeaderMap::new)
            .insert(name, v);
    });
}

/// Runs a handler; its response carries the allowlisted headers of the
/// upstream response it was built from, if any.
pub async fn scoped(handler: impl Future<Output = Response>) -> Response {
    UPSTREAM
        .scope(RefCell::new(None), async move {
            let mut r = handler.await;
            let noted = UPSTREAM.with(|slot| slot.borrow_mut().take());
            if let Some(h) = noted {
                for (name, value) in &h {
                    let name: HeaderName = name.clone();
                    r.headers_mut().insert(name, value.clone());
                }
            }
            r
        })
        .await
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "test code")]
mod tests {
    use super::*;

    #[test]
    fn only_the_allowlist_passes() {
        let mut h = HeaderMap::new();
        for (n, v) in [
            ("x-request-id", "req_1"),
            ("request-id", "req_2"),
            ("x-ratelimit-remaining-requests", "99"),
            ("anthropic-ratelimit-tokens-remaining", "1000"),
            ("retry-after", "3"),
            ("set-cookie", "s=1"),
            ("server", "upstream/1.2"),
            ("x-ratelimit-", "bare prefix"),
            ("x-internal-host", "10.0.0.7"),
        ] {
            h.insert(HeaderName::from_static(n), HeaderValue::from_static(v));
        }
        h.insert(
            "openai-processing-ms",
            HeaderValue::from_str(&"9".repeat(MAX_VALUE_BYTES + 1)).unwrap(),
        );
        let out = passed_on(&h);
        let mut names: Vec<&str> = out.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "anthropic-ratelimit-tokens-remaining",
                "request-id",
                "retry-after",
                "x-ratelimit-remaining-requests",
                "x-request-id"
            ]
        );
    }

    #[test]
    fn at_most_max_headers_pass() {
        let mut h = HeaderMap::new();
        for i in 0..100 {
            h.insert(
                HeaderName::from_bytes(format!("x-ratelimit-n{i}").as_bytes()).unwrap(),
                HeaderValue::from_static("1"),
            );
        }
        assert_eq!(passed_on(&h).len(), MAX_HEADERS);
    }
}
