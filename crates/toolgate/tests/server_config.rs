#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]
//! The `[server]` table's timeouts and connection cap: defaults, values,
//! and out-of-range values refused at their key.

use std::time::Duration;

use toolgate::config::{Config, ErrorCode};

const TOOL: &str = "[[tool]]\nname = \"a\"\nrisk = \"read\"\nschema = { type = \"object\", additionalProperties = false }\n";

fn parse(server: &str) -> Result<Config, toolgate::config::Error> {
    Config::parse(
        &format!("[server]\n{server}\n{TOOL}"),
        "/nowhere/toolgate.toml",
    )
}

#[test]
fn defaults() {
    let c = parse("").unwrap();
    let s = c.server();
    assert_eq!(s.header_timeout(), Duration::from_secs(10));
    assert_eq!(s.body_timeout(), Duration::from_secs(30));
    assert_eq!(s.max_connections(), 1024);
    assert_eq!(s.store_poll(), Duration::from_millis(200));
}

#[test]
fn values() {
    let c = parse(
        "header_timeout_seconds = 2\nbody_timeout_seconds = 3600\nmax_connections = 7\nstore_poll_ms = 30000",
    )
    .unwrap();
    let s = c.server();
    assert_eq!(s.header_timeout(), Duration::from_secs(2));
    assert_eq!(s.body_timeout(), Duration::from_secs(3600));
    assert_eq!(s.max_connections(), 7);
    assert_eq!(s.store_poll(), Duration::from_secs(30));
}

#[test]
fn out_of_range_is_refused_at_its_key() {
    for (text, key, line_col) in [
        (
            "header_timeout_seconds = 0",
            "header_timeout_seconds",
            ":2:1:",
        ),
        (
            "body_timeout_seconds = 3601",
            "body_timeout_seconds",
            ":2:1:",
        ),
        ("max_connections = 0", "max_connections", ":2:1:"),
        ("max_connections = 2000000", "max_connections", ":2:1:"),
        ("store_poll_ms = 9", "store_poll_ms", ":2:1:"),
        ("store_poll_ms = 60001", "store_poll_ms", ":2:1:"),
    ] {
        let err = parse(text).expect_err(text);
        assert_eq!(err.code(), ErrorCode::InvalidLimit, "{text}: {err}");
        let shown = err.to_string();
        assert!(shown.contains(key), "{text}: {shown}");
        assert!(shown.contains(line_col), "{text}: {shown}");
    }
    let err = parse("header_timeout_seconds = -1").expect_err("negative");
    assert!(err.to_string().contains(":2:"), "{err}");
    let err = parse("header_timeout = 5").expect_err("unknown key");
    assert!(err.to_string().contains("header_timeout"), "{err}");
}

#[test]
fn token_users_follow_the_one_user_name_rule() {
    let token = |users: &str| {
        parse(&format!(
            "[[server.token]]\nsha256 = \"{}\"\nrole = \"agent\"\nusers = {users}",
            "ab".repeat(32)
        ))
    };
    for good in [r#"["alice"]"#, r#"["Zoë Müller", "ci-*"]"#, r#"["*"]"#] {
        let c = token(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        assert_eq!(c.server().tokens().len(), 1, "{good}");
    }
    let long = format!(r#"["{}"]"#, "a".repeat(257));
    for (bad, why) in [
        (r#"[]"#, "empty"),
        (r#"[""]"#, "empty or blank"),
        (r#"["  "]"#, "empty or blank"),
        (r#"[" *"]"#, "empty or blank"),
        (r#"["al\nice"]"#, "control"),
        (r#"["ops\u0085*"]"#, "control"),
        (r#"["a*b"]"#, "only end"),
        (r#"["**"]"#, "only end"),
        (long.as_str(), "256 bytes"),
    ] {
        let err = token(bad).expect_err(bad);
        assert_eq!(err.code(), ErrorCode::InvalidValue, "{bad}: {err}");
        let shown = err.to_string();
        assert!(
            shown.contains("users") && shown.contains(why),
            "{bad}: {shown}"
        );
    }
}
