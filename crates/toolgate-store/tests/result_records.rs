//! The one builder of `tool_result` audit records: its shape, and its
//! time, which is the store gate's clock (a manual clock here), never the
//! system's.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::path::Path;
use std::sync::Arc;

use toolgate::config::Config;
use toolgate::Gate;
use toolgate_json::Digest;
use toolgate_store::{
    AuditVerdict, ManualClock, SqliteOptions, StoreGate, Timestamp, ToolResultRecord,
};

const CONFIG: &str = r#"
[authorization]
mode = "none"

[[tool]]
name = "search"
risk = "read"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}'
"#;

/// 2001-09-09: far from the system clock's now.
const T0: i64 = 1_000_000_000;

fn store_gate(clock: &ManualClock) -> StoreGate {
    let config = Config::parse(CONFIG, Path::new("/nonexistent/toolgate.toml")).unwrap();
    let gate = Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let store = Arc::new(
        SqliteOptions::new()
            .clock(Arc::new(clock.clone()))
            .open_in_memory()
            .unwrap(),
    );
    StoreGate::new(gate, store).with_clock(Arc::new(clock.clone()))
}

#[test]
fn a_tool_result_record_is_timed_by_the_gates_clock() {
    let clock = ManualClock::new(Timestamp::from_unix_seconds(T0));
    let g = store_gate(&clock);
    let digest = Digest::of(b"the result");
    let entry = g.tool_result(
        ToolResultRecord::new("proxy request /v1/chat/completions")
            .user("alice")
            .session("s1")
            .tool("search")
            .call_id("call_1")
            .digest(digest)
            .finding("chat_token")
            .finding("control_removed")
            .finding("chat_token"),
    );
    assert_eq!(entry.time, Timestamp::from_unix_seconds(T0));
    g.store().append(entry).unwrap();
    let records = g.store().tail(10).unwrap();
    let r = records.last().unwrap();
    assert_eq!(r.entry.verdict, AuditVerdict::ToolResult);
    assert_eq!(r.entry.time, Timestamp::from_unix_seconds(T0));
    assert_eq!(r.entry.user.as_deref(), Some("alice"));
    assert_eq!(r.entry.session.as_deref(), Some("s1"));
    assert_eq!(r.entry.tool.as_deref(), Some("search"));
    assert_eq!(r.entry.call_id.as_deref(), Some("call_1"));
    assert_eq!(r.entry.digest, Some(digest));
    // A finding is recorded once, in the order first given.
    assert_eq!(r.entry.reasons, ["chat_token", "control_removed"]);
    assert_eq!(
        r.entry.note.as_deref(),
        Some("proxy request /v1/chat/completions")
    );
    // The clock moves, the next record with it.
    clock.advance(std::time::Duration::from_secs(60));
    let later = g.tool_result(ToolResultRecord::new("/v1/results"));
    assert_eq!(later.time, Timestamp::from_unix_seconds(T0 + 60));
}
