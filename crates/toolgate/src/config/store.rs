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

/// The `[store]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    url: String,
    refused_arguments: RefusedArguments,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: DEFAULT_STORE_URL.to_owned(),
            refused_arguments: RefusedArguments::Text,
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
        Ok(store)
    }
}
