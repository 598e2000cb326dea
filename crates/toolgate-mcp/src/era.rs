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

use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::mpsc;
use toolgate_json::{Object, Value};

use crate::frame::{self, Line};
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
    // Upstream → proxy, as it is.
    let tx_up = tx.clone();
    let inward = tokio::spawn(async move {
        while let Ok(Some(line)) = frame::read_line(&mut up_out, max).await {
            if let Line::Frame(bytes) = line {
                if tx_up
                    .send(String::from_utf8_lossy(&bytes).into_owned())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    });
    // Proxy → upstream; a session-era upstream's discover is answered here.
    let parse = frame::parse_options(max);
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
    let _ = tokio::time::timeout(Duration::from_secs(5), inward).await;
    drop(tx);
    let _ = writer.await;
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
    let discover = format!(
        r#"{{"jsonrpc":"2.0","id":"{DISCOVER_ID}","method":"server/discover","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"toolgate","version":"{}"}}}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    write_line(up_in, &discover).await.ok()?;
    let answer = answer_to(up_out, DISCOVER_ID, tx, max).await?;
    if answer.pointer("/result").is_some() {
        return None;
    }
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":"{INITIALIZE_ID}","method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"toolgate","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    write_line(up_in, &initialize).await.ok()?;
    let answer = answer_to(up_out, INITIALIZE_ID, tx, max).await?;
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
    id: &str,
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
        if v.pointer("/id").and_then(Value::as_str) == Some(id) && v.pointer("/method").is_none() {
            return Some(v);
        }
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned()).await;
    }
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
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "toolgate: mcp: {text}");
}
