//! Policy sets that type-checked, and schemas in Cedar's JSON form,
//! remembered across processes: a process started per call (`toolgate
//! hook`) need not type-check the same text again, nor parse the same
//! schema text again ([`remember_validations`]).
//!
//! What is remembered for policies is only that Cedar's strict validation
//! passed for a schema text and a policies text, byte for byte, under this
//! build of toolgate and of Cedar: one empty file per pair, named by the
//! SHA-256 of the build's versions and both texts. Nothing is read from
//! such a file but its name.
//!
//! For a schema, what is kept is Cedar's JSON form of the schema text, as
//! Cedar wrote it when it parsed the text (`SchemaFragment::to_json_string`),
//! in a file named by the SHA-256 of the build's versions and the text. The
//! JSON form is read instead of the text: Cedar's reader of its JSON form
//! costs a fraction of its schema grammar. A change to the text (or to the
//! build) gives another name, so a new text is parsed from the text, and
//! a kept form that does not read is ignored (the text is parsed).
//!
//! Both rest on the same trust: the folder is the user's own (owner-only,
//! not used if others can write to it), and a kept schema is read only
//! from a regular file the user owns that others cannot write. Whoever can
//! write there could equally mark an unchecked policy text as checked.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cedar_policy::{Schema, SchemaFragment};
use toolgate_json::canonical::Digest;
use toolgate_json::Value;

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Remembers, in the folder `dir` (created if needed, owner-only), the
/// schema and policies texts that passed Cedar's validation, and skips the
/// validation of a text remembered there, for the rest of this process
/// (the first call wins); keeps there too the JSON form of each schema
/// text parsed, and reads a kept form instead of parsing the same text
/// again. For short-lived processes that load the same config each time:
/// validating, then parsing the schema, are most of what loading Cedar
/// policies costs. A folder others can write to is not used (unix).
pub fn remember_validations(dir: impl Into<PathBuf>) {
    let _first_wins = DIR.set(dir.into());
}

/// The name a validated pair is remembered by; `None` when this process
/// remembers nothing.
pub(super) fn key(schema: &str, policies: &str) -> Option<String> {
    DIR.get()?;
    Some(format!(
        "cedar-{}",
        digest(&["toolgate cedar validation 1", schema, policies])
    ))
}

/// The name the JSON form of a schema text is kept by; `None` when this
/// process remembers nothing.
pub(super) fn schema_key(schema: &str) -> Option<String> {
    DIR.get()?;
    Some(format!(
        "schema-{}.json",
        digest(&["toolgate cedar schema json 1", schema])
    ))
}

/// The SHA-256 (hex) of `parts` after this build's toolgate and Cedar
/// versions, each part length-prefixed: no two different tuples give the
/// same bytes.
fn digest(parts: &[&str]) -> String {
    let cedar = cedar_policy::get_sdk_version().to_string();
    let mut text = Vec::with_capacity(parts.iter().map(|p| p.len() + 8).sum::<usize>() + 64);
    for part in [env!("CARGO_PKG_VERSION"), &cedar].iter().chain(parts) {
        text.extend_from_slice(&(part.len() as u64).to_le_bytes());
        text.extend_from_slice(part.as_bytes());
    }
    Digest::of(&text).to_hex()
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
    keep(key, "");
}

/// The schema built from the JSON form kept for the schema text `text`
/// ([`keep_schema`]), and that form as a JSON value; `None` when none is
/// kept or it does not read.
pub(super) fn kept_schema(text: &str) -> Option<(Schema, Value<'static>)> {
    let json = kept(&schema_key(text)?)?;
    let fragment = SchemaFragment::from_json_str(&json).ok()?;
    let schema = Schema::from_schema_fragments([fragment]).ok()?;
    Some((schema, super::declared::json_root(Some(&json))))
}

/// Keeps `json`, Cedar's JSON form of the schema text `text`, for the next
/// process that loads the same text.
pub(super) fn keep_schema(text: &str, json: Option<&str>) {
    if let (Some(key), Some(json)) = (schema_key(text), json) {
        keep(&key, json);
    }
}

/// The largest kept schema form read back.
const MAX_KEPT_BYTES: u64 = 16 << 20;

/// The text kept under `key` ([`keep`]): `None` unless the folder is
/// private and the file is a regular file of this user's that others
/// cannot write, at most 16 MiB.
pub(super) fn kept(key: &str) -> Option<String> {
    let dir = DIR.get().filter(|dir| private(dir))?;
    let path = dir.join(key);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_KEPT_BYTES || !private_file(&meta, dir) {
        return None;
    }
    std::fs::read_to_string(&path).ok()
}

/// Keeps `text` under `key` (owner-only, written whole then renamed into
/// place, so a reader sees the old file, none, or the whole new one); a
/// folder that cannot be written only means the next process does the
/// work again.
pub(super) fn keep(key: &str, text: &str) {
    let Some(dir) = DIR.get() else {
        return;
    };
    if create_private(dir).is_err() || !private(dir) {
        return;
    }
    let tmp = dir.join(format!(".{key}.{}", std::process::id()));
    if write_private(&tmp, text).is_err() || std::fs::rename(&tmp, dir.join(key)).is_err() {
        let _ignored = std::fs::remove_file(&tmp);
    }
}

#[cfg(unix)]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}

#[cfg(not(unix))]
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::write(path, text)
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

/// A file of this process's user that others cannot write (unix).
#[cfg(unix)]
fn private_file(meta: &std::fs::Metadata, dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.mode() & 0o022 == 0 && meta.uid() == current_uid(dir)
}

#[cfg(not(unix))]
fn private_file(_meta: &std::fs::Metadata, _dir: &Path) -> bool {
    true
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
