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
