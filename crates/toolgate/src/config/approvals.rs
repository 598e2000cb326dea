//! The `[approvals]` table: how long a pending approval lives, how many
//! may wait, and how many distinct approvers a held call needs
//! (`[[approvals.quorum]]`).

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::{RawConfig, RawNotify, RawNotifyKind, RawRisk};
use crate::registry::{Registry, Risk};

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

/// The most approvers a `[[approvals.quorum]]` may require.
pub const MAX_QUORUM_APPROVERS: u32 = 10;

/// Which held calls a `[[approvals.quorum]]` covers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuorumScope {
    /// Calls of this tool.
    Tool(String),
    /// Calls of any tool of this risk tier.
    Risk(Risk),
}

/// One `[[approvals.quorum]]`: a two-person rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumRule {
    scope: QuorumScope,
    approvers: u32,
    not_own: bool,
}

impl QuorumRule {
    /// The calls it covers.
    pub fn scope(&self) -> &QuorumScope {
        &self.scope
    }

    /// Distinct approvers needed (1 to [`MAX_QUORUM_APPROVERS`]).
    pub fn approvers(&self) -> u32 {
        self.approvers
    }

    /// Whether the user the call was made for is refused as an approver.
    pub fn not_own(&self) -> bool {
        self.not_own
    }
}

/// What the rules ask of a held call's approval ([`ApprovalsConfig::quorum_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuorumNeed {
    /// Distinct approvers needed (1 without a matching rule).
    pub approvers: u32,
    /// Whether the call's own user is refused as an approver.
    pub not_own: bool,
}

/// What a notification sink posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotifyKind {
    /// toolgate's JSON notice, signed with HMAC-SHA256.
    Webhook,
    /// A Slack-compatible incoming-webhook message (`{"text", "blocks"}`).
    Slack,
}

impl NotifyKind {
    /// The config's word.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Slack => "slack",
        }
    }
}

/// The shortest webhook key accepted, in bytes.
pub const MIN_NOTIFY_SECRET_BYTES: usize = 16;

/// One `[[approvals.notify]]`: where `toolgate serve` sends a notice of
/// each held call. Its URL and key are secrets: `Debug` shows neither.
#[derive(Clone, PartialEq, Eq)]
pub struct NotifySink {
    name: String,
    kind: NotifyKind,
    url: String,
    secret: Option<Vec<u8>>,
    timeout: std::time::Duration,
    max_attempts: u32,
}

impl std::fmt::Debug for NotifySink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotifySink")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("timeout", &self.timeout)
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl NotifySink {
    /// Its name, as delivery records name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it posts.
    pub fn kind(&self) -> NotifyKind {
        self.kind
    }

    /// Where it posts (a secret for Slack: never log it).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The HMAC-SHA256 key of a webhook.
    pub fn secret(&self) -> Option<&[u8]> {
        self.secret.as_deref()
    }

    /// One attempt's deadline.
    pub fn timeout(&self) -> std::time::Duration {
        self.timeout
    }

    /// Attempts before a delivery is recorded failed.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }
}

/// The `[approvals]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalsConfig {
    expiry_seconds: u64,
    max_pending_per_session: u32,
    max_pending_per_user: u32,
    max_pending_per_token: u32,
    quorum: Vec<QuorumRule>,
    page_url: Option<String>,
    notify: Vec<NotifySink>,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            expiry_seconds: DEFAULT_APPROVAL_EXPIRY_SECONDS,
            max_pending_per_session: DEFAULT_MAX_PENDING_PER_SESSION,
            max_pending_per_user: DEFAULT_MAX_PENDING_PER_USER,
            max_pending_per_token: DEFAULT_MAX_PENDING_PER_TOKEN,
            quorum: Vec::new(),
            page_url: None,
            notify: Vec::new(),
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

    /// The approvals page as approvers reach it, if configured.
    pub fn page_url(&self) -> Option<&str> {
        self.page_url.as_deref()
    }

    /// The notification sinks, in the order of the file.
    pub fn notify(&self) -> &[NotifySink] {
        &self.notify
    }

    /// The two-person rules, in the order of the file.
    pub fn quorum_rules(&self) -> &[QuorumRule] {
        &self.quorum
    }

    /// What the rules ask of the approval of a held call of `tool` (of
    /// tier `risk`): the most approvers any matching rule names, and
    /// `not_own` if any matching rule says so; one approver, anyone,
    /// without a match.
    pub fn quorum_for(&self, tool: &str, risk: Option<Risk>) -> QuorumNeed {
        let mut need = QuorumNeed {
            approvers: 1,
            not_own: false,
        };
        for rule in &self.quorum {
            let hit = match &rule.scope {
                QuorumScope::Tool(name) => name == tool,
                QuorumScope::Risk(r) => Some(*r) == risk,
            };
            if hit {
                need.approvers = need.approvers.max(rule.approvers);
                need.not_own |= rule.not_own;
            }
        }
        need
    }
}

impl Loader<'_> {
    /// `[approvals]`: an expiry of at most 30 days, caps from 1 to
    /// [`MAX_MAX_PENDING`].
    /// Each `[[approvals.quorum]]` names one registered tool or one risk
    /// tier and from 1 to [`MAX_QUORUM_APPROVERS`] approvers.
    pub(super) fn approvals(
        &self,
        raw: &RawConfig,
        registry: &Registry,
    ) -> Result<ApprovalsConfig, Error> {
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
        for q in &raw.approvals.quorum {
            let n = *q.approvers.get_ref();
            if n == 0 || n > u64::from(MAX_QUORUM_APPROVERS) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    q.approvers.span().start,
                    "approvers",
                    format!("`approvers` must be between 1 and {MAX_QUORUM_APPROVERS}"),
                ));
            }
            let scope = match (&q.tool, q.risk) {
                (Some(tool), None) => {
                    if registry.get(tool.get_ref()).is_none() {
                        return Err(self.at_key(
                            ErrorCode::InvalidValue,
                            tool.span().start,
                            "tool",
                            format!(
                                "`[[approvals.quorum]]` names `{}`, which is not a registered tool",
                                tool.get_ref().escape_debug()
                            ),
                        ));
                    }
                    QuorumScope::Tool(tool.get_ref().clone())
                }
                (None, Some(risk)) => QuorumScope::Risk(match risk {
                    RawRisk::Read => Risk::Read,
                    RawRisk::Write => Risk::Write,
                    RawRisk::Destructive => Risk::Destructive,
                }),
                _ => {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        q.approvers.span().start,
                        "approvers",
                        "an `[[approvals.quorum]]` names exactly one of `tool` and `risk`",
                    ))
                }
            };
            approvals.quorum.push(QuorumRule {
                scope,
                approvers: u32::try_from(n).unwrap_or(MAX_QUORUM_APPROVERS),
                not_own: q.not_own.unwrap_or(false),
            });
        }
        if let Some(u) = &raw.approvals.page_url {
            if !is_http_url(u.get_ref()) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    u.span().start,
                    "page_url",
                    "`page_url` must be an http or https URL",
                ));
            }
            approvals.page_url = Some(u.get_ref().clone());
        }
        for n in &raw.approvals.notify {
            let sink = self.notify_sink(n, &approvals.notify)?;
            approvals.notify.push(sink);
        }
        Ok(approvals)
    }

    /// One `[[approvals.notify]]`: a unique name, one URL (given or from
    /// the environment), a webhook's key from a file or the environment.
    fn notify_sink(&self, n: &RawNotify, declared: &[NotifySink]) -> Result<NotifySink, Error> {
        let name = n.name.get_ref();
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !name_ok || declared.iter().any(|d| d.name == *name) {
            return Err(self.at_key(
                ErrorCode::InvalidValue,
                n.name.span().start,
                "name",
                "a sink's `name` is 1 to 64 of `a-z0-9_-`, and unique",
            ));
        }
        let at = n.name.span().start;
        let url = match (&n.url, &n.url_env) {
            (Some(u), None) => u.get_ref().clone(),
            (None, Some(var)) => std::env::var(var.get_ref()).map_err(|_| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    var.span().start,
                    "url_env",
                    format!("the environment variable `{}` is not set", var.get_ref()),
                )
            })?,
            _ => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    at,
                    "url",
                    "a sink names exactly one of `url` and `url_env`",
                ))
            }
        };
        if !is_http_url(&url) {
            // The URL may be a secret: the message does not repeat it.
            return Err(self.at_key(
                ErrorCode::InvalidValue,
                at,
                "url",
                "a sink's URL must be an http or https URL",
            ));
        }
        let secret = match (&n.secret_file, &n.secret_env) {
            (Some(f), None) => Some(std::fs::read(self.resolve(f.get_ref())).map_err(|e| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    f.span().start,
                    "secret_file",
                    format!("cannot read `{}`: {e}", f.get_ref()),
                )
            })?),
            (None, Some(var)) => Some(
                std::env::var(var.get_ref())
                    .map_err(|_| {
                        self.at_key(
                            ErrorCode::InvalidValue,
                            var.span().start,
                            "secret_env",
                            format!("the environment variable `{}` is not set", var.get_ref()),
                        )
                    })?
                    .into_bytes(),
            ),
            (None, None) => None,
            (Some(_), Some(_)) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    at,
                    "secret_file",
                    "a sink names at most one of `secret_file` and `secret_env`",
                ))
            }
        };
        // A key file's trailing newline is not part of the key.
        let secret = secret.map(|mut k| {
            while k.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                k.pop();
            }
            k
        });
        let kind = match n.kind {
            RawNotifyKind::Webhook => NotifyKind::Webhook,
            RawNotifyKind::Slack => NotifyKind::Slack,
        };
        match (kind, &secret) {
            (NotifyKind::Webhook, Some(k)) if k.len() >= MIN_NOTIFY_SECRET_BYTES => {}
            (NotifyKind::Webhook, _) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    at,
                    "secret_file",
                    format!("a webhook needs a key of at least {MIN_NOTIFY_SECRET_BYTES} bytes (`secret_file` or `secret_env`)"),
                ))
            }
            (NotifyKind::Slack, Some(_)) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    at,
                    "secret_file",
                    "a Slack sink signs nothing: its URL is its secret (`url_env`)",
                ))
            }
            (NotifyKind::Slack, None) => {}
        }
        let bounded = |v: &Option<toml::Spanned<u64>>, key: &str, default: u64, max: u64| match v {
            None => Ok(default),
            Some(v) if (1..=max).contains(v.get_ref()) => Ok(*v.get_ref()),
            Some(v) => Err(self.at_key(
                ErrorCode::InvalidValue,
                v.span().start,
                key,
                format!("`{key}` must be between 1 and {max}"),
            )),
        };
        let timeout_ms = bounded(&n.timeout_ms, "timeout_ms", 5000, 60_000)?;
        let attempts = bounded(&n.max_attempts, "max_attempts", 4, 10)?;
        Ok(NotifySink {
            name: name.clone(),
            kind,
            url,
            secret,
            timeout: std::time::Duration::from_millis(timeout_ms),
            max_attempts: u32::try_from(attempts).unwrap_or(10),
        })
    }
}

/// Whether `s` is an absolute `http` or `https` URL with a host.
fn is_http_url(s: &str) -> bool {
    url::Url::parse(s).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}
