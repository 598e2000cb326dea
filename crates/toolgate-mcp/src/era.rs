//! A 2026-07-28 (stateless) client in front of an upstream of either era.
//!
//! When a stateless session's upstream connection opens, the upstream is
//! asked `server/discover` first. If it answers, it speaks 2026-07-28 and
//! every message passes as it is. If it refuses (a session-era server), it
//! is initialized once on the connection (`initialize` at 2025-11-25, then
//! `notifications/initialized`), the client's `server/discover` is answered
//! from what `initialize` returned, and the client's requests are forwarded
//! as they are (their `_meta` envelope is one a session-era server
//! ignores). What the proxy gates and relays — `tools/list`, `tools/call`,
//! their results, `notifications/progress` and
//! `notifications/tools/list_changed` — means the same in both eras; the
//! HTTP layer adds the 2026-07-28 `resultType` to every result.

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolgate_json::{Object, Value};

use crate::frame::{self, Line, RequestId};
use crate::upstream::{Guard, Link};

/// The id of the proxy's own `server/discover` probe.
const DISCOVER_ID: &str = "toolgate-discover";
/// The id of the proxy's own `initialize`.
const INITIALIZE_ID: &str = "toolgate-initialize";
/// How long the probe and the handshake may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// `link` as a 2026-07-28 server, whatever its era.
pub(crate) fn for_modern_client(link: Link, max_frame_bytes: usize) -> Link {
    let (proxy_in, adapter_in) = tokio::io::duplex(64 << 10);
    let (adapter_out, proxy_out) = tokio::io::duplex(64 << 10);
    let task = tokio::spawn(async move {
        let Link {
            output,
            input,
            guard,
        } = link;
        let _guard = guard;
        run(
            output,
            input,
            BufReader::new(adapter_in),
            adapter_out,
            max_frame_bytes,
        )
        .await;
    });
    Link {
        output: Box::new(BufReader::new(proxy_out)),
        input: Box::new(proxy_in),
        guard: Guard::tasks(vec![task]),
    }
}

async fn run<UO, UI, PI, PO>(
    mut up_out: UO,
    mut up_in: UI,
    mut from_proxy: PI,
    to_proxy: PO,
    max: usize,
) where
    UO: AsyncBufRead + Unpin + Send + 'static,
    UI: AsyncWrite + Unpin,
    PI: AsyncBufRead + Unpin,
    PO: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<String>(64);
    let writer = tokio::spawn(write_lines(rx, to_proxy));
    let legacy =
        match tokio::time::timeout(PROBE_TIMEOUT, probe(&mut up_out, &mut up_in, &tx, max)).await {
            Ok(Some(init)) => Some(init),
            _ => None,
        };
    let inward = pump_inward(up_out, tx.clone(), max);
    // Proxy → upstream; a session-era upstream's discover is answered here.
    let parse = frame::parse_options(max);
    let outward = async {
        while let Ok(Some(Line::Frame(bytes))) = frame::read_line(&mut from_proxy, max).await {
            if let Some(init) = &legacy {
                if let Ok(v) = parse.parse(&bytes) {
                    if v.pointer("/method").and_then(Value::as_str) == Some("server/discover") {
                        if let Some(id) = v.pointer("/id").and_then(frame::RequestId::from_value) {
                            let _ = tx
                                .send(frame::result_answer(&id, discover_result(init)))
                                .await;
                            continue;
                        }
                    }
                }
            }
            if write_line(&mut up_in, &String::from_utf8_lossy(&bytes))
                .await
                .is_err()
            {
                break;
            }
        }
        let _ = up_in.shutdown().await;
    };
    until_the_upstream_ends(outward, inward).await;
    drop(tx);
    let _ = writer.await;
}

/// Upstream → proxy, line by line as it is, until the upstream ends or
/// the proxy's side is gone.
fn pump_inward<UO>(mut up_out: UO, tx: mpsc::Sender<String>, max: usize) -> JoinHandle<()>
where
    UO: AsyncBufRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        while let Ok(Some(line)) = frame::read_line(&mut up_out, max).await {
            if let Line::Frame(bytes) = line {
                if tx
                    .send(String::from_utf8_lossy(&bytes).into_owned())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    })
}

/// Runs `outward` (proxy → upstream) beside the upstream's `inward` pump:
/// the upstream's end is the end of this server for the proxy, and when
/// the proxy's side ends first the upstream gets 5 s to finish.
async fn until_the_upstream_ends(outward: impl Future<Output = ()>, mut inward: JoinHandle<()>) {
    tokio::select! {
        () = outward => {
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut inward).await;
        }
        _ = &mut inward => {}
    }
}

/// Asks `server/discover`; on a refusal, initializes the upstream. The
/// `initialize` result of a session-era upstream, or `None` for a
/// 2026-07-28 one. Other messages met meanwhile go to the proxy.
async fn probe<UO, UI>(
    up_out: &mut UO,
    up_in: &mut UI,
    tx: &mpsc::Sender<String>,
    max: usize,
) -> Option<Value<'static>>
where
    UO: AsyncBufRead + Unpin,
    UI: AsyncWrite + Unpin,
{
    let answer = discover(up_out, up_in, tx, max).await?;
    if answer.pointer("/result").is_some() {
        return None;
    }
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":"{INITIALIZE_ID}","method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"toolgate","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    write_line(up_in, &initialize).await.ok()?;
    let answer = answer_to(up_out, &own_id(INITIALIZE_ID)?, tx, max).await?;
    let result = answer.pointer("/result")?.clone();
    write_line(
        up_in,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await
    .ok()?;
    note("the upstream speaks 2025-11-25: initialized for a 2026-07-28 client");
    Some(result)
}

/// Reads until the answer to the request `id`.
async fn answer_to<UO: AsyncBufRead + Unpin>(
    up_out: &mut UO,
    id: &RequestId,
    tx: &mpsc::Sender<String>,
    max: usize,
) -> Option<Value<'static>> {
    let parse = frame::parse_options(max);
    loop {
        let Line::Frame(bytes) = frame::read_line(up_out, max).await.ok()?? else {
            continue;
        };
        let v = match parse.parse(&bytes) {
            Ok(v) => v.into_owned(),
            Err(_) => {
                let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned()).await;
                continue;
            }
        };
        if v.pointer("/id").and_then(RequestId::from_value).as_ref() == Some(id)
            && v.pointer("/method").is_none()
        {
            return Some(v);
        }
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned()).await;
    }
}

/// `link` for a 2025-11-25 client, whatever the upstream's era: the
/// client's `initialize` is forwarded; if the upstream refuses it and
/// answers `server/discover` (a 2026-07-28-only server), the client's
/// `initialize` is answered from that, its `notifications/initialized` and
/// `ping` are answered here, and each of its requests is forwarded with the
/// 2026-07-28 `_meta` envelope (the version, the capabilities and client
/// information its `initialize` declared).
pub(crate) fn for_legacy_client(link: Link, max_frame_bytes: usize) -> Link {
    let (proxy_in, adapter_in) = tokio::io::duplex(64 << 10);
    let (adapter_out, proxy_out) = tokio::io::duplex(64 << 10);
    let task = tokio::spawn(async move {
        let Link {
            output,
            input,
            guard,
        } = link;
        let _guard = guard;
        run_legacy(
            output,
            input,
            BufReader::new(adapter_in),
            adapter_out,
            max_frame_bytes,
        )
        .await;
    });
    Link {
        output: Box::new(BufReader::new(proxy_out)),
        input: Box::new(proxy_in),
        guard: Guard::tasks(vec![task]),
    }
}

/// What a 2025-11-25 client declared at `initialize`, for the envelope of
/// its requests to a 2026-07-28 server.
struct Envelope {
    capabilities: Value<'static>,
    client_info: Option<Value<'static>>,
}

async fn run_legacy<UO, UI, PI, PO>(
    mut up_out: UO,
    mut up_in: UI,
    mut from_proxy: PI,
    to_proxy: PO,
    max: usize,
) where
    UO: AsyncBufRead + Unpin + Send + 'static,
    UI: AsyncWrite + Unpin,
    PI: AsyncBufRead + Unpin,
    PO: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<String>(64);
    let writer = tokio::spawn(write_lines(rx, to_proxy));
    let parse = frame::parse_options(max);
    let mut envelope: Option<Envelope> = None;
    // The client's first message, normally its initialize.
    if let Ok(Some(Line::Frame(bytes))) = frame::read_line(&mut from_proxy, max).await {
        let first = parse.parse(&bytes).ok().map(Value::into_owned);
        let init_id = first.as_ref().and_then(|v| {
            (v.pointer("/method").and_then(Value::as_str) == Some("initialize"))
                .then(|| v.pointer("/id").and_then(RequestId::from_value))
                .flatten()
        });
        let forwarded = write_line(&mut up_in, &String::from_utf8_lossy(&bytes))
            .await
            .is_ok();
        if let (Some(id), Some(first), true) = (init_id, first, forwarded) {
            let answer = tokio::time::timeout(PROBE_TIMEOUT, answer_to(&mut up_out, &id, &tx, max))
                .await
                .ok()
                .flatten();
            if let Some(answer) = answer {
                let refused = answer.pointer("/error").is_some();
                let modern = if refused {
                    tokio::time::timeout(
                        PROBE_TIMEOUT,
                        discover_only(&mut up_out, &mut up_in, &tx, max),
                    )
                    .await
                    .ok()
                    .flatten()
                } else {
                    None
                };
                match modern {
                    Some(discovered) => {
                        note("the upstream speaks 2026-07-28 only: translated for a 2025-11-25 client");
                        let _ = tx
                            .send(frame::result_answer(
                                &id,
                                initialize_result(&first, &discovered),
                            ))
                            .await;
                        envelope = Some(Envelope {
                            capabilities: first
                                .pointer("/params/capabilities")
                                .cloned()
                                .unwrap_or_else(|| Value::Object(Object::new())),
                            client_info: first.pointer("/params/clientInfo").cloned(),
                        });
                    }
                    None => {
                        let _ = tx.send(canonical_line(&answer)).await;
                    }
                }
            }
        }
    }
    let inward = pump_inward(up_out, tx.clone(), max);
    let outward = async {
        while let Ok(Some(Line::Frame(bytes))) = frame::read_line(&mut from_proxy, max).await {
            let line = match &envelope {
                None => String::from_utf8_lossy(&bytes).into_owned(),
                Some(env) => match parse.parse(&bytes).map(Value::into_owned) {
                    Ok(v) => match translate(&v, env) {
                        Translated::Forward(line) => line,
                        Translated::Answer(line) => {
                            let _ = tx.send(line).await;
                            continue;
                        }
                        Translated::Drop => continue,
                    },
                    Err(_) => continue,
                },
            };
            if write_line(&mut up_in, &line).await.is_err() {
                break;
            }
        }
        let _ = up_in.shutdown().await;
    };
    until_the_upstream_ends(outward, inward).await;
    drop(tx);
    let _ = writer.await;
}

/// What becomes of a 2025-11-25 client's message for a 2026-07-28 server.
enum Translated {
    Forward(String),
    Answer(String),
    Drop,
}

fn translate(v: &Value<'static>, env: &Envelope) -> Translated {
    let method = v.pointer("/method").and_then(Value::as_str);
    let id = v.pointer("/id").and_then(RequestId::from_value);
    match (method, id) {
        (Some("notifications/initialized"), None) => Translated::Drop,
        (Some("ping"), Some(id)) => {
            Translated::Answer(frame::result_answer(&id, Value::Object(Object::new())))
        }
        (Some(_), Some(_)) => {
            let Some(mut o) = v.as_object().cloned() else {
                return Translated::Drop;
            };
            let mut params = o
                .get("params")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut meta = params
                .get("_meta")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            meta.insert(
                "io.modelcontextprotocol/protocolVersion",
                Value::String(std::borrow::Cow::Borrowed(
                    crate::http_server::MODERN_VERSION,
                )),
            );
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities",
                env.capabilities.clone(),
            );
            if let Some(info) = &env.client_info {
                meta.insert("io.modelcontextprotocol/clientInfo", info.clone());
            }
            params.insert("_meta", Value::Object(meta));
            o.insert("params", Value::Object(params));
            Translated::Forward(canonical_line(&Value::Object(o)))
        }
        _ => Translated::Forward(canonical_line(v)),
    }
}

/// Sends toolgate's own `server/discover` and reads until its answer (a
/// result or an error); `None` if the upstream cannot be written to or
/// ends first.
async fn discover<UO, UI>(
    up_out: &mut UO,
    up_in: &mut UI,
    tx: &mpsc::Sender<String>,
    max: usize,
) -> Option<Value<'static>>
where
    UO: AsyncBufRead + Unpin,
    UI: AsyncWrite + Unpin,
{
    let discover = format!(
        r#"{{"jsonrpc":"2.0","id":"{DISCOVER_ID}","method":"server/discover","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"toolgate","version":"{}"}}}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    write_line(up_in, &discover).await.ok()?;
    answer_to(up_out, &own_id(DISCOVER_ID)?, tx, max).await
}

/// Asks `server/discover`; its result when the upstream answers it.
async fn discover_only<UO, UI>(
    up_out: &mut UO,
    up_in: &mut UI,
    tx: &mpsc::Sender<String>,
    max: usize,
) -> Option<Value<'static>>
where
    UO: AsyncBufRead + Unpin,
    UI: AsyncWrite + Unpin,
{
    let answer = discover(up_out, up_in, tx, max).await?;
    answer.pointer("/result").cloned()
}

/// An `initialize` result built from a `server/discover` result: the
/// client's version when it is a session-era one (else 2025-11-25).
fn initialize_result(init: &Value<'static>, discovered: &Value<'static>) -> Value<'static> {
    let requested = init
        .pointer("/params/protocolVersion")
        .and_then(Value::as_str)
        .filter(|v| crate::http_server::LEGACY_VERSIONS.contains(v))
        .unwrap_or("2025-11-25");
    let mut o = Object::new();
    o.insert(
        "protocolVersion",
        Value::String(std::borrow::Cow::Owned(requested.to_owned())),
    );
    o.insert(
        "capabilities",
        discovered
            .pointer("/capabilities")
            .cloned()
            .unwrap_or_else(|| Value::Object(Object::new())),
    );
    o.insert(
        "serverInfo",
        discovered
            .pointer("/serverInfo")
            .cloned()
            .unwrap_or_else(|| {
                let mut info = Object::new();
                info.insert(
                    "name",
                    Value::String(std::borrow::Cow::Borrowed("upstream")),
                );
                info.insert("version", Value::String(std::borrow::Cow::Borrowed("")));
                Value::Object(info)
            }),
    );
    if let Some(i) = discovered.pointer("/instructions") {
        o.insert("instructions", i.clone());
    }
    Value::Object(o)
}

fn canonical_line(v: &Value<'_>) -> String {
    toolgate_json::canonical::to_string(v)
}

/// The id of one of the proxy's own requests.
fn own_id(text: &'static str) -> Option<RequestId> {
    RequestId::from_value(&Value::String(std::borrow::Cow::Borrowed(text)))
}

/// A `server/discover` result built from a session-era `initialize` result.
fn discover_result(init: &Value<'static>) -> Value<'static> {
    let mut o = Object::new();
    o.insert(
        "supportedVersions",
        Value::Array(vec![Value::String(std::borrow::Cow::Borrowed(
            crate::http_server::MODERN_VERSION,
        ))]),
    );
    o.insert(
        "capabilities",
        init.pointer("/capabilities")
            .cloned()
            .unwrap_or_else(|| Value::Object(Object::new())),
    );
    for member in ["serverInfo", "instructions"] {
        if let Some(v) = init.pointer(&format!("/{member}")) {
            o.insert(member, v.clone());
        }
    }
    o.insert("ttlMs", Value::Number(toolgate_json::Number::from(0u64)));
    o.insert(
        "cacheScope",
        Value::String(std::borrow::Cow::Borrowed("private")),
    );
    o.insert(
        "resultType",
        Value::String(std::borrow::Cow::Borrowed("complete")),
    );
    Value::Object(o)
}

async fn write_lines<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<String>, mut w: W) {
    while let Some(line) = rx.recv().await {
        if write_line(&mut w, &line).await.is_err() {
            break;
        }
    }
    let _ = w.shutdown().await;
}

async fn write_line<W: AsyncWrite + Unpin>(w: &mut W, line: &str) -> std::io::Result<()> {
    w.write_all(line.as_bytes()).await?;
    w.write_all(b"\n").await?;
    w.flush().await
}

fn note(text: &str) {
    toolgate_edge::log::line(toolgate_edge::log::Level::Warn, "mcp", "note", text);
}
