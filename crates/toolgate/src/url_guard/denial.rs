//! Why a URL was refused, and why a policy did not compile.
//!
//! A [`UrlDenial`] never holds nor renders the URL it refused: the URL is a
//! tool-call argument, which may carry a secret, and the denial's text goes
//! back to the model.

use std::fmt;
use std::io;

use super::address::AddressClass;

/// Why a URL was refused, as a stable machine-readable code.
///
/// The string returned by [`UrlDenialCode::as_str`] is a wire contract: an
/// existing code never changes its spelling or meaning. New codes may be
/// added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrlDenialCode {
    /// Longer than [`UrlPolicyConfig::max_url_bytes`](super::UrlPolicyConfig::max_url_bytes).
    TooLong,
    /// Not an absolute URL by the WHATWG URL Standard (an invalid host, a
    /// port above 65535, a relative reference, an empty host, …).
    Invalid,
    /// The scheme is not one the policy allows (`file:`, `data:`,
    /// `javascript:`, `gopher:`, …).
    Scheme,
    /// The URL carries userinfo (`user:pass@`, even an empty `@`).
    Userinfo,
    /// A spelling that parsers disagree on, which the WHATWG parser would
    /// silently rewrite: control characters (tab, newline), a backslash
    /// before the query, anything but exactly `//` after the scheme, a
    /// percent-encoded authority, or a non-ASCII host that maps to an
    /// ASCII one (fullwidth letters, ideographic full stops, soft hyphens).
    Ambiguous,
    /// A host name that names the local network or the machine itself:
    /// single-label names (`localhost`, `intranet`), names under
    /// `.localhost`, `.local`, `.localdomain`, `.internal`, `.home.arpa`,
    /// cloud metadata names (`metadata.google.internal`), and
    /// numeric-looking names (the last label starts with a digit).
    ForbiddenHost,
    /// The host, or an address it resolved to, is in a forbidden range;
    /// [`UrlDenial::address_class`] says which.
    ForbiddenAddress,
    /// The host is not in the policy's allowlist (also a host with a
    /// trailing dot, and a URL without a host).
    HostNotAllowed,
    /// The port is not one the policy allows.
    Port,
    /// Resolve mode: the resolver failed or returned no address.
    ResolveFailed,
}

impl UrlDenialCode {
    /// The stable wire name of the code, such as `url_scheme`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TooLong => "url_too_long",
            Self::Invalid => "url_invalid",
            Self::Scheme => "url_scheme",
            Self::Userinfo => "url_userinfo",
            Self::Ambiguous => "url_ambiguous",
            Self::ForbiddenHost => "url_forbidden_host",
            Self::ForbiddenAddress => "url_forbidden_address",
            Self::HostNotAllowed => "url_host_not_allowed",
            Self::Port => "url_port",
            Self::ResolveFailed => "url_resolve_failed",
        }
    }

    /// Every code, in a stable order.
    pub const ALL: [UrlDenialCode; 10] = [
        Self::TooLong,
        Self::Invalid,
        Self::Scheme,
        Self::Userinfo,
        Self::Ambiguous,
        Self::ForbiddenHost,
        Self::ForbiddenAddress,
        Self::HostNotAllowed,
        Self::Port,
        Self::ResolveFailed,
    ];

    const fn message(self) -> &'static str {
        match self {
            Self::TooLong => "url is too long",
            Self::Invalid => "not a valid absolute url",
            Self::Scheme => "url scheme is not allowed",
            Self::Userinfo => "url must not carry userinfo",
            Self::Ambiguous => "url is spelled ambiguously",
            Self::ForbiddenHost => "url host names a local or internal host",
            Self::ForbiddenAddress => "url host is a forbidden address",
            Self::HostNotAllowed => "url host is not allowed",
            Self::Port => "url port is not allowed",
            Self::ResolveFailed => "url host did not resolve",
        }
    }
}

impl fmt::Display for UrlDenialCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A URL refused by a [`UrlPolicy`](super::UrlPolicy).
///
/// `Display` gives a one-line, lower-case reason that never contains the
/// URL or any part of it, such as `url host is a forbidden address: loopback`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlDenial {
    code: UrlDenialCode,
    class: Option<AddressClass>,
    resolve_error: Option<io::ErrorKind>,
}

impl UrlDenial {
    pub(super) const fn new(code: UrlDenialCode) -> Self {
        Self {
            code,
            class: None,
            resolve_error: None,
        }
    }

    pub(super) const fn address(class: AddressClass) -> Self {
        Self {
            code: UrlDenialCode::ForbiddenAddress,
            class: Some(class),
            resolve_error: None,
        }
    }

    pub(super) const fn resolve(kind: Option<io::ErrorKind>) -> Self {
        Self {
            code: UrlDenialCode::ResolveFailed,
            class: None,
            resolve_error: kind,
        }
    }

    /// The stable code.
    pub const fn code(&self) -> UrlDenialCode {
        self.code
    }

    /// For [`UrlDenialCode::ForbiddenAddress`], the class of the address.
    pub const fn address_class(&self) -> Option<AddressClass> {
        self.class
    }

    /// For [`UrlDenialCode::ResolveFailed`] because the resolver returned an
    /// error, the error's kind. (The error itself is not kept: its message
    /// may name the host.)
    pub const fn resolve_error_kind(&self) -> Option<io::ErrorKind> {
        self.resolve_error
    }
}

impl fmt::Display for UrlDenial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code.message())?;
        if let Some(class) = self.class {
            write!(f, ": {class}")?;
        }
        Ok(())
    }
}

impl std::error::Error for UrlDenial {}

/// Why a [`UrlPolicyConfig`](super::UrlPolicyConfig) did not compile, as a
/// stable machine-readable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrlPolicyErrorCode {
    /// A scheme other than `http`, `https`, `ws`, `wss` or `ftp` (the
    /// WHATWG special schemes with a network host).
    UnsupportedScheme,
    /// A host entry that is not a host name, an IP address, `*.` followed by
    /// a host name of at least two labels, or `*`.
    InvalidHost,
    /// Port `0` in the port list.
    InvalidPort,
    /// `max_url_bytes` is `0` or above [`MAX_URL_BYTES_CEILING`](super::MAX_URL_BYTES_CEILING).
    InvalidLimit,
}

impl UrlPolicyErrorCode {
    /// The stable wire name of the code, such as `unsupported_scheme`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::UnsupportedScheme => "unsupported_scheme",
            Self::InvalidHost => "invalid_host",
            Self::InvalidPort => "invalid_port",
            Self::InvalidLimit => "invalid_limit",
        }
    }
}

impl fmt::Display for UrlPolicyErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A URL policy configuration that did not compile.
///
/// The configuration is the operator's, not the model's, so the message
/// quotes the offending entry: `url policy: invalid host entry `*.`: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPolicyError {
    code: UrlPolicyErrorCode,
    entry: String,
    detail: &'static str,
}

impl UrlPolicyError {
    pub(super) fn new(
        code: UrlPolicyErrorCode,
        entry: impl Into<String>,
        detail: &'static str,
    ) -> Self {
        Self {
            code,
            entry: entry.into(),
            detail,
        }
    }

    /// The stable code.
    pub const fn code(&self) -> UrlPolicyErrorCode {
        self.code
    }

    /// The configuration entry at fault, as written.
    pub fn entry(&self) -> &str {
        &self.entry
    }
}

impl fmt::Display for UrlPolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.code {
            UrlPolicyErrorCode::UnsupportedScheme => "unsupported scheme",
            UrlPolicyErrorCode::InvalidHost => "invalid host entry",
            UrlPolicyErrorCode::InvalidPort => "invalid port",
            UrlPolicyErrorCode::InvalidLimit => "invalid limit",
        };
        write!(f, "url policy: {what} `{}`: {}", self.entry, self.detail)
    }
}

impl std::error::Error for UrlPolicyError {}
