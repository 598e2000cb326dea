//! The URL argument policy: where a tool may be sent (threat 3, SSRF).
//!
//! A [`UrlPolicyConfig`] (schemes, a host allowlist, ports) compiles once
//! into an immutable [`UrlPolicy`]. [`UrlPolicy::check`] reads a URL with the
//! WHATWG URL Standard (the `url` crate: the parser browsers use, which
//! normalizes every IPv4 spelling, `2130706433`, `0177.0.0.1`, `0x7f.1`,
//! `127.1`, to `127.0.0.1`, and maps IDNs to punycode) and returns either a
//! [`CheckedUrl`], whose normalized text is what the tool must use, or a
//! [`UrlDenial`] with a stable [`UrlDenialCode`].
//!
//! ```
//! use toolgate::url_guard::{UrlPolicy, UrlPolicyConfig};
//!
//! let policy = UrlPolicy::new(
//!     &UrlPolicyConfig::new()
//!         .with_schemes(["https"])
//!         .with_hosts(["*.example.com", "example.org"]),
//! )?;
//!
//! let ok = policy.check("HTTPS://Docs.Example.com:443/a?b#c").unwrap();
//! assert_eq!(ok.as_str(), "https://docs.example.com/a?b#c");
//! assert_eq!((ok.host(), ok.port()), ("docs.example.com", 443));
//!
//! let denied = policy.check("https://0x7f.1/latest/meta-data").unwrap_err();
//! assert_eq!(denied.code().as_str(), "url_forbidden_address");
//! assert_eq!(denied.to_string(), "url host is a forbidden address: loopback");
//! # Ok::<(), toolgate::url_guard::UrlPolicyError>(())
//! ```
//!
//! # The checks, in order
//!
//! The first failing check decides the code.
//!
//! 1. `url_too_long`: more bytes than [`UrlPolicyConfig::max_url_bytes`].
//! 2. `url_ambiguous`: a control character anywhere (the WHATWG parser
//!    silently drops tab, CR and LF, which other parsers keep), or a leading
//!    or trailing space.
//! 3. `url_invalid`: not an absolute URL (bad host, port above 65535, …).
//! 4. `url_scheme`: a scheme outside the policy (`file:`, `data:`,
//!    `javascript:`, `gopher:`, …). Schemes compare case-insensitively.
//! 5. `url_userinfo`: any `@` in the authority, even an empty userinfo.
//! 6. `url_ambiguous`: spellings that parsers disagree on and the WHATWG
//!    parser rewrites: anything but exactly `//` after the scheme
//!    (`http:evil.com`, `http:///evil.com`), a backslash before the query
//!    (`http://good.com\@evil.com`), a `%` in the authority
//!    (`http://%31%32%37.0.0.1/`), or a non-ASCII host that maps to a plain
//!    ASCII one (fullwidth `ｅｘａｍｐｌｅ.com`, `example。com`, soft hyphens).
//! 7. `url_forbidden_address`: an IP-literal host in a forbidden range (see
//!    [`AddressClass`]), whatever its spelling, including IPv6 forms that
//!    carry an IPv4 address (`[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`,
//!    `[64:ff9b::a9fe:a9fe]`, `[2002:7f00:1::]`). The allowlist does not
//!    help, unless [`danger::DangerousUrlPolicyConfig::allow_private_addresses`].
//! 8. `url_forbidden_host`: a name for the local machine or network
//!    (single-label like `localhost` or `intranet`, `*.localhost`,
//!    `*.local`, `*.localdomain`, `*.internal`, `*.home.arpa`), a cloud
//!    metadata name (`metadata`, `metadata.google.internal`,
//!    `metadata.goog`, `instance-data`), a wildcard-DNS service or a name
//!    below one (`127.0.0.1.nip.io`, `sslip.io`, `localtest.me`, `lvh.me`,
//!    `rbndr.us`, …: they resolve to whatever address they spell), or a
//!    numeric-looking name (its last label starts with a digit: `1.2.3.4x`).
//!    One trailing dot is ignored here, so `localhost.` is caught too.
//! 9. `url_host_not_allowed`: the host matches no allowlist entry. Entries
//!    are exact names (`example.com`), wildcards (`*.example.com`: any name
//!    strictly below `example.com`, at any depth; not `example.com`, not
//!    `evil-example.com`, not `example.com.evil.net`), IP addresses (exact,
//!    in any spelling), or `*` (any host that passes the other checks).
//!    Entries are normalized like URL hosts (IDNA, lower case). A host with
//!    a trailing dot matches nothing.
//! 10. `url_port`: the effective port is not allowed; by default only the
//!     scheme's default port (`:0`, `:8080` are denied for `https`).
//!
//! Fragments and queries are allowed and kept.
//!
//! # Resolve mode
//!
//! [`UrlPolicy::check_resolved`] also resolves the host (a [`Resolve`]; the
//! [`SystemResolver`] uses the system's resolver), denies
//! `url_forbidden_address` if ANY address is forbidden (a public name such
//! as `meta.attacker.example` that points at `169.254.169.254`), `url_resolve_failed` if
//! there is none, and pins the addresses in [`CheckedUrl::pinned`]. A tool
//! that connects only to the pinned addresses is safe from DNS rebinding.
//!
//! # Which arguments are guarded
//!
//! A tool's `url_policy` entries in the config (see [`crate::config`]) name
//! the arguments by JSON Pointer, where a `*` token names every item of an
//! array or value of a map (`/links/*/href`). Every other string argument
//! that looks like a URL — the schema declares it one (`format` `uri`,
//! `uri-reference`, `iri` or `iri-reference`), its name is URL-like
//! ([`is_url_like_name`]), or its value parses as a network URL
//! ([`looks_like_network_url`]) — is checked by the default policy
//! ([`UrlPolicyConfig::default_guard`]), unless the tool exempts it by name
//! (`url_unchecked = [{ arg, reason }]`) or opts out whole
//! (`url_policy = "none"`). With a `[resolver]` table in the config, policies
//! and the default guard resolve hosts (a [`StaticResolver`] for tests and
//! offline use).
//!
//! # What the tool must do
//!
//! Use [`CheckedUrl::as_str`], never the raw argument, and connect only to
//! [`CheckedUrl::pinned`] when it is not empty. Do not follow redirects
//! without checking each location with the same policy.

mod address;
pub mod danger;
mod denial;
mod looks;
mod resolve;

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use url::{Host, Url};

pub use self::address::{classify, AddressClass};
pub use self::denial::{UrlDenial, UrlDenialCode, UrlPolicyError, UrlPolicyErrorCode};
pub use self::looks::{is_url_like_name, looks_like_network_url};
pub use self::resolve::{Resolve, StaticResolver, SystemResolver};

/// The default for [`UrlPolicyConfig::max_url_bytes`].
pub const DEFAULT_MAX_URL_BYTES: usize = 4096;
/// The largest [`UrlPolicyConfig::max_url_bytes`] a policy accepts.
pub const MAX_URL_BYTES_CEILING: usize = 65536;

/// Schemes a policy may allow: the WHATWG special schemes with a network host.
const SUPPORTED_SCHEMES: [&str; 5] = ["http", "https", "ws", "wss", "ftp"];

/// Host names of cloud metadata services (checked after one trailing dot is
/// removed).
const METADATA_NAMES: [&str; 5] = [
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Wildcard-DNS services: every name under them resolves to the address
/// it spells (`127.0.0.1.nip.io`, `7f000001.c0a80001.rbndr.us`) or to
/// loopback (`localtest.me`), so a name check cannot tell where they lead.
/// Forbidden under every policy, with the names below them.
const WILDCARD_DNS: [&str; 12] = [
    "nip.io",
    "sslip.io",
    "xip.io",
    "xip.name",
    "localtest.me",
    "lvh.me",
    "vcap.me",
    "lacolhost.com",
    "localho.st",
    "traefik.me",
    "1u.ms",
    "rbndr.us",
];

/// Suffixes of names that stay inside the local machine or network.
const LOCAL_SUFFIXES: [&str; 5] = [
    ".localhost",
    ".local",
    ".localdomain",
    ".internal",
    ".home.arpa",
];

/// What a URL policy allows, before compilation.
///
/// The defaults fail closed: scheme `https` only, no host at all, the
/// scheme's default port, URLs of at most [`DEFAULT_MAX_URL_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlPolicyConfig {
    /// Allowed schemes, case-insensitive; each one of `http`, `https`, `ws`,
    /// `wss`, `ftp`. Empty allows none.
    pub schemes: Vec<String>,
    /// The host allowlist: `example.com`, `*.example.com`, an IP address
    /// (`192.0.2.7`, `[2001:db8::1]`), or `*` for any host. Empty allows none.
    pub hosts: Vec<String>,
    /// Allowed ports. Empty means the default port of the URL's scheme only;
    /// otherwise exactly these (list the default port to keep it).
    pub ports: Vec<u16>,
    /// The longest URL, in bytes, checked at all.
    pub max_url_bytes: usize,
    pub(crate) allow_private_addresses: bool,
}

impl Default for UrlPolicyConfig {
    fn default() -> Self {
        Self {
            schemes: vec!["https".to_owned()],
            hosts: Vec::new(),
            ports: Vec::new(),
            max_url_bytes: DEFAULT_MAX_URL_BYTES,
            allow_private_addresses: false,
        }
    }
}

impl UrlPolicyConfig {
    /// The defaults: `https` only, no host, default ports.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the allowed schemes.
    #[must_use]
    pub fn with_schemes<I, S>(mut self, schemes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.schemes = schemes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the host allowlist.
    #[must_use]
    pub fn with_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the allowed ports (empty: each scheme's default port).
    #[must_use]
    pub fn with_ports<I: IntoIterator<Item = u16>>(mut self, ports: I) -> Self {
        self.ports = ports.into_iter().collect();
        self
    }

    /// Sets the longest URL checked, in bytes.
    #[must_use]
    pub fn with_max_url_bytes(mut self, max: usize) -> Self {
        self.max_url_bytes = max;
        self
    }

    /// The settings that weaken the guard.
    pub fn dangerous(&mut self) -> danger::DangerousUrlPolicyConfig<'_> {
        danger::DangerousUrlPolicyConfig { config: self }
    }

    /// Compiles the configuration; same as [`UrlPolicy::new`].
    pub fn compile(&self) -> Result<UrlPolicy, UrlPolicyError> {
        UrlPolicy::new(self)
    }
}

/// A compiled, immutable URL policy. Cheap to share; checking takes `&self`.
#[derive(Debug, Clone)]
pub struct UrlPolicy {
    schemes: BTreeSet<String>,
    any_host: bool,
    exact: BTreeSet<String>,
    /// Wildcard suffixes with their leading dot: `.example.com`.
    suffixes: Vec<String>,
    ips: BTreeSet<IpAddr>,
    ports: BTreeSet<u16>,
    max_url_bytes: usize,
    allow_private: bool,
}

impl UrlPolicy {
    /// Compiles a configuration. Every entry is validated; the first bad one
    /// is the error.
    pub fn new(config: &UrlPolicyConfig) -> Result<Self, UrlPolicyError> {
        if config.max_url_bytes == 0 || config.max_url_bytes > MAX_URL_BYTES_CEILING {
            return Err(UrlPolicyError::new(
                UrlPolicyErrorCode::InvalidLimit,
                config.max_url_bytes.to_string(),
                "max_url_bytes must be between 1 and 65536",
            ));
        }
        let mut schemes = BTreeSet::new();
        for scheme in &config.schemes {
            let lower = scheme.to_ascii_lowercase();
            if !SUPPORTED_SCHEMES.contains(&lower.as_str()) {
                return Err(UrlPolicyError::new(
                    UrlPolicyErrorCode::UnsupportedScheme,
                    scheme.as_str(),
                    "expected http, https, ws, wss or ftp",
                ));
            }
            schemes.insert(lower);
        }
        let mut policy = Self {
            schemes,
            any_host: false,
            exact: BTreeSet::new(),
            suffixes: Vec::new(),
            ips: BTreeSet::new(),
            ports: BTreeSet::new(),
            max_url_bytes: config.max_url_bytes,
            allow_private: config.allow_private_addresses,
        };
        for entry in &config.hosts {
            policy.add_host_entry(entry)?;
        }
        for &port in &config.ports {
            if port == 0 {
                return Err(UrlPolicyError::new(
                    UrlPolicyErrorCode::InvalidPort,
                    "0",
                    "port 0 is not a destination",
                ));
            }
            policy.ports.insert(port);
        }
        Ok(policy)
    }

    fn add_host_entry(&mut self, entry: &str) -> Result<(), UrlPolicyError> {
        let bad = |detail| UrlPolicyError::new(UrlPolicyErrorCode::InvalidHost, entry, detail);
        if entry == "*" {
            self.any_host = true;
            return Ok(());
        }
        let (wildcard, name) = match entry.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, entry),
        };
        if name.is_empty() {
            return Err(bad("empty host"));
        }
        if name.contains(|c: char| {
            c.is_whitespace()
                || c.is_control()
                || matches!(c, '*' | '/' | '?' | '#' | '@' | '\\' | '%')
        }) {
            return Err(bad(
                "expected a host name, an IP address, `*.` and a host name, or `*`",
            ));
        }
        if name.ends_with('.') {
            return Err(bad("trailing dot"));
        }
        let bracketed = name.starts_with('[');
        if !bracketed && name.contains(':') {
            return Err(bad(
                "a port (ports go in `ports`) or an unbracketed IPv6 address",
            ));
        }
        let parsed = Url::parse(&format!("http://{name}/")).map_err(|_| bad("not a valid host"))?;
        if parsed.port().is_some() || parsed.path() != "/" {
            return Err(bad("not a valid host"));
        }
        match parsed.host() {
            Some(Host::Domain(domain)) if !bracketed => {
                if wildcard {
                    if !domain.contains('.') {
                        return Err(bad("a wildcard needs at least two labels after `*.`"));
                    }
                    self.suffixes.push(format!(".{domain}"));
                } else {
                    self.exact.insert(domain.to_owned());
                }
            }
            Some(Host::Ipv4(ip)) if !wildcard => {
                self.ips.insert(IpAddr::V4(ip));
            }
            Some(Host::Ipv6(ip)) if !wildcard => {
                self.ips.insert(IpAddr::V6(ip));
            }
            _ => return Err(bad("an IP address cannot be a wildcard")),
        }
        Ok(())
    }

    /// Whether [`danger::DangerousUrlPolicyConfig::allow_private_addresses`]
    /// was set.
    pub fn allows_private_addresses(&self) -> bool {
        self.allow_private
    }

    /// Checks one URL (an argument of a proposed tool call) without
    /// resolving its host.
    ///
    /// For an IP-literal host, [`CheckedUrl::pinned`] holds that address;
    /// for a name it is empty.
    pub fn check(&self, raw: &str) -> Result<CheckedUrl, UrlDenial> {
        if raw.len() > self.max_url_bytes {
            return Err(UrlDenial::new(UrlDenialCode::TooLong));
        }
        if raw.bytes().any(|b| b < 0x20 || b == 0x7f) || raw.starts_with(' ') || raw.ends_with(' ')
        {
            return Err(UrlDenial::new(UrlDenialCode::Ambiguous));
        }
        let url = Url::parse(raw).map_err(|_| UrlDenial::new(UrlDenialCode::Invalid))?;
        if !self.schemes.contains(url.scheme()) {
            return Err(UrlDenial::new(UrlDenialCode::Scheme));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlDenial::new(UrlDenialCode::Userinfo));
        }
        let authority = raw_authority(raw).map_err(UrlDenial::new)?;
        let host = url
            .host()
            .ok_or(UrlDenial::new(UrlDenialCode::HostNotAllowed))?;
        let ip = match host {
            Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
            Host::Domain(domain) => {
                if !authority.is_ascii() && idna_rewrote_ascii(authority, domain) {
                    return Err(UrlDenial::new(UrlDenialCode::Ambiguous));
                }
                None
            }
        };
        let host_str = url.host_str().unwrap_or_default().to_owned();
        match ip {
            Some(addr) => {
                if !authority.is_ascii() {
                    return Err(UrlDenial::new(UrlDenialCode::Ambiguous));
                }
                self.check_address(addr)?;
                if !self.any_host && !self.ips.contains(&addr) {
                    return Err(UrlDenial::new(UrlDenialCode::HostNotAllowed));
                }
            }
            None => {
                self.check_name(&host_str)?;
                if !self.name_allowed(&host_str) {
                    return Err(UrlDenial::new(UrlDenialCode::HostNotAllowed));
                }
            }
        }
        let port = url
            .port_or_known_default()
            .ok_or(UrlDenial::new(UrlDenialCode::Port))?;
        let port_ok = if self.ports.is_empty() {
            Some(port) == default_port(url.scheme())
        } else {
            self.ports.contains(&port)
        };
        if !port_ok {
            return Err(UrlDenial::new(UrlDenialCode::Port));
        }
        Ok(CheckedUrl {
            url,
            host: host_str,
            port,
            ip,
            pinned: ip.into_iter().collect(),
        })
    }

    /// Checks one URL like [`check`](Self::check), then resolves its host
    /// with `resolver` and denies it if any address is forbidden. The
    /// addresses are pinned in [`CheckedUrl::pinned`], in the resolver's
    /// order without duplicates. An IP-literal host is not resolved.
    pub fn check_resolved(
        &self,
        raw: &str,
        resolver: &dyn Resolve,
    ) -> Result<CheckedUrl, UrlDenial> {
        let mut checked = self.check(raw)?;
        if checked.ip.is_some() {
            return Ok(checked);
        }
        let addresses = resolver
            .resolve(&checked.host, checked.port)
            .map_err(|e| UrlDenial::resolve(Some(e.kind())))?;
        if addresses.is_empty() {
            return Err(UrlDenial::resolve(None));
        }
        let mut pinned: Vec<IpAddr> = Vec::with_capacity(addresses.len());
        for addr in addresses {
            self.check_address(addr)?;
            if !pinned.contains(&addr) {
                pinned.push(addr);
            }
        }
        checked.pinned = pinned;
        Ok(checked)
    }

    /// Whether an address may be connected to under this policy: not in a
    /// forbidden range, or (with the dangerous opt-in) private but not a
    /// metadata service.
    pub fn check_address(&self, addr: IpAddr) -> Result<(), UrlDenial> {
        match classify(addr) {
            Some(AddressClass::Metadata) => Err(UrlDenial::address(AddressClass::Metadata)),
            Some(_) if self.allow_private => Ok(()),
            Some(class) => Err(UrlDenial::address(class)),
            None => Ok(()),
        }
    }

    fn check_name(&self, host: &str) -> Result<(), UrlDenial> {
        let name = host.strip_suffix('.').unwrap_or(host);
        let forbidden = || UrlDenial::new(UrlDenialCode::ForbiddenHost);
        if name.is_empty() || METADATA_NAMES.contains(&name) || is_wildcard_dns(name) {
            return Err(forbidden());
        }
        let last = name.rsplit('.').next().unwrap_or(name);
        if last.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(forbidden());
        }
        let local = !name.contains('.')
            || name == "localhost"
            || LOCAL_SUFFIXES.iter().any(|s| name.ends_with(s));
        if local && !self.allow_private {
            return Err(forbidden());
        }
        Ok(())
    }

    fn name_allowed(&self, host: &str) -> bool {
        if host.ends_with('.') {
            return false;
        }
        self.any_host
            || self.exact.contains(host)
            || self
                .suffixes
                .iter()
                .any(|s| host.len() > s.len() && host.ends_with(s.as_str()))
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        "ftp" => Some(21),
        _ => None,
    }
}

/// Whether `name` (lower case, no trailing dot) is a wildcard-DNS service
/// or a name below one.
fn is_wildcard_dns(name: &str) -> bool {
    WILDCARD_DNS
        .iter()
        .any(|d| name == *d || name.strip_suffix(d).is_some_and(|head| head.ends_with('.')))
}

/// The authority as written in `raw` (a URL the WHATWG parser accepted with
/// a special scheme), after the checks on its spelling.
fn raw_authority(raw: &str) -> Result<&str, UrlDenialCode> {
    let (_, rest) = raw.split_once(':').ok_or(UrlDenialCode::Invalid)?;
    let before_query = rest.split(['?', '#']).next().unwrap_or_default();
    if before_query.contains('\\') {
        return Err(UrlDenialCode::Ambiguous);
    }
    let after = rest.strip_prefix("//").ok_or(UrlDenialCode::Ambiguous)?;
    let authority = after.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(UrlDenialCode::Userinfo);
    }
    if authority.is_empty() || authority.contains('%') {
        return Err(UrlDenialCode::Ambiguous);
    }
    Ok(authority)
}

/// Whether IDNA mapped a non-ASCII label of the written host to a plain
/// ASCII label (fullwidth letters, ignored characters such as the soft
/// hyphen) or used a dot other than `.`: a tool that reads the raw text
/// with another parser may see a different host.
fn idna_rewrote_ascii(authority: &str, domain: &str) -> bool {
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(host, _)| host);
    if host.contains(['\u{3002}', '\u{FF0E}', '\u{FF61}']) {
        return true;
    }
    let written: Vec<&str> = host.split('.').collect();
    let normalized: Vec<&str> = domain.split('.').collect();
    written.len() != normalized.len()
        || written
            .iter()
            .zip(&normalized)
            .any(|(w, n)| !w.is_ascii() && !n.starts_with("xn--"))
}

/// A URL that passed a [`UrlPolicy`]: the normalized form the tool must
/// use, and where it may connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedUrl {
    url: Url,
    host: String,
    port: u16,
    ip: Option<IpAddr>,
    pinned: Vec<IpAddr>,
}

impl CheckedUrl {
    /// The normalized URL, as the WHATWG serializer writes it: lower-case
    /// scheme and host, punycode for IDNs, dotted-decimal IPv4, RFC 5952
    /// IPv6, no default port, percent-encoded path and query.
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// The scheme, lower case.
    pub fn scheme(&self) -> &str {
        self.url.scheme()
    }

    /// The host as serialized in the URL (an IPv6 address in brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The host's address when the host is an IP literal.
    pub fn ip(&self) -> Option<IpAddr> {
        self.ip
    }

    /// The effective port (the scheme's default when none is written).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The only addresses the tool may connect to: the IP-literal host, or
    /// the checked addresses of resolve mode. Empty when a name was checked
    /// without resolving it.
    pub fn pinned(&self) -> &[IpAddr] {
        &self.pinned
    }

    /// The pinned addresses with the port.
    pub fn socket_addrs(&self) -> Vec<SocketAddr> {
        self.pinned
            .iter()
            .map(|&ip| SocketAddr::new(ip, self.port))
            .collect()
    }

    /// The normalized URL as an owned string.
    pub fn into_string(self) -> String {
        self.url.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn policy(hosts: &[&str]) -> UrlPolicy {
        UrlPolicy::new(
            &UrlPolicyConfig::new()
                .with_schemes(["http", "https"])
                .with_hosts(hosts.iter().copied()),
        )
        .unwrap()
    }

    fn code(p: &UrlPolicy, raw: &str) -> &'static str {
        match p.check(raw) {
            Ok(_) => "ok",
            Err(e) => e.code().as_str(),
        }
    }

    #[test]
    fn wildcard_matches_strict_subdomains_only() {
        let p = policy(&["*.example.com"]);
        assert_eq!(code(&p, "https://a.example.com/"), "ok");
        assert_eq!(code(&p, "https://a.b.example.com/"), "ok");
        assert_eq!(code(&p, "https://example.com/"), "url_host_not_allowed");
        assert_eq!(
            code(&p, "https://evil-example.com/"),
            "url_host_not_allowed"
        );
        assert_eq!(
            code(&p, "https://example.com.evil.net/"),
            "url_host_not_allowed"
        );
        assert_eq!(code(&p, "https://a.example.com./"), "url_host_not_allowed");
        assert_eq!(code(&p, "https://A.EXAMPLE.COM/"), "ok");
    }

    #[test]
    fn exact_entries_are_normalized() {
        let p = policy(&[
            "Bücher.Example",
            "EXAMPLE.org",
            "[2606:4700::1111]",
            "0x08080808",
        ]);
        assert_eq!(code(&p, "https://xn--bcher-kva.example/"), "ok");
        assert_eq!(code(&p, "https://bücher.example/"), "ok");
        assert_eq!(code(&p, "https://example.org/"), "ok");
        assert_eq!(code(&p, "https://[2606:4700:0::1111]/"), "ok");
        assert_eq!(code(&p, "https://8.8.8.8/"), "ok");
        assert_eq!(code(&p, "https://8.8.4.4/"), "url_host_not_allowed");
    }

    #[test]
    fn bad_entries_do_not_compile() {
        for entry in [
            "",
            "*.",
            "*.com",
            "*",
            "a b",
            "example.com:443",
            "example.com/",
            "*.*.x.y",
            "user@x.y",
            "x.y.",
            "::1",
            "*.[::1]",
            "*.1.2.3.4",
            "[::1",
            "%65.com",
        ] {
            let r = UrlPolicy::new(&UrlPolicyConfig::new().with_hosts([entry]));
            if entry == "*" {
                assert!(r.is_ok());
            } else {
                let e = r.unwrap_err();
                assert_eq!(e.code(), UrlPolicyErrorCode::InvalidHost, "{entry}");
            }
        }
        let e = UrlPolicy::new(&UrlPolicyConfig::new().with_schemes(["file"])).unwrap_err();
        assert_eq!(e.code().as_str(), "unsupported_scheme");
        assert_eq!(
            e.to_string(),
            "url policy: unsupported scheme `file`: expected http, https, ws, wss or ftp"
        );
        let e = UrlPolicy::new(&UrlPolicyConfig::new().with_ports([0])).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_port");
        let e = UrlPolicy::new(&UrlPolicyConfig::new().with_max_url_bytes(0)).unwrap_err();
        assert_eq!(e.code().as_str(), "invalid_limit");
    }

    #[test]
    fn defaults_fail_closed() {
        let p = UrlPolicy::new(&UrlPolicyConfig::default()).unwrap();
        assert_eq!(code(&p, "https://example.com/"), "url_host_not_allowed");
        assert_eq!(code(&p, "http://example.com/"), "url_scheme");
        let p = UrlPolicy::new(
            &UrlPolicyConfig::new()
                .with_schemes(Vec::<String>::new())
                .with_hosts(["*"]),
        )
        .unwrap();
        assert_eq!(code(&p, "https://example.com/"), "url_scheme");
    }

    #[test]
    fn ports() {
        let p = policy(&["example.com"]);
        assert_eq!(code(&p, "https://example.com:443/"), "ok");
        assert_eq!(code(&p, "http://example.com:80/"), "ok");
        assert_eq!(code(&p, "https://example.com:80/"), "url_port");
        assert_eq!(code(&p, "https://example.com:0/"), "url_port");
        assert_eq!(code(&p, "https://example.com:65535/"), "url_port");
        assert_eq!(code(&p, "https://example.com:65536/"), "url_invalid");
        let p = UrlPolicy::new(
            &UrlPolicyConfig::new()
                .with_hosts(["example.com"])
                .with_ports([8443]),
        )
        .unwrap();
        assert_eq!(code(&p, "https://example.com:8443/"), "ok");
        assert_eq!(code(&p, "https://example.com/"), "url_port");
        assert_eq!(p.check("https://example.com:8443/x").unwrap().port(), 8443);
    }

    #[test]
    fn private_addresses_need_the_dangerous_opt_in() {
        let mut config = UrlPolicyConfig::new().with_schemes(["http"]).with_hosts([
            "10.0.0.5",
            "intranet",
            "build.internal",
            "169.254.169.254",
            "metadata.google.internal",
        ]);
        let strict = config.compile().unwrap();
        assert_eq!(code(&strict, "http://10.0.0.5/"), "url_forbidden_address");
        assert_eq!(code(&strict, "http://intranet/"), "url_forbidden_host");
        assert!(!strict.allows_private_addresses());
        config.dangerous().allow_private_addresses(true);
        let open = config.compile().unwrap();
        assert!(open.allows_private_addresses());
        assert_eq!(code(&open, "http://10.0.0.5/"), "ok");
        assert_eq!(code(&open, "http://012.0.0.5/"), "ok");
        assert_eq!(code(&open, "http://10.0.0.6/"), "url_host_not_allowed");
        assert_eq!(code(&open, "http://intranet/"), "ok");
        assert_eq!(code(&open, "http://build.internal/"), "ok");
        assert_eq!(
            code(&open, "http://169.254.169.254/"),
            "url_forbidden_address"
        );
        assert_eq!(
            code(&open, "http://metadata.google.internal/"),
            "url_forbidden_host"
        );
    }

    struct Fixed(Vec<IpAddr>);
    impl Resolve for Fixed {
        fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
            Ok(self.0.clone())
        }
    }

    #[test]
    fn resolve_mode_pins_and_rejects() {
        let p = policy(&["*"]);
        let good: IpAddr = "93.184.216.34".parse().unwrap();
        let ok = p
            .check_resolved("https://example.com/", &Fixed(vec![good, good]))
            .unwrap();
        assert_eq!(ok.pinned(), &[good]);
        assert_eq!(ok.socket_addrs(), vec![SocketAddr::new(good, 443)]);
        let bad: IpAddr = "127.0.0.1".parse().unwrap();
        let e = p
            .check_resolved("https://example.com/", &Fixed(vec![good, bad]))
            .unwrap_err();
        assert_eq!(e.code(), UrlDenialCode::ForbiddenAddress);
        assert_eq!(e.address_class(), Some(AddressClass::Loopback));
        let e = p
            .check_resolved("https://example.com/", &Fixed(vec![]))
            .unwrap_err();
        assert_eq!(e.code(), UrlDenialCode::ResolveFailed);
    }

    #[test]
    fn codes_are_stable_and_distinct() {
        let mut names: Vec<&str> = UrlDenialCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), UrlDenialCode::ALL.len());
        assert!(names.iter().all(|n| n.starts_with("url_")));
    }
}
