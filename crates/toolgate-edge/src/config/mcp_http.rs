//! `[mcp]`'s keys for `toolgate mcp --listen`: the streamable-HTTP endpoint
//! (where it listens, which `Origin` and `Host` values it accepts, how many
//! sessions it keeps), the client tokens that name the user
//! (`[[mcp.token]]`), and the servers behind it (`[[mcp.upstream]]`).
//!
//! ```toml
//! [mcp]
//! listen = "127.0.0.1:8070"          # the default
//! allowed_origins = ["https://app.example.com"]  # an `Origin` header must be
//!                                    # one of these (default none: a request
//!                                    # carrying an Origin is refused 403)
//! allowed_hosts = ["mcp.example.com"] # `Host` names accepted besides the
//!                                    # loopback names and the bound address
//! max_sessions = 64                  # sessions (and their upstream
//!                                    # connections) kept at once
//! session_idle_seconds = 1800        # a session unused this long ends
//!
//! [[mcp.token]]                      # bearer tokens, stored as SHA-256 hashes
//! sha256 = "9f86d0…"
//! user = "alice"                     # the user its calls are decided as
//! session = "alice-desk"             # the session of its 2026-07-28 calls
//!                                    # (default `mcp-http-USER`)
//!
//! [[mcp.upstream]]
//! name = "shop"
//! command = "python3"                # a stdio server, started per session
//! args = ["server.py"]               #   with only these variables from
//! env = ["PATH"]                     #   toolgate's environment
//! # url = "http://127.0.0.1:8000/mcp" # or a streamable-HTTP server
//! namespace = true                   # its tools are `shop__NAME` (or
//!                                    # prefix = "shop_")
//! ```

use std::net::SocketAddr;

use toolgate::config::front::{RawMcpToken, RawMcpUpstream};
use toolgate::config::{Config, Error, ErrorCode};

use super::rules::{listen, token_sha256, user_name};

/// Sessions kept at once when `[mcp]` sets no `max_sessions`.
pub const DEFAULT_MAX_SESSIONS: usize = 64;
/// The largest `max_sessions` accepted.
pub const MAX_MAX_SESSIONS: u64 = 4096;
/// Seconds an unused session lives when `[mcp]` sets no
/// `session_idle_seconds`.
pub const DEFAULT_SESSION_IDLE_SECONDS: u64 = 1800;
/// The longest `session_idle_seconds` accepted: a day.
pub const MAX_SESSION_IDLE_SECONDS: u64 = 86400;

/// The address `toolgate mcp --listen` uses when `[mcp]` sets no `listen`.
const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8070);

/// The streamable-HTTP side of `[mcp]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpHttpConfig {
    listen: SocketAddr,
    allowed_origins: Vec<String>,
    allowed_hosts: Vec<String>,
    max_sessions: usize,
    session_idle: std::time::Duration,
    tokens: Vec<McpToken>,
    upstreams: Vec<McpUpstream>,
}

impl Default for McpHttpConfig {
    fn default() -> Self {
        Self {
            listen: DEFAULT_LISTEN,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: std::time::Duration::from_secs(DEFAULT_SESSION_IDLE_SECONDS),
            tokens: Vec::new(),
            upstreams: Vec::new(),
        }
    }
}

impl McpHttpConfig {
    /// The address to listen on (default `127.0.0.1:8070`).
    pub fn listen(&self) -> SocketAddr {
        self.listen
    }

    /// The `Origin` values accepted (lower-case, without a trailing `/`);
    /// a request with any other `Origin` header is refused.
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// The `Host` names accepted besides `localhost`, loopback addresses and
    /// the bound address (lower-case, without a port).
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// How many sessions are kept at once.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// How long a session may stay unused (no request, no open stream)
    /// before it ends, with its upstream connection.
    pub fn session_idle(&self) -> std::time::Duration {
        self.session_idle
    }

    /// The client tokens (`[[mcp.token]]`).
    pub fn tokens(&self) -> &[McpToken] {
        &self.tokens
    }

    /// The servers behind the endpoint (`[[mcp.upstream]]`), in order.
    pub fn upstreams(&self) -> &[McpUpstream] {
        &self.upstreams
    }
}

/// One `[[mcp.token]]`: the SHA-256 of a bearer token, the user it stands
/// for, and the session its stateless (2026-07-28) calls are decided in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToken {
    sha256: [u8; 32],
    user: String,
    session: Option<String>,
}

impl McpToken {
    /// The SHA-256 of the token.
    pub fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    /// The user its calls are decided as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The session of its 2026-07-28 calls, when the config names one.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }
}

/// One `[[mcp.upstream]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpUpstream {
    name: String,
    target: UpstreamTarget,
    prefix: String,
}

impl McpUpstream {
    /// Its name (letters, digits, `_`, `-`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it is.
    pub fn target(&self) -> &UpstreamTarget {
        &self.target
    }

    /// What its tool names are prefixed with for the client and in the
    /// config's registry (empty: none).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

/// Where an upstream server is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamTarget {
    /// A stdio server toolgate starts (one per session).
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// The variables it is given from toolgate's environment.
        env: Vec<String>,
    },
    /// A streamable-HTTP server (`http://` or `https://`).
    Url(String),
}

/// Whether `s` is a name of letters, digits, `_` and `-`, 1 to 64 long.
fn plain_name(s: &str, extra: &[u8]) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || extra.contains(&b))
}

impl McpHttpConfig {
    /// `config`'s `[mcp]` HTTP keys, checked (see [`super::McpConfig::from_config`]).
    pub(super) fn from_config(config: &Config) -> Result<Self, Error> {
        let m = &config.front_end_tables().mcp;
        let mut http = McpHttpConfig::default();
        if let Some(v) = &m.listen {
            http.listen = listen(config, v, "127.0.0.1:8070")?;
        }
        if let Some(list) = &m.allowed_origins {
            for item in list.get_ref() {
                let text = item.get_ref().trim_end_matches('/').to_ascii_lowercase();
                let rest = text
                    .strip_prefix("https://")
                    .or_else(|| text.strip_prefix("http://"));
                if rest.is_none_or(|r| r.is_empty() || r.contains(['/', '?', '#', ' ', '*'])) {
                    return Err(config.error_at_value(
                        ErrorCode::InvalidValue,
                        item.span().start,
                        "allowed_origins",
                        "each of `allowed_origins` must be an origin, such as \"https://app.example.com\"",
                    ));
                }
                http.allowed_origins.push(text);
            }
        }
        if let Some(list) = &m.allowed_hosts {
            for item in list.get_ref() {
                let text = item.get_ref().to_ascii_lowercase();
                if !plain_name(&text, b".") {
                    return Err(config.error_at_value(
                        ErrorCode::InvalidValue,
                        item.span().start,
                        "allowed_hosts",
                        "each of `allowed_hosts` must be a host name without a port",
                    ));
                }
                http.allowed_hosts.push(text);
            }
        }
        if let Some(v) = &m.max_sessions {
            let n = *v.get_ref();
            http.max_sessions = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_SESSIONS)
                .ok_or_else(|| {
                    config.error_at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_sessions",
                        format!("`max_sessions` must be between 1 and {MAX_MAX_SESSIONS}"),
                    )
                })?;
        }
        if let Some(v) = &m.session_idle_seconds {
            let n = *v.get_ref();
            if n == 0 || n > MAX_SESSION_IDLE_SECONDS {
                return Err(config.error_at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "session_idle_seconds",
                    format!(
                        "`session_idle_seconds` must be between 1 and {MAX_SESSION_IDLE_SECONDS}"
                    ),
                ));
            }
            http.session_idle = std::time::Duration::from_secs(n);
        }
        for t in &m.token {
            let token = mcp_token(config, t, &http.tokens)?;
            http.tokens.push(token);
        }
        for u in &m.upstream {
            let upstream = mcp_upstream(config, u, &http.upstreams)?;
            http.upstreams.push(upstream);
        }
        Ok(http)
    }
}

/// One `[[mcp.token]]`: a hash not declared before, a valid user name, a
/// session name.
fn mcp_token(config: &Config, t: &RawMcpToken, declared: &[McpToken]) -> Result<McpToken, Error> {
    let sha256 = token_sha256(config, &t.sha256, declared.iter().map(|d| &d.sha256))?;
    let user = &user_name(config, &t.user, "user")?;
    let session = match &t.session {
        Some(s) => {
            let text = s.get_ref();
            if text.trim().is_empty() || text.chars().any(char::is_control) {
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    s.span().start,
                    "session",
                    "`session` must be a name without control characters",
                ));
            }
            Some(text.clone())
        }
        None => None,
    };
    Ok(McpToken {
        sha256,
        user: user.clone(),
        session,
    })
}

/// One `[[mcp.upstream]]`: a new plain name, exactly one of `url` and
/// `command`, a prefix or a namespace.
fn mcp_upstream(
    config: &Config,
    u: &RawMcpUpstream,
    declared: &[McpUpstream],
) -> Result<McpUpstream, Error> {
    let name = u.name.get_ref();
    if !plain_name(name, b"") {
        return Err(config.error_at_key(
            ErrorCode::InvalidValue,
            u.name.span().start,
            "name",
            "an upstream's `name` must be 1 to 64 letters, digits, `_` or `-`",
        ));
    }
    if declared.iter().any(|d| &d.name == name) {
        return Err(config.error_at_key(
            ErrorCode::InvalidValue,
            u.name.span().start,
            "name",
            format!("the upstream `{name}` is already declared"),
        ));
    }
    let target = match (&u.url, &u.command) {
        (Some(url), None) => {
            let text = url.get_ref();
            let rest = text
                .strip_prefix("https://")
                .or_else(|| text.strip_prefix("http://"));
            if rest.is_none_or(|r| r.is_empty() || r.starts_with('/') || r.contains(['#', ' ']))
                || u.args.is_some()
                || u.env.is_some()
            {
                return Err(config.error_at_key(
                        ErrorCode::InvalidValue,
                        url.span().start,
                        "url",
                        "an upstream's `url` must be an http:// or https:// URL (and takes no `args` or `env`)",
                    ));
            }
            UpstreamTarget::Url(text.clone())
        }
        (None, Some(command)) => {
            if command.get_ref().is_empty() {
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    command.span().start,
                    "command",
                    "an upstream's `command` must not be empty",
                ));
            }
            let mut env: Vec<String> = Vec::new();
            if let Some(list) = &u.env {
                for item in list.get_ref() {
                    let text = item.get_ref();
                    if text.is_empty() || text.contains('=') || text.contains('\0') {
                        return Err(config.error_at_value(
                            ErrorCode::InvalidValue,
                            item.span().start,
                            "env",
                            "`env` must list variable names (not empty, without `=`)",
                        ));
                    }
                    if !env.contains(text) {
                        env.push(text.clone());
                    }
                }
            }
            UpstreamTarget::Command {
                program: command.get_ref().clone(),
                args: u.args.clone().unwrap_or_default(),
                env,
            }
        }
        _ => {
            return Err(config.error_at_key(
                ErrorCode::InvalidValue,
                u.name.span().start,
                "name",
                format!("the upstream `{name}` needs exactly one of `url` and `command`"),
            ))
        }
    };
    let prefix = match (&u.prefix, u.namespace) {
        (Some(p), None | Some(false)) => {
            if !plain_name(p.get_ref(), b".") {
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    p.span().start,
                    "prefix",
                    "`prefix` must be 1 to 64 letters, digits, `_`, `-` or `.`",
                ));
            }
            p.get_ref().clone()
        }
        (Some(p), Some(true)) => {
            return Err(config.error_at_key(
                ErrorCode::InvalidValue,
                p.span().start,
                "prefix",
                "use one of `namespace = true` and `prefix`",
            ))
        }
        (None, Some(true)) => format!("{name}__"),
        (None, None | Some(false)) => String::new(),
    };
    Ok(McpUpstream {
        name: name.clone(),
        target,
        prefix,
    })
}

#[cfg(test)]
mod tests {
    use toolgate::config::{Error, ErrorCode};

    use super::*;

    const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    /// A table, the refusal's code, line and column, key and message.
    type Case = (String, ErrorCode, (usize, usize), &'static str, String);

    fn http(text: &str) -> Result<McpHttpConfig, Error> {
        super::super::test_support::table(text, super::super::McpConfig::from_config)
            .map(|m| m.http().clone())
    }

    #[test]
    fn defaults_without_the_keys() {
        let h = http("").unwrap();
        assert_eq!(h.listen().to_string(), "127.0.0.1:8070");
        assert!(h.allowed_origins().is_empty() && h.allowed_hosts().is_empty());
        assert_eq!(h.max_sessions(), DEFAULT_MAX_SESSIONS);
        assert_eq!(h.session_idle().as_secs(), DEFAULT_SESSION_IDLE_SECONDS);
        assert!(h.tokens().is_empty() && h.upstreams().is_empty());
    }

    #[test]
    fn every_key_is_read() {
        let h = http(&format!(
            "[mcp]\nlisten = \"127.0.0.1:9001\"\nallowed_origins = [\"https://App.example.com/\"]\nallowed_hosts = [\"MCP.example.com\"]\nmax_sessions = 3\nsession_idle_seconds = 60\n\
             [[mcp.token]]\nsha256 = \"{SHA}\"\nuser = \"alice\"\nsession = \"desk\"\n\
             [[mcp.token]]\nsha256 = \"{}\"\nuser = \"bob\"\n\
             [[mcp.upstream]]\nname = \"shop\"\ncommand = \"python3\"\nargs = [\"s.py\"]\nenv = [\"PATH\", \"PATH\"]\nnamespace = true\n\
             [[mcp.upstream]]\nname = \"web\"\nurl = \"http://127.0.0.1:8000/mcp\"\nprefix = \"w_\"\n\
             [[mcp.upstream]]\nname = \"plain\"\nurl = \"https://x.example/mcp\"\nnamespace = false\n",
            SHA.replace('9', "0")
        ))
        .unwrap();
        assert_eq!(h.listen().to_string(), "127.0.0.1:9001");
        // Origins and hosts are kept in lower case, an origin without its `/`.
        assert_eq!(h.allowed_origins(), ["https://app.example.com"]);
        assert_eq!(h.allowed_hosts(), ["mcp.example.com"]);
        assert_eq!(h.max_sessions(), 3);
        assert_eq!(h.session_idle().as_secs(), 60);
        assert_eq!(h.tokens()[0].user(), "alice");
        assert_eq!(h.tokens()[0].session(), Some("desk"));
        assert_eq!(h.tokens()[0].sha256()[..2], [0x9f, 0x86]);
        assert_eq!(h.tokens()[1].session(), None);
        let u = h.upstreams();
        assert_eq!(u[0].name(), "shop");
        assert_eq!(u[0].prefix(), "shop__");
        assert_eq!(
            u[0].target(),
            &UpstreamTarget::Command {
                program: "python3".to_owned(),
                args: vec!["s.py".to_owned()],
                env: vec!["PATH".to_owned()],
            }
        );
        assert_eq!(u[1].prefix(), "w_");
        assert_eq!(
            u[1].target(),
            &UpstreamTarget::Url("http://127.0.0.1:8000/mcp".to_owned())
        );
        assert_eq!(u[2].prefix(), "");
    }

    #[test]
    fn each_bad_value_is_refused_at_its_key() {
        let two = |a: &str, b: &str| format!("{a}{b}");
        let cases: Vec<Case> = vec![
            ("[mcp]\nlisten = \"nowhere\"\n".into(), ErrorCode::InvalidValue, (2, 1), "listen", "`listen` must be an address and port, such as \"127.0.0.1:8070\"".into()),
            ("[mcp]\nallowed_origins = [\"*\"]\n".into(), ErrorCode::InvalidValue, (2, 20), "allowed_origins", "each of `allowed_origins` must be an origin, such as \"https://app.example.com\"".into()),
            ("[mcp]\nallowed_origins = [\"https://a/b\"]\n".into(), ErrorCode::InvalidValue, (2, 20), "allowed_origins", "each of `allowed_origins` must be an origin, such as \"https://app.example.com\"".into()),
            ("[mcp]\nallowed_hosts = [\"a:80\"]\n".into(), ErrorCode::InvalidValue, (2, 18), "allowed_hosts", "each of `allowed_hosts` must be a host name without a port".into()),
            ("[mcp]\nmax_sessions = 0\n".into(), ErrorCode::InvalidLimit, (2, 1), "max_sessions", "`max_sessions` must be between 1 and 4096".into()),
            ("[mcp]\nmax_sessions = 4097\n".into(), ErrorCode::InvalidLimit, (2, 1), "max_sessions", "`max_sessions` must be between 1 and 4096".into()),
            ("[mcp]\nsession_idle_seconds = 0\n".into(), ErrorCode::InvalidLimit, (2, 1), "session_idle_seconds", "`session_idle_seconds` must be between 1 and 86400".into()),
            ("[[mcp.token]]\nsha256 = \"abc\"\nuser = \"a\"\n".into(), ErrorCode::InvalidValue, (2, 1), "sha256", "`sha256` must be the SHA-256 of the token: 64 hexadecimal digits".into()),
            (format!("[[mcp.token]]\nsha256 = \"{SHA}\"\nuser = \" \"\n"), ErrorCode::InvalidValue, (3, 1), "user", "`user`: a user name must not be empty or blank".into()),
            (format!("[[mcp.token]]\nsha256 = \"{SHA}\"\nuser = \"a\"\nsession = \"\\u0001\"\n"), ErrorCode::InvalidValue, (4, 1), "session", "`session` must be a name without control characters".into()),
            (format!("[[mcp.token]]\nsha256 = \"{SHA}\"\nuser = \"a\"\n[[mcp.token]]\nsha256 = \"{SHA}\"\nuser = \"b\"\n"), ErrorCode::InvalidValue, (5, 1), "sha256", "this token is already declared".into()),
            ("[[mcp.upstream]]\nname = \"a b\"\ncommand = \"x\"\n".into(), ErrorCode::InvalidValue, (2, 1), "name", "an upstream's `name` must be 1 to 64 letters, digits, `_` or `-`".into()),
            ("[[mcp.upstream]]\nname = \"a\"\n".into(), ErrorCode::InvalidValue, (2, 1), "name", "the upstream `a` needs exactly one of `url` and `command`".into()),
            ("[[mcp.upstream]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h/\"\n".into(), ErrorCode::InvalidValue, (2, 1), "name", "the upstream `a` needs exactly one of `url` and `command`".into()),
            ("[[mcp.upstream]]\nname = \"a\"\nurl = \"ftp://h/\"\n".into(), ErrorCode::InvalidValue, (3, 1), "url", "an upstream's `url` must be an http:// or https:// URL (and takes no `args` or `env`)".into()),
            ("[[mcp.upstream]]\nname = \"a\"\nurl = \"http://h/\"\nargs = [\"x\"]\n".into(), ErrorCode::InvalidValue, (3, 1), "url", "an upstream's `url` must be an http:// or https:// URL (and takes no `args` or `env`)".into()),
            ("[[mcp.upstream]]\nname = \"a\"\ncommand = \"\"\n".into(), ErrorCode::InvalidValue, (3, 1), "command", "an upstream's `command` must not be empty".into()),
            ("[[mcp.upstream]]\nname = \"a\"\ncommand = \"x\"\nenv = [\"A=B\"]\n".into(), ErrorCode::InvalidValue, (4, 8), "env", "`env` must list variable names (not empty, without `=`)".into()),
            ("[[mcp.upstream]]\nname = \"a\"\ncommand = \"x\"\nprefix = \"a b\"\n".into(), ErrorCode::InvalidValue, (4, 1), "prefix", "`prefix` must be 1 to 64 letters, digits, `_`, `-` or `.`".into()),
            ("[[mcp.upstream]]\nname = \"a\"\ncommand = \"x\"\nprefix = \"p\"\nnamespace = true\n".into(), ErrorCode::InvalidValue, (4, 1), "prefix", "use one of `namespace = true` and `prefix`".into()),
            (two("[[mcp.upstream]]\nname = \"a\"\ncommand = \"x\"\n", "[[mcp.upstream]]\nname = \"a\"\ncommand = \"y\"\n"), ErrorCode::InvalidValue, (5, 1), "name", "the upstream `a` is already declared".into()),
        ];
        for (text, code, (line, column), key, message) in cases {
            let e = http(&text).unwrap_err();
            assert_eq!(
                (e.code(), e.line(), e.column(), e.config_key(), e.message()),
                (code, Some(line), Some(column), Some(key), message.as_str()),
                "{text}"
            );
        }
    }
}
