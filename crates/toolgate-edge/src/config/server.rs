//! The `[server]` table: how `toolgate serve` listens, its request limits
//! (which every listener keeps: see `Limits`), and its bearer
//! tokens (`[[server.token]]`).

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use toolgate::config::front::{RawMetricsAuth, RawRole, RawToken, Spanned};
use toolgate::config::{Config, Error, ErrorCode};

use super::rules::{check_user_name, listen, speaks_for, token_sha256, user_name};

/// The address `toolgate serve` listens on when `[server]` sets no `listen`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// A request body's cap when `[server]` sets no `max_body_bytes`: 8 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 << 20;
/// The largest `max_body_bytes` accepted: 256 MiB.
pub const MAX_MAX_BODY_BYTES: u64 = 256 << 20;
/// Seconds a request's headers may take when `[server]` sets no
/// `header_timeout_seconds`.
pub const DEFAULT_HEADER_TIMEOUT_SECONDS: u64 = 10;
/// Seconds a request's body may take when `[server]` sets no
/// `body_timeout_seconds`.
pub const DEFAULT_BODY_TIMEOUT_SECONDS: u64 = 30;
/// The longest `header_timeout_seconds` or `body_timeout_seconds` accepted:
/// one hour.
pub const MAX_TIMEOUT_SECONDS: u64 = 3600;
/// Connections served at once when `[server]` sets no `max_connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The largest `max_connections` accepted.
pub const MAX_MAX_CONNECTIONS: u64 = 1 << 20;
/// How often, in milliseconds, a wait re-reads the store for changes
/// nobody pushed, when `[server]` sets no `store_poll_ms`.
pub const DEFAULT_STORE_POLL_MS: u64 = 200;
/// The shortest `store_poll_ms` accepted.
pub const MIN_STORE_POLL_MS: u64 = 10;
/// The longest `store_poll_ms` accepted: one minute.
pub const MAX_STORE_POLL_MS: u64 = 60_000;

/// What an HTTP caller may do: `[[server.token]] role`, a JWT's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ServerRole {
    /// `agent`: decide, and wait on an approval.
    Agent,
    /// `approver`: list, read, approve and deny approvals (and wait).
    Approver,
    /// `admin`: everything, including the kill switch and the audit log.
    Admin,
}

impl ServerRole {
    /// The name used in the config: `agent`, `approver` or `admin`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Approver => "approver",
            Self::Admin => "admin",
        }
    }

    /// The role of a config name ([`ServerRole::as_str`]); `None` for any
    /// other text.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Agent, Self::Approver, Self::Admin]
            .into_iter()
            .find(|r| r.as_str() == name)
    }
}

impl fmt::Display for ServerRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `[[server.token]]`: the SHA-256 of a bearer token and its role. The
/// token itself is never in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerToken {
    name: Option<String>,
    sha256: [u8; 32],
    role: ServerRole,
    users: Option<Vec<String>>,
    identity: Option<String>,
}

impl ServerToken {
    /// The person holding the token (`identity`), as a two-person rule
    /// counts approvers, if given; else the token's name stands for it.
    pub fn identity(&self) -> Option<&str> {
        self.identity.as_deref()
    }

    /// The token's name (the actor recorded for its approvals), if given.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The SHA-256 of the token.
    pub fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    /// The role.
    pub fn role(&self) -> ServerRole {
        self.role
    }

    /// The users the token may speak for (`users`: exact names, or
    /// prefixes ending in `*`); `None`: any user.
    pub fn users(&self) -> Option<&[String]> {
        self.users.as_deref()
    }

    /// Whether the token may decide and wait for `user`: any user without
    /// `users`, else a name equal to one of them or starting with a prefix
    /// given as `prefix*`.
    pub fn may_speak_for(&self, user: &str) -> bool {
        speaks_for(self.users(), user)
    }
}

/// Who may read `GET /metrics`: `[server] metrics_auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MetricsAuth {
    /// `none`: anyone who reaches the port (the default).
    #[default]
    None,
    /// `token`: a caller with any configured bearer token.
    Token,
}

/// The `[server]` table: how `toolgate serve` listens and who may call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    listen: SocketAddr,
    max_body_bytes: usize,
    header_timeout: Duration,
    body_timeout: Duration,
    max_connections: usize,
    store_poll: Duration,
    metrics_auth: MetricsAuth,
    tokens: Vec<ServerToken>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECONDS),
            body_timeout: Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECONDS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            store_poll: Duration::from_millis(DEFAULT_STORE_POLL_MS),
            metrics_auth: MetricsAuth::None,
            tokens: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// The address to listen on (default `127.0.0.1:8080`).
    pub fn listen(&self) -> SocketAddr {
        self.listen
    }

    /// The largest request body accepted, in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// How often a wait (an agent waiting on an approval) re-reads the
    /// store (default 200 ms): the fallback for changes made by another
    /// process that the store does not push. A PostgreSQL store pushes
    /// them (`LISTEN`/`NOTIFY`), so replicas may poll rarely.
    pub fn store_poll(&self) -> Duration {
        self.store_poll
    }

    /// How long a request's headers may take to arrive (default 10 s); an
    /// idle keep-alive connection is closed after as long.
    pub fn header_timeout(&self) -> Duration {
        self.header_timeout
    }

    /// How long a request's body may take to arrive (default 30 s).
    pub fn body_timeout(&self) -> Duration {
        self.body_timeout
    }

    /// How many connections are served at once (default 1024); more wait
    /// to be accepted.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// The bearer tokens.
    pub fn tokens(&self) -> &[ServerToken] {
        &self.tokens
    }

    /// Who may read `GET /metrics`.
    pub fn metrics_auth(&self) -> MetricsAuth {
        self.metrics_auth
    }

    /// `config`'s `[server]` table, checked: an address, a body cap,
    /// timeouts, a connection cap and a poll interval in range, tokens as
    /// 64 hex digits bound to user names. The error is placed at the key,
    /// as [`Config::load`] places its own.
    ///
    /// # Errors
    ///
    /// The first value refused, with its [`ErrorCode`] and position.
    pub fn from_config(config: &Config) -> Result<Self, Error> {
        let raw = &config.front_end_tables().server;
        let mut server = ServerConfig::default();
        if let Some(v) = &raw.listen {
            server.listen = listen(config, v, DEFAULT_LISTEN)?;
        }
        if let Some(v) = &raw.max_body_bytes {
            let n = in_range(config, v, "max_body_bytes", 1, MAX_MAX_BODY_BYTES)?;
            server.max_body_bytes = usize::try_from(n).unwrap_or(DEFAULT_MAX_BODY_BYTES);
        }
        if let Some(v) = &raw.header_timeout_seconds {
            let n = in_range(config, v, "header_timeout_seconds", 1, MAX_TIMEOUT_SECONDS)?;
            server.header_timeout = Duration::from_secs(n);
        }
        if let Some(v) = &raw.body_timeout_seconds {
            let n = in_range(config, v, "body_timeout_seconds", 1, MAX_TIMEOUT_SECONDS)?;
            server.body_timeout = Duration::from_secs(n);
        }
        if let Some(v) = &raw.max_connections {
            let n = in_range(config, v, "max_connections", 1, MAX_MAX_CONNECTIONS)?;
            server.max_connections = usize::try_from(n).unwrap_or(DEFAULT_MAX_CONNECTIONS);
        }
        if let Some(v) = &raw.store_poll_ms {
            let n = in_range(
                config,
                v,
                "store_poll_ms",
                MIN_STORE_POLL_MS,
                MAX_STORE_POLL_MS,
            )?;
            server.store_poll = Duration::from_millis(n);
        }
        if let Some(m) = &raw.metrics_auth {
            server.metrics_auth = match m.get_ref() {
                RawMetricsAuth::None => MetricsAuth::None,
                RawMetricsAuth::Token => MetricsAuth::Token,
            };
        }
        for t in &raw.token {
            let token = server_token(config, t, &server.tokens)?;
            server.tokens.push(token);
        }
        Ok(server)
    }
}

/// A limit `key` from `min` to `max`, refused at its key
/// ([`ErrorCode::InvalidLimit`]) when out of range.
fn in_range(
    config: &Config,
    v: &Spanned<u64>,
    key: &str,
    min: u64,
    max: u64,
) -> Result<u64, Error> {
    let n = *v.get_ref();
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(config.error_at_key(
            ErrorCode::InvalidLimit,
            v.span().start,
            key,
            format!("`{key}` must be between {min} and {max}"),
        ))
    }
}

/// One `[[server.token]]`: `users` as names or prefixes ending in `*`,
/// `sha256` as 64 hex digits and not among the `declared` tokens'.
fn server_token(
    config: &Config,
    t: &RawToken,
    declared: &[ServerToken],
) -> Result<ServerToken, Error> {
    let users = match &t.users {
        None => None,
        Some(list) => {
            // A name, or a prefix before one final `*`, follows the one
            // user-name rule; `"*"` alone is any user.
            let why = list.get_ref().iter().find_map(|u| {
                let name = u.strip_suffix('*').unwrap_or(u);
                if name.contains('*') {
                    Some("a `*` may only end an entry")
                } else if u == "*" {
                    None
                } else {
                    check_user_name(name).err()
                }
            });
            if why.is_some() || list.get_ref().is_empty() {
                let why = why.unwrap_or("the list is empty");
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    list.span().start,
                    "users",
                    format!("`users` must list user names, or prefixes ending in one `*` (`\"*\"` is any user): {why}"),
                ));
            }
            Some(list.get_ref().clone())
        }
    };
    let sha256 = token_sha256(config, &t.sha256, declared.iter().map(|o| &o.sha256))?;
    let identity = match &t.identity {
        None => None,
        Some(id) => Some(user_name(config, id, "identity")?),
    };
    Ok(ServerToken {
        name: t.name.as_ref().map(|n| n.get_ref().clone()),
        sha256,
        role: match t.role {
            RawRole::Agent => ServerRole::Agent,
            RawRole::Approver => ServerRole::Approver,
            RawRole::Admin => ServerRole::Admin,
        },
        users,
        identity,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{refused, refused_by_core, table};
    use super::*;

    const HASH_A: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    fn server(text: &str) -> Result<ServerConfig, Error> {
        table(text, ServerConfig::from_config)
    }

    fn token(lines: &str) -> String {
        format!("[[server.token]]\nsha256 = \"{HASH_A}\"\nrole = \"agent\"\n{lines}")
    }

    #[test]
    fn defaults_without_the_table() {
        let s = server("").unwrap();
        assert_eq!(s, ServerConfig::default());
        assert_eq!(s.listen().to_string(), DEFAULT_LISTEN);
        assert_eq!(s.max_body_bytes(), DEFAULT_MAX_BODY_BYTES);
        assert_eq!(s.header_timeout(), Duration::from_secs(10));
        assert_eq!(s.body_timeout(), Duration::from_secs(30));
        assert_eq!(s.max_connections(), 1024);
        assert_eq!(s.store_poll(), Duration::from_millis(200));
        assert_eq!(s.metrics_auth(), MetricsAuth::None);
        assert!(s.tokens().is_empty());
    }

    #[test]
    fn every_key_is_read() {
        let s = server(&format!(
            "[server]\nlisten = \"[::1]:9\"\nmax_body_bytes = 268435456\n\
             header_timeout_seconds = 2\nbody_timeout_seconds = 3600\nmax_connections = 7\n\
             store_poll_ms = 30000\nmetrics_auth = \"token\"\n\
             [[server.token]]\nname = \"ops\"\nsha256 = \"{}\"\nrole = \"admin\"\n\
             users = [\"alice\", \"team-*\"]\nidentity = \"Zoë\"\n\
             [[server.token]]\nsha256 = \"{}\"\nrole = \"approver\"\n",
            HASH_A.to_ascii_uppercase(),
            "ab".repeat(32)
        ))
        .unwrap();
        assert_eq!(s.listen().to_string(), "[::1]:9");
        assert_eq!(s.max_body_bytes(), 256 << 20);
        assert_eq!(s.header_timeout(), Duration::from_secs(2));
        assert_eq!(s.body_timeout(), Duration::from_secs(3600));
        assert_eq!(s.max_connections(), 7);
        assert_eq!(s.store_poll(), Duration::from_secs(30));
        assert_eq!(s.metrics_auth(), MetricsAuth::Token);
        let [ops, other] = s.tokens() else {
            panic!("{:?}", s.tokens())
        };
        assert_eq!(ops.name(), Some("ops"));
        assert_eq!(ops.sha256()[..2], [0x9f, 0x86]);
        assert_eq!(ops.role(), ServerRole::Admin);
        assert_eq!(ops.identity(), Some("Zoë"));
        assert!(ops.may_speak_for("alice") && ops.may_speak_for("team-x"));
        assert!(!ops.may_speak_for("bob"));
        assert_eq!((other.name(), other.identity()), (None, None));
        assert_eq!(other.role(), ServerRole::Approver);
        assert_eq!(other.users(), None);
        assert!(other.may_speak_for("anyone"));
    }

    #[test]
    fn roles_have_one_name_each() {
        for role in [ServerRole::Agent, ServerRole::Approver, ServerRole::Admin] {
            assert_eq!(ServerRole::from_name(role.as_str()), Some(role));
            assert_eq!(role.to_string(), role.as_str());
        }
        for bad in ["", "Admin", "root", " agent"] {
            assert_eq!(ServerRole::from_name(bad), None, "{bad}");
        }
        assert!(ServerRole::Agent < ServerRole::Approver);
        assert!(ServerRole::Approver < ServerRole::Admin);
    }

    #[test]
    fn out_of_range_limits_are_refused_at_their_key() {
        for (line, key, range) in [
            ("max_body_bytes = 0", "max_body_bytes", "1 and 268435456"),
            (
                "max_body_bytes = 268435457",
                "max_body_bytes",
                "1 and 268435456",
            ),
            (
                "header_timeout_seconds = 0",
                "header_timeout_seconds",
                "1 and 3600",
            ),
            (
                "body_timeout_seconds = 3601",
                "body_timeout_seconds",
                "1 and 3600",
            ),
            ("max_connections = 0", "max_connections", "1 and 1048576"),
            (
                "max_connections = 2000000",
                "max_connections",
                "1 and 1048576",
            ),
            ("store_poll_ms = 9", "store_poll_ms", "10 and 60000"),
            ("store_poll_ms = 60001", "store_poll_ms", "10 and 60000"),
        ] {
            assert_eq!(
                refused(&format!("[server]\n{line}\n"), ServerConfig::from_config),
                (
                    ErrorCode::InvalidLimit,
                    Some(2),
                    Some(1),
                    key.to_owned(),
                    format!("`{key}` must be between {range}")
                ),
                "{line}"
            );
        }
    }

    #[test]
    fn a_bad_address_is_refused_at_its_key() {
        for bad in [
            "nowhere",
            "127.0.0.1",
            "127.0.0.1:99999",
            "",
            "localhost:80",
        ] {
            assert_eq!(
                refused(
                    &format!("# a comment\n[server]\nlisten = \"{bad}\"\n"),
                    ServerConfig::from_config
                ),
                (
                    ErrorCode::InvalidValue,
                    Some(3),
                    Some(1),
                    "listen".to_owned(),
                    "`listen` must be an address and port, such as \"127.0.0.1:8080\"".to_owned()
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn wrong_types_and_unknown_keys_are_the_core_loaders_refusals() {
        for (text, code, key) in [
            (
                "[server]\nheader_timeout_seconds = -1\n",
                ErrorCode::InvalidValue,
                "header_timeout_seconds",
            ),
            (
                "[server]\nmax_connections = \"7\"\n",
                ErrorCode::InvalidType,
                "max_connections",
            ),
            (
                "[server]\nlisten = 8080\n",
                ErrorCode::InvalidType,
                "listen",
            ),
            (
                "[server]\nheader_timeout = 5\n",
                ErrorCode::UnknownKey,
                "header_timeout",
            ),
            (
                "[server]\nmetrics_auth = \"basic\"\n",
                ErrorCode::InvalidValue,
                "metrics_auth",
            ),
            (
                "[[server.token]]\nsha256 = \"x\"\nrole = \"root\"\n",
                ErrorCode::InvalidValue,
                "role",
            ),
            (
                "[[server.token]]\nrole = \"agent\"\n",
                ErrorCode::MissingKey,
                "sha256",
            ),
            (
                "[[server.token]]\nsha256 = \"x\"\nrole = \"agent\"\nuser = \"a\"\n",
                ErrorCode::UnknownKey,
                "user",
            ),
        ] {
            let (got, line, got_key) = refused_by_core(text);
            assert_eq!((got, got_key.as_str()), (code, key), "{text}");
            assert!(line.is_some(), "{text}");
        }
    }

    #[test]
    fn a_token_hash_is_64_hex_digits_declared_once() {
        let (code, line, column, key, message) = refused(
            "[[server.token]]\nsha256 = \"9f86\"\nrole = \"agent\"\n",
            ServerConfig::from_config,
        );
        assert_eq!(
            (code, line, column),
            (ErrorCode::InvalidValue, Some(2), Some(1))
        );
        assert_eq!(key, "sha256");
        assert!(message.contains("64 hexadecimal digits"), "{message}");
        // The same hash twice, in either case, is one token declared twice:
        // refused at the second.
        let twice = format!(
            "{}[[server.token]]\nsha256 = \"{}\"\nrole = \"admin\"\n",
            token(""),
            HASH_A.to_ascii_uppercase()
        );
        let (code, line, _, key, message) = refused(&twice, ServerConfig::from_config);
        assert_eq!((code, line), (ErrorCode::InvalidValue, Some(5)));
        assert_eq!(key, "sha256");
        assert_eq!(message, "this token is already declared");
    }

    #[test]
    fn token_users_follow_the_one_user_name_rule() {
        for good in [r#"["alice"]"#, r#"["Zoë Müller", "ci-*"]"#, r#"["*"]"#] {
            let s = server(&token(&format!("users = {good}\n")))
                .unwrap_or_else(|e| panic!("{good}: {e}"));
            assert_eq!(s.tokens().len(), 1, "{good}");
        }
        let long = format!(r#"["{}"]"#, "a".repeat(257));
        for (bad, why) in [
            (r#"[]"#, "the list is empty"),
            (r#"[""]"#, "empty or blank"),
            (r#"["  "]"#, "empty or blank"),
            (r#"[" *"]"#, "empty or blank"),
            (r#"["al\nice"]"#, "control"),
            (r#"["ops\u0085*"]"#, "control"),
            (r#"["a*b"]"#, "only end"),
            (r#"["**"]"#, "only end"),
            (long.as_str(), "256 bytes"),
        ] {
            let (code, line, column, key, message) = refused(
                &token(&format!("users = {bad}\n")),
                ServerConfig::from_config,
            );
            assert_eq!(
                (code, line, column),
                (ErrorCode::InvalidValue, Some(4), Some(1)),
                "{bad}"
            );
            assert_eq!(key, "users", "{bad}");
            assert!(
                message.starts_with("`users` must list") && message.contains(why),
                "{bad}: {message}"
            );
        }
    }

    #[test]
    fn an_identity_is_a_user_name() {
        for (bad, why) in [
            ("", "empty"),
            ("a\tb", "control"),
            (&*"a".repeat(257), "256 bytes"),
        ] {
            let text = token(&format!("identity = \"{bad}\"\n"));
            let (code, line, _, key, message) = refused(&text, ServerConfig::from_config);
            assert_eq!((code, line), (ErrorCode::InvalidValue, Some(4)), "{bad:?}");
            assert_eq!(key, "identity");
            assert!(
                message.starts_with("`identity`: ") && message.contains(why),
                "{message}"
            );
        }
    }
}
