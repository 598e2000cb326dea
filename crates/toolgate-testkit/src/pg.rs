//! Fresh PostgreSQL databases for tests, on the server
//! `TOOLGATE_TEST_POSTGRES_URL` names (default
//! `postgres://postgres@127.0.0.1:5432/test`), each dropped after its test.
//!
//! Without a reachable server a test says so and passes, unless
//! `TOOLGATE_REQUIRE_EXTERNAL=1` (CI), when it fails: see [`crate::skip`].

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The environment variable naming the PostgreSQL server tests use.
pub const POSTGRES_URL_ENV: &str = "TOOLGATE_TEST_POSTGRES_URL";

/// The server when [`POSTGRES_URL_ENV`] is not set.
pub const DEFAULT_POSTGRES_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// The PostgreSQL server the tests use, as a URL.
pub fn pg_base_url() -> String {
    std::env::var(POSTGRES_URL_ENV).unwrap_or_else(|_| DEFAULT_POSTGRES_URL.to_owned())
}

/// `url` with its database name replaced by `db` (its query kept).
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
    let mut out = format!("{}/{db}", main.get(..host_end).unwrap_or(main));
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// An administrative connection to the test server, or `None` (after
/// saying why, through [`crate::skip`]) when there is none and it is not
/// required.
///
/// # Panics
///
/// When [`POSTGRES_URL_ENV`] is not a PostgreSQL URL, or (through
/// [`crate::skip`]) when the server is required and cannot be reached.
#[expect(clippy::panic, reason = "a malformed test setting fails the test")]
pub fn pg_admin() -> Option<postgres::Client> {
    let mut config: postgres::Config = pg_base_url()
        .parse()
        .unwrap_or_else(|e| panic!("{POSTGRES_URL_ENV}: {e}"));
    config.connect_timeout(Duration::from_secs(3));
    match config.connect(postgres::NoTls) {
        Ok(c) => Some(c),
        Err(e) => {
            crate::skip(&format!(
                "no PostgreSQL at {POSTGRES_URL_ENV} (default {DEFAULT_POSTGRES_URL}): {e}"
            ));
            None
        }
    }
}

/// A fresh, empty PostgreSQL database, dropped with the value.
#[derive(Debug)]
pub struct PgDatabase {
    name: String,
    url: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl PgDatabase {
    /// A new database with a name no other test (in this process or
    /// another) uses; `None` when there is no server (see [`pg_admin`]).
    ///
    /// # Panics
    ///
    /// When the server refuses to create it.
    #[expect(clippy::panic, reason = "a failed setup fails the test")]
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
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        Some(Self {
            url: with_dbname(&pg_base_url(), &name),
            name,
        })
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A URL of the database, for a store or a config.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs `sql` on this database (tampering, inspection).
    ///
    /// # Panics
    ///
    /// When it cannot connect or `sql` fails.
    #[expect(clippy::panic, reason = "a failed step fails the test")]
    pub fn execute(&self, sql: &str) {
        let mut c = postgres::Client::connect(&self.url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.name));
        c.batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Lets connections in, or keeps every new one out (the database is
    /// "away" for its clients while the server runs on for other tests).
    ///
    /// # Panics
    ///
    /// When the server is gone or refuses.
    #[expect(clippy::panic, reason = "a failed step fails the test")]
    pub fn set_allow_connections(&self, allow: bool) {
        let sql = format!("ALTER DATABASE \"{}\" ALLOW_CONNECTIONS {allow}", self.name);
        admin_or_panic()
            .batch_execute(&sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Ends every other connection to this database (as an administrator
    /// killing backends, or a failover, would); returns how many.
    ///
    /// # Panics
    ///
    /// When the server is gone or refuses.
    #[expect(clippy::panic, reason = "a failed step fails the test")]
    pub fn terminate_connections(&self) -> i64 {
        let row = admin_or_panic()
            .query_one(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&self.name],
            )
            .unwrap_or_else(|e| panic!("terminating connections to {}: {e}", self.name));
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

/// An administrative connection for a database that exists: the server
/// was there when it was created.
#[expect(clippy::panic, reason = "a server gone mid-test fails the test")]
fn admin_or_panic() -> postgres::Client {
    pg_admin().unwrap_or_else(|| panic!("the PostgreSQL server went away"))
}
