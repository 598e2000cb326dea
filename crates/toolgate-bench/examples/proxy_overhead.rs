//! What `toolgate proxy` adds to a model API call, measured on loopback in
//! one process: a canned upstream (an OpenAI chat completion proposing one
//! `search` call; as a stream, a first text delta at once and the call
//! after 5 ms), called directly and through the proxy, in alternating
//! rounds. The proxy runs the full gate (the shop's config and Cedar
//! policies) over a SQLite store on disk (every decision's audit record
//! committed before the answer, `synchronous=FULL`).
//!
//! Prints p50 and p99 of the whole response (JSON) and of the time to the
//! first text byte (stream), direct and proxied, at concurrency 1 and 32.
//!
//! `cargo run --release -p toolgate-bench --example proxy_overhead -- [REQUESTS_PER_ROUND] [ROUNDS] [STORE_URL]`
//!
//! With `--count direct|proxied json|stream REQUESTS [STORE_URL]` it makes
//! only `REQUESTS` requests of one kind at concurrency 1 after the warm-up
//! and prints nothing: under `valgrind --tool=callgrind`, the instructions
//! of a `proxied` run less those of a `direct` one, over `REQUESTS`, are
//! the proxy's own instructions per request (the setup, the warm-up, the
//! client and the upstream cancel out).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a benchmark program: a failed setup should stop it loudly"
)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Request, Response};
use axum::routing::post;
use axum::Router;
use http_body_util::{BodyExt as _, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

const JSON_BODY: &str = r#"{"id":"chatcmpl-b","object":"chat.completion","created":1767225600,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"waterproof hiking boots\",\"limit\":5}"}}]}}]}"#;

fn sse_head() -> String {
    let chunk = |delta: &str, finish: &str| {
        format!("data: {{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"gpt-test\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n")
    };
    chunk(r#"{"role":"assistant","content":"Hi"}"#, "null")
}

fn sse_tail() -> String {
    let chunk = |delta: &str, finish: &str| {
        format!("data: {{\"id\":\"chatcmpl-b\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"gpt-test\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n")
    };
    let mut out = chunk(
        r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"boots\"}"}}]}"#,
        "null",
    );
    out.push_str(&chunk("{}", "\"tool_calls\""));
    out.push_str("data: [DONE]\n\n");
    out
}

async fn upstream(req: Request<Body>) -> Response<Body> {
    let body = axum::body::to_bytes(req.into_body(), 1 << 20)
        .await
        .unwrap();
    if body.windows(13).any(|w| w == b"\"stream\":true") {
        let (mut tx, rx) = http_body_util::channel::Channel::<Bytes, std::io::Error>::new(4);
        tokio::spawn(async move {
            let _ = tx.send_data(Bytes::from(sse_head())).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
            let _ = tx.send_data(Bytes::from(sse_tail())).await;
        });
        let mut r = Response::new(Body::new(rx));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        r
    } else {
        let mut r = Response::new(Body::from(JSON_BODY));
        r.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r
    }
}

async fn listen(router: Router) -> String {
    use axum::serve::ListenerExt as _;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let l = l.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(l, router).await.unwrap() });
    format!("http://{addr}")
}

type HttpClient = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// One request; the time to the whole body, or to the first `"Hi"` byte of
/// a stream.
async fn one(client: &HttpClient, base: &str, stream: bool, n: usize) -> Duration {
    let body = if stream {
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}"#
    } else {
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#
    };
    let req = hyper::Request::post(format!("{base}/v1/chat/completions"))
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-bench")
        .header("x-toolgate-session", format!("bench-{n}"))
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let started = Instant::now();
    let mut res = client.request(req).await.unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let mut seen = Vec::new();
    let mut first = None;
    while let Some(frame) = res.body_mut().frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            seen.extend_from_slice(&data);
            if stream && first.is_none() && seen.windows(4).any(|w| w == b"\"Hi\"") {
                first = Some(started.elapsed());
            }
        }
    }
    let total = started.elapsed();
    if !stream {
        // The proxied answer is the gated one: the call was allowed.
        assert!(
            seen.windows(6).any(|w| w == b"search"),
            "{}",
            String::from_utf8_lossy(&seen)
        );
    }
    first.unwrap_or(total)
}

async fn round(
    client: &HttpClient,
    base: &str,
    stream: bool,
    requests: usize,
    concurrency: usize,
    counter: &Arc<AtomicUsize>,
) -> Vec<Duration> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, base, next, counter) = (
            client.clone(),
            base.to_owned(),
            Arc::clone(&next),
            Arc::clone(counter),
        );
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < requests {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                out.push(one(&client, &base, stream, n).await);
            }
            out
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `--count direct|proxied json|stream REQUESTS [STORE_URL]`.
    let count = (args.get(1).map(String::as_str) == Some("--count")).then(|| {
        let via = args[2] == "proxied";
        let stream = args[3] == "stream";
        (via, stream, args[4].parse::<usize>().unwrap())
    });
    let args: Vec<String> = if count.is_some() {
        let mut a = vec![args[0].clone(), "0".to_owned(), "0".to_owned()];
        a.extend(args.get(5).cloned());
        a
    } else {
        args
    };
    let requests: usize = args.get(1).map_or(400, |a| a.parse().unwrap());
    let rounds: usize = args.get(2).map_or(5, |a| a.parse().unwrap());
    // The proxy's store: durable SQLite on disk by default, or e.g.
    // `sqlite::memory:` to see the gate without the commit.
    let store_url = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "sqlite://toolgate.db".to_owned());

    let up = listen(Router::new().route("/v1/chat/completions", post(upstream))).await;

    // The shop's config, policies and entities, with a [proxy] for alice.
    let dir = tempfile::tempdir().unwrap();
    let shop = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop");
    for f in ["policies.cedar", "shop.cedarschema", "entities.json"] {
        std::fs::copy(shop.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::create_dir(dir.path().join("schemas")).unwrap();
    for e in std::fs::read_dir(shop.join("schemas")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.path().join("schemas").join(e.file_name())).unwrap();
    }
    let toml = std::fs::read_to_string(shop.join("toolgate.toml")).unwrap();
    let start = toml.find("[proxy]").unwrap();
    let end = start + toml[start..].find("[authorization]").unwrap();
    let toml = format!(
        "{}[proxy]\nopenai = \"{up}\"\nuser = \"alice\"\n\n{}",
        &toml[..start],
        &toml[end..]
    )
    .replace("max_turns = 20", "max_turns = 1000000");
    let config_path = dir.path().join("toolgate.toml");
    std::fs::write(&config_path, toml).unwrap();
    let config = toolgate::config::Config::load(&config_path).unwrap();
    let store =
        toolgate_store::open_store(&store_url, dir.path(), toolgate_store::StoreOptions::new())
            .unwrap();
    let gate = toolgate_store::StoreGate::from_config(&config, store).unwrap();
    let proxy = toolgate_proxy::Proxy::new(&config, gate).unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxied = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(toolgate_proxy::serve(l, proxy, std::future::pending()));

    let client: HttpClient = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(64)
        .build_http();
    let counter = Arc::new(AtomicUsize::new(0));
    // Warm both paths.
    round(&client, &up, false, 50, 4, &counter).await;
    round(&client, &proxied, false, 50, 4, &counter).await;
    if let Some((via, stream, n)) = count {
        round(&client, &up, stream, 20, 1, &counter).await;
        round(&client, &proxied, stream, 20, 1, &counter).await;
        let base = if via { &proxied } else { &up };
        round(&client, base, stream, n, 1, &counter).await;
        return;
    }

    println!("| mode | concurrency | direct p50 | proxy p50 | added p50 | direct p99 | proxy p99 | added p99 |");
    println!("|---|---|---|---|---|---|---|---|");
    for stream in [false, true] {
        for concurrency in [1, 32] {
            let (mut direct, mut via) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                direct.extend(round(&client, &up, stream, requests, concurrency, &counter).await);
                via.extend(round(&client, &proxied, stream, requests, concurrency, &counter).await);
            }
            direct.sort();
            via.sort();
            let (d50, p50) = (pct(&direct, 0.5), pct(&via, 0.5));
            let (d99, p99) = (pct(&direct, 0.99), pct(&via, 0.99));
            println!(
                "| {} | {concurrency} | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs |",
                if stream { "stream, first text byte" } else { "JSON, whole response" },
                us(d50),
                us(p50),
                us(p50) - us(d50),
                us(d99),
                us(p99),
                us(p99) - us(d99)
            );
        }
    }
}
