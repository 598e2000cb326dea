//! The `toolgate` binary for the black-box tests of crates other than the
//! CLI's (the MCP proxy's, the API proxy's): only the CLI crate's own tests
//! see `env!("CARGO_BIN_EXE_toolgate")`, so the others find the binary the
//! same build made, and refuse one older than the sources it is built from.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;
use std::time::SystemTime;

use crate::Cli;

/// The environment variable naming the binary to test instead.
pub const TOOLGATE_BIN_ENV: &str = "TOOLGATE_BIN";

/// The crates whose sources are not part of the binary.
const NOT_IN_BINARY: [&str; 3] = ["toolgate-py", "toolgate-bench", "toolgate-testkit"];

/// The `toolgate` binary: `TOOLGATE_BIN` when it is set, else
/// `target/debug/toolgate` beside the running test (what `cargo test
/// --workspace` builds before any test runs). Fails, saying what to run,
/// when that binary is missing or older than a source file of a crate it
/// is built from.
pub fn toolgate_bin() -> Result<PathBuf, String> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os(TOOLGATE_BIN_ENV) {
        Some(path) => Ok(PathBuf::from(path)),
        None => {
            let exe = std::env::current_exe().map_err(|e| format!("no test binary path: {e}"))?;
            // target/debug/deps/TEST-HASH → target/debug/toolgate
            let bin = exe
                .parent()
                .and_then(Path::parent)
                .map(|d| d.join(format!("toolgate{}", std::env::consts::EXE_SUFFIX)))
                .ok_or_else(|| format!("no build folder above `{}`", exe.display()))?;
            let root = crate::workspace_root(env!("CARGO_MANIFEST_DIR"))?;
            fresh(&bin, &root)?;
            Ok(bin)
        }
    })
    .clone()
}

/// [`toolgate_bin`], failing the calling test, with what to run, when
/// there is none.
#[track_caller]
#[allow(
    clippy::panic,
    reason = "test support: a test without the binary it tests must fail, saying why"
)]
pub fn toolgate_path() -> PathBuf {
    match toolgate_bin() {
        Ok(bin) => bin,
        Err(why) => panic!("{why}"),
    }
}

/// `toolgate ARGS` ([`toolgate_path`]), with standard input closed.
#[track_caller]
pub fn run_toolgate(args: &[&str]) -> Output {
    Cli::new(toolgate_path()).args(args).run()
}

/// Whether `bin` exists and is newer than every source of the binary.
fn fresh(bin: &Path, root: &Path) -> Result<(), String> {
    let build = "build it first: `cargo build -p toolgate-cli` (`cargo test --workspace` does), \
                 or name one with TOOLGATE_BIN";
    let built = std::fs::metadata(bin)
        .and_then(|m| m.modified())
        .map_err(|_| format!("no `{}`: {build}", bin.display()))?;
    let mut newer: Option<PathBuf> = None;
    let crates = std::fs::read_dir(root.join("crates")).map_err(|e| e.to_string())?;
    for krate in crates.flatten() {
        let name = krate.file_name();
        if NOT_IN_BINARY.iter().any(|n| name == *n) {
            continue;
        }
        for path in [krate.path().join("src"), krate.path().join("Cargo.toml")] {
            newest_after(&path, built, &mut newer);
        }
    }
    newest_after(&root.join("Cargo.lock"), built, &mut newer);
    match newer {
        None => Ok(()),
        Some(source) => Err(format!(
            "`{}` is older than `{}`: {build}",
            bin.display(),
            source.display()
        )),
    }
}

/// Notes in `newer` a file at or below `path` modified after `built`.
fn newest_after(path: &Path, built: SystemTime, newer: &mut Option<PathBuf>) {
    if newer.is_some() {
        return;
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            newest_after(&entry.path(), built, newer);
        }
    } else if meta.modified().is_ok_and(|m| m > built) {
        *newer = Some(path.to_path_buf());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_older_than_a_source_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("crates/toolgate/src")).unwrap();
        std::fs::create_dir_all(root.join("crates/toolgate-py/src")).unwrap();
        let bin = root.join("toolgate");
        let err = fresh(&bin, root).unwrap_err();
        assert!(err.contains("cargo build -p toolgate-cli"), "{err}");
        std::fs::write(root.join("crates/toolgate/src/lib.rs"), "").unwrap();
        std::fs::write(&bin, "").unwrap();
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&bin)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let err = fresh(&bin, root).unwrap_err();
        assert!(err.contains("lib.rs"), "{err}");
        // A crate the binary is not built from does not count.
        let lib = root.join("crates/toolgate/src/lib.rs");
        std::fs::File::options()
            .write(true)
            .open(&lib)
            .unwrap()
            .set_modified(old - std::time::Duration::from_secs(60))
            .unwrap();
        std::fs::write(root.join("crates/toolgate-py/src/lib.rs"), "").unwrap();
        fresh(&bin, root).unwrap();
    }
}
