//! `toolgate approvals list` and `show` name the upstream an approval's
//! call goes to (the MCP proxy stores it with the approval; its binding is
//! tested in `crates/toolgate-mcp/tests/upstream_approvals.rs`), and say
//! nothing of one for approvals without.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

mod cli_support;

use cli_support::toolgate_cli;
use toolgate_testkit::{shop_file, text};

fn toolgate(args: &[&str]) -> std::process::Output {
    toolgate_cli().args(args).env("USER", "oncall").run()
}

#[test]
fn approvals_list_and_show_name_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let url = format!("sqlite://{}", path.display());
    // A held refund: one pending approval, with no upstream.
    let out = toolgate(&[
        "check",
        "--config",
        &shop_file("toolgate.toml"),
        "--store",
        &url,
        "--context",
        &shop_file("context.json"),
        "--json",
        &shop_file("responses/openai-refund-needs-approval.json"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));

    let list = text(&toolgate(&["approvals", "list", "--store", &url]).stdout);
    let header: Vec<&str> = list.lines().next().unwrap().split_whitespace().collect();
    assert!(!header.contains(&"upstream"), "{list}");
    let show = text(&toolgate(&["approvals", "show", "1", "--store", &url]).stdout);
    assert!(!show.contains("upstream:"), "{show}");

    // The row as the MCP proxy writes it: the upstream its call goes to.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE approvals SET upstream = 'billing' WHERE id = 1", [])
        .unwrap();
    drop(conn);

    let list = text(&toolgate(&["approvals", "list", "--store", &url]).stdout);
    let mut lines = list.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "id",
            "state",
            "kind",
            "user",
            "session",
            "tool",
            "upstream",
            "digest",
            "expires",
            "arguments"
        ],
        "{list}"
    );
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(row[5..7], ["refund", "billing"], "{list}");
    let show = text(&toolgate(&["approvals", "show", "1", "--store", &url]).stdout);
    let lines: Vec<&str> = show.lines().collect();
    let tool = lines.iter().position(|l| l.starts_with("tool:")).unwrap();
    assert_eq!(lines[tool + 1], "upstream:   billing", "{show}");
}
