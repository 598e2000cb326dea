//! The book's configuration reference (`docs/src/configuration.md`) is
//! generated from the config's types: this test fails when the committed
//! file differs from what the types give, so the reference cannot drift.
//! `TOOLGATE_BLESS=1 cargo test -p toolgate --test config_reference`
//! writes it anew.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::path::PathBuf;

fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/configuration.md")
}

#[test]
fn the_configuration_reference_is_what_the_types_give() {
    let generated = toolgate::config::reference::markdown().unwrap();
    let path = committed();
    if std::env::var_os("TOOLGATE_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/src/configuration.md differs from the config's types: regenerate it with \
         `TOOLGATE_BLESS=1 cargo test -p toolgate --test config_reference` and commit it"
    );
}

#[test]
fn every_table_and_key_of_the_file_is_in_the_reference() {
    let text = toolgate::config::reference::markdown().unwrap();
    for heading in [
        "## `[gate]`",
        "## `[store]`",
        "## `[authorization]`",
        "## `[approvals]`",
        "## `[server]`",
        "## `[[server.token]]`",
        "## `[proxy]`",
        "## `[mcp]`",
        "## `[[import]]`",
        "## `[[tool]]`",
        "## `[tool.resource]`",
        "## `[resolver]`",
    ] {
        assert!(text.contains(heading), "{heading} missing:\n{text}");
    }
    // The values of an enumerated key come from its type.
    assert!(text.contains("| `role` | one of \"agent\", \"approver\", \"admin\" | yes |"));
    assert!(text.contains("| `on_deny` | one of \"feedback\", \"error\" | no |"));
}
