//! `toolgate mcp` (stdio) driven from outside: the official MCP Python SDK
//! (PyPI `mcp` 2.3.0, unchanged) as the client (`examples/mcp/client.py`)
//! and as the server (`examples/mcp/server.py`, FastMCP's `MCPServer`),
//! raw frames written by the test where the SDK would never send them, and
//! a bare server that changes its tools (`tests/mcp/rug_pull_server.py`).
//!
//! Needs a Python with `mcp==2.3.0`: env `TOOLGATE_MCP_PYTHON`, else the
//! workspace's `target/py/venv/bin/python` (as `.ci/run` installs it).
//! Without one each test says `SKIPPED` and passes, unless
//! `TOOLGATE_REQUIRE_EXTERNAL=1`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod mcp_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mcp_support::raw::{text_of, uint, Raw};
use mcp_support::{json, sdk_python, text_at, Folder as Dir, Steps};
use toolgate_json::Value;
use toolgate_testkit::examples_dir;
use toolgate_testkit::run_toolgate as toolgate;

#[test]
fn the_official_sdk_on_both_sides() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = Dir::with_config(&examples_dir().join("mcp/toolgate.toml"));
    let out = Command::new(&python)
        .arg(examples_dir().join("mcp/client.py"))
        .arg(toolgate_testkit::toolgate_path())
        .arg(dir.config())
        .arg(examples_dir().join("mcp/server.py"))
        .env("MCP_TEST_SEEN", dir.seen_file())
        .output()
        .unwrap();
    let steps = Steps::of(&out, "client");
    let step = |name: &str| steps.step(name);
    assert_eq!(
        text_at(step("initialize"), "/protocol_version"),
        "2025-11-25"
    );

    // tools/list: only the registered tools, each with the config's schema.
    assert_eq!(
        step("list").pointer("/tools").unwrap(),
        &json(r#"["add","crash","hang","refund","weather"]"#)
    );
    assert_eq!(
        step("list").pointer("/schemas/add/additionalProperties"),
        Some(&Value::Bool(false))
    );
    assert!(steps
        .stderr()
        .contains("`secret_admin` hidden: not registered in the config"));

    // An allowed call returns the server's result.
    assert_eq!(
        step("add_allowed").pointer("/is_error"),
        Some(&Value::Bool(false))
    );
    assert_eq!(text_at(step("add_allowed"), "/text"), "5");
    assert_eq!(
        step("add_allowed").pointer("/structured"),
        Some(&json(r#"{"result":5}"#))
    );

    // "2" and "3" are refused by the gate: FastMCP's lax coercion (which
    // would run add(2, 3)) never gets the chance.
    assert_eq!(
        step("add_strings").pointer("/is_error"),
        Some(&Value::Bool(true))
    );
    assert_eq!(
        text_at(step("add_strings"), "/text"),
        "denied by toolgate: type_mismatch at /a: expected integer; type_mismatch at /b: expected integer"
    );
    // An unknown member FastMCP would drop silently is refused too.
    assert!(text_at(step("add_extra"), "/text").starts_with("denied by toolgate: unknown_property"));
    // The unregistered tool is denied.
    assert_eq!(
        text_at(step("unregistered"), "/text"),
        "denied by toolgate: unknown_tool"
    );
    // A structured result that matches its outputSchema passes.
    assert_eq!(
        step("weather").pointer("/structured"),
        Some(&json(r#"{"conditions":"sunny","temperature":22.5}"#))
    );

    // The refund waits for a human; approved, the retry runs once.
    let held = step("refund_held");
    assert_eq!(held.pointer("/is_error"), Some(&Value::Bool(true)));
    assert!(
        text_at(held, "/text").starts_with("held by toolgate for human approval: approval "),
        "{}",
        text_at(held, "/text")
    );
    assert_eq!(step("approve").pointer("/code"), Some(&json("0")));
    assert_eq!(
        step("refund_retry").pointer("/is_error"),
        Some(&Value::Bool(false))
    );
    assert_eq!(
        text_at(step("refund_retry"), "/text"),
        "refunded 500 cents on ord_1"
    );
    assert!(text_at(step("refund_again"), "/text").starts_with("held by toolgate"));

    // The server hangs: the configured timeout answers. The server dies
    // mid-call: the pending call gets an error result.
    assert_eq!(
        text_at(step("hang"), "/text"),
        "refused by toolgate: upstream_timeout"
    );
    assert_eq!(
        text_at(step("crash"), "/text"),
        "refused by toolgate: upstream_closed"
    );

    // What the server saw: the checked values only, never the strings, the
    // extra member, the unregistered tool or the held refund.
    let seen = dir.seen_canonical();
    assert_eq!(
        seen,
        [
            r#"{"arguments":{"a":2,"b":3},"tool":"add"}"#,
            r#"{"arguments":{"city":"Kyoto"},"tool":"weather"}"#,
            r#"{"arguments":{"amount_cents":500,"order_id":"ord_1"},"tool":"refund"}"#,
            r#"{"arguments":{"seconds":30},"tool":"hang"}"#,
            r#"{"arguments":{},"tool":"crash"}"#,
        ]
    );

    // Every decision is in the audit log, in order.
    let audit = dir.audit();
    let rows: Vec<(&str, &str)> = audit
        .lines()
        .map(|l| {
            let verdict = l.split("  ").nth(2).unwrap_or("");
            let tool = l
                .split("  ")
                .find_map(|f| f.strip_prefix("tool="))
                .unwrap_or("");
            (verdict, tool)
        })
        .collect();
    assert_eq!(
        rows,
        [
            // The first catalog, pinned on first use.
            ("pin_approved", "add"),
            ("pin_approved", "refund"),
            ("pin_approved", "weather"),
            ("pin_approved", "hang"),
            ("pin_approved", "crash"),
            ("allow", "add"),
            ("tool_result", "add"),
            ("deny", "add"),
            ("deny", "add"),
            ("deny", "secret_admin"),
            ("allow", "weather"),
            ("tool_result", "weather"),
            ("needs_approval", "refund"),
            ("approval_granted", "refund"),
            ("approval_used", "refund"),
            ("allow", "refund"),
            ("tool_result", "refund"),
            ("needs_approval", "refund"),
            ("allow", "hang"),
            ("tool_result", "hang"),
            ("allow", "crash"),
            ("tool_result", "crash"),
        ],
        "{audit}"
    );
    assert!(
        audit.contains("reasons=type_mismatch,type_mismatch"),
        "{audit}"
    );
    assert!(audit.contains("reasons=unknown_tool"), "{audit}");
    // Every forwarded call's result is audited before the client sees it;
    // one that never came says why.
    assert!(
        audit.contains("tool_result  user=desk")
            && audit.contains("tool=hang  call=11  reasons=upstream_timeout"),
        "{audit}"
    );
    assert!(audit.contains("reasons=upstream_timeout"), "{audit}");
    assert!(audit.contains("reasons=upstream_closed"), "{audit}");
    assert!(audit.contains("user=desk"), "{audit}");
}

#[test]
fn frames_the_strict_parser_refuses_are_answered_and_never_forwarded() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = Dir::with_config(&examples_dir().join("mcp/toolgate.toml"));
    let server = examples_dir().join("mcp/server.py");
    let mut raw = Raw::start(&dir, &[python.as_os_str(), server.as_os_str()]);
    raw.initialize();

    // A duplicate key in the arguments: the last-wins parse of the server
    // would see b = 3; toolgate refuses the frame and answers its id.
    raw.send(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,"b":3}}}"#);
    assert_eq!(
        raw.recv().to_canonical_string(),
        r#"{"error":{"code":-32700,"message":"refused by toolgate: duplicate_key"},"id":8,"jsonrpc":"2.0"}"#
    );
    // The same key spelled with an escape is the same key.
    raw.send(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,"\u0062":3}}}"#);
    assert_eq!(
        text_at(&raw.recv(), "/error/message"),
        "refused by toolgate: duplicate_key"
    );
    // Not UTF-8: refused; its id cannot be trusted, so the answer's is null.
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":\"\xff\"}}}");
    let answer = raw.recv();
    assert_eq!(
        text_at(&answer, "/error/message"),
        "refused by toolgate: invalid_utf8"
    );
    // Over the frame cap ([mcp] max_frame_bytes = 1 MiB).
    let mut big = br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,"pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 1 << 20));
    big.extend(br#""}}}"#);
    raw.send(&big);
    let answer = raw.recv();
    assert_eq!(
        text_at(&answer, "/error/message"),
        "refused by toolgate: frame_too_large"
    );
    assert_eq!(answer.pointer("/id"), Some(&Value::Null));
    // A batch (2025-03-26 only): refused as a whole.
    raw.send(br#"[{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}]"#);
    assert_eq!(
        text_at(&raw.recv(), "/error/message"),
        "refused by toolgate: batch_not_supported"
    );
    // A duplicate key outside the arguments is refused just the same.
    raw.send(br#"{"jsonrpc":"2.0","id":13,"method":"tools/list","method":"tools/list"}"#);
    assert_eq!(
        text_at(&raw.recv(), "/error/message"),
        "refused by toolgate: duplicate_key"
    );

    // A clean call still runs, with the canonical arguments.
    raw.send(br#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"add","arguments":{"b":2.0e0,"a":1}}}"#);
    let answer = raw.recv();
    assert_eq!(answer.pointer("/id"), Some(&json("14")));
    assert_eq!(
        answer.pointer("/result/isError"),
        Some(&Value::Bool(true)),
        "2.0e0 is not an integer lexeme"
    );
    raw.send(br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"add","arguments":{"b":2,"a":1}}}"#);
    let answer = raw.recv();
    assert_eq!(text_at(&answer, "/result/content/0/text"), "3");

    let (status, stderr) = raw.finish();
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        stderr.contains("client frame refused: duplicate_key"),
        "{stderr}"
    );
    let seen = dir.seen_canonical();
    assert_eq!(seen, [r#"{"arguments":{"a":1,"b":2},"tool":"add"}"#]);
    // Issue 28, item 17: each refused frame is audited, one record per
    // kind (the second duplicate key is counted, not recorded again; the
    // count is written when toolgate ends).
    let audit = dir.audit();
    for reason in [
        "reasons=duplicate_key",
        "reasons=invalid_utf8",
        "reasons=frame_too_large",
        "reasons=batch_not_supported",
    ] {
        assert!(
            audit
                .lines()
                .any(|l| l.contains("  deny  user=desk  ") && l.contains(reason)),
            "{reason}:\n{audit}"
        );
    }
    let dup: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("reasons=duplicate_key"))
        .collect();
    assert_eq!(dup.len(), 2, "{audit}");
}

/// `[mcp] hold_seconds`: a call that needs approval is held open (with
/// progress notifications when the request asks for them); approved in
/// time it runs with no retry, denied it is answered as denied, undecided
/// it ends as the pending result.
#[test]
fn a_held_call_waits_for_the_human_within_the_hold() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = Dir::with_config(&examples_dir().join("mcp/toolgate.toml"));
    let text = std::fs::read_to_string(dir.config()).unwrap();
    let text = text.replace(
        "max_result_bytes = 4096",
        "max_result_bytes = 4096\nhold_seconds = 4",
    );
    std::fs::write(dir.config(), text).unwrap();
    let server = examples_dir().join("mcp/server.py");
    let mut raw = Raw::start(&dir, &[python.as_os_str(), server.as_os_str()]);
    raw.initialize();
    let config = dir.config();
    let decide = |how: &str, id: &str| {
        let out = toolgate(&["approvals", how, id, "--config", config.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text_of(&out.stderr));
    };
    // The approval id, from the first progress notification of a held call.
    let held = |raw: &Raw, token: &str| -> String {
        let note = raw.recv();
        assert_eq!(text_at(&note, "/method"), "notifications/progress");
        assert_eq!(text_at(&note, "/params/progressToken"), token);
        let message = text_at(&note, "/params/message");
        message
            .strip_prefix("waiting for a human to approve approval ")
            .unwrap_or_else(|| panic!("{message}"))
            .to_owned()
    };
    // Until the answer to `id`: the progress notifications before it must
    // count up.
    let answer_to = |raw: &Raw, id: u64| -> Value<'static> {
        let mut last = 0;
        loop {
            let v = raw.recv();
            if uint(&v, "/id") == Some(id) {
                return v;
            }
            assert_eq!(text_at(&v, "/method"), "notifications/progress");
            let p = uint(&v, "/params/progress").unwrap();
            assert!(p > last, "progress must increase");
            last = p;
        }
    };

    // Approved while held: the call runs, the client never retries.
    raw.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"ord_7","amount_cents":300},"_meta":{"progressToken":"p-2"}}}"#);
    let approval = held(&raw, "p-2");
    decide("approve", &approval);
    let answer = answer_to(&raw, 2);
    assert_eq!(
        text_at(&answer, "/result/content/0/text"),
        "refunded 300 cents on ord_7"
    );
    assert_eq!(
        answer.pointer("/result/isError").and_then(Value::as_bool),
        Some(false)
    );

    // Denied while held: answered as denied, never forwarded.
    raw.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"ord_8","amount_cents":400},"_meta":{"progressToken":7}}}"#);
    let note = raw.recv();
    assert_eq!(uint(&note, "/params/progressToken"), Some(7));
    let approval2 = text_at(&note, "/params/message")
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned();
    decide("deny", &approval2);
    let answer = answer_to(&raw, 3);
    assert_eq!(
        text_at(&answer, "/result/content/0/text"),
        format!("denied by a human: approval {approval2} was not granted; the call did not run")
    );
    assert_eq!(
        answer.pointer("/result/isError").and_then(Value::as_bool),
        Some(true)
    );

    // Nobody decides, and no progress was asked for: the pending result
    // when the hold ends.
    let started = std::time::Instant::now();
    raw.send(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"ord_9","amount_cents":500}}}"#);
    let answer = raw.recv();
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(uint(&answer, "/id"), Some(4));
    assert!(
        text_at(&answer, "/result/content/0/text")
            .starts_with("held by toolgate for human approval: approval "),
        "{}",
        answer.to_canonical_string()
    );

    let (status, _stderr) = raw.finish();
    assert!(status.success());
    let seen = dir.seen_canonical();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].contains(r#""order_id":"ord_7""#), "{seen:?}");
    let audit = dir.audit();
    assert!(audit.contains("approval_used"), "{audit}");
    assert!(audit.contains("approval_denied"), "{audit}");
}

/// `[mcp] narrow_tools`: `tools/list` shows each tool as the user may call
/// it under the shop's Cedar policies (alice: her two orders); the gate
/// still refuses a call on another's order.
#[test]
fn tools_are_narrowed_for_the_user() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir =
        Dir::shop("\n[mcp]\nuser = \"alice\"\nenv = [\"MCP_TEST_SEEN\"]\nnarrow_tools = true\n");
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/shop_server.py");
    let mut raw = Raw::start(&dir, &[python.as_os_str(), server.as_os_str()]);
    raw.initialize();

    raw.send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let list = raw.recv();
    let tools = list
        .pointer("/result/tools")
        .and_then(Value::as_array)
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| text_at(t, "/name")).collect();
    assert_eq!(names, ["search", "get_order", "refund"]);
    let ids = |tool: &Value<'_>| -> Vec<String> {
        tool.pointer("/inputSchema/properties/order_id/enum")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no enum: {}", tool.to_canonical_string()))
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&tools[1]), ["ord_1001", "ord_1002"]);
    assert_eq!(ids(&tools[2]), ["ord_1001", "ord_1002"]);
    // search maps no resource: shown with the config's schema.
    assert!(tools[0].pointer("/inputSchema/properties/query").is_some());

    // The gate still decides: bob's order is refused, hers passes.
    raw.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_order","arguments":{"order_id":"ord_2001"}}}"#);
    let denied = raw.recv();
    assert_eq!(
        denied.pointer("/result/isError").and_then(Value::as_bool),
        Some(true),
        "{}",
        denied.to_canonical_string()
    );
    raw.send(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_order","arguments":{"order_id":"ord_1001"}}}"#);
    assert_eq!(text_at(&raw.recv(), "/result/content/0/text"), "ok");
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{stderr}");
    let seen = dir.seen_canonical();
    assert_eq!(
        seen,
        [r#"{"arguments":{"order_id":"ord_1001"},"name":"get_order"}"#]
    );
}

/// A 2026-07-28 client (the SDK's `Client(mode="2026-07-28")`, declaring
/// URL elicitation) with `[mcp] approvals_url`: a call that needs a human
/// is answered `input_required` with a URL elicitation naming the approval
/// and a MACed `requestState`; only the store's approval lets the retry
/// through, once, for the same arguments (`tests/mcp/mrtr_client.py`).
#[test]
fn a_modern_client_gets_input_required_and_only_the_store_approves() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = Dir::with_config(&examples_dir().join("mcp/toolgate.toml"));
    let text = std::fs::read_to_string(dir.config()).unwrap();
    let text = text.replace(
        "max_result_bytes = 4096",
        "max_result_bytes = 4096\napprovals_url = \"http://127.0.0.1:8080/ui/\"",
    );
    std::fs::write(dir.config(), text).unwrap();
    let out = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/mrtr_client.py"))
        .arg(toolgate_testkit::toolgate_path())
        .arg(dir.config())
        .arg(examples_dir().join("mcp/server.py"))
        .env("MCP_TEST_SEEN", dir.seen_file())
        .output()
        .unwrap();
    let steps = Steps::of(&out, "client");
    let step = |name: &str| steps.step(name);
    let is_error = |name: &str| steps.is_error(name);
    assert_eq!(text_at(step("era"), "/protocol_version"), "2026-07-28");
    assert_eq!(text_at(step("add"), "/text"), "5");

    // The SDK's own loop: the elicitation is URL mode, on the approvals
    // page for this approval; approved in the store, the retry runs.
    let round_trip = step("round_trip");
    assert_eq!(text_at(round_trip, "/elicited/0/mode"), "url");
    let url = text_at(round_trip, "/elicited/0/url");
    assert!(
        url.starts_with("http://127.0.0.1:8080/ui/#approval-"),
        "{url}"
    );
    assert_eq!(uint(step("approved_in_store"), "/code"), Some(0));
    assert_eq!(is_error("round_trip"), Some(Value::Bool(false)));
    assert_eq!(text_at(round_trip, "/text"), "refunded 700 cents on ord_7");

    // An "accept" with nobody approving is answered input_required again
    // until the SDK's round cap; a decline is an error result.
    assert_eq!(
        text_at(step("forged"), "/error"),
        "InputRequiredRoundsExceededError"
    );
    assert_eq!(is_error("declined"), Some(Value::Bool(true)));
    assert!(text_at(step("declined"), "/text").contains("the user declined"));

    // By hand: input_required with toolgate's state; then, approved in the
    // store, a tampered state and other arguments are refused (and do not
    // use the approval up), the right retry runs once, a replay does not.
    let first = step("manual_first");
    assert_eq!(first.pointer("/input_required"), Some(&Value::Bool(true)));
    assert_eq!(
        first.pointer("/keys"),
        Some(&json(r#"["toolgate_approval"]"#))
    );
    assert!(text_at(first, "/state").starts_with("toolgate.approval.v1."));
    assert_eq!(uint(step("manual_approved_in_store"), "/code"), Some(0));
    assert_eq!(is_error("manual_tampered"), Some(Value::Bool(true)));
    assert!(text_at(step("manual_tampered"), "/text")
        .starts_with("refused by toolgate: request_state_invalid"));
    assert_eq!(is_error("manual_other_args"), Some(Value::Bool(true)));
    assert!(text_at(step("manual_other_args"), "/text")
        .starts_with("refused by toolgate: request_state_mismatch"));
    assert_eq!(is_error("manual_right"), Some(Value::Bool(false)));
    assert_eq!(
        text_at(step("manual_right"), "/text"),
        "refunded 1000 cents on ord_10"
    );
    assert_eq!(is_error("manual_replayed"), Some(Value::Bool(true)));
    assert!(
        text_at(step("manual_replayed"), "/text").starts_with("refused by toolgate: approval_used")
    );
    // Denied by a human: an error result.
    assert_eq!(uint(step("denied_in_store"), "/code"), Some(0));
    assert_eq!(is_error("denied"), Some(Value::Bool(true)));
    assert!(text_at(step("denied"), "/text").starts_with("refused by toolgate: approval_denied"));

    // The server ran exactly the approved refunds, with their arguments.
    let seen: Vec<String> = dir
        .seen()
        .iter()
        .filter(|s| text_at(s, "/tool") == "refund")
        .map(|s| s.pointer("/arguments").unwrap().to_canonical_string())
        .collect();
    assert_eq!(
        seen,
        [
            r#"{"amount_cents":700,"order_id":"ord_7"}"#,
            r#"{"amount_cents":1000,"order_id":"ord_10"}"#
        ]
    );
    // The refusals are audited.
    let audit = dir.audit();
    for reason in [
        "reasons=request_state_invalid",
        "reasons=request_state_mismatch",
        "reasons=approval_used",
        "reasons=approval_denied",
    ] {
        assert!(audit.contains(reason), "{reason} not in:\n{audit}");
    }
}

/// Issue 17's fault test: the client leaves while its call is held for a
/// human. toolgate ends with the client (it does not sit out the hold),
/// the call never reaches the server, and its approval is withdrawn
/// (issue 28, item 11): a human approving it afterwards is refused.
#[test]
fn a_client_that_leaves_while_its_call_is_held_runs_nothing() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    let dir = Dir::with_config(&examples_dir().join("mcp/toolgate.toml"));
    let text = std::fs::read_to_string(dir.config()).unwrap();
    assert!(text.contains("max_result_bytes = 4096"));
    std::fs::write(
        dir.config(),
        text.replace(
            "max_result_bytes = 4096",
            "max_result_bytes = 4096\nhold_seconds = 120",
        ),
    )
    .unwrap();
    let server = examples_dir().join("mcp/server.py");
    let mut raw = Raw::start(&dir, &[python.as_os_str(), server.as_os_str()]);
    raw.initialize();
    raw.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refund","arguments":{"order_id":"ord_7","amount_cents":300},"_meta":{"progressToken":"p"}}}"#);
    let note = raw.recv();
    assert_eq!(text_at(&note, "/method"), "notifications/progress");
    let approval = text_at(&note, "/params/message")
        .strip_prefix("waiting for a human to approve approval ")
        .unwrap()
        .to_owned();
    let left = std::time::Instant::now();
    let (status, stderr) = raw.finish();
    assert!(
        left.elapsed() < Duration::from_secs(30),
        "toolgate sat out the hold: {:?}\n{stderr}",
        left.elapsed()
    );
    assert!(status.success(), "{stderr}");
    let config = dir.config();
    let out = toolgate(&[
        "approvals",
        "approve",
        &approval,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text_of(&out.stderr));
    assert!(
        text_of(&out.stderr).contains("is already withdrawn"),
        "{}",
        text_of(&out.stderr)
    );
    assert!(dir.seen().is_empty(), "{:?}", dir.seen());
    let audit = dir.audit();
    assert!(audit.contains("needs_approval"), "{audit}");
    assert!(audit.contains("approval_withdrawn"), "{audit}");
    assert!(!audit.contains("approval_used"), "{audit}");
}

/// Issue 28, item 11: an SDK user abandons a call toolgate holds for a
/// human (`tests/mcp/cancel_client.py` cancels the task awaiting
/// `call_tool`; the SDK sends `notifications/cancelled`). The hold ends at
/// once: the approval is withdrawn (audited, `withdrawn` in the CLI), a
/// human approving it afterwards is refused, and the call never reaches
/// the server. Run in both eras over stdio.
#[test]
fn a_cancelled_held_call_is_withdrawn_and_never_runs() {
    let python = match sdk_python() {
        Ok(p) => p,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    for mode in ["legacy", "2026-07-28"] {
        let dir = Dir::with_config(&examples_dir().join("mcp/toolgate.toml"));
        let text = std::fs::read_to_string(dir.config()).unwrap();
        std::fs::write(
            dir.config(),
            text.replace(
                "max_result_bytes = 4096",
                "max_result_bytes = 4096\nhold_seconds = 120",
            ),
        )
        .unwrap();
        let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/cancel_client.py");
        let server = examples_dir().join("mcp/server.py");
        let out = Command::new(&python)
            .arg(client)
            .arg(toolgate_testkit::toolgate_path())
            .arg(dir.config())
            .arg(format!("stdio:{}", server.display()))
            .arg(mode)
            .env("MCP_TEST_SEEN", dir.seen_file())
            .output()
            .unwrap();
        let steps = Steps::of(&out, mode);
        mcp_support::assert_cancelled_and_withdrawn(&steps, &dir);
    }
}
