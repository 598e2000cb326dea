//! Approvals bound to (user, session, tool, argument digest), and standing
//! approvals; documented on [`Approval`].

use std::fmt;
use std::str::FromStr;

use toolgate_json::Digest;

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

impl FromStr for ApprovalId {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Self)
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
}

impl ApprovalState {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "approved" => Some(Self::Approved),
            "denied" => Some(Self::Denied),
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
/// ([`crate::Store::consume`]). A *standing* approval
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
}

impl Approval {
    /// Whether it would let a matching call through at `now`.
    pub fn is_usable_at(&self, now: Timestamp) -> bool {
        self.state == ApprovalState::Approved
            && now < self.expires_at
            && (self.kind == ApprovalKind::Standing || self.used_at.is_none())
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
/// must match; pages go forward by id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalFilter {
    /// Only ids after this one (the cursor).
    pub after: Option<ApprovalId>,
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
