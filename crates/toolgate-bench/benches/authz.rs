//! What Cedar authorization adds to a decision: the shop example's policies
//! (8 policies, static entities, in memory, no store), and 1,000 generated
//! policies across 100 tools (10 per tool, each call evaluated against its
//! own tool's policies only). Each case is measured with the Cedar
//! authorizer and with `danger::NoAuthorization` on the same body; the
//! difference is the authorization's cost.
//!
//! Run: `cargo bench -p toolgate-bench --bench authz`. Target: authorization
//! adds under 20 µs per call, also with 1,000 policies.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness: a broken setup should stop the run loudly; criterion's macros generate undocumented items"
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use toolgate::authz::{self, CedarAuthorizer, Source};
use toolgate::config::Config;
use toolgate::registry::Registry;
use toolgate::{Context, Format, Gate, Verdict};

fn body(name: &str, args: &str) -> Vec<u8> {
    format!(
        r#"{{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"{name}","arguments":"{args}"}}}}]}}}}]}}"#
    )
    .into_bytes()
}

fn pair(
    c: &mut Criterion,
    group: &str,
    registry: &Registry,
    cedar: CedarAuthorizer,
    cases: &[(&str, Vec<u8>, Verdict)],
    ctx: &Context,
) {
    let with = Gate::builder(registry.clone())
        .authorizer(cedar)
        .build()
        .unwrap();
    let without = Gate::builder(registry.clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let mut g = c.benchmark_group(group);
    for (name, b, verdict) in cases {
        let d = with.decide(b, Format::OpenAiChat, ctx, ctx);
        assert_eq!(d.decisions()[0].verdict(), *verdict, "{name}: {d:?}");
        g.bench_function(format!("{name}/cedar"), |bench| {
            bench.iter(|| with.decide(black_box(b), Format::OpenAiChat, ctx, ctx));
        });
        g.bench_function(format!("{name}/no_authorization"), |bench| {
            bench.iter(|| without.decide(black_box(b), Format::OpenAiChat, ctx, ctx));
        });
    }
    g.finish();
}

fn shop(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop");
    let config = Config::load(dir.join("toolgate.toml")).unwrap();
    let authz::ConfiguredAuthorizer::Cedar(cedar) = authz::from_config(&config).unwrap() else {
        panic!("the shop config names cedar policies");
    };
    let mut ctx = Context::new("alice", "sess-bench", 1);
    ctx.roles = vec!["customer".to_owned()];
    ctx.now = Some(1_767_225_600);
    let cases = [
        (
            "get_order_own",
            body("get_order", r#"{\"order_id\":\"ord_1001\"}"#),
            Verdict::Allow,
        ),
        (
            "refund_other_users",
            body(
                "refund",
                r#"{\"order_id\":\"ord_2001\",\"amount_cents\":1500,\"reason\":\"late\"}"#,
            ),
            Verdict::Deny,
        ),
        (
            "search",
            body("search", r#"{\"query\":\"boots\",\"limit\":5}"#),
            Verdict::Allow,
        ),
    ];
    pair(c, "authz/shop", config.registry(), *cedar, &cases, &ctx);
}

/// 100 tools `tool_0` … `tool_99` on `Doc` resources, 10 policies each
/// (permits and forbids reading the arguments, the resource and the
/// principal's roles), and 1,000 documents owned by 100 users.
fn generated(c: &mut Criterion) {
    const TOOLS: usize = 100;
    let mut schema = String::from(
        "entity Role;\nentity User in [Role];\nentity Doc { owner: User, size: Long, level: Long };\nentity Tool;\n",
    );
    let mut policies = String::new();
    let mut config = String::new();
    for t in 0..TOOLS {
        writeln!(
            schema,
            "action tool_{t} appliesTo {{ principal: [User], resource: [Doc], context: {{ args: {{ doc: String, amount: Long, note: String }}, turn: Long, risk: String }} }};"
        )
        .unwrap();
        let a = format!("Action::\"tool_{t}\"");
        writeln!(policies, "@id(\"t{t}-owner\") permit(principal, action == {a}, resource) when {{ resource.owner == principal }};").unwrap();
        writeln!(
            policies,
            "@id(\"t{t}-admin\") permit(principal in Role::\"admin\", action == {a}, resource);"
        )
        .unwrap();
        writeln!(policies, "@id(\"t{t}-editor\") permit(principal in Role::\"editor\", action == {a}, resource) when {{ resource.level < 3 && context.args.amount < 1000 }};").unwrap();
        writeln!(policies, "@id(\"t{t}-auditor\") permit(principal in Role::\"auditor\", action == {a}, resource) when {{ context.risk == \"read\" }};").unwrap();
        writeln!(policies, "@id(\"t{t}-not-owner\") @code(\"not_owner\") forbid(principal, action == {a}, resource) unless {{ resource.owner == principal || principal in Role::\"admin\" || principal in Role::\"editor\" || principal in Role::\"auditor\" }};").unwrap();
        writeln!(policies, "@id(\"t{t}-size\") @code(\"not_authorized\") forbid(principal, action == {a}, resource) when {{ context.args.amount > resource.size }};").unwrap();
        writeln!(policies, "@id(\"t{t}-turns\") @code(\"not_authorized\") forbid(principal, action == {a}, resource) when {{ context.turn > 50 }};").unwrap();
        writeln!(policies, "@id(\"t{t}-note\") @code(\"not_authorized\") forbid(principal, action == {a}, resource) when {{ context.args.note like \"*DROP TABLE*\" }};").unwrap();
        writeln!(policies, "@id(\"t{t}-level\") @code(\"not_authorized\") forbid(principal, action == {a}, resource) when {{ resource.level > 8 && !(principal in Role::\"admin\") }};").unwrap();
        writeln!(policies, "@id(\"t{t}-blocked\") @code(\"not_authorized\") forbid(principal in Role::\"blocked\", action == {a}, resource);").unwrap();
        writeln!(
            config,
            "[[tool]]\nname = \"tool_{t}\"\nrisk = \"read\"\nresource = {{ type = \"Doc\", id = \"/doc\" }}\nschema_json = '{{\"type\":\"object\",\"properties\":{{\"doc\":{{\"type\":\"string\"}},\"amount\":{{\"type\":\"integer\"}},\"note\":{{\"type\":\"string\"}}}},\"required\":[\"doc\",\"amount\",\"note\"],\"additionalProperties\":false}}'\n"
        )
        .unwrap();
    }
    let mut entities = String::from("[");
    for r in ["admin", "editor", "auditor", "blocked"] {
        write!(
            entities,
            r#"{{"uid":{{"type":"Role","id":"{r}"}},"attrs":{{}},"parents":[]}},"#
        )
        .unwrap();
    }
    for u in 0..100 {
        write!(
            entities,
            r#"{{"uid":{{"type":"User","id":"u{u}"}},"attrs":{{}},"parents":[]}},"#
        )
        .unwrap();
    }
    for d in 0..1000 {
        if d > 0 {
            entities.push(',');
        }
        write!(
            entities,
            r#"{{"uid":{{"type":"Doc","id":"d{d}"}},"attrs":{{"owner":{{"__entity":{{"type":"User","id":"u{}"}}}},"size":{},"level":{}}},"parents":[]}}"#,
            d % 100,
            1000 + d,
            d % 10
        )
        .unwrap();
    }
    entities.push(']');
    let cedar = CedarAuthorizer::from_sources(
        Source::new(Path::new("generated.cedar"), &policies),
        Source::new(Path::new("generated.cedarschema"), &schema),
        Some(Source::new(Path::new("generated.json"), &entities)),
    )
    .unwrap();
    assert_eq!(cedar.policy_count(), 1000);
    assert_eq!(cedar.policies_for("tool_42"), 10);
    let config = Config::parse(&config, Path::new("generated.toml")).unwrap();
    let mut ctx = Context::new("u7", "sess-bench", 1);
    ctx.now = Some(1_767_225_600);
    let cases = [
        (
            "tool_42_owner",
            body(
                "tool_42",
                r#"{\"doc\":\"d107\",\"amount\":5,\"note\":\"ok\"}"#,
            ),
            Verdict::Allow,
        ),
        (
            "tool_42_not_owner",
            body(
                "tool_42",
                r#"{\"doc\":\"d108\",\"amount\":5,\"note\":\"ok\"}"#,
            ),
            Verdict::Deny,
        ),
    ];
    pair(
        c,
        "authz/1000_policies_100_tools",
        config.registry(),
        cedar,
        &cases,
        &ctx,
    );
}

criterion_group!(benches, shop, generated);
criterion_main!(benches);
