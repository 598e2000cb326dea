//! Limits that cannot be walked around (issue 12), tried from the attacker's
//! side through the library: argument sizes counted on what was received,
//! the body's size set in the config, turns counted by the store, replayed
//! call ids, and standing approvals carried by the context.

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
use toolgate::{Context, Decisions, Format, Gate, Verdict};
use toolgate_store::StoreGate;
use toolgate_store::{ManualClock, SqliteOptions, Store, Timestamp};

const CONFIG: &str = r#"
[gate]
max_turns = 5
max_argument_bytes = 1024
max_body_bytes = 65536

[authorization]
mode = "none"

[[tool]]
name = "note"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}'

[[tool]]
name = "search"
risk = "read"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}'

[[tool]]
name = "refund"
risk = "destructive"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}'
"#;

fn config() -> Config {
    Config::parse(CONFIG, Path::new("/nonexistent/toolgate.toml")).unwrap()
}

fn gate() -> Gate {
    let config = config();
    Gate::builder(config.registry().clone())
        .adapter_options(config.gate().adapter_options())
        .max_turns(config.gate().max_turns())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

fn store_gate() -> (StoreGate, Arc<dyn Store>) {
    let clock = ManualClock::new(Timestamp::from_unix_seconds(1_767_225_600));
    let store: Arc<dyn Store> = Arc::new(
        SqliteOptions::new()
            .clock(Arc::new(clock.clone()))
            .open_in_memory()
            .unwrap(),
    );
    let g = StoreGate::new(gate(), Arc::clone(&store)).with_clock(Arc::new(clock));
    (g, store)
}

fn codes(d: &Decisions) -> Vec<Vec<&str>> {
    d.decisions()
        .iter()
        .map(|d| d.reasons().iter().map(|r| r.code.as_str()).collect())
        .collect()
}

fn decide(body: &[u8]) -> Decisions {
    let ctx = Context::new("u", "s", 1);
    gate().decide(body, Format::Auto, &ctx, &ctx)
}

/// `{"q":"x"}` padded inside the object with `pad` bytes of whitespace.
fn padded_object(pad: usize) -> String {
    format!("{{{}\"q\":\"x\"}}", " ".repeat(pad))
}

/// The same arguments, inline, in every format that carries them inline.
fn inline_bodies(args: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "mcp",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"note","arguments":{args}}}}}"#
            ),
        ),
        (
            "anthropic",
            format!(
                r#"{{"id":"msg_1","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"note","input":{args}}}],"stop_reason":"tool_use"}}"#
            ),
        ),
        (
            "gemini",
            format!(
                r#"{{"candidates":[{{"index":0,"finishReason":"STOP","content":{{"role":"model","parts":[{{"functionCall":{{"name":"note","args":{args}}}}}]}}}}]}}"#
            ),
        ),
        (
            "gemini stream",
            format!(
                "data: {{\"candidates\":[{{\"index\":0,\"finishReason\":\"STOP\",\"content\":{{\"role\":\"model\",\"parts\":[{{\"functionCall\":{{\"name\":\"note\",\"args\":{args}}}}}]}}}}]}}\n\n"
            ),
        ),
        (
            "openai, arguments not a string",
            format!(
                r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"c1","type":"function","function":{{"name":"note","arguments":{args}}}}}]}}}}]}}"#
            ),
        ),
    ]
}

#[test]
fn whitespace_inside_inline_arguments_counts_against_max_argument_bytes() {
    // `{"q":"x"}` is 9 bytes: the limit is 1024.
    let exactly = padded_object(1024 - 9);
    assert_eq!(exactly.len(), 1024);
    let over = padded_object(1024 - 9 + 1);
    let huge = padded_object(60_000);
    for (name, body) in inline_bodies(&exactly) {
        let d = decide(body.as_bytes());
        assert_eq!(d.verdict(), Verdict::Allow, "{name}: {d:?}");
    }
    for args in [&over, &huge] {
        for (name, body) in inline_bodies(args) {
            let d = decide(body.as_bytes());
            assert_eq!(d.verdict(), Verdict::Deny, "{name}");
            assert_eq!(codes(&d), [["too_large"]], "{name}");
        }
    }
    // Whitespace anywhere inside the value counts, nested or between
    // members.
    let nested = format!("{{\"q\" :{} \"x\"  }}", "\t ".repeat(1000));
    for (name, body) in inline_bodies(&nested) {
        assert_eq!(codes(&decide(body.as_bytes())), [["too_large"]], "{name}");
    }
}

#[test]
fn escapes_inside_arguments_text_count_as_sent() {
    // 200 escaped spaces: 200 bytes once unescaped, 1,200 as sent.
    let text = format!("{{{}\\\"q\\\":\\\"x\\\"}}", "\\u0020".repeat(200));
    for body in [
        format!(
            r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"c1","type":"function","function":{{"name":"note","arguments":"{text}"}}}}]}}}}]}}"#
        ),
        format!(
            r#"{{"object":"response","status":"completed","output":[{{"type":"function_call","call_id":"c1","name":"note","arguments":"{text}"}}]}}"#
        ),
    ] {
        let d = decide(body.as_bytes());
        assert_eq!(codes(&d), [["too_large"]], "{body}");
    }
    // The same arguments sent plainly fit.
    let plain = format!("{{{}\\\"q\\\":\\\"x\\\"}}", " ".repeat(200));
    let body = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"c1","type":"function","function":{{"name":"note","arguments":"{plain}"}}}}]}}}}]}}"#
    );
    assert_eq!(decide(body.as_bytes()).verdict(), Verdict::Allow);
}

#[test]
fn the_body_limit_comes_from_the_config() {
    assert_eq!(config().gate().max_body_bytes(), 65536);
    let pad = " ".repeat(70_000);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"note","arguments":{{"q":"x"}}}}}}{pad}"#
    );
    let d = decide(body.as_bytes());
    assert_eq!(d.verdict(), Verdict::Deny);
    let rejected = d.rejected().unwrap();
    assert_eq!(rejected.code.as_str(), "body_invalid_json");
    assert_eq!(rejected.detail, Some("too_large"));
    // A stream is held to the same limit.
    let stream = format!(
        "data: {{\"candidates\":[{{\"index\":0,\"finishReason\":\"STOP\",\"content\":{{\"role\":\"model\",\"parts\":[{{\"functionCall\":{{\"name\":\"note\",\"args\":{{}}}}}}]}}}}]}}\n\n{}",
        ": comment\n".repeat(7000)
    );
    let d = decide(stream.as_bytes());
    assert_eq!(d.rejected().unwrap().code.as_str(), "too_large");
}

#[test]
fn body_limit_values_out_of_range_are_config_errors() {
    for (text, line) in [
        ("[gate]\nmax_body_bytes = 0\n", 2),
        ("[gate]\nmax_turns = 3\n\nmax_body_bytes = 2000000000\n", 4),
    ] {
        let e = Config::parse(text, Path::new("dir/toolgate.toml")).unwrap_err();
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("dir/toolgate.toml:{line}:")),
            "{shown}"
        );
        assert!(
            shown.contains("`max_body_bytes` must be between 1 and 1073741824"),
            "{shown}"
        );
    }
    let e = Config::parse(
        "[gate]\nmax_body_bytes = \"big\"\n",
        Path::new("toolgate.toml"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("toolgate.toml:2:"), "{e}");
}

/// An OpenAI chat response calling `tool` with call id `id`.
fn call(tool: &str, id: &str) -> Vec<u8> {
    format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"{tool}","arguments":"{{}}"}}}}]}}}}]}}"#
    )
    .into_bytes()
}

#[test]
fn a_caller_that_always_says_turn_1_is_stopped_by_the_store() {
    let (g, _store) = store_gate();
    let ctx = Context::new("alice", "s-1", 1);
    let verdicts: Vec<Verdict> = (0..8)
        .map(|i| {
            g.decide_and_record(&call("search", &format!("c{i}")), Format::Auto, &ctx)
                .verdict()
        })
        .collect();
    // max_turns = 5: turns 1 to 5 are allowed, then every call is denied,
    // reads included.
    assert_eq!(verdicts[..5], [Verdict::Allow; 5]);
    assert_eq!(verdicts[5..], [Verdict::Deny; 3]);
    let d = g.decide_and_record(&call("search", "c9"), Format::Auto, &ctx);
    assert_eq!(codes(&d), [["loop_limit"]]);
    // Another session has its own count.
    let other = Context::new("alice", "s-2", 1);
    assert_eq!(
        g.decide_and_record(&call("search", "c1"), Format::Auto, &other)
            .verdict(),
        Verdict::Allow
    );
}

#[test]
fn the_callers_turn_can_only_bring_the_cap_closer() {
    let (g, _store) = store_gate();
    // A caller at turn 5 on its first response: allowed (5 ≤ 5); at turn 6:
    // denied, though the store counted only one response.
    let at = |turn: u32| Context::new("alice", "s-3", turn);
    let d = g.decide_and_record(&call("search", "a"), Format::Auto, &at(5));
    assert_eq!(d.verdict(), Verdict::Allow);
    let d = g.decide_and_record(&call("search", "b"), Format::Auto, &at(6));
    assert_eq!(codes(&d), [["loop_limit"]]);
    // A low turn does not undo the count: three more responses fill turns
    // 3 to 5, then the cap holds.
    let verdicts: Vec<Verdict> = (0..4)
        .map(|i| {
            g.decide_and_record(&call("search", &format!("x{i}")), Format::Auto, &at(1))
                .verdict()
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            Verdict::Allow,
            Verdict::Allow,
            Verdict::Allow,
            Verdict::Deny
        ]
    );
}

#[test]
fn without_a_store_the_contexts_turn_is_trusted() {
    // Documented: no store, no memory. The context's turn decides.
    let g = gate();
    let ctx = Context::new("alice", "s-1", 1);
    for i in 0..8 {
        let d = g.decide(&call("search", &format!("c{i}")), Format::Auto, &ctx, &ctx);
        assert_eq!(d.verdict(), Verdict::Allow);
    }
    let late = Context::new("alice", "s-1", 6);
    let d = g.decide(&call("search", "c"), Format::Auto, &late, &late);
    assert_eq!(codes(&d), [["loop_limit"]]);
}

#[test]
fn a_replayed_write_call_is_allowed_once() {
    let (g, _store) = store_gate();
    let ctx = Context::new("alice", "s-1", 1);
    let d = g.decide_and_record(&call("note", "call_A"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow);
    for _ in 0..2 {
        let d = g.decide_and_record(&call("note", "call_A"), Format::Auto, &ctx);
        assert_eq!(codes(&d), [["replayed_call"]]);
    }
    // A new id is a new call; the same id in another session too.
    let d = g.decide_and_record(&call("note", "call_B"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    let other = Context::new("alice", "s-2", 1);
    let d = g.decide_and_record(&call("note", "call_A"), Format::Auto, &other);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    // Reads are exempt.
    let reader = Context::new("alice", "s-3", 1);
    for _ in 0..3 {
        let d = g.decide_and_record(&call("search", "call_R"), Format::Auto, &reader);
        assert_eq!(d.verdict(), Verdict::Allow);
    }
    // Two calls with one id in one response: the second is a replay.
    let twice = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[
        {"id":"dup","type":"function","function":{"name":"note","arguments":"{}"}},
        {"id":"dup","type":"function","function":{"name":"note","arguments":"{}"}}]}}]}"#;
    let d = g.decide_and_record(twice, Format::Auto, &Context::new("alice", "s-4", 1));
    assert_eq!(d.decisions()[0].verdict(), Verdict::Deny);
    assert_eq!(d.decisions()[1].verdict(), Verdict::Deny);
}

#[test]
fn a_call_held_for_approval_is_not_a_replay_when_it_comes_back_approved() {
    let (g, store) = store_gate();
    let ctx = Context::new("alice", "s-1", 1);
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::NeedsApproval);
    let id = d.decisions()[0]
        .approval()
        .map(|a| a.as_str())
        .unwrap()
        .parse()
        .unwrap();
    store.approve(id, "bob", "").unwrap();
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    // Run once; a standing approval does not make a replay run twice.
    store
        .grant_standing(
            "alice",
            "refund",
            Timestamp::from_unix_seconds(1_767_229_200),
            "bob",
            "",
        )
        .unwrap();
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    assert_eq!(codes(&d), [["replayed_call"]]);
    let d = g.decide_and_record(&call("refund", "call_S"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow);
}

#[test]
fn a_replayed_held_call_asks_no_human_and_spends_no_approval() {
    let (_, store) = store_gate();
    // More turns than the config's five: this session has six responses.
    let g = StoreGate::new(
        Gate::builder(config().registry().clone())
            .max_turns(20)
            .authorizer(toolgate::danger::NoAuthorization)
            .build()
            .unwrap(),
        Arc::clone(&store),
    )
    .with_clock(Arc::new(ManualClock::new(Timestamp::from_unix_seconds(
        1_767_225_600,
    ))));
    let ctx = Context::new("alice", "s-1", 1);
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    let id = d.decisions()[0]
        .approval()
        .map(|a| a.as_str())
        .unwrap()
        .parse()
        .unwrap();
    store.approve(id, "bob", "").unwrap();
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    let pending = || {
        store
            .list_approvals(&toolgate_store::ApprovalFilter::new())
            .unwrap()
            .len()
    };
    let before = pending();
    // The loop sends the same response again: denied at once, no new
    // approval asked for.
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    assert_eq!(codes(&d), [["replayed_call"]]);
    assert_eq!(pending(), before);
    // A human approved the same arguments again (say, for a new call):
    // the replayed id does not spend that approval; a new id uses it.
    let d = g.decide_and_record(&call("refund", "call_S"), Format::Auto, &ctx);
    let again = d.decisions()[0]
        .approval()
        .map(|a| a.as_str())
        .unwrap()
        .parse()
        .unwrap();
    store.approve(again, "bob", "").unwrap();
    let d = g.decide_and_record(&call("refund", "call_R"), Format::Auto, &ctx);
    assert_eq!(codes(&d), [["replayed_call"]]);
    let d = g.decide_and_record(&call("refund", "call_S"), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    assert_eq!(
        d.decisions()[0].approval().map(|a| a.as_str()),
        Some(again.to_string().as_str())
    );
}

#[test]
fn without_a_store_the_context_names_the_allowed_calls() {
    let g = gate();
    let ctx = Context::from_json(
        br#"{"user":"alice","session":"s","turn":1,"allowed_calls":["call_A"]}"#,
    )
    .unwrap();
    let d = g.decide(&call("note", "call_A"), Format::Auto, &ctx, &ctx);
    assert_eq!(codes(&d), [["replayed_call"]]);
    let d = g.decide(&call("note", "call_B"), Format::Auto, &ctx, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow);
    let d = g.decide(&call("search", "call_A"), Format::Auto, &ctx, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow);
    let e = Context::from_json(br#"{"user":"a","session":"s","turn":1,"allowed_calls":[1]}"#)
        .unwrap_err();
    assert_eq!(e.pointer(), "/allowed_calls/0");
    let e = Context::from_json(br#"{"user":"a","session":"s","turn":1,"allowed_calls":"x"}"#)
        .unwrap_err();
    assert_eq!(e.pointer(), "/allowed_calls");
}

#[test]
fn a_standing_approval_in_the_context_covers_the_tool_for_any_arguments() {
    let g = gate();
    let doc = |approval: &str| {
        format!(r#"{{"user":"alice","session":"s","turn":1,"now":1000,"approvals":[{approval}]}}"#)
    };
    let refund = |args: &str| {
        format!(
            r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"c-{}","type":"function","function":{{"name":"refund","arguments":"{args}"}}}}]}}}}]}}"#,
            args.len()
        )
    };
    let standing =
        r#"{"id":"st-1","kind":"standing","user":"alice","tool":"refund","expires_at":2000}"#;
    let ctx = Context::from_json(doc(standing).as_bytes()).unwrap();
    for args in ["{}", r#"{\"q\":\"a\"}"#, r#"{\"q\":\"bb\"}"#] {
        let d = g.decide(refund(args).as_bytes(), Format::Auto, &ctx, &ctx);
        assert_eq!(d.verdict(), Verdict::Allow, "{args}");
        assert_eq!(
            d.decisions()[0].approval().map(|a| a.as_str()),
            Some("st-1")
        );
    }
    // Several calls in one response, all covered.
    let two = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[
        {"id":"a","type":"function","function":{"name":"refund","arguments":"{}"}},
        {"id":"b","type":"function","function":{"name":"refund","arguments":"{\"q\":\"x\"}"}}]}}]}"#;
    assert_eq!(
        g.decide(two, Format::Auto, &ctx, &ctx).verdict(),
        Verdict::Allow
    );
    // Not another user, not another tool, not after it expires, not in
    // another session when it names one.
    for (approval, now) in [
        (
            r#"{"id":"x","kind":"standing","user":"bob","tool":"refund","expires_at":2000}"#,
            1000,
        ),
        (
            r#"{"id":"x","kind":"standing","user":"alice","tool":"note2","expires_at":2000}"#,
            1000,
        ),
        (
            r#"{"id":"x","kind":"standing","user":"alice","tool":"refund","expires_at":1000}"#,
            1000,
        ),
        (
            r#"{"id":"x","kind":"standing","user":"alice","session":"other","tool":"refund","expires_at":2000}"#,
            1000,
        ),
    ] {
        let text = doc(approval).replace("\"now\":1000", &format!("\"now\":{now}"));
        let ctx = Context::from_json(text.as_bytes()).unwrap();
        let d = g.decide(refund("{}").as_bytes(), Format::Auto, &ctx, &ctx);
        assert_eq!(d.verdict(), Verdict::NeedsApproval, "{approval}");
    }
    let in_session = r#"{"id":"x","kind":"standing","user":"alice","session":"s","tool":"refund","expires_at":2000}"#;
    let ctx = Context::from_json(doc(in_session).as_bytes()).unwrap();
    assert_eq!(
        g.decide(refund("{}").as_bytes(), Format::Auto, &ctx, &ctx)
            .verdict(),
        Verdict::Allow
    );
}

#[test]
fn standing_approvals_in_the_context_are_read_strictly() {
    let base = |approval: &str| {
        format!(r#"{{"user":"alice","session":"s","turn":1,"approvals":[{approval}]}}"#)
    };
    let digest = format!("sha256:{}", "0".repeat(64));
    for (approval, pointer, says) in [
        (
            format!(
                r#"{{"id":"x","kind":"standing","user":"a","tool":"t","expires_at":1,"digest":"{digest}"}}"#
            ),
            "/approvals/0/digest",
            "not allowed here",
        ),
        (
            r#"{"id":"x","kind":"standing","user":"a","tool":"t","expires_at":1,"used":false}"#
                .to_owned(),
            "/approvals/0/used",
            "not allowed here",
        ),
        (
            r#"{"id":"x","kind":"forever","user":"a","tool":"t","expires_at":1}"#.to_owned(),
            "/approvals/0/kind",
            "invalid value",
        ),
        (
            r#"{"id":"x","kind":1,"user":"a","tool":"t","expires_at":1}"#.to_owned(),
            "/approvals/0/kind",
            "must be a string",
        ),
        (
            r#"{"id":"x","kind":"standing","user":"a","expires_at":1}"#.to_owned(),
            "/approvals/0/tool",
            "missing member",
        ),
        (
            r#"{"id":"x","kind":"standing","user":"a","tool":"t"}"#.to_owned(),
            "/approvals/0/expires_at",
            "missing member",
        ),
        (
            r#"{"id":"x","kind":"single","user":"a","tool":"t","expires_at":1,"session":"s"}"#
                .to_owned(),
            "/approvals/0/digest",
            "missing member",
        ),
        (
            r#"{"id":"x","kind":"standing","user":"a","tool":"t","expires_at":1,"scope":"all"}"#
                .to_owned(),
            "/approvals/0/scope",
            "unknown member",
        ),
    ] {
        let e = Context::from_json(base(&approval).as_bytes()).unwrap_err();
        assert_eq!(e.pointer(), pointer, "{approval}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

fn last_records(store: &Arc<dyn Store>, n: u32) -> Vec<toolgate_json::Value<'static>> {
    store
        .tail(n)
        .unwrap()
        .iter()
        .map(|r| toolgate_json::from_str(&r.to_json()).unwrap().into_owned())
        .collect()
}

/// An OpenAI chat response calling `tool` with `text` as its arguments
/// string.
fn call_with_text(tool: &str, id: &str, text: &str) -> Vec<u8> {
    let text = toolgate_json::canonical::to_string(&toolgate_json::Value::String(text.into()));
    format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"{tool}","arguments":{text}}}}}]}}}}]}}"#
    )
    .into_bytes()
}

#[test]
fn refused_arguments_are_audited_bounded_with_the_risk_tier() {
    let (g, store) = store_gate();
    let ctx = Context::new("alice", "s-audit", 1);
    // Arguments that end early: the record keeps what was sent.
    let d = g.decide_and_record(
        &call_with_text("note", "c1", r#"{"q": "abc"#),
        Format::Auto,
        &ctx,
    );
    assert_eq!(codes(&d), [["truncated"]]);
    let r = &last_records(&store, 1)[0];
    assert!(r.pointer("/arguments").unwrap().is_null());
    assert_eq!(
        r.pointer("/refused_arguments/text").unwrap().as_str(),
        Some(r#"{"q": "abc"#)
    );
    assert_eq!(
        r.pointer("/refused_arguments/truncated").unwrap().as_bool(),
        Some(false)
    );
    assert_eq!(r.pointer("/risk").unwrap().as_str(), Some("write"));

    // A long one is cut at 4 KiB, never inside a character.
    let mut long = "{".to_owned();
    long.push_str(&"é".repeat(3000));
    let d = g.decide_and_record(&call_with_text("note", "c2", &long), Format::Auto, &ctx);
    assert_eq!(d.verdict(), Verdict::Deny);
    let r = &last_records(&store, 1)[0];
    let text = r
        .pointer("/refused_arguments/text")
        .unwrap()
        .as_str()
        .unwrap();
    assert_eq!(
        text.len(),
        4095,
        "1 + 2 × 2047 bytes: the next `é` does not fit"
    );
    assert_eq!(
        r.pointer("/refused_arguments/bytes")
            .unwrap()
            .to_canonical_string(),
        long.len().to_string()
    );
    assert_eq!(
        r.pointer("/refused_arguments/truncated").unwrap().as_bool(),
        Some(true)
    );

    // An unknown tool: its arguments kept, no risk tier.
    g.decide_and_record(
        &call_with_text("nope", "c3", r#"{"x":1}"#),
        Format::Auto,
        &ctx,
    );
    let r = &last_records(&store, 1)[0];
    assert_eq!(
        r.pointer("/refused_arguments/text").unwrap().as_str(),
        Some(r#"{"x":1}"#)
    );
    assert!(r.pointer("/risk").is_none());

    // A parsed call: its canonical arguments, its tier, nothing refused.
    g.decide_and_record(&call("search", "c4"), Format::Auto, &ctx);
    let r = &last_records(&store, 1)[0];
    assert_eq!(r.pointer("/risk").unwrap().as_str(), Some("read"));
    assert!(r.pointer("/refused_arguments").is_none());
    assert!(r.pointer("/arguments").unwrap().as_object().is_some());
    // Every record of a call carries its tool's tier.
    let tiers: Vec<Option<String>> = store
        .tail(10)
        .unwrap()
        .into_iter()
        .map(|r| r.entry.risk)
        .collect();
    let want = [Some("write"), Some("write"), None, Some("read")].map(|t| t.map(str::to_owned));
    assert_eq!(tiers, want);
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn refused_arguments_can_be_audited_by_digest_only() {
    let (g, store) = store_gate();
    let g = g.with_refused_arguments(toolgate::RefusedArguments::Digest);
    let ctx = Context::new("alice", "s-digest", 1);
    let secret = r#"{"q": "4111-1111-1111-1111"#;
    g.decide_and_record(&call_with_text("note", "c1", secret), Format::Auto, &ctx);
    let line = store.tail(1).unwrap()[0].to_json();
    // The record's digests are random-looking hex (the HMAC key is the
    // store's own) and may spell "4111" by chance: look past them.
    let digest_free: Vec<&str> = line
        .split('"')
        .filter(|part| !part.starts_with("sha256:") && !part.starts_with("hmac-sha256:"))
        .collect();
    assert!(!digest_free.concat().contains("4111"), "{line}");
    let r = toolgate_json::from_str(&line).unwrap();
    assert_eq!(
        r.pointer("/refused_arguments/bytes")
            .unwrap()
            .to_canonical_string(),
        secret.len().to_string()
    );
    let hmac = r
        .pointer("/refused_arguments/hmac")
        .unwrap()
        .as_str()
        .unwrap();
    assert_eq!(
        hmac,
        store.redaction_key().unwrap().digest(secret.as_bytes())
    );
    assert!(r.pointer("/refused_arguments/text").is_none());
    // The config names the mode, and refuses any other.
    let config = Config::parse(
        "[store]\nrefused_arguments = \"digest\"\n",
        Path::new("toolgate.toml"),
    )
    .unwrap();
    assert_eq!(
        config.store().refused_arguments(),
        toolgate::RefusedArguments::Digest
    );
    let e = Config::parse(
        "[store]\nrefused_arguments = \"none\"\n",
        Path::new("toolgate.toml"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("toolgate.toml:2:"), "{e}");
    assert!(
        e.to_string()
            .contains("`refused_arguments` must be \"text\" or \"digest\""),
        "{e}"
    );
}
