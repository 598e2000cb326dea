//! Traces through a proxy hop, received by a real OTLP/HTTP receiver (the
//! official protobuf definitions, in Python): an agent's request carrying
//! its `traceparent` goes through `toolgate proxy` to an upstream; the
//! proxy's span is a child of the agent's, each decision a child of the
//! proxy's, the upstream sees the proxy's span as its parent, argument
//! values never leave (but a listed tool's, redacted), and the decision
//! log's JSON lines carry the same ids.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, Request, Response};
use axum::routing::post;
use axum::Router;
use http_body_util::{BodyExt as _, Full};
use serde_json::Value;
use toolgate_telemetry::{LogSink, Telemetry};
use toolgate_testkit::{otlp_spans as spans, OtlpReceiver, OtlpTransport};

const AGENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN: &str = "00f067aa0ba902b7";
/// An argument value of a tool not in `record_arguments`.
const PLAIN_VALUE: &str = "Zanzibar-7f3a";
/// A secret argument value of a tool in `record_arguments`.
const SECRET_VALUE: &str = "tg-secret-91c2";

fn config_text(upstream: &str, receiver: u16) -> String {
    format!(
        r#"
[authorization]
mode = "none"

[[tool]]
name = "get_weather"
risk = "read"
schema = {{ type = "object", properties = {{ city = {{ type = "string" }} }}, required = ["city"], additionalProperties = false }}

[[tool]]
name = "notify"
risk = "read"
redact = ["/token"]
schema = {{ type = "object", properties = {{ to = {{ type = "string" }}, token = {{ type = "string" }} }}, additionalProperties = false }}

[proxy]
openai = "{upstream}"
user = "alice"

[telemetry]
endpoint = "http://127.0.0.1:{receiver}"
service_name = "toolgate-test"
record_arguments = ["notify"]
metrics_seconds = 3600
log_format = "json"
decision_log = "info"
"#
    )
}

async fn listen(router: Router) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, router).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_hop_sits_inside_the_agents_trace_and_sends_no_argument_values() {
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Http) else {
        return;
    };
    // The upstream: answers with three calls, and keeps the traceparent
    // each request brought.
    let seen_traceparents: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let seen = Arc::clone(&seen_traceparents);
    let up = listen(Router::new().route(
        "/v1/chat/completions",
        post(move |req: Request<Body>| {
            let seen = Arc::clone(&seen);
            async move {
                let tp = req
                    .headers()
                    .get("traceparent")
                    .map(|v| v.to_str().unwrap().to_owned());
                seen.lock().unwrap().push(tp);
                let body = toolgate_testkit::openai_tool_calls(&[
                    (
                        "call_w",
                        "get_weather",
                        &format!(r#"{{"city":"{PLAIN_VALUE}"}}"#),
                    ),
                    (
                        "call_n",
                        "notify",
                        &format!(r#"{{"to":"ops","token":"{SECRET_VALUE}"}}"#),
                    ),
                    ("call_x", "drop_tables", r#"{"all":true}"#),
                ]);
                let mut r = Response::new(Body::from(body));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r
            }
        }),
    ))
    .await;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.toml");
    std::fs::write(&path, config_text(&up, receiver.port())).unwrap();
    let config = toolgate::config::Config::load(&path).unwrap();
    let store = toolgate_store::open_store(
        "sqlite::memory:",
        dir.path(),
        toolgate_store::StoreOptions::new(),
    )
    .unwrap();
    let gate = toolgate_store::StoreGate::from_config(&config, store).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let telemetry = Telemetry::start_with(
        &config,
        &toolgate_edge::config::TelemetryConfig::from_config(&config).unwrap(),
        LogSink::Buffer(Arc::clone(&log)),
    )
    .unwrap();
    let proxy = toolgate_proxy::Proxy::new(&config, gate)
        .unwrap()
        .with_telemetry(telemetry.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxied = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(toolgate_proxy::serve(l, proxy, std::future::pending()));

    // The agent's request, inside the agent's trace.
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let req = hyper::Request::post(format!("{proxied}/v1/chat/completions"))
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-test")
        .header("traceparent", format!("00-{AGENT_TRACE}-{AGENT_SPAN}-01"))
        .body(Full::new(Bytes::from(
            r#"{"model":"m","messages":[{"role":"user","content":"weather?"}]}"#,
        )))
        .unwrap();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let answer = res.into_body().collect().await.unwrap().to_bytes();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains("get_weather"), "{answer}");

    // Everything queued is exported, the metrics once more.
    telemetry.shutdown().await;
    let lines = receiver.collect(|seen| {
        spans(seen).len() >= 4
            && seen
                .iter()
                .any(|l| l["metric"] == "toolgate.stage.duration")
    });
    for l in &lines {
        assert!(l.get("error").is_none(), "the receiver refused a body: {l}");
    }
    let spans = spans(&lines);
    let proxy_span = spans
        .iter()
        .find(|s| s["span"] == "proxy request")
        .unwrap_or_else(|| panic!("no proxy span in {lines:?}"));
    // The proxy's span: a server span, child of the agent's.
    assert_eq!(proxy_span["trace_id"], AGENT_TRACE);
    assert_eq!(proxy_span["parent_span_id"], AGENT_SPAN);
    assert_eq!(proxy_span["kind"], 2, "SPAN_KIND_SERVER");
    assert_eq!(proxy_span["service"], "toolgate-test");
    assert_eq!(proxy_span["attributes"]["http.response.status_code"], 200);
    let proxy_span_id = proxy_span["span_id"].as_str().unwrap();

    // The upstream's parent is the proxy's span, in the agent's trace.
    assert_eq!(
        *seen_traceparents.lock().unwrap(),
        vec![Some(format!("00-{AGENT_TRACE}-{proxy_span_id}-01"))]
    );

    // One child span per decision, with the GenAI and toolgate attributes.
    let decision = |call: &str| {
        spans
            .iter()
            .find(|s| s["attributes"]["gen_ai.tool.call.id"] == call)
            .unwrap_or_else(|| panic!("no span for {call} in {lines:?}"))
    };
    for (call, tool, verdict) in [
        ("call_w", "get_weather", "allow"),
        ("call_n", "notify", "allow"),
        ("call_x", "drop_tables", "deny"),
    ] {
        let s = decision(call);
        assert_eq!(s["span"], format!("execute_tool {tool}"));
        assert_eq!(s["trace_id"], AGENT_TRACE);
        assert_eq!(s["parent_span_id"], proxy_span_id);
        assert_eq!(s["kind"], 1, "SPAN_KIND_INTERNAL");
        let a = &s["attributes"];
        assert_eq!(a["gen_ai.operation.name"], "execute_tool");
        assert_eq!(a["gen_ai.tool.name"], tool);
        assert_eq!(a["gen_ai.tool.type"], "function");
        assert_eq!(a["toolgate.verdict"], verdict);
        assert_eq!(a["toolgate.surface"], "proxy");
    }
    let denied = &decision("call_x")["attributes"];
    assert_eq!(denied["toolgate.code"], "unknown_tool");
    assert_eq!(decision("call_x")["status"], 2, "STATUS_CODE_ERROR");
    // Arguments: none for a tool not listed; a listed tool's redacted.
    assert!(decision("call_w")["attributes"]
        .get("gen_ai.tool.call.arguments")
        .is_none());
    assert_eq!(
        decision("call_n")["attributes"]["gen_ai.tool.call.arguments"],
        r#"{"to":"ops","token":"[redacted]"}"#
    );
    // No argument value of an unlisted tool, and no secret, in any body sent.
    for l in &lines {
        if let Some(raw) = l["raw"].as_str() {
            assert!(!raw.contains(PLAIN_VALUE), "an argument value was exported");
            assert!(!raw.contains(SECRET_VALUE), "a secret was exported");
        }
    }
    // The OTLP metrics: decisions and the per-stage latency.
    for name in ["toolgate.decisions", "toolgate.stage.duration"] {
        assert!(
            lines.iter().any(|l| l["metric"] == name),
            "no metric {name} in {lines:?}"
        );
    }

    // The decision log: one JSON line per decision, with its span's ids.
    let log = String::from_utf8(log.lock().unwrap().clone()).unwrap();
    assert!(
        !log.contains(PLAIN_VALUE) && !log.contains(SECRET_VALUE),
        "{log}"
    );
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{log}");
    for e in &events {
        assert_eq!(e["event"], "decision");
        assert_eq!(e["level"], "info");
        assert_eq!(e["surface"], "proxy");
        assert_eq!(e["trace_id"], AGENT_TRACE);
        let call = e["call_id"].as_str().unwrap();
        assert_eq!(e["span_id"], decision(call)["span_id"], "{e}");
        assert_eq!(
            e["verdict"],
            decision(call)["attributes"]["toolgate.verdict"]
        );
    }
}

/// An event stream of one `get_weather` call, as OpenAI streams it.
fn sse_body() -> String {
    let chunk = |delta: &str, finish: &str| {
        format!("data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n")
    };
    let mut out = chunk(r#"{"role":"assistant","content":null}"#, "null");
    out.push_str(&chunk(
        &format!(
            r#"{{"tool_calls":[{{"index":0,"id":"call_s","type":"function","function":{{"name":"get_weather","arguments":"{{\"city\":\"{PLAIN_VALUE}\"}}"}}}}]}}"#
        ),
        "null",
    ));
    out.push_str(&chunk("{}", "\"tool_calls\""));
    out.push_str("data: [DONE]\n\n");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_answers_decision_is_a_child_of_the_proxys_span() {
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Http) else {
        return;
    };
    let up = listen(Router::new().route(
        "/v1/chat/completions",
        post(|| async {
            let mut r = Response::new(Body::from(sse_body()));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            r
        }),
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.toml");
    std::fs::write(&path, config_text(&up, receiver.port())).unwrap();
    let config = toolgate::config::Config::load(&path).unwrap();
    let store = toolgate_store::open_store(
        "sqlite::memory:",
        dir.path(),
        toolgate_store::StoreOptions::new(),
    )
    .unwrap();
    let gate = toolgate_store::StoreGate::from_config(&config, store).unwrap();
    let telemetry = Telemetry::start_with(
        &config,
        &toolgate_edge::config::TelemetryConfig::from_config(&config).unwrap(),
        LogSink::Buffer(Arc::default()),
    )
    .unwrap();
    let proxy = toolgate_proxy::Proxy::new(&config, gate)
        .unwrap()
        .with_telemetry(telemetry.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxied = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(toolgate_proxy::serve(l, proxy, std::future::pending()));
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let req = hyper::Request::post(format!("{proxied}/v1/chat/completions"))
        .header("content-type", "application/json")
        .header("traceparent", format!("00-{AGENT_TRACE}-{AGENT_SPAN}-01"))
        .body(Full::new(Bytes::from(
            r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"weather?"}]}"#,
        )))
        .unwrap();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.status(), 200);
    // The whole stream read: the pump has decided and ended its span.
    let streamed = res.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&streamed).contains("get_weather"));
    telemetry.shutdown().await;
    let lines = receiver.collect(|seen| spans(seen).len() >= 2);
    let spans = spans(&lines);
    let proxy_span = spans
        .iter()
        .find(|s| s["span"] == "proxy request")
        .unwrap_or_else(|| panic!("no proxy span in {lines:?}"));
    assert_eq!(proxy_span["parent_span_id"], AGENT_SPAN);
    let decision = spans
        .iter()
        .find(|s| s["attributes"]["gen_ai.tool.call.id"] == "call_s")
        .unwrap_or_else(|| panic!("no decision span in {lines:?}"));
    assert_eq!(decision["trace_id"], AGENT_TRACE);
    assert_eq!(decision["parent_span_id"], proxy_span["span_id"]);
    assert_eq!(decision["attributes"]["toolgate.verdict"], "allow");
    for l in &lines {
        if let Some(raw) = l["raw"].as_str() {
            assert!(!raw.contains(PLAIN_VALUE), "an argument value was exported");
        }
    }
}

/// Starts a proxy whose `openai` upstream is `up`, exporting to `receiver`;
/// its address and telemetry.
async fn proxy_to(up: &str, receiver: &OtlpReceiver, dir: &std::path::Path) -> (String, Telemetry) {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, config_text(up, receiver.port())).unwrap();
    let config = toolgate::config::Config::load(&path).unwrap();
    let store =
        toolgate_store::open_store("sqlite::memory:", dir, toolgate_store::StoreOptions::new())
            .unwrap();
    let gate = toolgate_store::StoreGate::from_config(&config, store).unwrap();
    let telemetry = Telemetry::start_with(
        &config,
        &toolgate_edge::config::TelemetryConfig::from_config(&config).unwrap(),
        LogSink::Buffer(Arc::default()),
    )
    .unwrap();
    let proxy = toolgate_proxy::Proxy::new(&config, gate)
        .unwrap()
        .with_telemetry(telemetry.clone());
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxied = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(toolgate_proxy::serve(l, proxy, std::future::pending()));
    (proxied, telemetry)
}

async fn ask(proxied: &str) -> u16 {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let req = hyper::Request::post(format!("{proxied}/v1/chat/completions"))
        .header("content-type", "application/json")
        .header("traceparent", format!("00-{AGENT_TRACE}-{AGENT_SPAN}-01"))
        .body(Full::new(Bytes::from(
            r#"{"model":"m","messages":[{"role":"user","content":"weather?"}]}"#,
        )))
        .unwrap();
    let res = client.request(req).await.unwrap();
    let status = res.status().as_u16();
    let _ = res.into_body().collect().await;
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_request_s_span_has_error_status() {
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Http) else {
        return;
    };
    // An upstream that fails, and one that is not there at all.
    let failing = listen(Router::new().route(
        "/v1/chat/completions",
        post(|| async {
            let mut r = Response::new(Body::from(r#"{"error":{"message":"boom"}}"#));
            *r.status_mut() = axum::http::StatusCode::INTERNAL_SERVER_ERROR;
            r
        }),
    ))
    .await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, ta) = proxy_to(&failing, &receiver, &dir.path().join("a")).await;
    let (b, tb) = proxy_to(&closed, &receiver, &dir.path().join("b")).await;
    assert_eq!(ask(&a).await, 500);
    assert_eq!(ask(&b).await, 502);
    ta.shutdown().await;
    tb.shutdown().await;
    let lines = receiver.collect(|seen| {
        spans(seen)
            .iter()
            .filter(|s| s["span"] == "proxy request")
            .count()
            >= 2
    });
    let requests: Vec<_> = spans(&lines)
        .into_iter()
        .filter(|s| s["span"] == "proxy request")
        .collect();
    let by_status = |code: i64| {
        requests
            .iter()
            .find(|s| s["attributes"]["http.response.status_code"] == code)
            .unwrap_or_else(|| panic!("no {code} span in {lines:?}"))
    };
    // The upstream's own 500, passed on: an error named by its status.
    let passed = by_status(500);
    assert_eq!(passed["status"], 2, "STATUS_CODE_ERROR: {passed}");
    assert_eq!(passed["attributes"]["error.type"], "500");
    // The upstream unreachable: an error named by toolgate's code.
    let unreachable = by_status(502);
    assert_eq!(unreachable["status"], 2, "STATUS_CODE_ERROR: {unreachable}");
    assert_eq!(
        unreachable["attributes"]["error.type"],
        "upstream_unreachable"
    );
    assert_eq!(unreachable["status_message"], "upstream_unreachable");
}

/// [`ask`] with `stream: true`: the status and the whole body.
async fn ask_streamed(proxied: &str) -> (u16, String) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let req = hyper::Request::post(format!("{proxied}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"weather?"}]}"#,
        )))
        .unwrap();
    let res = client.request(req).await.unwrap();
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_breaks_after_its_200_marks_the_span_failed() {
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Http) else {
        return;
    };
    // An upstream whose stream ends before its terminal event: the client
    // already has its 200 when the proxy ends the stream with an error.
    let cut = listen(Router::new().route(
        "/v1/chat/completions",
        post(|| async {
            let chunk = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Sun"},"finish_reason":null}]}"#;
            let mut r = Response::new(Body::from(format!("data: {chunk}\n\n")));
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            r
        }),
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (proxied, telemetry) = proxy_to(&cut, &receiver, dir.path()).await;
    let (status, body) = ask_streamed(&proxied).await;
    assert_eq!(status, 200);
    assert!(body.contains("stream_refused"), "{body}");
    telemetry.shutdown().await;
    let lines = receiver.collect(|seen| spans(seen).iter().any(|s| s["span"] == "proxy request"));
    let request = spans(&lines)
        .into_iter()
        .find(|s| s["span"] == "proxy request")
        .unwrap();
    assert_eq!(request["status"], 2, "STATUS_CODE_ERROR: {request}");
    assert_eq!(request["attributes"]["error.type"], "stream_refused");
}
