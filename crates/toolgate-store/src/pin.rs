//! Tool-definition pins: what an MCP server showed, by digest, and what a
//! human made of it; documented on [`ToolPin`].

mod diff;

use std::fmt;
use std::str::FromStr;

use toolgate_json::Digest;

use crate::time::Timestamp;

pub use self::diff::{diff_definitions, DefinitionDiff, DiffOp, MemberChange};
pub use toolgate::config::PinFirst;

/// The most pending pins one upstream holds (100): past it a new
/// definition stays hidden and pending without a row (its `pin_pending`
/// record carries the reason `pin_queue_full`). The newest pending
/// definition of a tool replaces older pending ones, so a server changing
/// a description on each run leaves one pending pin, not one a run.
pub const MAX_PENDING_PINS_PER_UPSTREAM: usize = 100;

/// The longest tool definition a pin stores (64 KiB, canonical JSON); a
/// catalog with a longer one is refused (`invalid_input`), so its tools
/// stay hidden.
pub const MAX_DEFINITION_BYTES: usize = 64 * 1024;

/// A pin's id: a positive integer, unique in the store and never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PinId(u64);

impl PinId {
    /// The id with this number.
    pub const fn new(id: u64) -> Self {
        Self(id)
    }

    /// The number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for PinId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Reads an id exactly as issued (see [`crate::ParseIdError`]).
impl FromStr for PinId {
    type Err = crate::id::ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        crate::id::parse_issued(s).map(Self)
    }
}

/// What a human made of a tool definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PinState {
    /// `pending`: seen, not approved: the tool is hidden from `tools/list`
    /// and its calls are denied `tool_changed`.
    Pending,
    /// `approved`: the definition may be shown and called.
    Approved,
    /// `rejected`: a human refused it (or revoked an approval): hidden and
    /// denied for good, and not asked about again.
    Rejected,
}

impl PinState {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
        }
    }

    /// The state with this wire name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "approved" => Some(Self::Approved),
            "rejected" => Some(Self::Rejected),
            _ => None,
        }
    }
}

impl fmt::Display for PinState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool definition an upstream showed, as stored.
///
/// A definition is pinned per upstream by the digest of its canonical form
/// (the MCP proxy's `pins::definition_digest`), and the canonical text is
/// kept so a human can see what changed. A definition never seen before
/// (a new tool, a changed one, a renamed one) is stored
/// [`PinState::Pending`] and audited `pin_pending` with its findings, the
/// very first catalog of an upstream excepted when [`PinFirst::Trust`]
/// (then it is stored approved, audited `pin_approved` with the reason
/// `trust_on_first_use`). A human moves it ([`crate::Store::approve_pin`],
/// [`crate::Store::reject_pin`]):
///
/// | from | approve | reject |
/// |---|---|---|
/// | `pending` | `approved` | `rejected` |
/// | `approved` | refused | `rejected` (revoked) |
/// | `rejected` | `approved` | refused |
///
/// A refusal is a `conflict` error. Each move is audited (`pin_approved`,
/// `pin_rejected`) with the human as `actor`, in the same transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolPin {
    /// The id.
    pub id: PinId,
    /// The upstream (server) that showed it.
    pub upstream: String,
    /// The tool's name.
    pub tool: String,
    /// The digest of the canonical definition.
    pub digest: Digest,
    /// The canonical definition (JSON text).
    pub definition: String,
    /// What a human made of it.
    pub state: PinState,
    /// What was found in its text (hidden characters, instruction-like
    /// text), e.g. `hidden:/description:zero_width` or
    /// `instructions:description:cue:<important>`.
    pub findings: Vec<String>,
    /// When it was first seen.
    pub first_seen: Timestamp,
    /// When it was last seen in a catalog.
    pub last_seen: Timestamp,
    /// Who decided (`trust-on-first-use` for a trusted first catalog).
    pub decided_by: Option<String>,
    /// When.
    pub decided_at: Option<Timestamp>,
    /// Their note.
    pub note: Option<String>,
}

/// One tool definition in a catalog the proxy saw
/// ([`crate::Store::observe_catalog`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SeenTool {
    /// The tool's name.
    pub tool: String,
    /// The digest of its canonical definition.
    pub digest: Digest,
    /// The canonical definition (JSON text).
    pub definition: String,
    /// What was found in its text.
    pub findings: Vec<String>,
}

impl SeenTool {
    /// A definition of `tool` by its `digest` and canonical text, with the
    /// findings in it.
    pub fn new(
        tool: impl Into<String>,
        digest: Digest,
        definition: impl Into<String>,
        findings: Vec<String>,
    ) -> Self {
        Self {
            tool: tool.into(),
            digest,
            definition: definition.into(),
            findings,
        }
    }
}

/// A catalog (one whole `tools/list`) an upstream showed, pinned by its own
/// digest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CatalogPin {
    /// The upstream.
    pub upstream: String,
    /// The digest of the catalog.
    pub digest: Digest,
    /// How many tools it listed.
    pub tools: u64,
    /// When it was first seen.
    pub first_seen: Timestamp,
    /// When it was last seen.
    pub last_seen: Timestamp,
}

/// Which pins [`crate::Store::list_pins`] returns, by ascending id: all
/// filters must match.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PinFilter {
    /// Only ids after this one (the cursor).
    pub after: Option<PinId>,
    /// At most this many (default 100).
    pub limit: u32,
    /// Only this upstream's.
    pub upstream: Option<String>,
    /// Only this tool's.
    pub tool: Option<String>,
    /// Only in this state.
    pub state: Option<PinState>,
}

impl Default for PinFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl PinFilter {
    /// Every pin, first page of 100.
    pub fn new() -> Self {
        Self {
            after: None,
            limit: 100,
            upstream: None,
            tool: None,
            state: None,
        }
    }

    /// Ids after `id`.
    #[must_use]
    pub fn after(mut self, id: PinId) -> Self {
        self.after = Some(id);
        self
    }

    /// At most `limit`.
    #[must_use]
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = limit;
        self
    }

    /// Only this upstream's.
    #[must_use]
    pub fn upstream(mut self, upstream: impl Into<String>) -> Self {
        self.upstream = Some(upstream.into());
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
    pub fn state(mut self, state: PinState) -> Self {
        self.state = Some(state);
        self
    }
}

/// The definition of `pin`'s tool approved last on its upstream (other
/// than `pin` itself): what a human compares a new definition with
/// ([`diff_definitions`]). `None` for a tool never approved (new or
/// renamed).
pub fn approved_before(
    store: &dyn crate::Store,
    pin: &ToolPin,
) -> Result<Option<ToolPin>, crate::Error> {
    let mut best: Option<ToolPin> = None;
    let mut filter = PinFilter::new()
        .upstream(pin.upstream.as_str())
        .tool(pin.tool.as_str())
        .state(PinState::Approved)
        .limit(1000);
    loop {
        let page = store.list_pins(&filter)?;
        let last = page.last().map(|p| p.id);
        for p in page {
            if p.id == pin.id {
                continue;
            }
            let newer = best
                .as_ref()
                .is_none_or(|b| (p.decided_at, p.id) > (b.decided_at, b.id));
            if newer {
                best = Some(p);
            }
        }
        match last {
            Some(id) => filter = filter.after(id),
            None => return Ok(best),
        }
    }
}
