//! SQLite's shared-memory file (`-shm`, the WAL index) is mapped into the
//! process. Once that file turns immutable (`chattr +i`) the kernel
//! answers the next write to a mapped page with SIGBUS, which kills the
//! process: no error comes back to SQLite. So every use of a connection
//! first looks at the file's attributes (one `statx`, no descriptor, so
//! SQLite's POSIX locks on the file are untouched) and refuses with
//! `store_read_only` while it is immutable: the call is denied, the
//! readiness probe fails, the service stays up.
//!
//! A change between the look and the write can still fault; the window is
//! one statement long, where it was the process's whole life.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode};

/// The `-shm` file of one database, looked at before each use.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShmGuard {
    path: Option<PathBuf>,
}

impl ShmGuard {
    /// The guard of the database at `db` (its `-shm` beside it).
    pub(crate) fn for_database(db: &Path) -> Self {
        let mut name = db.as_os_str().to_owned();
        name.push("-shm");
        Self {
            path: Some(PathBuf::from(name)),
        }
    }

    /// No file to guard (a database in memory).
    pub(crate) fn none() -> Self {
        Self { path: None }
    }

    /// `store_read_only` while the `-shm` file is immutable.
    pub(crate) fn check(&self) -> Result<(), Error> {
        match &self.path {
            Some(path) if immutable(path) => Err(Error::new(
                ErrorCode::ReadOnly,
                "the database's shared-memory file is immutable: SQLite cannot write it",
            )),
            _ => Ok(()),
        }
    }
}

/// Whether the file at `path` has the immutable attribute (a missing file,
/// or a system that cannot tell, is not immutable).
#[cfg(target_os = "linux")]
fn immutable(path: &Path) -> bool {
    use rustix::fs::{statx, AtFlags, StatxAttributes, StatxFlags, CWD};
    match statx(CWD, path, AtFlags::empty(), StatxFlags::empty()) {
        Ok(st) => {
            st.stx_attributes_mask.contains(StatxAttributes::IMMUTABLE)
                && st.stx_attributes.contains(StatxAttributes::IMMUTABLE)
        }
        Err(_) => false,
    }
}

#[cfg(not(target_os = "linux"))]
fn immutable(_path: &Path) -> bool {
    false
}
