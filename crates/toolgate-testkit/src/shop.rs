//! The checkout's examples, and the shop example copied where a test may
//! change it.

use std::path::{Path, PathBuf};

/// The checkout's `examples/` folder.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The shop example's folder, `examples/shop`.
pub fn shop_dir() -> PathBuf {
    examples_dir().join("shop")
}

/// A file of the shop example (`rel` to its folder), as a command-line
/// argument.
pub fn shop_file(rel: &str) -> String {
    shop_dir().join(rel).display().to_string()
}

/// Copies the shop example (config, policies, schemas, responses,
/// contexts) into `dir`, without a store that a run of the example may
/// have left beside it (`toolgate.db*`): the copy's store starts empty.
///
/// # Panics
///
/// When a file cannot be copied.
pub fn copy_shop(dir: &Path) {
    copy_dir(&shop_dir(), dir);
}

#[expect(clippy::panic, reason = "a copy that fails fails the test")]
fn copy_dir(from: &Path, to: &Path) {
    let fail = |what: &str, path: &Path, e: std::io::Error| -> ! {
        panic!("cannot {what} `{}`: {e}", path.display())
    };
    std::fs::create_dir_all(to).unwrap_or_else(|e| fail("create", to, e));
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| fail("read", from, e));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| fail("read", from, e));
        let name = entry.file_name();
        let target = to.join(&name);
        let is_dir = entry
            .file_type()
            .unwrap_or_else(|e| fail("read", &entry.path(), e))
            .is_dir();
        if is_dir {
            copy_dir(&entry.path(), &target);
        } else if !name.to_string_lossy().starts_with("toolgate.db") {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| fail("copy", &entry.path(), e));
        }
    }
}
