//! [`SqliteOptions`]: how a [`SqliteStore`] is opened, and its [`Durability`].

use super::*;

/// How hard a commit works to survive a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Durability {
    /// The WAL is fsynced on every commit (`synchronous = FULL`): a committed
    /// record survives power loss. The default.
    #[default]
    Full,
    /// The WAL is fsynced only at checkpoints (`synchronous = NORMAL`): a
    /// committed record survives a crash of the process, but the last
    /// commits may be lost on power loss. Faster; not for audit of record.
    Normal,
}

/// How to open a [`SqliteStore`]. Built with setters, used by
/// [`SqliteOptions::open`] and [`SqliteOptions::open_in_memory`].
#[derive(Clone)]
pub struct SqliteOptions {
    pub(super) busy_timeout: Duration,
    pub(super) durability: Durability,
    pub(super) common: options::Common,
    pub(super) max_database_bytes: Option<u64>,
    pub(super) single_connection: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SqliteOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("SqliteOptions");
        d.field("busy_timeout", &self.busy_timeout)
            .field("durability", &self.durability);
        self.common.debug_fields(&mut d);
        d.field("max_database_bytes", &self.max_database_bytes)
            .field("single_connection", &self.single_connection)
            .finish_non_exhaustive()
    }
}

impl SqliteOptions {
    /// The defaults: busy timeout 5 s, [`Durability::Full`], escalation after
    /// 3 rejections, the system clock, read-write, batches of up to 1,024
    /// records, no size limit.
    pub fn new() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            durability: Durability::Full,
            common: options::Common::new(),
            max_database_bytes: None,
            single_connection: false,
        }
    }

    /// How long to wait for another connection's write lock before failing
    /// with `store_busy`.
    #[must_use]
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How commits are made durable.
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// After how many rejections a session is escalated (at least 1).
    #[must_use]
    pub fn escalate_after(mut self, rejections: u32) -> Self {
        self.common.set_escalate_after(rejections);
        self
    }

    /// The clock for times the caller does not pass.
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.common.clock = clock;
        self
    }

    /// Opens the database read-only (for `audit verify`, `tail`, `export`):
    /// nothing is created or migrated, and every write fails with
    /// `store_read_only`.
    #[must_use]
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.common.read_only = read_only;
        self
    }

    /// The most records one group commit writes in one transaction.
    #[must_use]
    pub fn max_batch(mut self, records: usize) -> Self {
        self.common.set_max_batch(records);
        self
    }

    /// A bound on the database's size; writes beyond it fail with
    /// `store_full`.
    #[must_use]
    pub fn max_database_bytes(mut self, bytes: u64) -> Self {
        self.max_database_bytes = Some(bytes);
        self
    }

    /// One connection that reads and writes, instead of a writer and a
    /// pool of readers: for a process that makes a call or two and exits
    /// (fewer files opened, fewer pragmas run). Reads then wait for a
    /// commit in progress.
    #[must_use]
    pub fn single_connection(mut self, single: bool) -> Self {
        self.single_connection = single;
        self
    }

    /// Opens (creating and migrating if needed) the database at `path`.
    pub fn open(self, path: impl AsRef<Path>) -> Result<SqliteStore, Error> {
        let path = path.as_ref();
        let open_err = |e| Error::db("opening the database", e);
        if self.common.read_only {
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
            conn.busy_timeout(self.busy_timeout).map_err(open_err)?;
            schema::check(&conn)?;
            return Ok(SqliteStore::new(
                conn,
                Vec::new(),
                self,
                ShmGuard::for_database(path),
            ));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let shm = ShmGuard::for_database(path);
        shm.check()?;
        let mut writer = Connection::open_with_flags(path, flags).map_err(open_err)?;
        writer.busy_timeout(self.busy_timeout).map_err(open_err)?;
        let mode: String = writer
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(open_err)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!("the database cannot use a write-ahead log (journal mode `{mode}`)"),
            ));
        }
        self.configure_writer(&writer)?;
        schema::migrate(&mut writer, self.common.clock.now().unix_millis())?;
        let pool = if self.single_connection {
            0
        } else {
            READERS + HOT_READERS
        };
        let mut readers = Vec::with_capacity(pool);
        for _ in 0..pool {
            let reader = Connection::open_with_flags(path, flags).map_err(open_err)?;
            reader.busy_timeout(self.busy_timeout).map_err(open_err)?;
            reader
                .pragma_update(None, "query_only", true)
                .map_err(open_err)?;
            readers.push(reader);
        }
        Ok(SqliteStore::new(writer, readers, self, shm))
    }

    /// Opens a private in-memory database (tests, benchmarks): nothing
    /// survives the store.
    pub fn open_in_memory(self) -> Result<SqliteStore, Error> {
        let open_err = |e| Error::db("opening the database", e);
        let mut conn = Connection::open_in_memory().map_err(open_err)?;
        self.configure_writer(&conn)?;
        schema::migrate(&mut conn, self.common.clock.now().unix_millis())?;
        Ok(SqliteStore::new(conn, Vec::new(), self, ShmGuard::none()))
    }

    fn configure_writer(&self, conn: &Connection) -> Result<(), Error> {
        let err = |e| Error::db("configuring the database", e);
        let sync = match self.durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", sync).map_err(err)?;
        if let Some(bytes) = self.max_database_bytes {
            let page: i64 = conn
                .query_row("PRAGMA page_size", [], |r| r.get(0))
                .map_err(err)?;
            let pages = i64::try_from(bytes).unwrap_or(i64::MAX) / page.max(512);
            let _: i64 = conn
                .query_row(
                    &format!("PRAGMA max_page_count = {}", pages.max(1)),
                    [],
                    |r| r.get(0),
                )
                .map_err(err)?;
        }
        Ok(())
    }
}
