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
    pub(crate) authorization_endpoint: Option<Spanned<String>>,
    pub(crate) token_endpoint: Option<Spanned<String>>,
    pub(crate) client_secret_file: Option<Spanned<String>>,
    pub(crate) client_secret_env: Option<Spanned<String>>,
    pub(crate) token_endpoint_auth: Option<Spanned<String>>,
}

/// How toolgate authenticates to the token endpoint (`[oidc]
/// token_endpoint_auth`, OpenID Connect Core §9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// `none`: a public client (the PKCE verifier only).
    None,
    /// `client_secret_basic`: the client id and secret in an HTTP Basic
    /// `Authorization` header.
    ClientSecretBasic,
    /// `client_secret_post`: the client id and secret in the form.
    ClientSecretPost,
}

impl TokenEndpointAuth {
    /// The method's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
        }
    }
}

/// A confidential client's secret: never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// The secret.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSecret(…)")
    }
}

/// The `[oidc]` table, checked: the approvals page's OpenID Connect login
/// (authorization code with PKCE) against `[jwt]`'s issuer, whose keys
/// verify the id_token and whose `[jwt.roles]` give the role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcConfig {
    client_id: String,
    redirect_uri: String,
    /// Both endpoints, or none: then they are read from the issuer's
    /// discovery document when the service starts.
    endpoints: Option<(String, String)>,
    client_secret: Option<ClientSecret>,
    auth: TokenEndpointAuth,
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

    /// The provider's authorization and token endpoints, when the config
    /// names them; `None`: read them from `[jwt]` issuer's discovery
    /// document (`/.well-known/openid-configuration`).
    pub fn endpoints(&self) -> Option<(&str, &str)> {
        self.endpoints
            .as_ref()
            .map(|(a, t)| (a.as_str(), t.as_str()))
    }

    /// A confidential client's secret (`client_secret_file` or
    /// `client_secret_env`).
    pub fn client_secret(&self) -> Option<&ClientSecret> {
        self.client_secret.as_ref()
    }

    /// How toolgate authenticates to the token endpoint.
    pub fn token_endpoint_auth(&self) -> TokenEndpointAuth {
        self.auth
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
        let endpoints = match (&t.authorization_endpoint, &t.token_endpoint) {
            (Some(a), Some(t)) => Some((a, t)),
            (None, None) => None,
            (Some(one), None) | (None, Some(one)) => {
                return Err(self.at_key(
                    ErrorCode::MissingKey,
                    one.span().start,
                    "token_endpoint",
                    "name both `authorization_endpoint` and `token_endpoint`, or neither (then they are read from the issuer's discovery document)",
                ))
            }
        };
        let urls = [(&t.redirect_uri, "redirect_uri")]
            .into_iter()
            .chain(endpoints.map(|(a, _)| (a, "authorization_endpoint")))
            .chain(endpoints.map(|(_, t)| (t, "token_endpoint")));
        for (v, key) in urls {
            if !super::jwt::jwks_url_ok(v.get_ref()) || v.get_ref().contains(['?', '#']) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    key,
                    format!("`{key}` must be an `https://` URL (`http://` only on a loopback address), without query or fragment"),
                ));
            }
        }
        let (client_secret, auth) = self.oidc_client_auth(t)?;
        Ok(Some(OidcConfig {
            client_id: id.clone(),
            redirect_uri: t.redirect_uri.get_ref().clone(),
            endpoints: endpoints.map(|(a, t)| (a.get_ref().clone(), t.get_ref().clone())),
            client_secret,
            auth,
        }))
    }

    /// The client's secret (read now) and how it authenticates: a public
    /// client without a secret, `client_secret_basic` by default with one.
    fn oidc_client_auth(
        &self,
        t: &RawOidc,
    ) -> Result<(Option<ClientSecret>, TokenEndpointAuth), Error> {
        let at = t.client_id.span().start;
        let secret = match (&t.client_secret_file, &t.client_secret_env) {
            (Some(f), None) => {
                let text = std::fs::read_to_string(self.resolve(f.get_ref())).map_err(|e| {
                    self.at_key(
                        ErrorCode::InvalidValue,
                        f.span().start,
                        "client_secret_file",
                        format!("cannot read `{}`: {e}", f.get_ref()),
                    )
                })?;
                Some(text.trim_end_matches(['\n', '\r']).to_owned())
            }
            (None, Some(var)) => Some(std::env::var(var.get_ref()).map_err(|_| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    var.span().start,
                    "client_secret_env",
                    format!("the environment variable `{}` is not set", var.get_ref()),
                )
            })?),
            (None, None) => None,
            (Some(f), Some(_)) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    f.span().start,
                    "client_secret_file",
                    "name at most one of `client_secret_file` and `client_secret_env`",
                ))
            }
        };
        if secret
            .as_deref()
            .is_some_and(|s| s.is_empty() || s.len() > 1024 || s.chars().any(char::is_control))
        {
            return Err(self.at_key(
                ErrorCode::InvalidValue,
                at,
                "client_secret_file",
                "the client secret must be the secret the provider issued (one line)",
            ));
        }
        let auth = match (t.token_endpoint_auth.as_ref().map(|a| (a, a.get_ref().as_str())), &secret) {
            (None, None) | (Some((_, "none")), None) => TokenEndpointAuth::None,
            (None, Some(_)) | (Some((_, "client_secret_basic")), Some(_)) => {
                TokenEndpointAuth::ClientSecretBasic
            }
            (Some((_, "client_secret_post")), Some(_)) => TokenEndpointAuth::ClientSecretPost,
            (Some((a, "none")), Some(_)) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    a.span().start,
                    "token_endpoint_auth",
                    "`none` is a public client's: drop the client secret, or use `client_secret_basic` or `client_secret_post`",
                ))
            }
            (Some((a, "client_secret_basic" | "client_secret_post")), None) => {
                return Err(self.at_key(
                    ErrorCode::MissingKey,
                    a.span().start,
                    "token_endpoint_auth",
                    "a confidential client needs its secret: `client_secret_file` or `client_secret_env`",
                ))
            }
            (Some((a, _)), _) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    a.span().start,
                    "token_endpoint_auth",
                    "`token_endpoint_auth` must be `none`, `client_secret_basic` or `client_secret_post`",
                ))
            }
        };
        Ok((secret.map(ClientSecret), auth))
    }
}
