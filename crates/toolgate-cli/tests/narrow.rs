//! Black-box tests of `toolgate narrow` over the shop example, and of the
//! shop run through `toolgate check` with its Cedar policies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

use cli_support::toolgate;
use toolgate_json::Value;
use toolgate_testkit::{shop_file, text};

fn narrow(extra: &[&str]) -> Value<'static> {
    narrow_with(&shop_file("toolgate.toml"), extra)
}

/// The shop's config, trusting decision contexts with users and orders
/// (`[authorization] context_entities`), written beside `dir`.
fn trusting_config(dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(shop_file("toolgate.toml"))
        .unwrap()
        .replace(
            "\"policies.cedar\"",
            &format!("{:?}", shop_file("policies.cedar")),
        )
        .replace(
            "\"shop.cedarschema\"",
            &format!("{:?}", shop_file("shop.cedarschema")),
        )
        .replace(
            "entities = \"entities.json\"",
            &format!(
                "entities = {:?}\ncontext_entities = [\"User\", \"Order\"]",
                shop_file("entities.json")
            ),
        )
        .replace("\"schemas/", &format!("\"{}/", shop_file("schemas")));
    let path = dir.join("trusting.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn narrow_with(config: &str, extra: &[&str]) -> Value<'static> {
    let config = config.to_owned();
    let mut args = vec!["narrow", "--config", &config];
    args.extend_from_slice(extra);
    let out = toolgate(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    let value = toolgate_json::from_str(line.trim_end())
        .unwrap()
        .into_owned();
    assert_eq!(toolgate_json::canonical::to_string(&value), line.trim_end());
    value
}

fn enum_of(tools: &Value<'_>, name: &str, format: &str) -> Option<Vec<String>> {
    let (name_at, schema_at) = match format {
        "openai" => ("/function/name", "/function/parameters"),
        _ => ("/name", "/input_schema"),
    };
    let tool = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t.pointer(name_at).and_then(Value::as_str) == Some(name))?;
    Some(
        tool.pointer(&format!("{schema_at}/properties/order_id/enum"))
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect(),
    )
}

#[test]
fn each_user_is_offered_only_their_orders() {
    for format in ["openai", "anthropic"] {
        let alice = narrow(&["--user", "alice", "--format", format]);
        assert_eq!(
            enum_of(&alice, "refund", format).unwrap(),
            ["ord_1001", "ord_1002"]
        );
        assert_eq!(
            enum_of(&alice, "get_order", format).unwrap(),
            ["ord_1001", "ord_1002"]
        );
        let bob = narrow(&["--user", "bob", "--format", format]);
        assert_eq!(enum_of(&bob, "refund", format).unwrap(), ["ord_2001"]);
        let carol = narrow(&["--user", "carol", "--format", format]);
        assert_eq!(
            enum_of(&carol, "refund", format).unwrap(),
            ["ord_1001", "ord_1002", "ord_2001"]
        );
    }
    let openai = narrow(&["--user", "alice"]);
    assert_eq!(
        openai.pointer("/0/type").and_then(Value::as_str),
        Some("function")
    );
}

#[test]
fn roles_and_entities_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("toolgate-narrow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let entities = dir.join("entities.json");
    std::fs::write(
        &entities,
        r#"[{"uid":{"type":"Order","id":"ord_5001"},"attrs":{"owner":{"__entity":{"type":"User","id":"dave"}},"total_cents":100},"parents":[]}]"#,
    )
    .unwrap();
    // The shop trusts the context with nothing: a claimed role counts for
    // nothing, and added entities are refused (issue 12).
    let erin = narrow(&["--user", "erin", "--role", "support"]);
    assert_eq!(enum_of(&erin, "refund", "openai"), None);
    let config = shop_file("toolgate.toml");
    let out = toolgate(&[
        "narrow",
        "--config",
        &config,
        "--user",
        "dave",
        "--entities",
        entities.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let trusting = trusting_config(&dir);
    let narrow = |extra: &[&str]| narrow_with(&trusting, extra);
    // dave has no order: no order tools at all.
    let dave = narrow(&["--user", "dave"]);
    assert_eq!(enum_of(&dave, "refund", "openai"), None);
    let names: Vec<_> = dave
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.pointer("/function/name").unwrap().as_str().unwrap())
        .collect();
    assert_eq!(names, ["search", "fetch_url", "run_tests"]);
    let dave = narrow(&["--user", "dave", "--entities", entities.to_str().unwrap()]);
    assert_eq!(enum_of(&dave, "refund", "openai").unwrap(), ["ord_5001"]);
    let support = narrow(&["--user", "erin", "--role", "support"]);
    assert_eq!(
        enum_of(&support, "refund", "openai").unwrap(),
        ["ord_1001", "ord_1002", "ord_2001"]
    );
    // Entities that do not conform to the schema: exit 2.
    std::fs::write(
        &entities,
        r#"[{"uid":{"type":"Order","id":"ord_5001"},"attrs":{"total_cents":100},"parents":[]}]"#,
    )
    .unwrap();
    let out = toolgate(&[
        "narrow",
        "--config",
        &trusting,
        "--user",
        "dave",
        "--entities",
        entities.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot narrow"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_config_without_policies_cannot_narrow() {
    let dir = std::env::temp_dir().join(format!("toolgate-narrow-none-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("toolgate.toml");
    std::fs::write(&config, "[authorization]\nmode = \"none\"\n").unwrap();
    let out = toolgate(&[
        "narrow",
        "--config",
        config.to_str().unwrap(),
        "--user",
        "a",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("names no cedar policies"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_shop_run_with_cedar_policies() {
    let config = shop_file("toolgate.toml");
    let check = |context: &str, response: &str| {
        let out = toolgate(&[
            "check",
            "--no-store",
            "--config",
            &config,
            "--context",
            &shop_file(context),
            "--json",
            &shop_file(response),
        ]);
        let line = text(&out.stdout);
        toolgate_json::from_str(line.trim_end())
            .unwrap()
            .into_owned()
    };
    let s = |v: &Value<'_>, p: &str| v.pointer(p).unwrap().as_str().unwrap().to_owned();
    let other = check(
        "context.json",
        "responses/openai-refund-other-users-order.json",
    );
    for i in 0..2 {
        assert_eq!(s(&other, &format!("/decisions/{i}/verdict")), "deny");
        assert_eq!(
            s(&other, &format!("/decisions/{i}/reasons/0/code")),
            "not_owner"
        );
        assert_eq!(
            s(&other, &format!("/decisions/{i}/feedback")),
            "denied by toolgate: not_owner"
        );
    }
    assert_eq!(
        s(&other, "/decisions/0/policies/0"),
        "order-of-another-user"
    );
    let over = check("context.json", "responses/anthropic-refund-over-total.json");
    assert_eq!(s(&over, "/decisions/0/reasons/0/code"), "not_authorized");
    assert_eq!(s(&over, "/decisions/0/policies/0"), "refund-at-most-total");
    let approved = check("context.json", "responses/anthropic-refund-approved.json");
    assert_eq!(s(&approved, "/decisions/0/verdict"), "allow");
    let support = check(
        "context-carol.json",
        "responses/openai-support-refunds.json",
    );
    assert_eq!(s(&support, "/decisions/0/verdict"), "needs_approval");
    assert_eq!(
        s(&support, "/decisions/0/policies/0"),
        "support-refunds-order"
    );
    assert_eq!(s(&support, "/decisions/1/verdict"), "deny");
    assert_eq!(
        s(&support, "/decisions/1/policies/0"),
        "support-refund-limit"
    );
}
