//! The options a PostgreSQL store is opened with, and the opening.

use super::*;

impl PgOptions {
    /// The defaults: lock timeout 5 s, connect timeout 5 s, escalation after
    /// 3 rejections, the system clock, read-write, batches of up to 1,024
    /// records, up to 8 connections, migrations applied on open.
    pub fn new() -> Self {
        Self {
            lock_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            common: options::Common::new(),
            connections: 8,
            migrate: true,
        }
    }

    /// How long a write waits for another transaction's row lock before
    /// failing with `store_busy`.
    #[must_use]
    pub fn lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// How long connecting may take before the call fails with
    /// `store_unavailable` (unless the URL sets `connect_timeout`).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
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

    /// The most connections this store opens (at least 1); they are opened
    /// when first needed. A store with a [`Store::subscribe`]r keeps one
    /// more, listening for the changes other replicas push.
    #[must_use]
    pub fn connections(mut self, connections: usize) -> Self {
        self.connections = connections.max(1);
        self
    }

    /// Whether opening applies pending migrations (the default) or only
    /// checks that the schema is current.
    #[must_use]
    pub fn migrate(mut self, migrate: bool) -> Self {
        self.migrate = migrate;
        self
    }

    /// Connects to the database `url` names (`postgres://user@host:5432/db`,
    /// or libpq's `key=value` form), migrates it unless read-only, and
    /// returns the store. Error messages never repeat the URL (it may hold a
    /// password).
    ///
    /// TLS (rustls) follows the URL's `sslmode` and `sslrootcert` as libpq
    /// reads them: `disable`; `prefer` (the default) and `require`, which
    /// encrypt without checking the certificate unless a root certificate
    /// is given; `verify-ca` (the chain to a root of `sslrootcert`); and
    /// `verify-full` (the chain and the host name), the only one that
    /// proves who the server is. `sslrootcert` is a PEM file, or `system`
    /// (with `verify-full` only). A mode that requires TLS never falls back
    /// to plaintext; what this client cannot do (`sslmode=allow`, client
    /// certificates, CRLs) fails here with `invalid_input`.
    pub fn open(self, url: &str) -> Result<PgStore, Error> {
        let (url, tls) = tls::split(url)?;
        let connector = tls::connector(&tls)?;
        let mut config = postgres::Config::from_str(&url).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!("the store url is not a PostgreSQL connection string ({e})"),
            )
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(self.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("toolgate");
        }
        // A database host that vanishes without closing its connections (a
        // crash, a cut network) is noticed within about 25 s, after which
        // calls fail `store_unavailable` and the pool reconnects.
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3);
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(Duration::from_secs(15));
        }
        let mut setup = format!(
            "SET lock_timeout = {}",
            self.lock_timeout.as_millis().max(1)
        );
        if self.common.read_only {
            setup.push_str("; SET default_transaction_read_only = on");
        }
        let listen = Listen::new(config.clone(), connector.clone());
        let pool = Pool::new(config, connector, setup, self.connections);
        let mut first = pool.connect()?;
        if self.migrate && !self.common.read_only {
            schema::migrate(&mut first, self.common.clock.now().unix_millis())?;
        } else {
            schema::check(&mut first)?;
        }
        drop_client(first);
        Ok(PgStore {
            pool,
            listen,
            group: GroupCommit::new(self.common.max_batch),
            segment: Mutex::new(None),
            opening: Mutex::new(()),
            open: self.common.open(),
        })
    }
}
