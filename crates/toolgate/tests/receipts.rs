//! Signed receipts from the attacker's side: the executor's `verify` passes
//! only the gate's own receipt of an allow, for that tool, for exactly those
//! canonical arguments, before its expiry; a forged, altered, expired,
//! denied, other-tool, other-arguments or other-key receipt is refused with
//! its own code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use toolgate::config::Config;
use toolgate::receipt::{self, ReceiptError, ReceiptKey, ReceiptPublicKey};
use toolgate::{Code, Context, Decision, Format, Gate, Verdict};
use toolgate_json::{canonical, Value};

const TOOLS: &str = r#"
[[tool]]
name = "refund"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"amount_cents":{"type":"integer","maximum":10000}},"required":["order_id","amount_cents"],"additionalProperties":false}'

[[tool]]
name = "lookup"
risk = "read"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"}},"additionalProperties":false}'
"#;

const T0: u64 = 1_767_225_600;

fn json_string(s: &str) -> String {
    canonical::to_string(&Value::String(Cow::Borrowed(s)))
}

fn body(tool: &str, args: &str) -> String {
    format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":{},"arguments":{}}}}}]}}}}]}}"#,
        json_string(tool),
        json_string(args)
    )
}

/// A gate signing with seed `seed`, its receipt clock at `clock`.
fn gate(seed: u8, clock: &Arc<AtomicU64>) -> Gate {
    let config = Config::parse(TOOLS, "receipts.toml").unwrap();
    let clock = Arc::clone(clock);
    Gate::builder(config.registry().clone())
        .gate_config(config.gate())
        .authorizer(toolgate::danger::NoAuthorization)
        .receipts(
            ReceiptKey::from_seed([seed; 32])
                .with_seconds(30)
                .with_clock(Arc::new(move || clock.load(Ordering::SeqCst))),
        )
        .build()
        .unwrap()
}

fn decide(gate: &Gate, tool: &str, args: &str) -> Decision {
    let ctx = Context::new("alice", "s-1", 1);
    let d = gate.decide(body(tool, args).as_bytes(), Format::Auto, &ctx, &ctx);
    d.into_decisions().remove(0)
}

fn clock() -> Arc<AtomicU64> {
    Arc::new(AtomicU64::new(T0))
}

#[test]
fn an_allowed_calls_receipt_verifies_for_its_tool_and_canonical_arguments() {
    let c = clock();
    let g = gate(1, &c);
    let key = g.receipt_public_key().unwrap();
    // The model wrote members out of order and with spaces: the receipt is
    // for the canonical text the executor is handed.
    let d = decide(
        &g,
        "refund",
        r#"{ "amount_cents": 500, "order_id": "o-1" }"#,
    );
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    let args = d.executable_args().unwrap();
    assert_eq!(args, r#"{"amount_cents":500,"order_id":"o-1"}"#);
    let r = d.receipt().unwrap();
    let claims = receipt::verify(r, "refund", args, &key, T0 + 29).unwrap();
    assert_eq!(claims.call_id.as_deref(), Some("call_1"));
    assert_eq!(claims.tool, "refund");
    assert_eq!(claims.verdict, Verdict::Allow);
    assert_eq!((claims.issued, claims.expires), (T0, T0 + 30));
    assert_eq!(claims.args, d.digest().unwrap().to_string());
    assert_eq!(d.receipt_claims(), Some(&claims));
}

#[test]
fn a_receipt_is_refused_for_other_arguments_another_tool_or_after_its_time() {
    let c = clock();
    let g = gate(1, &c);
    let key = g.receipt_public_key().unwrap();
    let d = decide(&g, "refund", r#"{"amount_cents":500,"order_id":"o-1"}"#);
    let r = d.receipt().unwrap();
    let args = d.executable_args().unwrap();
    let verify = |tool: &str, args: &str, now: u64| receipt::verify(r, tool, args, &key, now);
    // Other arguments: another amount, another order, the same value written
    // otherwise (not the canonical text), a trailing space.
    for other in [
        r#"{"amount_cents":5000,"order_id":"o-1"}"#,
        r#"{"amount_cents":500,"order_id":"o-2"}"#,
        r#"{"order_id":"o-1","amount_cents":500}"#,
        r#"{"amount_cents":500.0,"order_id":"o-1"}"#,
        r#"{"amount_cents":500,"order_id":"o-1"} "#,
    ] {
        assert_eq!(
            verify("refund", other, T0),
            Err(ReceiptError::OtherArguments),
            "{other}"
        );
    }
    // Another tool with the same arguments.
    assert_eq!(verify("lookup", args, T0), Err(ReceiptError::OtherTool));
    // Replayed after its time (the expiry itself is past).
    assert_eq!(verify("refund", args, T0 + 30), Err(ReceiptError::Expired));
    assert_eq!(verify("refund", args, u64::MAX), Err(ReceiptError::Expired));
    assert!(verify("refund", args, T0 + 29).is_ok());
}

#[test]
fn a_denied_or_held_call_has_a_receipt_that_never_passes() {
    let c = clock();
    let g = gate(1, &c);
    let key = g.receipt_public_key().unwrap();
    // Over the schema's maximum: denied, yet its arguments parsed.
    let d = decide(&g, "refund", r#"{"amount_cents":50000,"order_id":"o-1"}"#);
    assert_eq!(d.verdict(), Verdict::Deny);
    let r = d.receipt().unwrap();
    let canonical = d.canonical_args().unwrap();
    assert_eq!(
        receipt::verify(r, "refund", canonical, &key, T0),
        Err(ReceiptError::NotAllowed)
    );
    // Presenting the deny as an allow: the payload's verdict rewritten,
    // the signature kept.
    let forged = with_payload(r, |p| {
        p.replace(r#""verdict":"deny""#, r#""verdict":"allow""#)
    });
    assert_ne!(forged, r);
    assert_eq!(
        receipt::verify(&forged, "refund", canonical, &key, T0),
        Err(ReceiptError::BadSignature)
    );
    // A call held for a human's approval: its receipt does not let it run.
    let config = Config::parse(
        &TOOLS.replace("approval = \"none\"", "approval = \"required\""),
        "held.toml",
    )
    .unwrap();
    let held_gate = Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .receipts(ReceiptKey::from_seed([1; 32]))
        .build()
        .unwrap();
    let held = decide(
        &held_gate,
        "refund",
        r#"{"amount_cents":5,"order_id":"o-1"}"#,
    );
    assert_eq!(held.verdict(), Verdict::NeedsApproval);
    let now = held.receipt_claims().unwrap().issued;
    assert_eq!(
        receipt::verify(
            held.receipt().unwrap(),
            "refund",
            held.canonical_args().unwrap(),
            &key,
            now
        ),
        Err(ReceiptError::NotAllowed)
    );
    // Arguments that never parsed: no digest, no receipt.
    let d = decide(&g, "refund", r#"{"amount_cents":1,"amount_cents":2}"#);
    assert_eq!(d.verdict(), Verdict::Deny);
    assert_eq!(d.receipt(), None);
}

#[test]
fn an_allow_denied_after_the_gate_decided_carries_a_deny_receipt() {
    let c = clock();
    let g = gate(1, &c);
    let key = g.receipt_public_key().unwrap();
    let mut d = decide(&g, "lookup", r#"{"order_id":"o-1"}"#);
    assert_eq!(d.verdict(), Verdict::Allow);
    let args = d.canonical_args().unwrap().to_owned();
    let before = d.receipt().unwrap().to_owned();
    assert!(receipt::verify(&before, "lookup", &args, &key, T0).is_ok());
    // The store failed after the gate decided: the decision is a deny now,
    // and so is what its receipt says (same times, never longer).
    c.store(T0 + 5, Ordering::SeqCst);
    g.deny_after(&mut d, Code::StoreUnavailable);
    let after = d.receipt().unwrap();
    assert_eq!(
        receipt::verify(after, "lookup", &args, &key, T0),
        Err(ReceiptError::NotAllowed)
    );
    let claims = d.receipt_claims().unwrap();
    assert_eq!((claims.issued, claims.expires), (T0, T0 + 30));
}

#[test]
fn forged_altered_and_other_key_receipts_are_refused() {
    let c = clock();
    let g = gate(1, &c);
    let key = g.receipt_public_key().unwrap();
    let d = decide(&g, "refund", r#"{"amount_cents":500,"order_id":"o-1"}"#);
    let r = d.receipt().unwrap();
    let args = d.executable_args().unwrap();
    let verify =
        |receipt: &str, key: &ReceiptPublicKey| receipt::verify(receipt, "refund", args, key, T0);
    // Another gate's key signed it (or the executor holds another key).
    let other = gate(2, &c);
    let other_key = other.receipt_public_key().unwrap();
    assert_eq!(verify(r, &other_key), Err(ReceiptError::BadSignature));
    let theirs = decide(&other, "refund", r#"{"amount_cents":500,"order_id":"o-1"}"#);
    assert_eq!(
        verify(theirs.receipt().unwrap(), &key),
        Err(ReceiptError::BadSignature)
    );
    // A payload the attacker wrote (a later expiry), with the old signature.
    let later = with_payload(r, |p| {
        p.replace(&(T0 + 30).to_string(), &(T0 + 99_999).to_string())
    });
    assert_eq!(verify(&later, &key), Err(ReceiptError::BadSignature));
    // A signature of zeros; one bit flipped.
    let (head, sig) = r.rsplit_once('.').unwrap();
    let zeros = format!("{head}.{}", URL_SAFE_NO_PAD.encode([0_u8; 64]));
    assert_eq!(verify(&zeros, &key), Err(ReceiptError::BadSignature));
    let mut bytes = URL_SAFE_NO_PAD.decode(sig).unwrap();
    bytes[10] ^= 1;
    let flipped = format!("{head}.{}", URL_SAFE_NO_PAD.encode(&bytes));
    assert_eq!(verify(&flipped, &key), Err(ReceiptError::BadSignature));
    // Not a receipt at all.
    let huge = format!("tgr1.{}.x", "A".repeat(5000));
    for junk in [
        "",
        "tgr1",
        "tgr1..",
        "tgr2.e30.AAAA",
        &format!("{r}.extra"),
        &r.replacen("tgr1", "tgr0", 1),
        &format!("{head}.not*base64"),
        &huge,
    ] {
        assert_eq!(
            verify(junk, &key),
            Err(ReceiptError::Malformed),
            "{junk:.40}"
        );
    }
}

#[test]
fn an_altered_payload_fails_on_its_signature_before_it_is_read() {
    let c = clock();
    let g = gate(1, &c);
    let key = g.receipt_public_key().unwrap();
    let d = decide(&g, "lookup", r#"{"order_id":"o-1"}"#);
    let r = d.receipt().unwrap();
    let bad = with_payload(r, |p| p.replace(r#""v":1"#, r#""v":2"#));
    // Altered payload: the signature no longer holds, checked first.
    assert_eq!(
        receipt::verify(&bad, "lookup", d.canonical_args().unwrap(), &key, T0),
        Err(ReceiptError::BadSignature)
    );
}

#[test]
fn the_config_names_the_key_and_the_validity() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.key"), format!("{}\n", "ab".repeat(32))).unwrap();
    let toml = format!("[gate]\nreceipt_key = \"r.key\"\nreceipt_seconds = 5\n\n[authorization]\nmode = \"none\"\n{TOOLS}");
    let path = dir.path().join("toolgate.toml");
    let config = Config::parse(&toml, &path).unwrap();
    assert_eq!(config.receipts().unwrap().seconds(), 5);
    let g = Gate::from_config(&config).unwrap();
    let expected = ReceiptKey::from_seed([0xab; 32]).public_key();
    assert_eq!(g.receipt_public_key(), Some(expected));
    let d = decide(&g, "lookup", r#"{"order_id":"o-1"}"#);
    let claims = d.receipt_claims().unwrap();
    assert_eq!(claims.expires - claims.issued, 5);

    // Refused: seconds out of range or without a key; a key file that is
    // missing or not 64 hex digits.
    for (bad, code) in [
        (
            "[gate]\nreceipt_key = \"r.key\"\nreceipt_seconds = 0\n",
            "invalid_limit",
        ),
        (
            "[gate]\nreceipt_key = \"r.key\"\nreceipt_seconds = 3601\n",
            "invalid_limit",
        ),
        ("[gate]\nreceipt_seconds = 5\n", "missing_key"),
    ] {
        let e = Config::parse(bad, &path).unwrap_err();
        assert_eq!(e.code().as_str(), code, "{bad}");
    }
    std::fs::write(dir.path().join("short.key"), "abcd").unwrap();
    for file in ["absent.key", "short.key"] {
        let toml =
            format!("[gate]\nreceipt_key = \"{file}\"\n\n[authorization]\nmode = \"none\"\n");
        let config = Config::parse(&toml, &path).unwrap();
        let e = Gate::from_config(&config).err().unwrap();
        assert!(matches!(e, toolgate::FromConfigError::Receipts(_)), "{e:?}");
        let source = std::error::Error::source(&e).unwrap().to_string();
        assert!(source.contains(file), "{source}");
        assert!(!source.contains("abcd"), "{source}");
    }
    // No key: no receipts, and the answer's shape is as before.
    let plain =
        Config::parse(&format!("[authorization]\nmode = \"none\"\n{TOOLS}"), &path).unwrap();
    let g = Gate::from_config(&plain).unwrap();
    assert_eq!(g.receipt_public_key(), None);
    let d = decide(&g, "lookup", r#"{"order_id":"o-1"}"#);
    assert_eq!(d.receipt(), None);
}

/// `receipt` with its payload rewritten by `f` and its signature kept.
fn with_payload(receipt: &str, f: impl Fn(&str) -> String) -> String {
    let mut parts = receipt.split('.');
    let (prefix, payload, sig) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
    let changed = f(&text);
    assert_ne!(changed, text, "the rewrite changed nothing");
    format!(
        "{prefix}.{}.{sig}",
        URL_SAFE_NO_PAD.encode(changed.as_bytes())
    )
}
