//! [`Limits`]: the numbers a listener holds its connections to.

use std::time::Duration;

/// Connections served at once unless a front end says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// A request's headers must arrive within this unless a front end says
/// otherwise.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A request's body must arrive within this unless a front end says
/// otherwise.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a listener allows each connection (see the crate documentation for
/// what each limit promises). Built from [`Limits::new`], whose defaults
/// are the `[server]` table's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    max_connections: usize,
    per_address: Option<usize>,
    header_timeout: Duration,
    body_timeout: Duration,
    drain_timeout: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self::new()
    }
}

impl Limits {
    /// 1,024 connections, no per-address budget, headers within 10 s, a
    /// body within 30 s, and a stop that waits for every connection.
    #[must_use]
    pub fn new() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            per_address: None,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            drain_timeout: None,
        }
    }

    /// The limits of a `[server]` table: its `max_connections`,
    /// `header_timeout_seconds` and `body_timeout_seconds`. Every front end
    /// listens within these (one table, one set of slow-client defences).
    #[must_use]
    pub fn from_server(server: &crate::config::ServerConfig) -> Self {
        Self::new()
            .max_connections(server.max_connections())
            .header_timeout(server.header_timeout())
            .body_timeout(server.body_timeout())
    }

    /// At most `n` connections at once (0 is taken as 1).
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// At most `n` connections at once from one peer address (0 is taken
    /// as 1).
    #[must_use]
    pub fn per_address(mut self, n: usize) -> Self {
        self.per_address = Some(n.max(1));
        self
    }

    /// A request's headers must arrive within `d`.
    #[must_use]
    pub fn header_timeout(mut self, d: Duration) -> Self {
        self.header_timeout = d;
        self
    }

    /// A request's body must arrive within `d` of its headers.
    #[must_use]
    pub fn body_timeout(mut self, d: Duration) -> Self {
        self.body_timeout = d;
        self
    }

    /// On shutdown, wait at most `d` for the connections to close.
    #[must_use]
    pub fn drain_timeout(mut self, d: Duration) -> Self {
        self.drain_timeout = Some(d);
        self
    }

    /// The connection cap.
    pub fn connections(&self) -> usize {
        self.max_connections
    }

    /// The per-address budget, if any.
    pub fn address_budget(&self) -> Option<usize> {
        self.per_address
    }

    /// The header deadline.
    pub fn header_deadline(&self) -> Duration {
        self.header_timeout
    }

    /// The body deadline.
    pub fn body_deadline(&self) -> Duration {
        self.body_timeout
    }

    /// The stop's drain deadline, if any.
    pub fn drain_deadline(&self) -> Option<Duration> {
        self.drain_timeout
    }

    /// The share of the cap anonymous connections may hold: three
    /// quarters, at least one.
    pub fn anonymous_budget(&self) -> usize {
        (self.max_connections / 4 * 3).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_server_tables() {
        let l = Limits::new();
        assert_eq!(l.connections(), 1024);
        assert_eq!(l.address_budget(), None);
        assert_eq!(l.header_deadline(), Duration::from_secs(10));
        assert_eq!(l.body_deadline(), Duration::from_secs(30));
        assert_eq!(l.drain_deadline(), None);
        assert_eq!(l.anonymous_budget(), 768);
    }

    #[test]
    fn a_server_table_sets_the_connection_limits() {
        let config = toolgate::config::Config::parse(
            "[server]\nheader_timeout_seconds = 2\nbody_timeout_seconds = 3\nmax_connections = 7\n\
             [[tool]]\nname = \"a\"\nrisk = \"read\"\n\
             schema = { type = \"object\", additionalProperties = false }\n",
            "/nowhere/toolgate.toml",
        )
        .unwrap();
        let l = Limits::from_server(&crate::config::ServerConfig::from_config(&config).unwrap());
        assert_eq!(l.connections(), 7);
        assert_eq!(l.header_deadline(), Duration::from_secs(2));
        assert_eq!(l.body_deadline(), Duration::from_secs(3));
        assert_eq!(Limits::from_server(&Default::default()), Limits::new());
    }

    #[test]
    fn zero_is_one_and_the_anonymous_budget_never_vanishes() {
        let l = Limits::new().max_connections(0).per_address(0);
        assert_eq!((l.connections(), l.address_budget()), (1, Some(1)));
        assert_eq!(l.anonymous_budget(), 1);
        assert_eq!(Limits::new().max_connections(2).anonymous_budget(), 1);
        assert_eq!(Limits::new().max_connections(4).anonymous_budget(), 3);
    }
}
