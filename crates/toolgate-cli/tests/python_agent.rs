//! `examples/python/agent.py` against the live `toolgate serve` on a copy of
//! the shop: the canned model's search is allowed and run, its refund waits
//! for a human (approved here through the API as the approver) and then
//! runs, its refund of another customer's order is denied and the gate's
//! feedback goes back to the model, and its final answer ends the loop.
//! Needs `python3` (3.8 or newer; standard library only).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

mod serve_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serve_support::{Server, Shop, APPROVER};
use toolgate_json::Value;
use toolgate_testkit::examples_dir;

fn python() -> Option<String> {
    let ok = Command::new("python3")
        .arg("-c")
        .arg("import sys; assert sys.version_info >= (3, 8)")
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| "python3".to_owned())
}

#[test]
fn agent_loop_against_the_live_server() {
    let Some(python) = python() else {
        toolgate_testkit::skip("no python3 (3.8 or newer) for examples/python/agent.py");
        return;
    };
    let shop = Shop::new("");
    let server = Server::start(&shop.config);
    let mut agent = Command::new(python)
        .arg(examples_dir().join("python/agent.py"))
        .args(["--server", &format!("http://{}", server.addr)])
        .args(["--token", "agent-demo-token"])
        .args(["--user", "alice", "--session", "py-1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(agent.stdout.take().unwrap());
    let mut lines = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        if let Some((_, id)) = line.split_once("waiting for approval ") {
            // The human: the approver approves through the API.
            let r = server
                .call(
                    "POST",
                    &format!("/v1/approvals/{id}/approve"),
                    Some(APPROVER),
                    Some("application/json"),
                    br#"{"note":"late delivery confirmed"}"#,
                )
                .unwrap();
            assert_eq!(r.status, 200, "{}", r.body);
        }
        lines.push(line);
    }
    let out = agent.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "agent: {stderr}\n{lines:#?}");
    let expected = [
        "turn 1: search allow: ran it: {\"query\": \"waterproof hiking boots\", \"results\": [\"Trail boot\", \"Summit boot\", \"River boot\"]}",
        "turn 2: refund needs_approval: waiting for approval 1",
        "turn 2: approval 1 approved by demo-approver",
        "turn 2: refund allow: ran it: {\"order_id\": \"ord_1002\", \"refunded\": 2599}",
        "turn 3: refund deny (not_owner): feedback to the model: denied by toolgate: not_owner",
        "turn 4: answer: I found three pairs of boots and refunded order ord_1002 (25.99). I cannot refund ord_2001.",
    ];
    assert_eq!(lines, expected, "{stderr}");

    // The audit log holds every decision the agent obeyed, in order.
    drop(server);
    shop.verify();
    let decided: Vec<(String, String)> = shop
        .export()
        .iter()
        .filter_map(|r| {
            let call = r.pointer("/call_id").and_then(Value::as_str)?;
            let verdict = r.pointer("/verdict").and_then(Value::as_str)?;
            Some((call.to_owned(), verdict.to_owned()))
        })
        .collect();
    let decided: Vec<(&str, &str)> = decided
        .iter()
        .map(|(c, v)| (c.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        decided,
        [
            ("call_search_1", "allow"),
            ("call_refund_2", "needs_approval"),
            ("call_refund_2", "allow"),
            ("call_refund_3", "deny"),
        ]
    );
}

#[test]
fn agent_reports_a_refused_token_clearly() {
    let Some(python) = python() else {
        toolgate_testkit::skip("no python3 (3.8 or newer) for examples/python/agent.py");
        return;
    };
    let shop = Shop::new("");
    let server = Server::start(&shop.config);
    let out = Command::new(python)
        .arg(examples_dir().join("python/agent.py"))
        .args(["--server", &format!("http://{}", server.addr)])
        .args(["--token", "not-a-token"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("POST /v1/decide: HTTP 401: unauthorized"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}
