//! The export never holds a request up (a receiver that never answers: the
//! queue fills, spans are dropped and counted), the sampling follows the
//! caller's `traceparent`, and a malformed trace context starts a trace of
//! toolgate's own rather than being trusted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::net::TcpListener;

use http::{HeaderMap, HeaderValue};
use toolgate::config::Config;
use toolgate_telemetry::{LogSink, Telemetry};

const PARENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

/// A receiver that accepts connections and never answers; kept open while
/// the listener lives.
fn silent_receiver() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let accepting = l.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in accepting.incoming() {
            match c {
                Ok(c) => held.push(c),
                Err(_) => break,
            }
        }
    });
    (l, port)
}

fn config(telemetry: &str) -> Config {
    Config::parse(
        &format!(
            "[[tool]]\nname = \"get\"\nrisk = \"read\"\nschema = {{ type = \"object\" }}\n\n[telemetry]\n{telemetry}\n"
        ),
        "/tmp/toolgate.toml",
    )
    .unwrap()
}

fn start(telemetry: &str) -> Telemetry {
    let c = config(telemetry);
    Telemetry::start_with(
        &c,
        &toolgate_edge::config::TelemetryConfig::from_config(&c).unwrap(),
        LogSink::Buffer(Default::default()),
    )
    .unwrap()
}

fn with_traceparent(tp: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("traceparent", HeaderValue::from_str(tp).unwrap());
    h
}

/// `00-TRACE-SPAN-FLAGS` → (trace, span, flags).
fn parts(tp: &str) -> (String, String, String) {
    let p: Vec<&str> = tp.split('-').collect();
    assert_eq!(p.len(), 4, "{tp}");
    assert_eq!(p[0], "00", "{tp}");
    (p[1].to_owned(), p[2].to_owned(), p[3].to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_never_answers_drops_spans_and_holds_nothing_up() {
    let (_listener, port) = silent_receiver();
    let t = start(&format!(
        "endpoint = \"http://127.0.0.1:{port}\"\nqueue_size = 4\nmetrics_seconds = 0"
    ));
    // The export task is stuck in its first request (the receiver never
    // answers, the export waits up to its timeout); every span still ends
    // at once: at most the queue and the batch in flight are kept.
    for _ in 0..200 {
        let span = t.request("decide", &HeaderMap::new());
        span.attribute("url.path", "/v1/decide");
        drop(span);
    }
    // Kept at most: one batch taken from the queue (at most its 4) and the
    // 4 queued behind it.
    let dropped = t.dropped_spans();
    assert!((192..=200).contains(&dropped), "dropped {dropped}");
    assert_eq!(t.exported_spans(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_follows_the_callers_decision_and_the_ratio_for_new_traces() {
    let (_listener, port) = silent_receiver();
    let none = start(&format!(
        "endpoint = \"http://127.0.0.1:{port}\"\nsample_ratio = 0.0\nmetrics_seconds = 0"
    ));
    // A trace that starts here: not kept at ratio 0, yet passed on.
    let (trace, _, flags) = parts(
        &none
            .request("decide", &HeaderMap::new())
            .traceparent()
            .unwrap(),
    );
    assert_ne!(trace, "0".repeat(32));
    assert_eq!(flags, "00");
    // A caller's sampled trace is kept whatever the ratio, and continued.
    let span = none.request(
        "decide",
        &with_traceparent(&format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01")),
    );
    let (trace, child, flags) = parts(&span.traceparent().unwrap());
    assert_eq!((trace.as_str(), flags.as_str()), (PARENT_TRACE, "01"));
    assert_ne!(
        child, PARENT_SPAN,
        "toolgate's span is passed on, not the caller's"
    );
    assert_eq!(span.ids().unwrap(), (PARENT_TRACE.to_owned(), child));

    // At ratio 1, a caller's unsampled trace stays unsampled.
    let all = start(&format!(
        "endpoint = \"http://127.0.0.1:{port}\"\nmetrics_seconds = 0"
    ));
    let (trace, _, flags) = parts(
        &all.request(
            "decide",
            &with_traceparent(&format!("00-{PARENT_TRACE}-{PARENT_SPAN}-00")),
        )
        .traceparent()
        .unwrap(),
    );
    assert_eq!((trace.as_str(), flags.as_str()), (PARENT_TRACE, "00"));
    // An MCP frame's `_meta` carries the same text.
    let (trace, _, flags) = parts(
        &all.frame(
            "mcp tools/call",
            Some(&format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01")),
            None,
        )
        .traceparent()
        .unwrap(),
    );
    assert_eq!((trace.as_str(), flags.as_str()), (PARENT_TRACE, "01"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_trace_context_starts_a_trace_of_its_own() {
    let (_listener, port) = silent_receiver();
    let t = start(&format!(
        "endpoint = \"http://127.0.0.1:{port}\"\nmetrics_seconds = 0"
    ));
    let long = format!("00-{}-{PARENT_SPAN}-01", "a".repeat(4096));
    for bad in [
        "garbage",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        long.as_str(),
    ] {
        let tp = t
            .request("decide", &with_traceparent(bad))
            .traceparent()
            .unwrap();
        let (trace, _, _) = parts(&tp);
        assert_ne!(trace, PARENT_TRACE, "{bad} was trusted");
        assert_ne!(trace, "0".repeat(32), "{bad}");
        let tp = t
            .frame("mcp tools/call", Some(bad), None)
            .traceparent()
            .unwrap();
        assert_ne!(parts(&tp).0, PARENT_TRACE, "{bad} was trusted in _meta");
    }
}

#[test]
fn off_records_nothing_and_passes_nothing_on() {
    let c = config("");
    let t = Telemetry::start(&c).unwrap();
    assert!(!t.is_on());
    let span = t.request(
        "decide",
        &with_traceparent(&format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01")),
    );
    assert_eq!(span.traceparent(), None);
    let mut headers = with_traceparent("keep");
    span.inject(&mut headers);
    assert_eq!(
        headers["traceparent"], "keep",
        "off leaves the caller's header alone"
    );
}

#[cfg(not(feature = "grpc"))]
#[tokio::test]
async fn grpc_without_the_feature_is_refused_at_start() {
    let c = config("endpoint = \"http://127.0.0.1:4317\"\nprotocol = \"grpc\"");
    let e = Telemetry::start(&c).unwrap_err().to_string();
    assert!(e.contains("`grpc` feature"), "{e}");
}
