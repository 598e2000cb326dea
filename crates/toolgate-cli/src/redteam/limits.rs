//! Attacks on the config's `[[limit]]`s and data-flow rules.
//!
//! Each is a sequence of calls over the red team's store, timed by its
//! manual clock. Every sequence starts in a fresh epoch (the clock moved
//! past the longest window), so the usage of the cases before it never
//! counts.
//!
//! For each limit, on the first tool it counts that has a valid call (with
//! an amount of about a third of a budget's cap, or less, when the
//! policies refuse that much): the calls that fill the cap, then one call
//! more, in one session; split across sessions (a limit that counts per
//! user, token or everyone; a budget counted per session is a hole a model
//! splits across conversations); in one response; as concurrent requests;
//! and one millisecond before the window frees the first call, then at the
//! edge. The call past the cap must be denied (held for a human, for a
//! budget with `over = "approval"`); the calls within it must run.
//!
//! For the data-flow rules: a session runs a call of every labelled tool,
//! then proposes each egress tool's call, which must not be allowed; then
//! the same with other tools' calls between (the labels must not wash out).

use std::time::Duration;

use toolgate::config::Config;
use toolgate::limit::{Amount, Limit, Measure, Over, Scope, MAX_WINDOW_SECONDS};
use toolgate::{Context, Decisions, Format, Verdict};
use toolgate_json::{canonical, Object, Value};

use super::attacks::Class;
use super::report::Outcome;
use super::wire::{self, Call, End, Wire};
use super::{Expect, Runner};

/// The most calls an attack makes to fill a cap.
const MAX_FILL: u64 = 60;

/// What a budget's cap is split into, largest first.
const SPLITS: [u64; 4] = [3, 10, 30, 60];

/// A valid call of a tool: its name and arguments.
#[derive(Clone)]
pub struct Base {
    /// The tool.
    pub tool: String,
    /// Valid arguments (the attacker's own resource).
    pub args: Object<'static>,
}

/// How an attack on one limit calls its tool.
struct Plan<'l> {
    limit: &'l Limit,
    tool: String,
    /// The arguments text of every call (the same amount each).
    args: String,
    /// The calls that fill the cap.
    fill: u64,
    /// What the call past the cap must come to.
    over: Expect,
    /// The tool's calls are held for a human: each filling call is
    /// approved and made again.
    held: bool,
}

impl Runner<'_> {
    /// Moves the clock past every `[[limit]]`'s window (a config without
    /// limits keeps its clock: nothing of it is windowed).
    pub(super) fn fresh_epoch(&self) {
        let longest = self
            .limits
            .iter()
            .map(|l| l.window_seconds)
            .max()
            .unwrap_or(0)
            .min(MAX_WINDOW_SECONDS);
        if longest > 0 {
            self.clock.advance(Duration::from_secs(longest + 1));
        }
    }

    fn limit_body(&self, id: &str, tool: &str, args: &str) -> String {
        wire::body(
            Wire::Openai,
            Some(&Call {
                id,
                name: tool,
                args,
            }),
            None,
            End::Complete,
        )
        .unwrap_or_default()
    }

    /// A call that must run: decided, and when held, approved and decided
    /// again. Reported only when it does not run.
    fn must_run(&mut self, tool: &str, label: &str, body: String, session: &str) -> bool {
        let user = self.user.to_owned();
        let mut d = self.decide(&body, &user, session);
        if one_verdict(&d) == Some(Verdict::NeedsApproval) && self.approve(&d) {
            d = self.decide(&body, &user, session);
        }
        let ran = Expect::Allow.holds(&d);
        if !ran {
            self.report.push(Outcome::new(
                tool,
                Class::Valid,
                label,
                None,
                Expect::Allow,
                &d,
                body,
                &user,
                session,
            ));
        }
        ran
    }

    /// Attacks every `[[limit]]` and the data-flow rules.
    pub(super) fn limits_and_flows(&mut self, config: &Config, bases: &[Base]) {
        for limit in config.limits() {
            match self.plan(limit, bases) {
                Ok(plan) => self.attack_limit(
                    &plan,
                    usize::try_from(config.gate().max_calls_per_response()).unwrap_or(0),
                ),
                Err(why) => {
                    let tool = limit.tools.first().map_or("", String::as_str);
                    self.report
                        .untested(tool, &format!("limit `{}`: {why}", limit.name));
                }
            }
        }
        self.flows(config, bases);
    }

    /// How to fill `limit`, or why it cannot be.
    fn plan<'l>(&mut self, limit: &'l Limit, bases: &[Base]) -> Result<Plan<'l>, String> {
        let base = bases
            .iter()
            .find(|b| limit.applies_to(&b.tool))
            .ok_or("no valid call of its tools could be built")?;
        let candidates: Vec<(Object<'static>, u64, Expect)> = match &limit.measure {
            Measure::Calls { max } => {
                if *max >= MAX_FILL {
                    return Err(format!(
                        "its cap of {max} calls is not filled (at most {MAX_FILL} are made)"
                    ));
                }
                vec![(base.args.clone(), *max, Expect::Deny)]
            }
            Measure::Sum { pointer, max, over } => {
                let member = pointer
                    .strip_prefix('/')
                    .filter(|m| !m.contains('/'))
                    .ok_or("its amount is not a top-level argument")?
                    .replace("~1", "/")
                    .replace("~0", "~");
                let over = match over {
                    Over::Deny => Expect::Deny,
                    _ => Expect::NotAllow,
                };
                SPLITS
                    .iter()
                    .filter_map(|&k| {
                        let (unit, fill) = split(*max, k)?;
                        let value = toolgate_json::from_slice(unit.as_bytes()).ok()?;
                        let mut args = base.args.clone();
                        args.insert(member.clone(), value.into_owned());
                        Some((args, fill, over))
                    })
                    .collect()
            }
            _ => return Err("it measures what the red team does not know".to_owned()),
        };
        for (args, fill, over) in candidates {
            let args = canonical::to_string(&Value::Object(args));
            // A probe in a session of its own: not denied means the
            // policies let that amount through.
            self.fresh_epoch();
            let session = self.session();
            let body = self.limit_body("call_limit_probe", &base.tool, &args);
            let d = self.decide(&body, self.user, &session);
            if Expect::NotDeny.holds(&d) {
                return Ok(Plan {
                    limit,
                    tool: base.tool.clone(),
                    args,
                    fill,
                    over,
                    held: one_verdict(&d) == Some(Verdict::NeedsApproval),
                });
            }
        }
        Err("every amount that splits its cap was denied for other reasons".to_owned())
    }

    fn attack_limit(&mut self, plan: &Plan<'_>, max_calls: usize) {
        let name = &plan.limit.name;
        let fill = plan.fill;
        // Within one session.
        self.fresh_epoch();
        let s = self.session();
        if self.fill_in(plan, "calls", &s) {
            let body = self.limit_body("call_limit_calls_over", &plan.tool, &plan.args);
            self.push_over(
                plan,
                &format!("`{name}`: call {} in one session, past the cap", fill + 1),
                body,
                &s,
            );
        }
        // Across sessions.
        if plan.limit.scope == Scope::Session && matches!(plan.limit.measure, Measure::Calls { .. })
        {
            self.report.untested(
                &plan.tool,
                &format!("limit `{name}` counts calls per session: calls split across sessions are not counted together"),
            );
        } else {
            self.fresh_epoch();
            let mut ran = true;
            for i in 1..=fill {
                let last = self.session();
                let body =
                    self.limit_body(&format!("call_limit_sessions_{i}"), &plan.tool, &plan.args);
                ran &= self.must_run(
                    &plan.tool,
                    &format!(
                        "`{name}`: call {i} of {fill} within the cap, each in a session of its own"
                    ),
                    body,
                    &last,
                );
            }
            if ran {
                let s = self.session();
                let body = self.limit_body("call_limit_sessions_over", &plan.tool, &plan.args);
                self.push_over(
                    plan,
                    &format!(
                        "`{name}`: call {} in a new session, past the cap split across sessions",
                        fill + 1
                    ),
                    body,
                    &s,
                );
            }
        }
        // In one response (calls held for a human do not count until they
        // are approved, so only a tool that runs without one).
        let n = usize::try_from(fill + 1).unwrap_or(usize::MAX);
        if !plan.held && n <= max_calls {
            self.fresh_epoch();
            let s = self.session();
            let ids: Vec<String> = (1..=n)
                .map(|i| format!("call_limit_parallel_{i}"))
                .collect();
            let calls: Vec<Call<'_>> = ids
                .iter()
                .map(|id| Call {
                    id,
                    name: &plan.tool,
                    args: &plan.args,
                })
                .collect();
            let body = wire::openai_calls(&calls);
            let d = self.decide(&body, self.user, &s);
            let expect = if plan.over == Expect::Deny {
                Expect::LastDenied
            } else {
                Expect::LastNotAllowed
            };
            let user = self.user.to_owned();
            self.report.push(Outcome::new(
                &plan.tool,
                Class::Limit,
                &format!("`{name}`: {n} parallel calls in one response, one past the cap"),
                None,
                expect,
                &d,
                body,
                &user,
                &s,
            ));
        }
        self.concurrent(plan);
        self.window_edge(plan);
    }

    /// Fills the cap in `session` with calls `call_limit_{tag}_{i}`; whether
    /// every one ran.
    fn fill_in(&mut self, plan: &Plan<'_>, tag: &str, session: &str) -> bool {
        let mut ran = true;
        for i in 1..=plan.fill {
            let body = self.limit_body(&format!("call_limit_{tag}_{i}"), &plan.tool, &plan.args);
            ran &= self.must_run(
                &plan.tool,
                &format!(
                    "`{}`: call {i} of {} within the cap",
                    plan.limit.name, plan.fill
                ),
                body,
                session,
            );
            if !ran {
                break;
            }
        }
        ran
    }

    fn push_over(&mut self, plan: &Plan<'_>, label: &str, body: String, session: &str) {
        let user = self.user.to_owned();
        let d = self.decide(&body, &user, session);
        self.report.push(Outcome::new(
            &plan.tool,
            Class::Limit,
            label,
            None,
            plan.over,
            &d,
            body,
            &user,
            session,
        ));
    }

    /// One call more than the cap holds, as concurrent requests (each in a
    /// session of its own unless the limit counts per session; a held
    /// tool's calls approved first): at most the cap may run.
    fn concurrent(&mut self, plan: &Plan<'_>) {
        let name = &plan.limit.name;
        let per_session = plan.limit.scope == Scope::Session;
        if plan.held && per_session {
            self.report.untested(
                &plan.tool,
                &format!("limit `{name}`: concurrent approved calls in one session were not tried"),
            );
            return;
        }
        self.fresh_epoch();
        let n = plan.fill + 1;
        let shared = self.session();
        let mut requests = Vec::new();
        for i in 1..=n {
            let session = if per_session {
                shared.clone()
            } else {
                self.session()
            };
            let body = self.limit_body(
                &format!("call_limit_concurrent_{i}"),
                &plan.tool,
                &plan.args,
            );
            if plan.held {
                let d = self.decide(&body, self.user, &session);
                if !self.approve(&d) {
                    self.report.untested(
                        &plan.tool,
                        &format!("limit `{name}`: a concurrent call's approval could not be given"),
                    );
                    return;
                }
            }
            requests.push((body, session));
        }
        let gate = self.gate;
        let user = self.user;
        let decided: Vec<Decisions> = std::thread::scope(|scope| {
            let handles: Vec<_> = requests
                .iter()
                .map(|(body, session)| {
                    scope.spawn(move || {
                        gate.decide_and_record(
                            body.as_bytes(),
                            Format::Auto,
                            &Context::new(user, session.as_str(), 1),
                        )
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let allowed = decided.iter().filter(|d| Expect::Allow.holds(d)).count();
        let cap = usize::try_from(plan.fill).unwrap_or(usize::MAX);
        let (body, session) = requests.first().cloned().unwrap_or_default();
        let pass = decided.len() == requests.len() && allowed <= cap;
        self.report.push(Outcome {
            tool: plan.tool.clone(),
            class: Class::Limit,
            label: format!("`{name}`: {n} concurrent requests, one past the cap"),
            wire: None,
            expect: Expect::AtMostCap,
            got: format!("{allowed} of {n} allowed"),
            pass,
            body,
            user: self.user.to_owned(),
            session,
            seq: 0,
        });
    }

    /// The cap filled, then one call a millisecond before the first call
    /// slides out of the window (over) and one at the edge (runs).
    fn window_edge(&mut self, plan: &Plan<'_>) {
        let name = &plan.limit.name;
        self.fresh_epoch();
        let s = self.session();
        if !self.fill_in(plan, "edge", &s) {
            return;
        }
        let window = Duration::from_secs(plan.limit.window_seconds);
        self.clock
            .advance(window.saturating_sub(Duration::from_millis(1)));
        let body = self.limit_body("call_limit_edge_before", &plan.tool, &plan.args);
        self.push_over(
            plan,
            &format!("`{name}`: one millisecond before the window frees the first call"),
            body,
            &s,
        );
        self.clock.advance(Duration::from_millis(1));
        let body = self.limit_body("call_limit_edge_at", &plan.tool, &plan.args);
        let user = self.user.to_owned();
        let mut d = self.decide(&body, &user, &s);
        if one_verdict(&d) == Some(Verdict::NeedsApproval) && self.approve(&d) {
            d = self.decide(&body, &user, &s);
        }
        self.report.push(Outcome::new(
            &plan.tool,
            Class::Valid,
            &format!("`{name}`: at the window's edge, when the first calls slid out"),
            None,
            Expect::Allow,
            &d,
            body,
            &user,
            &s,
        ));
    }

    /// Egress after the session read every label, directly and with other
    /// tools' calls between.
    fn flows(&mut self, config: &Config, bases: &[Base]) {
        let registry = config.registry();
        let labelled: Vec<&Base> = bases
            .iter()
            .filter(|b| {
                registry
                    .get(&b.tool)
                    .is_some_and(|t| !t.labels().is_empty())
            })
            .collect();
        let egress: Vec<&Base> = bases
            .iter()
            .filter(|b| registry.get(&b.tool).is_some_and(|t| t.egress()))
            .collect();
        let declares_egress = registry.iter().any(|t| t.egress());
        let declares_labels = registry.iter().any(|t| !t.labels().is_empty());
        match (declares_labels, declares_egress) {
            (false, false) => return,
            (true, false) => {
                self.report.untested(
                    "",
                    "flow: no tool is `egress`, so no data-flow rule was attacked",
                );
                return;
            }
            (false, true) => {
                self.report.untested(
                    "",
                    "flow: no tool declares `labels`, so no data-flow rule was attacked",
                );
                return;
            }
            (true, true) => {}
        }
        if egress.is_empty() || labelled.is_empty() {
            self.report.untested(
                "",
                "flow: no valid call of a labelled or an egress tool could be built",
            );
            return;
        }
        let mut labels: Vec<&str> = labelled
            .iter()
            .filter_map(|b| registry.get(&b.tool))
            .flat_map(|t| t.labels().iter().map(String::as_str))
            .collect();
        labels.sort_unstable();
        labels.dedup();
        let labels = labels.join(", ");
        let others: Vec<&Base> = bases
            .iter()
            .filter(|b| {
                registry
                    .get(&b.tool)
                    .is_some_and(|t| t.labels().is_empty() && !t.egress() && !t.approval_required())
            })
            .collect();
        for laundered in [false, true] {
            self.fresh_epoch();
            let s = self.session();
            let mut ran = true;
            for (i, b) in labelled.iter().enumerate() {
                let args = canonical::to_string(&Value::Object(b.args.clone()));
                let body = self.limit_body(&format!("call_flow_read_{i}"), &b.tool, &args);
                ran &= self.must_run(&b.tool, "flow: a labelled tool's call", body, &s);
            }
            if !ran {
                continue;
            }
            let between = if laundered {
                for (i, b) in others.iter().enumerate() {
                    let args = canonical::to_string(&Value::Object(b.args.clone()));
                    let body = self.limit_body(&format!("call_flow_between_{i}"), &b.tool, &args);
                    let _ = self.must_run(&b.tool, "flow: a call between", body, &s);
                }
                if others.is_empty() {
                    continue;
                }
                let names: Vec<&str> = others.iter().map(|b| b.tool.as_str()).collect();
                format!(", then {}", names.join(", "))
            } else {
                String::new()
            };
            for (i, e) in egress.iter().enumerate() {
                let args = canonical::to_string(&Value::Object(e.args.clone()));
                let body = self.limit_body(&format!("call_flow_egress_{i}"), &e.tool, &args);
                let user = self.user.to_owned();
                let d = self.decide(&body, &user, &s);
                self.report.push(Outcome::new(
                    &e.tool,
                    Class::Flow,
                    &format!("egress after the session read {labels}{between}"),
                    None,
                    Expect::NotAllow,
                    &d,
                    body,
                    &user,
                    &s,
                ));
            }
        }
    }
}

/// The verdict of a response with exactly one call.
fn one_verdict(d: &Decisions) -> Option<Verdict> {
    match d.decisions() {
        [one] if d.rejected().is_none() => Some(one.verdict()),
        _ => None,
    }
}

/// `cap` split into `k` parts: the part (rounded up, at the cap's
/// precision) and how many of them fit under the cap.
fn split(cap: Amount, k: u64) -> Option<(String, u64)> {
    let text = cap.to_string();
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let scale = u32::try_from(frac.len()).ok()?;
    let units: u128 = format!("{int}{frac}").parse().ok()?;
    let part = units.div_ceil(u128::from(k));
    if part == 0 {
        return None;
    }
    let fill = u64::try_from(units / part).ok()?;
    if fill == 0 || fill >= MAX_FILL {
        return None;
    }
    let digits = part.to_string();
    let unit = if scale == 0 {
        digits
    } else {
        let width = usize::try_from(scale).ok()? + 1;
        let padded = format!("{digits:0>width$}");
        let (i, f) = padded.split_at(padded.len() - usize::try_from(scale).ok()?);
        let f = f.trim_end_matches('0');
        if f.is_empty() {
            i.to_owned()
        } else {
            format!("{i}.{f}")
        }
    };
    Some((unit, fill))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_splits_into_parts_that_fill_it_exactly_or_under() {
        let a = |s: &str| Amount::parse(s).unwrap_or(Amount::ZERO);
        assert_eq!(split(a("6000"), 3), Some(("2000".to_owned(), 3)));
        assert_eq!(split(a("10"), 3), Some(("4".to_owned(), 2)));
        assert_eq!(split(a("500.5"), 3), Some(("166.9".to_owned(), 2)));
        assert_eq!(split(a("0.5"), 10), Some(("0.1".to_owned(), 5)));
        assert_eq!(split(a("1"), 3), Some(("1".to_owned(), 1)));
    }
}
