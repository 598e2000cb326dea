//! The `[store]` table: where the audit log and approvals live, and how
//! refused arguments are audited.

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;

/// How a call whose arguments never parsed is audited: `[store]
/// refused_arguments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RefusedArguments {
    /// `text` (the default): the raw text, at most 4 KiB of it (the
    /// store's `audit::REFUSED_TEXT_MAX`), and its length.
    #[default]
    Text,
    /// `digest`: only the length and the HMAC-SHA256 under the store's
    /// redaction key (for tools whose arguments may carry secrets).
    Digest,
}

/// The store used when `[store]` names none.
pub const DEFAULT_STORE_URL: &str = "sqlite://toolgate.db";

/// Seconds between two signed checkpoints when `[store]` sets no
/// `checkpoint_seconds`.
pub const DEFAULT_CHECKPOINT_SECONDS: u64 = 300;

/// Signed checkpoints of the audit chain (`[store] checkpoint_key`,
/// `checkpoint_sink`, `checkpoint_seconds`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointConfig {
    key: std::path::PathBuf,
    sink: std::path::PathBuf,
    every: std::time::Duration,
}

impl CheckpointConfig {
    /// The file holding the Ed25519 seed (64 hex digits) that signs them.
    pub fn key(&self) -> &std::path::Path {
        &self.key
    }

    /// The file they are appended to, one JSON line each: keep it outside
    /// the database's reach (another disk, host or account).
    pub fn sink(&self) -> &std::path::Path {
        &self.sink
    }

    /// How often `toolgate serve` writes one.
    pub fn every(&self) -> std::time::Duration {
        self.every
    }
}

/// The `[store]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    url: String,
    refused_arguments: RefusedArguments,
    checkpoint: Option<CheckpointConfig>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: DEFAULT_STORE_URL.to_owned(),
            refused_arguments: RefusedArguments::Text,
            checkpoint: None,
        }
    }
}

impl StoreConfig {
    /// The store URL, such as `sqlite://toolgate.db` (the default).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How arguments that never parsed are audited (`refused_arguments`).
    pub fn refused_arguments(&self) -> RefusedArguments {
        self.refused_arguments
    }

    /// Signed checkpoints, when `checkpoint_key` and `checkpoint_sink` are
    /// set (paths relative to the config's folder).
    pub fn checkpoint(&self) -> Option<&CheckpointConfig> {
        self.checkpoint.as_ref()
    }
}

impl Loader<'_> {
    /// `[store]`: a URL that is not blank, and `refused_arguments`.
    pub(super) fn store(&self, raw: &RawConfig) -> Result<StoreConfig, Error> {
        let mut store = match &raw.store.url {
            None => StoreConfig::default(),
            Some(url) if url.get_ref().trim().is_empty() => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    url.span().start,
                    "url",
                    "`url` must not be empty",
                ))
            }
            Some(url) => StoreConfig {
                url: url.get_ref().clone(),
                ..StoreConfig::default()
            },
        };
        if let Some(mode) = &raw.store.refused_arguments {
            store.refused_arguments = match mode.get_ref().as_str() {
                "text" => RefusedArguments::Text,
                "digest" => RefusedArguments::Digest,
                _ => {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        mode.span().start,
                        "refused_arguments",
                        "`refused_arguments` must be \"text\" or \"digest\"",
                    ))
                }
            };
        }
        let (key, sink) = (&raw.store.checkpoint_key, &raw.store.checkpoint_sink);
        match (key, sink) {
            (None, None) => {
                if let Some(v) = &raw.store.checkpoint_seconds {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        "checkpoint_seconds",
                        "`checkpoint_seconds` needs `checkpoint_key` and `checkpoint_sink`",
                    ));
                }
            }
            (Some(key), Some(sink)) => {
                let mut every = DEFAULT_CHECKPOINT_SECONDS;
                if let Some(v) = &raw.store.checkpoint_seconds {
                    every = *v.get_ref();
                    if every == 0 || every > 86_400 {
                        return Err(self.at_key(
                            ErrorCode::InvalidValue,
                            v.span().start,
                            "checkpoint_seconds",
                            "`checkpoint_seconds` must be between 1 and 86400",
                        ));
                    }
                }
                store.checkpoint = Some(CheckpointConfig {
                    key: self.resolve(key.get_ref()),
                    sink: self.resolve(sink.get_ref()),
                    every: std::time::Duration::from_secs(every),
                });
            }
            (Some(one), None) | (None, Some(one)) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    one.span().start,
                    if key.is_some() {
                        "checkpoint_key"
                    } else {
                        "checkpoint_sink"
                    },
                    "`checkpoint_key` and `checkpoint_sink` go together",
                ));
            }
        }
        Ok(store)
    }
}
