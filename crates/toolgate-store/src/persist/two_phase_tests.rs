//! The two-phase path (`StoreGate::prepare`, `finish`): crate-private, so
//! its tests live here. Callers outside the crate reach it through
//! `decide_async`, `decide_envelope_async` and `decide_and_record_once`.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toolgate::config::Config;
use toolgate::{Context, Decisions, Format, Gate, Verdict};

use super::StoreGate;
use crate::{ApprovalFilter, ManualClock, SqliteOptions, SqliteStore, Store, Timestamp};

const CONFIG: &str = r#"
[gate]
escalate_after = 3

[authorization]
mode = "none"

[[tool]]
name = "refund"
risk = "destructive"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"amount":{"type":"integer"}},"required":["order_id","amount"],"additionalProperties":false}'

[[tool]]
name = "search"
risk = "read"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}'

[[tool]]
name = "ping"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}'
"#;

const REFUND: &str = r#"{"order_id":"o-1","amount":30}"#;

fn config() -> Config {
    Config::parse(CONFIG, Path::new("/nonexistent/toolgate.toml")).unwrap()
}

fn gate_builder() -> toolgate::GateBuilder {
    Gate::builder(config().registry().clone()).authorizer(toolgate::danger::NoAuthorization)
}

fn clock() -> ManualClock {
    ManualClock::new(Timestamp::from_unix_seconds(1_767_225_600))
}

fn opened(options: SqliteOptions, path: Option<&Path>) -> Arc<SqliteStore> {
    Arc::new(match path {
        Some(path) => options.open(path).unwrap(),
        None => options.open_in_memory().unwrap(),
    })
}

/// An OpenAI chat response proposing `calls` (tool name, arguments text),
/// each with a call id of its own.
fn body(calls: &[(&str, &str)]) -> Vec<u8> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, args)| {
            let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let args = toolgate_json::canonical::to_string(&toolgate_json::Value::String(
                std::borrow::Cow::Borrowed(args),
            ));
            format!(r#"{{"id":"c{i}","type":"function","function":{{"name":"{name}","arguments":{args}}}}}"#)
        })
        .collect();
    let calls = calls.join(",");
    format!(r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{calls}]}}}}]}}"#)
        .into_bytes()
}

fn ctx(user: &str, session: &str) -> Context {
    Context::new(user, session, 1)
}

fn decide(g: &StoreGate, c: &Context, calls: &[(&str, &str)]) -> Decisions {
    g.decide_and_record(&body(calls), Format::Auto, c)
}

/// Decides with the two-phase path an async service uses: `Some` only when
/// nothing but the audit record is to be written, whose commit goes through
/// `append_deferred` (and counts the response).
fn decide_deferred(g: &StoreGate, c: &Context, calls: &[(&str, &str)]) -> Option<Decisions> {
    let mut unrecorded = g.decide_unrecorded(&body(calls), Format::Auto, c)?;
    let entries = unrecorded.take_entries();
    let mut committed = true;
    for entry in entries {
        let (tx, rx) = std::sync::mpsc::channel();
        g.store()
            .append_deferred(entry, Box::new(move |r| tx.send(r.is_ok()).unwrap()));
        committed &= rx.recv_timeout(Duration::from_secs(10)).unwrap();
    }
    Some(g.finish(unrecorded, committed))
}

#[test]
fn the_two_phase_path_writes_nothing_but_the_audit_record_and_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let clock = clock();
    let store = opened(
        SqliteOptions::new()
            .clock(Arc::new(clock.clone()))
            .escalate_after(3),
        Some(&path),
    );
    let g = StoreGate::new(gate_builder().build().unwrap(), store.clone())
        .with_clock(Arc::new(clock.clone()))
        .with_approval_expiry(Duration::from_secs(600));
    let alice = ctx("alice", "s-1");
    let records = || store.tail(1000).unwrap().len();

    // An allowed read: decided reading only; its one record, committed by
    // the committer thread, counts the response.
    let d = decide_deferred(&g, &alice, &[("search", r#"{"q":"socks"}"#)]).unwrap();
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
    assert_eq!(records(), 1);
    assert_eq!(store.responses("s-1").unwrap(), 1);

    // Calls that need another write first are left to the one-phase path,
    // and nothing was written: no approval asked for or used, no call id
    // claimed, no counter, no record, no response counted.
    for calls in [
        &[("refund", REFUND)][..],
        &[("ping", r#"{"n":1}"#)],
        &[("nope", "{}")],
        &[("search", r#"{"q":"a"}"#), ("search", r#"{"q":"b"}"#)],
    ] {
        assert!(decide_deferred(&g, &alice, calls).is_none(), "{calls:?}");
    }
    assert_eq!(records(), 1);
    assert_eq!(store.responses("s-1").unwrap(), 1);
    assert!(store
        .list_approvals(&ApprovalFilter::new())
        .unwrap()
        .is_empty());
    assert_eq!(store.session("s-1").unwrap().consecutive_rejections, 0);

    // After a rejection, the allowed call that clears it is counted: one-
    // phase again; once cleared, two-phase.
    decide(&g, &alice, &[("search", "{}")]);
    assert!(decide_deferred(&g, &alice, &[("search", r#"{"q":"a"}"#)]).is_none());
    decide(&g, &alice, &[("search", r#"{"q":"a"}"#)]);
    assert!(decide_deferred(&g, &alice, &[("search", r#"{"q":"b"}"#)]).is_some());
    // Every response was counted once: 1 + 2 one-phase + 1.
    assert_eq!(store.responses("s-1").unwrap(), 4);
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn responses_in_flight_on_the_two_phase_path_take_consecutive_turns() {
    let clock = clock();
    let store = opened(SqliteOptions::new().clock(Arc::new(clock.clone())), None);
    let gate = gate_builder().max_turns(2).build().unwrap();
    let g = StoreGate::new(gate, store.clone()).with_clock(Arc::new(clock.clone()));
    let alice = ctx("alice", "s-1");
    let search = body(&[("search", r#"{"q":"socks"}"#)]);
    // Two responses decided before either record commits: turns 1 and 2.
    let first = g.decide_unrecorded(&search, Format::Auto, &alice).unwrap();
    let second = g.decide_unrecorded(&search, Format::Auto, &alice).unwrap();
    // A third one while both are in flight is at turn 3, over the limit:
    // denied, which the one-phase path records.
    assert!(g.decide_unrecorded(&search, Format::Auto, &alice).is_none());
    let third = g.decide_and_record(&search, Format::Auto, &alice);
    assert_eq!(third.decisions()[0].verdict(), Verdict::Deny);
    assert_eq!(
        third.decisions()[0].reasons()[0].code.as_str(),
        "loop_limit"
    );
    // A response given up (the client went away) frees its place; the
    // committed one is counted by the store.
    drop(second);
    let mut first = first;
    for entry in first.take_entries() {
        store.append(entry).unwrap();
    }
    let first = g.finish(first, true);
    assert_eq!(first.decisions()[0].verdict(), Verdict::Allow);
    // Counted: the first response and the third (one-phase). The next one
    // is at turn 3: over the limit.
    assert_eq!(store.responses("s-1").unwrap(), 2);
    assert_eq!(
        decide(&g, &alice, &[("search", r#"{"q":"x"}"#)]).decisions()[0].verdict(),
        Verdict::Deny
    );
    // Another session is not affected.
    let bob = ctx("bob", "s-2");
    assert!(g.decide_unrecorded(&search, Format::Auto, &bob).is_some());
}
