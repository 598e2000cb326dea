//! A streamed answer: the upstream's events read, what may pass sent on,
//! and the whole stream decided at its end (or at a break).

#[allow(
    clippy::wildcard_imports,
    reason = "the parent's routes and their helpers"
)]
use super::*;

/// A streamed response: read, rewritten and sent on by a task of its own.
pub(super) fn stream_response(
    p: Proxy,
    api: Api,
    body: hyper::body::Incoming,
    context: Context,
    span: RequestSpan,
) -> Response {
    let (tx, rx) = http_body_util::channel::Channel::<Bytes, std::io::Error>::new(16);
    tokio::spawn(pump(p, api, body, context, tx, span));
    toolgate_edge::event_stream(rx)
}

/// Reads the upstream stream, sends on what may pass, and at the end (or
/// at a break) decides the whole stream as received.
async fn pump(
    p: Proxy,
    api: Api,
    mut body: hyper::body::Incoming,
    context: Context,
    mut tx: http_body_util::channel::Sender<Bytes, std::io::Error>,
    span: RequestSpan,
) {
    let inner = &p.inner;
    let mut reader = SseReader::new(inner.max_response_bytes);
    let mut rewriter = Rewriter::new(api, inner.config.pass_through());
    let mut raw: Vec<u8> = Vec::new();
    let deadline = tokio::time::Instant::now() + inner.config.upstream_timeout();
    let idle = inner.config.idle_timeout();
    let mut client_gone = false;
    // Whether the rewriter itself refused the stream (an item off the pass
    // list, a chunk it could not read, a final output that differs): then
    // the gate does not decide it, and its calls are recorded as refused.
    let mut refused_here = false;
    let broken: Option<&'static str> = 'read: loop {
        let next = tokio::time::Instant::now() + idle;
        let frame = match tokio::time::timeout_at(next.min(deadline), body.frame()).await {
            Err(_) => break 'read Some("the upstream went silent"),
            Ok(None) => {
                break 'read (!rewriter.ended())
                    .then_some("the stream ended before its terminal event")
            }
            Ok(Some(Err(_))) => break 'read Some("the upstream's stream broke off"),
            Ok(Some(Ok(f))) => f,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        raw.extend_from_slice(&data);
        let events = match reader.push(&data) {
            Ok(e) => e,
            Err(SseError::TooLarge) => break 'read Some("the stream is too large"),
            Err(SseError::NotUtf8) => break 'read Some("the stream is not UTF-8"),
        };
        for e in &events {
            match rewriter.event(e) {
                Ok(Step::Emit(text)) => {
                    if !text.is_empty() && tx.send_data(Bytes::from(text)).await.is_err() {
                        client_gone = true;
                        break 'read Some("the client went away");
                    }
                }
                Ok(Step::End) => {}
                Err(Broken(why)) => {
                    refused_here = true;
                    break 'read Some(why);
                }
            }
        }
        if rewriter.ended() {
            break 'read None;
        }
    };
    // Every call of the stream is decided and audited, whole or broken: a
    // broken one is read by the gate as cut off, and so denied; one the
    // proxy refuses (here or because the gate could not read it) is
    // recorded call by call as refused.
    let held = refused::held(rewriter.held_calls());
    // The stream read once: the envelope the gate decides is the one the
    // rewriter's closing pairs the calls with. One the adapter cannot
    // read is decided from its text, which refuses it as it would.
    let read = (!refused_here).then(|| inner.adapter.read(&raw, api.format()));
    let decisions = match &read {
        None => None,
        Some(Ok(envelope)) => whole::decide_envelope(inner, envelope, context.clone(), &span).await,
        Some(Err(_)) => decide(inner, raw.clone(), api.format(), context.clone(), &span).await,
    };
    if let (Api::Responses, Some(d)) = (api, &decisions) {
        inner.continuations.note_stream(&context.user, &raw, d);
    }
    let unrecorded = broken.is_none() && decisions.is_none();
    let outcome: Result<String, (&'static str, String)> = match (broken, decisions) {
        (Some(why), _) if refused_here => Err(("stream_refused", why.to_owned())),
        (Some(why), Some(d)) if d.rejected().is_none() => Ok(api.error_event(
            "stream_refused",
            &format!("{why}; no call of this response was released"),
        )),
        (Some(why), _) => Err(("stream_refused", why.to_owned())),
        (None, None) => {
            Ok(api.error_event("store_unavailable", "the decision could not be recorded"))
        }
        (None, Some(d)) => match read {
            Some(Ok(envelope)) => match rewrite::refusal(&d, inner.config.on_deny()) {
                Some(r) if r.code == "response_refused" => Err((r.code, r.message)),
                Some(r) => Ok(api.error_event(r.code, &r.message)),
                None => rewriter
                    .finish(&envelope, &d)
                    .map_err(|Broken(why)| ("response_refused", why.to_owned())),
            },
            _ => Err((
                "response_refused",
                "toolgate refused the model's response".to_owned(),
            )),
        },
    };
    // The answer went out as 200 before this: a stream that ends in an
    // error event marks the request's span failed, as a 5xx would.
    let failed = match (&outcome, broken) {
        (Err((code, _)), _) => Some(*code),
        (Ok(_), Some(_)) => Some("stream_refused"),
        (Ok(_), None) if unrecorded => Some("store_unavailable"),
        (Ok(_), None) => None,
    };
    if let Some(code) = failed {
        span.failed(code);
    }
    let closing = match outcome {
        Ok(text) => text,
        Err((code, why)) => {
            let note = format!("proxy stream {}: {why}", api.path());
            let recorded = refused::record(&inner.gate, &context, held, code, note).await;
            if recorded {
                api.error_event(
                    code,
                    &format!("{why}; no call of this response was released"),
                )
            } else {
                api.error_event("store_unavailable", "the refusal could not be recorded")
            }
        }
    };
    // The request's span ends before the client sees the stream end.
    drop(span);
    if !client_gone {
        let _ignored = tx.send_data(Bytes::from(closing)).await;
    }
}
