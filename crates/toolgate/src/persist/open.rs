//! Opening the store a config names: [`StoreUrl`] and [`open_store`].

use std::fmt;
use std::path::{Path, PathBuf};

use toolgate_store::{SqliteOptions, SqliteStore};

use crate::config::Config;

/// A store URL, read.
///
/// | URL | store |
/// |---|---|
/// | `sqlite://toolgate.db` | the SQLite file `toolgate.db`, **relative to the config file's folder** (like every path in the config) |
/// | `sqlite:///var/lib/toolgate/audit.db` | an absolute path |
/// | `sqlite::memory:` | a private in-memory database (tests): nothing survives the process |
///
/// Other schemes (`postgres://…`) are not built in yet and are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// An SQLite file.
    SqliteFile(PathBuf),
    /// A private in-memory SQLite database.
    SqliteMemory,
}

impl StoreUrl {
    /// Reads `url`; a relative file path is resolved against `base` (the
    /// config file's folder).
    pub fn parse(url: &str, base: &Path) -> Result<Self, OpenError> {
        if url == "sqlite::memory:" || url == "sqlite://:memory:" {
            return Ok(Self::SqliteMemory);
        }
        match url.strip_prefix("sqlite://") {
            Some("") => Err(OpenError::new(OpenErrorKind::InvalidUrl, url, None)),
            Some(path) => {
                let path = Path::new(path);
                Ok(Self::SqliteFile(if path.is_absolute() {
                    path.to_owned()
                } else {
                    base.join(path)
                }))
            }
            None => Err(OpenError::new(OpenErrorKind::UnsupportedScheme, url, None)),
        }
    }

    /// The file, for an SQLite file.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::SqliteFile(p) => Some(p),
            Self::SqliteMemory => None,
        }
    }
}

/// Opens the store `url` names (see [`StoreUrl`]), relative paths resolved
/// against `base`, with `options` (escalation threshold, read-only, …).
///
/// The file is created and migrated if needed, unless the options say
/// read-only.
pub fn open_store(
    url: &str,
    base: &Path,
    options: SqliteOptions,
) -> Result<SqliteStore, OpenError> {
    match StoreUrl::parse(url, base)? {
        StoreUrl::SqliteMemory => options
            .open_in_memory()
            .map_err(|e| OpenError::new(OpenErrorKind::Store, url, Some(e))),
        StoreUrl::SqliteFile(path) => options
            .open(&path)
            .map_err(|e| OpenError::new(OpenErrorKind::Store, url, Some(e))),
    }
}

/// Opens the store `config` names (`[store] url`, relative to the config
/// file's folder), escalating sessions after its `[gate] escalate_after`
/// rejections.
pub fn open_config_store(
    config: &Config,
    options: SqliteOptions,
) -> Result<SqliteStore, OpenError> {
    open_store(
        config.store().url(),
        config.base_dir(),
        options.escalate_after(config.gate().escalate_after()),
    )
}

/// The store could not be opened.
#[derive(Debug, Clone)]
pub struct OpenError {
    kind: OpenErrorKind,
    /// The URL's scheme only: a URL may carry credentials.
    scheme: String,
    source: Option<toolgate_store::Error>,
}

/// Why the store could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenErrorKind {
    /// The URL's scheme is not one this build supports.
    UnsupportedScheme,
    /// The URL names no database.
    InvalidUrl,
    /// The store refused to open (see the source's code).
    Store,
}

impl OpenError {
    fn new(kind: OpenErrorKind, url: &str, source: Option<toolgate_store::Error>) -> Self {
        let scheme = url
            .split_once(':')
            .map_or("", |(s, _)| s)
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .take(16)
            .collect();
        Self {
            kind,
            scheme,
            source,
        }
    }

    /// Why.
    pub fn kind(&self) -> OpenErrorKind {
        self.kind
    }

    /// The store's error, when the store refused to open.
    pub fn store_error(&self) -> Option<&toolgate_store::Error> {
        self.source.as_ref()
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            OpenErrorKind::UnsupportedScheme => write!(
                f,
                "unsupported store url scheme `{}`: this build has `sqlite://PATH` and `sqlite::memory:`",
                self.scheme
            ),
            OpenErrorKind::InvalidUrl => {
                f.write_str("store url names no database: write `sqlite://PATH`")
            }
            OpenErrorKind::Store => f.write_str("cannot open the store"),
        }
    }
}

impl std::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let base = Path::new("/etc/tg");
        assert_eq!(
            StoreUrl::parse("sqlite://toolgate.db", base).unwrap(),
            StoreUrl::SqliteFile(PathBuf::from("/etc/tg/toolgate.db"))
        );
        assert_eq!(
            StoreUrl::parse("sqlite:///var/a.db", base).unwrap(),
            StoreUrl::SqliteFile(PathBuf::from("/var/a.db"))
        );
        assert_eq!(
            StoreUrl::parse("sqlite::memory:", base).unwrap(),
            StoreUrl::SqliteMemory
        );
        let e = StoreUrl::parse("postgres://u:secret@h/db", base).unwrap_err();
        assert_eq!(e.kind(), OpenErrorKind::UnsupportedScheme);
        assert!(!e.to_string().contains("secret"), "{e}");
        assert_eq!(
            StoreUrl::parse("sqlite://", base).unwrap_err().kind(),
            OpenErrorKind::InvalidUrl
        );
    }
}
