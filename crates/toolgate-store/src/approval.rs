//! Approvals bound to (user, session, tool, argument digest), and standing
//! approvals; documented on [`Approval`].

use std::fmt;
use std::str::FromStr;

use toolgate_json::Digest;

use crate::error::{Error, ErrorCode};
use crate::time::Timestamp;

/// An approval's id: a positive integer, unique in the store and never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApprovalId(u64);

impl ApprovalId {
    /// The id with this number.
    pub const fn new(id: u64) -> Self {
        Self(id)
    }

    /// The number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The gate's reference to a stored approval: its id's decimal digits.
impl From<ApprovalId> for toolgate::ApprovalRef {
    fn from(id: ApprovalId) -> Self {
        Self::new(id.to_string())
    }
}

/// Reads an id exactly as issued (see [`crate::ParseIdError`]).
impl FromStr for ApprovalId {
    type Err = crate::id::ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::id::parse_issued(s).map(Self)
    }
}

/// The digest a single approval of a call made under a pinned tool
/// definition, or routed to a named upstream, is bound by. An approval
/// requested under definition D1 holds this digest for D1, so once the
/// server changed the tool to D2 the same arguments look up another digest
/// and D1's approval covers nothing (even after a human approved D2: the
/// call then waits for a new approval). Likewise an approval of a call
/// routed to upstream U1 covers nothing routed to U2, whatever the tool's
/// name and definition there. With a definition and no upstream the key is
/// SHA-256 over a fixed label, the argument digest and the definition
/// digest; with an upstream, over another label, the argument digest, a
/// marker byte and the definition digest (or zeros without one) and the
/// upstream's name; with neither the argument digest itself is the key.
pub fn bound_digest(
    arguments: &Digest,
    definition: Option<&Digest>,
    upstream: Option<&str>,
) -> Digest {
    match (definition, upstream) {
        (None, None) => *arguments,
        (Some(def), None) => {
            let mut bytes = Vec::with_capacity(96);
            bytes.extend_from_slice(b"toolgate approval bound to a tool definition v1\0");
            bytes.extend_from_slice(arguments.as_bytes());
            bytes.extend_from_slice(def.as_bytes());
            Digest::of(&bytes)
        }
        (def, Some(upstream)) => {
            let mut bytes = Vec::with_capacity(128 + upstream.len());
            bytes.extend_from_slice(b"toolgate approval bound to an upstream v1\0");
            bytes.extend_from_slice(arguments.as_bytes());
            match def {
                Some(def) => {
                    bytes.push(1);
                    bytes.extend_from_slice(def.as_bytes());
                }
                None => {
                    bytes.push(0);
                    bytes.extend_from_slice(&[0; 32]);
                }
            }
            bytes.extend_from_slice(upstream.as_bytes());
            Digest::of(&bytes)
        }
    }
}

/// Which kind of approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApprovalKind {
    /// `single`: one call, bound to (user, session, tool, argument digest),
    /// used at most once.
    Single,
    /// `standing`: any call of a tool by a user, until a time, any number of
    /// times; each use is audited.
    Standing,
}

impl ApprovalKind {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Standing => "standing",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "single" => Some(Self::Single),
            "standing" => Some(Self::Standing),
            _ => None,
        }
    }
}

/// Where a human's decision stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApprovalState {
    /// `pending`: waiting for a human.
    Pending,
    /// `approved`: granted (single: usable once until it expires).
    Approved,
    /// `denied`: refused or revoked.
    Denied,
    /// `expired`: no human decided before it expired (a pending approval
    /// past its `expires_at` reads as expired everywhere), or it was a
    /// duplicate of another pending approval for the same call in a
    /// database written before the store enforced one per call.
    Expired,
    /// `withdrawn`: the call it was requested for is gone (its client
    /// cancelled it or went away) before a human decided; no approval
    /// given afterwards runs anything ([`crate::Store::withdraw`]).
    Withdrawn,
}

impl ApprovalState {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "approved" => Some(Self::Approved),
            "denied" => Some(Self::Denied),
            "expired" => Some(Self::Expired),
            "withdrawn" => Some(Self::Withdrawn),
            _ => None,
        }
    }
}

/// An approval as stored.
///
/// A *single* approval is created pending by
/// [`crate::Store::request_approval`] when a call needs a human. Once
/// approved it covers exactly one call: same user, session, tool and digest
/// of the canonical arguments, strictly before `expires_at`, once
/// ([`crate::Store::consume`]). Behind the MCP proxy the digest also binds
/// the digest of the tool's definition the call was made under
/// and the upstream the call is routed to ([`bound_digest`]). A *standing*
/// approval
/// ([`crate::Store::grant_standing`]) covers every call of one tool by one
/// user until `expires_at`; `deny` revokes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Approval {
    /// The id.
    pub id: ApprovalId,
    /// Single or standing.
    pub kind: ApprovalKind,
    /// The user it covers.
    pub user: String,
    /// The session it covers (single approvals only).
    pub session: Option<String>,
    /// The tool it covers.
    pub tool: String,
    /// The argument digest it covers (single approvals only).
    pub digest: Option<Digest>,
    /// The upstream its call goes to (single approvals requested by the
    /// MCP proxy; the digest is bound to it, [`bound_digest`]).
    pub upstream: Option<String>,
    /// When it was created.
    pub created_at: Timestamp,
    /// It covers calls strictly before this time.
    pub expires_at: Timestamp,
    /// The human's decision.
    pub state: ApprovalState,
    /// Who decided.
    pub decided_by: Option<String>,
    /// When they decided.
    pub decided_at: Option<Timestamp>,
    /// Their note.
    pub note: Option<String>,
    /// When it was (last) used.
    pub used_at: Option<Timestamp>,
    /// How many calls it let through.
    pub uses: u64,
    /// Who must approve it before it is approved ([`Quorum`]; one
    /// approver for approvals requested without a rule).
    pub quorum: Quorum,
    /// How many distinct approvers approved it so far
    /// ([`crate::Store::approval_votes`] names them).
    pub votes: u32,
}

impl Approval {
    /// The approval as it stands at `now`: a pending one past its expiry
    /// is [`ApprovalState::Expired`].
    #[must_use]
    pub fn as_of(mut self, now: Timestamp) -> Self {
        if self.state == ApprovalState::Pending && now >= self.expires_at {
            self.state = ApprovalState::Expired;
        }
        self
    }

    /// Whether it would let a matching call through at `now`.
    pub fn is_usable_at(&self, now: Timestamp) -> bool {
        self.state == ApprovalState::Approved
            && now < self.expires_at
            && (self.kind == ApprovalKind::Standing || self.used_at.is_none())
    }
}

/// The most approvers a [`Quorum`] may require.
pub const MAX_QUORUM: u32 = 10;

/// Who must approve a single approval before it lets its call through:
/// `approvers` distinct approvers (by identity: one person approving twice,
/// under any number of tokens, counts once), and, with `not_own`, none of
/// them the user the call was made for. Fixed when the approval is
/// requested ([`crate::Store::request_approval_with`]), so every surface
/// that approves (the API, the page, the CLI) holds the same rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Quorum {
    /// Distinct approvers needed (1 to [`MAX_QUORUM`]).
    pub approvers: u32,
    /// Whether the user the call was made for is refused as an approver.
    pub not_own: bool,
}

impl Default for Quorum {
    fn default() -> Self {
        Self::ONE
    }
}

impl Quorum {
    /// One approver, who may be anyone with the approver role.
    pub const ONE: Self = Self {
        approvers: 1,
        not_own: false,
    };

    /// `approvers` distinct approvers (clamped to 1 ..= [`MAX_QUORUM`]);
    /// with `not_own`, none the call's own user.
    pub const fn new(approvers: u32, not_own: bool) -> Self {
        Self {
            approvers: if approvers == 0 {
                1
            } else if approvers > MAX_QUORUM {
                MAX_QUORUM
            } else {
                approvers
            },
            not_own,
        }
    }
}

/// One approver's approval of a single approval under a [`Quorum`]
/// ([`crate::Store::approval_votes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalVote {
    /// The approver's identity.
    pub approver: String,
    /// When they approved.
    pub at: Timestamp,
    /// Their note.
    pub note: Option<String>,
}

/// Caps on the approvals waiting for a human
/// ([`crate::Store::request_approval_within`]): a call that would add one
/// beyond either is refused with [`crate::ErrorCode::QueueFull`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingLimits {
    /// The most unexpired pending approvals of one session.
    pub per_session: u32,
    /// The most unexpired pending approvals of one user (all sessions).
    pub per_user: u32,
    /// The most unexpired pending approvals one requester (a front end's
    /// authenticated caller, such as the service's token) asked for,
    /// whatever users it named.
    pub per_requester: u32,
}

impl PendingLimits {
    /// These caps (each at least 1).
    pub const fn new(per_session: u32, per_user: u32) -> Self {
        Self {
            per_session: if per_session == 0 { 1 } else { per_session },
            per_user: if per_user == 0 { 1 } else { per_user },
            per_requester: u32::MAX,
        }
    }

    /// The same caps, and at most `per_requester` (at least 1) for one
    /// requester.
    #[must_use]
    pub const fn with_per_requester(mut self, per_requester: u32) -> Self {
        self.per_requester = if per_requester == 0 { 1 } else { per_requester };
        self
    }

    /// No caps (`u32::MAX` each): for tools and tests, never for a service.
    pub const fn unlimited() -> Self {
        Self::new(u32::MAX, u32::MAX)
    }
}

/// An approval that let a call through ([`crate::Store::consume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalUse {
    /// The approval used.
    pub id: ApprovalId,
    /// Single or standing.
    pub kind: ApprovalKind,
    /// The `seq` of the `approval_used` audit record.
    pub seq: u64,
}

/// Which approvals [`crate::Store::list_approvals`] returns: all filters
/// must match; pages go forward by id (or back, newest first, with
/// [`ApprovalFilter::newest_first`]). The state is the state as of now:
/// [`ApprovalState::Pending`] selects the unexpired pending approvals,
/// [`ApprovalState::Expired`] the pending ones past their time too.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalFilter {
    /// Only ids after this one (the cursor).
    pub after: Option<ApprovalId>,
    /// Only ids before this one (the cursor of newest-first pages).
    pub before: Option<ApprovalId>,
    /// The newest (highest id) first.
    pub newest_first: bool,
    /// At most this many (default 100).
    pub limit: u32,
    /// Only this user's.
    pub user: Option<String>,
    /// Only this session's.
    pub session: Option<String>,
    /// Only this tool's.
    pub tool: Option<String>,
    /// Only in this state.
    pub state: Option<ApprovalState>,
    /// Only of this kind.
    pub kind: Option<ApprovalKind>,
}

impl Default for ApprovalFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl ApprovalFilter {
    /// Every approval, first page of 100.
    pub fn new() -> Self {
        Self {
            after: None,
            before: None,
            newest_first: false,
            limit: 100,
            user: None,
            session: None,
            tool: None,
            state: None,
            kind: None,
        }
    }

    /// Ids after `id`.
    #[must_use]
    pub fn after(mut self, id: ApprovalId) -> Self {
        self.after = Some(id);
        self
    }

    /// Ids before `id`.
    #[must_use]
    pub fn before(mut self, id: ApprovalId) -> Self {
        self.before = Some(id);
        self
    }

    /// The newest first.
    #[must_use]
    pub fn newest_first(mut self) -> Self {
        self.newest_first = true;
        self
    }

    /// At most `limit`.
    #[must_use]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = limit;
        self
    }

    /// Only this user's.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Only this session's.
    #[must_use]
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Only this tool's.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Only in this state.
    #[must_use]
    pub fn state(mut self, state: ApprovalState) -> Self {
        self.state = Some(state);
        self
    }

    /// Only of this kind.
    #[must_use]
    pub fn kind(mut self, kind: ApprovalKind) -> Self {
        self.kind = Some(kind);
        self
    }
}

/// The condition selecting approvals in `state` as of a time (its one
/// parameter `?`), as both stores write it, for the states that depend on
/// the time; `None`: the stored state is the state.
pub(crate) const fn approval_state_clause(state: ApprovalState) -> Option<&'static str> {
    match state {
        ApprovalState::Pending => Some("(state = 'pending' AND expires_at > ?)"),
        ApprovalState::Expired => {
            Some("(state = 'expired' OR (state = 'pending' AND expires_at <= ?))")
        }
        ApprovalState::Approved | ApprovalState::Denied | ApprovalState::Withdrawn => None,
    }
}

/// Refuses a new pending approval beyond `limits`, given the unexpired
/// pending approvals of its session and of its user.
pub(crate) fn check_pending_limits(
    limits: PendingLimits,
    in_session: u64,
    of_user: u64,
    of_requester: u64,
) -> Result<(), Error> {
    if in_session >= u64::from(limits.per_session) {
        return Err(Error::new(
            ErrorCode::QueueFull,
            format!(
                "the session already has {in_session} approvals waiting (at most {})",
                limits.per_session
            ),
        ));
    }
    if of_user >= u64::from(limits.per_user) {
        return Err(Error::new(
            ErrorCode::QueueFull,
            format!(
                "the user already has {of_user} approvals waiting (at most {})",
                limits.per_user
            ),
        ));
    }
    if of_requester >= u64::from(limits.per_requester) {
        return Err(Error::new(
            ErrorCode::QueueFull,
            format!(
                "the requester already has {of_requester} approvals waiting (at most {})",
                limits.per_requester
            ),
        ));
    }
    Ok(())
}
