//! The book under `docs/` and the README: every link between chapters
//! lands on a file and a heading, every chapter is in the table of
//! contents, and the walkthroughs' marked blocks run as pasted and print
//! what the text promises (see `book_support/runner.rs` for the markers).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

mod book_support;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use book_support::markdown::{anchors, links};
use book_support::runner::{copy_tree, run, steps};
use book_support::{chapters, root};

/// A chapter's text with `{{#include FILE}}` lines replaced by the file,
/// as mdBook renders it.
fn expanded(src: &Path, text: &str) -> String {
    text.lines()
        .map(|line| {
            match line
                .trim()
                .strip_prefix("{{#include ")
                .and_then(|r| r.strip_suffix("}}"))
            {
                Some(file) => std::fs::read_to_string(src.join(file.trim()))
                    .unwrap_or_else(|e| panic!("the included `{file}`: {e}")),
                None => format!("{line}\n"),
            }
        })
        .collect()
}

/// `base/target` without `.` and `..`; `None` when it climbs above `base`'s
/// root.
fn resolve(base: &Path, target: &str) -> Option<PathBuf> {
    let joined = base.join(target);
    let mut out: Vec<Component> = Vec::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop()?;
            }
            other => out.push(other),
        }
    }
    Some(out.iter().collect())
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// Checks the links of one Markdown file at `dir` (its folder); `inside`
/// is the folder a link must not leave.
fn check_links(name: &str, text: &str, dir: &Path, inside: &Path, broken: &mut Vec<String>) {
    for (line, target) in links(text) {
        if is_external(&target) {
            continue;
        }
        let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
        let (path, file_text) = if file.is_empty() {
            (dir.join(name), text.to_owned())
        } else {
            let Some(path) = resolve(dir, file).filter(|p| p.starts_with(inside)) else {
                broken.push(format!(
                    "{name}:{line}: `{target}` leaves `{}`",
                    inside.display()
                ));
                continue;
            };
            if !path.exists() {
                broken.push(format!("{name}:{line}: `{target}`: no such file"));
                continue;
            }
            let text = if path.extension().is_some_and(|x| x == "md") {
                std::fs::read_to_string(&path).unwrap_or_default()
            } else {
                String::new()
            };
            (path, text)
        };
        if !anchor.is_empty() && !anchors(&file_text).iter().any(|a| a == anchor) {
            broken.push(format!(
                "{name}:{line}: `{target}`: `{}` has no heading `#{anchor}`",
                path.display()
            ));
        }
    }
}

#[test]
fn every_link_of_the_book_lands_on_a_chapter_and_heading() {
    let src = root().join("docs/src");
    let mut broken = Vec::new();
    for (name, text) in chapters() {
        check_links(&name, &expanded(&src, &text), &src, &src, &mut broken);
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_link_of_the_readme_lands_on_a_file_and_heading() {
    let root = root();
    let text = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut broken = Vec::new();
    check_links("README.md", &text, &root, &root, &mut broken);
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The README points into the book rather than holding the manual.
    assert!(text.contains("](docs/src/quickstart.md)"));
    assert!(
        text.lines().count() <= 250,
        "the README is a summary, not the manual"
    );
}

#[test]
fn every_chapter_is_in_the_table_of_contents() {
    let all = chapters();
    let summary = &all.iter().find(|(n, _)| n == "SUMMARY.md").unwrap().1;
    let listed: Vec<String> = links(summary).into_iter().map(|(_, t)| t).collect();
    let missing: Vec<&str> = all
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| *n != "SUMMARY.md" && !listed.iter().any(|t| t == n))
        .collect();
    assert!(
        missing.is_empty(),
        "chapters SUMMARY.md does not list: {missing:?}"
    );
}

fn toolgate_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_toolgate"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A `python3` with the official MCP SDK: `TOOLGATE_MCP_PYTHON`, else the
/// workspace's `target/py/venv`; the folder that holds it.
fn python_mcp_dir() -> Result<PathBuf, String> {
    let python = std::env::var_os("TOOLGATE_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/py/venv/bin/python"));
    let dir = python.parent().map(Path::to_path_buf).unwrap_or_default();
    let works = std::process::Command::new(dir.join("python3"))
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        Ok(dir)
    } else {
        Err(format!(
            "no python3 with the MCP SDK beside `{}` (TOOLGATE_MCP_PYTHON)",
            python.display()
        ))
    }
}

/// The folders the chapter's blocks need first on the `PATH`: this build's
/// `toolgate`, then what their `needs=` name; or why one is missing.
fn path_for(steps: &[book_support::runner::Step]) -> Result<Vec<PathBuf>, String> {
    let mut dirs = vec![toolgate_dir()];
    if steps
        .iter()
        .any(|s| s.needs.iter().any(|n| n == "python-mcp"))
    {
        dirs.push(python_mcp_dir()?);
    }
    Ok(dirs)
}

/// Runs the marked blocks of `text` in a scratch copy of `examples/`; a
/// chapter whose blocks need what this machine lacks is skipped (a failure
/// under `TOOLGATE_REQUIRE_EXTERNAL=1`).
fn run_text(name: &str, text: &str, deadline: Duration) -> Vec<String> {
    let steps = steps(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let dirs = match path_for(&steps) {
        Ok(dirs) => dirs,
        Err(why) => {
            toolgate_testkit::skip(&format!("{name}: {why}"));
            return Vec::new();
        }
    };
    let work = tempfile::tempdir().unwrap();
    copy_tree(&root().join("examples"), &work.path().join("examples")).unwrap();
    run(name, &steps, work.path(), &dirs, deadline)
}

#[test]
fn the_walkthroughs_run_as_pasted_and_print_what_they_promise() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (name, text) in chapters() {
        if steps(&text)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .is_empty()
        {
            continue;
        }
        ran += 1;
        failures.extend(run_text(&name, &text, Duration::from_secs(300)));
    }
    assert!(ran >= 3, "only {ran} chapters have marked blocks");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_runner_catches_a_wait_pasted_before_what_releases_it() {
    let page = "<!-- book-run -->\n```sh\nmkfifo approved\n\
                (read -r _ < approved; echo released) &\nwait\necho yes > approved\n```\n";
    let failures = run_text("trap.md", page, Duration::from_secs(3));
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("trap.md:2: the block did not end within 3 s"),
        "{failures:?}"
    );
}

#[test]
fn the_runner_catches_a_server_used_before_it_listens() {
    let server = "(sleep 1; exec python3 -m http.server 18765 --bind 127.0.0.1) \
                  >/dev/null 2>&1 &\n";
    let trap = format!(
        "<!-- book-run -->\n```sh\n{server}curl -sS -o /dev/null http://127.0.0.1:18765/\n```\n"
    );
    let failures = run_text("trap.md", &trap, Duration::from_secs(60));
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("trap.md:2: the block ended with status 7, the text promises 0"),
        "{failures:?}"
    );
    // The fix the book uses: the first request waits until the server listens.
    let fixed = format!(
        "<!-- book-run -->\n```sh\n{server}curl -sS -o /dev/null --retry-connrefused \
         --retry 30 --retry-delay 1 http://127.0.0.1:18765/\necho up\n```\n\
         <!-- book-output -->\n```text\nup\n```\n"
    );
    let failures = run_text("fixed.md", &fixed, Duration::from_secs(60));
    assert!(failures.is_empty(), "{failures:?}");
}

#[test]
fn the_runner_compares_the_output_and_the_status() {
    let page = "<!-- book-run -->\n```sh\nGREETING=hello\necho \"$GREETING\"\n```\n\
                <!-- book-output -->\n```text\nhello\n```\n\
                <!-- book-run exit=1 -->\n```sh\necho \"$GREETING again\"\nfalse\n```\n\
                <!-- book-output -->\n```text\ngoodbye\n```\n\
                <!-- book-run -->\n```sh\ntoolgate --version\n```\n\
                <!-- book-output -->\n```text\ntoolgate [..]\n```\n";
    let failures = run_text("page.md", page, Duration::from_secs(60));
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("page.md:16: the block at line 11 printed\nhello again\n"),
        "{failures:?}"
    );
}

#[test]
fn the_book_calls_toolgate_by_name_once_the_quickstart_installs_it() {
    let install = "cargo install --locked --path crates/toolgate-cli";
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(install),
        "the README's quickstart installs it"
    );
    let mut by_cargo = Vec::new();
    for (name, text) in chapters() {
        if name == "quickstart.md" {
            assert!(text.contains(install), "the quickstart installs it");
        }
        for (i, line) in text.lines().enumerate() {
            if line.contains("cargo run") && line.contains("toolgate-cli") {
                by_cargo.push(format!("{name}:{}", i + 1));
            }
        }
    }
    assert!(
        by_cargo.is_empty(),
        "blocks that run toolgate through cargo: {by_cargo:?}"
    );
}

#[test]
fn the_link_check_reports_a_missing_chapter_heading_or_exit() {
    let src = root().join("docs/src");
    let text = "# Here\n[ok](#here) [ok](concepts.md#verdicts) [gone](nowhere.md)\n\
                [bad](concepts.md#no-such-heading) [out](../../README.md) [self](#nope)\n";
    let mut broken = Vec::new();
    check_links("page.md", text, &src, &src, &mut broken);
    assert_eq!(broken.len(), 4, "{broken:#?}");
    assert!(broken[0].contains("`nowhere.md`: no such file"));
    assert!(broken[1].contains("has no heading `#no-such-heading`"));
    assert!(broken[2].contains("leaves"));
    assert!(broken[3].contains("has no heading `#nope`"));
}
