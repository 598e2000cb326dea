//! The `[approvals]` table: how long a pending approval lives and how many
//! may wait.

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::RawConfig;

/// Seconds a pending approval stays usable when `[approvals]` sets no
/// `expiry_seconds`.
pub const DEFAULT_APPROVAL_EXPIRY_SECONDS: u64 = 3600;
/// The longest `expiry_seconds` accepted: 30 days.
pub const MAX_APPROVAL_EXPIRY_SECONDS: u64 = 30 * 24 * 3600;
/// Unexpired pending approvals per session when `[approvals]` sets no
/// `max_pending_per_session`.
pub const DEFAULT_MAX_PENDING_PER_SESSION: u32 = 20;
/// Unexpired pending approvals per user when `[approvals]` sets no
/// `max_pending_per_user`.
pub const DEFAULT_MAX_PENDING_PER_USER: u32 = 100;
/// Unexpired pending approvals asked for through one token (a caller of
/// `toolgate serve`, whatever users it names) when `[approvals]` sets no
/// `max_pending_per_token`.
pub const DEFAULT_MAX_PENDING_PER_TOKEN: u32 = 200;
/// The largest `max_pending_per_session` / `max_pending_per_user` /
/// `max_pending_per_token` accepted.
pub const MAX_MAX_PENDING: u32 = 100_000;

/// The `[approvals]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalsConfig {
    expiry_seconds: u64,
    max_pending_per_session: u32,
    max_pending_per_user: u32,
    max_pending_per_token: u32,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            expiry_seconds: DEFAULT_APPROVAL_EXPIRY_SECONDS,
            max_pending_per_session: DEFAULT_MAX_PENDING_PER_SESSION,
            max_pending_per_user: DEFAULT_MAX_PENDING_PER_USER,
            max_pending_per_token: DEFAULT_MAX_PENDING_PER_TOKEN,
        }
    }
}

impl ApprovalsConfig {
    /// How long a pending approval (and the approval granted on it) stays
    /// usable after the call that asked for it.
    pub fn expiry(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.expiry_seconds)
    }

    /// The cap on unexpired pending approvals per session.
    pub fn max_pending_per_session(&self) -> u32 {
        self.max_pending_per_session
    }

    /// The cap on unexpired pending approvals per user.
    pub fn max_pending_per_user(&self) -> u32 {
        self.max_pending_per_user
    }

    /// The cap on unexpired pending approvals asked for through one token
    /// (however many users it names).
    pub fn max_pending_per_token(&self) -> u32 {
        self.max_pending_per_token
    }
}

impl Loader<'_> {
    /// `[approvals]`: an expiry of at most 30 days, caps from 1 to
    /// [`MAX_MAX_PENDING`].
    pub(super) fn approvals(&self, raw: &RawConfig) -> Result<ApprovalsConfig, Error> {
        let mut approvals = ApprovalsConfig::default();
        if let Some(v) = &raw.approvals.expiry_seconds {
            let n = *v.get_ref();
            if n == 0 || n > MAX_APPROVAL_EXPIRY_SECONDS {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    "expiry_seconds",
                    format!("`expiry_seconds` must be between 1 and {MAX_APPROVAL_EXPIRY_SECONDS}"),
                ));
            }
            approvals.expiry_seconds = n;
        }
        for (key, value, slot) in [
            (
                "max_pending_per_session",
                &raw.approvals.max_pending_per_session,
                &mut approvals.max_pending_per_session,
            ),
            (
                "max_pending_per_user",
                &raw.approvals.max_pending_per_user,
                &mut approvals.max_pending_per_user,
            ),
            (
                "max_pending_per_token",
                &raw.approvals.max_pending_per_token,
                &mut approvals.max_pending_per_token,
            ),
        ] {
            if let Some(v) = value {
                let n = *v.get_ref();
                if n == 0 || n > u64::from(MAX_MAX_PENDING) {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        key,
                        format!("`{key}` must be between 1 and {MAX_MAX_PENDING}"),
                    ));
                }
                *slot = u32::try_from(n).unwrap_or(MAX_MAX_PENDING);
            }
        }
        Ok(approvals)
    }
}
