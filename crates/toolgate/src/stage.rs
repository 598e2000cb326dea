//! The decision stages, in their fixed order. Each is a small unit with one
//! job and its own tests; [`crate::Gate`] runs them.
//!
//! | # | stage | module | denies with |
//! |---|---|---|---|
//! | 1 | finish and response findings | `finish` | `truncated`, `content_filtered`, `refused`, `malformed_call`, `incomplete_turn`, `provider_error`, `finish_unknown`; a denying finding's code |
//! | 2 | registry | `registry` | `unknown_tool` |
//! | 3 | strict parse | `parse` | the parser's codes, `not_object` |
//! | 4 | schema | `schema` | every violation's code |
//! | 5 | argument policies | `policy` | `url_policy` |
//! | 6 | authorization | `authorize` | `not_authorized`, `not_owner`, `authorization_error` |
//! | 7 | limits | `limits`, then `usage` | `loop_limit`, `too_many_calls`, `repeated_rejection`; `rate_limited`, `budget_exceeded` (a budget with `over = "approval"` holds instead, at stage 9) |
//! | 8 | kill switch | `kill_switch` | `kill_switch` |
//! | 9 | risk and approval | `approval` | `approval_required` (needs approval) |
//! | 10 | replay (a call about to be allowed) | in the gate | `replayed_call`: a non-read call whose id was already allowed in the session |
//!
//! Any stateful stage whose state cannot be read denies `store_unavailable`.
//!
//! Deny is final: the first stage that denies ends the call's pipeline, and
//! no later stage runs (so nothing later can turn it into an allow, and no
//! later stage's work is spent or reported). Only stage 9 can ask for
//! approval (for a budget with `over = "approval"`, as stage 7 found).

pub(crate) mod approval;
pub(crate) mod authorize;
pub(crate) mod default_urls;
pub(crate) mod finish;
pub(crate) mod kill_switch;
pub(crate) mod limits;
pub(crate) mod parse;
pub(crate) mod policy;
pub(crate) mod registry;
pub(crate) mod schema;
pub(crate) mod usage;
