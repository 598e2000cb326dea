//! Sessions: one [`Proxy`](crate::Proxy) and its upstream connection each,
//! the requests waiting for their answers, and the streams they go back on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use tokio::io::{AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::mpsc;
use toolgate_json::{canonical, Object, Value};

use super::{
    find_session, json_response, not_found_session, note, plain, printable, rpc_error, Accept,
    HttpProxy, Inner, KEEP_ALIVE,
};
use crate::frame::{self, Line, RequestId};

/// One session: a [`Proxy`] and its upstream connection, the requests
/// waiting for their answers, and the session's own event stream.
pub(super) struct Session {
    pub(super) key: String,
    pub(super) user: String,
    pub(super) modern: bool,
    /// Lines into the proxy's client side.
    pub(super) input: tokio::sync::Mutex<DuplexStream>,
    pub(super) routes: Mutex<Routes>,
    pub(super) alive: AtomicBool,
    pub(super) tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// When it was last used.
    pub(super) used: Mutex<tokio::time::Instant>,
    /// Withdraws the held calls of the session's proxy when it ends.
    pub(super) canceller: crate::proxy::Canceller,
    /// Hands the proxy the trace headers of the POSTs that bring calls.
    pub(super) traces: crate::proxy::HttpTraces,
}

/// Where the proxy's messages for the client go.
#[derive(Default)]
pub(super) struct Routes {
    /// Requests waiting for their answer, by the id the proxy saw.
    waiters: HashMap<RequestId, Waiter>,
    /// Progress tokens of waiting requests.
    progress: HashMap<String, RequestId>,
    /// The `GET` stream.
    standalone: Option<mpsc::Sender<Routed>>,
}

pub(super) struct Waiter {
    tx: mpsc::Sender<Routed>,
    /// The client's own id, when the proxy saw another one (2026-07-28).
    original: Option<Value<'static>>,
    token: Option<String>,
}

/// A message for a client's stream; `last` ends a request's stream.
pub(super) struct Routed {
    line: String,
    last: bool,
}

impl Session {
    pub(super) fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long it has been unused at `now` (zero while a request waits or
    /// its stream is open).
    pub(super) fn idle_since(&self, now: tokio::time::Instant) -> Duration {
        let routes = self.routes();
        if !routes.waiters.is_empty() || routes.standalone.as_ref().is_some_and(|s| !s.is_closed())
        {
            return Duration::ZERO;
        }
        drop(routes);
        let used = *self.used.lock().unwrap_or_else(PoisonError::into_inner);
        now.saturating_duration_since(used)
    }

    /// Ends the session: its proxy, its upstream (a child is killed), its
    /// streams.
    pub(super) fn end(&self) {
        self.alive.store(false, Ordering::Relaxed);
        // Nobody will get the answers of its held calls: withdrawn.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let canceller = self.canceller.clone();
            runtime.spawn(async move { canceller.cancel_all("the session ended").await });
        }
        let mut routes = self.routes();
        routes.waiters.clear();
        routes.progress.clear();
        routes.standalone = None;
        drop(routes);
        for t in self
            .tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            t.abort();
        }
    }

    /// Writes one line into the proxy's client side.
    pub(super) async fn send(&self, line: &str) -> bool {
        if !self.alive.load(Ordering::Relaxed) {
            return false;
        }
        *self.used.lock().unwrap_or_else(PoisonError::into_inner) = tokio::time::Instant::now();
        let mut w = self.input.lock().await;
        w.write_all(line.as_bytes()).await.is_ok()
            && w.write_all(b"\n").await.is_ok()
            && w.flush().await.is_ok()
    }

    /// Sends a line of the proxy's where it belongs.
    pub(super) async fn route(&self, bytes: &[u8]) {
        let Ok(v) = toolgate_json::from_slice(bytes).map(Value::into_owned) else {
            return;
        };
        let o = v.as_object();
        let is_response = o.is_some_and(|o| {
            !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"))
        });
        let id = v.pointer("/id").and_then(RequestId::from_value);
        if is_response {
            let Some(id) = id else { return };
            let waiter = {
                let mut routes = self.routes();
                let w = routes.waiters.remove(&id);
                if let Some(t) = w.as_ref().and_then(|w| w.token.as_ref()) {
                    routes.progress.remove(t);
                }
                w
            };
            let Some(waiter) = waiter else {
                note(&format!("an answer nobody waits for was dropped (id {id})"));
                return;
            };
            let line = self.for_client(v, waiter.original.as_ref());
            let _ = waiter.tx.send(Routed { line, last: true }).await;
            return;
        }
        let line = String::from_utf8_lossy(bytes).into_owned();
        let method = v.pointer("/method").and_then(Value::as_str).unwrap_or("");
        let target = {
            let routes = self.routes();
            let by_token = if method == "notifications/progress" {
                v.pointer("/params/progressToken")
                    .map(canonical::to_string)
                    .and_then(|t| routes.progress.get(&t))
                    .and_then(|id| routes.waiters.get(id))
                    .map(|w| w.tx.clone())
            } else {
                None
            };
            by_token.or_else(|| routes.standalone.clone())
        };
        match target {
            Some(tx) => {
                let _ = tx.send(Routed { line, last: false }).await;
            }
            None => note(&format!(
                "a server message with no open stream was dropped ({})",
                printable(method)
            )),
        }
    }

    /// An answer as the client should see it: its own id back, and for a
    /// 2026-07-28 client a `resultType` on every result.
    pub(super) fn for_client(
        &self,
        v: Value<'static>,
        original: Option<&Value<'static>>,
    ) -> String {
        if original.is_none() && !self.modern {
            return canonical::to_string(&v);
        }
        let Some(mut o) = v.as_object().cloned() else {
            return canonical::to_string(&v);
        };
        if let Some(id) = original {
            o.insert("id", id.clone());
        }
        if self.modern {
            if let Some(Value::Object(result)) = o.get_mut("result") {
                if !result.contains_key("resultType") {
                    result.insert(
                        "resultType",
                        Value::String(std::borrow::Cow::Borrowed("complete")),
                    );
                }
                // A list from a session-era server: the 2026-07-28 caching
                // members it must carry (immediately stale, private).
                if result.contains_key("tools") && !result.contains_key("ttlMs") {
                    result.insert("ttlMs", Value::Number(toolgate_json::Number::from(0u64)));
                    result.insert(
                        "cacheScope",
                        Value::String(std::borrow::Cow::Borrowed("private")),
                    );
                }
            }
        }
        canonical::to_string(&Value::Object(o))
    }
}

/// Reads the proxy's output for the client and routes each message; when
/// the proxy ends (the upstream closed), the session ends.
pub(super) async fn dispatch(
    inner: Weak<Inner>,
    session: Weak<Session>,
    mut r: BufReader<DuplexStream>,
    max: usize,
) {
    loop {
        let bytes = match frame::read_line(&mut r, max).await {
            Ok(Some(Line::Frame(b))) => b,
            Ok(Some(Line::TooLong)) => continue,
            Ok(None) | Err(_) => break,
        };
        let Some(s) = session.upgrade() else { return };
        s.route(&bytes).await;
    }
    if let Some(s) = session.upgrade() {
        if let Some(inner) = inner.upgrade() {
            inner.lock_sessions().remove(&s.key);
        }
        // Said once the session is gone, so a reader of this line finds it
        // ended.
        note("the upstream closed: the session ends");
        s.alive.store(false, Ordering::Relaxed);
        let mut routes = s.routes();
        routes.waiters.clear();
        routes.standalone = None;
    }
}

/// Sends a request into the session and answers with its response: JSON,
/// or an event stream carrying its progress first.
pub(super) async fn exchange(
    p: &HttpProxy,
    session: &Arc<Session>,
    id: RequestId,
    original: Option<Value<'static>>,
    line: String,
    progress: Option<String>,
    accept: Accept,
) -> Response {
    let (tx, mut rx) = mpsc::channel::<Routed>(16);
    {
        let mut routes = session.routes();
        if routes.waiters.contains_key(&id) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                Some(&id),
                frame::INVALID_REQUEST,
                "refused by toolgate: duplicate_request_id",
            );
        }
        if let Some(t) = &progress {
            routes.progress.insert(t.clone(), id.clone());
        }
        routes.waiters.insert(
            id.clone(),
            Waiter {
                tx,
                original: original.clone(),
                token: progress.clone(),
            },
        );
    }
    let client_id = original
        .as_ref()
        .and_then(RequestId::from_value)
        .unwrap_or_else(|| id.clone());
    if !session.send(&line).await {
        forget(session, &id);
        return not_found_session();
    }
    let wait = p.inner.wait;
    if !accept.sse {
        // The client dropping its request (this future dropped with it)
        // cancels the request.
        let mut abandoned = Abandoned::new(session, &id);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let next = tokio::time::timeout_at(deadline, rx.recv()).await;
            abandoned.disarm_unless(matches!(next, Ok(Some(Routed { last: false, .. }))));
            match next {
                Ok(Some(Routed { line, last: true })) => {
                    return json_response(StatusCode::OK, line)
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    return rpc_error(
                        StatusCode::OK,
                        Some(&client_id),
                        frame::INTERNAL_ERROR,
                        "refused by toolgate: upstream_closed",
                    )
                }
                Err(_) => {
                    forget(session, &id);
                    return rpc_error(
                        StatusCode::OK,
                        Some(&client_id),
                        frame::INTERNAL_ERROR,
                        "refused by toolgate: upstream_timeout",
                    );
                }
            }
        }
    }
    let (mut body_tx, body) = http_body_util::channel::Channel::<Bytes, std::io::Error>::new(16);
    let (body, mut dropped) = Watched::new(body);
    let session = Arc::clone(session);
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // A comment every 15 s keeps intermediaries from closing the
            // stream; a client that went away is noticed at once (its
            // body is dropped) and its request cancelled.
            let beat = (tokio::time::Instant::now() + KEEP_ALIVE).min(deadline);
            let waited = tokio::select! {
                _ = &mut dropped => {
                    gone(&session, &id).await;
                    return;
                }
                waited = tokio::time::timeout_at(beat, rx.recv()) => waited,
            };
            let next = match waited {
                Err(_) if tokio::time::Instant::now() < deadline => {
                    if body_tx
                        .send_data(Bytes::from_static(b": keep-alive\n\n"))
                        .await
                        .is_err()
                    {
                        gone(&session, &id).await;
                        return;
                    }
                    continue;
                }
                other => other,
            };
            let (line, last) = match next {
                Ok(Some(Routed { line, last })) => (line, last),
                Ok(None) => (
                    frame::error_answer(
                        Some(&client_id),
                        frame::INTERNAL_ERROR,
                        "refused by toolgate: upstream_closed",
                    ),
                    true,
                ),
                Err(_) => {
                    forget(&session, &id);
                    (
                        frame::error_answer(
                            Some(&client_id),
                            frame::INTERNAL_ERROR,
                            "refused by toolgate: upstream_timeout",
                        ),
                        true,
                    )
                }
            };
            if body_tx.send_data(sse_event(&line)).await.is_err() {
                gone(&session, &id).await;
                return;
            }
            if last {
                return;
            }
        }
    });
    sse_response(body)
}

/// A response body that says when it is dropped (the client went away).
pub(super) struct Watched {
    inner: http_body_util::channel::Channel<Bytes, std::io::Error>,
    _dropped: tokio::sync::oneshot::Sender<()>,
}

impl Watched {
    /// `inner`, and what completes once the body is dropped.
    pub(super) fn new(
        inner: http_body_util::channel::Channel<Bytes, std::io::Error>,
    ) -> (Self, tokio::sync::oneshot::Receiver<()>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (
            Self {
                inner,
                _dropped: tx,
            },
            rx,
        )
    }
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }
}

/// Cancels a request whose exchange is dropped before its answer (the
/// client dropped its HTTP request) unless disarmed.
struct Abandoned {
    session: Arc<Session>,
    id: RequestId,
    armed: bool,
}

impl Abandoned {
    fn new(session: &Arc<Session>, id: &RequestId) -> Self {
        Self {
            session: Arc::clone(session),
            id: id.clone(),
            armed: true,
        }
    }

    /// Disarmed unless `keep` (the request is still waiting).
    fn disarm_unless(&mut self, keep: bool) {
        self.armed &= keep;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        // Not when the runtime itself is going away (nothing to tell).
        if let (true, Ok(runtime)) = (self.armed, tokio::runtime::Handle::try_current()) {
            let session = Arc::clone(&self.session);
            let id = self.id.clone();
            runtime.spawn(async move { gone(&session, &id).await });
        }
    }
}

/// A client closed a request's stream or dropped its request: its answer
/// is not waited for, and the request is cancelled (`notifications/
/// cancelled` into the session's proxy: a call not forwarded yet is
/// withdrawn there, one forwarded is cancelled upstream). No transport of
/// this endpoint resumes a request's stream, so its answer could never be
/// delivered.
pub(super) async fn gone(session: &Session, id: &RequestId) {
    forget(session, id);
    let mut params = Object::new();
    params.insert("requestId", id.to_value());
    params.insert(
        "reason",
        Value::String(std::borrow::Cow::Borrowed("the client closed its stream")),
    );
    let mut o = Object::new();
    o.insert("jsonrpc", Value::String(std::borrow::Cow::Borrowed("2.0")));
    o.insert(
        "method",
        Value::String(std::borrow::Cow::Borrowed("notifications/cancelled")),
    );
    o.insert("params", Value::Object(params));
    let _ = session.send(&canonical::to_string(&Value::Object(o))).await;
}

/// Forgets a request's waiter.
pub(super) fn forget(session: &Session, id: &RequestId) {
    let mut routes = session.routes();
    if let Some(w) = routes.waiters.remove(id) {
        if let Some(t) = w.token {
            routes.progress.remove(&t);
        }
    }
}

/// `GET /mcp`: the session's stream of the server's other messages.
pub(super) async fn get_stream(
    State(p): State<HttpProxy>,
    extensions: axum::http::Extensions,
    headers: HeaderMap,
) -> Response {
    let inner = &p.inner;
    let token = match inner.admit(&headers, &extensions).await {
        Ok(t) => t,
        Err(r) => return *r,
    };
    let Some(sid) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        let mut r = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "GET needs an Mcp-Session-Id (2026-07-28 has no GET stream)",
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST, GET, DELETE"));
        return r;
    };
    let Some(session) = find_session(&p, &token, sid) else {
        return not_found_session();
    };
    if !Accept::of(&headers).sse {
        return plain(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must allow text/event-stream",
        );
    }
    let (tx, mut rx) = mpsc::channel::<Routed>(64);
    {
        let mut routes = session.routes();
        if routes.standalone.as_ref().is_some_and(|s| !s.is_closed()) {
            return plain(StatusCode::CONFLICT, "the session's stream is open already");
        }
        routes.standalone = Some(tx);
    }
    let (mut body_tx, body) = http_body_util::channel::Channel::<Bytes, std::io::Error>::new(16);
    tokio::spawn(async move {
        loop {
            let next = tokio::time::timeout(Duration::from_secs(15), rx.recv()).await;
            let chunk = match next {
                Ok(Some(Routed { line, .. })) => sse_event(&line),
                Ok(None) => return,
                Err(_) => Bytes::from_static(b": keep-alive\n\n"),
            };
            if body_tx.send_data(chunk).await.is_err() {
                return;
            }
        }
    });
    sse_response(body)
}

pub(super) fn sse_event(line: &str) -> Bytes {
    Bytes::from(format!("event: message\ndata: {line}\n\n"))
}

pub(super) fn sse_response(
    body: impl http_body::Body<Data = Bytes, Error = std::io::Error> + Send + 'static,
) -> Response {
    toolgate_edge::event_stream(body)
}
