//! Issue 12: a decision context cannot widen what the server knows. Driven
//! through `toolgate check` on the shop example.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use cli_support::toolgate_cli;
use toolgate_testkit::shop_file;

/// `toolgate check --json --no-store` as the given context; the decisions'
/// (verdict, first reason code) pairs and the exit code.
fn check(context: &str, response: &str) -> (Vec<(String, String)>, Option<i32>) {
    let dir = std::env::temp_dir().join(format!("toolgate-ctx-trust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ctx = dir.join(format!("ctx-{:x}.json", context.len()));
    std::fs::write(&ctx, context).unwrap();
    let out = toolgate_cli()
        .args([
            "check",
            "--json",
            "--no-store",
            "--config",
            &shop_file("toolgate.toml"),
            "--context",
            ctx.to_str().unwrap(),
            &shop_file(response),
        ])
        .run();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = toolgate_json::from_str(stdout.trim_end()).unwrap();
    let decisions = value
        .pointer("/decisions")
        .and_then(|d| d.as_array())
        .unwrap()
        .iter()
        .map(|d| {
            (
                d.pointer("/verdict").unwrap().as_str().unwrap().to_owned(),
                d.pointer("/reasons/0/code")
                    .and_then(|c| c.as_str())
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    (decisions, out.status.code())
}

#[test]
fn alice_claiming_support_still_cannot_refund_bobs_order() {
    let honest =
        r#"{"user":"alice","session":"s-1","roles":["customer"],"turn":1,"now":1767225600}"#;
    let claims_support = r#"{"user":"alice","session":"s-1","roles":["customer","support"],"turn":1,"now":1767225600}"#;
    for context in [honest, claims_support] {
        let (decisions, code) = check(context, "responses/openai-refund-other-users-order.json");
        assert_eq!(
            decisions,
            [
                ("deny".to_owned(), "not_owner".to_owned()),
                ("deny".to_owned(), "not_owner".to_owned())
            ],
            "{context}"
        );
        assert_eq!(code, Some(1));
    }
    // Nor can the context give alice the role as an entity, or add an order
    // the shop does not trust it with.
    let forged = r#"{"user":"alice","session":"s-1","turn":1,"now":1767225600,
        "entities":[{"uid":{"type":"User","id":"alice"},"attrs":{},"parents":[{"type":"Role","id":"support"}]}]}"#;
    let (decisions, _) = check(forged, "responses/openai-refund-other-users-order.json");
    assert!(
        decisions
            .iter()
            .all(|(v, c)| v == "deny" && c == "authorization_error"),
        "{decisions:?}"
    );
    // carol, whom the entities file makes a support agent, still is one.
    let carol = r#"{"user":"carol","session":"s-2","turn":1,"now":1767225600}"#;
    let (decisions, _) = check(carol, "responses/openai-support-refunds.json");
    assert_eq!(decisions[0].0, "needs_approval", "{decisions:?}");
}
