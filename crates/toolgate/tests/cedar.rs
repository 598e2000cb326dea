//! Authorization with Cedar (issue 5): the shop's policies through the whole
//! gate, fail-closed evaluation, load errors, and narrowed tool schemas.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::path::{Path, PathBuf};

use toolgate::authz::{self, CedarAuthorizer, LoadErrorCode, Source, ToolsFormat};
use toolgate::config::Config;
use toolgate::{CedarAuthorizer as RootReexport, Context, Decision, Format, Gate, Verdict};

fn shop() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop")
}

fn shop_text(name: &str) -> String {
    std::fs::read_to_string(shop().join(name)).unwrap()
}

fn config() -> Config {
    Config::load(shop().join("toolgate.toml")).unwrap()
}

/// The shop's authorizer, with its policies replaced by `policies`.
fn cedar_with(policies: &str) -> CedarAuthorizer {
    let schema = shop_text("shop.cedarschema");
    let entities = shop_text("entities.json");
    CedarAuthorizer::from_sources(
        Source::new(Path::new("test.cedar"), policies),
        Source::new(Path::new("shop.cedarschema"), &schema),
        Some(Source::new(Path::new("entities.json"), &entities)),
    )
    .unwrap()
}

fn shop_gate() -> Gate {
    let config = config();
    let authorizer = authz::from_config(&config).unwrap();
    Gate::builder(config.registry().clone())
        .authorizer(authorizer)
        .build()
        .unwrap()
}

fn gate_with(policies: &str) -> Gate {
    Gate::builder(config().registry().clone())
        .authorizer(cedar_with(policies))
        .build()
        .unwrap()
}

fn ctx(user: &str, roles: &[&str]) -> Context {
    let mut c = Context::new(user, "s-1", 1);
    c.roles = roles.iter().map(|r| (*r).to_owned()).collect();
    c.now = Some(1_000);
    c
}

/// An OpenAI response with one call.
fn body(tool: &str, args: &str) -> Vec<u8> {
    let args = toolgate_json::canonical::to_string(&toolgate_json::Value::String(args.into()));
    format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{args}}}}}]}}}}]}}"#
    )
    .into_bytes()
}

fn refund(order: &str, amount: i64) -> Vec<u8> {
    body(
        "refund",
        &format!(r#"{{"order_id":"{order}","amount_cents":{amount},"reason":"late"}}"#),
    )
}

fn decide(gate: &Gate, body: &[u8], context: &Context) -> Decision {
    let d = gate.decide(body, Format::Auto, context, context);
    assert_eq!(d.decisions().len(), 1, "{d:?}");
    d.into_decisions().into_iter().next().unwrap()
}

#[track_caller]
fn assert_denied(d: &Decision, code: &str, policies: &[&str]) {
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    assert_eq!(d.reasons().len(), 1, "{d:?}");
    assert_eq!(d.reasons()[0].code.as_str(), code, "{d:?}");
    assert_eq!(d.reasons()[0].pointer, "");
    assert_eq!(d.policies(), policies, "{d:?}");
    assert_eq!(d.feedback(), format!("denied by toolgate: {code}"));
}

#[test]
fn own_order_refund_within_total_needs_approval() {
    let gate = shop_gate();
    let d = decide(
        &gate,
        &refund("ord_1001", 1500),
        &ctx("alice", &["customer"]),
    );
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    assert_eq!(d.policies(), ["owner-refunds-order"]);
    let d = decide(
        &gate,
        &body("get_order", r#"{"order_id":"ord_1002"}"#),
        &ctx("alice", &[]),
    );
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    assert_eq!(d.policies(), ["owner-reads-order"]);
}

#[test]
fn another_users_order_and_an_unknown_order_look_the_same() {
    let gate = shop_gate();
    let alice = ctx("alice", &["customer"]);
    let other = decide(&gate, &refund("ord_2001", 1000), &alice);
    assert_denied(&other, "not_owner", &["order-of-another-user"]);
    let unknown = decide(&gate, &refund("ord_9999", 1000), &alice);
    assert_denied(&unknown, "not_owner", &[authz::UNKNOWN_RESOURCE]);
    assert_eq!(other.feedback(), unknown.feedback());
    // Above the other order's total too: still only `not_owner`, so the
    // total cannot be probed.
    let probe = decide(&gate, &refund("ord_2001", 99_999), &alice);
    assert_denied(
        &probe,
        "not_owner",
        &["order-of-another-user", "refund-at-most-total"],
    );
    assert_eq!(probe.feedback(), unknown.feedback());
    let read = decide(
        &gate,
        &body("get_order", r#"{"order_id":"ord_2001"}"#),
        &alice,
    );
    assert_denied(&read, "not_owner", &["order-of-another-user"]);
}

#[test]
fn refund_above_the_total_is_denied_by_the_named_policy() {
    let gate = shop_gate();
    let d = decide(&gate, &refund("ord_1002", 2600), &ctx("alice", &[]));
    assert_denied(&d, "not_authorized", &["refund-at-most-total"]);
    let d = decide(&gate, &refund("ord_1002", 2599), &ctx("alice", &[]));
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "at the total exactly");
}

#[test]
fn support_agents_refund_up_to_their_limit() {
    let gate = shop_gate();
    // carol is a support agent in the static entities.
    let carol = ctx("carol", &[]);
    let d = decide(&gate, &refund("ord_2001", 5000), &carol);
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    assert_eq!(d.policies(), ["support-refunds-order"]);
    let d = decide(&gate, &refund("ord_2001", 5001), &carol);
    assert_denied(&d, "not_authorized", &["support-refund-limit"]);
    // The order's total still binds support agents.
    let d = decide(&gate, &refund("ord_1002", 3000), &carol);
    assert_denied(&d, "not_authorized", &["refund-at-most-total"]);
    // dave is in no entity, and the shop does not trust the context with
    // users: his claimed role counts for nothing (issue 12).
    let d = decide(&gate, &refund("ord_2001", 100), &ctx("dave", &["support"]));
    assert_denied(&d, "not_owner", &["order-of-another-user"]);
    // Trusted with users, the context makes dave a support agent.
    let trusting = Gate::builder(config().registry().clone())
        .authorizer(
            cedar_with(&shop_text("policies.cedar"))
                .with_context_entities(["User"], Path::new("t.toml"))
                .unwrap(),
        )
        .build()
        .unwrap();
    let d = decide(
        &trusting,
        &refund("ord_2001", 100),
        &ctx("dave", &["support"]),
    );
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    let d = decide(
        &trusting,
        &refund("ord_2001", 100),
        &ctx("dave", &["customer"]),
    );
    assert_denied(&d, "not_owner", &["order-of-another-user"]);
    // A customer role from the context does not take carol's role away.
    let d = decide(
        &gate,
        &refund("ord_2001", 100),
        &ctx("carol", &["customer"]),
    );
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
}

#[test]
fn a_forbid_beats_a_permit() {
    let gate = gate_with(
        r#"@id("all") permit(principal, action, resource);
           @id("no-refunds") forbid(principal, action == Action::"refund", resource);"#,
    );
    let d = decide(&gate, &refund("ord_1001", 1), &ctx("alice", &[]));
    // Unannotated forbid on a tool with a resource: `not_owner` (the safe code).
    assert_denied(&d, "not_owner", &["no-refunds"]);
    let d = decide(
        &gate,
        &body("search", r#"{"query":"boots"}"#),
        &ctx("alice", &[]),
    );
    assert_eq!(d.verdict(), Verdict::Allow);
    assert_eq!(d.policies(), ["all"]);
}

#[test]
fn no_permit_denies() {
    let gate =
        gate_with(r#"@id("reads") permit(principal, action == Action::"get_order", resource);"#);
    let d = decide(
        &gate,
        &body("search", r#"{"query":"boots"}"#),
        &ctx("alice", &[]),
    );
    assert_denied(&d, "not_authorized", &[toolgate::DenyAll::POLICY_ID]);
    let gate = gate_with("");
    let d = decide(&gate, &refund("ord_1001", 1), &ctx("alice", &[]));
    assert_denied(&d, "not_owner", &[toolgate::DenyAll::POLICY_ID]);
}

#[test]
fn a_forbid_that_errors_denies() {
    // Cedar skips a policy whose evaluation errors: the overflow below would
    // make this forbid silently not forbid, and the permit would allow.
    let gate = gate_with(
        r#"@id("all") permit(principal, action, resource);
           @id("overflowing-forbid")
           forbid(principal, action == Action::"refund", resource)
           when { context.args.amount_cents * 1000000000000000 < 0 };"#,
    );
    let d = decide(&gate, &refund("ord_1001", 10_000), &ctx("alice", &[]));
    assert_denied(&d, "authorization_error", &["all"]);
    assert!(!d.feedback().contains("overflowing"), "{}", d.feedback());
    // Without the overflow the same policies allow.
    let d = decide(&gate, &refund("ord_1001", 1), &ctx("alice", &[]));
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
}

/// The shop's policies, trusting request contexts with `Order` entities.
fn gate_trusting_orders() -> Gate {
    Gate::builder(config().registry().clone())
        .authorizer(
            cedar_with(&shop_text("policies.cedar"))
                .with_context_entities(["Order"], Path::new("t.toml"))
                .unwrap(),
        )
        .build()
        .unwrap()
}

#[test]
fn entities_of_the_wrong_type_deny() {
    let gate = gate_trusting_orders();
    let mut c = ctx("bob", &[]);
    c.entities = Some(
        toolgate_json::from_str(
            r#"[{"uid":{"type":"Order","id":"ord_3001"},"attrs":{"owner":{"__entity":{"type":"User","id":"bob"}},"total_cents":"12"},"parents":[]}]"#,
        )
        .unwrap()
        .into_owned(),
    );
    let d = decide(&gate, &refund("ord_3001", 1), &c);
    assert_denied(&d, "authorization_error", &[]);
}

#[test]
fn entities_from_the_request() {
    let gate = gate_trusting_orders();
    let order = r#"[{"uid":{"type":"Order","id":"ord_3001"},"attrs":{"owner":{"__entity":{"type":"User","id":"bob"}},"total_cents":700},"parents":[]}]"#;
    let mut bob = ctx("bob", &[]);
    bob.entities = Some(toolgate_json::from_str(order).unwrap().into_owned());
    let d = decide(&gate, &refund("ord_3001", 700), &bob);
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    let d = decide(&gate, &refund("ord_3001", 701), &bob);
    assert_denied(&d, "not_authorized", &["refund-at-most-total"]);
    let mut alice = ctx("alice", &[]);
    alice.entities = bob.entities.clone();
    let d = decide(&gate, &refund("ord_3001", 1), &alice);
    assert_denied(&d, "not_owner", &["order-of-another-user"]);
    // A request may not redefine a static entity.
    let mut forged = ctx("alice", &[]);
    forged.entities = Some(
        toolgate_json::from_str(
            r#"[{"uid":{"type":"Order","id":"ord_2001"},"attrs":{"owner":{"__entity":{"type":"User","id":"alice"}},"total_cents":1},"parents":[]}]"#,
        )
        .unwrap()
        .into_owned(),
    );
    let d = decide(&gate, &refund("ord_2001", 1), &forged);
    assert_denied(&d, "authorization_error", &[]);
}

#[test]
fn a_string_where_a_long_belongs_denies() {
    // A tool whose JSON Schema lets a string through where the Cedar schema
    // declares a Long: the request fails its schema check, no policy is
    // skipped.
    let text = r#"
[[tool]]
name = "refund"
risk = "destructive"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"amount_cents":{"type":"string"},"reason":{"type":"string"}},"required":["order_id","amount_cents","reason"],"additionalProperties":false}'
resource = { type = "Order", id = "/order_id" }
"#;
    let config = Config::parse(text, shop().join("loose.toml")).unwrap();
    let gate = Gate::builder(config.registry().clone())
        .authorizer(cedar_with(
            r#"@id("all") permit(principal, action, resource);
               @id("cap") forbid(principal, action == Action::"refund", resource)
               when { context.args.amount_cents > 10 };"#,
        ))
        .build()
        .unwrap();
    let d = decide(
        &gate,
        &body(
            "refund",
            r#"{"order_id":"ord_1001","amount_cents":"99999","reason":"late"}"#,
        ),
        &ctx("alice", &[]),
    );
    assert_denied(&d, "authorization_error", &[]);
}

#[test]
fn a_context_of_another_shape_is_checked_again() {
    // The schema check of a request's context is remembered by the
    // context's shape: an `amount_cents` that is a Long passes once, and
    // a string there (a shape of its own) is still refused, though no
    // policy would notice it, and the Long passes again.
    let text = r#"
[[tool]]
name = "refund"
risk = "destructive"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"amount_cents":{"type":["string","integer"],"minimum":1,"maximum":100000},"reason":{"type":"string"}},"required":["order_id","amount_cents","reason"],"additionalProperties":false}'
resource = { type = "Order", id = "/order_id" }
"#;
    let config = Config::parse(text, shop().join("loose.toml")).unwrap();
    let gate = Gate::builder(config.registry().clone())
        .authorizer(cedar_with(
            r#"@id("all") permit(principal, action, resource);"#,
        ))
        .build()
        .unwrap();
    let call = |amount: &str| {
        let args = format!(r#"{{"order_id":"ord_1001","amount_cents":{amount},"reason":"late"}}"#);
        decide(&gate, &body("refund", &args), &ctx("alice", &[]))
    };
    for _ in 0..2 {
        // Permitted (a destructive tool's call is then held for approval).
        let d = call("5");
        assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
        assert_eq!(d.policies(), ["all"], "{d:?}");
        assert_denied(&call(r#""5""#), "authorization_error", &[]);
    }
}

#[test]
fn feedback_names_codes_only() {
    let gate = shop_gate();
    let ids = [
        "order-of-another-user",
        "refund-at-most-total",
        "support-refund-limit",
        "owner-refunds-order",
        "toolgate:unknown",
        "toolgate:default",
        "ord_",
        "Order",
        "cedar",
    ];
    for (user, order, amount) in [
        ("alice", "ord_2001", 1),
        ("alice", "ord_9999", 1),
        ("alice", "ord_1002", 9999),
        ("carol", "ord_2001", 9999),
        ("alice", "ord_1001", 1),
    ] {
        let d = decide(&gate, &refund(order, amount), &ctx(user, &[]));
        for id in ids {
            assert!(!d.feedback().contains(id), "{id} in {}", d.feedback());
        }
    }
}

#[test]
fn policies_are_indexed_by_action() {
    let cedar = cedar_with(&shop_text("policies.cedar"));
    assert_eq!(cedar.policy_count(), 9);
    // refund: owner, support, support limit, another user's order, total.
    assert_eq!(cedar.policies_for("refund"), 5);
    assert_eq!(cedar.policies_for("search"), 1);
    // fetch_url: the catalogue and site, the trifecta rule.
    assert_eq!(cedar.policies_for("fetch_url"), 2);
    assert_eq!(cedar.policies_for("get_order"), 3);
    assert_eq!(cedar.policies_for("nope"), 0);
    let _: Option<&RootReexport> = None;
}

#[test]
fn load_errors_name_file_line_and_policy() {
    let schema = shop_text("shop.cedarschema");
    let load = |policies: &str| {
        CedarAuthorizer::from_sources(
            Source::new(Path::new("p.cedar"), policies),
            Source::new(Path::new("s.cedarschema"), &schema),
            None,
        )
        .unwrap_err()
    };
    let e = load(
        "@id(\"a\")\npermit(principal, action, resource);\n\npermit(principal action, resource);",
    );
    assert_eq!(e.code(), LoadErrorCode::PolicySyntax);
    assert_eq!(e.line(), Some(4), "{e}");
    assert!(e.to_string().starts_with("p.cedar:4:"), "{e}");

    let e = load(
        "@id(\"a\")\npermit(principal, action, resource);\n@id(\"typo\")\npermit(principal, action == Action::\"refund\", resource)\nwhen { resource.totl_cents > 1 };",
    );
    assert_eq!(e.code(), LoadErrorCode::PolicyValidation);
    assert_eq!(e.policy_id(), Some("typo"));
    assert_eq!(e.line(), Some(5), "{e}");
    assert!(e.to_string().starts_with("p.cedar:5:"), "{e}");

    let e = load("@id(\"a\")\npermit(principal, action, resource);\n@id(\"a\")\nforbid(principal, action, resource);");
    assert_eq!(e.code(), LoadErrorCode::DuplicatePolicyId);
    assert_eq!(e.line(), Some(3), "{e}");

    let e = load("@id(\"a\") @code(\"secret\")\nforbid(principal, action, resource);");
    assert_eq!(e.code(), LoadErrorCode::InvalidAnnotation);
    assert_eq!(e.line(), Some(1), "{e}");

    let e = load("permit(principal == ?principal, action, resource);");
    assert_eq!(e.code(), LoadErrorCode::Template);

    let e = CedarAuthorizer::from_sources(
        Source::new(Path::new("p.cedar"), ""),
        Source::new(
            Path::new("s.cedarschema"),
            "entity User;\n\nentity Order {\n  owner: Usr,\n};",
        ),
        None,
    )
    .unwrap_err();
    assert_eq!(e.code(), LoadErrorCode::Schema);
    assert!(e.to_string().starts_with("s.cedarschema"), "{e}");

    let e = CedarAuthorizer::from_sources(
        Source::new(Path::new("p.cedar"), ""),
        Source::new(Path::new("s.cedarschema"), &schema),
        Some(Source::new(
            Path::new("e.json"),
            "[\n{\"uid\":{\"type\":\"Role\",\"id\":\"a\"},\"attrs\":{},\"attrs\":{},\"parents\":[]}]",
        )),
    )
    .unwrap_err();
    assert_eq!(e.code(), LoadErrorCode::Entities);
    assert_eq!(e.line(), Some(2), "{e}");
}

#[test]
fn config_modes() {
    let dir = shop();
    let parse = |authz: &str| Config::parse(authz, dir.join("t.toml"));
    let c = parse("").unwrap();
    assert_eq!(c.authorization().mode(), None);
    assert!(matches!(
        authz::from_config(&c).unwrap(),
        authz::ConfiguredAuthorizer::DenyAll(_)
    ));
    let c = parse("[authorization]\nmode = \"none\"\n").unwrap();
    assert!(matches!(
        authz::from_config(&c).unwrap(),
        authz::ConfiguredAuthorizer::None(_)
    ));
    let c =
        parse("[authorization]\npolicies = \"policies.cedar\"\nschema = \"shop.cedarschema\"\n")
            .unwrap();
    assert_eq!(
        c.authorization().mode(),
        Some(toolgate::config::AuthorizationMode::Cedar)
    );
    let e = parse("[authorization]\nmode = \"none\"\npolicies = \"policies.cedar\"\n").unwrap_err();
    assert_eq!(e.code(), toolgate::config::ErrorCode::ConflictingKeys);
    assert_eq!((e.line(), e.config_key()), (Some(3), Some("policies")));
    let e = parse("[authorization]\npolicies = \"policies.cedar\"\n").unwrap_err();
    assert_eq!(e.code(), toolgate::config::ErrorCode::MissingKey);
    assert_eq!(e.line(), Some(2), "{e}");
    let e = parse("[authorization]\nmode = \"cedar\"\n").unwrap_err();
    assert_eq!(e.code(), toolgate::config::ErrorCode::MissingKey);
    let e = parse("[authorization]\nmode = \"off\"\n").unwrap_err();
    assert_eq!(e.code(), toolgate::config::ErrorCode::InvalidValue);
    // A tool without an action in the schema is refused at load.
    let c = parse(
        "[authorization]\npolicies = \"policies.cedar\"\nschema = \"shop.cedarschema\"\n\n[[tool]]\nname = \"wipe\"\nrisk = \"destructive\"\nschema_json = '{\"type\":\"object\"}'\n",
    )
    .unwrap();
    let e = authz::from_config(&c).unwrap_err();
    assert_eq!(e.code(), LoadErrorCode::UnknownAction);
}

#[test]
fn narrowed_tools_per_user() {
    let config = config();
    let cedar = cedar_with(&shop_text("policies.cedar"));
    let ids = |c: &Context, tool: &str| {
        cedar
            .narrow(config.registry(), c)
            .unwrap()
            .tools
            .into_iter()
            .find(|t| t.name == tool)
            .and_then(|t| t.ids)
    };
    assert_eq!(
        ids(&ctx("alice", &[]), "refund").unwrap(),
        ["ord_1001", "ord_1002"]
    );
    assert_eq!(ids(&ctx("bob", &[]), "get_order").unwrap(), ["ord_2001"]);
    assert_eq!(
        ids(&ctx("carol", &[]), "refund").unwrap(),
        ["ord_1001", "ord_1002", "ord_2001"]
    );
    // A user with no orders is not offered the order tools at all.
    assert_eq!(ids(&ctx("dave", &[]), "refund"), None);
    let dave = cedar.narrow(config.registry(), &ctx("dave", &[])).unwrap();
    let names: Vec<_> = dave.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search", "fetch_url", "run_tests"]);

    let alice = cedar.narrow(config.registry(), &ctx("alice", &[])).unwrap();
    let openai = alice.to_json(ToolsFormat::OpenAi);
    let refund = openai
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t.pointer("/function/name").unwrap().as_str() == Some("refund"))
        .unwrap();
    assert_eq!(
        toolgate_json::canonical::to_string(
            refund
                .pointer("/function/parameters/properties/order_id")
                .unwrap()
        ),
        r#"{"enum":["ord_1001","ord_1002"],"pattern":"^ord_[A-Za-z0-9]{1,32}$","type":"string"}"#
    );
    let anthropic = alice.to_json(ToolsFormat::Anthropic);
    assert_eq!(
        anthropic.pointer("/1/input_schema/properties/order_id/enum/1"),
        Some(&toolgate_json::Value::String("ord_1002".into()))
    );
    // The narrowed schema is a strict schema the gate could check with.
    let narrowed = &alice
        .tools
        .iter()
        .find(|t| t.name == "refund")
        .unwrap()
        .schema;
    let schema =
        toolgate_schema::Schema::compile(narrowed, &toolgate_schema::Options::new()).unwrap();
    assert!(schema
        .validate(
            &toolgate_json::from_str(r#"{"order_id":"ord_2001","amount_cents":1,"reason":"late"}"#)
                .unwrap()
        )
        .is_err());
}

/// Issue 12: the caller's context cannot widen what the server knows. A
/// user the static entities define keeps exactly their roles, whatever the
/// context claims; the context adds entities only of the types the config
/// trusts it with.
#[test]
fn the_context_cannot_widen_what_the_entities_define() {
    let alice_claims_support = ctx("alice", &["support"]);
    // The shop trusts the context with nothing.
    let gate = shop_gate();
    let d = decide(&gate, &refund("ord_2001", 100), &alice_claims_support);
    assert_denied(&d, "not_owner", &["order-of-another-user"]);
    let d = decide(
        &gate,
        &body("get_order", r#"{"order_id":"ord_2001"}"#),
        &alice_claims_support,
    );
    assert_denied(&d, "not_owner", &["order-of-another-user"]);
    // Trusting users does not make alice's (static) roles the context's.
    let trusting = Gate::builder(config().registry().clone())
        .authorizer(
            cedar_with(&shop_text("policies.cedar"))
                .with_context_entities(["User", "Order"], Path::new("t.toml"))
                .unwrap(),
        )
        .build()
        .unwrap();
    let d = decide(&trusting, &refund("ord_2001", 100), &alice_claims_support);
    assert_denied(&d, "not_owner", &["order-of-another-user"]);
    // Nor may the context redefine alice, or give her a role as an entity.
    for forged in [
        r#"[{"uid":{"type":"User","id":"alice"},"attrs":{},"parents":[{"type":"Role","id":"support"}]}]"#,
        r#"[{"uid":{"type":"Role","id":"support"},"attrs":{},"parents":[]}]"#,
    ] {
        let mut c = ctx("alice", &[]);
        c.entities = Some(toolgate_json::from_str(forged).unwrap().into_owned());
        let d = decide(&trusting, &refund("ord_2001", 100), &c);
        assert_denied(&d, "authorization_error", &[]);
    }
    // An order the context adds counts only where orders are trusted.
    let order = r#"[{"uid":{"type":"Order","id":"ord_3001"},"attrs":{"owner":{"__entity":{"type":"User","id":"alice"}},"total_cents":700},"parents":[]}]"#;
    let mut c = ctx("alice", &[]);
    c.entities = Some(toolgate_json::from_str(order).unwrap().into_owned());
    let d = decide(&gate, &refund("ord_3001", 100), &c);
    assert_denied(&d, "authorization_error", &[]);
    let d = decide(&trusting, &refund("ord_3001", 100), &c);
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    // A type the schema does not have cannot be trusted.
    let err = cedar_with(&shop_text("policies.cedar"))
        .with_context_entities(["Invoice"], Path::new("t.toml"))
        .unwrap_err();
    assert!(err.to_string().contains("`Invoice`"), "{err}");
}

/// `[authorization] context_entities` in the config reaches the authorizer.
#[test]
fn context_entities_from_the_config() {
    let text = std::fs::read_to_string(shop().join("toolgate.toml"))
        .unwrap()
        .replace(
            "entities = \"entities.json\"",
            "entities = \"entities.json\"\ncontext_entities = [\"Order\"]",
        );
    let config = Config::parse(&text, shop().join("trusting.toml")).unwrap();
    assert_eq!(config.authorization().context_entities(), ["Order"]);
    let gate = Gate::builder(config.registry().clone())
        .authorizer(authz::from_config(&config).unwrap())
        .build()
        .unwrap();
    let order = r#"[{"uid":{"type":"Order","id":"ord_3001"},"attrs":{"owner":{"__entity":{"type":"User","id":"alice"}},"total_cents":700},"parents":[]}]"#;
    let mut c = ctx("alice", &[]);
    c.entities = Some(toolgate_json::from_str(order).unwrap().into_owned());
    let d = decide(&gate, &refund("ord_3001", 100), &c);
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    for (bad, says) in [
        ("context_entities = [\"Order!\"]", "not an entity type name"),
        ("context_entities = [\"Order\", \"Order\"]", "listed twice"),
    ] {
        let text = std::fs::read_to_string(shop().join("toolgate.toml"))
            .unwrap()
            .replace(
                "entities = \"entities.json\"",
                &format!("entities = \"entities.json\"\n{bad}"),
            );
        let err = Config::parse(&text, shop().join("bad.toml")).unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }
    let text = std::fs::read_to_string(shop().join("toolgate.toml"))
        .unwrap()
        .replace(
            "entities = \"entities.json\"",
            "entities = \"entities.json\"\ncontext_entities = [\"Invoice\"]",
        );
    let config = Config::parse(&text, shop().join("unknown.toml")).unwrap();
    assert!(authz::from_config(&config).is_err());
}

/// A forbid annotated `@approval("required")` asks a human instead of
/// denying: the call is held (`approval_required`, the policy named), runs
/// once approved, and is denied as before when another forbid also
/// applies or no permit does.
#[test]
fn an_approval_forbid_holds_what_it_forbids() {
    const ASK: &str = r#"@id("ask-boots") @approval("required")
        forbid(principal, action == Action::"search", resource)
        when { context.args.query == "boots" };"#;
    let gate = gate_with(&format!(
        r#"@id("all") permit(principal, action, resource); {ASK}"#
    ));
    let boots = body("search", r#"{"query":"boots"}"#);
    let d = decide(&gate, &boots, &ctx("alice", &[]));
    assert_eq!(d.verdict(), Verdict::NeedsApproval, "{d:?}");
    assert_eq!(d.reasons()[0].code.as_str(), "approval_required");
    assert_eq!(d.policies(), ["ask-boots"]);
    // The approvers are shown what the holding policy read; the model's
    // feedback never says it.
    assert_eq!(
        d.held_facts(),
        [toolgate::PolicyFact::new("context.args.query", "\"boots\"")]
    );
    assert!(!d.feedback().contains("boots"), "{}", d.feedback());
    // What the forbid does not match runs without a human.
    let d = decide(
        &gate,
        &body("search", r#"{"query":"socks"}"#),
        &ctx("alice", &[]),
    );
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    assert_eq!(d.policies(), ["all"]);
    assert!(d.held_facts().is_empty());

    // Approved for exactly these arguments: allowed.
    let digest = d_digest(&gate, &boots);
    let approved = Context::from_json(
        format!(
            r#"{{"user":"alice","session":"s-1","turn":1,"now":1000,"approvals":[{{"id":"a1","user":"alice","session":"s-1","tool":"search","digest":"{digest}","expires_at":2000,"used":false}}]}}"#
        )
        .as_bytes(),
    )
    .unwrap();
    let d = decide(&gate, &boots, &approved);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");

    // A plain forbid beside it still denies.
    let gate = gate_with(&format!(
        r#"@id("all") permit(principal, action, resource); {ASK}
           @id("no-boots") @code("not_authorized")
           forbid(principal, action == Action::"search", resource)
           when {{ context.args.query == "boots" }};"#
    ));
    let d = decide(&gate, &boots, &ctx("alice", &[]));
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    assert_eq!(d.reasons()[0].code.as_str(), "not_authorized");
    // No permit: a human cannot make it allowed, so it is denied.
    let gate = gate_with(ASK);
    let d = decide(&gate, &boots, &ctx("alice", &[]));
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
}

/// The digest a call's arguments are approved under.
fn d_digest(gate: &Gate, body: &[u8]) -> String {
    decide(gate, body, &ctx("alice", &[]))
        .digest()
        .expect("the arguments parsed")
        .to_string()
}

#[test]
fn an_approval_annotation_is_for_forbids_and_says_required() {
    let schema = shop_text("shop.cedarschema");
    for (policies, needle) in [
        (
            r#"@id("p") @approval("required") permit(principal, action, resource);"#,
            "is for a forbid",
        ),
        (
            r#"@id("f") @approval("maybe") forbid(principal, action, resource);"#,
            "the value must be `required`",
        ),
    ] {
        let err = CedarAuthorizer::from_sources(
            Source::new(Path::new("test.cedar"), policies),
            Source::new(Path::new("shop.cedarschema"), &schema),
            None,
        )
        .unwrap_err();
        assert_eq!(err.code(), LoadErrorCode::InvalidAnnotation, "{err}");
        assert!(err.to_string().contains(needle), "{err}");
    }
}
