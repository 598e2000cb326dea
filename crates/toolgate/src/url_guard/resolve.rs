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
