//! Issues 12 and 31: URL arguments a tool's schema declares are guarded,
//! by the tool's own `url_policy` or else by the default URL guard, in
//! `[[tool]]` entries and imported tool lists alike.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::path::{Path, PathBuf};

use toolgate::config::{import_file, Config, ErrorCode, ImportFormat};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn load(text: &str) -> Config {
    Config::parse(text, fixtures().join("toolgate.toml")).unwrap()
}

fn load_err(text: &str) -> (String, toolgate::config::Error) {
    let err = Config::parse(text, fixtures().join("toolgate.toml"))
        .expect_err("the config must be refused");
    (err.to_string(), err)
}

/// Issues 12 and 31: a URL argument (a string with a URI-like `format`)
/// anywhere in a tool's schema is guarded: by its `url_policy`, or else by
/// the default URL guard, which finds it through the schema even when
/// neither its name nor its value looks like a URL. `url_policy = "none"`
/// is the named opt-out of the whole tool.
#[test]
fn url_arguments_are_guarded_by_default() {
    let tool = "[[tool]]\nname = \"fetch\"\nrisk = \"read\"\n";
    // A URI the schema's `format` admits with no network host: neither the
    // name nor the value looks like a URL, only the schema says it is one.
    let v = r#""urn:x:y""#;
    // (what, schema_json, arguments, the denied pointer, its policy pattern)
    let cases = [
        (
            "top level uri",
            r#"{"type":"object","properties":{"url":{"type":"string","format":"uri"}}}"#,
            format!(r#"{{"url":{v}}}"#),
            "/url",
            "/url",
        ),
        (
            "nested iri",
            r#"{"type":"object","properties":{"page":{"type":"object","properties":{"href":{"type":"string","format":"iri"}}}}}"#,
            format!(r#"{{"page":{{"href":{v}}}}}"#),
            "/page/href",
            "/page/href",
        ),
        (
            "array items",
            r#"{"type":"object","properties":{"urls":{"type":"array","items":{"type":"string","format":"uri-reference"}}}}"#,
            format!(r#"{{"urls":["https://example.net/",{v}]}}"#),
            "/urls/1",
            "/urls/*",
        ),
        (
            "through $defs and $ref",
            r##"{"type":"object","properties":{"go":{"$ref":"#/$defs/Link"}},"$defs":{"Link":{"type":"string","format":"iri-reference"}}}"##,
            format!(r#"{{"go":{v}}}"#),
            "/go",
            "/go",
        ),
        (
            "in an anyOf branch",
            r#"{"type":"object","properties":{"next":{"anyOf":[{"type":"null"},{"type":"string","format":"uri"}]}}}"#,
            format!(r#"{{"next":{v}}}"#),
            "/next",
            "/next",
        ),
        (
            "in a root anyOf branch's properties",
            r#"{"type":"object","anyOf":[{"properties":{"target":{"type":"string","format":"uri"}}}]}"#,
            format!(r#"{{"target":{v}}}"#),
            "/target",
            "/target",
        ),
        (
            "a map's values",
            r#"{"type":"object","properties":{"hooks":{"type":"object","additionalProperties":{"type":"string","format":"uri"}}}}"#,
            format!(r#"{{"hooks":{{"a":{v}}}}}"#),
            "/hooks/a",
            "/hooks/*",
        ),
    ];
    let decide = |config: &Config, args: &str| {
        let gate = toolgate::Gate::builder(config.registry().clone())
            .authorizer(toolgate::danger::NoAuthorization)
            .build()
            .unwrap();
        let body = format!(
            r#"{{"type":"message","role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"fetch","input":{args}}}],"stop_reason":"tool_use"}}"#
        );
        let ctx = toolgate::Context::new("alice", "s-1", 1);
        gate.decide(body.as_bytes(), toolgate::Format::Anthropic, &ctx, &ctx)
            .into_decisions()
            .remove(0)
    };
    for (what, schema, args, at, pattern) in &cases {
        // Loads with no policy; the default guard denies at the place.
        let config = load(&format!("{tool}schema_json = '{schema}'\n"));
        let d = decide(&config, args);
        assert_eq!(d.verdict(), toolgate::Verdict::Deny, "{what}: {d:?}");
        let r = &d.reasons()[0];
        assert_eq!(
            (r.code.as_str(), r.pointer.as_str(), r.detail),
            ("url_policy", *at, Some("url_scheme")),
            "{what}"
        );
        // The tool's own policy replaces it, where a pointer names it.
        let text = format!(
            "{tool}schema_json = '{schema}'\nurl_policy = {{ arg = \"{pattern}\", hosts = [\"example.com\"] }}\n"
        );
        let config = load(&text);
        assert_eq!(
            config.registry().get("fetch").unwrap().url_policies()[0].arg(),
            *pattern
        );
        // The named opt-out loads; nothing guards the URLs then.
        let config = load(&format!(
            "{tool}schema_json = '{schema}'\nurl_policy = \"none\"\n"
        ));
        let fetch = config.registry().get("fetch").unwrap();
        assert!(fetch.url_policies().is_empty() && !fetch.url_default_guard());
        assert_eq!(
            decide(&config, args).verdict(),
            toolgate::Verdict::Allow,
            "{what}"
        );
    }
    // Any other string is not an opt-out.
    let (shown, err) = load_err(&format!(
        "{tool}schema_json = '{}'\nurl_policy = \"off\"\n",
        cases[0].1
    ));
    assert_eq!(err.code(), ErrorCode::InvalidValue, "{shown}");
}

/// An imported tool with a URL argument loads under the default URL guard;
/// a `[[tool]]` entry of its name may give it its own `url_policy`.
#[test]
fn imported_url_arguments_are_guarded_by_default() {
    let dir = std::env::temp_dir().join(format!("toolgate-url-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        r#"{"tools":[{"name":"browse","inputSchema":{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}}]}"#,
    )
    .unwrap();
    let head = "import = [{ path = \"mcp.json\", format = \"mcp\" }]\n";
    let config = Config::parse(head, dir.join("toolgate.toml")).unwrap();
    let browse = config.registry().get("browse").unwrap();
    assert!(browse.url_policies().is_empty() && browse.url_default_guard());
    let guarded = format!(
        "{head}[[tool]]\nname = \"browse\"\nrisk = \"read\"\nurl_policy = {{ arg = \"/url\", hosts = [\"*.example.com\"] }}\n"
    );
    let config = Config::parse(&guarded, dir.join("toolgate.toml")).unwrap();
    assert_eq!(
        config
            .registry()
            .get("browse")
            .unwrap()
            .url_policies()
            .len(),
        1
    );
    let registry = import_file(dir.join("mcp.json"), ImportFormat::Mcp).unwrap();
    assert!(registry.get("browse").unwrap().url_default_guard());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `*` in a URL policy's `arg` guards every item of an array: each URL in
/// the list is checked when the gate decides, and a bad one is reported at
/// its own pointer.
#[test]
fn url_policies_guard_every_item_of_a_list() {
    let text = r#"
[authorization]
mode = "none"

[[tool]]
name = "fetch_all"
risk = "read"
schema_json = '{"type":"object","properties":{"pages":{"type":"array","maxItems":8,"items":{"type":"object","properties":{"href":{"type":"string","format":"uri"}},"required":["href"]}}},"required":["pages"]}'
url_policy = { arg = "/pages/*/href", hosts = ["*.example.com"] }
"#;
    let config = load(text);
    let gate = toolgate::Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let decide = |args: &str| {
        let args = toolgate_json::canonical::to_string(&toolgate_json::Value::from(args));
        let body = format!(
            r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","tool_calls":[{{"id":"c","type":"function","function":{{"name":"fetch_all","arguments":{args}}}}}]}}}}]}}"#
        );
        let ctx = toolgate::Context::new("alice", "s", 1);
        gate.decide(body.as_bytes(), toolgate::Format::Auto, &ctx, &ctx)
            .into_decisions()
            .remove(0)
    };
    let d = decide(
        r#"{"pages":[{"href":"https://a.example.com/"},{"href":"https://b.example.com/x"}]}"#,
    );
    assert_eq!(d.verdict(), toolgate::Verdict::Allow, "{d:?}");
    let d = decide(
        r#"{"pages":[{"href":"https://a.example.com/"},{"href":"http://169.254.169.254/latest/meta-data"}]}"#,
    );
    assert_eq!(d.verdict(), toolgate::Verdict::Deny);
    assert_eq!(d.reasons()[0].code.as_str(), "url_policy");
    assert_eq!(d.reasons()[0].pointer, "/pages/1/href");
    // A `*` where the schema declares no items is refused at load.
    let (shown, err) = load_err(
        "[[tool]]\nname = \"f\"\nrisk = \"read\"\nschema_json = '{\"type\":\"object\",\"properties\":{\"u\":{\"type\":\"string\",\"format\":\"uri\"}}}'\nurl_policy = { arg = \"/u/*\", hosts = [\"example.com\"] }\n",
    );
    assert_eq!(err.code(), ErrorCode::UndeclaredProperty, "{shown}");
    // resource and redact take no `*`.
    let (shown, err) = load_err(
        "[[tool]]\nname = \"f\"\nrisk = \"read\"\nschema_json = '{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}'\nredact = [\"/l/*\"]\n",
    );
    assert_eq!(err.code(), ErrorCode::UndeclaredProperty, "{shown}");
}
