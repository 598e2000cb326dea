//! `toolgate mcp --listen` inside the client's trace, with spans received
//! by a real OTLP/HTTP receiver (`toolgate_testkit::OtlpReceiver`): a
//! `tools/call` POSTed with an HTTP `traceparent` header (and no
//! `_meta.traceparent`) makes toolgate's span a child of the header's; when
//! the call also carries `params._meta.traceparent`, `_meta` wins (the
//! message's own context); and the call forwarded upstream carries
//! toolgate's span.
//!
//! Needs a Python with `mcp==2.3.0` and `opentelemetry-proto` (the test
//! environment `.ci/run` makes); without one each test says `SKIPPED`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod mcp_support;

use mcp_support::endpoint::{shop, stdio_upstream, Endpoint};
use mcp_support::sdk_python;
use toolgate_testkit::{otlp_spans, OtlpReceiver, OtlpTransport};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HEADER_SPAN: &str = "00f067aa0ba902b7";
const META_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const META_SPAN: &str = "b7ad6b7169203331";

fn call(id: u32, meta: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}}{meta}}}}}"#
    )
}

#[test]
fn a_posts_traceparent_header_parents_the_call_and_meta_wins_over_it() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => {
            toolgate_testkit::skip(&why);
            return;
        }
    };
    let Some(receiver) = OtlpReceiver::start(OtlpTransport::Http) else {
        return;
    };
    let dir = shop(
        "",
        &format!(
            "{}\n[telemetry]\nendpoint = \"{}\"\nmetrics_seconds = 0\n",
            stdio_upstream(&python),
            receiver.endpoint()
        ),
    );
    let endpoint = Endpoint::start(&dir);
    let sid = endpoint.initialize(mcp_support::endpoint::ALICE);
    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let header_tp = format!("00-{TRACE}-{HEADER_SPAN}-01");
    // The header only.
    let mut headers = session.to_vec();
    headers.push(("traceparent", &header_tp));
    let a = endpoint.post(&headers, &call(1, ""));
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains('5'), "{a:?}");
    // The header and `_meta`: `_meta` wins.
    let meta = format!(r#","_meta":{{"traceparent":"00-{META_TRACE}-{META_SPAN}-01"}}"#);
    let b = endpoint.post(&headers, &call(2, &meta));
    assert_eq!(b.status, 200, "{b:?}");
    // A malformed `_meta.traceparent` does not hide the header's.
    let bad = r#","_meta":{"traceparent":"00-not-a-trace-01"}"#;
    let c = endpoint.post(&headers, &call(3, bad));
    assert_eq!(c.status, 200, "{c:?}");

    let calls = |seen: &[serde_json::Value]| {
        otlp_spans(seen)
            .into_iter()
            .filter(|s| s["span"] == "mcp tools/call")
            .count()
    };
    let lines = receiver.collect(|seen| calls(seen) >= 3);
    let spans = otlp_spans(&lines);
    let call_spans: Vec<_> = spans
        .iter()
        .filter(|s| s["span"] == "mcp tools/call")
        .collect();
    assert_eq!(call_spans.len(), 3, "{lines:?}");
    let by_parent = |parent: &str| {
        call_spans
            .iter()
            .filter(|s| s["parent_span_id"] == parent)
            .count()
    };
    // Calls 1 and 3 sit under the header's span, call 2 under `_meta`'s.
    assert_eq!(by_parent(HEADER_SPAN), 2, "{call_spans:?}");
    assert_eq!(by_parent(META_SPAN), 1, "{call_spans:?}");
    for s in &call_spans {
        let trace = if s["parent_span_id"] == META_SPAN {
            META_TRACE
        } else {
            TRACE
        };
        assert_eq!(s["trace_id"], trace, "{s}");
        // Each call's decision is the call span's child.
        let decision = spans
            .iter()
            .find(|d| d["parent_span_id"] == s["span_id"] && d["span"] == "execute_tool add")
            .unwrap_or_else(|| panic!("no decision under {s} in {lines:?}"));
        assert_eq!(decision["attributes"]["toolgate.verdict"], "allow");
    }
}
