//! The server side of an HTTP session: a connection to one upstream MCP
//! server that looks, to the [`Proxy`](crate::Proxy), like a stdio server
//! (lines in, lines out).
//!
//! - `command` upstreams are started as stdio children (one per session),
//!   with only the environment variables the config names.
//! - `url` upstreams are reached over streamable HTTP: each line the proxy
//!   writes is POSTed (with the upstream's own `Mcp-Session-Id` once its
//!   `initialize` gave one, `MCP-Protocol-Version`, and for 2026-07-28
//!   requests the `Mcp-Method`/`Mcp-Name` headers mirroring the body), and
//!   what comes back, one JSON object or an event stream, becomes lines for
//!   the proxy's server pump, which reads each strictly like a stdio
//!   server's. A frame the upstream answers with an HTTP error becomes a
//!   JSON-RPC error for its request.
//! - with a prefix (`namespace = true` or `prefix`), the upstream's tool
//!   names are shown (and registered) as `PREFIX` + name: a `tools/list`
//!   result is renamed on its way in, a `tools/call` on its way out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::mpsc;
use toolgate_edge::config::{McpUpstream, UpstreamTarget};
use toolgate_json::{canonical, Object, ParseOptions, Value};

use crate::frame::{self, Line, RequestId};

#[cfg(test)]
mod line_endings;
mod mux;

pub(crate) use mux::ROUTE_META;
use mux::{Mux, MuxState};

/// A connection to an upstream server, as a stdio server's two streams.
pub(crate) struct Link {
    /// What the server says, line by line.
    pub(crate) output: Box<dyn AsyncBufRead + Unpin + Send>,
    /// What the server is told, line by line.
    pub(crate) input: Box<dyn AsyncWrite + Unpin + Send>,
    /// Keeps the child (killed when dropped) or the bridge tasks alive.
    pub(crate) guard: Guard,
}

/// What a link holds on to: the child (killed when dropped) and the
/// bridge's tasks (aborted when dropped).
pub(crate) struct Guard {
    _child: Option<tokio::process::Child>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Guard {
    /// A guard of tasks alone.
    pub(crate) fn tasks(tasks: Vec<tokio::task::JoinHandle<()>>) -> Self {
        Self {
            _child: None,
            tasks,
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The client every `url` upstream is reached with (the edge's).
pub(crate) type HttpClient = toolgate_edge::outbound::UpstreamClient;

/// A client for `http://` and `https://` upstreams (TLS with the Web PKI
/// roots).
pub(crate) fn http_client() -> HttpClient {
    toolgate_edge::outbound::upstream_client()
}

/// Connects to `upstream`: starts its command, or opens the bridge to its
/// URL. Lines longer than `max_frame_bytes` from the upstream are dropped
/// here as the stdio pump would.
pub(crate) fn connect(
    upstream: &McpUpstream,
    client: &HttpClient,
    max_frame_bytes: usize,
    modern: bool,
) -> std::io::Result<Link> {
    let (output, input, guard): (
        Box<dyn AsyncBufRead + Unpin + Send>,
        Box<dyn AsyncWrite + Unpin + Send>,
        Guard,
    ) = match upstream.target() {
        UpstreamTarget::Command { program, args, env } => {
            let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
            let mut child = crate::proxy::spawn_server(&program.into(), &args, env)?;
            let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take())
            else {
                return Err(std::io::Error::other(
                    "cannot connect to the server's standard input and output",
                ));
            };
            (
                Box::new(BufReader::new(child_out)),
                Box::new(child_in),
                Guard {
                    _child: Some(child),
                    tasks: Vec::new(),
                },
            )
        }
        UpstreamTarget::Url(url) => {
            let uri: hyper::Uri = url
                .parse()
                .map_err(|_| std::io::Error::other("the upstream URL cannot be parsed"))?;
            let (proxy_side_in, bridge_in) = tokio::io::duplex(64 << 10);
            let (bridge_out, proxy_side_out) = tokio::io::duplex(64 << 10);
            let bridge = Bridge {
                client: client.clone(),
                uri,
                max_frame_bytes,
                state: Arc::new(Mutex::new(BridgeState::default())),
            };
            let task = tokio::spawn(bridge.run(BufReader::new(bridge_in), bridge_out));
            (
                Box::new(BufReader::new(proxy_side_out)),
                Box::new(proxy_side_in),
                Guard {
                    _child: None,
                    tasks: vec![task],
                },
            )
        }
        _ => {
            return Err(std::io::Error::other(
                "this kind of upstream is not supported",
            ))
        }
    };
    let mut link = Link {
        output,
        input,
        guard,
    };
    link = if modern {
        // A stateless client: the upstream's era is found out first.
        crate::era::for_modern_client(link, max_frame_bytes)
    } else {
        crate::era::for_legacy_client(link, max_frame_bytes)
    };
    if upstream.prefix().is_empty() {
        return Ok(link);
    }
    let Link {
        output,
        input,
        mut guard,
    } = link;
    // The renaming sits between the proxy and the connection.
    let (proxy_in, rename_in) = tokio::io::duplex(64 << 10);
    let (rename_out, proxy_out) = tokio::io::duplex(64 << 10);
    let names = Arc::new(Renamer {
        prefix: upstream.prefix().to_owned(),
        lists: Mutex::new(Vec::new()),
        parse: frame::parse_options(max_frame_bytes),
        max_frame_bytes,
    });
    let (tx, rx) = mpsc::channel::<Option<String>>(64);
    let writer = tokio::spawn(write_all(rx, rename_out));
    let outward =
        tokio::spawn(Arc::clone(&names).outward(BufReader::new(rename_in), input, tx.clone()));
    let inward = tokio::spawn(names.inward(output, tx));
    guard.tasks.extend([writer, outward, inward]);
    Ok(Link {
        output: Box::new(BufReader::new(proxy_out)),
        input: Box::new(proxy_in),
        guard,
    })
}

/// Connects to every upstream: one is the link itself; several are joined
/// by a [`Mux`] into one server for the proxy.
pub(crate) fn connect_all(
    upstreams: &[McpUpstream],
    client: &HttpClient,
    max_frame_bytes: usize,
    modern: bool,
) -> std::io::Result<Link> {
    if let [one] = upstreams {
        return connect(one, client, max_frame_bytes, modern);
    }
    let mut links = Vec::new();
    for u in upstreams {
        links.push(connect(u, client, max_frame_bytes, modern)?);
    }
    let (proxy_in, mux_in) = tokio::io::duplex(64 << 10);
    let (mux_out, proxy_out) = tokio::io::duplex(64 << 10);
    let (tx, rx) = mpsc::channel::<Option<String>>(64);
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut guards = Vec::new();
    for link in links {
        inputs.push(tokio::sync::Mutex::new(link.input));
        outputs.push(link.output);
        guards.push(link.guard);
    }
    let mux = Arc::new(Mux {
        parse: frame::parse_options(max_frame_bytes),
        max_frame_bytes,
        inputs,
        prefixes: upstreams.iter().map(|u| u.prefix().to_owned()).collect(),
        names: upstreams.iter().map(|u| u.name().to_owned()).collect(),
        state: Mutex::new(MuxState::default()),
        out: tx,
    });
    let mut tasks = vec![
        tokio::spawn(write_all(rx, mux_out)),
        tokio::spawn(Arc::clone(&mux).outward(BufReader::new(mux_in))),
    ];
    for (i, output) in outputs.into_iter().enumerate() {
        tasks.push(tokio::spawn(Arc::clone(&mux).inward(i, output)));
    }
    let mut guard = Guard {
        _child: None,
        tasks,
    };
    // The upstreams' own guards live inside a task that never ends (it is
    // aborted with the others).
    guard.tasks.push(tokio::spawn(async move {
        let _guards = guards;
        std::future::pending::<()>().await;
    }));
    Ok(Link {
        output: Box::new(BufReader::new(proxy_out)),
        input: Box::new(proxy_in),
        guard,
    })
}

/// Writes the lines of `rx` until `None` or its end; then shuts down.
async fn write_all<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<Option<String>>, mut w: W) {
    while let Some(Some(line)) = rx.recv().await {
        if write_line(&mut w, &line).await.is_err() {
            break;
        }
    }
    let _ = w.shutdown().await;
}

/// A line on standard error.
fn writeln_stderr(text: &str) -> std::io::Result<()> {
    toolgate_edge::log::line(
        toolgate_edge::log::Level::Info,
        "mcp",
        "upstream_stderr",
        text,
    );
    Ok(())
}

/// Renames tools between the proxy (prefixed names) and the upstream (its
/// own names).
struct Renamer {
    prefix: String,
    /// Ids of the `tools/list` requests on their way.
    lists: Mutex<Vec<RequestId>>,
    parse: ParseOptions,
    max_frame_bytes: usize,
}

impl Renamer {
    /// Proxy → upstream: a `tools/call` loses the prefix (the proxy only
    /// forwards calls of registered, prefixed tools); a `tools/list`'s id is
    /// noted.
    async fn outward<R, W>(
        self: Arc<Self>,
        mut r: R,
        mut w: W,
        to_proxy: mpsc::Sender<Option<String>>,
    ) where
        R: AsyncBufRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        while let Ok(Some(Line::Frame(bytes))) =
            frame::read_line(&mut r, self.max_frame_bytes).await
        {
            let line = match self.parse.parse(&bytes) {
                Ok(v) => {
                    let v = v.into_owned();
                    if let Some(refusal) = self.unprefixed_call(&v) {
                        // A call of a name this upstream does not serve:
                        // answered here, never sent under another name.
                        let _ = to_proxy.send(Some(refusal)).await;
                        continue;
                    }
                    self.outward_frame(v)
                }
                Err(_) => None,
            };
            let line = line.unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
            if write_line(&mut w, &line).await.is_err() {
                break;
            }
        }
        let _ = w.shutdown().await;
    }

    /// The error answer to a `tools/call` whose name lacks the prefix.
    fn unprefixed_call(&self, v: &Value<'static>) -> Option<String> {
        if v.pointer("/method").and_then(Value::as_str) != Some("tools/call") {
            return None;
        }
        let id = v.pointer("/id").and_then(RequestId::from_value)?;
        let name = v
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if name.starts_with(self.prefix.as_str()) {
            return None;
        }
        Some(frame::error_answer(
            Some(&id),
            frame::INVALID_PARAMS,
            "refused by toolgate: unknown_upstream_tool",
        ))
    }

    fn outward_frame(&self, v: Value<'static>) -> Option<String> {
        let method = v.pointer("/method").and_then(Value::as_str)?;
        if method == "tools/list" {
            if let Some(id) = v.pointer("/id").and_then(RequestId::from_value) {
                self.lists
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(id);
            }
            return None;
        }
        if method != "tools/call" {
            return None;
        }
        let name = v.pointer("/params/name").and_then(Value::as_str)?;
        let bare = name.strip_prefix(self.prefix.as_str())?.to_owned();
        let mut o = v.as_object()?.clone();
        let mut params: Object<'static> = o.get("params")?.as_object()?.clone();
        params.insert("name", Value::String(std::borrow::Cow::Owned(bare)));
        o.insert("params", Value::Object(params));
        Some(canonical::to_string(&Value::Object(o)))
    }

    /// Upstream → proxy: the tools of a `tools/list` result get the prefix.
    async fn inward<R>(self: Arc<Self>, mut r: R, to_proxy: mpsc::Sender<Option<String>>)
    where
        R: AsyncBufRead + Unpin,
    {
        while let Ok(Some(line)) = frame::read_line(&mut r, self.max_frame_bytes).await {
            let Line::Frame(bytes) = line else {
                // Too long: the proxy would drop it too.
                continue;
            };
            let renamed = match self.parse.parse(&bytes) {
                Ok(v) => self.inward_frame(v.into_owned()),
                Err(_) => None,
            };
            let line = renamed.unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
            if to_proxy.send(Some(line)).await.is_err() {
                break;
            }
        }
        // The upstream's end is the end of this server for the proxy.
        let _ = to_proxy.send(None).await;
    }

    fn inward_frame(&self, v: Value<'static>) -> Option<String> {
        let id = v.pointer("/id").and_then(RequestId::from_value)?;
        {
            let mut lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
            let at = lists.iter().position(|l| l == &id)?;
            lists.remove(at);
        }
        let tools = v.pointer("/result/tools").and_then(Value::as_array)?;
        let mut renamed = Vec::new();
        for tool in tools {
            let Some(mut t) = tool.as_object().cloned() else {
                continue;
            };
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            let full = format!("{}{name}", self.prefix);
            t.insert("name", Value::String(std::borrow::Cow::Owned(full)));
            renamed.push(Value::Object(t));
        }
        let mut o = v.as_object()?.clone();
        let mut result: Object<'static> = o.get("result")?.as_object()?.clone();
        result.insert("tools", Value::Array(renamed));
        o.insert("result", Value::Object(result));
        Some(canonical::to_string(&Value::Object(o)))
    }
}

/// Writes `line` and a `\n`, flushed.
async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &str) -> std::io::Result<()> {
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}

/// The streamable-HTTP client side of a `url` upstream.
struct Bridge {
    client: HttpClient,
    uri: hyper::Uri,
    max_frame_bytes: usize,
    state: Arc<Mutex<BridgeState>>,
}

/// What the bridge learnt from the upstream.
#[derive(Default)]
struct BridgeState {
    /// The upstream's `Mcp-Session-Id`, from its `initialize` answer.
    session: Option<String>,
    /// The version its `initialize` answer negotiated.
    version: Option<String>,
    /// Ids of `initialize` requests on their way.
    initializing: HashMap<RequestId, ()>,
    /// The `GET` stream of the upstream's own messages, once opened.
    listening: Option<tokio::task::JoinHandle<()>>,
}

impl Bridge {
    /// POSTs each line from the proxy; writes what comes back for the proxy.
    async fn run(self, mut from_proxy: BufReader<DuplexStream>, to_proxy: DuplexStream) {
        let (tx, mut rx) = mpsc::channel::<String>(64);
        let writer = tokio::spawn(async move {
            let mut w = to_proxy;
            while let Some(line) = rx.recv().await {
                if write_line(&mut w, &line).await.is_err() {
                    break;
                }
            }
            let _ = w.shutdown().await;
        });
        let me = Arc::new(self);
        let parse = frame::parse_options(me.max_frame_bytes);
        while let Ok(Some(Line::Frame(bytes))) =
            frame::read_line(&mut from_proxy, me.max_frame_bytes).await
        {
            let Ok(value) = parse.parse(&bytes).map(Value::into_owned) else {
                continue;
            };
            let me = Arc::clone(&me);
            let tx = tx.clone();
            // Each message is its own POST: a slow call does not hold the
            // others back.
            tokio::spawn(async move { me.post(bytes, value, tx).await });
        }
        // The proxy is done: end the upstream's session.
        let listening = me
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .listening
            .take();
        if let Some(l) = listening {
            l.abort();
        }
        me.delete().await;
        drop(tx);
        let _ = writer.await;
    }

    /// The headers every request carries.
    fn request(&self, method: hyper::Method) -> hyper::http::request::Builder {
        let mut b = hyper::Request::builder()
            .method(method)
            .uri(self.uri.clone())
            .header("accept", "application/json, text/event-stream");
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = &state.session {
            b = b.header("mcp-session-id", s.as_str());
        }
        if let Some(v) = &state.version {
            b = b.header("mcp-protocol-version", v.as_str());
        }
        b
    }

    async fn delete(&self) {
        if self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .session
            .is_none()
        {
            return;
        }
        if let Ok(req) = self
            .request(hyper::Method::DELETE)
            .body(Full::new(Bytes::new()))
        {
            let _ =
                tokio::time::timeout(std::time::Duration::from_secs(5), self.client.request(req))
                    .await;
        }
    }

    /// POSTs one message and relays what comes back.
    async fn post(
        self: Arc<Self>,
        bytes: Vec<u8>,
        value: Value<'static>,
        tx: mpsc::Sender<String>,
    ) {
        let id = value.pointer("/id").and_then(RequestId::from_value);
        let method = value
            .pointer("/method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let is_request = id.is_some() && method.is_some();
        if let (Some(id), Some("initialize")) = (&id, method.as_deref()) {
            self.state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .initializing
                .insert(id.clone(), ());
        }
        let mut b = self
            .request(hyper::Method::POST)
            .header("content-type", "application/json");
        // A 2026-07-28 message: the headers mirror its body (the upstream
        // checks they match).
        if let Some(v) = value
            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
            .and_then(Value::as_str)
        {
            if let Ok(h) = hyper::header::HeaderValue::from_str(v) {
                b.headers_mut()
                    .map(|hs| hs.insert("mcp-protocol-version", h));
            }
            if let Some(m) = method.as_deref() {
                b = b.header("mcp-method", header_text(m));
            }
            let name = match method.as_deref() {
                Some("tools/call" | "prompts/get") => value.pointer("/params/name"),
                Some("resources/read") => value.pointer("/params/uri"),
                _ => None,
            };
            if let Some(n) = name.and_then(Value::as_str) {
                b = b.header("mcp-name", header_text(n));
            }
        }
        let Ok(req) = b.body(Full::new(Bytes::from(bytes))) else {
            return self
                .fail(id.as_ref(), is_request, "upstream_request", &tx)
                .await;
        };
        let response = match self.client.request(req).await {
            Ok(r) => r,
            Err(_) => {
                return self
                    .fail(id.as_ref(), is_request, "upstream_unreachable", &tx)
                    .await
            }
        };
        if let Some(s) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            if id.as_ref().is_some_and(|i| {
                self.state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .initializing
                    .contains_key(i)
            }) {
                self.state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .session = Some(s.to_owned());
            }
        }
        let status = response.status();
        if status == hyper::StatusCode::ACCEPTED || !is_request && status.is_success() {
            if method.as_deref() == Some("notifications/initialized") && status.is_success() {
                // The session is open: its own messages (tools/list_changed,
                // server requests) come on a GET stream.
                let me = Arc::clone(&self);
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                if state.listening.is_none() && state.session.is_some() {
                    state.listening = Some(tokio::spawn(me.listen(tx)));
                }
            }
            return;
        }
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let mut body = response.into_body();
        if sse && status.is_success() {
            let mut reader = SseLines::new(self.max_frame_bytes);
            let (mut answered, mut broken) = (false, false);
            loop {
                let frame = match body.frame().await {
                    Some(Ok(frame)) => frame,
                    Some(Err(_)) => {
                        broken = true;
                        break;
                    }
                    None => break,
                };
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                for event in reader.push(&data) {
                    match self.note(&event, id.as_ref()) {
                        Some(answers) => answered |= answers,
                        None => broken = true,
                    }
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
            }
            broken |= reader.finish();
            // A stream that broke (cut inside an event or by the
            // connection, an event the reader refused or that is not JSON)
            // before answering the request: the request gets an error at
            // once, not the call timeout's. A stream that ended cleanly
            // without the answer is the upstream's to resume (SSE polling:
            // the answer comes later), as before.
            if broken && !answered {
                return self
                    .fail(id.as_ref(), is_request, "upstream_no_answer", &tx)
                    .await;
            }
            return;
        }
        let mut collected: Vec<u8> = Vec::new();
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                if collected.len() + data.len() > self.max_frame_bytes {
                    return self
                        .fail(id.as_ref(), is_request, "upstream_frame_too_large", &tx)
                        .await;
                }
                collected.extend_from_slice(&data);
            }
        }
        let text = one_line(&collected);
        if text.trim().is_empty() {
            if status.is_success() {
                return;
            }
            let code = format!("upstream_http_{}", status.as_u16());
            return self.fail(id.as_ref(), is_request, &code, &tx).await;
        }
        self.note(&text, None);
        let _ = tx.send(text).await;
    }

    /// Reads the upstream's `GET` stream into the proxy, until it ends (an
    /// upstream without one answers `405`).
    async fn listen(self: Arc<Self>, tx: mpsc::Sender<String>) {
        let Ok(req) = self
            .request(hyper::Method::GET)
            .body(Full::new(Bytes::new()))
        else {
            return;
        };
        let Ok(response) = self.client.request(req).await else {
            return;
        };
        let sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !response.status().is_success() || !sse {
            return;
        }
        let mut body = response.into_body();
        let mut reader = SseLines::new(self.max_frame_bytes);
        while let Some(Ok(frame)) = body.frame().await {
            let Ok(data) = frame.into_data() else {
                continue;
            };
            for event in reader.push(&data) {
                if tx.send(event).await.is_err() {
                    return;
                }
            }
        }
    }

    /// Notes the version an `initialize` answer negotiated; whether `line`
    /// is the answer to `request` (`None`: `line` is not JSON).
    fn note(&self, line: &str, request: Option<&RequestId>) -> Option<bool> {
        let Ok(v) = toolgate_json::from_str(line) else {
            return None;
        };
        let Some(id) = v.pointer("/id").and_then(RequestId::from_value) else {
            return Some(false);
        };
        let answers = request == Some(&id)
            && (v.pointer("/result").is_some() || v.pointer("/error").is_some());
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.initializing.remove(&id).is_some() {
            if let Some(version) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
                state.version = Some(version.to_owned());
            }
        }
        Some(answers)
    }

    /// A request the upstream did not answer gets a JSON-RPC error.
    async fn fail(
        &self,
        id: Option<&RequestId>,
        is_request: bool,
        code: &str,
        tx: &mpsc::Sender<String>,
    ) {
        if is_request {
            let answer = frame::error_answer(
                id,
                frame::INTERNAL_ERROR,
                &format!("refused by toolgate: {code}"),
            );
            let _ = tx.send(answer).await;
        }
    }
}

/// A header value: the text itself when it is printable ASCII, else
/// `=?base64?…?=` (the 2026-07-28 encoding).
pub(crate) fn header_text(s: &str) -> String {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) && s.trim() == s {
        s.to_owned()
    } else {
        format!("=?base64?{}?=", base64_encode(s.as_bytes()))
    }
}

/// Standard base64 with padding.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b0 = u32::from(chunk.first().copied().unwrap_or(0));
        let b1 = u32::from(chunk.get(1).copied().unwrap_or(0));
        let b2 = u32::from(chunk.get(2).copied().unwrap_or(0));
        let n = (b0 << 16) | (b1 << 8) | b2;
        for (i, shift) in [18u32, 12, 6, 0].iter().enumerate() {
            if i <= chunk.len() {
                let at = usize::try_from((n >> shift) & 63).unwrap_or(0);
                out.push(char::from(T.get(at).copied().unwrap_or(b'A')));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 (padding optional) decoded; `None` if malformed.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for c in text.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).ok()?);
        }
    }
    Some(out)
}

/// A body as one line: JSON text's line breaks are whitespace (a raw line
/// break cannot occur inside a JSON string), so they become spaces.
pub(crate) fn one_line(bytes: &[u8]) -> String {
    let text: Vec<u8> = bytes
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect();
    String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Splits an event stream into the `data` of its events, each as one line,
/// by the gate's one event-stream reader ([`toolgate::sse`]: lines end at
/// CR LF, LF or a lone CR, however the bytes are split); an event over the
/// cap, or with no data, is dropped.
pub(crate) struct SseLines {
    reader: toolgate::sse::Reader,
    /// Whether the reader refused a line or an event.
    refused: bool,
}

impl SseLines {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            // A `data` line holds the field's name besides the value.
            reader: toolgate::sse::Reader::new(max.saturating_add(64), max),
            refused: false,
        }
    }

    /// Ends the stream: whether it broke, with an event cut short (data no
    /// blank line ended) or one the reader refused.
    pub(crate) fn finish(&mut self) -> bool {
        self.reader.finish().is_some() || self.refused
    }

    /// Feeds bytes; returns the events completed.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut items = Vec::new();
        self.reader.push(bytes, &mut items);
        self.refused |= items.iter().any(Result::is_err);
        items
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| !e.data.is_empty())
            .map(|e| one_line(&e.data))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in ["", "a", "ab", "abc", "héllo wörld", "Mcp-Name ✓"] {
            let e = base64_encode(s.as_bytes());
            assert_eq!(base64_decode(&e).unwrap(), s.as_bytes(), "{e}");
        }
        assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
        assert_eq!(header_text("add"), "add");
        assert_eq!(header_text("é"), "=?base64?w6k=?=");
    }

    #[test]
    fn sse_events_become_lines() {
        let mut r = SseLines::new(100);
        let mut got = r.push(b"event: message\ndata: {\"a\":\n");
        assert!(got.is_empty());
        got.extend(r.push(b"data: 1}\n\n: keep-alive\n\ndata: {}\r\n\r\n"));
        assert_eq!(got, ["{\"a\": 1}", "{}"]);
        let mut small = SseLines::new(4);
        assert!(small.push(b"data: 123456\n\ndata: {}\n\n") == ["{}"]);
        let mut r = SseLines::new(100);
        assert!(r.push(b"data: {}\r").is_empty());
        assert_eq!(
            r.push(b"\n\rdata: 1\r\r"),
            ["{}", "1"],
            "CR, then LF in the next push"
        );
    }
}
