//! The model API behind the proxy: an HTTP/1.1 client (TLS with the Web PKI
//! roots for `https://` upstreams), and which request headers go on.

use axum::http::{header, HeaderMap};

/// The client every upstream request goes through (the edge's).
pub type UpstreamClient = toolgate_edge::outbound::UpstreamClient;

/// A client for `http://` and `https://` upstreams.
pub fn client() -> UpstreamClient {
    toolgate_edge::outbound::upstream_client()
}

/// Headers that never go on: hop-by-hop headers, the ones the client
/// recomputes, and `accept-encoding` (the proxy must read the body).
const DROPPED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
];

/// The request headers the upstream receives: the caller's (its API key
/// included) but for [`DROPPED`] and toolgate's own (`own`: the token,
/// session and user headers).
pub fn forwarded_headers(headers: &HeaderMap, own: &[&str]) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in headers {
        let n = name.as_str();
        if DROPPED.contains(&n) || own.contains(&n) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// The response headers the caller receives with a body passed on as the
/// upstream sent it (a forwarded route, an upstream error): its type and
/// encoding, and the allowlisted headers ([`crate::headers`]).
pub fn returned_headers(headers: &HeaderMap) -> HeaderMap {
    let mut out = crate::headers::passed_on(headers);
    for name in [header::CONTENT_TYPE, header::CONTENT_ENCODING] {
        if let Some(v) = headers.get(&name) {
            out.insert(name, v.clone());
        }
    }
    out
}
