//! The one form of a server-sent-events answer every front end streams
//! (the API proxy's rewritten stream, the MCP endpoint's session stream):
//! `text/event-stream`, never cached, never buffered by a reverse proxy on
//! the way.

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::Response;
use bytes::Bytes;

/// A `200` answer streaming `body` as server-sent events: `Content-Type:
/// text/event-stream`, `Cache-Control: no-cache` and `X-Accel-Buffering:
/// no` (so that nginx and its kin pass each event on as it comes).
pub fn event_stream(
    body: impl http_body::Body<Data = Bytes, Error = std::io::Error> + Send + 'static,
) -> Response {
    let mut r = Response::new(Body::new(body));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    r
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt as _;

    use super::*;

    #[test]
    fn an_event_stream_is_neither_cached_nor_buffered() {
        let body = http_body_util::Full::new(Bytes::from_static(b"data: x\n\n"))
            .map_err(|never| -> std::io::Error { match never {} });
        let r = event_stream(body);
        assert_eq!(r.status(), 200);
        let h = r.headers();
        assert_eq!(h[header::CONTENT_TYPE], "text/event-stream");
        assert_eq!(h[header::CACHE_CONTROL], "no-cache");
        assert_eq!(h["x-accel-buffering"], "no");
    }
}
