//! The store tests' backends: every test body written against `&Db` runs
//! once on SQLite (a file in a temporary folder) and once on PostgreSQL (a
//! fresh database on the server `TOOLGATE_TEST_POSTGRES_URL` names, default
//! `postgres://postgres@127.0.0.1:5432/test`, dropped afterwards: see
//! [`toolgate_testkit::PgDatabase`]).
//!
//! Without a reachable PostgreSQL the PostgreSQL runs say so and pass,
//! unless `TOOLGATE_REQUIRE_EXTERNAL=1` (CI), when they fail.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers, not every test file uses each"
)]

use std::sync::Arc;
use std::time::Duration;

use toolgate_store::{ManualClock, PgOptions, SqliteOptions, Store};

pub use toolgate_testkit::PgDatabase;

/// One database of either kind; [`Db::open`] gives a new store on it each
/// time (as another process or replica would open it).
pub enum Db {
    Sqlite(tempfile::TempDir),
    Postgres(PgDatabase),
}

impl Db {
    pub fn sqlite() -> Self {
        Self::Sqlite(tempfile::tempdir().unwrap())
    }

    /// `None`: no PostgreSQL here (the test passes after saying so).
    pub fn postgres() -> Option<Self> {
        PgDatabase::create().map(Self::Postgres)
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }

    /// A new store on this database, on `clock`, escalating after 3.
    pub fn open(&self, clock: &ManualClock) -> Box<dyn Store> {
        self.open_with(clock, 3)
    }

    /// A new store on this database, on `clock`, escalating after
    /// `escalate_after` rejections.
    pub fn open_with(&self, clock: &ManualClock, escalate_after: u32) -> Box<dyn Store> {
        let clock = Arc::new(clock.clone());
        match self {
            Self::Sqlite(dir) => Box::new(
                SqliteOptions::new()
                    .clock(clock)
                    .escalate_after(escalate_after)
                    .busy_timeout(Duration::from_secs(30))
                    .open(dir.path().join("state.db"))
                    .unwrap(),
            ),
            Self::Postgres(db) => Box::new(
                PgOptions::new()
                    .clock(clock)
                    .escalate_after(escalate_after)
                    .lock_timeout(Duration::from_secs(30))
                    .open(db.url())
                    .unwrap(),
            ),
        }
    }

    /// A new store on this database with the default options, or why it
    /// cannot be opened.
    pub fn try_open(&self, read_only: bool) -> Result<Box<dyn Store>, toolgate_store::Error> {
        Ok(match self {
            Self::Sqlite(dir) => Box::new(
                SqliteOptions::new()
                    .read_only(read_only)
                    .open(dir.path().join("state.db"))?,
            ),
            Self::Postgres(db) => Box::new(PgOptions::new().read_only(read_only).open(db.url())?),
        })
    }

    /// Runs `sql` directly on the database (tampering around the store).
    pub fn execute(&self, sql: &str) {
        match self {
            Self::Sqlite(dir) => {
                let conn = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
                conn.execute_batch(sql).unwrap();
            }
            Self::Postgres(db) => db.execute(sql),
        }
    }
}

impl Db {
    /// Reads one integer directly from the database (looking around the
    /// store); `None` for no row or a `NULL`.
    pub fn query_i64(&self, sql: &str) -> Option<i64> {
        match self {
            Self::Sqlite(dir) => {
                let conn = rusqlite::Connection::open(dir.path().join("state.db")).unwrap();
                let mut stmt = conn.prepare(sql).unwrap();
                let mut rows = stmt.query([]).unwrap();
                rows.next().unwrap().and_then(|r| r.get(0).unwrap())
            }
            Self::Postgres(db) => {
                let mut client = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
                client
                    .query_opt(sql, &[])
                    .unwrap()
                    .and_then(|r| r.get::<_, Option<i64>>(0))
            }
        }
    }
}

/// Generates, for each named body `fn name(db: &Db)`, the tests
/// `sqlite::name` and `postgres::name`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(&super::common::Db::sqlite());
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if let Some(db) = super::common::Db::postgres() {
                        super::$name(&db);
                    }
                }
            )*
        }
    };
}
