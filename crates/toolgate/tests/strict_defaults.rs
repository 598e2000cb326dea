//! Issue 31, the gate's strict defaults, from the attacker's side: a number
//! a double cannot hold is refused, not rounded; URL-looking string
//! arguments are guarded with a default policy even when the tool declares
//! none; hosts are resolved (through a configured resolver, here the static
//! table) and a host that resolves inside is denied.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::borrow::Cow;

use toolgate::config::Config;
use toolgate::{Context, Decision, Format, Gate, Verdict};
use toolgate_json::{canonical, Value};

fn json_string(s: &str) -> String {
    canonical::to_string(&Value::String(Cow::Borrowed(s)))
}

/// One call of `tool` with `args` (JSON text): as an OpenAI chat body
/// (arguments as a string) or an Anthropic body (arguments inline).
fn body(inline: bool, tool: &str, args: &str) -> String {
    if inline {
        format!(
            r#"{{"id":"msg","type":"message","role":"assistant","model":"m","content":[{{"type":"tool_use","id":"toolu_1","name":{},"input":{args}}}],"stop_reason":"tool_use"}}"#,
            json_string(tool)
        )
    } else {
        format!(
            r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":{},"arguments":{}}}}}]}}}}]}}"#,
            json_string(tool),
            json_string(args)
        )
    }
}

fn gate(toml: &str) -> Gate {
    let config = Config::parse(toml, "strict.toml").unwrap();
    Gate::builder(config.registry().clone())
        .gate_config(config.gate())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

fn decide(gate: &Gate, inline: bool, tool: &str, args: &str) -> Decision {
    let ctx = Context::new("alice", "s-1", 1);
    let d = gate.decide(
        body(inline, tool, args).as_bytes(),
        Format::Auto,
        &ctx,
        &ctx,
    );
    assert!(d.rejected().is_none(), "{d:?}");
    assert_eq!(d.decisions().len(), 1);
    d.into_decisions().remove(0)
}

/// (code, pointer, detail) of each reason.
fn reasons(d: &Decision) -> Vec<(String, String, Option<String>)> {
    d.reasons()
        .iter()
        .map(|r| {
            (
                r.code.as_str().to_owned(),
                r.pointer.clone(),
                r.detail.map(str::to_owned),
            )
        })
        .collect()
}

const PRICE: &str = r#"
[[tool]]
name = "set_price"
risk = "read"
schema_json = '{"type":"object","properties":{"p":{"type":"number","maximum":100},"q":{"type":"number"}},"required":["p"],"additionalProperties":false}'
"#;

#[test]
fn issue_31_a_number_a_double_cannot_hold_is_refused_not_rounded() {
    let g = gate(PRICE);
    for inline in [false, true] {
        // Read as a double this is 100, which `maximum: 100` admits; the
        // model wrote more than 100.
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 100.00000000000000000001}"#,
        );
        assert_eq!(d.verdict(), Verdict::Deny, "inline {inline}: {d:?}");
        assert_eq!(
            reasons(&d),
            [("number_too_precise".to_owned(), "/p".to_owned(), None)],
            "inline {inline}"
        );
        assert_eq!(d.executable_args(), None);
        // Deeper and later in the arguments, the pointer names the place.
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 1, "q": 0.30000000000000000001}"#,
        );
        assert_eq!(reasons(&d)[0].0, "number_too_precise", "inline {inline}");
        assert_eq!(reasons(&d)[0].1, "/q", "inline {inline}");
        // What a double holds exactly passes, and is handed on as written.
        for (written, handed) in [("0.1", "0.1"), ("2.5e-3", "0.0025"), ("1e300", "1e+300")] {
            let d = decide(
                &g,
                inline,
                "set_price",
                &format!(r#"{{"p": 1, "q": {written}}}"#),
            );
            assert_eq!(d.verdict(), Verdict::Allow, "{written}: {d:?}");
            assert_eq!(
                d.executable_args(),
                Some(format!(r#"{{"p":1,"q":{handed}}}"#).as_str())
            );
        }
        // Integers stay exact, beyond any double.
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 1, "q": 100000000000000000000001}"#,
        );
        assert_eq!(
            d.executable_args(),
            Some(r#"{"p":1,"q":100000000000000000000001}"#)
        );
    }
}

#[test]
fn issue_31_a_tool_opts_into_rounding_by_name() {
    let g = gate(&format!("{PRICE}round_numbers = true\n"));
    for inline in [false, true] {
        let d = decide(
            &g,
            inline,
            "set_price",
            r#"{"p": 100.00000000000000000001}"#,
        );
        assert_eq!(d.verdict(), Verdict::Allow, "inline {inline}: {d:?}");
        // The tool receives the value that was checked: the rounded one.
        assert_eq!(d.executable_args(), Some(r#"{"p":100}"#));
    }
}

/// A tool with no `url_policy`: a URI-declared argument, a URL-named one, a
/// plain one, and a list of links.
const FETCH: &str = r#"
[[tool]]
name = "fetch"
risk = "read"
schema_json = '{"type":"object","properties":{"page":{"type":"string","format":"uri"},"image_url":{"type":"string"},"note":{"type":"string"},"links":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}'
"#;

fn url_denial(d: &Decision) -> (String, Option<String>) {
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    let r = reasons(d);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0, "url_policy");
    (r[0].1.clone(), r[0].2.clone())
}

#[test]
fn issue_31_url_arguments_without_a_policy_are_guarded_in_each_shape() {
    let g = gate(FETCH);
    let metadata = "http://169.254.169.254/latest/meta-data/";
    for inline in [false, true] {
        let call = |args: &str| decide(&g, inline, "fetch", args);
        // Declared a URI, named like one, or shaped like one.
        for field in ["page", "image_url", "note"] {
            let d = call(&format!(r#"{{"{field}":"{metadata}"}}"#));
            assert_eq!(
                url_denial(&d),
                (
                    format!("/{field}"),
                    Some("url_forbidden_address".to_owned())
                ),
                "inline {inline}"
            );
        }
        for (args, at, detail) in [
            (
                r#"{"links":["https://example.net/","http://localhost/"]}"#,
                "/links/1",
                "url_forbidden_host",
            ),
            (
                r#"{"note":"gopher://10.0.0.1:70/_x"}"#,
                "/note",
                "url_scheme",
            ),
            (r#"{"note":"  HTTP:127.1/"}"#, "/note", "url_ambiguous"),
            (
                r#"{"image_url":"http://127.0.0.1.nip.io/"}"#,
                "/image_url",
                "url_forbidden_host",
            ),
            (
                r#"{"image_url":"file:///etc/passwd"}"#,
                "/image_url",
                "url_scheme",
            ),
            (r#"{"image_url":"logo.png"}"#, "/image_url", "url_invalid"),
            (
                r#"{"page":"http://[::ffff:10.0.0.1]/"}"#,
                "/page",
                "url_forbidden_address",
            ),
        ] {
            assert_eq!(
                url_denial(&call(args)),
                (at.to_owned(), Some(detail.to_owned())),
                "inline {inline}: {args}"
            );
        }
        // Public URLs and free text pass.
        for args in [
            r#"{"page":"https://example.net/a","image_url":"http://cdn.example.net/i.png"}"#,
            r#"{"note":"see http://169.254.169.254/ for nothing"}"#,
            r#"{"note":"mailto:ops@example.net"}"#,
        ] {
            assert_eq!(
                call(args).verdict(),
                Verdict::Allow,
                "inline {inline}: {args}"
            );
        }
    }
}

#[test]
fn issue_31_a_tool_opts_an_argument_out_by_name_with_a_reason() {
    let waived = format!(
        "{FETCH}url_unchecked = [{{ arg = \"/note\", reason = \"free text shown to the user, never fetched\" }}]\n"
    );
    let g = gate(&waived);
    let d = decide(&g, false, "fetch", r#"{"note":"http://169.254.169.254/"}"#);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    // The others stay guarded.
    let d = decide(
        &g,
        false,
        "fetch",
        r#"{"image_url":"http://169.254.169.254/"}"#,
    );
    assert_eq!(url_denial(&d).0, "/image_url");
    let tool = Config::parse(&waived, "w.toml").unwrap();
    let tool = tool.registry().get("fetch").unwrap();
    assert_eq!(tool.url_unchecked()[0].arg(), "/note");
    assert_eq!(
        tool.url_unchecked()[0].reason(),
        "free text shown to the user, never fetched"
    );
    // No reason, no opt-out.
    let err = Config::parse(
        &format!("{FETCH}url_unchecked = [{{ arg = \"/note\", reason = \" \" }}]\n"),
        "w.toml",
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "invalid_url_unchecked");
    // An argument the schema does not declare is a typo, not an opt-out.
    let err = Config::parse(
        &format!("{FETCH}url_unchecked = [{{ arg = \"/nope\", reason = \"x\" }}]\n"),
        "w.toml",
    )
    .unwrap_err();
    assert_eq!(err.code().as_str(), "undeclared_property");
    // A tool's own policy replaces the default on its argument.
    let own = format!("{FETCH}url_policy = {{ arg = \"/page\", schemes = [\"https\"], hosts = [\"example.com\"] }}\n");
    let g = gate(&own);
    let d = decide(&g, false, "fetch", r#"{"page":"https://example.net/"}"#);
    assert_eq!(
        url_denial(&d),
        ("/page".to_owned(), Some("url_host_not_allowed".to_owned()))
    );
    // `url_policy = "none"` opts the whole tool out.
    let g = gate(&format!("{FETCH}url_policy = \"none\"\n"));
    let d = decide(
        &g,
        false,
        "fetch",
        r#"{"image_url":"http://169.254.169.254/"}"#,
    );
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
}

/// A config with a static resolver table and no authorization.
fn resolving(tool_extra: &str) -> String {
    format!(
        r#"
[authorization]
mode = "none"

[resolver]
mode = "static"
hosts = {{ "good.example.net" = ["93.184.216.34"], "inside.example.net" = ["10.0.0.7"], "*.rebind.example.net" = ["93.184.216.34", "169.254.169.254"] }}
{FETCH}{tool_extra}
"#
    )
}

fn from_config(toml: &str) -> Gate {
    Gate::from_config(&Config::parse(toml, "r.toml").unwrap()).unwrap()
}

#[test]
fn issue_31_hosts_are_resolved_by_default_with_a_resolver() {
    let policy =
        "url_policy = { arg = \"/page\", schemes = [\"https\"], hosts = [\"*.example.net\"] }\n";
    let config = Config::parse(&resolving(policy), "r.toml").unwrap();
    assert!(config.registry().get("fetch").unwrap().url_policies()[0].resolve());
    let g = from_config(&resolving(policy));
    for inline in [false, true] {
        // Resolves outside: allowed, and the addresses are pinned.
        let d = decide(
            &g,
            inline,
            "fetch",
            r#"{"page":"https://good.example.net/"}"#,
        );
        assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
        assert_eq!(d.pinned().len(), 1);
        assert_eq!(
            d.pinned()[0].addresses,
            ["93.184.216.34:443".parse().unwrap()]
        );
        // A name that resolves inside, under the tool's policy and the default one.
        for (args, at) in [
            (r#"{"page":"https://inside.example.net/"}"#, "/page"),
            (r#"{"page":"https://a.rebind.example.net/"}"#, "/page"),
            (
                r#"{"image_url":"https://inside.example.net/i.png"}"#,
                "/image_url",
            ),
            (r#"{"note":"http://x.rebind.example.net/"}"#, "/note"),
        ] {
            let d = decide(&g, inline, "fetch", args);
            assert_eq!(
                url_denial(&d),
                (at.to_owned(), Some("url_forbidden_address".to_owned())),
                "{args}"
            );
        }
        // A name the table does not hold: resolution is impossible, closed.
        let d = decide(
            &g,
            inline,
            "fetch",
            r#"{"image_url":"https://unknown.example.org/"}"#,
        );
        assert_eq!(
            url_denial(&d),
            (
                "/image_url".to_owned(),
                Some("url_resolve_failed".to_owned())
            )
        );
    }
    // `resolve = false` is the explicit opt-out of one policy.
    let off = "url_policy = { arg = \"/page\", schemes = [\"https\"], hosts = [\"*.example.net\"], resolve = false }\n";
    let config = Config::parse(&resolving(off), "r.toml").unwrap();
    assert!(!config.registry().get("fetch").unwrap().url_policies()[0].resolve());
    // Without a `[resolver]` table nothing resolves unless asked.
    let config = Config::parse(&format!("{FETCH}{policy}"), "n.toml").unwrap();
    assert!(!config.registry().get("fetch").unwrap().url_policies()[0].resolve());
}

#[test]
fn issue_31_the_resolver_table_is_checked_at_load() {
    for (table, what) in [
        ("mode = \"dns\"", "unknown mode"),
        (
            "mode = \"system\"\nhosts = { \"a.example\" = [\"192.0.2.1\"] }",
            "hosts with system",
        ),
        (
            "mode = \"static\"\nhosts = { \"a.example\" = [\"not-an-ip\"] }",
            "bad address",
        ),
        (
            "mode = \"static\"\nhosts = { \"A.Example\" = [\"192.0.2.1\"] }",
            "upper case",
        ),
        (
            "mode = \"static\"\nhosts = { \"a.example\" = [] }",
            "no address",
        ),
    ] {
        let err = Config::parse(&format!("[resolver]\n{table}\n"), "r.toml").unwrap_err();
        assert_eq!(err.code().as_str(), "invalid_resolver", "{what}: {err}");
    }
}
