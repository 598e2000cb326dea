//! Black-box tests of signed receipts through the CLI: `toolgate check
//! --json` carries the receipt of each decision, `toolgate receipt
//! public-key` prints the key that verifies it, and `toolgate receipt
//! verify` lets only an allowed call's exact canonical arguments through.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

use cli_support::toolgate;
use toolgate_json::{canonical, Value};

const CONFIG: &str = r#"
[gate]
receipt_key = "receipts.key"
receipt_seconds = 120

[authorization]
mode = "none"

[[tool]]
name = "lookup"
risk = "read"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"n":{"type":"integer","maximum":5}},"additionalProperties":false}'
"#;

fn body(args: &str) -> String {
    let args = canonical::to_string(&Value::String(args.into()));
    format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_9","type":"function","function":{{"name":"lookup","arguments":{args}}}}}]}}}}]}}"#
    )
}

#[test]
fn check_json_carries_a_receipt_the_verifier_accepts_for_those_arguments_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("receipts.key"), "11".repeat(32)).unwrap();
    std::fs::write(d.join("toolgate.toml"), CONFIG).unwrap();
    std::fs::write(
        d.join("allow.json"),
        body(r#"{ "order_id": "o-1", "n": 2 }"#),
    )
    .unwrap();
    std::fs::write(d.join("deny.json"), body(r#"{"order_id":"o-1","n":9}"#)).unwrap();
    let config = d.join("toolgate.toml");
    let config = config.to_str().unwrap();

    let key = toolgate(&["receipt", "public-key", "--config", config]);
    assert!(key.status.success(), "{key:?}");
    let key = String::from_utf8(key.stdout).unwrap().trim().to_owned();
    assert_eq!(key.len(), 64);

    let run = |input: &str| {
        let out = toolgate(&[
            "check",
            "--no-store",
            "--json",
            "--config",
            config,
            d.join(input).to_str().unwrap(),
        ]);
        let line = String::from_utf8(out.stdout).unwrap();
        toolgate_json::from_str(line.trim()).unwrap().into_owned()
    };
    let allowed = run("allow.json");
    let decision = allowed.pointer("/decisions/0").unwrap();
    assert_eq!(
        decision.pointer("/verdict").unwrap().as_str(),
        Some("allow")
    );
    let receipt = decision
        .pointer("/receipt")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    // The executor runs the canonical form of `arguments`.
    let args = canonical::to_string(decision.pointer("/arguments").unwrap());
    assert_eq!(args, r#"{"n":2,"order_id":"o-1"}"#);
    std::fs::write(d.join("args"), &args).unwrap();
    std::fs::write(d.join("other"), r#"{"n":3,"order_id":"o-1"}"#).unwrap();
    std::fs::write(d.join("spaced"), r#"{ "n": 2, "order_id": "o-1" }"#).unwrap();

    let verify = |tool: &str, file: &str, receipt: &str, key: &str| {
        toolgate(&[
            "receipt",
            "verify",
            "--public-key",
            key,
            "--tool",
            tool,
            "--arguments",
            d.join(file).to_str().unwrap(),
            receipt,
        ])
    };
    let ok = verify("lookup", "args", &receipt, &key);
    assert!(ok.status.success(), "{ok:?}");
    let claims = toolgate_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(claims.pointer("/call_id").unwrap().as_str(), Some("call_9"));
    let (iat, exp) = (
        claims
            .pointer("/issued")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64()
            .unwrap(),
        claims
            .pointer("/expires")
            .unwrap()
            .as_number()
            .unwrap()
            .as_u64()
            .unwrap(),
    );
    assert_eq!(exp - iat, 120);

    let refused = |out: std::process::Output, code: &str| {
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(code), "{err}");
    };
    refused(
        verify("lookup", "other", &receipt, &key),
        "receipt_other_arguments",
    );
    refused(
        verify("lookup", "spaced", &receipt, &key),
        "receipt_other_arguments",
    );
    refused(
        verify("search", "args", &receipt, &key),
        "receipt_other_tool",
    );
    refused(
        verify("lookup", "args", &receipt, &"22".repeat(32)),
        "receipt_bad_signature",
    );

    // A denied call's receipt never passes.
    let denied = run("deny.json");
    let decision = denied.pointer("/decisions/0").unwrap();
    assert_eq!(decision.pointer("/verdict").unwrap().as_str(), Some("deny"));
    let deny_receipt = decision.pointer("/receipt").unwrap().as_str().unwrap();
    std::fs::write(d.join("denied"), r#"{"n":9,"order_id":"o-1"}"#).unwrap();
    refused(
        verify("lookup", "denied", deny_receipt, &key),
        "receipt_not_allowed",
    );

    // Usage errors exit 2.
    let bad = verify("lookup", "args", &receipt, "zz");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}
