//! Stage 7, continued: rate limits and budgets across calls (threat 8).
//!
//! For every `[[limit]]` counting the tool, the call's amount (1 for a rate
//! limit; for a budget the number at its pointer, exactly) is judged with
//! [`crate::limit::judge`] against what the state says already counts in
//! the window for the limit's key, plus what earlier allowed calls of the
//! same response add. Over a rate limit or a denying budget: deny
//! `rate_limited` / `budget_exceeded`, with when a retry can succeed (for a
//! `user` or `session` limit: from that user's or session's own calls; for
//! a `token` or `global` one: the window's length, which tells nothing of
//! other users). Over a budget with `over = "approval"`: the call is held
//! (`budget_exceeded`) and, once a human approved it, counts over the cap.
//! A budgeted call whose amount is missing, not a number, negative, or
//! beyond the digits an amount keeps is denied `budget_exceeded` at the
//! amount's pointer: it cannot be counted, so it does not run.
//!
//! Nothing is counted here: the call's [`Charge`]s go on the decision if it
//! is allowed, and the store applies them with the audit record.

use toolgate_json::Value;

use crate::context::{Context, StateView};
use crate::limit::{fits, judge, Amount, Charge, Judgement, Limit, Measure, Over};
use crate::reason::{Code, Reason};

/// What the limits make of a call that fits (or is held).
#[derive(Debug, Default)]
pub(crate) struct Planned {
    /// What the call adds to each limit, if it runs.
    pub(crate) charges: Vec<Charge>,
    /// A budget with `over = "approval"` the call would exceed: the reason
    /// it is held for.
    pub(crate) hold: Option<Reason>,
}

/// A call over a limit.
#[derive(Debug)]
pub(crate) struct Exceeded {
    pub(crate) reason: Reason,
    /// Seconds until a retry can succeed, if that can be told.
    pub(crate) retry_after: Option<u64>,
}

/// Judges one call against `limits` (those counting its tool).
pub(crate) fn check(
    limits: &[Limit],
    arguments: &Value<'_>,
    context: &Context,
    call_id: Option<&str>,
    state: &dyn StateView,
    now_ms: u64,
    earlier: &[Charge],
) -> Result<Planned, Exceeded> {
    let mut planned = Planned::default();
    for limit in limits {
        let (amount, pointer, over) = match &limit.measure {
            Measure::Calls { .. } => (Amount::ONE, "", Over::Deny),
            Measure::Sum { pointer, over, .. } => {
                let amount = arguments
                    .pointer(pointer)
                    .and_then(Value::as_number)
                    .and_then(Amount::of_number)
                    .filter(|a| !a.is_negative())
                    .ok_or_else(|| Exceeded {
                        reason: Reason::new(Code::BudgetExceeded, pointer.as_str()),
                        retry_after: None,
                    })?;
                (amount, pointer.as_str(), *over)
            }
        };
        let key = limit.key(
            &context.user,
            &context.session,
            context.requester.as_deref(),
        );
        let window_ms = limit.window_ms();
        let since_ms = now_ms.saturating_sub(window_ms);
        let unavailable = |_| Exceeded {
            reason: Reason::whole(Code::StoreUnavailable),
            retry_after: None,
        };
        // Earlier calls of this response count at `now_ms`, inside the
        // window as `judge` keeps it.
        let earlier = earlier
            .iter()
            .filter(|c| c.key == key && now_ms > since_ms)
            .map(|c| c.amount);
        // The common case reads one running total; the window's events
        // only when the call would not fit (or the total is not known).
        let fast = state
            .limit_used(&key, since_ms)
            .map_err(unavailable)?
            .and_then(|used| earlier.clone().try_fold(used, Amount::checked_add))
            .is_some_and(|used| fits(used, amount, limit.cap()));
        let judgement = if fast {
            Judgement::Fits
        } else {
            let mut events = state.limit_events(&key, since_ms).map_err(unavailable)?;
            events.extend(earlier.map(|a| (now_ms, a)));
            judge(&events, amount, limit.cap(), now_ms, window_ms)
        };
        let mut enforce = true;
        if let Judgement::Over { retry_at_ms } = judgement {
            let reason = Reason::new(limit.code(), pointer);
            if over == Over::Approval {
                planned.hold.get_or_insert(reason);
                enforce = false;
            } else {
                let retry_after = if limit.scope.is_private() {
                    retry_at_ms.map(|at| at.saturating_sub(now_ms).div_ceil(1000).max(1))
                } else {
                    Some(limit.window_seconds)
                };
                return Err(Exceeded {
                    reason,
                    retry_after,
                });
            }
        }
        planned.charges.push(Charge {
            limit: limit.name.clone(),
            key,
            window_ms,
            cap: limit.cap(),
            amount,
            enforce,
            code: limit.code(),
            call_id: call_id.map(str::to_owned),
        });
    }
    Ok(planned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::LimitEvent;
    use crate::limit::Scope;

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    #[test]
    fn a_budget_sums_exactly_and_tells_when_it_frees_up() {
        let budget = Limit::sum(
            "refund_total",
            &["refund"],
            Scope::User,
            "/amount",
            a("100"),
            Over::Deny,
            3600,
        );
        let mut ctx = Context::new("alice", "s", 1);
        ctx.limit_events = vec![
            LimitEvent::new("refund_total", 1000, a("60.10")),
            LimitEvent::new("refund_total", 1500, a("39.80")),
            LimitEvent::new("other", 1500, a("1000")),
        ];
        let args = |s: &'static str| toolgate_json::from_str(s).unwrap();
        let now = 2_000_000;
        let ok = check(
            std::slice::from_ref(&budget),
            &args(r#"{"amount":0.1}"#),
            &ctx,
            None,
            &ctx,
            now,
            &[],
        )
        .unwrap();
        assert_eq!(ok.charges.len(), 1);
        assert_eq!(ok.charges[0].key, "refund_total/user/alice");
        assert_eq!(ok.charges[0].amount, a("0.1"));
        let over = check(
            std::slice::from_ref(&budget),
            &args(r#"{"amount":0.11}"#),
            &ctx,
            None,
            &ctx,
            now,
            &[],
        )
        .unwrap_err();
        assert_eq!(over.reason, Reason::new(Code::BudgetExceeded, "/amount"));
        // The first refund slides out at 1000 s + 3600 s.
        assert_eq!(over.retry_after, Some(4600 - 2000));
        for bad in [r#"{"amount":-5}"#, r#"{"amount":"5"}"#, "{}"] {
            let e = check(
                std::slice::from_ref(&budget),
                &args(bad),
                &ctx,
                None,
                &ctx,
                now,
                &[],
            )
            .unwrap_err();
            assert_eq!(
                e.reason,
                Reason::new(Code::BudgetExceeded, "/amount"),
                "{bad}"
            );
        }
        // Earlier calls of the same response count.
        let earlier = ok.charges;
        assert!(check(
            &[budget],
            &args(r#"{"amount":0.01}"#),
            &ctx,
            None,
            &ctx,
            now,
            &earlier
        )
        .is_err());
    }

    #[test]
    fn a_global_limit_tells_only_the_window() {
        let rate = Limit::calls("paid_api", &["search"], Scope::Global, 1, 60);
        let mut ctx = Context::new("alice", "s", 1);
        ctx.limit_events = vec![LimitEvent::new("paid_api", 100, Amount::ONE)];
        let args = toolgate_json::from_str("{}").unwrap();
        let e = check(&[rate], &args, &ctx, None, &ctx, 101_000, &[]).unwrap_err();
        assert_eq!(e.reason, Reason::whole(Code::RateLimited));
        assert_eq!(e.retry_after, Some(60));
    }

    /// A state with a running total beside the context's events: `total`
    /// answers `limit_used` whatever the events say, so the tests can tell
    /// which of the two decided.
    struct Totals<'c> {
        ctx: &'c Context,
        total: Option<Amount>,
    }

    impl StateView for Totals<'_> {
        fn kill_switch(&self) -> Result<crate::context::KillSwitch, crate::context::StateError> {
            self.ctx.kill_switch()
        }

        fn find_approval(
            &self,
            key: &crate::context::ApprovalKey<'_>,
            now: u64,
            skip: &[String],
        ) -> Result<Option<crate::context::ApprovalGrant>, crate::context::StateError> {
            self.ctx.find_approval(key, now, skip)
        }

        fn rejections(
            &self,
            session: &str,
            tool: &str,
            shape: &toolgate_json::canonical::Digest,
        ) -> Result<u32, crate::context::StateError> {
            self.ctx.rejections(session, tool, shape)
        }

        fn limit_events(
            &self,
            key: &str,
            since_ms: u64,
        ) -> Result<Vec<(u64, Amount)>, crate::context::StateError> {
            self.ctx.limit_events(key, since_ms)
        }

        fn limit_used(
            &self,
            _key: &str,
            _since_ms: u64,
        ) -> Result<Option<Amount>, crate::context::StateError> {
            Ok(self.total)
        }
    }

    fn with_total(
        ctx: &Context,
        total: Option<&str>,
        earlier: &[Charge],
    ) -> Result<Planned, Exceeded> {
        let budget = Limit::sum(
            "t",
            &["refund"],
            Scope::User,
            "/amount",
            a("100"),
            Over::Deny,
            3600,
        );
        let args = toolgate_json::from_str(r#"{"amount":0.02}"#).unwrap();
        let state = Totals {
            ctx,
            total: total.map(a),
        };
        check(&[budget], &args, ctx, None, &state, 2_000_000, earlier)
    }

    #[test]
    fn a_running_total_decides_a_call_that_fits_and_the_events_one_that_does_not() {
        let mut ctx = Context::new("alice", "s", 1);
        ctx.limit_events = vec![LimitEvent::new("t", 1000, a("99.99"))];
        // The total says it fits: the events are not read.
        assert!(with_total(&ctx, Some("99.98"), &[]).is_ok());
        // The total says it does not: the events decide, and tell when.
        let e = with_total(&ctx, Some("99.99"), &[]).unwrap_err();
        assert_eq!(e.retry_after, Some(4600 - 2000));
        // They decide too when they say it fits after all.
        ctx.limit_events.clear();
        assert!(with_total(&ctx, Some("99.99"), &[]).is_ok());
        // No total: the events, as without one.
        assert!(with_total(&ctx, None, &[]).is_ok());
        // Earlier calls of the response count on top of the total.
        let earlier = with_total(&ctx, Some("0"), &[]).unwrap().charges;
        assert!(with_total(&ctx, Some("99.96"), &earlier).is_ok());
        ctx.limit_events = vec![LimitEvent::new("t", 1000, a("99.97"))];
        assert!(with_total(&ctx, Some("99.97"), &earlier).is_err());
        // A total the amount cannot be added to is not known to fit: the
        // events decide (99.97 + 0.02 fits).
        assert!(with_total(&ctx, Some("99999999999999999999"), &[]).is_ok());
    }

    #[test]
    fn an_approval_budget_holds_and_charges_without_the_cap() {
        let budget = Limit::sum(
            "t",
            &["refund"],
            Scope::Session,
            "/amount",
            a("10"),
            Over::Approval,
            60,
        );
        let ctx = Context::new("alice", "s", 1);
        let args = toolgate_json::from_str(r#"{"amount":11}"#).unwrap();
        let p = check(&[budget], &args, &ctx, Some("c1"), &ctx, 1000, &[]).unwrap();
        assert_eq!(p.hold, Some(Reason::new(Code::BudgetExceeded, "/amount")));
        assert!(!p.charges[0].enforce);
        assert_eq!(p.charges[0].call_id.as_deref(), Some("c1"));
    }
}
