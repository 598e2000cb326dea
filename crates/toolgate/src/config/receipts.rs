//! `[gate] receipt_key` and `receipt_seconds`: the key that signs every
//! decision's receipt ([`crate::receipt`]) and how long a receipt is valid.

use std::path::{Path, PathBuf};

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;
use crate::receipt::{DEFAULT_RECEIPT_SECONDS, MAX_RECEIPT_SECONDS};

/// Signed receipts: the key file (an Ed25519 seed as 64 hex digits, read by
/// [`crate::Gate::from_config`]) and the receipts' validity in seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptConfig {
    key: PathBuf,
    seconds: u64,
}

impl ReceiptConfig {
    /// The key file, resolved against the config's folder.
    pub fn key(&self) -> &Path {
        &self.key
    }

    /// How long a receipt is valid, in seconds (`receipt_seconds`, default
    /// [`DEFAULT_RECEIPT_SECONDS`]).
    pub fn seconds(&self) -> u64 {
        self.seconds
    }
}

impl Loader<'_> {
    /// `receipt_key` and `receipt_seconds` of `[gate]`: seconds from 1 to
    /// [`MAX_RECEIPT_SECONDS`], and only with a key.
    pub(super) fn receipts(&self, raw: &RawConfig) -> Result<Option<ReceiptConfig>, Error> {
        let g = &raw.gate;
        let seconds = match &g.receipt_seconds {
            None => DEFAULT_RECEIPT_SECONDS,
            Some(v) => {
                let n = *v.get_ref();
                if n == 0 || n > MAX_RECEIPT_SECONDS {
                    return Err(self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "receipt_seconds",
                        format!("`receipt_seconds` must be between 1 and {MAX_RECEIPT_SECONDS}"),
                    ));
                }
                if g.receipt_key.is_none() {
                    return Err(self.at_key(
                        ErrorCode::MissingKey,
                        v.span().start,
                        "receipt_seconds",
                        "`receipt_seconds` is given without `receipt_key` (the key that signs receipts)",
                    ));
                }
                n
            }
        };
        Ok(g.receipt_key.as_ref().map(|k| ReceiptConfig {
            key: self.resolve(k.get_ref()),
            seconds,
        }))
    }
}
