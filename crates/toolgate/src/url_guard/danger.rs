//! Settings that weaken the URL guard. Each is named for what it gives up,
//! so that a reviewer sees it.

use super::UrlPolicyConfig;

/// The dangerous settings of a [`UrlPolicyConfig`], reached through
/// [`UrlPolicyConfig::dangerous`].
#[derive(Debug)]
pub struct DangerousUrlPolicyConfig<'a> {
    pub(super) config: &'a mut UrlPolicyConfig,
}

impl DangerousUrlPolicyConfig<'_> {
    /// Let allowlisted hosts be private: an IP-literal host in a forbidden
    /// range (loopback, RFC 1918, link-local, unique-local, …) passes when
    /// the allowlist names it; an allowlisted local name (`intranet`,
    /// `build.internal`) passes; in resolve mode, addresses in those ranges
    /// pass.
    ///
    /// Cloud metadata addresses and names stay forbidden, and numeric-looking
    /// names stay ambiguous. The allowlist still applies. Meant for tools that
    /// reach an internal service on purpose; never for a general fetch tool.
    pub fn allow_private_addresses(&mut self, allow: bool) -> &mut Self {
        self.config.allow_private_addresses = allow;
        self
    }
}
