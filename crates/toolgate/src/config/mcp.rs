//! The `[mcp]` table: how `toolgate mcp` runs an MCP server behind the gate
//! (the user its calls are decided as, the server's environment, and the
//! proxy's limits).

use std::time::Duration;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::mcp_http::McpHttpConfig;
use super::raw::RawConfig;

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

/// The name the stdio server's pins are kept under when `[mcp]` sets no
/// `upstream_name`.
pub const DEFAULT_UPSTREAM_NAME: &str = "default";
/// The longest `upstream_name` accepted, in bytes.
pub const MAX_UPSTREAM_NAME_BYTES: usize = 128;

/// What the proxy does with the very first catalog (`tools/list`) an
/// upstream shows, when the store holds no pin of that upstream yet
/// (`[mcp] pin_first`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PinFirst {
    /// `trust` (the default): trust on first use. Every tool of the first
    /// catalog is pinned and approved at once (audited `pin_approved`,
    /// reason `trust_on_first_use`); whatever the server changes, renames
    /// or adds later waits for a human.
    Trust,
    /// `approve`: every tool waits for a human, the first catalog's too:
    /// nothing is shown or called until `toolgate pins approve` (or the
    /// approvals page) approves its definition.
    Approve,
}

impl PinFirst {
    /// The config's name: `trust` or `approve`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Trust => "trust",
            Self::Approve => "approve",
        }
    }
}

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

/// Whether `name` is a valid upstream name: 1 to
/// [`MAX_UPSTREAM_NAME_BYTES`] bytes of ASCII letters, digits, `.`, `_`
/// and `-`.
pub fn valid_upstream_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_UPSTREAM_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
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

impl Loader<'_> {
    /// `[mcp]`: a user by the one user-name rule, variable names without `=` or
    /// NUL, caps and a timeout in range.
    pub(super) fn mcp(&self, raw: &RawConfig) -> Result<McpConfig, Error> {
        let mut mcp = McpConfig::default();
        if let Some(user) = &raw.mcp.user {
            let text = user.get_ref();
            if let Err(why) = super::check_user_name(text) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    user.span().start,
                    "user",
                    format!("`user`: {why}"),
                ));
            }
            mcp.user.clone_from(text);
        }
        if let Some(env) = &raw.mcp.env {
            for name in env.get_ref() {
                let text = name.get_ref();
                if text.is_empty() || text.contains('=') || text.contains('\0') {
                    return Err(self.at_value(
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
        if let Some(v) = &raw.mcp.max_frame_bytes {
            let n = *v.get_ref();
            mcp.max_frame_bytes = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_FRAME_BYTES)
                .ok_or_else(|| {
                    self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_frame_bytes",
                        format!("`max_frame_bytes` must be between 1 and {MAX_MAX_FRAME_BYTES}"),
                    )
                })?;
        }
        if let Some(v) = &raw.mcp.max_result_bytes {
            let n = *v.get_ref();
            mcp.max_result_bytes = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_RESULT_BYTES)
                .ok_or_else(|| {
                    self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_result_bytes",
                        format!("`max_result_bytes` must be between 1 and {MAX_MAX_RESULT_BYTES}"),
                    )
                })?;
        }
        if let Some(v) = &raw.mcp.call_timeout_seconds {
            let n = *v.get_ref();
            if n == 0 || n > MAX_CALL_TIMEOUT_SECONDS {
                return Err(self.at_key(
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
        if let Some(v) = &raw.mcp.hold_seconds {
            let n = *v.get_ref();
            if n > MAX_HOLD_SECONDS {
                return Err(self.at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "hold_seconds",
                    format!("`hold_seconds` must be between 0 and {MAX_HOLD_SECONDS}"),
                ));
            }
            mcp.hold = Duration::from_secs(n);
        }
        mcp.narrow_tools = raw.mcp.narrow_tools.unwrap_or(false);
        if let Some(v) = &raw.mcp.upstream_name {
            if !valid_upstream_name(v.get_ref()) {
                return Err(self.at_key(
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
        if let Some(v) = &raw.mcp.pin_first {
            mcp.pin_first = match v.get_ref().as_str() {
                "trust" => PinFirst::Trust,
                "approve" => PinFirst::Approve,
                _ => {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        "pin_first",
                        "`pin_first` must be `trust` or `approve`",
                    ))
                }
            };
        }
        if let Some(url) = &raw.mcp.approvals_url {
            if !valid_approvals_url(url.get_ref()) {
                return Err(self.at_value(
                    ErrorCode::InvalidValue,
                    url.span().start,
                    "approvals_url",
                    "`approvals_url` must be an http:// or https:// URL with a host, without user information, a query or spaces",
                ));
            }
            mcp.approvals_url = Some(url.get_ref().clone());
        }
        mcp.http = self.mcp_http(raw)?;
        Ok(mcp)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ErrorCode};

    fn load(text: &str) -> Result<Config, crate::config::Error> {
        Config::parse(text, "toolgate.toml")
    }

    #[test]
    fn defaults_without_the_table() {
        let c = load("").unwrap();
        assert_eq!(c.mcp().user(), "mcp");
        assert!(c.mcp().env().is_empty());
        assert_eq!(c.mcp().max_frame_bytes(), super::DEFAULT_MAX_FRAME_BYTES);
        assert_eq!(c.mcp().call_timeout().as_secs(), 60);
        assert_eq!(c.mcp().max_result_bytes(), 64 << 10);
        assert_eq!(c.mcp().upstream_name(), "default");
        assert_eq!(c.mcp().pin_first(), super::PinFirst::Trust);
    }

    #[test]
    fn every_key_is_read() {
        let c = load(
            "[mcp]\nuser = \"desk\"\nenv = [\"PATH\", \"HOME\", \"PATH\"]\nmax_frame_bytes = 1024\ncall_timeout_seconds = 5\nmax_result_bytes = 100\nhold_seconds = 30\nnarrow_tools = true\nupstream_name = \"files-1\"\npin_first = \"approve\"\n",
        )
        .unwrap();
        assert_eq!(c.mcp().upstream_name(), "files-1");
        assert_eq!(c.mcp().pin_first(), super::PinFirst::Approve);
        assert_eq!(c.mcp().user(), "desk");
        assert_eq!(c.mcp().env(), ["PATH", "HOME"]);
        assert_eq!(c.mcp().max_frame_bytes(), 1024);
        assert_eq!(c.mcp().call_timeout().as_secs(), 5);
        assert_eq!(c.mcp().max_result_bytes(), 100);
        assert_eq!(c.mcp().hold().as_secs(), 30);
        assert!(c.mcp().narrow_tools());
        assert_eq!(c.mcp().approvals_url(), None);
        let c = load("[mcp]\napprovals_url = \"http://127.0.0.1:8080/ui/\"\n").unwrap();
        assert_eq!(c.mcp().approvals_url(), Some("http://127.0.0.1:8080/ui/"));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused() {
        let e = load("[mcp]\nlistens = \"x\"\n").unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownKey);
        assert!(e.to_string().contains("unknown key `listens`"), "{e}");
        for (text, code) in [
            ("[mcp]\nuser = \" \"\n", ErrorCode::InvalidValue),
            ("[mcp]\nenv = [\"A=B\"]\n", ErrorCode::InvalidValue),
            ("[mcp]\nmax_frame_bytes = 0\n", ErrorCode::InvalidLimit),
            ("[mcp]\nhold_seconds = 601\n", ErrorCode::InvalidLimit),
            (
                "[mcp]\nmax_frame_bytes = 268435457\n",
                ErrorCode::InvalidLimit,
            ),
            (
                "[mcp]\ncall_timeout_seconds = 3601\n",
                ErrorCode::InvalidLimit,
            ),
            ("[mcp]\nmax_result_bytes = 0\n", ErrorCode::InvalidLimit),
            ("[mcp]\nupstream_name = \"\"\n", ErrorCode::InvalidValue),
            ("[mcp]\nupstream_name = \"a b\"\n", ErrorCode::InvalidValue),
            ("[mcp]\npin_first = \"always\"\n", ErrorCode::InvalidValue),
            (
                "[mcp]\napprovals_url = \"ftp://h/ui/\"\n",
                ErrorCode::InvalidValue,
            ),
            (
                "[mcp]\napprovals_url = \"http:///ui/\"\n",
                ErrorCode::InvalidValue,
            ),
            (
                "[mcp]\napprovals_url = \"http://u:p@h/ui/\"\n",
                ErrorCode::InvalidValue,
            ),
            (
                "[mcp]\napprovals_url = \"http://h/ui/?a=b\"\n",
                ErrorCode::InvalidValue,
            ),
            (
                "[mcp]\napprovals_url = \"http://h/u i/\"\n",
                ErrorCode::InvalidValue,
            ),
        ] {
            let e = load(text).unwrap_err();
            assert_eq!(e.code(), code, "{text}: {e}");
        }
    }
}
