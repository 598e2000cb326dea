//! The front ends' tables as the file writes them (`[server]`, `[proxy]`,
//! `[mcp]`, `[jwt]`, `[login]`, `[oidc]`, `[telemetry]`): serde types
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

use std::collections::BTreeMap;

pub use toml::Spanned;

/// The front ends' tables, as written
/// ([`Config::front_end_tables`](super::Config::front_end_tables)).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FrontEndTables {
    /// `[server]`: `toolgate serve`, the HTTP service (its listener's
    /// limits hold on every listener).
    pub server: RawServer,
    /// `[proxy]`: `toolgate proxy`, the model-API proxy.
    pub proxy: RawProxy,
    /// `[mcp]`: `toolgate mcp`, the MCP proxy.
    pub mcp: RawMcp,
    /// `[jwt]`: bearer tokens from an identity provider, for every front
    /// end.
    pub jwt: Option<RawJwt>,
    /// `[login]`: the approvals page's login through a reverse proxy.
    pub login: Option<RawLogin>,
    /// `[oidc]`: the approvals page's OpenID Connect login.
    pub oidc: Option<RawOidc>,
    /// `[telemetry]`: OTLP export and the decision log.
    pub telemetry: RawTelemetry,
}

/// `[server]`, as written.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawServer {
    /// `listen`.
    pub listen: Option<Spanned<String>>,
    /// `max_body_bytes`.
    pub max_body_bytes: Option<Spanned<u64>>,
    /// `header_timeout_seconds`.
    pub header_timeout_seconds: Option<Spanned<u64>>,
    /// `body_timeout_seconds`.
    pub body_timeout_seconds: Option<Spanned<u64>>,
    /// `max_connections`.
    pub max_connections: Option<Spanned<u64>>,
    /// `store_poll_ms`.
    pub store_poll_ms: Option<Spanned<u64>>,
    /// `metrics_auth`.
    pub metrics_auth: Option<Spanned<RawMetricsAuth>>,
    /// `[[server.token]]`.
    #[serde(default)]
    pub token: Vec<RawToken>,
}

/// `[server] metrics_auth`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RawMetricsAuth {
    /// `"none"`.
    None,
    /// `"token"`.
    Token,
}

/// One `[[server.token]]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawToken {
    /// `name`.
    pub name: Option<Spanned<String>>,
    /// `sha256`.
    pub sha256: Spanned<String>,
    /// `role`.
    pub role: RawRole,
    /// `users`.
    pub users: Option<Spanned<Vec<String>>>,
    /// `identity`.
    pub identity: Option<Spanned<String>>,
}

/// `[[server.token]] role`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RawRole {
    /// `"agent"`.
    Agent,
    /// `"approver"`.
    Approver,
    /// `"admin"`.
    Admin,
}

/// `[jwt]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawJwt {
    /// `issuer`.
    pub issuer: Spanned<String>,
    /// `audience`.
    pub audience: Spanned<Vec<String>>,
    /// `jwks_file`.
    pub jwks_file: Option<Spanned<String>>,
    /// `jwks_url`.
    pub jwks_url: Option<Spanned<String>>,
    /// `algorithms`.
    pub algorithms: Option<Spanned<Vec<String>>>,
    /// `user_claim`.
    pub user_claim: Option<Spanned<String>>,
    /// `roles_claim`.
    pub roles_claim: Option<Spanned<String>>,
    /// `[jwt.roles]`.
    pub roles: Option<Spanned<BTreeMap<String, Vec<String>>>>,
    /// `default_role`.
    pub default_role: Option<Spanned<String>>,
    /// `leeway_seconds`.
    pub leeway_seconds: Option<Spanned<u64>>,
    /// `refresh_seconds`.
    pub refresh_seconds: Option<Spanned<u64>>,
    /// `mcp_resource`.
    pub mcp_resource: Option<Spanned<String>>,
    /// `authorization_servers`.
    pub authorization_servers: Option<Spanned<Vec<String>>>,
}

/// `[login]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawLogin {
    /// `user_header`.
    pub user_header: Spanned<String>,
    /// `groups_header`.
    pub groups_header: Spanned<String>,
    /// `trusted_proxies`.
    pub trusted_proxies: Spanned<Vec<String>>,
    /// `[login.roles]`.
    pub roles: Spanned<BTreeMap<String, Vec<String>>>,
}

/// `[oidc]`, as written.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawOidc {
    /// `client_id`.
    pub client_id: Spanned<String>,
    /// `redirect_uri`.
    pub redirect_uri: Spanned<String>,
    /// `authorization_endpoint`.
    pub authorization_endpoint: Option<Spanned<String>>,
    /// `token_endpoint`.
    pub token_endpoint: Option<Spanned<String>>,
    /// `client_secret_file`.
    pub client_secret_file: Option<Spanned<String>>,
    /// `client_secret_env`.
    pub client_secret_env: Option<Spanned<String>>,
    /// `token_endpoint_auth`.
    pub token_endpoint_auth: Option<Spanned<String>>,
}

/// `[telemetry]`, as written.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RawTelemetry {
    /// `endpoint`.
    pub endpoint: Option<Spanned<String>>,
    /// `protocol`.
    pub protocol: Option<RawProtocol>,
    /// `sample_ratio`.
    pub sample_ratio: Option<Spanned<f64>>,
    /// `service_name`.
    pub service_name: Option<Spanned<String>>,
    /// `queue_size`.
    pub queue_size: Option<Spanned<u64>>,
    /// `metrics_seconds`.
    pub metrics_seconds: Option<Spanned<u64>>,
    /// `record_arguments`.
    pub record_arguments: Option<Spanned<Vec<Spanned<String>>>>,
    /// `log_format`.
    pub log_format: Option<RawLogFormat>,
    /// `decision_log`.
    pub decision_log: Option<RawDecisionLog>,
}

/// `[telemetry] protocol`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub enum RawProtocol {
    /// `"http/protobuf"`.
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// `"grpc"`.
    #[serde(rename = "grpc")]
    Grpc,
}

/// `[telemetry] log_format`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RawLogFormat {
    /// `"text"`.
    Text,
    /// `"json"`.
    Json,
}

/// `[telemetry] decision_log`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RawDecisionLog {
    /// `"off"`.
    Off,
    /// `"debug"`.
    Debug,
    /// `"info"`.
    Info,
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
