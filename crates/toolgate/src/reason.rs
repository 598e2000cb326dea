//! Reason codes and reasons; the list is documented on [`Code`].

use std::fmt;
use std::hash::{Hash, Hasher};

use toolgate_json::ErrorCode as JsonCode;
use toolgate_schema::ErrorCode as SchemaCode;

use crate::adapter::{ErrorCode as AdapterCode, FindingCode};

/// Reason codes: one stable list shared by every surface (library, CLI,
/// HTTP, audit log, feedback to the model).
///
/// A [`Reason`] is a [`Code`] plus a JSON Pointer. The wire string of a code
/// ([`Code::as_str`]) is the contract: agents, dashboards and tests match on
/// it, so an existing string never changes its spelling or meaning. New codes
/// may be added ([`Code`] is `#[non_exhaustive]`).
///
/// # Pointers
///
/// - For a call's reasons, the pointer is into the call's **arguments**
///   (`""` is the arguments as a whole, or the call as a whole for codes such
///   as `unknown_tool` or `kill_switch`). For a parse error it is the place
///   where the strict parser stopped.
/// - For a response-level reason ([`crate::Decisions::findings`],
///   [`crate::Decisions::rejected`]) it is into the provider's **body** (for a
///   stream, into the array of its events' payloads).
///
/// # The list
///
/// Codes the gate's own stages produce:
///
/// | code | stage | verdict | meaning |
/// |---|---|---|---|
/// | `truncated` | finish | deny | the response was cut off (`length`, `max_tokens`, `MAX_TOKENS`, `incomplete`, a stream without its terminal event); also the parser's code for arguments text that ends early |
/// | `content_filtered` | finish | deny | the provider withheld content (`content_filter`, `SAFETY`, …) |
/// | `refused` | finish | deny | the model refused |
/// | `malformed_call` | finish | deny | the provider says the call is broken (`MALFORMED_FUNCTION_CALL`, …) |
/// | `incomplete_turn` | finish | deny | the turn is not over (`pause_turn`, `in_progress`) |
/// | `provider_error` | finish | deny | the provider reported an error (`failed`, a stream `error` event); also the adapter's code for a body that is a provider error object |
/// | `finish_unknown` | finish | deny | the finish signal is absent or unknown |
/// | `unknown_tool` | registry | deny | no registered tool has this exact name |
/// | `not_object` | parse | deny | the arguments are not a JSON object |
/// | `url_policy` | argument policies | deny | a URL argument breaks the tool's URL policy; `detail` carries the guard's code |
/// | `not_authorized` | authorization | deny | the authorizer did not permit the call (default deny, or a forbid) |
/// | `not_owner` | authorization | deny | the resource is not the caller's, or is unknown (no existence oracle) |
/// | `authorization_error` | authorization | deny | the authorizer reported an error while evaluating (fail closed) |
/// | `entity_source_unavailable` | authorization | deny | the call's resource comes from an entity source (HTTP, PostgreSQL) that timed out, failed, or answered what is not that entity; the decision's policy id names the kind (`toolgate:entity_source:timeout`, …) |
/// | `loop_limit` | limits | deny | the session is past its turn limit; every call, reads included |
/// | `too_many_calls` | limits | deny | the response proposes more calls than allowed; every call of it; also the adapter's code when its own bound is hit |
/// | `repeated_rejection` | limits | deny | this session already had calls of the same tool and argument shape rejected too often |
/// | `rate_limited` | limits | deny | a `[[limit]]` with `calls` already counts as many calls of this tool in its window as it allows; the feedback says when a retry can succeed (for a `user` or `session` limit; the window's length otherwise) |
/// | `budget_exceeded` | limits | deny or needs approval | the number at a `[[limit]]`'s `sum` pointer would push the window's exact sum over its `max` (held for a human with `over = "approval"`); also a budgeted call whose amount is missing, not a number, negative or beyond the digits an amount keeps (deny, pointer at the amount) |
/// | `kill_switch` | kill switch | deny | the kill switch is on (`deny_all`, or `deny_writes` for a non-read tool) |
/// | `approval_required` | risk and approval | needs approval | the tool needs a human approval bound to (user, session, tool, argument digest), and none usable is at hand |
/// | `approval_queue_full` | risk and approval | deny | the call needs a human approval, but its session or its user already has as many waiting as `[approvals] max_pending_per_session` / `max_pending_per_user` allow |
/// | `replayed_call` | replay | deny | a non-read call whose call id was already allowed in this session (a retried or replayed response must not run it twice) |
/// | `store_unavailable` | any stateful stage | deny | the state (kill switch, approvals, counters) could not be read: fail closed |
/// | `internal_error` | any | deny | the gate met a condition it cannot decide on (a panic caught at the boundary): fail closed |
/// | `identifier_too_long` | identifiers | deny | the call id, the tool name, or the context's user or session is longer than [`crate::identifier::MAX_IDENTIFIER_BYTES`]; checked before any state is read or written, and recorded by digest ([`crate::identifier::bounded`]) |
/// | `tool_changed` | MCP proxy | deny | the MCP server's definition of the tool (name, title, description, schemas, annotations) changed since it was pinned: the tool is hidden and its calls denied |
///
/// Strict parse codes of the arguments (stage parse, verdict deny, pointer at
/// the place in the arguments): `invalid_utf8`, `byte_order_mark`,
/// `lone_surrogate`, `noncharacter`, `control_character`, `invalid_escape`,
/// `duplicate_key`, `non_finite_number`, `number_out_of_range`,
/// `number_too_precise` (unless the tool sets `round_numbers = true`), `too_deep`,
/// `too_large`, `string_too_long`, `too_many_members`, `too_many_items`,
/// `too_many_values`, `truncated`, `trailing_data`, `invalid_syntax` (see
/// [`toolgate_json::ErrorCode`]).
///
/// Schema codes (stage schema, verdict deny, pointer at the offending value,
/// every violation listed): `type_mismatch`, `missing_required`,
/// `unknown_property`, `unknown_item`, `out_of_range`, `length`, `size`,
/// `pattern`, `enum`, `const`, `format`, `not_multiple`, `unique_items`,
/// `contains`, `property_name`, `schema_combinator`, `false_schema`,
/// `recursion_limit` (see [`toolgate_schema::ErrorCode`]).
///
/// Codes of a refused body (response level, [`crate::Decisions::rejected`]):
/// the adapter's `body_invalid_json` (its `detail` is the parser's code, such
/// as `duplicate_key`), `unknown_format`, `ambiguous_format`,
/// `not_a_response`, `missing_field`, `wrong_type`, `invalid_value`,
/// `invalid_stream`, `stream_protocol`, `stream_mismatch`, `too_many_calls`,
/// `too_many_events`, `too_large`, `provider_error`, `unsupported` (see
/// [`crate::AdapterErrorCode`]).
///
/// Response-level findings (see [`crate::FindingCode`] and
/// [`crate::Decisions::findings`]); the "denies" column says whether the
/// finding denies the response and every call in it:
///
/// | code | denies | why |
/// |---|---|---|
/// | `dsml_markup` | no | a call leaked into text never runs: reported only |
/// | `tool_call_markup` | no | as above |
/// | `special_token` | no | as above |
/// | `json_call_in_text` | no | as above |
/// | `calls_expected` | yes | the turn ended to call tools, but no structured call came: something was lost |
/// | `duplicate_call_id` | yes | results could not be told apart |
/// | `server_side_call` | yes | the provider ran a tool the gate never saw; what it returned may steer the other calls |
/// | `unsupported_call_item` | yes | a call-like item the gate cannot read is part of the turn |
/// | `unrecognized_item` | no | an unknown item type yields no call and runs nothing |
///
/// A few strings are produced by more than one stage because they mean the
/// same thing: `truncated`, `too_large`, `too_many_calls`, `provider_error`.
/// Two [`Code`]s are equal exactly when their strings are.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Code {
    /// `truncated`: the response was cut off.
    Truncated,
    /// `content_filtered`: the provider withheld content.
    ContentFiltered,
    /// `refused`: the model refused.
    Refused,
    /// `malformed_call`: the provider reports a broken call.
    MalformedCall,
    /// `incomplete_turn`: the turn is not over.
    IncompleteTurn,
    /// `provider_error`: the provider reported an error.
    ProviderError,
    /// `finish_unknown`: no known finish signal.
    FinishUnknown,
    /// `unknown_tool`: no registered tool has this exact name.
    UnknownTool,
    /// `not_object`: the arguments are not a JSON object.
    NotObject,
    /// `url_policy`: a URL argument breaks the tool's URL policy.
    UrlPolicy,
    /// `not_authorized`: the authorizer did not permit the call.
    NotAuthorized,
    /// `not_owner`: the resource is not the caller's (or is unknown).
    NotOwner,
    /// `authorization_error`: the authorizer failed to evaluate.
    AuthorizationError,
    /// `loop_limit`: the session is past its turn limit.
    LoopLimit,
    /// `too_many_calls`: more calls in one response than allowed.
    TooManyCalls,
    /// `repeated_rejection`: near-identical calls were rejected too often.
    RepeatedRejection,
    /// `rate_limited`: a rate limit counts as many calls in its window as
    /// it allows.
    RateLimited,
    /// `budget_exceeded`: the call's amount would push a budget's sum over
    /// its cap.
    BudgetExceeded,
    /// `kill_switch`: the kill switch is on.
    KillSwitch,
    /// `approval_required`: a human must approve this exact call.
    ApprovalRequired,
    /// `approval_queue_full`: the call needs approval, but too many of its
    /// session's or user's approvals are already waiting.
    ApprovalQueueFull,
    /// `replayed_call`: this non-read call's id was already allowed in the
    /// session.
    ReplayedCall,
    /// `store_unavailable`: the state could not be read.
    StoreUnavailable,
    /// `internal_error`: the gate could not decide; fail closed.
    InternalError,
    /// `tool_changed`: the tool's definition changed since it was pinned
    /// (an MCP server's `tools/list`); its calls are denied until a human
    /// approves the new definition.
    ToolChanged,
    /// `identifier_too_long`: the call id, the tool name, or the context's
    /// user or session is longer than
    /// [`crate::identifier::MAX_IDENTIFIER_BYTES`].
    IdentifierTooLong,
    /// `entity_source_unavailable`: an entity the authorizer fetches from
    /// a configured source (HTTP, PostgreSQL) could not be had: the source
    /// timed out, failed, or answered something that is not the entity
    /// asked for.
    EntitySourceUnavailable,
    /// A strict-parse code of the arguments.
    Parse(JsonCode),
    /// A schema violation code.
    Schema(SchemaCode),
    /// A code of a body the adapter refused.
    Body(AdapterCode),
    /// A response-level finding.
    Finding(FindingCode),
}

impl Code {
    /// The stable wire string, such as `unknown_tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Truncated => "truncated",
            Self::ContentFiltered => "content_filtered",
            Self::Refused => "refused",
            Self::MalformedCall => "malformed_call",
            Self::IncompleteTurn => "incomplete_turn",
            Self::ProviderError => "provider_error",
            Self::FinishUnknown => "finish_unknown",
            Self::UnknownTool => "unknown_tool",
            Self::NotObject => "not_object",
            Self::UrlPolicy => "url_policy",
            Self::NotAuthorized => "not_authorized",
            Self::NotOwner => "not_owner",
            Self::AuthorizationError => "authorization_error",
            Self::LoopLimit => "loop_limit",
            Self::TooManyCalls => "too_many_calls",
            Self::RepeatedRejection => "repeated_rejection",
            Self::RateLimited => "rate_limited",
            Self::BudgetExceeded => "budget_exceeded",
            Self::KillSwitch => "kill_switch",
            Self::ApprovalRequired => "approval_required",
            Self::ApprovalQueueFull => "approval_queue_full",
            Self::ReplayedCall => "replayed_call",
            Self::StoreUnavailable => "store_unavailable",
            Self::InternalError => "internal_error",
            Self::ToolChanged => "tool_changed",
            Self::IdentifierTooLong => "identifier_too_long",
            Self::EntitySourceUnavailable => "entity_source_unavailable",
            Self::Parse(c) => c.as_str(),
            Self::Schema(c) => c.as_str(),
            Self::Body(c) => c.as_str(),
            Self::Finding(c) => c.as_str(),
        }
    }

    /// The gate's own codes (not those of the parser, the validator, the
    /// adapters or the findings), in a stable order.
    pub const GATE: [Code; 27] = [
        Self::Truncated,
        Self::ContentFiltered,
        Self::Refused,
        Self::MalformedCall,
        Self::IncompleteTurn,
        Self::ProviderError,
        Self::FinishUnknown,
        Self::UnknownTool,
        Self::NotObject,
        Self::UrlPolicy,
        Self::NotAuthorized,
        Self::NotOwner,
        Self::AuthorizationError,
        Self::LoopLimit,
        Self::TooManyCalls,
        Self::RepeatedRejection,
        Self::RateLimited,
        Self::BudgetExceeded,
        Self::KillSwitch,
        Self::ApprovalRequired,
        Self::ApprovalQueueFull,
        Self::ReplayedCall,
        Self::StoreUnavailable,
        Self::InternalError,
        Self::ToolChanged,
        Self::IdentifierTooLong,
        Self::EntitySourceUnavailable,
    ];

    /// The schema codes this version knows, in a stable order.
    pub const SCHEMA: [SchemaCode; 18] = [
        SchemaCode::TypeMismatch,
        SchemaCode::MissingRequired,
        SchemaCode::UnknownProperty,
        SchemaCode::UnknownItem,
        SchemaCode::OutOfRange,
        SchemaCode::Length,
        SchemaCode::Size,
        SchemaCode::Pattern,
        SchemaCode::Enum,
        SchemaCode::Const,
        SchemaCode::Format,
        SchemaCode::NotMultiple,
        SchemaCode::UniqueItems,
        SchemaCode::Contains,
        SchemaCode::PropertyName,
        SchemaCode::SchemaCombinator,
        SchemaCode::FalseSchema,
        SchemaCode::RecursionLimit,
    ];

    /// Every code of this version: the gate's, then the parser's, the
    /// validator's, the adapters' and the findings'. Strings shared by two
    /// sources appear once per source.
    pub fn all() -> Vec<Code> {
        let mut all = Vec::with_capacity(80);
        all.extend(Self::GATE);
        all.extend(JsonCode::ALL.map(Self::Parse));
        all.extend(Self::SCHEMA.map(Self::Schema));
        all.extend(AdapterCode::ALL.map(Self::Body));
        all.extend(FindingCode::ALL.map(Self::Finding));
        all
    }

    /// Whether a response-level finding with this code denies the response
    /// and every call in it (see the table above). Codes that are not
    /// findings answer `true`: any other response-level reason denies.
    pub fn finding_denies(self) -> bool {
        match self {
            Self::Finding(f) => !(f.is_text_leak() || f == FindingCode::UnrecognizedItem),
            _ => true,
        }
    }
}

impl PartialEq for Code {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Code {}

impl Hash for Code {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a call (or a response) was not allowed: a code, where, and an
/// optional sub-code from a fixed vocabulary.
///
/// A reason never holds a value taken from the call: the pointer locates it,
/// the detail is a `'static` code (the URL guard's code for `url_policy`, the
/// parser's code for `body_invalid_json`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Reason {
    /// The stable code.
    pub code: Code,
    /// The JSON Pointer of the place: into the arguments for a call's
    /// reason, into the body for a response-level one.
    pub pointer: String,
    /// A finer code from a fixed vocabulary, if the stage has one.
    pub detail: Option<&'static str>,
}

impl Reason {
    /// A reason at `pointer`.
    pub fn new(code: Code, pointer: impl Into<String>) -> Self {
        Self {
            code,
            pointer: pointer.into(),
            detail: None,
        }
    }

    /// A reason about the whole call (or response): pointer `""`.
    pub fn whole(code: Code) -> Self {
        Self::new(code, String::new())
    }

    /// Adds a finer code.
    pub fn with_detail(mut self, detail: &'static str) -> Self {
        self.detail = Some(detail);
        self
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`", self.code, self.pointer)?;
        if let Some(d) = self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn every_code_is_in_the_documented_list() {
        let doc = include_str!("reason.rs");
        for code in Code::all() {
            assert!(
                doc.contains(&format!("`{}`", code.as_str())),
                "`{code}` is missing from the documented list"
            );
        }
    }

    #[test]
    fn shared_strings_are_only_the_documented_ones() {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for code in Code::all() {
            *seen.entry(code.as_str()).or_default() += 1;
        }
        let mut shared: Vec<_> = seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(s, _)| s)
            .collect();
        shared.sort_unstable();
        assert_eq!(
            shared,
            ["provider_error", "too_large", "too_many_calls", "truncated"]
        );
    }

    #[test]
    fn codes_are_equal_when_their_strings_are() {
        assert_eq!(Code::Parse(JsonCode::Truncated), Code::Truncated);
        assert_ne!(Code::Parse(JsonCode::DuplicateKey), Code::Truncated);
        assert_eq!(Code::Body(AdapterCode::TooManyCalls), Code::TooManyCalls);
    }

    #[test]
    fn wire_strings_are_snake_case() {
        for code in Code::all() {
            let s = code.as_str();
            assert!(!s.is_empty());
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{s}"
            );
        }
    }

    #[test]
    fn findings_that_deny() {
        let denies: Vec<_> = FindingCode::ALL
            .into_iter()
            .filter(|f| Code::Finding(*f).finding_denies())
            .map(FindingCode::as_str)
            .collect();
        assert_eq!(
            denies,
            [
                "calls_expected",
                "duplicate_call_id",
                "server_side_call",
                "unsupported_call_item"
            ]
        );
    }
}
