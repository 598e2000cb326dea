//! A whole response parsed once (issue 35): the gate decides the envelope
//! the adapter read from the parsed tree, and the rewrite rebuilds that
//! tree. Decisions and output are exactly the text path's, for every shop
//! response in every API's shape, for refused bodies, and with markup
//! stripped or not.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate::config::Config;
use toolgate::{Context, Gate};
use toolgate_proxy::{rewrite_json, rewrite_parsed, Api};
use toolgate_testkit::{shop_dir, shop_file};

const APIS: [Api; 3] = [Api::ChatCompletions, Api::Responses, Api::Messages];

fn gate() -> Gate {
    let config = Config::load(shop_file("toolgate.toml")).unwrap();
    Gate::from_config(&config).unwrap()
}

/// Bodies of every shape: the shop's responses and a few made here.
fn bodies() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(shop_dir().join("responses")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) == Some("json") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
    assert!(out.len() >= 10, "the shop's responses are read");
    for (name, body) in [
        (
            "two chat calls, one denied, one unknown tool",
            r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"ok","tool_calls":[{"id":"a","type":"function","function":{"name":"search","arguments":"{\"query\": \"socks\", \"limit\": 2}"}},{"id":"b","type":"function","function":{"name":"drop_tables","arguments":"{}"}}]}}]}"#,
        ),
        (
            "a legacy function_call",
            r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"finish_reason":"function_call","message":{"role":"assistant","content":null,"function_call":{"name":"search","arguments":"{\"query\":\"x\"}"}}}]}"#,
        ),
        (
            "an upstream toolgate member and an off-list item",
            r#"{"id":"r","object":"response","status":"completed","toolgate":{"verdict":"allow"},"output":[{"type":"program","id":"p"},{"type":"function_call","id":"fc","call_id":"c1","name":"search","arguments":"{\"query\":\"x\"}"}]}"#,
        ),
        (
            "a duplicate key inside the arguments",
            r#"{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"search","input":{"query":"a","query":"b"}}],"stop_reason":"tool_use"}"#,
        ),
        ("not a response", r#"{"model":"m","messages":[]}"#),
    ] {
        out.push((name.to_owned(), body.as_bytes().to_vec()));
    }
    out
}

#[test]
fn the_parsed_path_decides_and_rewrites_as_the_text_path_does() {
    let gate = gate();
    let options = gate_options();
    let context = Context::new("alice", "s", 1);
    let mut compared = 0;
    for (name, body) in bodies() {
        for api in APIS {
            for strip in [false, true] {
                let text_decisions = gate.decide(&body, api.format(), &context, &context);
                let Ok(parsed) = options.parse_exact(&body) else {
                    // Refused by the strict parse: the proxy takes the
                    // text path, which refuses it too.
                    assert!(
                        toolgate_json::from_slice(&body).is_err(),
                        "{name}: the exact parse refuses only what the strict one does"
                    );
                    continue;
                };
                let envelope = match options.read_parsed(&parsed, api.format()) {
                    Ok(e) => e,
                    Err(e) => {
                        // Not read: the text path refuses it the same way.
                        let rejected = text_decisions.rejected().unwrap();
                        assert_eq!(rejected.code.as_str(), e.code().as_str(), "{name}");
                        continue;
                    }
                };
                let once = gate.decide_envelope(&envelope, &context, &context);
                assert_eq!(once, text_decisions, "{name} as {api:?}");
                let text_out = rewrite_json(api, &body, &envelope, &text_decisions, &[], strip);
                let once_out = rewrite_parsed(api, parsed, &envelope, &once, &[], strip);
                assert_eq!(once_out, text_out, "{name} as {api:?}, strip {strip}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 20, "{compared} bodies compared");
}

/// The proxy's adapter options: the gate's, from its config.
fn gate_options() -> toolgate::AdapterOptions {
    Config::load(shop_file("toolgate.toml"))
        .unwrap()
        .gate()
        .adapter_options()
}

/// A number its double does not hold (a log probability written with too
/// many digits) is refused by the exact parse; the proxy then takes the
/// text path, whose rewrite refuses the body: nothing rounded is handed
/// on, as before the body was parsed once.
#[test]
fn a_body_the_exact_parse_refuses_is_refused_by_the_text_rewrite() {
    let body = br#"{"id":"c","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","logprobs":{"content":[{"token":"a","logprob":-0.30000000000000000001,"bytes":[97],"top_logprobs":[]}]},"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"search","arguments":"{\"query\":\"x\"}"}}]}}]}"#;
    let options = gate_options();
    assert_eq!(
        options.parse_exact(body).unwrap_err().code().as_str(),
        "number_too_precise"
    );
    let gate = gate();
    let context = Context::new("alice", "s", 1);
    let decisions = gate.decide(body, Api::ChatCompletions.format(), &context, &context);
    assert!(
        decisions.rejected().is_none(),
        "the gate reads it (rounded)"
    );
    let envelope = options.read(body, Api::ChatCompletions.format()).unwrap();
    let refused = rewrite_json(
        Api::ChatCompletions,
        body,
        &envelope,
        &decisions,
        &[],
        false,
    )
    .unwrap_err();
    assert_eq!(refused.code, "response_refused");
}
