//! The `[login]` table: how approvers log in to the approvals page with
//! the organisation's identity, as asserted by a trusted authenticating
//! reverse proxy (a header, believed only from configured addresses).

use std::collections::BTreeMap;
use std::net::IpAddr;

use toml::Spanned;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;
use super::server::ServerRole;

/// The most addresses `trusted_proxies` lists.
pub const MAX_TRUSTED_PROXIES: usize = 64;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLogin {
    pub(crate) user_header: Spanned<String>,
    pub(crate) groups_header: Spanned<String>,
    pub(crate) trusted_proxies: Spanned<Vec<String>>,
    pub(crate) roles: Spanned<BTreeMap<String, Vec<String>>>,
}

/// The `[login]` table, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginConfig {
    user_header: String,
    groups_header: String,
    trusted_proxies: Vec<IpAddr>,
    roles: Vec<(ServerRole, Vec<String>)>,
}

impl LoginConfig {
    /// The header naming the user (lower-case).
    pub fn user_header(&self) -> &str {
        &self.user_header
    }

    /// The header listing the user's groups, comma-separated (lower-case).
    pub fn groups_header(&self) -> &str {
        &self.groups_header
    }

    /// The peer addresses whose headers are believed.
    pub fn trusted_proxies(&self) -> &[IpAddr] {
        &self.trusted_proxies
    }

    /// For each role, the groups that grant it.
    pub fn roles(&self) -> &[(ServerRole, Vec<String>)] {
        &self.roles
    }

    /// The highest role one of `groups` grants.
    pub fn role_of<'g>(
        &self,
        groups: impl IntoIterator<Item = &'g str> + Clone,
    ) -> Option<ServerRole> {
        self.roles
            .iter()
            .filter(|(_, grants)| {
                groups
                    .clone()
                    .into_iter()
                    .any(|g| grants.iter().any(|x| x == g))
            })
            .map(|(r, _)| *r)
            .max()
    }
}

fn header_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Loader<'_> {
    /// `[login]`: header names, addresses, roles by name.
    pub(super) fn login(&self, raw: &RawConfig) -> Result<Option<LoginConfig>, Error> {
        let Some(t) = &raw.login else {
            return Ok(None);
        };
        let mut headers = Vec::new();
        for (v, key) in [
            (&t.user_header, "user_header"),
            (&t.groups_header, "groups_header"),
        ] {
            if !header_name_ok(v.get_ref()) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    key,
                    format!("`{key}` must be a header name"),
                ));
            }
            headers.push(v.get_ref().to_ascii_lowercase());
        }
        let list = t.trusted_proxies.get_ref();
        let proxies: Option<Vec<IpAddr>> = list.iter().map(|a| a.parse().ok()).collect();
        let proxies = proxies
            .filter(|p| !p.is_empty() && p.len() <= MAX_TRUSTED_PROXIES)
            .ok_or_else(|| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    t.trusted_proxies.span().start,
                    "trusted_proxies",
                    format!("`trusted_proxies` must list 1 to {MAX_TRUSTED_PROXIES} IP addresses (the reverse proxy's, as toolgate sees them)"),
                )
            })?;
        let mut roles = Vec::new();
        for (name, groups) in t.roles.get_ref() {
            let role =
                match name.as_str() {
                    "approver" => ServerRole::Approver,
                    "admin" => ServerRole::Admin,
                    _ => return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        t.roles.span().start,
                        "roles",
                        "`[login.roles]` keys must be `approver` or `admin` (the page is theirs)",
                    )),
                };
            if groups.is_empty() || groups.len() > 64 || groups.iter().any(String::is_empty) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    t.roles.span().start,
                    "roles",
                    "each role in `[login.roles]` lists 1 to 64 groups",
                ));
            }
            roles.push((role, groups.clone()));
        }
        let [user_header, groups_header] = <[String; 2]>::try_from(headers).unwrap_or_default();
        Ok(Some(LoginConfig {
            user_header,
            groups_header,
            trusted_proxies: proxies,
            roles,
        }))
    }
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawOidc {
    pub(crate) client_id: Spanned<String>,
    pub(crate) redirect_uri: Spanned<String>,
    pub(crate) authorization_endpoint: Spanned<String>,
    pub(crate) token_endpoint: Spanned<String>,
}

/// The `[oidc]` table, checked: the approvals page's OpenID Connect login
/// (authorization code with PKCE) against `[jwt]`'s issuer, whose keys
/// verify the id_token and whose `[jwt.roles]` give the role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcConfig {
    client_id: String,
    redirect_uri: String,
    authorization_endpoint: String,
    token_endpoint: String,
}

impl OidcConfig {
    /// toolgate's client id at the provider (the id_token's `aud`).
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// Where the provider sends the browser back:
    /// `https://HOST/ui/login/oidc/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The provider's authorization endpoint.
    pub fn authorization_endpoint(&self) -> &str {
        &self.authorization_endpoint
    }

    /// The provider's token endpoint.
    pub fn token_endpoint(&self) -> &str {
        &self.token_endpoint
    }

    /// Whether the page is served over https (the cookies are `Secure`).
    pub fn secure(&self) -> bool {
        self.redirect_uri.starts_with("https://")
    }
}

impl Loader<'_> {
    /// `[oidc]`: a client id, URLs (`https://`, or `http://` on loopback),
    /// and a `[jwt]` table for the keys.
    pub(super) fn oidc(&self, raw: &RawConfig) -> Result<Option<OidcConfig>, Error> {
        let Some(t) = &raw.oidc else {
            return Ok(None);
        };
        if raw.jwt.is_none() {
            return Err(self.at_key(
                ErrorCode::MissingKey,
                t.client_id.span().start,
                "client_id",
                "`[oidc]` verifies the id_token with `[jwt]`'s issuer and keys: add a `[jwt]` table",
            ));
        }
        let id = t.client_id.get_ref();
        if id.is_empty() || id.len() > 256 || id.chars().any(char::is_control) {
            return Err(self.at_key(
                ErrorCode::InvalidValue,
                t.client_id.span().start,
                "client_id",
                "`client_id` must be the client id the provider issued",
            ));
        }
        for (v, key) in [
            (&t.redirect_uri, "redirect_uri"),
            (&t.authorization_endpoint, "authorization_endpoint"),
            (&t.token_endpoint, "token_endpoint"),
        ] {
            if !super::jwt::jwks_url_ok(v.get_ref()) || v.get_ref().contains(['?', '#']) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    key,
                    format!("`{key}` must be an `https://` URL (`http://` only on a loopback address), without query or fragment"),
                ));
            }
        }
        Ok(Some(OidcConfig {
            client_id: id.clone(),
            redirect_uri: t.redirect_uri.get_ref().clone(),
            authorization_endpoint: t.authorization_endpoint.get_ref().clone(),
            token_endpoint: t.token_endpoint.get_ref().clone(),
        }))
    }
}
