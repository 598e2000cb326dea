//! The `[jwt]` table: bearer tokens issued by the organisation's identity
//! provider (JSON Web Tokens), accepted beside the static tokens by every
//! front end. This module only checks the values; the edge
//! (`toolgate-edge`'s `jwt` module) verifies tokens with them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use toml::Spanned;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;
use super::server::ServerRole;

/// The signature algorithms a `[jwt]` table may allow: asymmetric only. An
/// HMAC algorithm would make a public key a shared secret, and `none` is
/// no signature at all; neither is ever accepted.
pub const JWT_ALGORITHMS: &[&str] = &[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];
/// The clock skew allowed on `exp` and `nbf` when `[jwt]` sets no
/// `leeway_seconds`.
pub const DEFAULT_JWT_LEEWAY_SECONDS: u64 = 30;
/// The largest `leeway_seconds` accepted.
pub const MAX_JWT_LEEWAY_SECONDS: u64 = 300;
/// How often a JWKS fetched from a URL is fetched again when `[jwt]` sets
/// no `refresh_seconds`.
pub const DEFAULT_JWKS_REFRESH_SECONDS: u64 = 300;
/// The shortest `refresh_seconds` accepted.
pub const MIN_JWKS_REFRESH_SECONDS: u64 = 30;
/// The longest `refresh_seconds` accepted: one day.
pub const MAX_JWKS_REFRESH_SECONDS: u64 = 86_400;
/// The most audiences one `[jwt]` table lists.
pub const MAX_JWT_AUDIENCES: usize = 16;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawJwt {
    pub(crate) issuer: Spanned<String>,
    pub(crate) audience: Spanned<Vec<String>>,
    pub(crate) jwks_file: Option<Spanned<String>>,
    pub(crate) jwks_url: Option<Spanned<String>>,
    pub(crate) algorithms: Option<Spanned<Vec<String>>>,
    pub(crate) user_claim: Option<Spanned<String>>,
    pub(crate) roles_claim: Option<Spanned<String>>,
    pub(crate) roles: Option<Spanned<BTreeMap<String, Vec<String>>>>,
    pub(crate) default_role: Option<Spanned<String>>,
    pub(crate) leeway_seconds: Option<Spanned<u64>>,
    pub(crate) refresh_seconds: Option<Spanned<u64>>,
    pub(crate) mcp_resource: Option<Spanned<String>>,
    pub(crate) authorization_servers: Option<Spanned<Vec<String>>>,
}

/// Where the issuer's public keys (a JWKS, RFC 7517) are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwksSource {
    /// A file, read once at start.
    File(PathBuf),
    /// An `https://` URL (or `http://` on a loopback address), fetched at
    /// start and again every `refresh_seconds`.
    Url(String),
}

/// The `[jwt]` table, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JwtConfig {
    issuer: String,
    audiences: Vec<String>,
    jwks: JwksSource,
    algorithms: Vec<String>,
    user_claim: String,
    roles_claim: Option<String>,
    roles: Vec<(ServerRole, Vec<String>)>,
    default_role: Option<ServerRole>,
    leeway: Duration,
    refresh: Duration,
    mcp_resource: Option<String>,
    authorization_servers: Vec<String>,
}

impl JwtConfig {
    /// The `iss` every token must carry.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audiences a token's `aud` must name one of.
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Where the keys are.
    pub fn jwks(&self) -> &JwksSource {
        &self.jwks
    }

    /// The allowed `alg` values (a subset of [`JWT_ALGORITHMS`]).
    pub fn algorithms(&self) -> &[String] {
        &self.algorithms
    }

    /// The claim naming the user (default `sub`).
    pub fn user_claim(&self) -> &str {
        &self.user_claim
    }

    /// The claim listing the caller's groups, if roles come from one.
    pub fn roles_claim(&self) -> Option<&str> {
        self.roles_claim.as_deref()
    }

    /// For each role, the claim values that grant it.
    pub fn roles(&self) -> &[(ServerRole, Vec<String>)] {
        &self.roles
    }

    /// The role of a token no `roles` entry matches; `None`: such a token
    /// is refused.
    pub fn default_role(&self) -> Option<ServerRole> {
        self.default_role
    }

    /// The clock skew allowed on `exp` and `nbf`.
    pub fn leeway(&self) -> Duration {
        self.leeway
    }

    /// How often a JWKS URL is fetched again.
    pub fn refresh(&self) -> Duration {
        self.refresh
    }

    /// The MCP endpoint's canonical URL (`mcp_resource`), if given: the
    /// `resource` of its protected resource metadata (RFC 9728), and the
    /// one audience its tokens must name (RFC 8707).
    pub fn mcp_resource(&self) -> Option<&str> {
        self.mcp_resource.as_deref()
    }

    /// The authorization servers the MCP endpoint's metadata names
    /// (default: the issuer).
    pub fn authorization_servers(&self) -> &[String] {
        &self.authorization_servers
    }
}

/// Whether `url` is an `https://` URL, or `http://` on a loopback address,
/// with no fragment (what RFC 8707 asks of a resource).
fn resource_url_ok(url: &str) -> bool {
    jwks_url_ok(url) && !url.contains('#')
}

fn role_named(name: &str) -> Option<ServerRole> {
    match name {
        "agent" => Some(ServerRole::Agent),
        "approver" => Some(ServerRole::Approver),
        "admin" => Some(ServerRole::Admin),
        _ => None,
    }
}

/// Whether `url` is `https://HOST…`, or `http://` on a loopback address:
/// the rule for every URL of an identity provider (a JWKS, the OpenID
/// endpoints, those a discovery document names).
pub fn jwks_url_ok(url: &str) -> bool {
    if url.len() > 2048 || url.chars().any(|c| c.is_control() || c == ' ') {
        return false;
    }
    if let Some(rest) = url.strip_prefix("https://") {
        return !rest.is_empty() && !rest.starts_with('/');
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    ["127.0.0.1", "localhost", "[::1]"].iter().any(|h| {
        rest.strip_prefix(h)
            .is_some_and(|after| after.is_empty() || after.starts_with([':', '/']))
    })
}

/// A claim name: 1 to 64 visible ASCII characters.
fn claim_name_ok(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

impl Loader<'_> {
    /// `[jwt]`: an issuer, audiences, one source of keys, asymmetric
    /// algorithms only, claim names, roles by name, bounds in range.
    pub(super) fn jwt(&self, raw: &RawConfig) -> Result<Option<JwtConfig>, Error> {
        let Some(t) = &raw.jwt else {
            return Ok(None);
        };
        let bad = |code: ErrorCode, at: usize, key: &str, message: String| {
            self.at_key(code, at, key, message)
        };
        let issuer = t.issuer.get_ref();
        if issuer.is_empty() || issuer.len() > 2048 || issuer.chars().any(char::is_control) {
            return Err(bad(
                ErrorCode::InvalidValue,
                t.issuer.span().start,
                "issuer",
                "`issuer` must be the identity provider's issuer identifier (its `iss`)".into(),
            ));
        }
        let audiences = t.audience.get_ref();
        if audiences.is_empty()
            || audiences.len() > MAX_JWT_AUDIENCES
            || audiences
                .iter()
                .any(|a| a.is_empty() || a.len() > 2048 || a.chars().any(char::is_control))
        {
            return Err(bad(
                ErrorCode::InvalidValue,
                t.audience.span().start,
                "audience",
                format!("`audience` must list 1 to {MAX_JWT_AUDIENCES} audiences (this service's identifiers in the tokens' `aud`)"),
            ));
        }
        let jwks =
            match (&t.jwks_file, &t.jwks_url) {
                (Some(f), None) => JwksSource::File(self.resolve(f.get_ref())),
                (None, Some(u)) if jwks_url_ok(u.get_ref()) => JwksSource::Url(u.get_ref().clone()),
                (None, Some(u)) => return Err(bad(
                    ErrorCode::InvalidValue,
                    u.span().start,
                    "jwks_url",
                    "`jwks_url` must be an `https://` URL (`http://` only on a loopback address)"
                        .into(),
                )),
                (Some(_), Some(u)) => {
                    return Err(bad(
                        ErrorCode::ConflictingKeys,
                        u.span().start,
                        "jwks_url",
                        "give `jwks_file` or `jwks_url`, not both".into(),
                    ))
                }
                (None, None) => {
                    return Err(bad(
                        ErrorCode::MissingKey,
                        t.issuer.span().start,
                        "issuer",
                        "`[jwt]` needs the issuer's keys: `jwks_file` or `jwks_url`".into(),
                    ))
                }
            };
        let algorithms = match &t.algorithms {
            None => JWT_ALGORITHMS.iter().map(|a| (*a).to_owned()).collect(),
            Some(list) => {
                let unknown = list
                    .get_ref()
                    .iter()
                    .find(|a| !JWT_ALGORITHMS.contains(&a.as_str()));
                if list.get_ref().is_empty() || unknown.is_some() {
                    return Err(bad(
                        ErrorCode::InvalidValue,
                        list.span().start,
                        "algorithms",
                        format!(
                            "`algorithms` must list some of {} (asymmetric only: never `none` or HMAC)",
                            JWT_ALGORITHMS.join(", ")
                        ),
                    ));
                }
                list.get_ref().clone()
            }
        };
        let claim = |v: &Option<Spanned<String>>, key: &str| -> Result<Option<String>, Error> {
            match v {
                None => Ok(None),
                Some(c) if claim_name_ok(c.get_ref()) => Ok(Some(c.get_ref().clone())),
                Some(c) => Err(bad(
                    ErrorCode::InvalidValue,
                    c.span().start,
                    key,
                    format!("`{key}` must be a claim name (1 to 64 visible ASCII characters)"),
                )),
            }
        };
        let user_claim = claim(&t.user_claim, "user_claim")?.unwrap_or_else(|| "sub".to_owned());
        let roles_claim = claim(&t.roles_claim, "roles_claim")?;
        let mut roles = Vec::new();
        if let Some(map) = &t.roles {
            if roles_claim.is_none() {
                return Err(bad(
                    ErrorCode::MissingKey,
                    map.span().start,
                    "roles",
                    "`roles` maps values of `roles_claim`: name the claim too".into(),
                ));
            }
            for (name, values) in map.get_ref() {
                let role = role_named(name).ok_or_else(|| {
                    bad(
                        ErrorCode::InvalidValue,
                        map.span().start,
                        "roles",
                        "`roles` keys must be `agent`, `approver` or `admin`".into(),
                    )
                })?;
                if values.is_empty() || values.len() > 64 || values.iter().any(String::is_empty) {
                    return Err(bad(
                        ErrorCode::InvalidValue,
                        map.span().start,
                        "roles",
                        "each role in `roles` lists 1 to 64 claim values".into(),
                    ));
                }
                roles.push((role, values.clone()));
            }
        }
        let default_role = match &t.default_role {
            Some(r) => Some(role_named(r.get_ref()).ok_or_else(|| {
                bad(
                    ErrorCode::InvalidValue,
                    r.span().start,
                    "default_role",
                    "`default_role` must be `agent`, `approver` or `admin`".into(),
                )
            })?),
            // Without a roles claim every token is an agent's; with one, a
            // token no entry matches is refused unless a default is given.
            None if roles_claim.is_none() => Some(ServerRole::Agent),
            None => None,
        };
        let leeway = match &t.leeway_seconds {
            None => DEFAULT_JWT_LEEWAY_SECONDS,
            Some(v) if *v.get_ref() <= MAX_JWT_LEEWAY_SECONDS => *v.get_ref(),
            Some(v) => {
                return Err(bad(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "leeway_seconds",
                    format!("`leeway_seconds` must be at most {MAX_JWT_LEEWAY_SECONDS}"),
                ))
            }
        };
        let refresh = match &t.refresh_seconds {
            None => DEFAULT_JWKS_REFRESH_SECONDS,
            Some(v)
                if (MIN_JWKS_REFRESH_SECONDS..=MAX_JWKS_REFRESH_SECONDS)
                    .contains(v.get_ref()) =>
            {
                *v.get_ref()
            }
            Some(v) => {
                return Err(bad(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "refresh_seconds",
                    format!("`refresh_seconds` must be between {MIN_JWKS_REFRESH_SECONDS} and {MAX_JWKS_REFRESH_SECONDS}"),
                ))
            }
        };
        let mcp_resource = match &t.mcp_resource {
            None => None,
            Some(r) if resource_url_ok(r.get_ref()) => Some(r.get_ref().clone()),
            Some(r) => {
                return Err(bad(
                    ErrorCode::InvalidValue,
                    r.span().start,
                    "mcp_resource",
                    "`mcp_resource` must be the MCP endpoint's URL: `https://` (`http://` only on a loopback address), no fragment".into(),
                ))
            }
        };
        let authorization_servers = match &t.authorization_servers {
            None => vec![issuer.clone()],
            Some(list) => {
                let ok = !list.get_ref().is_empty()
                    && list.get_ref().len() <= 8
                    && list.get_ref().iter().all(|u| resource_url_ok(u));
                if !ok {
                    return Err(bad(
                        ErrorCode::InvalidValue,
                        list.span().start,
                        "authorization_servers",
                        "`authorization_servers` must list 1 to 8 issuer URLs (`https://`)".into(),
                    ));
                }
                list.get_ref().clone()
            }
        };
        Ok(Some(JwtConfig {
            issuer: issuer.clone(),
            audiences: audiences.clone(),
            jwks,
            algorithms,
            user_claim,
            roles_claim,
            roles,
            default_role,
            leeway: Duration::from_secs(leeway),
            refresh: Duration::from_secs(refresh),
            mcp_resource,
            authorization_servers,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::jwks_url_ok;

    #[test]
    fn jwks_urls_are_https_or_loopback_http() {
        for ok in [
            "https://idp.example/jwks",
            "http://127.0.0.1:8080/jwks",
            "http://localhost/jwks",
            "http://[::1]:9/k",
        ] {
            assert!(jwks_url_ok(ok), "{ok}");
        }
        for bad in [
            "http://idp.example/jwks",
            "http://127.0.0.1.evil.example/jwks",
            "http://localhost.evil.example/",
            "https:///x",
            "ftp://x",
            "https://a b",
            "",
        ] {
            assert!(!jwks_url_ok(bad), "{bad}");
        }
    }
}
