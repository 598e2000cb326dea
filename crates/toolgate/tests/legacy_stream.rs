//! A Chat Completions stream's legacy `delta.function_call` (the form
//! before `tool_calls`) is a call like any other: assembled from its
//! fragments, decided, and refused when its fragments contradict each
//! other. Before, such a stream had no call to decide and the proxies
//! could only refuse it whole.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate::adapter::{read, Arguments, ErrorCode};
use toolgate::Format;

fn stream(deltas: &[&str], finish: &str) -> String {
    let mut out = String::new();
    for d in deltas {
        out.push_str(&format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{d},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    out.push_str(&format!(
        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{finish}\"}}]}}\n\ndata: [DONE]\n\n"
    ));
    out
}

#[test]
fn fragments_of_a_legacy_function_call_make_one_call() {
    let body = stream(
        &[
            r#"{"role":"assistant","content":null,"function_call":{"name":"search","arguments":""}}"#,
            r#"{"function_call":{"arguments":"{\"query\": "}}"#,
            r#"{"function_call":{"arguments":"\"boots\"}"}}"#,
        ],
        "function_call",
    );
    let envelope = read(body.as_bytes(), Format::OpenAiChat).unwrap();
    assert_eq!(envelope.calls.len(), 1);
    let call = &envelope.calls[0];
    assert_eq!(call.name, "search");
    assert_eq!(call.call_id, None);
    assert_eq!(
        call.arguments,
        Arguments::Text(r#"{"query": "boots"}"#.to_owned())
    );
    assert!(
        call.pointer.ends_with("/delta/function_call"),
        "{}",
        call.pointer
    );
    // A finish that promised calls found one: no `calls_expected`.
    assert!(envelope.findings.is_empty(), "{:?}", envelope.findings);
}

#[test]
fn a_legacy_call_beside_tool_calls_is_one_more_call() {
    let body = stream(
        &[
            r#"{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_order","arguments":"{\"order_id\":\"ord_1001\"}"}}]}"#,
            r#"{"function_call":{"name":"search","arguments":"{\"query\":\"x\"}"}}"#,
        ],
        "tool_calls",
    );
    let envelope = read(body.as_bytes(), Format::OpenAiChat).unwrap();
    let names: Vec<&str> = envelope.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["get_order", "search"]);
}

#[test]
fn contradicting_legacy_fragments_refuse_the_stream() {
    // A second, different name for the same call.
    let renamed = stream(
        &[
            r#"{"function_call":{"name":"search","arguments":"{}"}}"#,
            r#"{"function_call":{"name":"refund"}}"#,
        ],
        "function_call",
    );
    let err = read(renamed.as_bytes(), Format::OpenAiChat).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StreamProtocol);
    assert!(
        err.pointer().ends_with("/function_call/name"),
        "{}",
        err.pointer()
    );
    // A `tool_calls` index that would share the legacy call's slot.
    let shared = stream(
        &[
            r#"{"function_call":{"name":"search","arguments":"{}"}}"#,
            r#"{"tool_calls":[{"index":18446744073709551615,"function":{"name":"refund","arguments":"{}"}}]}"#,
        ],
        "function_call",
    );
    let err = read(shared.as_bytes(), Format::OpenAiChat).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StreamProtocol);
    // Members of the wrong type are refused, not skipped.
    let wrong = stream(
        &[r#"{"function_call":{"name":"search","arguments":{}}}"#],
        "function_call",
    );
    assert!(read(wrong.as_bytes(), Format::OpenAiChat).is_err());
    let wrong = stream(&[r#"{"function_call":"search"}"#], "function_call");
    assert!(read(wrong.as_bytes(), Format::OpenAiChat).is_err());
}

#[test]
fn a_legacy_call_with_no_name_is_refused() {
    let body = stream(
        &[r#"{"function_call":{"arguments":"{}"}}"#],
        "function_call",
    );
    let err = read(body.as_bytes(), Format::OpenAiChat).unwrap_err();
    assert_eq!(err.code(), ErrorCode::MissingField);
}
