//! The `[jwt]` table: bearer tokens issued by the organisation's identity
//! provider (JSON Web Tokens), accepted beside the static tokens by every
//! front end. This module only checks the values; the edge's verifier
//! (`crate::jwt`, with the `net` feature) verifies tokens with them.

use std::path::PathBuf;
use std::time::Duration;

use toolgate::config::front::Spanned;
use toolgate::config::{Config, Error, ErrorCode};

use super::rules::{provider_url_ok, resolve};
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
    provider_url_ok(url) && !url.contains('#')
}

/// A claim name: 1 to 64 visible ASCII characters.
fn claim_name_ok(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

impl JwtConfig {
    /// `config`'s `[jwt]` table, checked (`None` without one): an issuer,
    /// audiences, one source of keys (a file relative to the config's
    /// folder, or a provider URL), asymmetric algorithms only, claim names,
    /// roles by name, bounds in range. The error is placed at the key, as
    /// [`Config::load`] places its own.
    ///
    /// # Errors
    ///
    /// The first value refused, with its [`ErrorCode`] and position.
    pub fn from_config(config: &Config) -> Result<Option<Self>, Error> {
        let Some(t) = &config.front_end_tables().jwt else {
            return Ok(None);
        };
        let bad = |code: ErrorCode, at: usize, key: &str, message: String| {
            config.error_at_key(code, at, key, message)
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
        let jwks = match (&t.jwks_file, &t.jwks_url) {
            (Some(f), None) => JwksSource::File(resolve(config, f.get_ref())),
            (None, Some(u)) if provider_url_ok(u.get_ref()) => JwksSource::Url(u.get_ref().clone()),
            (None, Some(u)) => {
                return Err(bad(
                    ErrorCode::InvalidValue,
                    u.span().start,
                    "jwks_url",
                    "`jwks_url` must be an `https://` URL (`http://` only on a loopback address)"
                        .into(),
                ))
            }
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
                let role = ServerRole::from_name(name).ok_or_else(|| {
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
            Some(r) => Some(ServerRole::from_name(r.get_ref()).ok_or_else(|| {
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
    use super::super::test_support::{refused, refused_by_core, table};
    use super::*;

    const HEAD: &str = "[jwt]\nissuer = \"https://idp.example\"\naudience = [\"toolgate\"]\n";

    /// A `[jwt]` table with keys from a URL and `lines` (one key a line),
    /// in `/etc/toolgate/toolgate.toml`'s folder.
    fn jwt(lines: &str) -> Result<Option<JwtConfig>, Error> {
        table(
            &format!("{HEAD}jwks_url = \"https://idp.example/jwks\"\n{lines}"),
            JwtConfig::from_config,
        )
    }

    /// The refusal of a `[jwt]` table with a JWKS URL and `lines`: the
    /// code, the line (of `lines`: 1 is the table's fourth), the key, the
    /// message.
    fn bad(lines: &str) -> (ErrorCode, Option<usize>, String, String) {
        let (code, line, column, key, message) = refused(
            &format!("{HEAD}jwks_url = \"https://idp.example/jwks\"\n{lines}"),
            JwtConfig::from_config,
        );
        assert_eq!(column, Some(1), "{lines}");
        (code, line.map(|l| l - 4), key, message)
    }

    #[test]
    fn no_table_no_config() {
        assert_eq!(table("", JwtConfig::from_config).unwrap(), None);
    }

    #[test]
    fn the_defaults_allow_every_asymmetric_algorithm_and_make_agents() {
        let j = jwt("").unwrap().unwrap();
        assert_eq!(j.issuer(), "https://idp.example");
        assert_eq!(j.audiences(), ["toolgate"]);
        assert_eq!(
            j.jwks(),
            &JwksSource::Url("https://idp.example/jwks".into())
        );
        assert_eq!(j.algorithms(), JWT_ALGORITHMS);
        assert_eq!(j.user_claim(), "sub");
        assert_eq!(j.roles_claim(), None);
        assert!(j.roles().is_empty());
        assert_eq!(j.default_role(), Some(ServerRole::Agent));
        assert_eq!(j.leeway(), Duration::from_secs(DEFAULT_JWT_LEEWAY_SECONDS));
        assert_eq!(
            j.refresh(),
            Duration::from_secs(DEFAULT_JWKS_REFRESH_SECONDS)
        );
        assert_eq!(j.mcp_resource(), None);
        assert_eq!(j.authorization_servers(), ["https://idp.example"]);
    }

    #[test]
    fn every_key_is_read() {
        let j = jwt(
            "algorithms = [\"ES256\", \"EdDSA\"]\nuser_claim = \"email\"\nroles_claim = \"groups\"\n\
             default_role = \"approver\"\nleeway_seconds = 300\nrefresh_seconds = 30\n\
             mcp_resource = \"https://gate.example/mcp\"\n\
             authorization_servers = [\"https://a.example\", \"http://127.0.0.1:9\"]\n\
             [jwt.roles]\nadmin = [\"ops\"]\nagent = [\"bots\", \"ci\"]\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(j.algorithms(), ["ES256", "EdDSA"]);
        assert_eq!(j.user_claim(), "email");
        assert_eq!(j.roles_claim(), Some("groups"));
        assert_eq!(j.default_role(), Some(ServerRole::Approver));
        assert_eq!(j.leeway(), Duration::from_secs(300));
        assert_eq!(j.refresh(), Duration::from_secs(30));
        assert_eq!(j.mcp_resource(), Some("https://gate.example/mcp"));
        assert_eq!(j.authorization_servers().len(), 2);
        assert_eq!(
            j.roles(),
            [
                (ServerRole::Admin, vec!["ops".to_owned()]),
                (ServerRole::Agent, vec!["bots".to_owned(), "ci".to_owned()]),
            ]
        );
        // With a roles claim and no default, a token no entry matches is
        // refused (no role).
        let j = jwt("roles_claim = \"groups\"\n").unwrap().unwrap();
        assert_eq!(j.default_role(), None);
    }

    #[test]
    fn a_jwks_file_is_relative_to_the_configs_folder() {
        let c = toolgate::config::Config::parse(
            &format!("{HEAD}jwks_file = \"keys/jwks.json\"\n"),
            "/etc/toolgate/toolgate.toml",
        )
        .unwrap();
        let j = JwtConfig::from_config(&c).unwrap().unwrap();
        assert_eq!(
            j.jwks(),
            &JwksSource::File(PathBuf::from("/etc/toolgate/keys/jwks.json"))
        );
        let j = table(
            &format!("{HEAD}jwks_file = \"jwks.json\"\n"),
            JwtConfig::from_config,
        )
        .unwrap()
        .unwrap();
        assert_eq!(j.jwks(), &JwksSource::File(PathBuf::from("./jwks.json")));
    }

    #[test]
    fn the_keys_come_from_one_place() {
        let (code, line, column, key, message) = refused(HEAD, JwtConfig::from_config);
        assert_eq!(
            (code, line, column),
            (ErrorCode::MissingKey, Some(2), Some(1))
        );
        assert_eq!(key, "issuer");
        assert!(message.contains("`jwks_file` or `jwks_url`"), "{message}");
        let (code, line, _, key, message) = refused(
            &format!("{HEAD}jwks_file = \"k.json\"\njwks_url = \"https://idp.example/k\"\n"),
            JwtConfig::from_config,
        );
        assert_eq!((code, line), (ErrorCode::ConflictingKeys, Some(5)));
        assert_eq!(
            (key.as_str(), message.as_str()),
            ("jwks_url", "give `jwks_file` or `jwks_url`, not both")
        );
        for url in [
            "http://idp.example/jwks",
            "ftp://idp.example",
            "https://",
            "https://a b",
        ] {
            let (code, line, _, key, _) = refused(
                &format!("{HEAD}jwks_url = \"{url}\"\n"),
                JwtConfig::from_config,
            );
            assert_eq!(
                (code, line, key.as_str()),
                (ErrorCode::InvalidValue, Some(4), "jwks_url"),
                "{url}"
            );
        }
    }

    #[test]
    fn an_issuer_and_audiences_are_bounded_text() {
        let long = "a".repeat(2049);
        for (issuer, audience, key) in [
            ("", "[\"t\"]", "issuer"),
            (long.as_str(), "[\"t\"]", "issuer"),
            ("https://i\\u0007", "[\"t\"]", "issuer"),
            ("https://i", "[]", "audience"),
            ("https://i", "[\"\"]", "audience"),
            ("https://i", "[\"a\\nb\"]", "audience"),
        ] {
            let text = format!(
                "[jwt]\nissuer = \"{issuer}\"\naudience = {audience}\njwks_url = \"https://i/k\"\n"
            );
            let (code, _, _, got, _) = refused(&text, JwtConfig::from_config);
            assert_eq!(
                (code, got.as_str()),
                (ErrorCode::InvalidValue, key),
                "{text}"
            );
        }
        let seventeen = format!("[{}]", vec!["\"a\""; MAX_JWT_AUDIENCES + 1].join(", "));
        let text =
            format!("[jwt]\nissuer = \"i\"\naudience = {seventeen}\njwks_url = \"https://i/k\"\n");
        assert_eq!(refused(&text, JwtConfig::from_config).3, "audience");
    }

    #[test]
    fn only_asymmetric_algorithms_are_allowed() {
        for list in ["[]", "[\"HS256\"]", "[\"none\"]", "[\"RS256\", \"rs256\"]"] {
            let (code, line, key, message) = bad(&format!("algorithms = {list}\n"));
            assert_eq!(
                (code, line, key.as_str()),
                (ErrorCode::InvalidValue, Some(1), "algorithms"),
                "{list}"
            );
            assert!(message.contains("never `none` or HMAC"), "{message}");
        }
    }

    #[test]
    fn claims_and_roles_are_checked() {
        for (lines, key) in [
            ("user_claim = \"\"\n", "user_claim"),
            ("user_claim = \"a b\"\n", "user_claim"),
            (
                &*format!("roles_claim = \"{}\"\n", "g".repeat(65)),
                "roles_claim",
            ),
            (
                "roles_claim = \"g\"\ndefault_role = \"root\"\n",
                "default_role",
            ),
            (
                "roles_claim = \"g\"\n[jwt.roles]\nowner = [\"x\"]\n",
                "roles",
            ),
            ("roles_claim = \"g\"\n[jwt.roles]\nadmin = []\n", "roles"),
            (
                "roles_claim = \"g\"\n[jwt.roles]\nadmin = [\"\"]\n",
                "roles",
            ),
        ] {
            let (code, _, got, _) = bad(lines);
            assert_eq!(
                (code, got.as_str()),
                (ErrorCode::InvalidValue, key),
                "{lines}"
            );
        }
        let (code, _, key, message) = bad("[jwt.roles]\nadmin = [\"ops\"]\n");
        assert_eq!((code, key.as_str()), (ErrorCode::MissingKey, "roles"));
        assert!(message.contains("name the claim too"), "{message}");
    }

    #[test]
    fn out_of_range_limits_are_refused_at_their_key() {
        for (lines, key, message) in [
            (
                "leeway_seconds = 301\n",
                "leeway_seconds",
                "`leeway_seconds` must be at most 300",
            ),
            (
                "refresh_seconds = 29\n",
                "refresh_seconds",
                "`refresh_seconds` must be between 30 and 86400",
            ),
            (
                "refresh_seconds = 86401\n",
                "refresh_seconds",
                "`refresh_seconds` must be between 30 and 86400",
            ),
        ] {
            assert_eq!(
                bad(lines),
                (
                    ErrorCode::InvalidLimit,
                    Some(1),
                    key.to_owned(),
                    message.to_owned()
                )
            );
        }
    }

    #[test]
    fn resource_urls_are_https_without_a_fragment() {
        for lines in [
            "mcp_resource = \"http://gate.example/mcp\"\n",
            "mcp_resource = \"https://gate.example/mcp#x\"\n",
            "authorization_servers = []\n",
            "authorization_servers = [\"http://a.example\"]\n",
            &*format!(
                "authorization_servers = [{}]\n",
                ["\"https://a\""; 9].join(", ")
            ),
        ] {
            let (code, line, _, _) = bad(lines);
            assert_eq!((code, line), (ErrorCode::InvalidValue, Some(1)), "{lines}");
        }
    }

    #[test]
    fn wrong_types_and_unknown_keys_are_the_core_loaders_refusals() {
        for (text, code, key) in [
            ("[jwt]\nissuer = \"i\"\n", ErrorCode::MissingKey, "audience"),
            (
                &*format!("{HEAD}audiences = [\"x\"]\n"),
                ErrorCode::UnknownKey,
                "audiences",
            ),
            (
                &*format!("{HEAD}leeway_seconds = \"30\"\n"),
                ErrorCode::InvalidType,
                "leeway_seconds",
            ),
            (
                "[jwt]\nissuer = \"i\"\naudience = \"toolgate\"\n",
                ErrorCode::InvalidType,
                "audience",
            ),
            (
                &*format!("{HEAD}[jwt.roles]\nadmin = \"ops\"\n"),
                ErrorCode::InvalidType,
                "admin",
            ),
        ] {
            let (got, line, got_key) = refused_by_core(text);
            assert_eq!((got, got_key.as_str()), (code, key), "{text}");
            assert!(line.is_some(), "{text}");
        }
    }
}
