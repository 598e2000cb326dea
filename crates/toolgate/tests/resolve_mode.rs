//! URL resolve mode through the whole gate: a `url_policy` with
//! `resolve = true` resolves the host with the gate's resolver, denies the
//! call if any address is forbidden (DNS rebinding defense), and pins the
//! checked addresses in the decision.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use toolgate::config::Config;
use toolgate::url_guard::Resolve;
use toolgate::{Context, Decision, Format, Gate, Verdict};

/// Resolves every host to fixed addresses and records the lookups.
struct Fake {
    addresses: Vec<IpAddr>,
    lookups: Mutex<Vec<(String, u16)>>,
}

impl Fake {
    fn new(addresses: &[&str]) -> Arc<Self> {
        Arc::new(Self {
            addresses: addresses.iter().map(|a| a.parse().unwrap()).collect(),
            lookups: Mutex::new(Vec::new()),
        })
    }
}

impl Resolve for Fake {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        self.lookups.lock().unwrap().push((host.to_owned(), port));
        Ok(self.addresses.clone())
    }
}

fn config(resolve: bool) -> Config {
    let text = format!(
        r#"
[[tool]]
name = "fetch_url"
risk = "read"
schema_json = '{{"type":"object","properties":{{"url":{{"type":"string"}}}},"required":["url"],"additionalProperties":false}}'
url_policy = {{ arg = "/url", hosts = ["*.example.com"], resolve = {resolve} }}
"#
    );
    Config::parse(&text, "resolve.toml").unwrap()
}

fn decide(resolve: bool, resolver: Arc<Fake>, url: &str) -> Decision {
    let gate = Gate::builder(config(resolve).registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .resolver(resolver)
        .build()
        .unwrap();
    let args = format!(r#"{{\"url\":\"{url}\"}}"#);
    let body = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"fetch_url","arguments":"{args}"}}}}]}}}}]}}"#
    );
    let ctx = Context::new("alice", "s-1", 1);
    let d = gate.decide(body.as_bytes(), Format::Auto, &ctx, &ctx);
    assert!(d.rejected().is_none(), "{d:?}");
    assert_eq!(d.decisions().len(), 1);
    d.into_decisions().remove(0)
}

fn assert_url_denied(d: &Decision, detail: &str) {
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    assert_eq!(d.reasons().len(), 1);
    assert_eq!(d.reasons()[0].code.as_str(), "url_policy");
    assert_eq!(d.reasons()[0].pointer, "/url");
    assert_eq!(d.reasons()[0].detail, Some(detail));
    assert!(d.pinned().is_empty());
    assert!(d.executable_args().is_none());
    assert!(!d.feedback().contains("169.254"), "{}", d.feedback());
    assert!(!d.feedback().contains("example.com"), "{}", d.feedback());
}

#[test]
fn a_name_resolving_to_the_metadata_address_is_denied() {
    let fake = Fake::new(&["169.254.169.254"]);
    let d = decide(true, fake.clone(), "https://api.example.com/latest");
    assert_url_denied(&d, "url_forbidden_address");
    assert_eq!(
        *fake.lookups.lock().unwrap(),
        [("api.example.com".to_owned(), 443)]
    );
}

#[test]
fn a_name_resolving_to_public_addresses_is_allowed_and_pinned() {
    let fake = Fake::new(&["93.184.216.34", "2606:2800:220:1::", "93.184.216.34"]);
    let d = decide(true, fake, "https://api.example.com/a?b=c");
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    assert_eq!(d.pinned().len(), 1);
    assert_eq!(d.pinned()[0].pointer, "/url");
    let expected: Vec<SocketAddr> = vec![
        "93.184.216.34:443".parse().unwrap(),
        "[2606:2800:220:1::]:443".parse().unwrap(),
    ];
    assert_eq!(d.pinned()[0].addresses, expected);
}

#[test]
fn one_public_and_one_private_address_is_denied() {
    for private in ["10.0.0.7", "127.0.0.1", "fd00::1", "::ffff:169.254.169.254"] {
        let d = decide(
            true,
            Fake::new(&["93.184.216.34", private]),
            "https://api.example.com/",
        );
        assert_url_denied(&d, "url_forbidden_address");
    }
}

#[test]
fn an_empty_or_failed_lookup_is_denied() {
    let d = decide(true, Fake::new(&[]), "https://api.example.com/");
    assert_url_denied(&d, "url_resolve_failed");
}

#[test]
fn the_static_checks_run_before_any_lookup() {
    let fake = Fake::new(&["93.184.216.34"]);
    let d = decide(true, fake.clone(), "https://evil.test/");
    assert_eq!(d.verdict(), Verdict::Deny);
    assert_eq!(d.reasons()[0].code.as_str(), "url_policy");
    assert!(fake.lookups.lock().unwrap().is_empty());
}

#[test]
fn without_resolve_mode_nothing_is_resolved_or_pinned() {
    let fake = Fake::new(&["169.254.169.254"]);
    let d = decide(false, fake.clone(), "https://api.example.com/");
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    assert!(d.pinned().is_empty());
    assert!(fake.lookups.lock().unwrap().is_empty());
    assert!(config(false)
        .registry()
        .iter()
        .all(|t| t.url_policies().iter().all(|p| !p.resolve())));
    assert!(config(true).registry().iter().all(|t| t
        .url_policies()
        .iter()
        .all(toolgate::registry::UrlPolicyConfig::resolve)));
}

#[test]
fn a_misspelled_resolve_key_is_rejected() {
    let text = r#"
[[tool]]
name = "fetch_url"
risk = "read"
schema_json = '{"type":"object","properties":{"url":{"type":"string"}}}'
url_policy = { arg = "/url", hosts = ["a.example"], resolves = true }
"#;
    let e = Config::parse(text, "resolve.toml").unwrap_err();
    assert!(e.to_string().contains("unknown key `resolves`"), "{e}");
    let text = text.replace("resolves = true", "resolve = \"yes\"");
    assert!(Config::parse(&text, "resolve.toml").is_err());
}
