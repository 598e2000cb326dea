//! The `[oidc]` table: the approvals page's OpenID Connect login
//! (authorization code with PKCE) against `[jwt]`'s issuer.

use toolgate::config::front::RawOidc;
use toolgate::config::{Config, Error, ErrorCode};

use super::rules::{provider_url_ok, resolve};

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

impl OidcConfig {
    /// `config`'s `[oidc]` table, checked (`None` without one): a client
    /// id, URLs (`https://`, or `http://` on loopback), a `[jwt]` table for
    /// the keys, and the client's secret, read now. The error is placed at
    /// the key, as [`Config::load`] places its own; it never shows the
    /// secret.
    ///
    /// # Errors
    ///
    /// The first value refused, with its [`ErrorCode`] and position.
    pub fn from_config(config: &Config) -> Result<Option<Self>, Error> {
        let tables = config.front_end_tables();
        let Some(t) = &tables.oidc else {
            return Ok(None);
        };
        if tables.jwt.is_none() {
            return Err(config.error_at_key(
                ErrorCode::MissingKey,
                t.client_id.span().start,
                "client_id",
                "`[oidc]` verifies the id_token with `[jwt]`'s issuer and keys: add a `[jwt]` table",
            ));
        }
        let id = t.client_id.get_ref();
        if id.is_empty() || id.len() > 256 || id.chars().any(char::is_control) {
            return Err(config.error_at_key(
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
                return Err(config.error_at_key(
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
            if !provider_url_ok(v.get_ref()) || v.get_ref().contains(['?', '#']) {
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    key,
                    format!("`{key}` must be an `https://` URL (`http://` only on a loopback address), without query or fragment"),
                ));
            }
        }
        let (client_secret, auth) = client_auth(config, t)?;
        Ok(Some(OidcConfig {
            client_id: id.clone(),
            redirect_uri: t.redirect_uri.get_ref().clone(),
            endpoints: endpoints.map(|(a, t)| (a.get_ref().clone(), t.get_ref().clone())),
            client_secret,
            auth,
        }))
    }
}

/// The client's secret (read now) and how it authenticates: a public
/// client without a secret, `client_secret_basic` by default with one.
fn client_auth(
    config: &Config,
    t: &RawOidc,
) -> Result<(Option<ClientSecret>, TokenEndpointAuth), Error> {
    let at = t.client_id.span().start;
    let secret = match (&t.client_secret_file, &t.client_secret_env) {
        (Some(f), None) => {
            let text = std::fs::read_to_string(resolve(config, f.get_ref())).map_err(|e| {
                config.error_at_key(
                    ErrorCode::InvalidValue,
                    f.span().start,
                    "client_secret_file",
                    format!("cannot read `{}`: {e}", f.get_ref()),
                )
            })?;
            Some(text.trim_end_matches(['\n', '\r']).to_owned())
        }
        (None, Some(var)) => Some(std::env::var(var.get_ref()).map_err(|_| {
            config.error_at_key(
                ErrorCode::InvalidValue,
                var.span().start,
                "client_secret_env",
                format!("the environment variable `{}` is not set", var.get_ref()),
            )
        })?),
        (None, None) => None,
        (Some(f), Some(_)) => {
            return Err(config.error_at_key(
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
        return Err(config.error_at_key(
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
            return Err(config.error_at_key(
                ErrorCode::InvalidValue,
                a.span().start,
                "token_endpoint_auth",
                "`none` is a public client's: drop the client secret, or use `client_secret_basic` or `client_secret_post`",
            ))
        }
        (Some((a, "client_secret_basic" | "client_secret_post")), None) => {
            return Err(config.error_at_key(
                ErrorCode::MissingKey,
                a.span().start,
                "token_endpoint_auth",
                "a confidential client needs its secret: `client_secret_file` or `client_secret_env`",
            ))
        }
        (Some((a, _)), _) => {
            return Err(config.error_at_key(
                ErrorCode::InvalidValue,
                a.span().start,
                "token_endpoint_auth",
                "`token_endpoint_auth` must be `none`, `client_secret_basic` or `client_secret_post`",
            ))
        }
    };
    Ok((secret.map(ClientSecret), auth))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{refused, refused_by_core, table};
    use super::*;

    const JWT: &str = "[jwt]\nissuer = \"https://idp.example\"\naudience = [\"toolgate\"]\n\
                       jwks_url = \"https://idp.example/jwks\"\n";
    const OIDC: &str = "[oidc]\nclient_id = \"page\"\n\
                        redirect_uri = \"https://gate.example/ui/login/oidc/callback\"\n";

    fn oidc(extra: &str) -> Result<Option<OidcConfig>, Error> {
        table(&format!("{JWT}{OIDC}{extra}"), OidcConfig::from_config)
    }

    /// The refusal of `[oidc]` with `extra` lines: code, line (`[oidc]`'s
    /// is 5, `extra` starts at 8), key, message.
    fn bad(extra: &str) -> (ErrorCode, Option<usize>, String, String) {
        let (code, line, _, key, message) =
            refused(&format!("{JWT}{OIDC}{extra}"), OidcConfig::from_config);
        (code, line, key, message)
    }

    #[test]
    fn no_table_no_login() {
        assert_eq!(table(JWT, OidcConfig::from_config).unwrap(), None);
    }

    #[test]
    fn a_public_client_reads_its_endpoints_from_discovery() {
        let o = oidc("").unwrap().unwrap();
        assert_eq!(o.client_id(), "page");
        assert_eq!(
            o.redirect_uri(),
            "https://gate.example/ui/login/oidc/callback"
        );
        assert!(o.secure());
        assert_eq!(o.endpoints(), None);
        assert_eq!(o.token_endpoint_auth(), TokenEndpointAuth::None);
        assert!(o.client_secret().is_none());
        let o = oidc(
            "authorization_endpoint = \"https://idp.example/auth\"\n\
             token_endpoint = \"http://127.0.0.1:9/token\"\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            o.endpoints(),
            Some(("https://idp.example/auth", "http://127.0.0.1:9/token"))
        );
        let o = table(
            &format!(
                "{JWT}[oidc]\nclient_id = \"p\"\nredirect_uri = \"http://localhost:8080/cb\"\n"
            ),
            OidcConfig::from_config,
        )
        .unwrap()
        .unwrap();
        assert!(!o.secure());
    }

    /// A confidential client's secret is read from the environment or a
    /// file (never printed), the method defaults to `client_secret_basic`,
    /// and contradictions are refused without repeating the secret.
    #[test]
    fn a_confidential_clients_secret_is_read_and_never_shown() {
        std::env::set_var("TOOLGATE_EDGE_TEST_OIDC_SECRET", "hunter2-oidc-secret");
        let secret = "client_secret_env = \"TOOLGATE_EDGE_TEST_OIDC_SECRET\"\n";
        let o = oidc(secret).unwrap().unwrap();
        assert_eq!(
            o.token_endpoint_auth(),
            TokenEndpointAuth::ClientSecretBasic
        );
        assert_eq!(o.client_secret().unwrap().expose(), "hunter2-oidc-secret");
        assert!(!format!("{o:?}").contains("hunter2"));
        let o = oidc(&format!(
            "{secret}token_endpoint_auth = \"client_secret_post\"\n"
        ))
        .unwrap()
        .unwrap();
        assert_eq!(o.token_endpoint_auth(), TokenEndpointAuth::ClientSecretPost);
        assert_eq!(o.token_endpoint_auth().as_str(), "client_secret_post");

        // From a file beside the config, without its final newline.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret"), "hunter3\r\n").unwrap();
        let c = toolgate::config::Config::parse(
            &format!("{JWT}{OIDC}client_secret_file = \"secret\"\n"),
            dir.path().join("toolgate.toml"),
        )
        .unwrap();
        let o = OidcConfig::from_config(&c).unwrap().unwrap();
        assert_eq!(o.client_secret().unwrap().expose(), "hunter3");

        for (extra, code, key, says) in [
            (
                format!("{secret}token_endpoint_auth = \"none\"\n"),
                ErrorCode::InvalidValue,
                "token_endpoint_auth",
                "public client",
            ),
            (
                "token_endpoint_auth = \"client_secret_basic\"\n".to_owned(),
                ErrorCode::MissingKey,
                "token_endpoint_auth",
                "needs its secret",
            ),
            (
                format!("{secret}token_endpoint_auth = \"private_key_jwt\"\n"),
                ErrorCode::InvalidValue,
                "token_endpoint_auth",
                "must be `none`",
            ),
            (
                "client_secret_env = \"TOOLGATE_EDGE_TEST_OIDC_UNSET\"\n".to_owned(),
                ErrorCode::InvalidValue,
                "client_secret_env",
                "is not set",
            ),
            (
                format!("client_secret_file = \"/nonexistent/secret\"\n{secret}"),
                ErrorCode::InvalidValue,
                "client_secret_file",
                "at most one",
            ),
            (
                "client_secret_file = \"/nonexistent/secret\"\n".to_owned(),
                ErrorCode::InvalidValue,
                "client_secret_file",
                "cannot read",
            ),
        ] {
            let (got, line, got_key, message) = bad(&extra);
            assert_eq!((got, got_key.as_str()), (code, key), "{extra}");
            assert!(line.is_some_and(|l| l >= 8), "{extra}");
            assert!(message.contains(says), "{extra}: {message}");
            assert!(!message.contains("hunter2"), "{message}");
        }
        // A secret of two lines, or an empty one, is not a secret.
        std::env::set_var("TOOLGATE_EDGE_TEST_OIDC_TWO_LINES", "a\nb");
        std::env::set_var("TOOLGATE_EDGE_TEST_OIDC_EMPTY", "");
        for var in [
            "TOOLGATE_EDGE_TEST_OIDC_TWO_LINES",
            "TOOLGATE_EDGE_TEST_OIDC_EMPTY",
        ] {
            // Placed at the table's `client_id`: the secret itself is not
            // in the file to point at.
            let (code, line, key, message) = bad(&format!("client_secret_env = \"{var}\"\n"));
            assert_eq!(
                (code, line, key.as_str()),
                (ErrorCode::InvalidValue, Some(6), "client_secret_file")
            );
            assert!(message.contains("one line"), "{message}");
        }
    }

    #[test]
    fn urls_ids_and_the_jwt_table_are_checked() {
        for (extra, code, key) in [
            ("token_endpoint = \"https://idp.example/token\"\n", ErrorCode::MissingKey, "token_endpoint"),
            ("authorization_endpoint = \"https://idp.example/auth\"\n", ErrorCode::MissingKey, "token_endpoint"),
            (
                "authorization_endpoint = \"http://idp.example/auth\"\ntoken_endpoint = \"https://idp.example/token\"\n",
                ErrorCode::InvalidValue,
                "authorization_endpoint",
            ),
            (
                "authorization_endpoint = \"https://idp.example/auth\"\ntoken_endpoint = \"https://idp.example/t?x=1\"\n",
                ErrorCode::InvalidValue,
                "token_endpoint",
            ),
        ] {
            let (got, _, got_key, _) = bad(extra);
            assert_eq!((got, got_key.as_str()), (code, key), "{extra}");
        }
        for (oidc, key) in [
            (
                "client_id = \"\"\nredirect_uri = \"https://g/cb\"\n",
                "client_id",
            ),
            (
                &*format!(
                    "client_id = \"{}\"\nredirect_uri = \"https://g/cb\"\n",
                    "c".repeat(257)
                ),
                "client_id",
            ),
            (
                "client_id = \"a\\u0000\"\nredirect_uri = \"https://g/cb\"\n",
                "client_id",
            ),
            (
                "client_id = \"p\"\nredirect_uri = \"http://gate.example/cb\"\n",
                "redirect_uri",
            ),
            (
                "client_id = \"p\"\nredirect_uri = \"https://gate.example/cb#x\"\n",
                "redirect_uri",
            ),
        ] {
            let (code, _, _, got, _) =
                refused(&format!("{JWT}[oidc]\n{oidc}"), OidcConfig::from_config);
            assert_eq!(
                (code, got.as_str()),
                (ErrorCode::InvalidValue, key),
                "{oidc}"
            );
        }
        // Without `[jwt]` there are no keys to verify the id_token with.
        let (code, line, column, key, message) = refused(OIDC, OidcConfig::from_config);
        assert_eq!(
            (code, line, column),
            (ErrorCode::MissingKey, Some(2), Some(1))
        );
        assert_eq!(key, "client_id");
        assert!(message.contains("add a `[jwt]` table"), "{message}");
    }

    #[test]
    fn missing_keys_wrong_types_and_unknown_keys_are_the_core_loaders_refusals() {
        for (text, code, key) in [
            (
                "[oidc]\nclient_id = \"p\"\n",
                ErrorCode::MissingKey,
                "redirect_uri",
            ),
            (
                "[oidc]\nclient_id = 7\nredirect_uri = \"https://g/cb\"\n",
                ErrorCode::InvalidType,
                "client_id",
            ),
            (
                &*format!("{OIDC}client_secret = \"x\"\n"),
                ErrorCode::UnknownKey,
                "client_secret",
            ),
        ] {
            let (got, line, got_key) = refused_by_core(text);
            assert_eq!((got, got_key.as_str()), (code, key), "{text}");
            assert!(line.is_some(), "{text}");
        }
    }
}
