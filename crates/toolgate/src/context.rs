//! The request context and the state view; documented on [`Context`] and
//! [`StateView`].

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use toolgate_json::{canonical::Digest, Object, ParseOptions, Value};

mod flow;

/// The kill switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum KillSwitch {
    /// Calls are decided normally.
    #[default]
    Off,
    /// Every call of a non-read tool is denied `kill_switch`; reads run.
    DenyWrites,
    /// Every call is denied `kill_switch`.
    DenyAll,
}

impl KillSwitch {
    /// The wire name: `off`, `deny_writes`, `deny_all`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::DenyWrites => "deny_writes",
            Self::DenyAll => "deny_all",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "off" => Self::Off,
            "deny_writes" => Self::DenyWrites,
            "deny_all" => Self::DenyAll,
            _ => return None,
        })
    }
}

/// What an approval must match: (user, session, tool, argument digest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalKey<'a> {
    /// The user.
    pub user: &'a str,
    /// The session.
    pub session: &'a str,
    /// The tool's exact name.
    pub tool: &'a str,
    /// The digest of the canonical arguments.
    pub digest: &'a Digest,
}

/// An approval the state holds for a key: usable at the time asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalGrant {
    /// The approval's id, recorded in the decision; whoever executes the call
    /// must mark it used (the store does so with the audit record).
    pub id: crate::ApprovalRef,
}

impl ApprovalGrant {
    /// A grant with this id.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: crate::ApprovalRef::new(id),
        }
    }
}

/// The state could not be read. The gate denies with `store_unavailable`;
/// the error itself never reaches the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError {
    message: String,
}

impl StateError {
    /// An error with a message for operators.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "state unavailable: {}", self.message)
    }
}

impl std::error::Error for StateError {}

/// Read access to the state the gate's later stages need.
///
/// Every method may fail; the gate then denies the call `store_unavailable`
/// (fail closed). Implementations must not block without bound.
pub trait StateView {
    /// The kill switch as of now.
    fn kill_switch(&self) -> Result<KillSwitch, StateError>;

    /// A usable approval for `key` at time `now` (Unix seconds): same user,
    /// session, tool and digest, unexpired (`now < expires_at`) and unused.
    /// `skip` lists approval ids already granted to earlier calls of the same
    /// response, which must not be granted again.
    fn find_approval(
        &self,
        key: &ApprovalKey<'_>,
        now: u64,
        skip: &[String],
    ) -> Result<Option<ApprovalGrant>, StateError>;

    /// How many earlier calls of this session, to this tool, with arguments
    /// of this shape ([`crate::Decision::shape`]) were rejected.
    fn rejections(&self, session: &str, tool: &str, shape: &Digest) -> Result<u32, StateError>;

    /// Whether `session` is escalated: after repeated rejections, its
    /// further calls of non-read tools need a human approval. The default:
    /// never (a context carries no escalation).
    fn escalated(&self, session: &str) -> Result<bool, StateError> {
        let _ = session;
        Ok(false)
    }

    /// How many responses of `session` were decided before this one. The
    /// gate decides at turn `max(this + 1, the context's turn)`: the caller's
    /// turn can only bring the turn cap closer. The default, `0`, trusts
    /// the context's turn (a [`Context`] has no memory of earlier
    /// responses); the store counts every decided response.
    fn earlier_responses(&self, session: &str) -> Result<u64, StateError> {
        let _ = session;
        Ok(0)
    }

    /// Records that the non-read call `call_id` of `session` is allowed now;
    /// `Ok(false)` if a call with this id was already allowed in the session
    /// (a replay: the gate denies it `replayed_call`). The default never
    /// sees a replay; a [`Context`] answers from its `allowed_calls`, the
    /// store from its table of allowed call ids (atomic across replicas).
    fn claim_call(&self, session: &str, call_id: &str) -> Result<bool, StateError> {
        let _ = (session, call_id);
        Ok(true)
    }

    /// Whether a non-read call with `call_id` was already allowed in
    /// `session`, without claiming it (a read): the gate asks before
    /// looking for or asking for an approval, so that a replayed call
    /// neither uses an approval nor asks a human again. Answers as
    /// [`StateView::claim_call`] would refuse; the default never sees a
    /// replay.
    fn call_allowed(&self, session: &str, call_id: &str) -> Result<bool, StateError> {
        let _ = (session, call_id);
        Ok(false)
    }

    /// The usage of one limit key ([`crate::limit::Limit::key`]) counted
    /// after `since_ms` (Unix milliseconds, exclusive): when each counted
    /// call ran (Unix milliseconds) and what it added. The gate asks only
    /// for calls of a tool some `[[limit]]` counts. The default cannot
    /// answer (those calls are denied `store_unavailable`); a [`Context`]
    /// answers from its `limit_events`, the store from its table.
    fn limit_events(
        &self,
        key: &str,
        since_ms: u64,
    ) -> Result<Vec<(u64, crate::limit::Amount)>, StateError> {
        let _ = (key, since_ms);
        Err(StateError::new("this state keeps no limit usage"))
    }

    /// The exact sum of what one limit key counted after `since_ms`, when
    /// the state can tell it without listing the events (the store's
    /// running total per key): the sum [`StateView::limit_events`]' events
    /// add up to, in any order. `None` when it cannot; the gate then reads
    /// the events. The gate reads the events too when the call would not
    /// fit (to tell when a retry can succeed). The default: `None`.
    fn limit_used(
        &self,
        key: &str,
        since_ms: u64,
    ) -> Result<Option<crate::limit::Amount>, StateError> {
        let _ = (key, since_ms);
        Ok(None)
    }

    /// The labels `session` holds (see [`crate::registry::Tool::labels`]):
    /// asked only when the authorizer's policies read them. The default
    /// cannot answer (those calls are denied `store_unavailable`); a
    /// [`Context`] answers from its `labels`, the store from its table.
    fn session_labels(&self, session: &str) -> Result<Vec<String>, StateError> {
        let _ = session;
        Err(StateError::new("this state keeps no session labels"))
    }

    /// The state's own clock (Unix milliseconds), if it keeps one: limits'
    /// windows are judged at this time rather than the context's `now`. The
    /// default, `None`: the context's time.
    fn now_millis(&self) -> Option<u64> {
        None
    }
}

/// What an approval carried by the context covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ApprovalScope {
    /// One call: the user, session, tool and argument digest; used once.
    #[default]
    Single,
    /// A standing approval: every call of the tool for the user (in one
    /// session if it names one), any arguments, until it expires.
    Standing,
}

/// An approval carried by the context.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Approval {
    /// Its id.
    pub id: String,
    /// One call, or standing.
    pub scope: ApprovalScope,
    /// The user it was granted for.
    pub user: String,
    /// The session: always for a single approval; for a standing one, the
    /// one session it is limited to, if any.
    pub session: Option<String>,
    /// The tool's exact name.
    pub tool: String,
    /// The digest of the approved canonical arguments (`sha256:` and 64
    /// lower-case hex digits): always for a single approval, never for a
    /// standing one.
    pub digest: Option<String>,
    /// Expiry, Unix seconds (exclusive).
    pub expires_at: u64,
    /// Whether it was already used.
    pub used: bool,
}

/// An earlier rejected call of the session: its tool and argument shape.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejection {
    /// The tool's exact name.
    pub tool: String,
    /// The argument shape digest: `sha256:` and 64 lower-case hex digits.
    pub shape: String,
}

/// Who is asking, and what the gate knows about the session: the request
/// [`Context`], and the [`StateView`] trait through which the gate reads
/// state (kill switch, approvals, rejection history).
///
/// Until the store lands (issue 5), state comes with the request: a
/// [`Context`] read from JSON implements [`StateView`] over what it carries.
/// The store will implement [`StateView`] over its tables; the gate does not
/// change. A [`StateView`] that cannot answer returns [`StateError`], and the
/// gate denies with `store_unavailable`.
///
/// # Wire format: the context document
///
/// One JSON object, read with the strict parser; unknown members are errors,
/// as are values of the wrong type.
///
/// ```json
/// {
///   "user": "alice",
///   "session": "s-42",
///   "roles": ["customer"],
///   "turn": 3,
///   "max_turns": 8,
///   "now": 1767225600,
///   "kill_switch": "off",
///   "approvals": [
///     {"id": "ap-1", "user": "alice", "session": "s-42", "tool": "refund",
///      "digest": "sha256:…64 hex digits…", "expires_at": 1767229200, "used": false},
///     {"id": "ap-2", "kind": "standing", "user": "alice", "tool": "create_ticket",
///      "expires_at": 1767232800}
///   ],
///   "allowed_calls": ["call_1"],
///   "rejections": [{"tool": "refund", "shape": "sha256:…"}],
///   "entities": []
/// }
/// ```
///
/// | member | type | required | meaning |
/// |---|---|---|---|
/// | `user` | string | yes | the end user the model acts for |
/// | `session` | string | yes | the conversation |
/// | `roles` | array of strings | no (`[]`) | the roles the caller claims for the user: the Cedar authorizer takes them only for a user its entities do not define, and only if `[authorization] context_entities` names `User` |
/// | `turn` | integer ≥ 1 | yes | this response's turn in the session |
/// | `max_turns` | integer ≥ 1 | no | a lower turn cap for this session; it can only lower the configured cap |
/// | `now` | integer (Unix seconds) | no (the clock) | the time approvals are checked against |
/// | `kill_switch` | `"off"`, `"deny_writes"`, `"deny_all"` | no (`"off"`) | the kill switch |
/// | `approvals` | array of approvals | no (`[]`) | approvals granted by humans |
/// | `allowed_calls` | array of strings | no (`[]`) | the call ids already allowed in this session: a non-read call with one of them is denied `replayed_call` |
/// | `rejections` | array of `{tool, shape}` | no (`[]`) | the session's earlier rejected calls: tool and argument shape digest ([`crate::Decision::shape`]) |
/// | `limit_events` | array of `{limit, at, amount}` | no (`[]`) | without a store, the calls that count toward each `[[limit]]` for this user, session or token (as the limit's `per` says): its name, when the call ran (Unix seconds), what it added (a number or decimal string; `1` for a rate limit). The caller keeps them, from each allowed decision's `charges`; with a store they are ignored |
/// | `labels` | array of strings | no (`[]`) | without a store, the labels the session holds (from each allowed decision's `labels`); with a store they are ignored |
/// | `entities` | any JSON | no | the caller's entities for authorization (Cedar entity JSON): the Cedar authorizer takes only those of the types `[authorization] context_entities` names, never one its entities define |
///
/// An approval is `{id, kind, user, session, tool, digest, expires_at,
/// used}`. `kind` is `"single"` (the default) or `"standing"`.
///
/// - A **single** approval needs `session` and `digest`; `used` is optional
///   (`false`). It covers exactly one call: the same user, session and
///   tool, and arguments whose canonical form has that digest, before
///   `expires_at` (exclusive), if it has not been used.
/// - A **standing** approval (the store's `toolgate approvals grant`, for a
///   caller without a store) covers every call of the tool for the user,
///   whatever the arguments, before `expires_at` (exclusive); with
///   `session`, only in that session. It has no `digest` and no `used`
///   (either is an error at its pointer). A single approval for the call
///   is preferred when both match.
///
/// `turn` is trusted as given when the gate has no store (`--no-store`, or
/// [`crate::Gate::decide`] with the context as state): a caller that sends
/// `turn: 1` every time is not stopped by the turn cap. With a store the
/// store counts the session's responses and the context's `turn` can only
/// bring the cap closer. Likewise `allowed_calls` is the only memory of
/// earlier allowed calls without a store.
///
/// The request context: who asks, in which session, at which turn, and (for
/// now) the state that comes with the request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Context {
    /// The end user.
    pub user: String,
    /// The session.
    pub session: String,
    /// The roles the caller claims for the user (see the table above for
    /// what the authorizer makes of them).
    pub roles: Vec<String>,
    /// This response's turn in the session, from 1.
    pub turn: u32,
    /// A lower turn cap for this session.
    pub max_turns: Option<u32>,
    /// The time approvals are checked against; `None` reads the clock.
    pub now: Option<u64>,
    /// The kill switch.
    pub kill_switch: KillSwitch,
    /// Approvals granted by humans.
    pub approvals: Vec<Approval>,
    /// Earlier rejected calls of the session.
    pub rejections: Vec<Rejection>,
    /// The call ids already allowed in this session.
    pub allowed_calls: Vec<String>,
    /// The caller's entities (Cedar entity JSON), for the authorizer.
    pub entities: Option<Value<'static>>,
    /// The digest of each tool's definition as the model was shown it,
    /// by tool name (set by the MCP proxy from its pins; not part of the
    /// JSON document). A store gate binds the approval of a call of such a
    /// tool to this digest too, so an approval given under one definition
    /// never covers a call made after the server changed the tool.
    pub tool_definitions: Vec<(String, Digest)>,
    /// Who asked for the decision, as the front end authenticated it (the
    /// service's token name; not part of the JSON document): a store gate
    /// caps the pending approvals one requester holds, whatever users it
    /// names (`[approvals] max_pending_per_token`).
    pub requester: Option<String>,
    /// The upstream the calls go to (set by the MCP proxy from its route;
    /// not part of the JSON document): a store gate binds the approval of
    /// a call to it too, so an approval given for a call routed to one
    /// upstream never covers the same call routed to another, and names
    /// it for the humans deciding.
    pub upstream: Option<String>,
    /// The usage of the limits this caller keeps without a store: one
    /// entry per counted call (see the table above).
    pub limit_events: Vec<LimitEvent>,
    /// The labels the session holds, as this caller keeps them without a
    /// store.
    pub labels: Vec<String>,
}

/// A counted call of a limit, carried by the context: the limit's name,
/// when the call ran (Unix seconds) and what it added (1 for a rate limit).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitEvent {
    /// The `[[limit]]` name.
    pub limit: String,
    /// When the call ran, Unix seconds.
    pub at: u64,
    /// What it added.
    pub amount: crate::limit::Amount,
}

impl LimitEvent {
    /// An event of `limit` at `at` (Unix seconds) adding `amount`.
    pub fn new(limit: impl Into<String>, at: u64, amount: crate::limit::Amount) -> Self {
        Self {
            limit: limit.into(),
            at,
            amount,
        }
    }
}

impl Context {
    /// A context for `user` in `session` at `turn`, with nothing else.
    pub fn new(user: impl Into<String>, session: impl Into<String>, turn: u32) -> Self {
        Self {
            user: user.into(),
            session: session.into(),
            roles: Vec::new(),
            turn,
            max_turns: None,
            now: None,
            kill_switch: KillSwitch::Off,
            approvals: Vec::new(),
            rejections: Vec::new(),
            allowed_calls: Vec::new(),
            entities: None,
            tool_definitions: Vec::new(),
            requester: None,
            upstream: None,
            limit_events: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// Binds the approvals of calls of `tool` to the digest of its
    /// definition ([`Context::tool_definitions`]); replaces an earlier
    /// digest of the same tool.
    #[must_use]
    pub fn with_tool_definition(mut self, tool: impl Into<String>, digest: Digest) -> Self {
        let tool = tool.into();
        self.tool_definitions.retain(|(t, _)| *t != tool);
        self.tool_definitions.push((tool, digest));
        self
    }

    /// The calls go to `upstream` ([`Context::upstream`]).
    #[must_use]
    pub fn with_upstream(mut self, upstream: impl Into<String>) -> Self {
        self.upstream = Some(upstream.into());
        self
    }

    /// The digest of `tool`'s definition the model was shown, if the
    /// caller gave one.
    pub fn tool_definition(&self, tool: &str) -> Option<&Digest> {
        self.tool_definitions
            .iter()
            .find(|(t, _)| t == tool)
            .map(|(_, d)| d)
    }

    /// Reads a context document (see [`Context`]).
    pub fn from_json(bytes: &[u8]) -> Result<Self, ContextError> {
        let value = ParseOptions::new()
            .parse(bytes)
            .map_err(|e| ContextError::new(ContextErrorKind::Json(e.code()), e.pointer()))?;
        Self::from_value(&value)
    }

    /// Reads a context document the caller has already parsed (the HTTP
    /// service's request body, read once by its strict reader): the same
    /// rules as [`Context::from_json`], with errors positioned by JSON
    /// Pointers relative to `value`.
    pub fn from_value(value: &Value<'_>) -> Result<Self, ContextError> {
        let obj = object(value, "")?;
        check_members(
            obj,
            "",
            &[
                "user",
                "session",
                "roles",
                "turn",
                "max_turns",
                "now",
                "kill_switch",
                "approvals",
                "rejections",
                "allowed_calls",
                "entities",
                "limit_events",
                "labels",
            ],
        )?;
        let mut ctx = Self::new(
            string(obj, "", "user")?,
            string(obj, "", "session")?,
            required_u32(obj, "", "turn")?,
        );
        if let Some(roles) = obj.get("roles") {
            let items = array(roles, "/roles")?;
            for (i, r) in items.iter().enumerate() {
                let p = format!("/roles/{i}");
                ctx.roles.push(
                    r.as_str()
                        .ok_or_else(|| ContextError::wrong_type(&p, "string"))?
                        .to_owned(),
                );
            }
        }
        ctx.max_turns = optional_u32(obj, "", "max_turns")?;
        ctx.now = optional_u64(obj, "", "now")?;
        if let Some(k) = obj.get("kill_switch") {
            let s = k
                .as_str()
                .ok_or_else(|| ContextError::wrong_type("/kill_switch", "string"))?;
            ctx.kill_switch = KillSwitch::parse(s)
                .ok_or_else(|| ContextError::new(ContextErrorKind::InvalidValue, "/kill_switch"))?;
        }
        if let Some(list) = obj.get("approvals") {
            for (i, a) in array(list, "/approvals")?.iter().enumerate() {
                ctx.approvals.push(approval(a, &format!("/approvals/{i}"))?);
            }
        }
        if let Some(list) = obj.get("rejections") {
            for (i, r) in array(list, "/rejections")?.iter().enumerate() {
                let p = format!("/rejections/{i}");
                let o = object(r, &p)?;
                check_members(o, &p, &["tool", "shape"])?;
                ctx.rejections.push(Rejection {
                    tool: string(o, &p, "tool")?,
                    shape: digest(o, &p, "shape")?,
                });
            }
        }
        if let Some(list) = obj.get("allowed_calls") {
            for (i, c) in array(list, "/allowed_calls")?.iter().enumerate() {
                let p = format!("/allowed_calls/{i}");
                ctx.allowed_calls.push(
                    c.as_str()
                        .ok_or_else(|| ContextError::wrong_type(&p, "a string"))?
                        .to_owned(),
                );
            }
        }
        ctx.entities = obj.get("entities").map(|e| e.clone().into_owned());
        flow::read(obj, &mut ctx)?;
        Ok(ctx)
    }

    /// The time approvals are checked against: [`Context::now`], or the clock.
    pub fn now_or_clock(&self) -> u64 {
        self.now.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        })
    }
}

impl StateView for Context {
    fn kill_switch(&self) -> Result<KillSwitch, StateError> {
        Ok(self.kill_switch)
    }

    fn find_approval(
        &self,
        key: &ApprovalKey<'_>,
        now: u64,
        skip: &[String],
    ) -> Result<Option<ApprovalGrant>, StateError> {
        let digest = key.digest.to_string();
        let covers = |a: &&Approval| {
            now < a.expires_at
                && a.user == key.user
                && a.tool == key.tool
                && a.session.as_deref().is_none_or(|s| s == key.session)
        };
        let single = self.approvals.iter().filter(covers).find(|a| {
            a.scope == ApprovalScope::Single
                && !a.used
                && a.session.is_some()
                && a.digest.as_deref() == Some(digest.as_str())
                && !skip.contains(&a.id)
        });
        let standing = || {
            self.approvals
                .iter()
                .filter(covers)
                .find(|a| a.scope == ApprovalScope::Standing)
        };
        Ok(single
            .or_else(standing)
            .map(|a| ApprovalGrant::new(a.id.clone())))
    }

    fn claim_call(&self, _session: &str, call_id: &str) -> Result<bool, StateError> {
        Ok(!self.allowed_calls.iter().any(|c| c == call_id))
    }

    fn call_allowed(&self, _session: &str, call_id: &str) -> Result<bool, StateError> {
        Ok(self.allowed_calls.iter().any(|c| c == call_id))
    }

    /// The context's `limit_events` of the key's limit (the caller gives
    /// those of this user, session or token, as the limit counts them).
    fn limit_events(
        &self,
        key: &str,
        since_ms: u64,
    ) -> Result<Vec<(u64, crate::limit::Amount)>, StateError> {
        Ok(flow::events(self, key, since_ms))
    }

    fn session_labels(&self, _session: &str) -> Result<Vec<String>, StateError> {
        Ok(self.labels.clone())
    }

    fn rejections(&self, _session: &str, tool: &str, shape: &Digest) -> Result<u32, StateError> {
        let shape = shape.to_string();
        let n = self
            .rejections
            .iter()
            .filter(|r| r.tool == tool && r.shape == shape)
            .count();
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }
}

/// A context document that could not be read: what and where (a JSON
/// Pointer into the document). Never contains a value from the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextError {
    kind: ContextErrorKind,
    pointer: String,
}

/// What is wrong with a context document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextErrorKind {
    /// Not strict JSON; the parser's code.
    Json(toolgate_json::ErrorCode),
    /// A member the format does not define.
    UnknownMember,
    /// A required member is absent.
    MissingMember,
    /// A member has the wrong JSON type; the type expected.
    WrongType(&'static str),
    /// A member has a value out of its range or vocabulary.
    InvalidValue,
    /// A member the format defines, but not here (a `digest` or `used` in
    /// a standing approval).
    NotAllowed,
}

impl ContextError {
    fn new(kind: ContextErrorKind, pointer: impl Into<String>) -> Self {
        Self {
            kind,
            pointer: pointer.into(),
        }
    }

    fn wrong_type(pointer: &str, expected: &'static str) -> Self {
        Self::new(ContextErrorKind::WrongType(expected), pointer)
    }

    /// What is wrong.
    pub fn kind(&self) -> ContextErrorKind {
        self.kind
    }

    /// Where, as a JSON Pointer into the document.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
}

impl fmt::Display for ContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ContextErrorKind::Json(code) => write!(
                f,
                "context is not strict json: {code}: {} at `{}`",
                code.description(),
                self.pointer
            ),
            ContextErrorKind::UnknownMember => write!(f, "unknown member `{}`", self.pointer),
            ContextErrorKind::MissingMember => write!(f, "missing member `{}`", self.pointer),
            ContextErrorKind::WrongType(t) => {
                write!(f, "member `{}` must be {t}", self.pointer)
            }
            ContextErrorKind::InvalidValue => write!(f, "invalid value at `{}`", self.pointer),
            ContextErrorKind::NotAllowed => {
                write!(f, "member `{}` is not allowed here", self.pointer)
            }
        }
    }
}

impl std::error::Error for ContextError {}

fn member_pointer(base: &str, name: &str) -> String {
    let mut p = base.to_owned();
    toolgate_json::pointer::push_token(&mut p, name);
    p
}

fn object<'v, 'a>(v: &'v Value<'a>, pointer: &str) -> Result<&'v Object<'a>, ContextError> {
    v.as_object()
        .ok_or_else(|| ContextError::wrong_type(pointer, "an object"))
}

fn array<'v, 'a>(v: &'v Value<'a>, pointer: &str) -> Result<&'v [Value<'a>], ContextError> {
    v.as_array()
        .ok_or_else(|| ContextError::wrong_type(pointer, "an array"))
}

fn check_members(obj: &Object<'_>, base: &str, known: &[&str]) -> Result<(), ContextError> {
    match obj.keys().find(|k| !known.contains(k)) {
        Some(k) => Err(ContextError::new(
            ContextErrorKind::UnknownMember,
            member_pointer(base, k),
        )),
        None => Ok(()),
    }
}

fn required<'v, 'a>(
    obj: &'v Object<'a>,
    base: &str,
    name: &str,
) -> Result<&'v Value<'a>, ContextError> {
    obj.get(name).ok_or_else(|| {
        ContextError::new(ContextErrorKind::MissingMember, member_pointer(base, name))
    })
}

fn string(obj: &Object<'_>, base: &str, name: &str) -> Result<String, ContextError> {
    required(obj, base, name)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ContextError::wrong_type(&member_pointer(base, name), "a string"))
}

fn u64_value(v: &Value<'_>, pointer: &str) -> Result<u64, ContextError> {
    let n = v
        .as_number()
        .ok_or_else(|| ContextError::wrong_type(pointer, "an integer"))?;
    if !n.is_integer_lexeme() {
        return Err(ContextError::wrong_type(pointer, "an integer"));
    }
    n.as_u64()
        .ok_or_else(|| ContextError::new(ContextErrorKind::InvalidValue, pointer))
}

fn u32_value(v: &Value<'_>, pointer: &str) -> Result<u32, ContextError> {
    let n = u64_value(v, pointer)?;
    match u32::try_from(n) {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(ContextError::new(ContextErrorKind::InvalidValue, pointer)),
    }
}

fn required_u32(obj: &Object<'_>, base: &str, name: &str) -> Result<u32, ContextError> {
    u32_value(required(obj, base, name)?, &member_pointer(base, name))
}

fn optional_u32(obj: &Object<'_>, base: &str, name: &str) -> Result<Option<u32>, ContextError> {
    obj.get(name)
        .map(|v| u32_value(v, &member_pointer(base, name)))
        .transpose()
}

fn optional_u64(obj: &Object<'_>, base: &str, name: &str) -> Result<Option<u64>, ContextError> {
    obj.get(name)
        .map(|v| u64_value(v, &member_pointer(base, name)))
        .transpose()
}

fn digest(obj: &Object<'_>, base: &str, name: &str) -> Result<String, ContextError> {
    let s = string(obj, base, name)?;
    if is_digest(&s) {
        Ok(s)
    } else {
        Err(ContextError::new(
            ContextErrorKind::InvalidValue,
            member_pointer(base, name),
        ))
    }
}

/// Whether `s` is `sha256:` and 64 lower-case hex digits.
fn is_digest(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

fn approval(v: &Value<'_>, p: &str) -> Result<Approval, ContextError> {
    let o = object(v, p)?;
    check_members(
        o,
        p,
        &[
            "id",
            "kind",
            "user",
            "session",
            "tool",
            "digest",
            "expires_at",
            "used",
        ],
    )?;
    let scope = match o.get("kind") {
        None => ApprovalScope::Single,
        Some(k) => match k.as_str() {
            Some("single") => ApprovalScope::Single,
            Some("standing") => ApprovalScope::Standing,
            Some(_) => {
                return Err(ContextError::new(
                    ContextErrorKind::InvalidValue,
                    member_pointer(p, "kind"),
                ))
            }
            None => {
                return Err(ContextError::wrong_type(
                    &member_pointer(p, "kind"),
                    "a string",
                ))
            }
        },
    };
    let used = match o.get("used") {
        None => false,
        Some(u) => u
            .as_bool()
            .ok_or_else(|| ContextError::wrong_type(&member_pointer(p, "used"), "a boolean"))?,
    };
    let (session, digest) = match scope {
        ApprovalScope::Single => (
            Some(string(o, p, "session")?),
            Some(digest(o, p, "digest")?),
        ),
        ApprovalScope::Standing => {
            // A standing approval covers any arguments and is never used
            // up: a digest or a `used` flag would say otherwise.
            for name in ["digest", "used"] {
                if o.get(name).is_some() {
                    return Err(ContextError::new(
                        ContextErrorKind::NotAllowed,
                        member_pointer(p, name),
                    ));
                }
            }
            let session = match o.get("session") {
                None => None,
                Some(_) => Some(string(o, p, "session")?),
            };
            (session, None)
        }
    };
    Ok(Approval {
        id: string(o, p, "id")?,
        scope,
        user: string(o, p, "user")?,
        session,
        tool: string(o, p, "tool")?,
        digest,
        expires_at: u64_value(
            required(o, p, "expires_at")?,
            &member_pointer(p, "expires_at"),
        )?,
        used,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_full_document() {
        let d = toolgate_json::canonical::digest(&Value::Null);
        let doc = format!(
            r#"{{"user":"alice","session":"s","roles":["customer"],"turn":2,"max_turns":4,
            "now":10,"kill_switch":"deny_writes",
            "approvals":[{{"id":"a","user":"alice","session":"s","tool":"refund","digest":"{d}","expires_at":20}}],
            "rejections":[{{"tool":"refund","shape":"{d}"}}],"entities":{{"x":1}}}}"#
        );
        let ctx = Context::from_json(doc.as_bytes()).unwrap();
        assert_eq!(ctx.user, "alice");
        assert_eq!(ctx.turn, 2);
        assert_eq!(ctx.max_turns, Some(4));
        assert_eq!(ctx.kill_switch, KillSwitch::DenyWrites);
        assert_eq!(ctx.approvals.len(), 1);
        assert_eq!(ctx.approvals[0].digest, Some(d.to_string()));
        assert!(!ctx.approvals[0].used);
        assert_eq!(ctx.rejections("s", "refund", &d), Ok(1));
        let key = ApprovalKey {
            user: "alice",
            session: "s",
            tool: "refund",
            digest: &d,
        };
        assert_eq!(
            ctx.find_approval(&key, 19, &[])
                .unwrap()
                .unwrap()
                .id
                .as_str(),
            "a"
        );
        assert_eq!(ctx.find_approval(&key, 20, &[]).unwrap(), None);
        assert_eq!(ctx.find_approval(&key, 1, &["a".into()]).unwrap(), None);
    }

    #[test]
    fn strictness() {
        let cases: &[(&str, &str)] = &[
            (r#"{"user":"a","session":"s","turn":1,"extra":1}"#, "/extra"),
            (r#"{"user":"a","session":"s"}"#, "/turn"),
            (r#"{"user":"a","session":"s","turn":0}"#, "/turn"),
            (r#"{"user":"a","session":"s","turn":1.0}"#, "/turn"),
            (r#"{"user":"a","session":"s","turn":"1"}"#, "/turn"),
            (
                r#"{"user":"a","session":"s","turn":1,"kill_switch":"on"}"#,
                "/kill_switch",
            ),
            (r#"{"user":"a","session":"s","turn":1,"user":"b"}"#, ""),
            (
                r#"{"user":"a","session":"s","turn":1,"approvals":[{"id":"x","user":"a","session":"s","tool":"t","digest":"sha256:00","expires_at":1}]}"#,
                "/approvals/0/digest",
            ),
            (
                r#"{"user":"a","session":"s","turn":1,"roles":[1]}"#,
                "/roles/0",
            ),
            ("[]", ""),
        ];
        for (doc, pointer) in cases {
            let e = Context::from_json(doc.as_bytes()).unwrap_err();
            assert_eq!(e.pointer(), *pointer, "{doc}");
        }
    }

    #[test]
    fn errors_do_not_echo_values() {
        let e =
            Context::from_json(br#"{"user":"a","session":"s","turn":1,"kill_switch":"SECRET"}"#)
                .unwrap_err();
        assert!(!e.to_string().contains("SECRET"));
    }
}
