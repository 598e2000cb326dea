//! Which copy of an external suite a corpora folder holds.
//!
//! CI's `../shared/corpora` holds JSON-Schema-Test-Suite at the commit the
//! project pins (44401e0, 2026-08-22). `scripts/fetch-corpora.sh` takes the
//! suites from the package registries instead, and the newest registry
//! copy of JSON-Schema-Test-Suite (the jsonschema 4.26.0 sdist) is upstream
//! as of 72c670b (2025-06-06): fewer cases, a few named differently. The
//! harnesses ask which copy they read, so that their case lists stay exact
//! for each, and refuse any other copy. Both copies are identified by
//! [`tree_digest`], the digest the fetch script pins.

use std::path::Path;

use ring::digest::{digest, SHA256};

/// A copy of JSON-Schema-Test-Suite as laid out in a corpora folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaSuiteCopy {
    /// Upstream at the pinned commit 44401e0 (CI's `../shared/corpora`).
    Pinned,
    /// The jsonschema 4.26.0 sdist's copy (upstream 72c670b), as
    /// `scripts/fetch-corpora.sh` lays it out.
    Registry,
}

/// [`tree_digest`] of `JSON-Schema-Test-Suite/` at the pinned commit.
pub const SCHEMA_SUITE_PINNED_DIGEST: &str =
    "1c255705125af1e34b12e421dc30f470fffb8b296890808b7e72eb86354f10a0";
/// [`tree_digest`] of `JSON-Schema-Test-Suite/` as the fetch script lays
/// out the registry copy (its `SCHEMA_TEST_SUITE_DIGEST`).
pub const SCHEMA_SUITE_REGISTRY_DIGEST: &str =
    "a381f882df7fdd585c4f4324ffc86bb3a94889908dd33c22eb73d6868245dda8";

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// One digest for every file under `dir`, names and bytes: the SHA-256 of
/// the sorted lines `"<sha256 of the file>  <path relative to dir>\n"`
/// (the same as `scripts/fetch-corpora.sh`'s `tree_digest`).
pub fn tree_digest(dir: &Path) -> Result<String, String> {
    fn walk(base: &Path, dir: &Path, lines: &mut Vec<String>) -> Result<(), String> {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if path.is_dir() {
                walk(base, &path, lines)?;
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let rel = path
                    .strip_prefix(base)
                    .map_err(|e| e.to_string())?
                    .to_string_lossy()
                    .replace('\\', "/");
                lines.push(format!(
                    "{}  {rel}\n",
                    hex(digest(&SHA256, &bytes).as_ref())
                ));
            }
        }
        Ok(())
    }
    let mut lines = Vec::new();
    walk(dir, dir, &mut lines)?;
    lines.sort();
    Ok(hex(digest(&SHA256, lines.concat().as_bytes()).as_ref()))
}

/// Which copy of JSON-Schema-Test-Suite `suite` (a corpora folder's
/// `JSON-Schema-Test-Suite`) holds; an error naming the fix for any other.
pub fn schema_suite_copy(suite: &Path) -> Result<SchemaSuiteCopy, String> {
    let got = tree_digest(suite)?;
    match got.as_str() {
        SCHEMA_SUITE_PINNED_DIGEST => Ok(SchemaSuiteCopy::Pinned),
        SCHEMA_SUITE_REGISTRY_DIGEST => Ok(SchemaSuiteCopy::Registry),
        _ => Err(format!(
            "`{}` (digest {got}) is neither the pinned JSON-Schema-Test-Suite nor the \
             registry copy scripts/fetch-corpora.sh lays out: the tests' case lists are \
             exact for those two only; fetch it again with scripts/fetch-corpora.sh DIR",
            suite.display()
        )),
    }
}
