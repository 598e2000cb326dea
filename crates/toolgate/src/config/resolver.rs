//! The `[resolver]` table: how URL hosts are resolved (issue 31). With the
//! table present, every `url_policy` resolves its host unless it says
//! `resolve = false`, and so does the default URL guard; without it, only
//! policies with `resolve = true` do (with the system resolver).
//!
//! ```toml
//! [resolver]
//! mode = "static"      # a fixed table (tests, offline); "system": the system's resolver
//! hosts = { "example.com" = ["93.184.216.34"], "*.example.com" = ["93.184.216.34"] }
//! ```
//!
//! A name the static table does not hold does not resolve: the call is
//! denied `url_policy` (`url_resolve_failed`).

use std::net::IpAddr;
use std::sync::Arc;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;
use crate::url_guard::{Resolve, StaticResolver, SystemResolver};

/// The most names a static table holds.
pub const MAX_STATIC_NAMES: usize = 10_000;
/// The most addresses one name of a static table holds.
pub const MAX_STATIC_ADDRESSES: usize = 64;

/// The `[resolver]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolverConfig {
    /// `mode = "system"`: the system's resolver (`getaddrinfo`).
    System,
    /// `mode = "static"`: the `hosts` table, nothing else.
    Static(StaticResolver),
}

impl ResolverConfig {
    /// The resolver to give the gate.
    pub fn resolver(&self) -> Arc<dyn Resolve + Send + Sync> {
        match self {
            Self::System => Arc::new(SystemResolver::new()),
            Self::Static(table) => Arc::new(table.clone()),
        }
    }
}

impl Loader<'_> {
    /// `[resolver]`: a mode, and for `static` a table of names (exact or
    /// `*.` wildcards) to IP addresses.
    pub(super) fn resolver(&self, raw: &RawConfig) -> Result<Option<ResolverConfig>, Error> {
        let Some(table) = &raw.resolver else {
            return Ok(None);
        };
        let mode = table.mode.get_ref().as_str();
        let at = table.mode.span().start;
        let bad = |at: usize, key: &str, message: String| {
            self.at_key(ErrorCode::InvalidResolver, at, key, message)
        };
        match (mode, &table.hosts) {
            ("system", None) => Ok(Some(ResolverConfig::System)),
            ("system", Some(h)) => Err(bad(
                h.span().start,
                "hosts",
                "`hosts` is the static table: set `mode = \"static\"`, or drop it".to_owned(),
            )),
            ("static", hosts) => {
                let mut resolver = StaticResolver::new();
                let Some(hosts) = hosts else {
                    return Ok(Some(ResolverConfig::Static(resolver)));
                };
                let at = hosts.span().start;
                if hosts.get_ref().len() > MAX_STATIC_NAMES {
                    return Err(bad(
                        at,
                        "hosts",
                        format!("more than {MAX_STATIC_NAMES} names"),
                    ));
                }
                for (name, addresses) in hosts.get_ref() {
                    if let Some(problem) = name_problem(name) {
                        return Err(bad(
                            at,
                            "hosts",
                            format!("`{}`: {problem}", name.escape_debug()),
                        ));
                    }
                    if addresses.is_empty() || addresses.len() > MAX_STATIC_ADDRESSES {
                        return Err(bad(
                            at,
                            "hosts",
                            format!(
                                "`{}`: between 1 and {MAX_STATIC_ADDRESSES} addresses",
                                name.escape_debug()
                            ),
                        ));
                    }
                    let mut ips = Vec::with_capacity(addresses.len());
                    for a in addresses {
                        let ip: IpAddr = a.parse().map_err(|_| {
                            bad(
                                at,
                                "hosts",
                                format!(
                                    "`{}`: `{}` is not an IP address",
                                    name.escape_debug(),
                                    a.escape_debug()
                                ),
                            )
                        })?;
                        ips.push(ip);
                    }
                    resolver = resolver.with(name, ips);
                }
                Ok(Some(ResolverConfig::Static(resolver)))
            }
            (other, _) => Err(bad(
                at,
                "mode",
                format!(
                    "unknown resolver mode `{}`: expected \"static\" or \"system\"",
                    other.escape_debug()
                ),
            )),
        }
    }
}

/// Why a key of the static table is not a host name (lower case, as URLs
/// serialize hosts) or a `*.` wildcard over one.
fn name_problem(name: &str) -> Option<&'static str> {
    let bare = name.strip_prefix("*.").unwrap_or(name);
    if bare.is_empty() || bare.len() > 253 {
        return Some("expected a host name of 1 to 253 bytes");
    }
    let ok = bare.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    (!ok).then_some("expected a lower-case host name (letters, digits, `-`), or `*.` and one")
}
