//! Issue 28, item 3: a Responses `function_call` with a `namespace` calls
//! another tool than the same name without one. A tool declared with
//! `namespace = "crm"` is called only by a call naming that namespace; a
//! tool declared without one is never called by a namespaced call.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use toolgate::config::Config;
use toolgate::{Context, Format, Gate, Verdict};

const CONFIG: &str = r#"
[authorization]
mode = "none"

[[tool]]
name = "lookup"
namespace = "crm"
risk = "read"
schema_json = '{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}'

[[tool]]
name = "search"
risk = "read"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}'
"#;

fn decide(item: &str) -> (Verdict, String, Vec<String>) {
    let config = Config::parse(CONFIG, "/nonexistent/t.toml").unwrap();
    let gate = Gate::from_config(&config).unwrap();
    let body =
        format!(r#"{{"id":"r","object":"response","status":"completed","output":[{item}]}}"#);
    let context = Context::new("u", "s", 1);
    let ds = gate.decide(body.as_bytes(), Format::OpenAiResponses, &context, &context);
    let d = &ds.decisions()[0];
    (
        d.verdict(),
        d.tool().to_owned(),
        d.reasons()
            .iter()
            .map(|r| r.code.as_str().to_owned())
            .collect(),
    )
}

fn call(namespace: Option<&str>, name: &str, args: &str) -> String {
    let ns = namespace.map_or(String::new(), |n| format!(r#""namespace":"{n}","#));
    format!(
        r#"{{"type":"function_call","id":"fc","call_id":"c",{ns}"name":"{name}","arguments":"{args}","status":"completed"}}"#
    )
}

#[test]
fn a_namespaced_tool_is_called_only_in_its_namespace() {
    let (verdict, tool, _) = decide(&call(Some("crm"), "lookup", r#"{\"id\":\"a\"}"#));
    assert_eq!((verdict, tool.as_str()), (Verdict::Allow, "crm.lookup"));
    for (ns, name) in [
        (None, "lookup"),
        (Some("billing"), "lookup"),
        (None, "crm.lookup"),
    ] {
        let (verdict, _, reasons) = decide(&call(ns, name, r#"{\"id\":\"a\"}"#));
        assert_eq!(verdict, Verdict::Deny, "{ns:?} {name}");
        assert_eq!(reasons, ["unknown_tool"], "{ns:?} {name}");
    }
}

#[test]
fn a_tool_without_a_namespace_is_not_called_by_a_namespaced_call() {
    let (verdict, _, _) = decide(&call(None, "search", r#"{\"q\":\"a\"}"#));
    assert_eq!(verdict, Verdict::Allow);
    let (verdict, tool, reasons) = decide(&call(Some("crm"), "search", r#"{\"q\":\"a\"}"#));
    assert_eq!(verdict, Verdict::Deny);
    assert_eq!(
        tool, "crm.search",
        "the audit names the tool the call named"
    );
    assert_eq!(reasons, ["unknown_tool"]);
}

#[test]
fn a_stream_whose_namespace_changes_is_refused() {
    let added = call(Some("crm"), "lookup", "");
    let done = call(None, "lookup", r#"{\"id\":\"a\"}"#);
    let stream = format!(
        "event: response.output_item.added\ndata: {{\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{added}}}\n\n\
         event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"item_id\":\"fc\",\"delta\":\"{{\\\"id\\\":\\\"a\\\"}}\"}}\n\n\
         event: response.output_item.done\ndata: {{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{done}}}\n\n\
         event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"status\":\"completed\",\"output\":[]}}}}\n\n"
    );
    let err = toolgate::adapter::read(stream.as_bytes(), Format::OpenAiResponses).unwrap_err();
    assert_eq!(err.code().as_str(), "stream_mismatch");
    assert!(
        err.pointer().ends_with("/item/namespace"),
        "{}",
        err.pointer()
    );
}

#[test]
fn a_namespace_is_named_like_a_tool() {
    for (ns, says) in [
        ("", "namespace must not be empty"),
        ("a.b", "must not contain `.`"),
    ] {
        let text = CONFIG.replace("namespace = \"crm\"", &format!("namespace = \"{ns}\""));
        let err = Config::parse(&text, "/nonexistent/t.toml").unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }
    // The same registered name twice: a namespaced tool and a plain one.
    let text = format!("{CONFIG}\n[[tool]]\nname = \"crm.lookup\"\nrisk = \"read\"\nschema_json = '{{\"type\":\"object\"}}'\n");
    let err = Config::parse(&text, "/nonexistent/t.toml").unwrap_err();
    assert_eq!(err.code().as_str(), "duplicate_tool");
}
