//! What the book's tests share: reading its Markdown, and running its
//! walkthroughs.
#![allow(dead_code, reason = "each test file uses a part of it")]

pub mod markdown;
pub mod runner;

use std::path::PathBuf;

/// The workspace's root folder.
pub fn root() -> PathBuf {
    toolgate_testkit::workspace_root(env!("CARGO_MANIFEST_DIR")).expect("the workspace root")
}

/// The book's chapters (`docs/src/*.md`), by file name, sorted.
pub fn chapters() -> Vec<(String, String)> {
    let src = root().join("docs/src");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&src)
        .expect("docs/src")
        .map(|e| e.expect("an entry of docs/src").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("a chapter"))
        })
        .collect();
    out.sort();
    out
}
