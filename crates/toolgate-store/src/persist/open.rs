//! Opening the store a config names: [`StoreUrl`] and [`open_store`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::{Clock, PgOptions, SqliteOptions, Store};

use toolgate::config::Config;

/// A store URL, read.
///
/// | URL | store |
/// |---|---|
/// | `sqlite://toolgate.db` | the SQLite file `toolgate.db`, **relative to the config file's folder** (like every path in the config) |
/// | `sqlite:///var/lib/toolgate/audit.db` | an absolute path |
/// | `sqlite::memory:` | a private in-memory database (tests): nothing survives the process |
/// | `postgres://user:password@host:5432/db` (or `postgresql://…`) | a PostgreSQL database, shared by every replica that names it |
///
/// Other schemes are refused. A PostgreSQL URL may hold a password: it is
/// never printed (not by `Debug`, not in errors).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreUrl {
    /// An SQLite file.
    SqliteFile(PathBuf),
    /// A private in-memory SQLite database.
    SqliteMemory,
    /// A PostgreSQL connection URL, as written.
    Postgres(String),
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SqliteFile(p) => f.debug_tuple("SqliteFile").field(p).finish(),
            Self::SqliteMemory => f.write_str("SqliteMemory"),
            Self::Postgres(_) => f.write_str("Postgres(..)"),
        }
    }
}

impl StoreUrl {
    /// Reads `url`; a relative file path is resolved against `base` (the
    /// config file's folder).
    pub fn parse(url: &str, base: &Path) -> Result<Self, OpenError> {
        if url == "sqlite::memory:" || url == "sqlite://:memory:" {
            return Ok(Self::SqliteMemory);
        }
        if let Some(rest) = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
        {
            if rest.is_empty() {
                return Err(OpenError::new(OpenErrorKind::InvalidUrl, url, None));
            }
            return Ok(Self::Postgres(url.to_owned()));
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
            Self::SqliteMemory | Self::Postgres(_) => None,
        }
    }

    /// Whether several processes on several machines can share this store
    /// (PostgreSQL).
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }
}

/// How [`open_store`] opens a store, whichever its kind.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct StoreOptions {
    /// Open without creating or migrating anything; every write fails with
    /// `store_read_only`.
    pub read_only: bool,
    /// Escalate a session after this many rejections (the store's default,
    /// 3, when `None`).
    pub escalate_after: Option<u32>,
    /// Opened by a process that decides a call or two and exits
    /// (`toolgate hook`): SQLite opens one connection, which reads and
    /// writes, instead of a writer and a pool of readers.
    pub short_lived: bool,
    /// The clock the store takes "now" from (approval decisions and
    /// expiry, kill-switch flips); the system clock when `None`.
    pub clock: Option<Arc<dyn Clock>>,
}

impl fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreOptions")
            .field("read_only", &self.read_only)
            .field("escalate_after", &self.escalate_after)
            .field("short_lived", &self.short_lived)
            .field("clock", &self.clock.as_ref().map(|_| "custom"))
            .finish()
    }
}

impl StoreOptions {
    /// Read-write, the store's default escalation threshold.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read-only or not.
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Escalate after `rejections` rejections.
    #[must_use]
    pub fn escalate_after(mut self, rejections: u32) -> Self {
        self.escalate_after = Some(rejections);
        self
    }

    /// Opened by a short-lived process ([`StoreOptions::short_lived`]).
    #[must_use]
    pub fn short_lived(mut self, short_lived: bool) -> Self {
        self.short_lived = short_lived;
        self
    }

    /// Takes "now" from `clock` ([`StoreOptions::clock`]).
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }
}

/// Opens the store `url` names (see [`StoreUrl`]), relative paths resolved
/// against `base`, with `options`.
///
/// The database is created (SQLite) and migrated if needed, unless the
/// options say read-only; several replicas opening one PostgreSQL database
/// at once migrate it once.
pub fn open_store(
    url: &str,
    base: &Path,
    options: StoreOptions,
) -> Result<Arc<dyn Store>, OpenError> {
    let store_err = |e| OpenError::new(OpenErrorKind::Store, url, Some(e));
    match StoreUrl::parse(url, base)? {
        StoreUrl::Postgres(conn) => {
            let mut o = PgOptions::new().read_only(options.read_only);
            if let Some(n) = options.escalate_after {
                o = o.escalate_after(n);
            }
            if let Some(c) = options.clock {
                o = o.clock(c);
            }
            Ok(Arc::new(o.open(&conn).map_err(store_err)?))
        }
        kind => {
            let mut o = SqliteOptions::new()
                .read_only(options.read_only)
                .single_connection(options.short_lived);
            if let Some(n) = options.escalate_after {
                o = o.escalate_after(n);
            }
            if let Some(c) = options.clock {
                o = o.clock(c);
            }
            match kind {
                StoreUrl::SqliteFile(path) => Ok(Arc::new(o.open(&path).map_err(store_err)?)),
                _ => Ok(Arc::new(o.open_in_memory().map_err(store_err)?)),
            }
        }
    }
}

/// Opens the store `config` names (`[store] url`, relative to the config
/// file's folder), escalating sessions after its `[gate] escalate_after`
/// rejections.
pub fn open_config_store(
    config: &Config,
    options: StoreOptions,
) -> Result<Arc<dyn Store>, OpenError> {
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
    source: Option<crate::Error>,
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
    fn new(kind: OpenErrorKind, url: &str, source: Option<crate::Error>) -> Self {
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
    pub fn store_error(&self) -> Option<&crate::Error> {
        self.source.as_ref()
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            OpenErrorKind::UnsupportedScheme => write!(
                f,
                "unsupported store url scheme `{}`: this build has `sqlite://PATH`, `sqlite::memory:` and `postgres://USER@HOST:PORT/DB`",
                self.scheme
            ),
            OpenErrorKind::InvalidUrl => {
                f.write_str("store url names no database: write `sqlite://PATH` or `postgres://USER@HOST:PORT/DB`")
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
        let pg = StoreUrl::parse("postgres://u:secret@h/db", base).unwrap();
        assert!(pg.is_shared());
        assert!(!format!("{pg:?}").contains("secret"));
        let e = StoreUrl::parse("mysql://u:secret@h/db", base).unwrap_err();
        assert_eq!(e.kind(), OpenErrorKind::UnsupportedScheme);
        assert!(!e.to_string().contains("secret"), "{e}");
        assert_eq!(
            StoreUrl::parse("postgres://", base).unwrap_err().kind(),
            OpenErrorKind::InvalidUrl
        );
        assert_eq!(
            StoreUrl::parse("sqlite://", base).unwrap_err().kind(),
            OpenErrorKind::InvalidUrl
        );
    }
}
