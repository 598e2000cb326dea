//! The front ends' config tables: the values of `toolgate.toml`'s
//! `[server]`, `[proxy]`, `[mcp]`, `[jwt]`, `[login]`, `[oidc]` and
//! `[telemetry]` tables, checked, with their defaults and the types the
//! front ends run with. The gate reads none of them.
//!
//! The core crate's loader ([`toolgate::config::Config::load`]) reads the
//! whole file, these tables included, into serde types closed to unknown
//! keys ([`toolgate::config::front`]): an unknown key or a value of the
//! wrong type is refused there, with its position. This module checks what
//! the gate never reads (addresses, upstream URLs, tokens, header names,
//! timeouts) and refuses a bad value with the same [`Error`]: the file, the
//! line and column of the key, the key and an [`ErrorCode`](toolgate::config::ErrorCode).
//!
//! Every place that loads a config for a front end calls [`check`] right
//! after [`Config::load`](toolgate::config::Config::load) (the CLI's
//! commands, the service's reload, Python), so a bad front-end table is
//! refused when the config loads, never at a first request; each front end
//! builds the tables it runs with by their `from_config` when it starts.
//!
//! The rules the tables share are written once ([`check_user_name`],
//! [`speaks_for`], [`provider_url_ok`], and, inside this module, a token's
//! hash, a listen address, a header name). Only the rules live here; the
//! reference of every key is the core crate's
//! ([`toolgate::config::reference`]), made from the serde types.

mod jwt;
mod login;
mod mcp;
mod mcp_http;
mod oidc;
mod proxy;
mod proxy_routes;
mod rules;
mod server;
mod telemetry;
#[cfg(test)]
mod test_support;

use toolgate::config::{Config, Error};

pub use self::jwt::{
    JwksSource, JwtConfig, DEFAULT_JWKS_REFRESH_SECONDS, DEFAULT_JWT_LEEWAY_SECONDS,
    JWT_ALGORITHMS, MAX_JWKS_REFRESH_SECONDS, MAX_JWT_AUDIENCES, MAX_JWT_LEEWAY_SECONDS,
    MIN_JWKS_REFRESH_SECONDS,
};
pub use self::login::{LoginConfig, MAX_TRUSTED_PROXIES};
pub use self::mcp::{
    McpConfig, DEFAULT_CALL_TIMEOUT_SECONDS, DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MCP_USER, MAX_CALL_TIMEOUT_SECONDS, MAX_HOLD_SECONDS, MAX_MAX_FRAME_BYTES,
    MAX_MAX_RESULT_BYTES,
};
pub use self::mcp_http::{
    McpHttpConfig, McpToken, McpUpstream, UpstreamTarget, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_SECONDS, MAX_MAX_SESSIONS, MAX_SESSION_IDLE_SECONDS,
};
pub use self::oidc::{ClientSecret, OidcConfig, TokenEndpointAuth};
pub use self::proxy::{
    DeepSeek, OfferedTools, OnDeny, ProxyAuth, ProxyConfig, ProxyToken,
    DEFAULT_IDLE_TIMEOUT_SECONDS, DEFAULT_PROXY_LISTEN, DEFAULT_SESSION_HEADER,
    DEFAULT_TOKEN_HEADER, DEFAULT_UPSTREAM_TIMEOUT_SECONDS, MAX_PROXY_TIMEOUT_SECONDS,
    MESSAGES_BUILT_IN, RESPONSES_BUILT_IN,
};
pub use self::proxy_routes::{is_stored_output_route, ForwardRoute};
pub use self::rules::{
    check_user_name, provider_url_ok, speaks_for, MAX_HEADER_NAME_BYTES, MAX_USER_NAME_BYTES,
};
pub use self::server::{
    MetricsAuth, ServerConfig, ServerRole, ServerToken, DEFAULT_BODY_TIMEOUT_SECONDS,
    DEFAULT_HEADER_TIMEOUT_SECONDS, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_STORE_POLL_MS, MAX_MAX_BODY_BYTES, MAX_MAX_CONNECTIONS,
    MAX_STORE_POLL_MS, MAX_TIMEOUT_SECONDS, MIN_STORE_POLL_MS,
};
pub use self::telemetry::{
    DecisionLog, LogFormat, OtlpProtocol, TelemetryConfig, DEFAULT_METRICS_SECONDS,
    DEFAULT_QUEUE_SIZE, DEFAULT_SERVICE_NAME, MAX_QUEUE_SIZE,
};

/// Checks every front-end table of `config`: the first error, placed as
/// [`Config::load`](toolgate::config::Config::load) places its own.
///
/// # Errors
///
/// The first table whose values are refused, with its [`ErrorCode`](toolgate::config::ErrorCode) and
/// position.
pub fn check(config: &Config) -> Result<(), Error> {
    // In the order the tables used to be checked by the core loader, then
    // the front ends' own.
    ServerConfig::from_config(config)?;
    JwtConfig::from_config(config)?;
    LoginConfig::from_config(config)?;
    OidcConfig::from_config(config)?;
    TelemetryConfig::from_config(config)?;
    ProxyConfig::from_config(config)?;
    McpConfig::from_config(config)?;
    Ok(())
}

/// Reads the config at `path` ([`Config::load`](toolgate::config::Config::load))
/// and checks its front-end tables ([`check`]): what every front end loads
/// its config with.
///
/// # Errors
///
/// The first error of the file, of the files it names, or of a front-end
/// table.
pub fn load(path: impl AsRef<std::path::Path>) -> Result<Config, Error> {
    let config = Config::load(path)?;
    check(&config)?;
    Ok(config)
}

/// Like [`load`], for config text as if read from `path`
/// ([`Config::parse`](toolgate::config::Config::parse)).
///
/// # Errors
///
/// As [`load`].
pub fn parse(text: &str, path: impl AsRef<std::path::Path>) -> Result<Config, Error> {
    let config = Config::parse(text, path)?;
    check(&config)?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate::config::ErrorCode;

    #[test]
    fn a_bad_front_end_table_is_refused_when_the_config_loads() {
        let text = "[proxy]\nlisten = \"nowhere\"\n";
        // The core crate reads the table's keys and types only ...
        assert!(Config::parse(text, "toolgate.toml").is_ok());
        // ... the edge's load refuses its value, at its key.
        let e = parse(text, "toolgate.toml").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidValue);
        assert_eq!((e.line(), e.column()), (Some(2), Some(1)));
        assert_eq!(e.config_key(), Some("listen"));
        // An unknown key is the core loader's, with its position.
        let e = parse("[proxy]\nlisten_on = \"x\"\n", "toolgate.toml").unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownKey);
        assert_eq!(e.line(), Some(2));
        assert!(parse("", "toolgate.toml").is_ok());
    }
}
