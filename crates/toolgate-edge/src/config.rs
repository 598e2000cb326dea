//! The front ends' config tables: the values of `toolgate.toml`'s
//! `[proxy]` and `[mcp]` tables, checked, with their defaults and the types the front
//! ends run with.
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
//! commands, the service's reload), so a bad front-end table is refused
//! when the config loads, never at a first request; each front end builds
//! its own table with its `from_config` when it starts.
//!
//! Only the rules live here; the reference of every key is the core
//! crate's ([`toolgate::config::reference`]), made from the serde types.

mod mcp;
mod mcp_http;
mod proxy;
mod proxy_routes;
mod rules;

use toolgate::config::{Config, Error};

pub use self::mcp::{
    McpConfig, DEFAULT_CALL_TIMEOUT_SECONDS, DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MCP_USER, MAX_CALL_TIMEOUT_SECONDS, MAX_HOLD_SECONDS, MAX_MAX_FRAME_BYTES,
    MAX_MAX_RESULT_BYTES,
};
pub use self::mcp_http::{
    McpHttpConfig, McpToken, McpUpstream, UpstreamTarget, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_SECONDS, MAX_MAX_SESSIONS, MAX_SESSION_IDLE_SECONDS,
};
pub use self::proxy::{
    DeepSeek, OfferedTools, OnDeny, ProxyAuth, ProxyConfig, ProxyToken,
    DEFAULT_IDLE_TIMEOUT_SECONDS, DEFAULT_PROXY_LISTEN, DEFAULT_SESSION_HEADER,
    DEFAULT_TOKEN_HEADER, DEFAULT_UPSTREAM_TIMEOUT_SECONDS, MAX_PROXY_TIMEOUT_SECONDS,
    MESSAGES_BUILT_IN, RESPONSES_BUILT_IN,
};
pub use self::proxy_routes::{is_stored_output_route, ForwardRoute};

/// Checks every front-end table of `config`: the first error, placed as
/// [`Config::load`](toolgate::config::Config::load) places its own.
///
/// # Errors
///
/// The first table whose values are refused, with its [`ErrorCode`](toolgate::config::ErrorCode) and
/// position.
pub fn check(config: &Config) -> Result<(), Error> {
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
