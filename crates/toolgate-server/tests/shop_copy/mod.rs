//! The shop example copied into a temporary folder, with its store there
//! and three bearer tokens (one per role), for tests that edit or reload
//! the config.
#![allow(dead_code, reason = "each test file uses a part of it")]

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

pub const AGENT: &str = "agent-secret";
pub const APPROVER: &str = "approver-secret";
pub const ADMIN: &str = "admin-secret";

pub fn shop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop")
}

fn hex(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        let target = to.join(&name);
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if !name.to_string_lossy().starts_with("toolgate.db") {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Copies the shop example into `dir` with this test's `[server]` table;
/// returns the config file's path.
pub fn write_shop(dir: &Path) -> PathBuf {
    copy_dir(&shop(), dir);
    let path = dir.join("toolgate.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, with_test_server(&text, "", "", "")).unwrap();
    path
}

/// A shop config `text` with this test's `[server]` table (`server_extra`
/// in it), the three tokens (the agent's table with `agent_extra`), and
/// `extra` appended (tables of its own).
pub fn with_test_server(text: &str, server_extra: &str, agent_extra: &str, extra: &str) -> String {
    let start = text.find("[server]").unwrap();
    let end = text.find("[authorization]").unwrap();
    let mut text = format!(
        "{}[server]\nlisten = \"127.0.0.1:0\"\n{server_extra}\n\n{}",
        &text[..start],
        &text[end..]
    );
    for (token, role) in [(AGENT, "agent"), (APPROVER, "approver"), (ADMIN, "admin")] {
        text.push_str(&format!(
            "\n[[server.token]]\nname = \"{role}-1\"\nsha256 = \"{}\"\nrole = \"{role}\"\n",
            hex(token)
        ));
        if role == "agent" && !agent_extra.is_empty() {
            text.push_str(agent_extra);
            text.push('\n');
        }
    }
    text.push_str(extra);
    text
}
