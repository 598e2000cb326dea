//! Helpers shared by toolgate's tests and benchmarks.
//!
//! The external corpora live beside the checkout, in `../shared` (CI lays it
//! out the same way). They are found from the workspace root, never from the
//! current directory, and a missing corpus is an error: a conformance test
//! that silently runs nothing proves nothing.
//!
//! Beside them: the shop example ([`shop_dir`], [`copy_shop`]), one way to
//! run the `toolgate` binary ([`Cli`]; from other crates' tests,
//! [`toolgate_bin`]), fresh PostgreSQL databases
//! ([`PgDatabase`]) on the server `TOOLGATE_TEST_POSTGRES_URL` names, a
//! PostgreSQL server of a test's own ([`PgServer`], with TLS), and a
//! deterministic generator for generated inputs ([`Rng`]), model
//! responses ([`openai_tool_calls`]), and an identity provider's keys and
//! tokens ([`jwt`]), and an authorization server and OpenID provider
//! ([`oauth`]), and a real OTLP receiver ([`OtlpReceiver`]).
//! [`schema_suite_copy`] says which copy of JSON-Schema-Test-Suite a
//! corpora folder holds.

mod bodies;
mod built;
mod cli;
mod flows;
pub mod jwt;
pub mod oauth;
mod otlp;
mod pg;
mod pg_server;
mod rng;
mod shop;
mod suites;

pub use crate::bodies::openai_tool_calls;
pub use crate::built::{run_toolgate, toolgate_bin, toolgate_path, TOOLGATE_BIN_ENV};
pub use crate::cli::{text, Cli};
pub use crate::flows::flow_config;
pub use crate::otlp::{otlp_spans, OtlpReceiver, OtlpTransport};
pub use crate::pg::{
    pg_admin, pg_base_url, with_dbname, PgDatabase, DEFAULT_POSTGRES_URL, POSTGRES_URL_ENV,
};
pub use crate::pg_server::{PgServer, ServerTls, PG_BIN_ENV};
pub use crate::rng::Rng;
pub use crate::shop::{copy_shop, examples_dir, shop_dir, shop_file};
pub use crate::suites::{
    schema_suite_copy, tree_digest, SchemaSuiteCopy, SCHEMA_SUITE_PINNED_DIGEST,
    SCHEMA_SUITE_REGISTRY_DIGEST,
};

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The workspace root: the nearest ancestor of `manifest_dir` whose
/// `Cargo.toml` declares `[workspace]`.
pub fn workspace_root(manifest_dir: &str) -> Result<PathBuf, String> {
    let mut dir = Some(Path::new(manifest_dir));
    while let Some(d) = dir {
        let manifest = d.join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            if text.lines().any(|l| l.trim() == "[workspace]") {
                return Ok(d.to_path_buf());
            }
        }
        dir = d.parent();
    }
    Err(format!("no workspace Cargo.toml above `{manifest_dir}`"))
}

/// `../shared` beside the workspace root. Fails when it is absent.
pub fn shared_dir(manifest_dir: &str) -> Result<PathBuf, String> {
    let shared = workspace_root(manifest_dir)?.join("../shared");
    if shared.is_dir() {
        Ok(shared)
    } else {
        Err(format!(
            "the shared corpora are missing: expected `{}` beside the checkout",
            shared.display()
        ))
    }
}

/// The environment variable naming a corpora folder laid out like
/// `../shared/corpora` (as `scripts/fetch-corpora.sh` writes it).
pub const CORPORA_ENV: &str = "TOOLGATE_CORPORA";

/// What to do when the corpora cannot be found.
pub const CORPORA_HELP: &str =
    "the conformance corpora (JSONTestSuite, JSON-Schema-Test-Suite) are \
needed: put `../shared/corpora` beside the checkout, or run `scripts/fetch-corpora.sh DIR` \
and set TOOLGATE_CORPORA=DIR (see the README, \"Running the tests\", and docs/src/testing.md)";

/// The corpora folder: where `TOOLGATE_CORPORA` points when it is set,
/// `../shared/corpora` beside the checkout otherwise. Fails, saying how to
/// get them, when neither is there.
pub fn corpora_dir(manifest_dir: &str) -> Result<PathBuf, String> {
    corpora_dir_with(manifest_dir, std::env::var_os(CORPORA_ENV).as_deref())
}

/// [`corpora_dir`] with the value of `TOOLGATE_CORPORA` given (`None`:
/// unset), so that a test can try each case whatever the environment holds.
pub fn corpora_dir_with(manifest_dir: &str, env: Option<&OsStr>) -> Result<PathBuf, String> {
    if let Some(dir) = env.filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.join("JSONTestSuite").is_dir() {
            Ok(dir)
        } else {
            Err(format!(
                "{CORPORA_ENV}=`{}` holds no `JSONTestSuite` folder: {CORPORA_HELP}",
                dir.display()
            ))
        };
    }
    let root = workspace_root(manifest_dir).map_err(|e| format!("{e}: {CORPORA_HELP}"))?;
    let dir = root.join("../shared/corpora");
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "no corpora at `{}` and {CORPORA_ENV} is not set: {CORPORA_HELP}",
            dir.display()
        ))
    }
}

/// The perf corpus (the benchmarks' tool-call arguments): `perf` in the
/// folder `TOOLGATE_CORPORA` names when it is set, `../shared/perf` beside
/// the checkout otherwise. Fails, saying where it was looked for and how to
/// provide it, when it is not there.
pub fn perf_dir(manifest_dir: &str) -> Result<PathBuf, String> {
    perf_dir_with(manifest_dir, std::env::var_os(CORPORA_ENV).as_deref())
}

/// [`perf_dir`] with the value of `TOOLGATE_CORPORA` given (`None`: unset).
pub fn perf_dir_with(manifest_dir: &str, env: Option<&OsStr>) -> Result<PathBuf, String> {
    const HELP: &str = "the perf corpus (tool-call arguments and their schemas, \
made by its generator) is needed: run `scripts/fetch-corpora.sh DIR` (it \
generates DIR/perf) and set TOOLGATE_CORPORA=DIR, or put `../shared/perf` \
beside the checkout";
    let dir = match env.filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("perf"),
        None => workspace_root(manifest_dir)
            .map_err(|e| format!("{e}: {HELP}"))?
            .join("../shared/perf"),
    };
    if dir.join("schemas").is_dir() {
        Ok(dir)
    } else {
        Err(format!("no perf corpus at `{}`: {HELP}", dir.display()))
    }
}

/// The files of a folder, sorted by name.
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?
            .path();
        if path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Whether every outside tool a test needs must be present
/// (`TOOLGATE_REQUIRE_EXTERNAL=1`, as CI sets it): then a test that cannot
/// run fails instead of skipping.
pub fn external_required() -> bool {
    std::env::var("TOOLGATE_REQUIRE_EXTERNAL").is_ok_and(|v| v == "1")
}

/// A test that cannot run here for want of an outside tool (a database, a
/// browser, `st`, `python3`, `chattr`): under
/// [`external_required`] it fails with `reason`; otherwise it says
/// `SKIPPED` with the test's name and `reason` on the terminal, past the
/// test harness's capture (so `cargo test` shows it beside the `ok`), and
/// the caller returns.
///
/// # Panics
///
/// Under `TOOLGATE_REQUIRE_EXTERNAL=1`, always: that is how CI fails.
#[expect(
    clippy::panic,
    reason = "failing the test is this function's job in CI"
)]
pub fn skip(reason: &str) {
    if external_required() {
        panic!("{reason} (TOOLGATE_REQUIRE_EXTERNAL=1: this test must run)");
    }
    skip_note(reason);
}

/// Says `SKIPPED` with the test's name and `reason` on the terminal, past
/// the harness's capture, whatever the environment: for a case this
/// machine cannot set up at all (a root process writes through read-only
/// file modes), which no install would change.
pub fn skip_note(reason: &str) {
    use std::io::Write as _;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    // Written to the stream, not through `eprintln!`, which the test
    // harness captures and shows only for failures.
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {reason}");
}
