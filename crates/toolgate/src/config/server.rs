//! The `[server]` table: how `toolgate serve` listens, its request limits,
//! and its bearer tokens (`[[server.token]]`).

use std::fmt;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::{RawConfig, RawMetricsAuth, RawRole, RawToken};

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

/// What an HTTP caller may do: `[[server.token]] role`.
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

/// The longest user name accepted, in bytes.
pub const MAX_USER_NAME_BYTES: usize = 256;

/// The one rule for a user name, wherever one comes from (a token's
/// `user` in `[[mcp.token]]` or `[[proxy.token]]`, `[proxy] user`, the
/// proxy's trusted user header): 1 to [`MAX_USER_NAME_BYTES`] bytes, not
/// blank, no control character. `Err` says what is wrong.
pub fn check_user_name(name: &str) -> Result<(), &'static str> {
    if name.trim().is_empty() {
        Err("a user name must not be empty or blank")
    } else if name.len() > MAX_USER_NAME_BYTES {
        Err("a user name must be at most 256 bytes")
    } else if name.chars().any(char::is_control) {
        Err("a user name must not contain control characters")
    } else {
        Ok(())
    }
}

/// Whether a token bound to `users` (`None`: unbound) may speak for `user`:
/// a name equal to one of them, or starting with a prefix given as
/// `prefix*`.
pub fn speaks_for(users: Option<&[String]>, user: &str) -> bool {
    users.is_none_or(|users| {
        users.iter().any(|u| match u.strip_suffix('*') {
            Some(prefix) => user.starts_with(prefix),
            None => u == user,
        })
    })
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
    listen: std::net::SocketAddr,
    max_body_bytes: usize,
    header_timeout: std::time::Duration,
    body_timeout: std::time::Duration,
    max_connections: usize,
    store_poll: std::time::Duration,
    metrics_auth: MetricsAuth,
    tokens: Vec<ServerToken>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_timeout: std::time::Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECONDS),
            body_timeout: std::time::Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECONDS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            store_poll: std::time::Duration::from_millis(DEFAULT_STORE_POLL_MS),
            metrics_auth: MetricsAuth::None,
            tokens: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// The address to listen on (default `127.0.0.1:8080`).
    pub fn listen(&self) -> std::net::SocketAddr {
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
    pub fn store_poll(&self) -> std::time::Duration {
        self.store_poll
    }

    /// How long a request's headers may take to arrive (default 10 s); an
    /// idle keep-alive connection is closed after as long.
    pub fn header_timeout(&self) -> std::time::Duration {
        self.header_timeout
    }

    /// How long a request's body may take to arrive (default 30 s).
    pub fn body_timeout(&self) -> std::time::Duration {
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
}

impl Loader<'_> {
    /// `[server]`: an address, a body cap, timeouts and a connection cap in
    /// range, tokens as 64 hex digits.
    pub(super) fn server(&self, raw: &RawConfig) -> Result<ServerConfig, Error> {
        let mut server = ServerConfig::default();
        if let Some(v) = &raw.server.listen {
            server.listen = v.get_ref().parse().map_err(|_| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    "listen",
                    "`listen` must be an address and port, such as \"127.0.0.1:8080\"",
                )
            })?;
        }
        if let Some(v) = &raw.server.max_body_bytes {
            let n = *v.get_ref();
            let bytes = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_BODY_BYTES);
            server.max_body_bytes = bytes.ok_or_else(|| {
                self.at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "max_body_bytes",
                    format!("`max_body_bytes` must be between 1 and {MAX_MAX_BODY_BYTES}"),
                )
            })?;
        }
        for (v, key, field) in [
            (
                &raw.server.header_timeout_seconds,
                "header_timeout_seconds",
                &mut server.header_timeout,
            ),
            (
                &raw.server.body_timeout_seconds,
                "body_timeout_seconds",
                &mut server.body_timeout,
            ),
        ] {
            if let Some(v) = v {
                let n = *v.get_ref();
                if n == 0 || n > MAX_TIMEOUT_SECONDS {
                    return Err(self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        key,
                        format!("`{key}` must be between 1 and {MAX_TIMEOUT_SECONDS}"),
                    ));
                }
                *field = std::time::Duration::from_secs(n);
            }
        }
        if let Some(v) = &raw.server.max_connections {
            let n = *v.get_ref();
            server.max_connections = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_CONNECTIONS)
                .ok_or_else(|| {
                    self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_connections",
                        format!("`max_connections` must be between 1 and {MAX_MAX_CONNECTIONS}"),
                    )
                })?;
        }
        if let Some(v) = &raw.server.store_poll_ms {
            let n = *v.get_ref();
            if !(MIN_STORE_POLL_MS..=MAX_STORE_POLL_MS).contains(&n) {
                return Err(self.at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "store_poll_ms",
                    format!(
                        "`store_poll_ms` must be between {MIN_STORE_POLL_MS} and {MAX_STORE_POLL_MS}"
                    ),
                ));
            }
            server.store_poll = std::time::Duration::from_millis(n);
        }
        if let Some(m) = &raw.server.metrics_auth {
            server.metrics_auth = match m.get_ref() {
                RawMetricsAuth::None => MetricsAuth::None,
                RawMetricsAuth::Token => MetricsAuth::Token,
            };
        }
        for t in &raw.server.token {
            let token = self.server_token(t, &server.tokens)?;
            server.tokens.push(token);
        }
        Ok(server)
    }

    /// One `[[server.token]]`: `users` as names or prefixes ending in `*`,
    /// `sha256` as 64 hex digits and not among the `declared` tokens'.
    fn server_token(&self, t: &RawToken, declared: &[ServerToken]) -> Result<ServerToken, Error> {
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
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        list.span().start,
                        "users",
                        format!("`users` must list user names, or prefixes ending in one `*` (`\"*\"` is any user): {why}"),
                    ));
                }
                Some(list.get_ref().clone())
            }
        };
        let sha256 = self.token_sha256(&t.sha256, declared.iter().map(|o| &o.sha256))?;
        let identity = match &t.identity {
            None => None,
            Some(id) => {
                if let Err(why) = check_user_name(id.get_ref()) {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        id.span().start,
                        "identity",
                        format!("`identity`: {why}"),
                    ));
                }
                Some(id.get_ref().clone())
            }
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
}

impl Loader<'_> {
    /// A token's `sha256`, the one rule of `[[server.token]]`,
    /// `[[mcp.token]]` and `[[proxy.token]]`: 64 hexadecimal digits, not
    /// the hash of a token already `declared` in the same table.
    pub(super) fn token_sha256<'d>(
        &self,
        raw: &toml::Spanned<String>,
        mut declared: impl Iterator<Item = &'d [u8; 32]>,
    ) -> Result<[u8; 32], Error> {
        let at = |message: &str| {
            self.at_key(
                ErrorCode::InvalidValue,
                raw.span().start,
                "sha256",
                message.to_owned(),
            )
        };
        let sha256 = parse_sha256(raw.get_ref()).ok_or_else(|| {
            at("`sha256` must be the SHA-256 of the token: 64 hexadecimal digits")
        })?;
        if declared.any(|d| *d == sha256) {
            return Err(at("this token is already declared"));
        }
        Ok(sha256)
    }
}

/// 64 hexadecimal digits (either case) as 32 bytes.
pub(super) fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod user_name_tests {
    use super::check_user_name;

    #[test]
    fn one_rule_for_user_names() {
        assert!(check_user_name("alice").is_ok());
        assert!(check_user_name("Zoë Müller").is_ok());
        assert!(check_user_name(&"a".repeat(256)).is_ok());
        for bad in ["", "   ", "\t", "al\nice", "al\u{7f}ice", "al\u{85}ice"] {
            assert!(check_user_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_user_name(&"a".repeat(257)).is_err());
    }
}
