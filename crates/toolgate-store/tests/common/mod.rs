//! The store tests' backends: every test body written against `&Db` runs
//! once on SQLite (a file in a temporary folder) and once on PostgreSQL (a
//! fresh database on the server `TOOLGATE_TEST_POSTGRES_URL` names, default
//! `postgres://postgres@127.0.0.1:5432/test`, dropped afterwards).
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

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use toolgate_store::{ManualClock, PgOptions, SqliteOptions, Store};

/// The PostgreSQL server the tests use.
pub fn pg_base_url() -> String {
    std::env::var("TOOLGATE_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// `url` with its database name replaced by `db`.
pub fn with_dbname(url: &str, db: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (url, None),
    };
    let scheme_end = main.find("://").map_or(0, |i| i + 3);
    let host_end = main
        .get(scheme_end..)
        .and_then(|rest| rest.find('/'))
        .map_or(main.len(), |i| scheme_end + i);
    let mut out = format!("{}/{db}", &main[..host_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// An administrative connection to the test server, or `None` (after
/// saying why) when there is none and it is not required.
pub fn pg_admin() -> Option<postgres::Client> {
    let url = pg_base_url();
    let mut config: postgres::Config = url.parse().expect("TOOLGATE_TEST_POSTGRES_URL");
    config.connect_timeout(Duration::from_secs(3));
    match config.connect(postgres::NoTls) {
        Ok(c) => Some(c),
        Err(e) => {
            let msg = format!(
                "no PostgreSQL at TOOLGATE_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test): {e}"
            );
            toolgate_testkit::skip(&msg);
            None
        }
    }
}

/// A fresh, empty PostgreSQL database, dropped with the value.
pub struct PgDatabase {
    pub name: String,
    pub url: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl PgDatabase {
    /// `None` when there is no server (see [`pg_admin`]).
    pub fn create() -> Option<Self> {
        let mut admin = pg_admin()?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "toolgate_t{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap();
        Some(Self {
            url: with_dbname(&pg_base_url(), &name),
            name,
        })
    }

    /// Runs `sql` on this database (tampering, inspection).
    pub fn execute(&self, sql: &str) {
        let mut c = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
        c.batch_execute(sql).unwrap();
    }

    /// Lets connections in, or keeps every new one out (the database is
    /// "away" for its clients while the server runs on for other tests).
    pub fn set_allow_connections(&self, allow: bool) {
        let mut admin = pg_admin().unwrap();
        admin
            .batch_execute(&format!(
                "ALTER DATABASE \"{}\" ALLOW_CONNECTIONS {allow}",
                self.name
            ))
            .unwrap();
    }

    /// Ends every other connection to this database (as an administrator
    /// killing backends, or a failover, would); returns how many.
    pub fn terminate_connections(&self) -> i64 {
        let mut admin = pg_admin().unwrap();
        let row = admin
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&self.name],
            )
            .unwrap();
        row.get(0)
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Some(mut admin) = pg_admin() {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.name
            ));
        }
    }
}

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
                    .open(&db.url)
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
            Self::Postgres(db) => Box::new(PgOptions::new().read_only(read_only).open(&db.url)?),
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
