//! Black-box tests of `toolgate lint --config`: the shop lints clean with
//! no waiver (as CI runs it; its static resolver table lets its URL policy
//! resolve hosts without DNS), and a deliberately loosened copy of the shop
//! yields each expected code, as text and as JSON, with exit codes 0, 1
//! and 2.

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
use toolgate_testkit::{shop_file, text};

/// Issue 31: the shop uses the strict defaults without a waiver.
#[test]
fn the_shop_lints_clean_without_waivers() {
    let config = shop_file("toolgate.toml");
    let out = toolgate(&["lint", "--config", &config]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(!stdout.contains("url_not_resolved"), "{stdout}");
    assert!(stdout.contains("tool `get_order`: no findings"), "{stdout}");
    // What the providers' strict modes leave to toolgate is listed, as info.
    assert!(
        stdout.contains(
            "tool `refund`: anthropic_strict_drops [info] at `/properties/amount_cents/maximum`"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("tool `search`: openai_strict_drops [info] at `/properties/query/maxLength`"),
        "{stdout}"
    );
    // Without its `[resolver]` table the shop's policy would not resolve.
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    let path = dir.path().join("toolgate.toml");
    let toml = std::fs::read_to_string(&path).unwrap();
    let without = toml.replace("[resolver]\nmode = \"static\"\n", "[resolver.unused]\n");
    let start = without.find("[resolver.unused]").unwrap();
    let end = start + without[start..].find("\n\n").unwrap();
    std::fs::write(&path, format!("{}{}", &without[..start], &without[end..])).unwrap();
    let out = toolgate(&["lint", "--config", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("tool `fetch_url`: url_not_resolved at `/properties/url`"));
}

/// Issue 31: an argument exempt from the default URL guard is listed with
/// its reason; a tool that opts out whole is a finding.
#[test]
fn url_opt_outs_are_shown_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.toml");
    let schema = r#"{"type":"object","properties":{"note":{"type":"string","maxLength":100},"image_url":{"type":"string","maxLength":100}},"required":["note"],"additionalProperties":false}"#;
    std::fs::write(
        &path,
        format!(
            "[authorization]\nmode = \"none\"\n\n[[tool]]\nname = \"post\"\nrisk = \"read\"\nschema_json = '{schema}'\nurl_unchecked = [{{ arg = \"/image_url\", reason = \"shown as text, never fetched\" }}]\n\n[[tool]]\nname = \"open\"\nrisk = \"read\"\nschema_json = '{schema}'\nurl_policy = \"none\"\n"
        ),
    )
    .unwrap();
    let out = toolgate(&[
        "lint",
        "--config",
        path.to_str().unwrap(),
        "--allow",
        "authorization_off",
    ]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("tool `post`: url_unchecked [info] at `/properties/image_url`: argument `/image_url` is exempt from the default URL guard: shown as text, never fetched"),
        "{stdout}"
    );
    assert!(!stdout.contains("tool `post`: url_unguarded"), "{stdout}");
    assert!(
        stdout.contains("tool `open`: url_unchecked at ``"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tool `open`: url_unguarded at `/properties/image_url`"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
}

/// The shop, loosened: `refund` needs no approval (`approval = "none"`), a `charge` tool with a
/// `customer_id` but no resource mapping, a `number` amount, an unguarded
/// `webhook_url` and no permit; a forbid without `@code`; a permit on an
/// action that is no configured tool; no flow rule for the egress `fetch_url`.
fn loosened_shop(dir: &Path) -> String {
    toolgate_testkit::copy_shop(dir);
    let config = dir.join("toolgate.toml");
    let toml = std::fs::read_to_string(&config).unwrap().replace(
        "risk = \"destructive\"          # approval is required",
        "risk = \"destructive\"\napproval = \"none\"           # loosened",
    );
    assert!(toml.contains("approval = \"none\""));
    // The shop's `fetch_url` is egress; its flow rule (the trifecta
    // forbid) is cut from the policies below.
    assert!(toml.contains("egress = true"));
    let toml = format!(
        "{toml}\n[[tool]]\nname = \"charge\"\nrisk = \"write\"\nschema_json = '{}'\n",
        r#"{"type":"object","properties":{"customer_id":{"type":"string","pattern":"^c_[0-9]{1,9}$"},"amount":{"type":"number","minimum":0,"maximum":500},"webhook_url":{"type":"string","pattern":"^https://","maxLength":200}},"required":["customer_id","amount","webhook_url"],"additionalProperties":false}"#
    );
    std::fs::write(&config, toml).unwrap();
    let schema = dir.join("shop.cedarschema");
    let mut cedar = std::fs::read_to_string(&schema).unwrap();
    cedar.push_str(
        "\naction charge appliesTo {\n  principal: [User],\n  resource: [Tool],\n  context: { args: { customer_id: String }, turn: Long, risk: String },\n};\n\
         action delete_account appliesTo {\n  principal: [User],\n  resource: [Tool],\n  context: { args: {}, turn: Long, risk: String },\n};\n",
    );
    std::fs::write(&schema, cedar).unwrap();
    let policies = dir.join("policies.cedar");
    let mut text = std::fs::read_to_string(&policies).unwrap();
    let flow_rule = text.find("@id(\"trifecta-egress\")").unwrap();
    text.truncate(flow_rule);
    text.push_str(
        "\n@id(\"support-deletes-accounts\")\npermit(principal in Role::\"support\", action == Action::\"delete_account\", resource);\n\
         \n@id(\"no-late-charges\")\nforbid(principal, action == Action::\"charge\", resource)\nwhen { context.turn > 10 };\n",
    );
    std::fs::write(&policies, text).unwrap();
    config.to_str().unwrap().to_owned()
}

#[test]
fn the_loosened_shop_yields_each_expected_code() {
    let dir = tempfile::tempdir().unwrap();
    let config = loosened_shop(dir.path());
    let out = toolgate(&["lint", "--config", &config, "--max-enum", "2"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    for expected in [
        "tool `refund`: approval_off at ``",
        "tool `charge`: resource_unmapped at `/properties/customer_id`",
        "tool `charge`: money_as_number at `/properties/amount`",
        "tool `charge`: money_without_budget at `/properties/amount`",
        "tool `fetch_url`: egress_without_flow_rule at ``",
        "tool `charge`: url_unguarded at `/properties/webhook_url`",
        "tool `charge`: tool_never_permitted at ``",
        "policy `no-late-charges`: forbid_without_code at ``",
        "policy `support-deletes-accounts`: policy_never_applies at ``",
        "tool `get_order`: enum_over_cap at `/properties/order_id`",
        "tool `refund`: enum_over_cap at `/properties/order_id`",
    ] {
        assert!(
            stdout.contains(expected),
            "missing `{expected}` in:\n{stdout}"
        );
    }
    // Each error line carries its one-line fix.
    let line = stdout
        .lines()
        .find(|l| l.contains("money_as_number"))
        .unwrap();
    assert!(
        line.contains(" — use an `integer` of minor units"),
        "{line}"
    );
    // Findings are only where they belong.
    assert!(
        !stdout.contains("tool `search`: tool_never_permitted"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("policy `refund-at-most-total`"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("tool `get_order`: resource_unmapped"),
        "{stdout}"
    );
}

#[test]
fn json_output_is_one_document_with_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let config = loosened_shop(dir.path());
    let out = toolgate(&["lint", "--config", &config, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc = toolgate_json::from_slice(&out.stdout).unwrap();
    let findings = doc.pointer("/findings").and_then(Value::as_array).unwrap();
    let code = |f: &Value<'_>| {
        f.pointer("/code")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let forbid = findings
        .iter()
        .find(|f| code(f).as_deref() == Some("forbid_without_code"))
        .unwrap();
    assert_eq!(
        forbid.pointer("/policy").and_then(Value::as_str),
        Some("no-late-charges")
    );
    assert!(forbid.pointer("/tool").unwrap().is_null());
    assert_eq!(
        forbid.pointer("/severity").and_then(Value::as_str),
        Some("error")
    );
    assert_eq!(forbid.pointer("/pointer").and_then(Value::as_str), Some(""));
    assert!(forbid.pointer("/fix").and_then(Value::as_str).is_some());
    let money = findings
        .iter()
        .find(|f| code(f).as_deref() == Some("money_as_number"))
        .unwrap();
    assert_eq!(
        money.pointer("/tool").and_then(Value::as_str),
        Some("charge")
    );
    assert_eq!(
        money.pointer("/pointer").and_then(Value::as_str),
        Some("/properties/amount")
    );
    assert_eq!(
        money.pointer("/source").and_then(Value::as_str),
        Some(config.as_str())
    );
    let info = findings
        .iter()
        .find(|f| f.pointer("/severity").and_then(Value::as_str) == Some("info"))
        .unwrap();
    assert!(info.pointer("/fix").unwrap().is_null());
    assert!(info
        .pointer("/message")
        .and_then(Value::as_str)
        .unwrap()
        .ends_with("enforced by toolgate only"));
    let errors = findings
        .iter()
        .filter(|f| f.pointer("/severity").and_then(Value::as_str) == Some("error"))
        .count();
    assert_eq!(
        doc.pointer("/summary/error")
            .and_then(Value::as_number)
            .and_then(toolgate_json::Number::as_u64),
        Some(u64::try_from(errors).unwrap())
    );
}

#[test]
fn exit_codes() {
    // 0: informational findings only (a tool whose schema the strict modes
    // leave bounds of), and an allowed finding.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("only-info.toml");
    std::fs::write(
        &config,
        "[authorization]\nmode = \"none\"\n\n[[tool]]\nname = \"count\"\nrisk = \"read\"\nschema_json = '{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":9}},\"required\":[\"n\"],\"additionalProperties\":false}'\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let out = toolgate(&["lint", "--config", config]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(": authorization_off at ``"), "{stdout}");
    let out = toolgate(&["lint", "--config", config, "--allow", "authorization_off"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("anthropic_strict_drops [info] at `/properties/n/minimum`"));
    // 2: a config that does not load, an unknown code to allow, a bad format.
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "[[tool]]\nname = \"x\"\n").unwrap();
    let out = toolgate(&["lint", "--config", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("toolgate: error: "));
    let out = toolgate(&["lint", "--config", config, "--allow", "no_such_code"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no_such_code"),
        "{}",
        text(&out.stderr)
    );
    let out = toolgate(&["lint", "--config", config, "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2));
    // A stale allow is said on standard error, without changing the exit code.
    let out = toolgate(&[
        "lint",
        "--config",
        config,
        "--allow",
        "authorization_off",
        "--allow",
        "approval_off@count",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("`--allow approval_off@count` accepted no finding"));
}

/// Issue 30: the front ends' tables are checked outside the core crate, and
/// still when the config loads: `lint --config` and `check --config` refuse
/// a bad `[proxy]` value with its file, line and column, as before.
#[test]
fn a_bad_front_end_table_is_refused_when_the_config_loads() {
    let dir = tempfile::tempdir().unwrap();
    toolgate_testkit::copy_shop(dir.path());
    let path = dir.path().join("toolgate.toml");
    let shop = std::fs::read_to_string(&path).unwrap();
    let at = shop.find("\n[proxy]").unwrap() + 1;
    let end = at + shop[at..].find('\n').unwrap() + 1;
    let line = shop[..end].lines().count() + 1;
    let bad = format!(
        "{}upstream_timeout_seconds = 0\n{}",
        &shop[..end],
        &shop[end..]
    );
    std::fs::write(&path, bad).unwrap();
    let config = path.to_str().unwrap();
    let want = format!(
        "toolgate: error: {config}:{line}:1: `upstream_timeout_seconds` must be between 1 and 3600\n"
    );
    let out = toolgate(&["lint", "--config", config]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert_eq!(text(&out.stderr), want);
    let context = dir.path().join("context.json");
    let out = cli_support::toolgate_reading(
        &[
            "check",
            "--no-store",
            "--config",
            config,
            "--context",
            context.to_str().unwrap(),
            "-",
        ],
        b"{}",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert_eq!(text(&out.stderr), want);
}
