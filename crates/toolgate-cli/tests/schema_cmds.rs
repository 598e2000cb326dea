//! Black-box tests of `toolgate validate` and `toolgate lint`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod cli_support;

use std::path::PathBuf;

use cli_support::toolgate_reading;
use toolgate_testkit::text;

fn example(name: &str) -> String {
    let root = toolgate_testkit::workspace_root(env!("CARGO_MANIFEST_DIR")).unwrap();
    root.join("examples")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

fn temp(name: &str, content: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-schema-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn valid_instance_exits_0() {
    let schema = example("schemas/refund.json");
    let out = toolgate_reading(
        &["validate", "--schema", &schema, "-"],
        br#"{"action":"refund","order_id":"A-1234","amount":300,"notify_customer":true}"#,
    );
    assert_eq!(text(&out.stdout), "-: valid\n");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn every_violation_is_listed_without_values() {
    let schema = example("schemas/refund.json");
    let out = toolgate_reading(
        &["validate", "--schema", &schema, "-"],
        br#"{"action":"refund","order_id":"A-1234\n","amount":"1200","notify_customer":"yes","is_admin":true}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    for expected in [
        "pattern at `/order_id`",
        "type_mismatch at `/amount`",
        "type_mismatch at `/notify_customer`",
        "unknown_property at `/is_admin`",
        "[keyword `/properties/amount/type`]",
    ] {
        assert!(stdout.contains(expected), "missing {expected}: {stdout}");
    }
    assert!(
        !stdout.contains("1200") && !stdout.contains("yes"),
        "{stdout}"
    );
}

#[test]
fn strict_is_the_default_and_standard_follows_the_spec() {
    let schema = example("schemas/refund.json");
    let float = br#"{"action":"refund","order_id":"A-1234","amount":300.0,"notify_customer":true}"#;
    let strict = toolgate_reading(&["validate", "--schema", &schema, "-"], float);
    assert_eq!(strict.status.code(), Some(1));
    assert!(text(&strict.stdout).contains("type_mismatch at `/amount`"));
    let standard = toolgate_reading(&["validate", "--standard", "--schema", &schema, "-"], float);
    assert_eq!(
        standard.status.code(),
        Some(0),
        "{}",
        text(&standard.stdout)
    );
}

#[test]
fn json_output_is_one_object_per_instance() {
    let schema = example("schemas/refund.json");
    let bad = temp("dup.json", br#"{"amount":1,"amount":2}"#);
    let out = toolgate_reading(
        &[
            "validate",
            "--json",
            "--schema",
            &schema,
            "-",
            bad.to_str().unwrap(),
        ],
        br#"{"action":"refund","order_id":"A-1234","amount":0,"notify_customer":true}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    let first = toolgate_json::from_str(lines[0]).unwrap();
    assert_eq!(
        first.pointer("/valid"),
        Some(&toolgate_json::Value::Bool(false))
    );
    assert_eq!(
        first.pointer("/errors/0/code").and_then(|v| v.as_str()),
        Some("out_of_range")
    );
    assert_eq!(
        first
            .pointer("/errors/0/instance_pointer")
            .and_then(|v| v.as_str()),
        Some("/amount")
    );
    let second = toolgate_json::from_str(lines[1]).unwrap();
    assert_eq!(
        second.pointer("/parse_error/code").and_then(|v| v.as_str()),
        Some("duplicate_key")
    );
}

#[test]
fn a_schema_that_does_not_compile_exits_2() {
    let schema = temp("bad_schema.json", br#"{"type":"object","propertiez":{}}"#);
    let out = toolgate_reading(
        &["validate", "--schema", schema.to_str().unwrap(), "-"],
        b"{}",
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("does not compile") && stderr.contains("propertiez"),
        "{stderr}"
    );
    let schema = temp("dup_schema.json", br#"{"type":"object","type":"string"}"#);
    let out = toolgate_reading(
        &["validate", "--schema", schema.to_str().unwrap(), "-"],
        b"{}",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("duplicate_key"));
}

#[test]
fn lint_flags_loose_schemas() {
    let loose = temp(
        "loose.json",
        br#"{"type":"object","properties":{"n":{"type":"integer"},"url":{"type":"string","format":"uri"}}}"#,
    );
    let out = toolgate_reading(&["lint", loose.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("at `/properties/n`"), "{stdout}");
    assert!(stdout.contains("at `/properties/url`"), "{stdout}");
    let tight = example("schemas/refund.json");
    let out = toolgate_reading(&["lint", &tight], b"");
    assert_eq!(text(&out.stdout), format!("{tight}: no findings\n"));
    assert_eq!(out.status.code(), Some(0));
    let out = toolgate_reading(&["lint", "/nonexistent/schema.json"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn numbers_are_validated_as_the_tool_receives_them() {
    // Issue 31: a fraction longer than its double holds is refused with its
    // own code (it would be handed on as 5000); bounds judge the rest.
    let schema = temp(
        "amount.json",
        br#"{"type":"object","properties":{"amount":{"type":"number","exclusiveMaximum":5000},"rate":{"type":"number","exclusiveMaximum":0.30000000000000004}}}"#,
    );
    let schema = schema.to_str().unwrap();
    for (instance, code) in [
        (
            &br#"{"amount": 4999.99999999999999999}"#[..],
            "number_too_precise at `/amount`",
        ),
        (
            br#"{"rate": 0.300000000000000035}"#,
            "number_too_precise at `/rate`",
        ),
        (
            br#"{"rate": 0.30000000000000001}"#,
            "number_too_precise at `/rate`",
        ),
        (br#"{"amount": 5000}"#, "out_of_range at `/amount`"),
    ] {
        let out = toolgate_reading(&["validate", "--schema", schema, "-"], instance);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        assert!(text(&out.stdout).contains(code), "{}", text(&out.stdout));
        assert!(
            !text(&out.stdout).contains("4999.9"),
            "{}",
            text(&out.stdout)
        );
    }
    for instance in [&br#"{"amount": 4999.99999999999}"#[..], br#"{"rate": 0.3}"#] {
        let out = toolgate_reading(&["validate", "--schema", schema, "-"], instance);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    }
}

/// Issue 12: lint fails closed. A document the gate would not take as a
/// tool's schema exits 2 with the compile error (code and pointer), never
/// "no findings".
#[test]
fn lint_refuses_what_the_gate_would_refuse() {
    let cases: [(&str, &[u8], &[&str]); 7] = [
        ("array.json", b"[1,2,3]", &["does not compile"]),
        ("string.json", br#""hello""#, &["does not compile"]),
        (
            "openai_tools.json",
            br#"[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]"#,
            &["does not compile"],
        ),
        (
            "typo.json",
            br#"{"type":"object","properties":{"n":{"type":"integer","maximun":5}},"required":["n"]}"#,
            &["unknown_keyword", "`/properties/n/maximun`"],
        ),
        (
            "strin.json",
            br#"{"type":"object","properties":{"s":{"type":"strin"}},"required":["s"]}"#,
            &["invalid_keyword", "`/properties/s/type`"],
        ),
        (
            "draft7.json",
            br#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{},"additionalProperties":false}"#,
            &["unsupported_draft", "`/$schema`"],
        ),
        (
            "not_object.json",
            br#"{"type":"string","maxLength":3}"#,
            &["not a tool's schema"],
        ),
    ];
    for (name, content, says) in cases {
        let path = temp(name, content);
        let out = toolgate_reading(&["lint", path.to_str().unwrap()], b"");
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(text(&out.stdout).is_empty(), "{name}: no findings line");
        for s in says {
            assert!(stderr.contains(s), "{name}: {s}: {stderr}");
        }
    }
    // One bad schema among good ones: the good ones are still linted.
    let bad = temp("typo2.json", br#"{"type":"object","maximun":1}"#);
    let tight = example("schemas/refund.json");
    let out = toolgate_reading(&["lint", bad.to_str().unwrap(), &tight], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), format!("{tight}: no findings\n"));
}

/// Where strict mode closes an object, `open_object` is not reported; where
/// the schema opens it, it is.
#[test]
fn lint_does_not_flag_objects_strict_mode_closes() {
    let closed = temp(
        "closed.json",
        br#"{"type":"object","properties":{"q":{"type":"string","maxLength":9}},"required":["q"]}"#,
    );
    let out = toolgate_reading(&["lint", closed.to_str().unwrap()], b"");
    assert_eq!(
        text(&out.stdout),
        format!("{}: no findings\n", closed.display())
    );
    assert_eq!(out.status.code(), Some(0));
    let open = temp(
        "open.json",
        br#"{"type":"object","properties":{"q":{"type":"string","maxLength":9}},"required":["q"],"additionalProperties":true}"#,
    );
    let out = toolgate_reading(&["lint", open.to_str().unwrap()], b"");
    assert!(text(&out.stdout).contains("open_object at ``"));
    assert_eq!(out.status.code(), Some(1));
}

/// `toolgate lint --config`: the config must load (an unguarded URL
/// argument exits 2), each tool's schema is linted, and a URL policy that
/// does not resolve hosts is flagged (DNS rebinding).
#[test]
fn lint_config_flags_url_policies_that_do_not_resolve() {
    let dir = std::env::temp_dir().join(format!("toolgate-lint-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = r#"{"type":"object","properties":{"url":{"type":"string","format":"uri","maxLength":200}},"required":["url"],"additionalProperties":false}"#;
    let write = |name: &str, policy: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "[[tool]]\nname = \"fetch\"\nrisk = \"read\"\nschema_json = '{schema}'\n{policy}"
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_owned()
    };
    let unresolved = write(
        "unresolved.toml",
        "url_policy = { arg = \"/url\", hosts = [\"*.example.com\"] }\n",
    );
    let out = toolgate_reading(&["lint", "--config", &unresolved], b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("tool `fetch`: url_not_resolved at `/properties/url`")
            && stdout.contains("DNS rebinding"),
        "{stdout}"
    );
    let resolved = write(
        "resolved.toml",
        "url_policy = { arg = \"/url\", hosts = [\"*.example.com\"], resolve = true }\n",
    );
    // Without `[authorization]` every call is denied (`tool_never_permitted`):
    // accepted here, the URL policy is what this test is about.
    let out = toolgate_reading(
        &[
            "lint",
            "--config",
            &resolved,
            "--allow",
            "tool_never_permitted",
        ],
        b"",
    );
    let stdout = text(&out.stdout);
    assert!(!stdout.contains("url_not_resolved"), "{stdout}");
    assert!(
        stdout.contains("tool `fetch`: tool_never_permitted [allowed]"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // With no policy the tool loads under the default URL guard; lint says
    // that only the default guard checks the argument.
    let unguarded = write("unguarded.toml", "");
    let out = toolgate_reading(&["lint", "--config", &unguarded], b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("tool `fetch`: url_unguarded at `/properties/url`")
            && stdout.contains("only the default URL guard checks it"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
