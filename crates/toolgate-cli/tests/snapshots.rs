//! Snapshot tests of the `toolgate` binary's output over the examples:
//! `check --no-store` (human table and `--json`) over each shop response,
//! `json check` over `examples/json`, `validate` and `lint` with
//! `examples/schemas/refund.json`. Each snapshot holds the command line, the
//! exit code, stdout and stderr, run from the workspace root with relative
//! paths (the root is replaced by `[ROOT]` should it appear). `--no-store`
//! keeps approval ids and times out of the output.
//!
//! Snapshots live in `tests/snapshots/`; regenerate them with
//! `INSTA_UPDATE=always cargo test -p toolgate-cli --test snapshots` and
//! review the diff.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

use std::path::{Path, PathBuf};

use cli_support::toolgate_cli;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The files of an example directory, relative to the root, sorted.
fn files(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{dir} is empty");
    names.into_iter().map(|n| format!("{dir}/{n}")).collect()
}

/// Runs `toolgate ARGS` from the root; the snapshot text.
fn run(args: &[&str]) -> String {
    let root = root();
    let output = toolgate_cli().current_dir(&root).args(args).run();
    let normalize = |bytes: &[u8]| {
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .replace(&root.display().to_string(), "[ROOT]")
            .replace('\\', "/")
    };
    format!(
        "$ toolgate {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        output
            .status
            .code()
            .map_or_else(|| "signal".to_owned(), |c| c.to_string()),
        normalize(&output.stdout),
        normalize(&output.stderr),
    )
}

/// The snapshot name for an example file: its file name, dots as dashes.
fn name(prefix: &str, file: &str) -> String {
    let base = Path::new(file).file_name().unwrap().to_str().unwrap();
    format!("{prefix}__{}", base.replace('.', "_"))
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

const CHECK: [&str; 6] = [
    "check",
    "--no-store",
    "--config",
    "examples/shop/toolgate.toml",
    "--context",
    "examples/shop/context.json",
];

#[test]
fn check_each_shop_response_as_a_table() {
    settings().bind(|| {
        for file in files("examples/shop/responses") {
            let mut args = CHECK.to_vec();
            args.push(&file);
            insta::assert_snapshot!(name("check", &file), run(&args));
        }
    });
}

#[test]
fn check_each_shop_response_as_json() {
    settings().bind(|| {
        for file in files("examples/shop/responses") {
            let mut args = CHECK.to_vec();
            args.extend(["--json", &file]);
            insta::assert_snapshot!(name("check_json", &file), run(&args));
        }
    });
}

#[test]
fn json_check_each_example() {
    settings().bind(|| {
        for file in files("examples/json") {
            insta::assert_snapshot!(name("json_check", &file), run(&["json", "check", &file]));
        }
    });
}

#[test]
fn validate_the_examples_against_the_refund_schema() {
    let instances = files("examples/json");
    let mut args = vec!["validate", "--schema", "examples/schemas/refund.json"];
    args.extend(instances.iter().map(String::as_str));
    settings().bind(|| {
        insta::assert_snapshot!("validate_refund", run(&args));
        let mut json = args.clone();
        json.insert(1, "--json");
        insta::assert_snapshot!("validate_refund_json", run(&json));
    });
}

#[test]
fn lint_the_refund_schema() {
    settings().bind(|| {
        insta::assert_snapshot!(
            "lint_refund",
            run(&["lint", "examples/schemas/refund.json"])
        );
    });
}
