//! Black-box tests of `toolgate check`: output, wire format and exit codes,
//! over the shop example.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use std::path::PathBuf;
use std::process::Output;

use cli_support::toolgate_reading;
use toolgate_testkit::{shop_file, text};

fn check(extra: &[&str], stdin: &[u8]) -> Output {
    let config = shop_file("toolgate.toml");
    let context = shop_file("context.json");
    let mut args = vec![
        "check",
        "--no-authorization",
        "--no-store",
        "--config",
        &config,
        "--context",
        &context,
    ];
    args.extend_from_slice(extra);
    toolgate_reading(&args, stdin)
}

const SEARCH: &[u8] = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"query\":\"boots\"}"}}]}}]}"#;

#[test]
fn an_allowed_response_exits_0_with_a_table() {
    let out = check(&["-"], SEARCH);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "-: openai, finish complete (tool_calls): allow\n\
         \x20 #  call id  tool    verdict  reasons\n\
         \x20 0  call_1   search  allow    -\n\n"
    );
}

#[test]
fn json_output_is_one_canonical_object_per_input() {
    let out = check(&["--json", "-"], SEARCH);
    assert_eq!(out.status.code(), Some(0));
    let line = text(&out.stdout);
    let value = toolgate_json::from_str(line.trim_end()).unwrap();
    assert_eq!(toolgate_json::canonical::to_string(&value), line.trim_end());
    assert_eq!(value.pointer("/format").unwrap().as_str(), Some("openai"));
    assert_eq!(value.pointer("/verdict").unwrap().as_str(), Some("allow"));
    assert_eq!(
        value.pointer("/decisions/0/tool").unwrap().as_str(),
        Some("search")
    );
    assert_eq!(
        value.pointer("/decisions/0/call_id").unwrap().as_str(),
        Some("call_1")
    );
    let digest = toolgate_json::Digest::of(br#"{"query":"boots"}"#).to_string();
    assert_eq!(
        value.pointer("/decisions/0/digest").unwrap().as_str(),
        Some(digest.as_str())
    );
}

#[test]
fn the_shop_responses_get_their_documented_verdicts() {
    let cases = [
        ("openai-search.json", "allow", ""),
        ("openai-stream-search.sse", "allow", ""),
        ("anthropic-refund-approved.json", "allow", ""),
        (
            "openai-refund-needs-approval.json",
            "needs_approval",
            "approval_required",
        ),
        (
            "responses-run-tests.json",
            "needs_approval",
            "approval_required",
        ),
        ("openai-duplicate-amount.json", "deny", "duplicate_key"),
        ("anthropic-duplicate-amount.json", "deny", "duplicate_key"),
        ("openai-truncated.json", "deny", "truncated"),
        ("anthropic-stream-cut.sse", "deny", "truncated"),
        (
            "responses-fetch-metadata.json",
            "deny",
            "url_forbidden_address",
        ),
        (
            "gemini-fetch-loopback.json",
            "deny",
            "url_forbidden_address",
        ),
        ("gemini-coerced-types.json", "deny", "type_mismatch"),
        ("mcp-unknown-tool.json", "deny", "unknown_tool"),
        ("mcp-lookalike-name.json", "deny", "unknown_tool"),
        ("deepseek-dsml-leak.json", "allow", "dsml_markup"),
    ];
    for (file, verdict, code) in cases {
        let path = shop_file(&format!("responses/{file}"));
        let out = check(&["--json", &path], b"");
        let line = text(&out.stdout);
        let value = toolgate_json::from_str(line.trim_end()).unwrap();
        assert_eq!(
            value.pointer("/verdict").unwrap().as_str(),
            Some(verdict),
            "{file}: {line}"
        );
        assert!(
            code.is_empty() || line.contains(&format!("\"{code}\"")),
            "{file}: {line}"
        );
        let expected = if verdict == "allow" { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(expected), "{file}");
    }
}

#[test]
fn a_rejected_body_and_findings_are_reported() {
    let out = check(&["-"], br#"{"choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"refund","arguments":"{}"}}]}}]}"#);
    assert_eq!(out.status.code(), Some(1));
    let s = text(&out.stdout);
    assert!(s.contains("finding: truncated (denies)"), "{s}");
    let out = check(&["-"], b"{\"a\":1,\"a\":2}");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        "-: format not read: deny\n  rejected: body_invalid_json (duplicate_key)\n\n"
    );
}

#[test]
fn markup_in_text_is_no_calls_not_an_allow() {
    let body = shop_file("responses/deepseek-dsml-leak.json");
    let out = check(&[&body], b"");
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    let first = s.lines().next().unwrap();
    assert!(
        first.ends_with(": openai, finish complete (stop): no calls"),
        "{s}"
    );
    assert!(s.contains("(reported)\n  no calls: nothing runs\n"), "{s}");
}

#[test]
fn model_text_is_escaped_in_tables() {
    let body = br#"{"jsonrpc":"2.0","id":"\u001b[31mred","method":"tools/call","params":{"name":"x\u001b[2Jy","arguments":{}}}"#;
    let out = check(&["-"], body);
    let s = text(&out.stdout);
    assert!(!s.contains('\u{1b}'), "{s:?}");
    assert!(s.contains("x\\u{1b}[2Jy"), "{s}");
}

#[test]
fn usage_and_config_errors_exit_2() {
    let out = toolgate_reading(
        &["check", "--config", "/nonexistent/toolgate.toml", "-"],
        SEARCH,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "toolgate: error: /nonexistent/toolgate.toml: cannot read the config: No such file or directory (os error 2)\n"
    );
    let out = check(&["--format", "cohere", "-"], SEARCH);
    assert_eq!(out.status.code(), Some(2));
    let config = shop_file("toolgate.toml");
    let dir = std::env::temp_dir().join(format!("toolgate-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("ctx.json");
    std::fs::write(
        &bad,
        br#"{"user":"a","session":"s","turn":1,"surprise":true}"#,
    )
    .unwrap();
    let out = toolgate_reading(
        &[
            "check",
            "--config",
            &config,
            "--context",
            bad.to_str().unwrap(),
            "-",
        ],
        SEARCH,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown member `/surprise`"),
        "{}",
        text(&out.stderr)
    );
    let out = check(&["/nonexistent/body.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_no_authorization_the_config_decides() {
    // The shop's Cedar policies: anyone may search, nobody may touch an
    // order that is not theirs.
    let config = shop_file("toolgate.toml");
    let out = toolgate_reading(&["check", "--no-store", "--config", &config, "-"], SEARCH);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let refund = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"refund","arguments":"{\"order_id\":\"ord_1001\",\"amount_cents\":1,\"reason\":\"late\"}"}}]}}]}"#;
    let out = toolgate_reading(&["check", "--no-store", "--config", &config, "-"], refund);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("not_owner"),
        "{}",
        text(&out.stdout)
    );
    // A config that names no authorization denies every call.
    let dir = std::env::temp_dir().join(format!("toolgate-noauthz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bare = dir.join("toolgate.toml");
    std::fs::write(
        &bare,
        format!(
            "[[tool]]\nname = \"search\"\nrisk = \"read\"\nschema = {:?}\n",
            shop_file("schemas/search.json")
        ),
    )
    .unwrap();
    let out = toolgate_reading(&["check", "--config", bare.to_str().unwrap(), "-"], SEARCH);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("not_authorized"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_documents_exit_codes() {
    let out = toolgate_reading(&["check", "--help"], b"");
    let s = text(&out.stdout);
    assert!(
        s.contains("Exit codes:") && s.contains("--no-authorization"),
        "{s}"
    );
}

/// The decisions of every shop response, with and without authorization.
fn every_shop_decision() -> Vec<toolgate_json::Value<'static>> {
    let dir = PathBuf::from(shop_file("responses"));
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    files.sort();
    let mut args: Vec<&str> = vec!["--json"];
    args.extend(files.iter().map(String::as_str));
    let out = check(&args, b"");
    let mut decisions = Vec::new();
    for line in text(&out.stdout).lines() {
        let value = toolgate_json::from_str(line).unwrap().into_owned();
        for d in value.pointer("/decisions").unwrap().as_array().unwrap() {
            decisions.push(d.clone());
        }
    }
    decisions
}

#[test]
fn arguments_are_the_checked_value_and_digest_is_their_digest() {
    let decisions = every_shop_decision();
    let mut handed_on = 0;
    for d in &decisions {
        let verdict = d.pointer("/verdict").unwrap().as_str().unwrap();
        let args = d
            .pointer("/arguments")
            .expect("every decision has arguments");
        if verdict == "deny" {
            assert!(args.is_null(), "a denied call hands nothing on: {d:?}");
            continue;
        }
        handed_on += 1;
        assert!(args.as_object().is_some(), "{d:?}");
        let digest = d.pointer("/digest").unwrap().as_str().unwrap();
        assert_eq!(
            toolgate_json::canonical::digest(args).to_string(),
            digest,
            "the digest is the digest of what `arguments` carries"
        );
    }
    assert!(handed_on >= 3, "the shop has allowed and held calls");
}

#[test]
fn the_tool_gets_the_checked_value_not_the_model_text() {
    // The model's text spells a member with an escape, pads with whitespace
    // and writes an integer with an exponent-free but odd spelling; a second
    // parser would have to agree on all of it. The decision carries the one
    // canonical value instead.
    let body = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{ \"\\u0071uery\" :\t\"b\\u00f6ots\\n\" ,  \"limit\" : 5 }"}}]}}]}"#;
    let out = check(&["--json", "-"], body);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let value = toolgate_json::from_str(text(&out.stdout).trim_end())
        .unwrap()
        .into_owned();
    let args = value.pointer("/decisions/0/arguments").unwrap();
    assert_eq!(
        toolgate_json::canonical::to_string(args),
        "{\"limit\":5,\"query\":\"b\u{f6}ots\\n\"}"
    );
    assert_eq!(
        value.pointer("/decisions/0/digest").unwrap().as_str(),
        Some(toolgate_json::canonical::digest(args).to_string().as_str())
    );
}

/// A config in a temporary folder: the shop's tools and `gate` as its
/// `[gate]` table, on a SQLite store in that folder.
fn shop_config_with(dir: &std::path::Path, gate: &str) -> String {
    let shop_toml = std::fs::read_to_string(shop_file("toolgate.toml")).unwrap();
    let base = PathBuf::from(shop_file("."));
    // Paths in the shop config are relative to its folder: make them
    // absolute.
    let mut text = String::new();
    for line in shop_toml.lines() {
        let line = match line.split_once("= \"") {
            Some((key, rest))
                if ["schema ", "policies ", "entities "]
                    .iter()
                    .any(|k| key.trim_start().starts_with(k.trim_end())) =>
            {
                format!("{key}= \"{}/{rest}", base.display())
            }
            _ => line.to_owned(),
        };
        text.push_str(&line);
        text.push('\n');
    }
    // The shop's own `[gate]` table is replaced by one on lines 1 and 2.
    let start = text.find("[gate]").unwrap();
    let end = start + text[start..].find("\n\n").unwrap();
    let text = format!("[gate]\n{gate}\n{}{}", &text[..start], &text[end..]);
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn with_a_store_the_turn_is_counted_not_taken_from_the_context() {
    let dir = tempfile::tempdir().unwrap();
    let config = shop_config_with(dir.path(), "max_turns = 3");
    let store = format!("sqlite://{}", dir.path().join("state.db").display());
    let context = dir.path().join("context.json");
    std::fs::write(
        &context,
        r#"{"user":"alice","session":"s-turns","roles":["customer"],"turn":1}"#,
    )
    .unwrap();
    let context = context.display().to_string();
    let run = |id: &str| {
        let body = String::from_utf8(SEARCH.to_vec())
            .unwrap()
            .replace("call_1", id);
        let out = toolgate_reading(
            &[
                "check",
                "--config",
                &config,
                "--store",
                &store,
                "--context",
                &context,
                "--json",
                "-",
            ],
            body.as_bytes(),
        );
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    for id in ["a", "b", "c"] {
        let (code, out, err) = run(id);
        assert_eq!(code, Some(0), "{out}{err}");
    }
    let (code, out, _) = run("d");
    assert_eq!(code, Some(1));
    assert!(out.contains(r#""code":"loop_limit""#), "{out}");
}

#[test]
fn no_store_says_the_context_is_trusted_for_the_turn() {
    let out = toolgate_reading(&["check", "--help"], b"");
    let help = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(help.contains("TRUSTED for the turn"), "{help}");
    assert!(help.contains("allowed_calls"), "{help}");
}

#[test]
fn the_body_limit_is_set_in_the_gate_table() {
    let dir = tempfile::tempdir().unwrap();
    let config = shop_config_with(dir.path(), "max_body_bytes = 300");
    let mut body = SEARCH.to_vec();
    body.extend(std::iter::repeat_n(b' ', 300 - SEARCH.len()));
    let args = [
        "check",
        "--no-authorization",
        "--no-store",
        "--config",
        &config,
        "--json",
        "-",
    ];
    let out = toolgate_reading(&args, &body);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    body.push(b' ');
    let out = toolgate_reading(&args, &body);
    assert_eq!(out.status.code(), Some(1));
    let json = text(&out.stdout);
    assert!(json.contains(r#""detail":"too_large""#), "{json}");

    // Out of range: a config error naming the key, file, line and column.
    for bad in ["max_body_bytes = 0", "max_body_bytes = 4294967296"] {
        let config = shop_config_with(dir.path(), bad);
        let out = toolgate_reading(&args, SEARCH);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.contains(&format!("{config}:2:")), "{err}");
        assert!(
            err.contains("`max_body_bytes` must be between 1 and 1073741824"),
            "{err}"
        );
    }
}

#[test]
fn refused_arguments_show_in_the_audit_with_the_risk_tier() {
    let dir = tempfile::tempdir().unwrap();
    let config = shop_config_with(dir.path(), "max_turns = 8");
    let store = format!("sqlite://{}", dir.path().join("state.db").display());
    // The model's arguments end early: they never parse.
    let cut = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"run_tests","arguments":"{\"suite\": \"unit"}}]}}]}"#;
    let out = toolgate_reading(
        &[
            "check", "--config", &config, "--store", &store, "--json", "-",
        ],
        cut,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let out = toolgate_reading(&["audit", "tail", "--store", &store, "-n", "1"], b"");
    let line = text(&out.stdout);
    assert!(line.contains("risk=write"), "{line}");
    assert!(line.contains("refused_arguments=15B"), "{line}");
    let out = toolgate_reading(
        &["audit", "tail", "--store", &store, "-n", "1", "--jsonl"],
        b"",
    );
    let json = text(&out.stdout);
    assert!(
        json.contains(
            r#""refused_arguments":{"bytes":15,"text":"{\"suite\": \"unit","truncated":false}"#
        ),
        "{json}"
    );
    assert!(json.contains(r#""risk":"write""#), "{json}");
    let out = toolgate_reading(&["audit", "verify", "--store", &store], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
