//! Black-box tests of the store from the command line (issue 5): the shop's
//! approval round trip through `toolgate check` and `toolgate approvals`,
//! the kill switch flipped by one process and honoured by another, and
//! `toolgate audit` naming a tampered record.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use cli_support::toolgate_cli;
use toolgate_json::Value;
use toolgate_testkit::{shop_file, text};

fn toolgate(args: &[&str]) -> Output {
    toolgate_cli().args(args).env("USER", "oncall").run()
}

/// A store in a fresh temporary folder, as a `--store` URL.
struct Db {
    _dir: tempfile::TempDir,
    path: PathBuf,
    url: String,
}

fn fresh_db() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let url = format!("sqlite://{}", path.display());
    Db {
        _dir: dir,
        path,
        url,
    }
}

/// `toolgate check --json` of one shop response as alice (or `context`),
/// on the store; the output object and the exit code.
fn check(db: &Db, context: &str, response: &str) -> (Value<'static>, i32) {
    let config = shop_file("toolgate.toml");
    let out = toolgate(&[
        "check",
        "--config",
        &config,
        "--store",
        &db.url,
        "--context",
        &shop_file(context),
        "--json",
        &shop_file(response),
    ]);
    let line = text(&out.stdout);
    let value = toolgate_json::from_str(line.trim_end())
        .unwrap_or_else(|e| panic!("{e}: {line} {}", text(&out.stderr)))
        .into_owned();
    (value, out.status.code().unwrap())
}

fn s(v: &Value<'_>, p: &str) -> String {
    v.pointer(p)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{p}"))
        .to_owned()
}

const REFUND: &str = "responses/openai-refund-needs-approval.json";

/// The refund response with new call ids (`…_{n}`), the same arguments:
/// a new call, not a replay. Its path.
fn renamed_calls(db: &Db, n: u32) -> String {
    let original = std::fs::read_to_string(shop_file(REFUND)).unwrap();
    let path = db.path.with_file_name(format!("refund-renamed-{n}.json"));
    let body = original
        .replace("call_refund_2", &format!("call_refund_{n}"))
        .replace("call_order_2", &format!("call_order_{n}"));
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

#[test]
fn the_shop_approval_round_trip() {
    let db = fresh_db();
    // 1. The refund needs a human: a pending approval is created.
    let (first, code) = check(&db, "context.json", REFUND);
    assert_eq!(code, 1);
    assert_eq!(s(&first, "/decisions/0/verdict"), "allow");
    assert_eq!(s(&first, "/decisions/1/verdict"), "needs_approval");
    let id = s(&first, "/decisions/1/approval");

    let listed = toolgate(&["approvals", "list", "--store", &db.url]);
    assert_eq!(listed.status.code(), Some(0));
    let listed = text(&listed.stdout);
    let mut lines = listed.lines();
    let header = lines.next().unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        [
            "id",
            "state",
            "kind",
            "user",
            "session",
            "tool",
            "digest",
            "expires",
            "arguments"
        ],
        "{listed}"
    );
    let row = lines.next().unwrap();
    assert_eq!(
        row.split_whitespace().take(5).collect::<Vec<_>>(),
        [id.as_str(), "pending", "single", "alice", "sess-7f3a"],
        "{listed}"
    );
    // The columns are padded: each cell starts under its header.
    assert_eq!(header.find("state"), row.find("pending"), "{listed}");
    let expires = row.split_whitespace().nth(7).unwrap();
    // Columns line up in characters (the digest's `…` is one, three bytes).
    let column = |line: &str, cell: &str| line[..line.find(cell).unwrap()].chars().count();
    assert_eq!(column(header, "expires"), column(row, expires), "{listed}");
    // What the call asked to do, under its header.
    let arguments = row.split_whitespace().last().unwrap();
    assert_eq!(
        arguments,
        r#"{"amount_cents":2599,"order_id":"ord_1002","reason":"late"}"#
    );
    assert_eq!(
        header.chars().count() - "arguments".len(),
        row.chars().count() - arguments.chars().count(),
        "{listed}"
    );

    // 2. A human approves it.
    let out = toolgate(&[
        "approvals",
        "approve",
        &id,
        "--note",
        "late delivery",
        "--store",
        &db.url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with(&format!("approval {id} approved by oncall")));
    // Approving twice is refused.
    let out = toolgate(&["approvals", "approve", &id, "--store", &db.url]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("already approved"),
        "{}",
        text(&out.stderr)
    );

    // 3. The same response again: allowed, once.
    let (second, code) = check(&db, "context.json", REFUND);
    assert_eq!(code, 0, "{second:?}");
    assert_eq!(s(&second, "/decisions/1/verdict"), "allow");
    assert_eq!(s(&second, "/decisions/1/approval"), id);
    assert_eq!(
        s(&second, "/decisions/1/digest"),
        s(&first, "/decisions/1/digest")
    );

    // 4. The same response a third time is a replay: denied, no human
    //    asked (issue 12).
    let (replayed, code) = check(&db, "context.json", REFUND);
    assert_eq!(code, 1);
    assert_eq!(s(&replayed, "/decisions/1/reasons/0/code"), "replayed_call");
    assert!(replayed.pointer("/decisions/1/approval").unwrap().is_null());
    // The same arguments in a new call: the approval is used; a human is
    // needed again.
    let new_call = renamed_calls(&db, 3);
    let (third, code) = check(&db, "context.json", &new_call);
    assert_eq!(code, 1);
    assert_eq!(s(&third, "/decisions/1/verdict"), "needs_approval");
    assert_ne!(s(&third, "/decisions/1/approval"), id);

    let show = toolgate(&["approvals", "show", &id, "--store", &db.url]);
    let show = text(&show.stdout);
    assert!(show.contains("state:      approved"), "{show}");
    assert!(show.contains("uses:       1"), "{show}");
    assert!(show.contains("note:       late delivery"), "{show}");

    // A denied approval lets nothing through.
    let next = s(&third, "/decisions/1/approval");
    let out = toolgate(&["approvals", "deny", &next, "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0));
    let (fourth, _) = check(&db, "context.json", &renamed_calls(&db, 4));
    assert_eq!(s(&fourth, "/decisions/1/verdict"), "needs_approval");
    let out = toolgate(&["approvals", "show", "999", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(1));

    // The audit log holds every decision and every human act, intact.
    let out = toolgate(&["audit", "verify", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let export = toolgate(&["audit", "export", "--jsonl", "--store", &db.url]);
    let lines: Vec<Value<'_>> = text(&export.stdout)
        .lines()
        .map(|l| toolgate_json::from_str(l).unwrap().into_owned())
        .collect();
    let verdicts: Vec<String> = lines.iter().map(|l| s(l, "/verdict")).collect();
    assert_eq!(
        verdicts,
        [
            "allow",
            "needs_approval",
            "approval_granted",
            "approval_used",
            "allow",
            "allow",
            // The replay: the order read is allowed, the refund denied.
            "allow",
            "deny",
            "allow",
            "needs_approval",
            "approval_denied",
            "allow",
            "needs_approval",
        ]
    );
    assert_eq!(s(&lines[2], "/actor"), "oncall");
    assert_eq!(s(&lines[1], "/user"), "alice");
    assert_eq!(s(&lines[1], "/tool"), "refund");
}

#[test]
fn cedar_denials_are_audited_with_their_policies() {
    let db = fresh_db();
    let (other, code) = check(
        &db,
        "context.json",
        "responses/openai-refund-other-users-order.json",
    );
    assert_eq!(code, 1);
    assert_eq!(s(&other, "/decisions/0/reasons/0/code"), "not_owner");
    let (over, _) = check(
        &db,
        "context.json",
        "responses/anthropic-refund-over-total.json",
    );
    assert_eq!(s(&over, "/decisions/0/reasons/0/code"), "not_authorized");
    let out = toolgate(&["audit", "tail", "-n", "3", "--jsonl", "--store", &db.url]);
    let tail = text(&out.stdout);
    assert_eq!(tail.lines().count(), 3, "{tail}");
    assert!(
        tail.contains(r#""policies":["order-of-another-user"]"#),
        "{tail}"
    );
    assert!(
        tail.contains(r#""policies":["refund-at-most-total"]"#),
        "{tail}"
    );
    let out = toolgate(&["audit", "tail", "--store", &db.url]);
    assert!(
        text(&out.stdout).contains("deny  user=alice  session=sess-7f3a  tool=refund"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_kill_switch_flipped_by_one_process_stops_the_next_decision_of_another() {
    let db = fresh_db();
    let search = "responses/openai-search.json";
    assert_eq!(check(&db, "context.json", search).1, 0);

    let out = toolgate(&[
        "kill",
        "on",
        "--mode",
        "deny-writes",
        "--reason",
        "incident 7",
        "--store",
        &db.url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("kill switch: deny_writes (since "));
    let (reads, code) = check(&db, "context.json", search);
    assert_eq!(code, 0, "{reads:?}");
    let (refund, _) = check(&db, "context.json", REFUND);
    assert_eq!(s(&refund, "/decisions/0/verdict"), "allow", "reads run");
    assert_eq!(s(&refund, "/decisions/1/reasons/0/code"), "kill_switch");

    let out = toolgate(&["kill", "on", "--reason", "incident 7", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0));
    let (all, code) = check(&db, "context.json", search);
    assert_eq!(code, 1);
    assert_eq!(s(&all, "/decisions/0/reasons/0/code"), "kill_switch");
    let status = toolgate(&["kill", "status", "--store", &db.url]);
    let status = text(&status.stdout);
    assert!(status.starts_with("kill switch: deny_all"), "{status}");
    assert!(status.contains("by oncall: incident 7"), "{status}");

    let out = toolgate(&["kill", "off", "--store", &db.url]);
    assert_eq!(text(&out.stdout).trim_end().split(' ').nth(2), Some("off"));
    assert_eq!(check(&db, "context-carol.json", search).1, 0);
    // The CLI takes the spelling the API and `kill status` print.
    for (mode, shown) in [("deny_writes", "deny_writes"), ("deny_all", "deny_all")] {
        let out = toolgate(&[
            "kill", "on", "--mode", mode, "--reason", "r", "--store", &db.url,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let expected = format!("kill switch: {shown} (since ");
        assert!(
            text(&out.stdout).starts_with(&expected),
            "{}",
            text(&out.stdout)
        );
    }
    assert_eq!(
        toolgate(&["kill", "off", "--store", &db.url]).status.code(),
        Some(0)
    );
    // A kill switch needs a reason.
    let out = toolgate(&["kill", "on", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(2));
}

fn tamper(path: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
}

#[test]
fn audit_verify_names_a_tampered_record() {
    let db = fresh_db();
    for _ in 0..2 {
        check(&db, "context.json", REFUND);
    }
    let out = toolgate(&["audit", "verify", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).starts_with("audit log intact: 4 records, head 4 sha256:"));

    // Someone turns the second record's needs_approval into an allow.
    tamper(&db.path, "UPDATE audit SET verdict = 'allow' WHERE seq = 2");
    let out = toolgate(&["audit", "verify", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("audit log broken at record 2: changed (last intact record 1 sha256:"),
        "{stdout}"
    );

    // Or deletes a record.
    let other = fresh_db();
    for _ in 0..2 {
        check(&other, "context.json", REFUND);
    }
    tamper(&other.path, "DELETE FROM audit WHERE seq = 3");
    let out = toolgate(&["audit", "verify", "--store", &other.url]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).starts_with("audit log broken at record 3: "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn audit_commands_never_create_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("missing.db").display());
    let out = toolgate(&["audit", "verify", "--store", &url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("missing.db").exists());
    let out = toolgate(&["audit", "verify", "--store", "postgres://u:pw@h/db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stderr).contains("pw"), "{}", text(&out.stderr));
    let out = toolgate(&["audit", "verify"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--config or --store is required"
    );
}

#[test]
fn help_documents_exit_codes() {
    for args in [
        &["audit", "verify", "--help"][..],
        &["approvals", "approve", "--help"],
        &["kill", "on", "--help"],
    ] {
        let out = toolgate(args);
        assert!(text(&out.stdout).contains("Exit codes:"), "{args:?}");
    }
}

#[test]
fn a_standing_approval_covers_a_tool_for_a_user_until_revoked() {
    let db = fresh_db();
    let out = toolgate(&[
        "approvals",
        "grant",
        "--user",
        "alice",
        "--tool",
        "refund",
        "--for-seconds",
        "600",
        "--note",
        "refund week",
        "--store",
        &db.url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let granted = text(&out.stdout);
    let id = granted
        .strip_prefix("approval ")
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .to_owned();
    assert!(
        granted.contains("`refund` for user `alice` for 600 s"),
        "{granted}"
    );
    // Any refund of hers that policy allows runs, again and again; each
    // call once (the same response again is a replay, issue 12).
    let (d, code) = check(&db, "context.json", REFUND);
    assert_eq!(code, 0, "{d:?}");
    assert_eq!(s(&d, "/decisions/1/verdict"), "allow");
    let (d, _) = check(&db, "context.json", REFUND);
    assert_eq!(s(&d, "/decisions/1/reasons/0/code"), "replayed_call");
    let original = std::fs::read_to_string(shop_file(REFUND)).unwrap();
    for n in 3..5 {
        let again = db.path.with_file_name(format!("refund-{n}.json"));
        let body = original
            .replace("call_refund_2", &format!("call_refund_{n}"))
            .replace("call_order_2", &format!("call_order_{n}"));
        std::fs::write(&again, body).unwrap();
        let (d, code) = check(&db, "context.json", again.to_str().unwrap());
        if n == 3 {
            assert_eq!(code, 0, "{d:?}");
            assert_eq!(s(&d, "/decisions/1/verdict"), "allow");
        } else {
            // A standing approval does not lift the shop's budget: a third
            // refund of 25.99 would bring alice's day to 77.97, past 60.00.
            assert_eq!(s(&d, "/decisions/1/reasons/0/code"), "budget_exceeded");
        }
    }
    // Not for another user: carol's refunds still need a human.
    let (d, _) = check(
        &db,
        "context-carol.json",
        "responses/openai-support-refunds.json",
    );
    assert_ne!(s(&d, "/decisions/0/verdict"), "allow");
    // Every use is in the audit log.
    let tail = toolgate(&["audit", "tail", "-n", "50", "--store", &db.url]);
    assert_eq!(tail.status.code(), Some(0));
    assert!(
        text(&tail.stdout).contains("approval_used"),
        "{}",
        text(&tail.stdout)
    );
    // Revoked: back to a human.
    let out = toolgate(&["approvals", "deny", &id, "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // (A refund of 5.00: within what is left of alice's 60.00 today.)
    let small = renamed_calls(&db, 9);
    let body = std::fs::read_to_string(&small).unwrap();
    assert!(body.contains("2599"));
    std::fs::write(&small, body.replace("2599", "500")).unwrap();
    let (d, code) = check(&db, "context.json", &small);
    assert_eq!(code, 1);
    assert_eq!(s(&d, "/decisions/1/verdict"), "needs_approval");
    // Out of bounds durations are usage errors.
    for bad in ["0", "2592001", "x"] {
        let out = toolgate(&[
            "approvals",
            "grant",
            "--user",
            "alice",
            "--tool",
            "refund",
            "--for-seconds",
            bad,
            "--store",
            &db.url,
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}

/// A standing grant is bound to an upstream: one for `billing` covers
/// nothing routed to none (`toolgate check`), and a bad name is refused.
#[test]
fn a_standing_grant_for_an_upstream_covers_nothing_routed_elsewhere() {
    let db = fresh_db();
    let grant = |extra: &[&str]| {
        let mut args = vec![
            "approvals",
            "grant",
            "--user",
            "alice",
            "--tool",
            "refund",
            "--for-seconds",
            "600",
            "--store",
            &db.url,
        ];
        args.extend_from_slice(extra);
        toolgate(&args)
    };
    let out = grant(&["--upstream", "billing"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(calls routed to upstream `billing`)"),
        "{}",
        text(&out.stdout)
    );
    let (d, code) = check(&db, "context.json", REFUND);
    assert_eq!(code, 1, "{d:?}");
    assert_eq!(s(&d, "/decisions/1/verdict"), "needs_approval");
    let out = toolgate(&[
        "approvals",
        "list",
        "--state",
        "approved",
        "--store",
        &db.url,
    ]);
    assert!(
        text(&out.stdout).contains("billing"),
        "{}",
        text(&out.stdout)
    );
    let out = grant(&["--upstream", "no such/name"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// Issue 13, item 7: characters that change how text reads (U+202E shows
/// "amount: 1" as "1 :tnuoma") or do not show at all are printed escaped
/// by `toolgate approvals show`.
#[test]
fn approvals_show_escapes_bidi_and_invisible_characters() {
    let db = fresh_db();
    let (first, _) = check(&db, "context.json", REFUND);
    let id = s(&first, "/decisions/1/approval");
    let note = "amount: \u{202e}1 \u{2066}x\u{2069} zero\u{200b}width \u{feff}bom \u{61c}alm \u{e0041}tag \u{ad}shy";
    let out = toolgate(&[
        "approvals",
        "approve",
        &id,
        "--note",
        note,
        "--store",
        &db.url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let show = text(&toolgate(&["approvals", "show", &id, "--store", &db.url]).stdout);
    let line = show
        .lines()
        .find(|l| l.starts_with("note:"))
        .unwrap_or_else(|| panic!("{show}"));
    for escaped in [
        "\\u{202e}",
        "\\u{2066}",
        "\\u{2069}",
        "\\u{200b}",
        "\\u{feff}",
        "\\u{61c}",
        "\\u{e0041}",
        "\\u{ad}",
    ] {
        assert!(line.contains(escaped), "{escaped} in {line:?}");
    }
    assert!(
        line.chars()
            .all(|c| c.is_ascii_graphic() || c == ' ' || c == '…'),
        "{line:?}"
    );
}

/// Issue 13, item 8: an approval no human decided before its expiry is
/// `expired` in every listing and in `show`, never pending.
#[test]
fn an_approval_past_its_expiry_is_expired_in_list_and_show() {
    let db = fresh_db();
    let (first, _) = check(&db, "context.json", REFUND);
    let id = s(&first, "/decisions/1/approval");
    let list = |state: &str| {
        let out = toolgate(&["approvals", "list", "--state", state, "--store", &db.url]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(list("pending"), [format!("{id} pending")]);
    assert!(list("expired").is_empty());
    // Its time passes (the store's clock is the system's: move the expiry).
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    conn.execute("UPDATE approvals SET expires_at = 1 WHERE id = ?1", [&id])
        .unwrap();
    drop(conn);
    assert!(list("pending").is_empty());
    assert_eq!(list("expired"), [format!("{id} expired")]);
    let show = text(&toolgate(&["approvals", "show", &id, "--store", &db.url]).stdout);
    assert!(show.contains("state:      expired"), "{show}");
    // The same call asks a human again, with a new approval.
    let (again, _) = check(&db, "context.json", REFUND);
    assert_eq!(s(&again, "/decisions/1/verdict"), "needs_approval");
    assert_ne!(s(&again, "/decisions/1/approval"), id);
}

#[test]
fn the_approvals_help_names_every_subcommand_and_shows_own_exit_codes() {
    let out = toolgate(&["approvals", "--help"]);
    let help = text(&out.stdout);
    assert!(help.contains("grant"), "{help}");
    let out = toolgate(&["help", "approvals"]);
    assert_eq!(out.status.code(), Some(0));
    let top = text(&toolgate(&["--help"]).stdout);
    assert!(
        top.contains("list, show, approve, deny, grant, notices"),
        "{top}"
    );
    let show = text(&toolgate(&["approvals", "show", "--help"]).stdout);
    assert!(show.contains("1  no such approval\n"), "{show}");
    assert!(!show.contains("already decided"), "{show}");
    let check = text(&toolgate(&["check", "--help"]).stdout);
    assert!(check.contains("allowed_calls"), "{check}");
    assert!(check.contains("<RESPONSE>"), "{check}");
}

#[test]
fn approvals_show_prints_the_arguments_the_approver_decides_on() {
    let db = fresh_db();
    let (held, _) = check(&db, "context.json", REFUND);
    let id = s(&held, "/decisions/1/approval").to_owned();
    let out = toolgate(&["approvals", "show", &id, "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains(
            "\narguments:  {\"amount_cents\":2599,\"order_id\":\"ord_1002\",\"reason\":\"late\"}\n"
        ),
        "{shown}"
    );
}

#[test]
fn approvals_show_says_why_the_call_was_held_and_what_the_session_did() {
    let db = fresh_db();
    let (held, _) = check(&db, "context.json", REFUND);
    let id = s(&held, "/decisions/1/approval").to_owned();
    let config = shop_file("toolgate.toml");
    let out = toolgate(&[
        "approvals",
        "show",
        &id,
        "--config",
        &config,
        "--store",
        &db.url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for line in [
        "\ncall id:    call_refund_2\n",
        "\nheld for:   approval_required\n",
        "\napproved by: -\n",
        "\nusage:      refund_total (per user): 0 of 6000 in the last 86400 s\n",
    ] {
        assert!(shown.contains(line), "{line:?} in {shown}");
    }
    // The session's decisions, newest first: the held refund, then the
    // order it read.
    let recent = shown.split("\nrecent:\n").nth(1).unwrap();
    let lines: Vec<&str> = recent.lines().collect();
    assert!(
        lines[0].contains("needs_approval  refund  call=call_refund_2"),
        "{recent}"
    );
    assert!(lines[1].contains("allow  get_order"), "{recent}");

    // Approving with a two-person rule in the store: one vote, pending.
    let quorum_db = fresh_db();
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    let two = dir.path().join("toolgate.toml");
    let text_of = std::fs::read_to_string(&two).unwrap();
    std::fs::write(
        &two,
        format!("{text_of}\n[[approvals.quorum]]\nrisk = \"destructive\"\napprovers = 2\n"),
    )
    .unwrap();
    let out = toolgate(&[
        "check",
        "--config",
        two.to_str().unwrap(),
        "--store",
        &quorum_db.url,
        "--context",
        &shop_file("context.json"),
        "--json",
        &shop_file(REFUND),
    ]);
    let held = toolgate_json::from_str(text(&out.stdout).trim_end())
        .unwrap()
        .into_owned();
    let id = s(&held, "/decisions/1/approval");
    let vote = |actor: &str| {
        toolgate(&[
            "approvals",
            "approve",
            &id,
            "--actor",
            actor,
            "--store",
            &quorum_db.url,
        ])
    };
    let out = vote("bob");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("approved by bob: 1 of 2 distinct approvers, still pending"),
        "{said}"
    );
    assert!(said.contains("\nstate:      pending\n"), "{said}");
    assert!(said.contains("\napprovers:  1 of 2 distinct\n"), "{said}");
    let out = vote("bob");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("already approved by `bob`"));
    let out = vote("carol");
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("approved by carol"));
}

#[test]
fn approvals_notices_lists_each_delivery_escaped() {
    let db = fresh_db();
    let out = toolgate(&["approvals", "notices", "--store", &db.url]);
    // A store that does not exist yet is not created by a read.
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let (held, _) = check(&db, "context.json", REFUND);
    let id: u64 = s(&held, "/decisions/1/approval").parse().unwrap();
    let out = toolgate(&["approvals", "notices", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "no notices\n");

    use toolgate_store::{ApprovalId, NoticeState, SqliteStore, Store, Timestamp};
    let store = SqliteStore::open(&db.path).unwrap();
    let at = Timestamp::from_unix_seconds(1_767_225_600);
    let id = ApprovalId::new(id);
    assert!(store.claim_notice(id, "ops", at).unwrap());
    store
        .record_notice(id, "ops", NoticeState::Failed, 4, "500\u{202e} evil", at)
        .unwrap();
    drop(store);
    let out = toolgate(&["approvals", "notices", "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed = text(&out.stdout);
    let mut lines = listed.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        ["approval", "sink", "state", "attempts", "updated", "outcome"]
    );
    let row = lines.next().unwrap();
    let id = id.to_string();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        [
            id.as_str(),
            "ops",
            "failed",
            "4",
            "2026-01-01T00:00:00Z",
            "500\\u{202e}",
            "evil"
        ],
        "{listed}"
    );
}

/// The facts the holding Cedar policy read are printed with the
/// approval: the order's total that made it ask for a human.
#[test]
fn approvals_show_prints_what_the_holding_policy_read() {
    let db = fresh_db();
    let shop = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(shop.path());
    let policies = shop.path().join("policies.cedar");
    let mut text_of = std::fs::read_to_string(&policies).unwrap();
    text_of.push_str(
        "\n@id(\"big-orders-need-a-human\")\n@approval(\"required\")\n\
         forbid(principal, action == Action::\"refund\", resource)\n\
         when { resource.total_cents > 2000 };\n",
    );
    std::fs::write(&policies, text_of).unwrap();
    let config = shop.path().join("toolgate.toml").display().to_string();
    let out = toolgate(&[
        "check",
        "--config",
        &config,
        "--store",
        &db.url,
        "--context",
        &shop_file("context.json"),
        "--json",
        &shop_file(REFUND),
    ]);
    let line = text(&out.stdout);
    let held = toolgate_json::from_str(line.trim_end())
        .unwrap_or_else(|e| panic!("{e}: {line} {}", text(&out.stderr)))
        .into_owned();
    let id = s(&held, "/decisions/1/approval");
    let out = toolgate(&["approvals", "show", &id, "--store", &db.url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("\npolicy read: resource.total_cents = 2599\n"),
        "{shown}"
    );
}
