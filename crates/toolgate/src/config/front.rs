//! The front ends' tables as the file writes them (`[proxy]`, `[mcp]`): serde types
//! closed to unknown keys, read with the rest of the file, so that
//! [`Config::load`](super::Config::load) refuses an unknown key or a value
//! of the wrong type in them with its position, as anywhere else.
//!
//! The gate reads none of them. Their values are checked, and turned into
//! the tables the front ends run with, by the crate that owns them
//! (`toolgate_edge::config`), which places its errors with
//! [`Config::error_at_key`](super::Config::error_at_key) and its siblings.
//! Every front end checks them right after loading, so a bad value there is
//! still refused when the config loads, never at a first request.

pub use toml::Spanned;

/// The front ends' tables, as written
/// ([`Config::front_end_tables`](super::Config::front_end_tables)).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FrontEndTables {
    /// `[proxy]`: `toolgate proxy`, the model-API proxy.
    pub proxy: RawProxy,
    /// `[mcp]`: `toolgate mcp`, the MCP proxy.
    pub mcp: RawMcp,
}

/// `[proxy]`, as written.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawProxy {
    /// `listen`.
    pub listen: Option<Spanned<String>>,
    /// `openai`.
    pub openai: Option<Spanned<String>>,
    /// `anthropic`.
    pub anthropic: Option<Spanned<String>>,
    /// `forward`.
    pub forward: Option<Spanned<Vec<Spanned<String>>>>,
    /// `on_deny`.
    pub on_deny: Option<Spanned<RawOnDeny>>,
    /// `user`.
    pub user: Option<Spanned<String>>,
    /// `user_header`.
    pub user_header: Option<Spanned<String>>,
    /// `token_header`.
    pub token_header: Option<Spanned<String>>,
    /// `session_header`.
    pub session_header: Option<Spanned<String>>,
    /// `upstream_timeout_seconds`.
    pub upstream_timeout_seconds: Option<Spanned<u64>>,
    /// `idle_timeout_seconds`.
    pub idle_timeout_seconds: Option<Spanned<u64>>,
    /// `pass_through`.
    pub pass_through: Option<Spanned<Vec<String>>>,
    /// `narrow_tools`.
    pub narrow_tools: Option<bool>,
    /// `wrap_results`.
    pub wrap_results: Option<bool>,
    /// `strip_markup`.
    pub strip_markup: Option<bool>,
    /// `offered_tools`.
    pub offered_tools: Option<Spanned<String>>,
    /// `deepseek`.
    pub deepseek: Option<Spanned<String>>,
    /// `[[proxy.token]]`.
    #[serde(default)]
    pub token: Vec<RawProxyToken>,
}

/// `[proxy] on_deny`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RawOnDeny {
    /// `"feedback"`.
    Feedback,
    /// `"error"`.
    Error,
}

/// One `[[proxy.token]]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawProxyToken {
    /// `sha256`.
    pub sha256: Spanned<String>,
    /// `user`.
    pub user: Spanned<String>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
/// `[mcp]`, as written.
#[non_exhaustive]
pub struct RawMcp {
    /// `user`.
    pub user: Option<Spanned<String>>,
    /// `env`.
    pub env: Option<Spanned<Vec<Spanned<String>>>>,
    /// `max_frame_bytes`.
    pub max_frame_bytes: Option<Spanned<u64>>,
    /// `call_timeout_seconds`.
    pub call_timeout_seconds: Option<Spanned<u64>>,
    /// `max_result_bytes`.
    pub max_result_bytes: Option<Spanned<u64>>,
    /// `hold_seconds`.
    pub hold_seconds: Option<Spanned<u64>>,
    /// `narrow_tools`.
    pub narrow_tools: Option<bool>,
    /// `upstream_name`.
    pub upstream_name: Option<Spanned<String>>,
    /// `pin_first`.
    pub pin_first: Option<Spanned<String>>,
    /// `approvals_url`.
    pub approvals_url: Option<Spanned<String>>,
    /// `listen`.
    pub listen: Option<Spanned<String>>,
    /// `allowed_origins`.
    pub allowed_origins: Option<Spanned<Vec<Spanned<String>>>>,
    /// `allowed_hosts`.
    pub allowed_hosts: Option<Spanned<Vec<Spanned<String>>>>,
    /// `max_sessions`.
    pub max_sessions: Option<Spanned<u64>>,
    /// `session_idle_seconds`.
    pub session_idle_seconds: Option<Spanned<u64>>,
    /// `[[mcp.token]]`.
    #[serde(default)]
    pub token: Vec<RawMcpToken>,
    /// `[[mcp.upstream]]`.
    #[serde(default)]
    pub upstream: Vec<RawMcpUpstream>,
}

/// One `[[mcp.token]]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawMcpToken {
    /// `sha256`.
    pub sha256: Spanned<String>,
    /// `user`.
    pub user: Spanned<String>,
    /// `session`.
    pub session: Option<Spanned<String>>,
}

/// One `[[mcp.upstream]]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawMcpUpstream {
    /// `name`.
    pub name: Spanned<String>,
    /// `url`.
    pub url: Option<Spanned<String>>,
    /// `command`.
    pub command: Option<Spanned<String>>,
    /// `args`.
    pub args: Option<Vec<String>>,
    /// `env`.
    pub env: Option<Spanned<Vec<Spanned<String>>>>,
    /// `namespace`.
    pub namespace: Option<bool>,
    /// `prefix`.
    pub prefix: Option<Spanned<String>>,
}
