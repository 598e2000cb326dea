//! Limits across calls: rate limits, budgets on argument values, and the
//! rule that judges both; documented on [`Limit`].
//!
//! The gate judges each call against the usage its [`StateView`](crate::StateView) reports
//! (`StateView::limit_events`) and, when the call may run, puts a
//! [`Charge`] per limit on its [`Decision`](crate::Decision). The store
//! gate (`toolgate-store`) applies the charges in the transaction that
//! commits the call's audit record, judging them again there with
//! [`judge`] under a lock, so two replicas cannot both let through the
//! call that crosses a limit. Without a store, the caller carries the
//! usage in the context (`limit_events`) and is responsible for it.

mod amount;

use std::fmt;

pub use self::amount::{Amount, AmountError};
use crate::reason::Code;

/// Whose calls a limit counts together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// Each user's calls (the context's `user`).
    User,
    /// Each session's calls.
    Session,
    /// Each caller token's calls (the front end's authenticated token
    /// name; every caller without one shares one count).
    Token,
    /// Everyone's calls together.
    Global,
}

impl Scope {
    /// The config's word: `user`, `session`, `token`, `global`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Session => "session",
            Self::Token => "token",
            Self::Global => "global",
        }
    }

    /// Reads the config's word.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "user" => Self::User,
            "session" => Self::Session,
            "token" => Self::Token,
            "global" => Self::Global,
            _ => return None,
        })
    }

    /// Whether the count belongs to one user or session alone, so that
    /// when it frees up may be told: `user` and `session`. A token's or
    /// the global count moves with other users' calls; feedback then names
    /// only the window's length.
    pub const fn is_private(self) -> bool {
        matches!(self, Self::User | Self::Session)
    }
}

/// What a budget does with a call that would push its sum over the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Over {
    /// Denied `budget_exceeded`.
    Deny,
    /// Held for a human (`budget_exceeded`); once approved it runs and
    /// counts, over the cap.
    Approval,
}

/// What a limit measures.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Measure {
    /// At most `max` calls per window (`rate_limited`).
    Calls {
        /// The cap.
        max: u64,
    },
    /// At most `max` as the sum of the number at `pointer` in the calls'
    /// arguments per window (`budget_exceeded`).
    Sum {
        /// The JSON Pointer of the amount in the arguments.
        pointer: String,
        /// The cap.
        max: Amount,
        /// What a call over the cap gets.
        over: Over,
    },
}

/// One configured limit (`[[limit]]`): a name, the tools it counts, whose
/// calls count together, what it measures and over what sliding window.
///
/// A call counts when it will run: allowed, or approved and used; denied
/// and held calls never count, and a call id counts once per limit. The
/// window slides: a call counts for `window` after it ran. A call is over
/// the limit when what already counts in the window plus its own amount
/// (1 for a rate limit) exceeds the cap.
///
/// ```toml
/// [[limit]]
/// name = "refunds_per_user"
/// tools = ["refund"]
/// per = "user"
/// calls = 5
/// window_seconds = 3600
///
/// [[limit]]
/// name = "refund_total"
/// tools = ["refund"]
/// per = "user"
/// sum = "/amount"
/// max = "500.00"
/// over = "deny"            # or "approval"
/// window_seconds = 86400
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limit {
    /// Its name: `[a-z0-9_]`, at most [`MAX_LIMIT_NAME_BYTES`] bytes.
    pub name: String,
    /// The tools it counts (registered names).
    pub tools: Vec<String>,
    /// Whose calls count together.
    pub scope: Scope,
    /// What it measures.
    pub measure: Measure,
    /// The sliding window, in seconds.
    pub window_seconds: u64,
}

/// The longest limit name.
pub const MAX_LIMIT_NAME_BYTES: usize = 64;
/// The most `[[limit]]` tables a config may hold.
pub const MAX_LIMITS: usize = 256;
/// The longest window: 31 days.
pub const MAX_WINDOW_SECONDS: u64 = 31 * 24 * 3600;

impl Limit {
    /// A rate limit: `max` calls of `tools` per `window_seconds` per scope.
    pub fn calls(
        name: impl Into<String>,
        tools: &[&str],
        scope: Scope,
        max: u64,
        window_seconds: u64,
    ) -> Self {
        Self {
            name: name.into(),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            scope,
            measure: Measure::Calls { max },
            window_seconds,
        }
    }

    /// A budget: the sum at `pointer` of calls of `tools` at most `max` per
    /// `window_seconds` per scope.
    pub fn sum(
        name: impl Into<String>,
        tools: &[&str],
        scope: Scope,
        pointer: impl Into<String>,
        max: Amount,
        over: Over,
        window_seconds: u64,
    ) -> Self {
        Self {
            name: name.into(),
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            scope,
            measure: Measure::Sum {
                pointer: pointer.into(),
                max,
                over,
            },
            window_seconds,
        }
    }

    /// Whether it counts calls of `tool`.
    pub fn applies_to(&self, tool: &str) -> bool {
        self.tools.iter().any(|t| t == tool)
    }

    /// The cap.
    pub fn cap(&self) -> Amount {
        match &self.measure {
            Measure::Calls { max } => Amount::from_u64(*max),
            Measure::Sum { max, .. } => *max,
        }
    }

    /// The code of a call over it: `rate_limited` or `budget_exceeded`.
    pub fn code(&self) -> Code {
        match self.measure {
            Measure::Calls { .. } => Code::RateLimited,
            Measure::Sum { .. } => Code::BudgetExceeded,
        }
    }

    /// The window in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.window_seconds.saturating_mul(1000)
    }

    /// The key its count is kept under for a call by `user` in `session`
    /// through `token`: `NAME/user/USER`, `NAME/session/SESSION`,
    /// `NAME/token/TOKEN`, `NAME/global`. A name holds no `/`, so keys of
    /// two limits never meet.
    pub fn key(&self, user: &str, session: &str, token: Option<&str>) -> String {
        let name = &self.name;
        match self.scope {
            Scope::User => format!("{name}/user/{user}"),
            Scope::Session => format!("{name}/session/{session}"),
            Scope::Token => format!("{name}/token/{}", token.unwrap_or_default()),
            Scope::Global => format!("{name}/global"),
        }
    }
}

/// What one allowed call adds to one limit: applied by the store in the
/// audit record's transaction ([`crate::Decision::charges`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Charge {
    /// The limit's name.
    pub limit: String,
    /// The key the count is kept under ([`Limit::key`]).
    pub key: String,
    /// The sliding window, in milliseconds.
    pub window_ms: u64,
    /// The cap.
    pub cap: Amount,
    /// What this call adds (1 for a rate limit).
    pub amount: Amount,
    /// Whether the cap holds for it: `false` for a call a human approved
    /// over a budget (it counts, over the cap).
    pub enforce: bool,
    /// The code of a call over the limit.
    pub code: Code,
    /// The call id, counted once per key.
    pub call_id: Option<String>,
}

/// What [`judge`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Judgement {
    /// The amount fits under the cap.
    Fits,
    /// It does not. `retry_at_ms`: when enough of the window's usage will
    /// have slid out for it to fit (Unix milliseconds), `None` if never
    /// (the amount alone exceeds the cap).
    Over {
        /// When it would fit.
        retry_at_ms: Option<u64>,
    },
}

/// The rule every state keeps, once: given the usage `events` of one key
/// (time in Unix milliseconds, amount), does `amount` fit under `cap` at
/// `now_ms` over a sliding window of `window_ms`? Events count while
/// `now_ms - window_ms < at`; older ones are ignored. A sum the amounts
/// cannot hold exactly is over the cap.
pub fn judge(
    events: &[(u64, Amount)],
    amount: Amount,
    cap: Amount,
    now_ms: u64,
    window_ms: u64,
) -> Judgement {
    let since = now_ms.saturating_sub(window_ms);
    let mut live: Vec<(u64, Amount)> = events
        .iter()
        .copied()
        .filter(|(at, _)| *at > since)
        .collect();
    let Some(used) = live
        .iter()
        .try_fold(Amount::ZERO, |sum, (_, a)| sum.checked_add(*a))
    else {
        return Judgement::Over { retry_at_ms: None };
    };
    let fits = |used: Amount| used.checked_add(amount).is_some_and(|total| total <= cap);
    if fits(used) {
        return Judgement::Fits;
    }
    live.sort_unstable_by_key(|(at, _)| *at);
    let mut remaining = used;
    for (at, a) in live {
        remaining = match remaining.checked_sub(a) {
            Some(r) => r,
            None => break,
        };
        if fits(remaining) {
            return Judgement::Over {
                retry_at_ms: Some(at.saturating_add(window_ms)),
            };
        }
    }
    Judgement::Over { retry_at_ms: None }
}

/// [`judge`]'s `Fits` when the exact sum of what counts in the window is
/// known without the events (`used`: a store's running total, the sum of
/// the events `judge` would keep): whether `amount` fits under `cap`. A
/// sum the amounts cannot hold is not known to fit. When it does not fit,
/// [`judge`] over the events says so again and when a retry can succeed.
pub fn fits(used: Amount, amount: Amount, cap: Amount) -> bool {
    used.checked_add(amount).is_some_and(|total| total <= cap)
}

/// Whether a limit has nothing left at `now_ms`, given its key's usage
/// `events`: what counts in the window reaches the cap, so no call fits
/// whatever its amount. Narrowing hides a tool with such a limit.
pub fn exhausted(limit: &Limit, events: &[(u64, Amount)], now_ms: u64) -> bool {
    let since = now_ms.saturating_sub(limit.window_ms());
    events
        .iter()
        .filter(|(at, _)| *at > since)
        .try_fold(Amount::ZERO, |sum, (_, a)| sum.checked_add(*a))
        .is_none_or(|used| used >= limit.cap())
}

/// [`exhausted`] when the exact sum of what counts in the window is known
/// (`used`, as for [`fits`]).
pub fn exhausted_at(limit: &Limit, used: Amount) -> bool {
    used >= limit.cap()
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    #[test]
    fn a_rate_limit_frees_up_when_the_oldest_call_slides_out() {
        let one = Amount::ONE;
        let events = [(1_000, one), (2_000, one), (3_000, one)];
        let cap = Amount::from_u64(3);
        assert_eq!(
            judge(&events[..2], one, cap, 3_500, 10_000),
            Judgement::Fits
        );
        assert_eq!(
            judge(&events, one, cap, 3_500, 10_000),
            Judgement::Over {
                retry_at_ms: Some(11_000)
            }
        );
        // At the edge: the first call counts until its time plus the
        // window, when the retry it named succeeds.
        assert_ne!(judge(&events, one, cap, 10_999, 10_000), Judgement::Fits);
        assert_eq!(judge(&events, one, cap, 11_000, 10_000), Judgement::Fits);
    }

    #[test]
    fn a_budget_is_summed_exactly() {
        let cap = a("500.00");
        let events: Vec<(u64, Amount)> = (1..=10).map(|i| (i, a("49.99"))).collect();
        // 10 × 49.99 = 499.90: 0.10 fits, 0.11 does not.
        assert_eq!(judge(&events, a("0.10"), cap, 100, 1_000), Judgement::Fits);
        assert_eq!(
            judge(&events, a("0.11"), cap, 100, 1_000),
            Judgement::Over {
                retry_at_ms: Some(1_001)
            }
        );
        assert_eq!(
            judge(&[], a("500.01"), cap, 100, 1_000),
            Judgement::Over { retry_at_ms: None }
        );
    }

    #[test]
    fn a_limit_is_exhausted_when_its_window_reaches_the_cap() {
        let l = Limit::sum("t", &["refund"], Scope::User, "/a", a("10"), Over::Deny, 60);
        assert!(!exhausted(&l, &[(1_000, a("9.99"))], 2_000));
        assert!(exhausted(
            &l,
            &[(1_000, a("9.99")), (1_500, a("0.01"))],
            2_000
        ));
        // Slid out of the window.
        assert!(!exhausted(&l, &[(1_000, a("10"))], 61_000));
    }

    #[test]
    fn keys_never_meet() {
        let l = Limit::calls("r", &["refund"], Scope::User, 1, 60);
        assert_eq!(l.key("alice", "s", None), "r/user/alice");
        let g = Limit::calls("r", &["refund"], Scope::Global, 1, 60);
        assert_eq!(g.key("alice", "s", None), "r/global");
        let t = Limit::calls("r", &["refund"], Scope::Token, 1, 60);
        assert_eq!(t.key("alice", "s", Some("agent")), "r/token/agent");
    }
}
