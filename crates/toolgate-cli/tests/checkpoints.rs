//! Signed checkpoints from the command line (issue 29, item 10): the
//! attacker deletes the newest records and rewrites `audit_head`; `audit
//! verify` alone still says intact, `audit verify --checkpoints` does not.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

use std::process::Output;

use cli_support::toolgate_cli;
use toolgate_testkit::{shop_file, text};

fn toolgate(args: &[&str]) -> Output {
    toolgate_cli().args(args).env("USER", "oncall").run()
}

#[test]
fn issue_29_10_a_log_cut_short_fails_its_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    let config = dir.path().join("toolgate.toml");
    let sink_dir = tempfile::tempdir().unwrap();
    let sink = sink_dir.path().join("checkpoints.jsonl");
    let text_of = std::fs::read_to_string(&config).unwrap();
    let edited = text_of.replacen(
        "[store]\n",
        &format!(
            "[store]\ncheckpoint_key = \"audit.key\"\ncheckpoint_sink = \"{}\"\n",
            sink.display()
        ),
        1,
    );
    assert_ne!(edited, text_of);
    std::fs::write(&config, edited).unwrap();
    std::fs::write(
        dir.path().join("audit.key"),
        format!("{}\n", "ab".repeat(32)),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_owned();
    // Decisions, a checkpoint, more decisions, another checkpoint.
    let decide = || {
        let out = toolgate(&[
            "check",
            "--config",
            &config,
            "--context",
            &shop_file("context.json"),
            &shop_file("responses/openai-search.json"),
        ]);
        assert!(out.status.code().is_some(), "{}", text(&out.stderr));
    };
    for _ in 0..3 {
        decide();
    }
    let out = toolgate(&["audit", "checkpoint", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for _ in 0..3 {
        decide();
    }
    let out = toolgate(&["audit", "checkpoint", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sink_arg = sink.to_str().unwrap().to_owned();
    let verify = |with: bool| {
        let mut args = vec!["audit", "verify", "--config", &config];
        if with {
            args.extend(["--checkpoints", &sink_arg]);
        }
        toolgate(&args)
    };
    let out = verify(true);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("checkpoints: 2 read, 0 do not hold"));

    // The attacker: the newest records gone, the head rewritten.
    let conn = rusqlite::Connection::open(dir.path().join("toolgate.db")).unwrap();
    conn.execute_batch(
        "DELETE FROM audit WHERE seq IN (SELECT seq FROM audit ORDER BY seq DESC LIMIT 3);
         UPDATE audit_head SET seq = (SELECT MAX(seq) FROM audit),
            hash = (SELECT hash FROM audit ORDER BY seq DESC LIMIT 1) WHERE id = 1;",
    )
    .unwrap();
    drop(conn);
    let out = verify(false);
    assert!(out.status.success(), "the hole: {}", text(&out.stdout));
    let out = verify(true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let said = text(&out.stdout);
    assert!(said.contains("checkpoint 2: "), "{said}");
    assert!(!said.contains("checkpoint 1: "), "{said}");
}
