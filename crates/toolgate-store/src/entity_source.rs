//! The PostgreSQL entity source: the gate fetches a call's resource from the
//! system of record with one query (see `toolgate::authz::EntitySource`).
//! It lives here, beside the store's own PostgreSQL code, so that the gate
//! crate holds no database driver.
//!
//! [`connect_source`] builds it for a config's `[[authorization.sources]]`
//! entry of `kind = "postgres"`; give it to
//! `toolgate::Gate::from_config_with` (the CLI, the HTTP service and
//! [`crate::StoreGate::from_config`] do).

use std::str::FromStr as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use postgres::types::Type;
use postgres::{Client, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;
use toolgate::authz::{EntitySource, SourceError, SourceErrorKind};
use toolgate::config::{EntitySourceConfig, SourceKind};

use crate::pg::tls;

/// Fetches entities with one query: `$1` is the entity type (`Order`),
/// `$2` its id, both `text`; the query answers no row (no such entity) or
/// one row of one `text` column holding the entity's Cedar JSON (cast a
/// `json`/`jsonb` column with `::text`). More rows, another column count or
/// type, `NULL`, or an answer over `max_bytes` are errors, and the gate
/// denies.
///
/// One connection, opened when first needed (and again after it is lost),
/// with `statement_timeout` set to the timeout and the connection and TCP
/// timeouts bounded by it: a query that runs longer is cancelled by the
/// server and answers `timeout`. The URL takes `sslmode` and `sslrootcert`
/// as the store's does.
pub struct PgEntitySource {
    config: postgres::Config,
    tls: MakeRustlsConnect,
    query: String,
    timeout: Duration,
    max_bytes: usize,
    conn: Mutex<Option<(Client, Statement)>>,
}

impl std::fmt::Debug for PgEntitySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: only the host names are shown.
        f.debug_struct("PgEntitySource")
            .field("hosts", &self.config.get_hosts().len())
            .field("timeout", &self.timeout)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl PgEntitySource {
    /// A source querying the database at `url` with `query`. Nothing is
    /// connected yet; an error here is a URL that is not one.
    pub fn new(
        url: &str,
        query: &str,
        timeout: Duration,
        max_bytes: usize,
    ) -> Result<Self, String> {
        let (driver, settings) = tls::split(url).map_err(|e| e.to_string())?;
        let connector = tls::connector(&settings).map_err(|e| e.to_string())?;
        let mut config = postgres::Config::from_str(&driver)
            .map_err(|e| format!("the entity source's URL is not a PostgreSQL URL: {e}"))?;
        config.connect_timeout(timeout);
        config.tcp_user_timeout(timeout);
        Ok(Self {
            config,
            tls: connector,
            query: query.to_owned(),
            timeout,
            max_bytes,
            conn: Mutex::new(None),
        })
    }

    fn connect(&self) -> Result<(Client, Statement), SourceError> {
        let mut client = self
            .config
            .connect(self.tls.clone())
            .map_err(|e| pg_error("connecting", &e))?;
        let ms = self.timeout.as_millis().max(1);
        client
            .batch_execute(&format!(
                "SET statement_timeout = {ms}; SET default_transaction_read_only = on"
            ))
            .map_err(|e| pg_error("configuring the connection", &e))?;
        let statement = client
            .prepare_typed(&self.query, &[Type::TEXT, Type::TEXT])
            .map_err(|e| pg_error("preparing the query", &e))?;
        match statement.columns() {
            [column] if *column.type_() == Type::TEXT || *column.type_() == Type::VARCHAR => {}
            _ => {
                return Err(SourceError::new(
                    SourceErrorKind::Malformed,
                    "the query must answer one text column (cast json with ::text)",
                ))
            }
        }
        Ok((client, statement))
    }
}

impl EntitySource for PgEntitySource {
    fn fetch(&self, entity_type: &str, id: &str) -> Result<Option<String>, SourceError> {
        let mut slot = self
            .conn
            .lock()
            .map_err(|_| SourceError::new(SourceErrorKind::Unavailable, "connection poisoned"))?;
        if slot.is_none() {
            *slot = Some(self.connect()?);
        }
        let Some((client, statement)) = slot.as_mut() else {
            return Err(SourceError::new(
                SourceErrorKind::Unavailable,
                "no connection",
            ));
        };
        // Two rows are enough to know there are too many.
        let rows = client
            .query_raw(&*statement, [entity_type, id])
            .and_then(|mut it| {
                use postgres::fallible_iterator::FallibleIterator as _;
                let mut rows = Vec::with_capacity(2);
                while rows.len() < 2 {
                    match it.next()? {
                        Some(row) => rows.push(row),
                        None => break,
                    }
                }
                Ok(rows)
            });
        let rows = match rows {
            Ok(rows) => rows,
            Err(e) => {
                let error = pg_error("querying", &e);
                if client.is_closed() || error.kind() != SourceErrorKind::Timeout {
                    // Connect afresh next time.
                    *slot = None;
                }
                return Err(error);
            }
        };
        let row = match rows.as_slice() {
            [] => return Ok(None),
            [row] => row,
            _ => {
                return Err(SourceError::new(
                    SourceErrorKind::Malformed,
                    "the query answered more than one row",
                ))
            }
        };
        let text: Option<String> = row.try_get(0).map_err(|e| {
            SourceError::new(SourceErrorKind::Malformed, format!("the row's column: {e}"))
        })?;
        let text = text.ok_or_else(|| {
            SourceError::new(SourceErrorKind::Malformed, "the query answered NULL")
        })?;
        if text.len() > self.max_bytes {
            return Err(SourceError::new(
                SourceErrorKind::TooLarge,
                format!("the entity is over {} bytes", self.max_bytes),
            ));
        }
        Ok(Some(text))
    }
}

/// A driver error while `doing`: `timeout` for a cancelled statement or a
/// connection that timed out.
fn pg_error(doing: &str, e: &postgres::Error) -> SourceError {
    let timed_out = e.code() == Some(&postgres::error::SqlState::QUERY_CANCELED)
        || std::error::Error::source(e)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
    let kind = if timed_out {
        SourceErrorKind::Timeout
    } else {
        SourceErrorKind::Unavailable
    };
    SourceError::new(kind, format!("{doing}: {e}"))
}

/// The source a `kind = "postgres"` entry names (`Ok(None)` for other
/// kinds, which the gate builds itself): the connector to give
/// `toolgate::Gate::from_config_with` or `toolgate::authz::from_config_with`.
pub fn connect_source(
    source: &EntitySourceConfig,
) -> Result<Option<Arc<dyn EntitySource>>, String> {
    match source.kind() {
        SourceKind::Postgres { url, query } => Ok(Some(Arc::new(PgEntitySource::new(
            url,
            query,
            source.timeout(),
            source.max_bytes(),
        )?))),
        _ => Ok(None),
    }
}
