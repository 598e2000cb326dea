//! Black-box tests of `toolgate redteam`: the shop passes (no attack let
//! through, no valid call denied), loosened copies of it fail in the
//! classes their holes open, an over-blocking policy fails its valid calls,
//! every failing case replays with `toolgate check`, and the run is
//! deterministic for a seed and never touches the config's store.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use std::path::Path;

use cli_support::toolgate;
use toolgate_json::Value;
use toolgate_testkit::{copy_shop, text};

fn edit(path: &Path, from: &str, to: &str) {
    let s = std::fs::read_to_string(path).unwrap();
    assert!(s.contains(from), "`{from}` not in {}", path.display());
    std::fs::write(path, s.replacen(from, to, 1)).unwrap();
}

/// `(attacks, allowed, valid, denied)` of one tool's class in a JSON report.
fn tally(report: &Value<'_>, tool: &str, class: &str) -> (i64, i64, i64, i64) {
    let tools = report
        .as_object()
        .unwrap()
        .get("tools")
        .unwrap()
        .as_array()
        .unwrap();
    let t = tools
        .iter()
        .find(|t| t.as_object().unwrap().get("tool").unwrap().as_str() == Some(tool))
        .unwrap_or_else(|| panic!("no tool {tool}"));
    let classes = t
        .as_object()
        .unwrap()
        .get("classes")
        .unwrap()
        .as_array()
        .unwrap();
    let Some(c) = classes
        .iter()
        .find(|c| c.as_object().unwrap().get("class").unwrap().as_str() == Some(class))
    else {
        return (0, 0, 0, 0);
    };
    let n = |k: &str| {
        c.as_object()
            .unwrap()
            .get(k)
            .unwrap()
            .as_number()
            .unwrap()
            .as_i64()
            .unwrap()
    };
    (n("attacks"), n("allowed"), n("valid"), n("denied"))
}

fn run_json(config: &Path, cases: &Path) -> (Option<i32>, Value<'static>) {
    let out = toolgate(&[
        "redteam",
        "--config",
        config.to_str().unwrap(),
        "--format",
        "json",
        "--cases",
        cases.to_str().unwrap(),
    ]);
    let stdout = out.stdout.clone();
    let report = toolgate_json::from_slice(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", text(&stdout), text(&out.stderr)))
        .into_owned();
    (out.status.code(), report)
}

fn totals(report: &Value<'_>) -> (i64, i64, i64, i64) {
    let t = report
        .as_object()
        .unwrap()
        .get("totals")
        .unwrap()
        .as_object()
        .unwrap();
    let n = |k: &str| t.get(k).unwrap().as_number().unwrap().as_i64().unwrap();
    (n("attacks"), n("allowed"), n("valid"), n("denied"))
}

#[test]
fn the_shop_lets_no_attack_through_and_denies_no_valid_call() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let config = dir.path().join("toolgate.toml");
    let cases = dir.path().join("cases");
    let out = toolgate(&[
        "redteam",
        "--config",
        config.to_str().unwrap(),
        "--cases",
        cases.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let last = stdout.lines().last().unwrap();
    assert!(
        last.starts_with("redteam: ")
            && last.contains(" attacks, 0 allowed; ")
            && last.ends_with(" valid calls, 0 denied"),
        "{last}"
    );
    // Nothing failed, so nothing was written; the config's store was never opened.
    assert!(!cases.exists());
    assert!(!dir.path().join("toolgate.db").exists());

    let (code, report) = run_json(&config, &cases);
    assert_eq!(code, Some(0));
    let (attacks, allowed, valid, denied) = totals(&report);
    assert!(attacks > 2000 && valid > 50, "{attacks} {valid}");
    assert_eq!((allowed, denied), (0, 0));
    // Each class of attack the shop's tools call for was tried.
    for (tool, class) in [
        ("fetch_url", "ssrf"),
        ("get_order", "ownership"),
        ("get_order", "pattern_bypass"),
        ("refund", "ownership"),
        ("refund", "over_limit"),
        ("refund", "replay"),
        ("refund", "duplicate_key"),
        ("refund", "type_confusion"),
        ("refund", "non_finite"),
        ("refund", "bounds"),
        ("refund", "rounding"),
        ("search", "rounding"),
        ("search", "length"),
        ("search", "extra_member"),
        ("search", "name_lookalike"),
        ("search", "markup_in_text"),
        ("search", "truncated"),
        ("search", "not_object"),
        ("run_tests", "null_for_absent"),
        ("run_tests", "missing_member"),
        ("refund", "limit"),
        ("fetch_url", "limit"),
        ("fetch_url", "flow"),
    ] {
        let (a, ..) = tally(&report, tool, class);
        assert!(a > 0, "no {class} attack on {tool}");
    }
    let loop_runs: i64 = ["search", "get_order", "fetch_url"]
        .iter()
        .map(|t| tally(&report, t, "loop_run").0)
        .sum();
    assert_eq!(loop_runs, 1, "one session run past its turn cap");
    // Valid calls: each tool's own, in every format, and the approved refund.
    for tool in ["search", "get_order", "refund", "fetch_url", "run_tests"] {
        assert!(tally(&report, tool, "valid").2 >= 18, "{tool}");
    }
}

/// Issue 31: the red team aims at the strict defaults. A shop whose URL
/// policy stops resolving lets the name of its resolver table that points
/// inside through (and nothing else); the shop as shipped denies it.
#[test]
fn redteam_catches_a_policy_that_stops_resolving_hosts() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let d = dir.path();
    edit(
        &d.join("toolgate.toml"),
        "ports = [443] }",
        "ports = [443], resolve = false }",
    );
    let (code, report) = run_json(&d.join("toolgate.toml"), &d.join("cases"));
    assert_eq!(code, Some(1));
    let failures = report.as_object().unwrap().get("failures").unwrap();
    let labels: Vec<&str> = failures
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f.as_object()
                .unwrap()
                .get("label")
                .unwrap()
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(!labels.is_empty());
    assert!(
        labels
            .iter()
            .all(|l| l.contains("resolves inside (internal.example.com)")
                || l.contains("does not resolve")),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|l| l.contains("internal.example.com")),
        "{labels:?}"
    );
    assert_eq!(totals(&report).3, 0, "no valid call denied");
}

#[test]
fn a_loosened_shop_fails_in_the_classes_its_holes_open_and_each_case_replays() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let d = dir.path();
    // An open schema, a URL argument without a policy, a refund without ownership.
    edit(
        &d.join("schemas/search.json"),
        r#""additionalProperties": false"#,
        r#""additionalProperties": true"#,
    );
    let toml = std::fs::read_to_string(d.join("toolgate.toml")).unwrap();
    let start = toml.find("url_policy = {").unwrap();
    let end = start + toml[start..].find('\n').unwrap();
    std::fs::write(
        d.join("toolgate.toml"),
        format!("{}url_policy = \"none\"{}", &toml[..start], &toml[end..]),
    )
    .unwrap();
    edit(
        &d.join("policies.cedar"),
        "permit(principal, action == Action::\"refund\", resource)\nwhen { resource.owner == principal };",
        "permit(principal, action == Action::\"refund\", resource);",
    );
    edit(
        &d.join("policies.cedar"),
        "forbid(principal, action in [Action::\"get_order\", Action::\"refund\"], resource)",
        "forbid(principal, action == Action::\"get_order\", resource)",
    );
    let cases = d.join("cases");
    let (code, report) = run_json(&d.join("toolgate.toml"), &cases);
    assert_eq!(code, Some(1));
    assert!(tally(&report, "search", "extra_member").1 > 0);
    assert!(tally(&report, "fetch_url", "ssrf").1 > 0);
    assert!(tally(&report, "refund", "ownership").1 > 0);
    // The holes open nothing else: the other classes still hold.
    for (tool, class) in [
        ("search", "type_confusion"),
        ("search", "duplicate_key"),
        ("fetch_url", "name_lookalike"),
        ("get_order", "ownership"),
        ("refund", "over_limit"),
        ("refund", "duplicate_key"),
    ] {
        assert_eq!(tally(&report, tool, class).1, 0, "{tool} {class}");
    }
    assert_eq!(totals(&report).3, 0, "no valid call denied");

    // Every failure is written out, and replays as a call that is not denied.
    let failures = report
        .as_object()
        .unwrap()
        .get("failures")
        .unwrap()
        .as_array()
        .unwrap();
    assert_eq!(i64::try_from(failures.len()).unwrap(), totals(&report).1);
    for f in failures.iter().step_by(37) {
        let f = f.as_object().unwrap();
        let out = toolgate(&[
            "check",
            "--config",
            d.join("toolgate.toml").to_str().unwrap(),
            "--store",
            "sqlite::memory:",
            "--json",
            "--context",
            f.get("context").unwrap().as_str().unwrap(),
            f.get("body").unwrap().as_str().unwrap(),
        ]);
        let line = toolgate_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
        let verdict = line
            .as_object()
            .unwrap()
            .get("verdict")
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned();
        assert_ne!(verdict, "deny", "{}", text(&out.stdout));
    }
}

#[test]
fn a_limit_no_policy_enforces_is_an_attack_let_through() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let d = dir.path();
    edit(
        &d.join("policies.cedar"),
        "when { context.args.amount_cents > resource.total_cents };",
        "when { false };",
    );
    // The shop's daily refund budget would stop most of these refunds
    // itself: lifted, so that only the policies stand in the way.
    edit(&d.join("toolgate.toml"), "max = 6000", "max = 10000000");
    let (code, report) = run_json(&d.join("toolgate.toml"), &d.join("cases"));
    assert_eq!(code, Some(1));
    assert!(tally(&report, "refund", "over_limit").1 > 0);
    assert_eq!(totals(&report).3, 0);
}

/// The failures' labels in a JSON report, for one tool and class.
fn failure_labels(report: &Value<'_>, tool: &str, class: &str) -> Vec<String> {
    report
        .pointer("/failures")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter(|f| {
            f.pointer("/tool").and_then(Value::as_str) == Some(tool)
                && f.pointer("/class").and_then(Value::as_str) == Some(class)
        })
        .map(|f| {
            f.pointer("/label")
                .and_then(Value::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn a_budget_counted_per_session_is_split_across_sessions() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let d = dir.path();
    edit(
        &d.join("toolgate.toml"),
        "per = \"user\"\nsum = \"/amount_cents\"",
        "per = \"session\"\nsum = \"/amount_cents\"",
    );
    let (code, report) = run_json(&d.join("toolgate.toml"), &d.join("cases"));
    assert_eq!(code, Some(1));
    // Only the split across sessions gets through: within one session, in
    // one response, concurrently and at the window's edge the cap holds.
    let through = failure_labels(&report, "refund", "limit");
    assert_eq!(through.len(), 1, "{through:?}");
    assert!(through[0].contains("across sessions"), "{through:?}");
    assert_eq!(totals(&report).3, 0, "no valid call denied");
}

#[test]
fn a_limit_the_gate_holds_passes_every_split_and_the_window_edge() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let (code, report) = run_json(&dir.path().join("toolgate.toml"), &dir.path().join("cases"));
    assert_eq!(code, Some(0));
    // refund_total: in one session, across sessions, concurrently, before
    // the window's edge (the refund is held, so not in one response).
    let (attacks, allowed, ..) = tally(&report, "refund", "limit");
    assert!(attacks >= 4 && allowed == 0, "{attacks} {allowed}");
    // fetches_per_session: in one session, in one response, concurrently,
    // before the edge; splitting across sessions is only noted.
    let (attacks, allowed, valid, denied) = tally(&report, "fetch_url", "limit");
    assert!(attacks >= 4 && allowed == 0, "{attacks} {allowed}");
    assert_eq!(denied, 0, "{valid}");
    let untested = report
        .pointer("/untested")
        .and_then(Value::as_array)
        .unwrap();
    assert!(
        untested.iter().any(|u| u
            .pointer("/reason")
            .and_then(Value::as_str)
            .is_some_and(|r| r.contains("fetches_per_session") && r.contains("per session"))),
        "{untested:?}"
    );
    // The call at the window's edge runs again.
    assert!(tally(&report, "fetch_url", "valid").2 > 0);
}

#[test]
fn an_egress_tool_without_a_flow_rule_lets_the_trifecta_through() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let d = dir.path();
    edit(
        &d.join("policies.cedar"),
        "context.labels.contains(\"private_data\")",
        "context.labels.contains(\"no_such_label\")",
    );
    let (code, report) = run_json(&d.join("toolgate.toml"), &d.join("cases"));
    assert_eq!(code, Some(1));
    // Directly after the reads, and with the other tools' calls between.
    let through = failure_labels(&report, "fetch_url", "flow");
    assert_eq!(through.len(), 2, "{through:?}");
    assert!(
        through[0].starts_with("egress after the session read private_data, untrusted_content")
            && through[1].contains(", then "),
        "{through:?}"
    );
    assert_eq!(totals(&report).3, 0, "no valid call denied");
}

#[test]
fn over_blocking_fails_the_valid_calls() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let d = dir.path();
    let policies = d.join("policies.cedar");
    let mut p = std::fs::read_to_string(&policies).unwrap();
    p.push_str("\n@id(\"no-long-queries\")\n@code(\"not_authorized\")\nforbid(principal, action == Action::\"search\", resource)\nwhen { context.args has limit && context.args.limit > 40 };\n");
    std::fs::write(&policies, p).unwrap();
    let (code, report) = run_json(&d.join("toolgate.toml"), &d.join("cases"));
    assert_eq!(code, Some(1));
    let (_, _, valid, denied) = tally(&report, "search", "valid");
    assert!(denied > 0 && denied < valid, "{denied} of {valid}");
    assert_eq!(totals(&report).1, 0, "no attack let through");
}

#[test]
fn the_same_seed_gives_the_same_report_and_junit_is_written_to_out() {
    let dir = tempfile::tempdir().unwrap();
    copy_shop(dir.path());
    let config = dir.path().join("toolgate.toml");
    let args = |seed: &str| {
        let out = toolgate(&[
            "redteam",
            "--config",
            config.to_str().unwrap(),
            "--seed",
            seed,
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        out.stdout
    };
    assert_eq!(args("7"), args("7"));

    let xml = dir.path().join("report.xml");
    let out = toolgate(&[
        "redteam",
        "--config",
        config.to_str().unwrap(),
        "--format",
        "junit",
        "--out",
        xml.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let xml = std::fs::read_to_string(xml).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "));
    let tests: usize = xml
        .split("tests=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(xml.matches("<testcase ").count(), tests);
    assert_eq!(xml.matches("<testsuite ").count(), 5);
    assert!(!xml.contains("<failure"));
    assert!(xml.trim_end().ends_with("</testsuites>"));
}

#[test]
fn usage_and_config_errors_exit_2() {
    let out = toolgate(&["redteam", "--config", "/nonexistent/toolgate.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("toolgate: error: "),
        "{}",
        text(&out.stderr)
    );
    let out = toolgate(&["redteam", "--config", "x.toml", "--format", "xml"]);
    assert_eq!(out.status.code(), Some(2));
    let out = toolgate(&["redteam", "--config", "x.toml", "--seed", "-1"]);
    assert_eq!(out.status.code(), Some(2));
}
