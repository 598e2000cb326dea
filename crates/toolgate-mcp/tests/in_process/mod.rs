//! The MCP proxy in process, over in-memory pipes: the test holds the
//! client's end and the server's end (a scripted server), and reads what
//! the proxy hands each side. Shared by the in-process tests.

#![allow(dead_code, reason = "each test uses its own part of the harness")]

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolgate::config::Config;
use toolgate_json::Value;
use toolgate_mcp::{Ended, Proxy};
use toolgate_store::{open_config_store, StoreGate, StoreOptions};

/// How long a test waits for one line.
pub const LINE_WAIT: Duration = Duration::from_secs(10);

/// The two ends the test holds: the client's and the server's, and the
/// proxy's run.
pub struct Ends {
    pub to_proxy: DuplexStream,
    pub from_proxy: Lines<BufReader<DuplexStream>>,
    pub server_in: Lines<BufReader<DuplexStream>>,
    pub server_out: DuplexStream,
    pub run: tokio::task::JoinHandle<Ended>,
}

/// A store gate on `config` (a TOML text), its store opened (in memory for
/// `sqlite::memory:`).
pub fn gate(config: &str) -> StoreGate {
    let config = Config::parse(config, "toolgate.toml").unwrap();
    let store = open_config_store(&config, StoreOptions::new()).unwrap();
    StoreGate::from_config(&config, store).unwrap()
}

/// [`gate`], shared (for proxies that share one store gate).
pub fn shared_gate(config: &str) -> Arc<StoreGate> {
    Arc::new(gate(config))
}

/// Runs `proxy` between a client and a server made of pipes.
pub fn start(proxy: Proxy) -> Ends {
    let (to_proxy, client_in) = tokio::io::duplex(1 << 16);
    let (client_out, from_proxy) = tokio::io::duplex(1 << 16);
    let (server_in_w, server_in_r) = tokio::io::duplex(1 << 16);
    let (server_out, server_out_r) = tokio::io::duplex(1 << 16);
    let run = tokio::spawn(async move {
        proxy
            .run(
                BufReader::new(client_in),
                client_out,
                BufReader::new(server_out_r),
                server_in_w,
            )
            .await
    });
    Ends {
        to_proxy,
        from_proxy: BufReader::new(from_proxy).lines(),
        server_in: BufReader::new(server_in_r).lines(),
        server_out,
        run,
    }
}

/// Writes one line (a frame) to a pipe.
pub async fn send(w: &mut DuplexStream, line: &str) {
    w.write_all(line.as_bytes()).await.unwrap();
    w.write_all(b"\n").await.unwrap();
}

/// The next line of a pipe, within [`LINE_WAIT`].
pub async fn recv(r: &mut Lines<BufReader<DuplexStream>>) -> String {
    tokio::time::timeout(LINE_WAIT, r.next_line())
        .await
        .expect("a line within 10 s")
        .unwrap()
        .expect("a line, not the end")
}

/// A frame's JSON.
pub fn json(text: &str) -> Value<'static> {
    toolgate_json::from_str(text).unwrap().into_owned()
}

/// The client lists the tools and the server answers with `tools` (a JSON
/// array): the catalog is pinned on first use. Returns the client's
/// answer.
pub async fn list(e: &mut Ends, tools: &str) -> Value<'static> {
    let ask = r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#;
    send(&mut e.to_proxy, ask).await;
    assert_eq!(recv(&mut e.server_in).await, ask);
    send(
        &mut e.server_out,
        &format!(r#"{{"jsonrpc":"2.0","id":0,"result":{{"tools":{tools}}}}}"#),
    )
    .await;
    json(&recv(&mut e.from_proxy).await)
}
