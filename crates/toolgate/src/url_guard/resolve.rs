//! Resolve mode: the addresses a host name resolves to are checked too, and
//! pinned, so that the tool connects to an address the gate checked and a
//! second lookup (DNS rebinding) cannot move it.

use std::io;
use std::net::{IpAddr, ToSocketAddrs};

/// Resolves a host name to its addresses.
///
/// The gate calls it once per checked URL, with the host as the URL
/// serializes it (ASCII, lower case, punycode for IDNs) and the effective
/// port. An implementation should return every address it would connect
/// to; returning an error or no address denies the URL
/// ([`UrlDenialCode::ResolveFailed`](super::UrlDenialCode::ResolveFailed)).
pub trait Resolve {
    /// The addresses of `host`.
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>>;
}

/// The system resolver, through [`ToSocketAddrs`] (`getaddrinfo` on Unix).
///
/// It blocks; call it from a blocking context.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct SystemResolver;

impl SystemResolver {
    /// The system resolver.
    pub const fn new() -> Self {
        Self
    }
}

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        Ok((host, port).to_socket_addrs()?.map(|a| a.ip()).collect())
    }
}

/// A fixed table of names and their addresses, for tests and offline use
/// (the config's `[gate.resolver] mode = "static"`): a name the table does
/// not hold does not resolve (`url_resolve_failed`), so nothing passes that
/// the operator did not list. Keys are exact host names (lower case, as a
/// URL serializes them) or `*.` wildcards for every name strictly below a
/// domain; an exact key wins over a wildcard, a longer wildcard over a
/// shorter one.
///
/// ```
/// use toolgate::url_guard::{Resolve, StaticResolver};
///
/// let table = StaticResolver::new()
///     .with("example.com", ["93.184.216.34".parse()?])
///     .with("*.example.com", ["93.184.216.35".parse()?]);
/// assert_eq!(table.resolve("docs.example.com", 443)?, ["93.184.216.35".parse::<std::net::IpAddr>()?]);
/// assert!(table.resolve("example.org", 443).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticResolver {
    names: std::collections::BTreeMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table: nothing resolves.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the addresses of `name` (lower-cased).
    #[must_use]
    pub fn with(mut self, name: &str, addresses: impl IntoIterator<Item = IpAddr>) -> Self {
        self.names
            .insert(name.to_ascii_lowercase(), addresses.into_iter().collect());
        self
    }

    /// The names in the table, with their addresses.
    pub fn names(&self) -> impl Iterator<Item = (&str, &[IpAddr])> {
        self.names.iter().map(|(n, a)| (n.as_str(), a.as_slice()))
    }
}

impl Resolve for StaticResolver {
    fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        let host = host.to_ascii_lowercase();
        if let Some(found) = self.names.get(&host) {
            return Ok(found.clone());
        }
        // The longest wildcard whose domain the host is strictly below.
        let mut rest = host.as_str();
        while let Some((_, parent)) = rest.split_once('.') {
            if let Some(found) = self.names.get(&format!("*.{parent}")) {
                return Ok(found.clone());
            }
            rest = parent;
        }
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            "not in the static resolver table",
        ))
    }
}
