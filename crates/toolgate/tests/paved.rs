#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! `Gate::from_config`: the one way the CLI, the service and the Python
//! package build a gate from a config: its tools, limits and authorizer.

use std::path::PathBuf;

use toolgate::config::Config;
use toolgate::{Context, Format, FromConfigError, Gate, Verdict};

fn shop() -> Config {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    Config::load(path).unwrap()
}

fn response(name: &str, args: &str) -> String {
    toolgate_testkit::openai_tool_calls(&[("c1", name, args)])
}

#[test]
fn the_shop_config_builds_a_gate_with_its_policies_and_limits() {
    let config = shop();
    let gate = Gate::from_config(&config).unwrap();
    assert_eq!(gate.registry().len(), config.registry().len());
    let mut c = Context::new("alice", "s-1", 1);
    c.now = Some(1_000);
    let ok = response("search", r#"{"query":"boots","limit":5}"#);
    let d = gate.decide(ok.as_bytes(), Format::Auto, &c, &c);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    // The config's turn cap applies.
    let late = Context::new("alice", "s-1", config.gate().max_turns() + 1);
    let d = gate.decide(ok.as_bytes(), Format::Auto, &late, &late);
    assert_eq!(
        d.decisions()[0].reasons()[0].code.as_str(),
        "loop_limit",
        "{d:?}"
    );
}

#[test]
fn a_config_whose_policies_do_not_load_names_the_part() {
    let dir = tempfile::tempdir().unwrap();
    let shop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop");
    for f in ["shop.cedarschema", "entities.json"] {
        std::fs::copy(shop.join(f), dir.path().join(f)).unwrap();
    }
    // A policy cut short: the config loads, the policies do not.
    std::fs::write(dir.path().join("policies.cedar"), "permit(principal,").unwrap();
    let path = dir.path().join("toolgate.toml");
    std::fs::write(
        &path,
        "[authorization]\nmode = \"cedar\"\npolicies = \"policies.cedar\"\nschema = \"shop.cedarschema\"\nentities = \"entities.json\"\n\n[[tool]]\nname = \"t\"\nrisk = \"read\"\nschema = { type = \"object\" }\n",
    )
    .unwrap();
    let config = Config::load(&path).unwrap();
    let e = Gate::from_config(&config).err().unwrap();
    assert!(matches!(e, FromConfigError::Authorization(_)), "{e:?}");
    assert_eq!(e.to_string(), "cannot load the authorization policies");
    let source = std::error::Error::source(&e).unwrap().to_string();
    assert!(source.contains("policies.cedar"), "{source}");
}
