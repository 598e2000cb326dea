//! Helpers shared by toolgate's tests and benchmarks.
//!
//! The external corpora live beside the checkout, in `../shared` (CI lays it
//! out the same way). They are found from the workspace root, never from the
//! current directory, and a missing corpus is an error: a conformance test
//! that silently runs nothing proves nothing.

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

/// `../shared/corpora`.
pub fn corpora_dir(manifest_dir: &str) -> Result<PathBuf, String> {
    existing(shared_dir(manifest_dir)?.join("corpora"))
}

/// `../shared/perf`.
pub fn perf_dir(manifest_dir: &str) -> Result<PathBuf, String> {
    existing(shared_dir(manifest_dir)?.join("perf"))
}

fn existing(path: PathBuf) -> Result<PathBuf, String> {
    if path.is_dir() {
        Ok(path)
    } else {
        Err(format!("missing corpus folder `{}`", path.display()))
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
