#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! `[[approvals.quorum]]` and `[[approvals.notify]]`: what a two-person
//! rule asks of a held call, and the sinks' keys and URLs, refused whole
//! when any part is wrong (and without repeating a secret).

use std::path::{Path, PathBuf};

use toolgate::config::{Config, NotifyKind};
use toolgate::registry::Risk;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const TOOLS: &str = "
[[tool]]
name = \"refund\"
risk = \"destructive\"
schema = { type = \"object\", additionalProperties = false }

[[tool]]
name = \"note\"
risk = \"write\"
schema = { type = \"object\", additionalProperties = false }
";

fn parse(extra: &str) -> Result<Config, String> {
    Config::parse(&format!("{TOOLS}{extra}"), fixtures().join("toolgate.toml"))
        .map_err(|e| e.to_string())
}

#[test]
fn the_most_approvers_and_any_not_own_of_the_matching_rules_apply() {
    let c = parse(
        "
[[approvals.quorum]]
risk = \"destructive\"
approvers = 2

[[approvals.quorum]]
tool = \"refund\"
approvers = 3
not_own = true

[[approvals.quorum]]
risk = \"write\"
approvers = 1
not_own = true
",
    )
    .unwrap();
    let a = c.approvals();
    assert_eq!(a.quorum_rules().len(), 3);
    let refund = a.quorum_for("refund", Some(Risk::Destructive));
    assert_eq!((refund.approvers, refund.not_own), (3, true));
    let note = a.quorum_for("note", Some(Risk::Write));
    assert_eq!((note.approvers, note.not_own), (1, true));
    let other = a.quorum_for("wipe", Some(Risk::Destructive));
    assert_eq!((other.approvers, other.not_own), (2, false));
    let read = a.quorum_for("get", Some(Risk::Read));
    assert_eq!((read.approvers, read.not_own), (1, false));
    // No rule: one approver, anyone.
    let none = parse("").unwrap();
    let n = none
        .approvals()
        .quorum_for("refund", Some(Risk::Destructive));
    assert_eq!((n.approvers, n.not_own), (1, false));
}

#[test]
fn a_rule_names_one_registered_tool_or_one_tier_and_a_bounded_count() {
    for (extra, says) in [
        (
            "[[approvals.quorum]]\ntool = \"refnud\"\napprovers = 2\n",
            "not a registered tool",
        ),
        (
            "[[approvals.quorum]]\ntool = \"refund\"\nrisk = \"write\"\napprovers = 2\n",
            "exactly one of `tool` and `risk`",
        ),
        (
            "[[approvals.quorum]]\napprovers = 2\n",
            "exactly one of `tool` and `risk`",
        ),
        (
            "[[approvals.quorum]]\nrisk = \"write\"\napprovers = 0\n",
            "between 1 and 10",
        ),
        (
            "[[approvals.quorum]]\nrisk = \"write\"\napprovers = 11\n",
            "between 1 and 10",
        ),
        (
            "[[approvals.quorum]]\nrisk = \"write\"\napprovers = 2\nquorum = 3\n",
            "quorum",
        ),
    ] {
        let e = parse(extra).unwrap_err();
        assert!(e.contains(says), "{extra}: {e}");
    }
}

#[test]
fn sinks_read_their_keys_and_urls_and_never_show_them() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("hook.key");
    std::fs::write(&key, "0123456789abcdef0123\n").unwrap();
    let c = parse(&format!(
        "
[approvals]
page_url = \"https://gate.example/ui/\"

[[approvals.notify]]
name = \"ops\"
kind = \"webhook\"
url = \"https://hooks.example/secret-path\"
secret_file = \"{}\"
timeout_ms = 1500

[[approvals.notify]]
name = \"chat\"
kind = \"slack\"
url = \"https://hooks.slack.example/T000/B000/XXXX\"
",
        key.display()
    ))
    .unwrap();
    let a = c.approvals();
    assert_eq!(a.page_url(), Some("https://gate.example/ui/"));
    let ops = &a.notify()[0];
    assert_eq!(ops.kind(), NotifyKind::Webhook);
    // The key file's final newline is not part of the key.
    assert_eq!(ops.secret(), Some(&b"0123456789abcdef0123"[..]));
    assert_eq!(ops.timeout(), std::time::Duration::from_millis(1500));
    assert_eq!(ops.max_attempts(), 4);
    let chat = &a.notify()[1];
    assert_eq!((chat.kind(), chat.secret()), (NotifyKind::Slack, None));
    let shown = format!("{:?}", a.notify());
    assert!(!shown.contains("hooks"), "{shown}");
    assert!(!shown.contains("0123456789"), "{shown}");

    for (extra, says) in [
        (
            "[[approvals.notify]]\nname = \"a\"\nkind = \"slack\"\nurl_env = \"TOOLGATE_TEST_UNSET_VARIABLE\"\n",
            "is not set",
        ),
        (
            "[[approvals.notify]]\nname = \"a\"\nkind = \"slack\"\n",
            "exactly one of `url` and `url_env`",
        ),
        (
            "[[approvals.notify]]\nname = \"a\"\nkind = \"slack\"\nurl = \"https://h.example/x\"\n\n[[approvals.notify]]\nname = \"a\"\nkind = \"slack\"\nurl = \"https://h.example/y\"\n",
            "unique",
        ),
        (
            "[[approvals.notify]]\nname = \"a\"\nkind = \"slack\"\nurl = \"https://h.example/x\"\ntimeout_ms = 60001\n",
            "between 1 and 60000",
        ),
        (
            "[[approvals.notify]]\nname = \"a\"\nkind = \"teams\"\nurl = \"https://h.example/x\"\n",
            "kind",
        ),
        ("[approvals]\npage_url = \"javascript:alert(1)\"\n", "page_url"),
    ] {
        let e = parse(extra).unwrap_err();
        assert!(e.contains(says), "{extra}: {e}");
    }
}
