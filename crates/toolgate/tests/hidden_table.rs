#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! One table of hidden characters: `toolgate::hidden`. This test scans the
//! workspace's sources (every crate's `src/` and the approvals page's
//! script) for another table of them: a hidden character written in a
//! pattern's range or alternatives (`'\u{200b}'..=`, `| '\u{feff}'`) or
//! as a range of a regular expression (`\u200B-\u200F`). Such a copy drifts: the
//! sanitizer once kept U+3164 that the page hid, and the MCP pins missed
//! U+FE00–U+FE0F.

use std::path::{Path, PathBuf};

use toolgate::hidden::is_hidden;

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "js") {
            out.push(path);
        }
    }
}

/// The code point of the hex digits at the start of `text` (up to
/// `max` of them), and how many digits there were.
fn hex_at(text: &str, max: usize) -> Option<(char, usize)> {
    let digits: String = text
        .chars()
        .take(max)
        .take_while(char::is_ascii_hexdigit)
        .collect();
    let c = char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?;
    Some((c, digits.len()))
}

/// The hidden characters `text` writes as a table entry, with their line.
fn table_entries(text: &str) -> Vec<(usize, char)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("\\u") {
            let before = rest[..at].trim_end();
            let after_u = &rest[at + 2..];
            let (c, used) = if let Some(braced) = after_u.strip_prefix('{') {
                match hex_at(braced, 6) {
                    Some((c, len)) if braced[len..].starts_with('}') => (c, len + 2),
                    _ => {
                        rest = after_u;
                        continue;
                    }
                }
            } else {
                match hex_at(after_u, 4) {
                    Some((c, 4)) => (c, 4),
                    _ => {
                        rest = after_u;
                        continue;
                    }
                }
            };
            let tail = &after_u[used..];
            let quoted = before.ends_with('\'') && tail.starts_with('\'');
            let after = if quoted { &tail[1..] } else { tail }.trim_start();
            let before = if quoted {
                before[..before.len() - 1].trim_end()
            } else {
                before
            };
            // A range, or one of several alternatives: a table. A single
            // character's own arm (`'\u{200D}' => …`, a rule of another
            // field such as IDNA's CONTEXTJ) is not.
            let pattern = quoted
                && (after.starts_with("..=")
                    || after.starts_with('|')
                    || before.ends_with('|')
                    || before.ends_with("..="));
            let range = !quoted && after.starts_with("-\\u");
            if is_hidden(c) && (pattern || range) {
                found.push((n + 1, c));
            }
            rest = tail;
        }
    }
    found
}

#[test]
fn no_other_table_of_hidden_characters() {
    let crates = crates_dir();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let krate = entry.unwrap().path();
        for sub in ["src", "ui"] {
            if krate.join(sub).is_dir() {
                sources(&krate.join(sub), &mut files);
            }
        }
    }
    let table = crates.join("toolgate/src/hidden.rs");
    assert!(files.contains(&table), "the scan reaches the table");
    let mut copies = Vec::new();
    for file in files.iter().filter(|f| **f != table) {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, c) in table_entries(&text) {
            copies.push(format!(
                "{}:{line}: U+{:04X}",
                file.strip_prefix(&crates).unwrap().display(),
                u32::from(c)
            ));
        }
    }
    assert!(
        copies.is_empty(),
        "hidden characters listed outside toolgate::hidden (use it instead):\n{}",
        copies.join("\n")
    );
}

#[test]
fn the_scan_finds_a_copy_in_each_spelling() {
    let rust = "match c {\n    '\\u{00ad}' | '\\u{061c}' => true,\n    '\\u{200b}'..='\\u{200f}' => true,\n    | '\\u{3164}'\n}";
    assert_eq!(
        table_entries(rust),
        [
            (2, '\u{AD}'),
            (2, '\u{61C}'),
            (3, '\u{200B}'),
            (3, '\u{200F}'),
            (4, '\u{3164}')
        ]
    );
    let js = "const HIDDEN = /[\\u0000-\\u0008\\u200B-\\u200F\\u3164]/g;";
    assert_eq!(table_entries(js), [(1, '\u{200B}')]);
    // A hidden character in a string (a test's input) is no table.
    assert!(table_entries("let s = \"a\\u{200b}b\";\nformat!(\"{s}\\u{200b}\")").is_empty());
    assert!(table_entries("for c in ['\\u{200B}', '\\u{FEFF}'] {}").is_empty());
    // One character's own rule is no table.
    assert!(table_entries("'\\u{200D}' => prev.is_some(),").is_empty());
}
