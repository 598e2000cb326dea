//! Store errors; documented on [`Error`].

use std::fmt;
use std::sync::Arc;

/// A store operation failed.
///
/// The gate turns every store error into a *deny* with the reason
/// `store_unavailable` (fail closed): an audit record that cannot be committed
/// means the decision is not returned as allow. [`Error::code`] tells
/// operators what went wrong; the message never contains argument values.
#[derive(Debug, Clone)]
pub struct Error {
    // Boxed so that `Result<T, Error>` stays one pointer wide on the hot path.
    inner: Box<ErrorImpl>,
}

#[derive(Debug, Clone)]
struct ErrorImpl {
    code: ErrorCode,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// What kind of failure an [`Error`] is. The wire names ([`ErrorCode::as_str`])
/// are a stable contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `store_unavailable`: the database cannot be opened, read or written
    /// (missing or unwritable directory, I/O error).
    Unavailable,
    /// `store_busy`: another connection held the write lock beyond the busy
    /// timeout.
    Busy,
    /// `store_read_only`: the database is read-only (file permissions, or the
    /// store was opened read-only).
    ReadOnly,
    /// `store_full`: the disk, or the configured size limit, is full.
    Full,
    /// `store_corrupt`: the file is not a database, or a row cannot be read back.
    Corrupt,
    /// `schema_too_new`: the database was written by a newer version of
    /// toolgate; this version refuses to open it.
    SchemaTooNew,
    /// `not_found`: no approval with that id.
    NotFound,
    /// `conflict`: the approval is not in a state that allows the change
    /// (already decided, expired or used).
    Conflict,
    /// `invalid_input`: an argument is malformed (a JSON Pointer without a
    /// leading `/`, a verdict that is not a call's verdict, …).
    InvalidInput,
    /// `internal`: a lock was poisoned by a panicking thread, or a similar bug.
    Internal,
    /// `approval_queue_full`: the session or the user already has as many
    /// approvals waiting for a human as the caps allow
    /// ([`crate::PendingLimits`]).
    QueueFull,
}

impl ErrorCode {
    /// The wire name, e.g. `store_busy`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Unavailable => "store_unavailable",
            Self::Busy => "store_busy",
            Self::ReadOnly => "store_read_only",
            Self::Full => "store_full",
            Self::Corrupt => "store_corrupt",
            Self::SchemaTooNew => "schema_too_new",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::InvalidInput => "invalid_input",
            Self::Internal => "internal",
            Self::QueueFull => "approval_queue_full",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(ErrorImpl {
                code,
                message: message.into(),
                source: None,
            }),
        }
    }

    /// An SQLite error, classified by its result code; `context` says what
    /// the store was doing.
    pub(crate) fn db(context: &str, err: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        let code = match err.sqlite_error_code() {
            Some(C::DatabaseBusy | C::DatabaseLocked) => ErrorCode::Busy,
            Some(C::ReadOnly) => ErrorCode::ReadOnly,
            Some(C::DiskFull) => ErrorCode::Full,
            Some(C::DatabaseCorrupt | C::NotADatabase) => ErrorCode::Corrupt,
            Some(_) => ErrorCode::Unavailable,
            None => match err {
                rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::IntegralValueOutOfRange(..)
                | rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::Utf8Error(..) => ErrorCode::Corrupt,
                _ => ErrorCode::Unavailable,
            },
        };
        let mut e = Self::new(code, context);
        e.inner.source = Some(Arc::new(err));
        e
    }

    /// A PostgreSQL error, classified by its SQLSTATE; `context` says what
    /// the store was doing. Errors without a SQLSTATE (connection refused,
    /// connection lost, timeouts) are `store_unavailable`.
    pub(crate) fn pg(context: &str, err: postgres::Error) -> Self {
        let code = match err.code().map(postgres::error::SqlState::code) {
            // serialization failure, deadlock, lock timeout, statement timeout
            Some("40001" | "40P01" | "55P03" | "57014") => ErrorCode::Busy,
            // read-only transaction, or a hot standby
            Some("25006") => ErrorCode::ReadOnly,
            // disk full, program limit exceeded
            Some("53100" | "54000") => ErrorCode::Full,
            // data corrupted, index corrupted
            Some("XX001" | "XX002") => ErrorCode::Corrupt,
            _ => ErrorCode::Unavailable,
        };
        let mut e = Self::new(code, context);
        e.inner.source = Some(Arc::new(err));
        e
    }

    /// The same error with `source` as its cause.
    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        self.inner.source = Some(Arc::new(source));
        self
    }

    /// A write on a store opened read-only.
    pub(crate) fn read_only() -> Self {
        Self::new(ErrorCode::ReadOnly, "the store was opened read-only")
    }

    /// A lock was poisoned by a thread that panicked while holding it.
    pub(crate) fn poisoned(what: &str) -> Self {
        Self::new(ErrorCode::Internal, format!("{what}: lock poisoned"))
    }

    /// What kind of failure this is.
    pub fn code(&self) -> ErrorCode {
        self.inner.code
    }

    /// The message for operators, without the code.
    pub fn message(&self) -> &str {
        &self.inner.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.code, self.inner.message)?;
        if let Some(source) = &self.inner.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
