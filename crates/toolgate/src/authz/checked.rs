//! Policy sets that type-checked, remembered across processes: a process
//! started per call (`toolgate hook`) need not type-check the same text
//! again ([`remember_validations`]).
//!
//! What is remembered is only that Cedar's strict validation passed for a
//! schema text and a policies text, byte for byte, under this build of
//! toolgate and of Cedar: one empty file per pair, named by the SHA-256 of
//! the build's versions and both texts. The policies and the schema are
//! still read from their files and parsed on every load; a change to
//! either (or to the build) gives another name, so it is type-checked
//! again before anything is decided with it. Nothing is ever read from a
//! remembered file but its name.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use toolgate_json::canonical::Digest;

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Remembers, in the folder `dir` (created if needed, owner-only), the
/// schema and policies texts that passed Cedar's validation, and skips the
/// validation of a text remembered there, for the rest of this process
/// (the first call wins). For short-lived processes that load the same
/// config each time: validation is most of what loading Cedar policies
/// costs. A folder others can write to is not used (unix).
pub fn remember_validations(dir: impl Into<PathBuf>) {
    let _first_wins = DIR.set(dir.into());
}

/// The name a validated pair is remembered by; `None` when this process
/// remembers nothing.
pub(super) fn key(schema: &str, policies: &str) -> Option<String> {
    DIR.get()?;
    let mut text = Vec::with_capacity(schema.len() + policies.len() + 96);
    for part in [
        "toolgate cedar validation 1",
        env!("CARGO_PKG_VERSION"),
        &cedar_policy::get_sdk_version().to_string(),
        schema,
        policies,
    ] {
        // Length-prefixed: no two different tuples give the same bytes.
        text.extend_from_slice(&(part.len() as u64).to_le_bytes());
        text.extend_from_slice(part.as_bytes());
    }
    Some(format!("cedar-{}", Digest::of(&text).to_hex()))
}

/// Whether `key` was remembered as validated.
pub(super) fn known(key: &str) -> bool {
    DIR.get()
        .filter(|dir| private(dir))
        .is_some_and(|dir| dir.join(key).is_file())
}

/// Remembers `key` as validated; a folder that cannot be written only
/// means the next process validates again.
pub(super) fn remember(key: &str) {
    let Some(dir) = DIR.get() else {
        return;
    };
    if create_private(dir).is_err() || !private(dir) {
        return;
    }
    let tmp = dir.join(format!(".{key}.{}", std::process::id()));
    if std::fs::write(&tmp, b"").is_ok() && std::fs::rename(&tmp, dir.join(key)).is_err() {
        let _ignored = std::fs::remove_file(&tmp);
    }
}

#[cfg(unix)]
fn create_private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// A folder only its owner can write to (unix: not group- or
/// world-writable, owned by this process's user).
#[cfg(unix)]
fn private(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.mode() & 0o022 == 0 && m.uid() == current_uid(dir))
}

/// The uid of this process, as the owner of a file it creates.
#[cfg(unix)]
fn current_uid(dir: &Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    // Without `libc`: the owner of `/proc/self` (Linux), else of a file
    // this process just made.
    static UID: OnceLock<Option<u32>> = OnceLock::new();
    UID.get_or_init(|| {
        if let Ok(m) = std::fs::metadata("/proc/self") {
            return Some(m.uid());
        }
        let probe = dir.join(format!(".uid.{}", std::process::id()));
        let uid = std::fs::write(&probe, b"")
            .ok()
            .and_then(|()| std::fs::metadata(&probe).ok())
            .map(|m| m.uid());
        let _ignored = std::fs::remove_file(&probe);
        uid
    })
    .unwrap_or(u32::MAX)
}

#[cfg(not(unix))]
fn private(dir: &Path) -> bool {
    dir.is_dir()
}
