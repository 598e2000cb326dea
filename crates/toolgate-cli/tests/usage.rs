//! Black-box test of `toolgate usage` (issue 32): after `toolgate check`
//! decided two searches of a session against a copy of the shop with a
//! search rate limit and labels, `usage` shows the session's count against
//! its cap and the label the searches brought; a third search is denied
//! `rate_limited`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use cli_support::toolgate;
use toolgate_testkit::text;

#[test]
fn usage_shows_a_sessions_count_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    let config = dir.path().join("toolgate.toml");
    let toml = std::fs::read_to_string(&config).unwrap().replace(
        "name = \"search\"\n",
        "name = \"search\"\nlabels = [\"untrusted_content\"]\n",
    );
    let toml = format!(
        "{toml}\n[[limit]]\nname = \"searches\"\ntools = [\"search\"]\nper = \"session\"\ncalls = 2\nwindow_seconds = 3600\n"
    );
    std::fs::write(&config, toml).unwrap();
    let context = dir.path().join("ctx.json");
    std::fs::write(&context, r#"{"user":"alice","session":"s-9","turn":1}"#).unwrap();
    let config = config.to_str().unwrap();
    let context = context.to_str().unwrap();
    let mut last = String::new();
    for i in 0..3 {
        let body = dir.path().join(format!("b{i}.json"));
        std::fs::write(
            &body,
            toolgate_testkit::openai_tool_calls(&[(
                &format!("call_{i}"),
                "search",
                r#"{"query":"boots"}"#,
            )]),
        )
        .unwrap();
        let out = toolgate(&[
            "check",
            "--config",
            config,
            "--context",
            context,
            body.to_str().unwrap(),
        ]);
        last = text(&out.stdout);
        if i < 2 {
            assert_eq!(out.status.code(), Some(0), "{last}{}", text(&out.stderr));
        }
    }
    assert!(last.contains("rate_limited"), "{last}");
    // The JSON form carries what a caller without a store keeps: the
    // allowed call's charges and labels, and when a refused one can retry.
    let body = dir.path().join("b0.json");
    let json = |ctx: &str| {
        let out = toolgate(&[
            "check",
            "--json",
            "--no-store",
            "--config",
            config,
            "--context",
            ctx,
            body.to_str().unwrap(),
        ]);
        let v = toolgate_json::from_slice(&out.stdout).unwrap().into_owned();
        v.pointer("/0/decisions/0")
            .or_else(|| v.pointer("/decisions/0"))
            .cloned()
            .unwrap_or_else(|| panic!("{}", text(&out.stdout)))
    };
    let fresh = dir.path().join("fresh.json");
    std::fs::write(&fresh, r#"{"user":"alice","session":"s-10","turn":1}"#).unwrap();
    let d = json(fresh.to_str().unwrap());
    assert_eq!(
        toolgate_json::canonical::to_string(d.pointer("/charges").unwrap()),
        r#"[{"amount":"1","limit":"searches"}]"#
    );
    assert_eq!(
        toolgate_json::canonical::to_string(d.pointer("/labels").unwrap()),
        r#"["untrusted_content"]"#
    );
    assert!(d.pointer("/retry_after").is_none());
    let full = dir.path().join("full.json");
    std::fs::write(
        &full,
        r#"{"user":"alice","session":"s-11","turn":1,"now":1767225700,"limit_events":[{"limit":"searches","at":1767225600,"amount":1},{"limit":"searches","at":1767225650,"amount":1}]}"#,
    )
    .unwrap();
    let d = json(full.to_str().unwrap());
    assert_eq!(
        d.pointer("/reasons/0/code")
            .and_then(toolgate_json::Value::as_str),
        Some("rate_limited"),
        "{d:?}"
    );
    assert!(d.pointer("/charges").is_none());
    assert!(d.pointer("/retry_after").is_some(), "{d:?}");
    let out = toolgate(&["usage", "--config", config, "--session", "s-9"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("limit searches (session s-9): 2 of 2 in the last 3600 s"),
        "{stdout}"
    );
    assert!(
        stdout.contains("session s-9 labels: untrusted_content"),
        "{stdout}"
    );
    // Narrowing with --usage leaves the used-up tool out.
    let narrowed = |usage: bool| {
        let mut a = vec!["narrow", "--config", config, "--user", "alice"];
        if usage {
            a.extend(["--usage", "--session", "s-9"]);
        }
        text(&toolgate(&a).stdout)
    };
    assert!(narrowed(false).contains("\"search\""));
    assert!(!narrowed(true).contains("\"search\""), "{}", narrowed(true));
    assert!(narrowed(true).contains("\"get_order\""));
    // An audited reset: the session's count starts again.
    let out = toolgate(&[
        "usage",
        "--config",
        config,
        "--session",
        "s-9",
        "--reset",
        "searches",
        "--reason",
        "test",
        "--actor",
        "bob",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("reset searches/session/s-9: 2 counted calls forgotten"),
        "{stdout}"
    );
    let out = toolgate(&["usage", "--config", config, "--session", "s-9"]);
    assert!(
        text(&out.stdout).contains("0 of 2"),
        "{}",
        text(&out.stdout)
    );
}
