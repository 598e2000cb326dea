//! Delivering one notice to one sink: a POST per attempt under the sink's
//! deadline, at most `max_attempts`, with doubling pauses between them.
//! A `2xx` answer delivers it (its body is never read: a sink's answer
//! decides nothing); a redirect is not followed and a `4xx` is final (the
//! sink refused it); a `5xx`, `408`, `429`, a connection error or a
//! deadline is tried again. Each outcome is recorded in the store.

use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use toolgate::config::{NotifyKind, NotifySink};
use toolgate_edge::{Outbound, OutboundError};

use super::sign;

/// The client every notice goes through: the edge's one outbound client
/// (each attempt takes its sink's deadline).
pub(crate) type NoticeClient = Outbound;

/// A client for `http://` and `https://` sinks (web PKI roots).
pub(crate) fn client() -> NoticeClient {
    Outbound::new()
}

/// The first pause between attempts; each next one doubles, up to
/// [`MAX_PAUSE`].
pub(crate) const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between attempts.
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(30);

/// How one attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// `2xx`: delivered.
    Delivered(String),
    /// Refused for good (a redirect, a `4xx`, a request that cannot be
    /// built): not tried again.
    Final(String),
    /// Worth trying again (`5xx`, `408`, `429`, no connection, deadline).
    Again(String),
}

/// What an answer's status makes of an attempt.
pub(crate) fn classify(status: u16) -> Attempt {
    let s = status.to_string();
    match status {
        200..=299 => Attempt::Delivered(s),
        300..=399 => Attempt::Final(format!("redirect {s} not followed")),
        408 | 429 | 500..=599 => Attempt::Again(s),
        _ => Attempt::Final(s),
    }
}

/// The pause before attempt `n + 1` (after `n` failed ones, `n >= 1`).
pub(crate) fn pause(n: u32) -> Duration {
    FIRST_PAUSE
        .saturating_mul(1u32 << n.saturating_sub(1).min(16))
        .min(MAX_PAUSE)
}

/// One POST of `body` to `sink` at Unix second `now_secs`, under its
/// deadline; `delivery` names the notice (`APPROVAL-SINK`) so a receiver
/// can drop repeats.
pub(crate) async fn attempt(
    client: &NoticeClient,
    sink: &NotifySink,
    body: &str,
    delivery: &str,
    now_secs: u64,
) -> Attempt {
    let mut req = hyper::Request::post(sink.url())
        .header("content-type", "application/json")
        .header("user-agent", "toolgate-notify/1")
        .header("x-toolgate-delivery", delivery);
    if sink.kind() == NotifyKind::Webhook {
        let Some(key) = sink.secret() else {
            return Attempt::Final("no key to sign with".to_owned());
        };
        let Some(signature) = sign::signature(key, now_secs, body.as_bytes()) else {
            return Attempt::Final("cannot sign with the key".to_owned());
        };
        req = req
            .header(sign::TIMESTAMP_HEADER, now_secs.to_string())
            .header(sign::SIGNATURE_HEADER, signature);
    }
    let Ok(req) = req.body(Full::new(Bytes::from(body.to_owned()))) else {
        return Attempt::Final("the request cannot be built".to_owned());
    };
    // The body is dropped unread: a sink's answer decides nothing. The
    // error's text never names the URL (a secret).
    match client.with_deadline(sink.timeout()).status(req).await {
        Ok(status) => classify(status.as_u16()),
        Err(OutboundError::Redirect(s)) => classify(s),
        Err(e) if e.is_transient() => Attempt::Again(e.to_string()),
        Err(e) => Attempt::Final(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_delivered_final_or_tried_again() {
        assert_eq!(classify(204), Attempt::Delivered("204".into()));
        assert_eq!(
            classify(302),
            Attempt::Final("redirect 302 not followed".into())
        );
        assert_eq!(classify(401), Attempt::Final("401".into()));
        for again in [408, 429, 500, 503] {
            assert!(matches!(classify(again), Attempt::Again(_)), "{again}");
        }
        assert_eq!(pause(1), FIRST_PAUSE);
        assert_eq!(pause(2), FIRST_PAUSE * 2);
        assert_eq!(pause(40), MAX_PAUSE);
    }
}
