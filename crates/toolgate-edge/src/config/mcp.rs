//! The `[mcp]` table: how `toolgate mcp` runs an MCP server behind the gate
//! (the user its calls are decided as, the server's environment, and the
//! proxy's limits).

use std::time::Duration;

use toolgate::config::{
    valid_upstream_name, Config, Error, ErrorCode, PinFirst, DEFAULT_UPSTREAM_NAME,
    MAX_UPSTREAM_NAME_BYTES,
};

use super::mcp_http::McpHttpConfig;
use super::rules::user_name;

/// The user stdio calls are decided as when `[mcp]` sets no `user`.
pub const DEFAULT_MCP_USER: &str = "mcp";
/// A frame's cap when `[mcp]` sets no `max_frame_bytes`: 4 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 4 << 20;
/// The largest `max_frame_bytes` accepted: 256 MiB.
pub const MAX_MAX_FRAME_BYTES: u64 = 256 << 20;
/// Seconds a forwarded call may take when `[mcp]` sets no
/// `call_timeout_seconds`.
pub const DEFAULT_CALL_TIMEOUT_SECONDS: u64 = 60;
/// The longest `call_timeout_seconds` accepted: one hour.
pub const MAX_CALL_TIMEOUT_SECONDS: u64 = 3600;
/// A result's text cap when `[mcp]` sets no `max_result_bytes`: 64 KiB.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 64 << 10;
/// The largest `max_result_bytes` accepted: 16 MiB (the sanitizer's ceiling).
pub const MAX_MAX_RESULT_BYTES: u64 = 16 << 20;

/// The longest `hold_seconds` accepted: ten minutes (a client waits that
/// long for the call's answer).
pub const MAX_HOLD_SECONDS: u64 = 600;

/// The `[mcp]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig {
    user: String,
    env: Vec<String>,
    max_frame_bytes: usize,
    call_timeout: Duration,
    max_result_bytes: usize,
    hold: Duration,
    narrow_tools: bool,
    upstream_name: String,
    pin_first: PinFirst,
    approvals_url: Option<String>,
    http: McpHttpConfig,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            user: DEFAULT_MCP_USER.to_owned(),
            env: Vec::new(),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            call_timeout: Duration::from_secs(DEFAULT_CALL_TIMEOUT_SECONDS),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            hold: Duration::ZERO,
            narrow_tools: false,
            upstream_name: DEFAULT_UPSTREAM_NAME.to_owned(),
            pin_first: PinFirst::Trust,
            approvals_url: None,
            http: McpHttpConfig::default(),
        }
    }
}

impl McpConfig {
    /// The user every call of a stdio client is decided as (default
    /// `mcp`): the client side of stdio has no authentication, so the
    /// operator names it; a request's `_meta` never does.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The names of the environment variables the server is given, from
    /// toolgate's own environment (default none: the server starts with an
    /// empty environment).
    pub fn env(&self) -> &[String] {
        &self.env
    }

    /// The largest frame (one JSON-RPC message, one line) read from either
    /// side, in bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// How long a forwarded `tools/call` may wait for the server's answer.
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The cap on a result's text blocks, in bytes.
    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes
    }

    /// How long a call that needs a human's approval is held open waiting
    /// for the decision (default zero: the pending result is answered at
    /// once). While held, the client is sent progress notifications when
    /// its request asked for them; an approval in time lets the call
    /// through, a denial or the end of the hold answers it.
    pub fn hold(&self) -> Duration {
        self.hold
    }

    /// Whether `tools/list` shows each tool as the user may call it (as
    /// `toolgate narrow` prints it: each resource argument an `enum` of the
    /// ids the policies let the user touch, a tool the user cannot call at
    /// all hidden). Needs Cedar policies; default `false`.
    pub fn narrow_tools(&self) -> bool {
        self.narrow_tools
    }

    /// The name the stdio server's tool pins are kept under in the store
    /// (default `default`): pins are per upstream, so a config that fronts
    /// several servers gives each its own name. Letters, digits, `.`, `_`
    /// and `-`, at most [`MAX_UPSTREAM_NAME_BYTES`].
    pub fn upstream_name(&self) -> &str {
        &self.upstream_name
    }

    /// What the first catalog of an upstream gets (default
    /// [`PinFirst::Trust`]).
    pub fn pin_first(&self) -> PinFirst {
        self.pin_first
    }

    /// What `toolgate mcp --listen` serves: the address, the client tokens,
    /// the upstream servers (see [`McpHttpConfig`]).
    pub fn http(&self) -> &McpHttpConfig {
        &self.http
    }
    /// The approvals page of `toolgate serve` (such as
    /// `http://127.0.0.1:8080/ui/`): a 2026-07-28 client is answered
    /// `input_required` with a URL elicitation pointing there for a call
    /// that needs a human. Default none: such a client gets the pending
    /// result as older clients do.
    pub fn approvals_url(&self) -> Option<&str> {
        self.approvals_url.as_deref()
    }
}

/// The longest `approvals_url` accepted.
const MAX_APPROVALS_URL_BYTES: usize = 2048;

/// Whether `url` is an absolute `http` or `https` URL with a host, without
/// whitespace, control characters, user information or a query.
fn valid_approvals_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let Some(rest) = rest else { return false };
    let authority = rest.split(['/', '#']).next().unwrap_or_default();
    url.len() <= MAX_APPROVALS_URL_BYTES
        && !authority.is_empty()
        && !authority.contains('@')
        && !url.contains('?')
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

impl McpConfig {
    /// `config`'s `[mcp]` table, checked: a user by the one user-name rule,
    /// variable names without `=` or NUL, caps and a timeout in range, and
    /// the HTTP keys ([`McpHttpConfig`]). The error is placed at the key,
    /// as [`Config::load`] places its own.
    pub fn from_config(config: &Config) -> Result<Self, Error> {
        let raw = &config.front_end_tables().mcp;
        let mut mcp = McpConfig::default();
        if let Some(user) = &raw.user {
            mcp.user = user_name(config, user, "user")?;
        }
        if let Some(env) = &raw.env {
            for name in env.get_ref() {
                let text = name.get_ref();
                if text.is_empty() || text.contains('=') || text.contains('\0') {
                    return Err(config.error_at_value(
                        ErrorCode::InvalidValue,
                        name.span().start,
                        "env",
                        "`env` must list variable names (not empty, without `=`)",
                    ));
                }
                if !mcp.env.contains(text) {
                    mcp.env.push(text.clone());
                }
            }
        }
        if let Some(v) = &raw.max_frame_bytes {
            let n = *v.get_ref();
            mcp.max_frame_bytes = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_FRAME_BYTES)
                .ok_or_else(|| {
                    config.error_at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_frame_bytes",
                        format!("`max_frame_bytes` must be between 1 and {MAX_MAX_FRAME_BYTES}"),
                    )
                })?;
        }
        if let Some(v) = &raw.max_result_bytes {
            let n = *v.get_ref();
            mcp.max_result_bytes = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_RESULT_BYTES)
                .ok_or_else(|| {
                    config.error_at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_result_bytes",
                        format!("`max_result_bytes` must be between 1 and {MAX_MAX_RESULT_BYTES}"),
                    )
                })?;
        }
        if let Some(v) = &raw.call_timeout_seconds {
            let n = *v.get_ref();
            if n == 0 || n > MAX_CALL_TIMEOUT_SECONDS {
                return Err(config.error_at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "call_timeout_seconds",
                    format!(
                        "`call_timeout_seconds` must be between 1 and {MAX_CALL_TIMEOUT_SECONDS}"
                    ),
                ));
            }
            mcp.call_timeout = Duration::from_secs(n);
        }
        if let Some(v) = &raw.hold_seconds {
            let n = *v.get_ref();
            if n > MAX_HOLD_SECONDS {
                return Err(config.error_at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "hold_seconds",
                    format!("`hold_seconds` must be between 0 and {MAX_HOLD_SECONDS}"),
                ));
            }
            mcp.hold = Duration::from_secs(n);
        }
        mcp.narrow_tools = raw.narrow_tools.unwrap_or(false);
        if let Some(v) = &raw.upstream_name {
            if !valid_upstream_name(v.get_ref()) {
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    "upstream_name",
                    format!(
                        "`upstream_name` must be 1 to {MAX_UPSTREAM_NAME_BYTES} letters, digits, `.`, `_` or `-`"
                    ),
                ));
            }
            mcp.upstream_name.clone_from(v.get_ref());
        }
        if let Some(v) = &raw.pin_first {
            mcp.pin_first = match v.get_ref().as_str() {
                "trust" => PinFirst::Trust,
                "approve" => PinFirst::Approve,
                _ => {
                    return Err(config.error_at_key(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        "pin_first",
                        "`pin_first` must be `trust` or `approve`",
                    ))
                }
            };
        }
        if let Some(url) = &raw.approvals_url {
            if !valid_approvals_url(url.get_ref()) {
                return Err(config.error_at_value(
                    ErrorCode::InvalidValue,
                    url.span().start,
                    "approvals_url",
                    "`approvals_url` must be an http:// or https:// URL with a host, without user information, a query or spaces",
                ));
            }
            mcp.approvals_url = Some(url.get_ref().clone());
        }
        mcp.http = McpHttpConfig::from_config(config)?;
        Ok(mcp)
    }
}

#[cfg(test)]
mod tests {
    use toolgate::config::{Config, Error, ErrorCode, PinFirst};

    use super::super::test_support::{self, table, Refusal};
    use super::*;

    /// `text`'s `[mcp]` table, checked; the core loader must accept the
    /// file (its keys and types), so every refusal below is this table's.
    fn mcp(text: &str) -> Result<McpConfig, Error> {
        table(text, McpConfig::from_config)
    }

    /// The refusal of `text`: its code, line, column, key and message.
    fn refused(text: &str) -> Refusal {
        test_support::refused(text, McpConfig::from_config)
    }

    #[test]
    fn defaults_without_the_table() {
        let m = mcp("").unwrap();
        assert_eq!(m.user(), DEFAULT_MCP_USER);
        assert!(m.env().is_empty());
        assert_eq!(m.max_frame_bytes(), DEFAULT_MAX_FRAME_BYTES);
        assert_eq!(m.call_timeout().as_secs(), DEFAULT_CALL_TIMEOUT_SECONDS);
        assert_eq!(m.max_result_bytes(), DEFAULT_MAX_RESULT_BYTES);
        assert_eq!(m.hold(), Duration::ZERO);
        assert!(!m.narrow_tools());
        assert_eq!(m.upstream_name(), DEFAULT_UPSTREAM_NAME);
        assert_eq!(m.pin_first(), PinFirst::Trust);
        assert_eq!(m.approvals_url(), None);
        assert_eq!(m, McpConfig::default());
    }

    #[test]
    fn every_key_is_read() {
        let m = mcp(
            "[mcp]\nuser = \"desk\"\nenv = [\"PATH\", \"HOME\", \"PATH\"]\nmax_frame_bytes = 1024\ncall_timeout_seconds = 5\nmax_result_bytes = 100\nhold_seconds = 30\nnarrow_tools = true\nupstream_name = \"files-1\"\npin_first = \"approve\"\n",
        )
        .unwrap();
        assert_eq!(m.upstream_name(), "files-1");
        assert_eq!(m.pin_first(), PinFirst::Approve);
        assert_eq!(m.user(), "desk");
        // A variable named twice is given once.
        assert_eq!(m.env(), ["PATH", "HOME"]);
        assert_eq!(m.max_frame_bytes(), 1024);
        assert_eq!(m.call_timeout().as_secs(), 5);
        assert_eq!(m.max_result_bytes(), 100);
        assert_eq!(m.hold().as_secs(), 30);
        assert!(m.narrow_tools());
        let m = mcp("[mcp]\napprovals_url = \"http://127.0.0.1:8080/ui/\"\n").unwrap();
        assert_eq!(m.approvals_url(), Some("http://127.0.0.1:8080/ui/"));
        // The bounds themselves are accepted.
        let m = mcp(&format!(
            "[mcp]\nmax_frame_bytes = {MAX_MAX_FRAME_BYTES}\nmax_result_bytes = {MAX_MAX_RESULT_BYTES}\n\
             call_timeout_seconds = {MAX_CALL_TIMEOUT_SECONDS}\nhold_seconds = {MAX_HOLD_SECONDS}\n\
             upstream_name = \"{}\"\n",
            "a".repeat(MAX_UPSTREAM_NAME_BYTES)
        ))
        .unwrap();
        assert_eq!(m.hold().as_secs(), MAX_HOLD_SECONDS);
    }

    #[test]
    fn each_bad_value_is_refused_at_its_key() {
        let user = |why: &str| format!("`user`: {why}");
        let env = "`env` must list variable names (not empty, without `=`)";
        let url = "`approvals_url` must be an http:// or https:// URL with a host, without user information, a query or spaces";
        let cases: Vec<(String, ErrorCode, usize, &str, String)> = vec![
            (
                "[mcp]\nuser = \" \"\n".into(),
                ErrorCode::InvalidValue,
                1,
                "user",
                user("a user name must not be empty or blank"),
            ),
            (
                "[mcp]\nuser = \"a\\tb\"\n".into(),
                ErrorCode::InvalidValue,
                1,
                "user",
                user("a user name must not contain control characters"),
            ),
            (
                "[mcp]\nenv = [\"PATH\", \"A=B\"]\n".into(),
                ErrorCode::InvalidValue,
                16,
                "env",
                env.into(),
            ),
            (
                "[mcp]\nenv = [\"\"]\n".into(),
                ErrorCode::InvalidValue,
                8,
                "env",
                env.into(),
            ),
            (
                "[mcp]\nmax_frame_bytes = 0\n".into(),
                ErrorCode::InvalidLimit,
                1,
                "max_frame_bytes",
                format!("`max_frame_bytes` must be between 1 and {MAX_MAX_FRAME_BYTES}"),
            ),
            (
                format!("[mcp]\nmax_frame_bytes = {}\n", MAX_MAX_FRAME_BYTES + 1),
                ErrorCode::InvalidLimit,
                1,
                "max_frame_bytes",
                format!("`max_frame_bytes` must be between 1 and {MAX_MAX_FRAME_BYTES}"),
            ),
            (
                "[mcp]\nmax_result_bytes = 0\n".into(),
                ErrorCode::InvalidLimit,
                1,
                "max_result_bytes",
                format!("`max_result_bytes` must be between 1 and {MAX_MAX_RESULT_BYTES}"),
            ),
            (
                "[mcp]\ncall_timeout_seconds = 3601\n".into(),
                ErrorCode::InvalidLimit,
                1,
                "call_timeout_seconds",
                "`call_timeout_seconds` must be between 1 and 3600".into(),
            ),
            (
                "[mcp]\ncall_timeout_seconds = 0\n".into(),
                ErrorCode::InvalidLimit,
                1,
                "call_timeout_seconds",
                "`call_timeout_seconds` must be between 1 and 3600".into(),
            ),
            (
                "[mcp]\nhold_seconds = 601\n".into(),
                ErrorCode::InvalidLimit,
                1,
                "hold_seconds",
                "`hold_seconds` must be between 0 and 600".into(),
            ),
            (
                "[mcp]\nupstream_name = \"a b\"\n".into(),
                ErrorCode::InvalidValue,
                1,
                "upstream_name",
                "`upstream_name` must be 1 to 128 letters, digits, `.`, `_` or `-`".into(),
            ),
            (
                "[mcp]\nupstream_name = \"\"\n".into(),
                ErrorCode::InvalidValue,
                1,
                "upstream_name",
                "`upstream_name` must be 1 to 128 letters, digits, `.`, `_` or `-`".into(),
            ),
            (
                "[mcp]\npin_first = \"always\"\n".into(),
                ErrorCode::InvalidValue,
                1,
                "pin_first",
                "`pin_first` must be `trust` or `approve`".into(),
            ),
            (
                "[mcp]\napprovals_url = \"ftp://h/ui/\"\n".into(),
                ErrorCode::InvalidValue,
                17,
                "approvals_url",
                url.into(),
            ),
            (
                "[mcp]\napprovals_url = \"http:///ui/\"\n".into(),
                ErrorCode::InvalidValue,
                17,
                "approvals_url",
                url.into(),
            ),
            (
                "[mcp]\napprovals_url = \"http://u:p@h/ui/\"\n".into(),
                ErrorCode::InvalidValue,
                17,
                "approvals_url",
                url.into(),
            ),
            (
                "[mcp]\napprovals_url = \"http://h/ui/?a=b\"\n".into(),
                ErrorCode::InvalidValue,
                17,
                "approvals_url",
                url.into(),
            ),
            (
                "[mcp]\napprovals_url = \"http://h/u i/\"\n".into(),
                ErrorCode::InvalidValue,
                17,
                "approvals_url",
                url.into(),
            ),
        ];
        for (text, code, column, key, message) in cases {
            assert_eq!(
                refused(&text),
                (code, Some(2), Some(column), key.to_owned(), message),
                "{text}"
            );
        }
        // An unknown key is the core loader's, with its position.
        let e = Config::parse("[mcp]\nlistens = \"x\"\n", "toolgate.toml").unwrap_err();
        assert_eq!((e.code(), e.line()), (ErrorCode::UnknownKey, Some(2)));
        assert!(e.to_string().contains("unknown key `listens`"), "{e}");
    }
}
