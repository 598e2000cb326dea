//! `toolgate redteam`: attack a config's tools through the gate, without a
//! model.
//!
//! For each tool, cases are generated from its schema, URL policies,
//! resource mapping and the config's entities (see [`attacks::Class`]): the
//! valid calls its owner means to allow, and attacks in every class. Each
//! case is wrapped in every provider format `toolgate check` reads, JSON and
//! streamed ([`wire::Wire`]), and decided by the same gate as `check`, over
//! a throwaway in-memory store (the config's store is never opened), each in
//! a session of its own; replays, approval misuse and loop runs are played
//! as sequences in one session; each `[[limit]]` and the data-flow rules
//! are attacked as sequences too ([`limits`]), on the gate's manual clock,
//! each case starting in a fresh epoch past the longest window so that no
//! case's usage counts for another. An attack passes when every call it
//! proposes is denied (a call held for a human is a failure: the gate let
//! the attack through to a person); a valid call passes when it is allowed
//! or held. Generation is deterministic for a `--seed`.
//!
//! Every failing case is written to `--cases DIR` as a body and a context
//! that `toolgate check --store sqlite::memory: --context CTX BODY`
//! replays.
//!
//! Exit codes: `0` no attack allowed and no valid call denied; `1` any
//! attack allowed or held, or any valid call denied; `2` usage error, a
//! config that does not load, or a report or case that cannot be written.

mod attacks;
mod instance;
mod limits;
mod pattern;
mod report;
mod rng;
mod variants;
mod wire;
mod world;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr as _;
use std::sync::Arc;

use anyhow::Context as _;
use toolgate::config::Config;
use toolgate::registry::Risk;
use toolgate::{Context, Decisions, Format, Gate, Verdict};
use toolgate_json::canonical;
use toolgate_store::{
    ApprovalId, Clock as _, ManualClock, Store, StoreGate, StoreOptions, SystemClock,
};

use self::attacks::{Case, Class, Target};
use self::report::{Outcome, Report};
use self::rng::Rng;
use self::wire::{Call, End, Wire};
use self::world::World;

/// Flags of `toolgate redteam`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The toolgate config (TOML) whose tools are attacked.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The seed of the generated cases: the same seed, the same cases.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,

    /// The report's format.
    #[arg(long, value_name = "FORMAT", default_value = "text",
          value_parser = ["text", "json", "junit"])]
    format: String,

    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,

    /// The folder each failing case is written to (created when a case
    /// fails): a body and its context, for `toolgate check` to replay.
    #[arg(long, value_name = "DIR", default_value = "toolgate-redteam-cases")]
    cases: PathBuf,

    /// The user the attacks are made as. Default: a user of the entities
    /// who owns a resource (picked by the seed).
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
}

/// What every decision is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Every proposed call denied (or no call at all).
    Deny,
    /// No call allowed (held for a human is right: an approval is asked for).
    NotAllow,
    /// The call allowed or held, never denied.
    NotDeny,
    /// The call allowed.
    Allow,
    /// The last of the response's calls denied (the calls before it may
    /// run: they are within a limit's cap).
    LastDenied,
    /// The last of the response's calls not allowed.
    LastNotAllowed,
    /// Of concurrent requests, at most a limit's cap allowed.
    AtMostCap,
}

impl Expect {
    fn for_class(class: Class) -> Self {
        if class == Class::Valid {
            Expect::NotDeny
        } else {
            Expect::Deny
        }
    }

    fn holds(self, d: &Decisions) -> bool {
        let calls = d.decisions();
        match self {
            Expect::Deny => calls.iter().all(|c| c.verdict() == Verdict::Deny),
            Expect::NotAllow => calls.iter().all(|c| c.verdict() != Verdict::Allow),
            Expect::NotDeny => {
                d.rejected().is_none()
                    && calls.len() == 1
                    && calls.iter().all(|c| c.verdict() != Verdict::Deny)
            }
            Expect::Allow => {
                d.rejected().is_none()
                    && calls.len() == 1
                    && calls.iter().all(|c| c.verdict() == Verdict::Allow)
            }
            Expect::LastDenied => calls.last().is_none_or(|c| c.verdict() == Verdict::Deny),
            Expect::LastNotAllowed => calls.last().is_none_or(|c| c.verdict() != Verdict::Allow),
            // Judged over several responses by the caller.
            Expect::AtMostCap => false,
        }
    }

    /// The word for it in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Deny => "deny",
            Expect::NotAllow => "not allow",
            Expect::NotDeny => "allow or needs_approval",
            Expect::Allow => "allow",
            Expect::LastDenied => "the last call denied",
            Expect::LastNotAllowed => "the last call not allowed",
            Expect::AtMostCap => "at most the cap allowed",
        }
    }
}

/// Runs the command; the exit code follows the module documentation.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let config = toolgate_edge::config::load(&args.config)?;
    let world = World::load(config.authorization().entities())?;
    let gate = Gate::from_config_with(&config, &toolgate_store::connect_source)?;
    // What the policies say (limits compared in them), read once more here.
    let authorizer = toolgate::authz::from_config_with(&config, &toolgate_store::connect_source)?;
    let facts = authorizer.cedar().map_or(&[][..], |c| c.policy_facts());
    // A throwaway store: nothing reaches the config's.
    let store =
        crate::store_cmds::open(Some(&config), Some("sqlite::memory:"), StoreOptions::new())?;
    // The gate's own clock: limit windows and approvals are timed by it,
    // and every sequence starts in a fresh epoch past them.
    let clock = ManualClock::new(SystemClock::new().now());
    let gate = StoreGate::new(gate, Arc::clone(&store))
        .configured(&config)
        .with_clock(Arc::new(clock.clone()));
    let mut rng = Rng::new(args.seed);
    let user = match &args.user {
        Some(u) => u.clone(),
        None => attacker(&config, &world, &mut rng),
    };
    let mut runner = Runner {
        gate: &gate,
        store: &store,
        clock,
        user: &user,
        users: world.users().map(str::to_owned).collect(),
        facts,
        limits: config.limits().to_vec(),
        sessions: 0,
        report: Report::new(args.seed, &user),
    };
    let names: Vec<String> = config
        .registry()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    // Resolve mode: the static table's names that point inside.
    let inside_hosts: Vec<String> = match config.resolver() {
        Some(toolgate::config::ResolverConfig::Static(table)) => table
            .names()
            .filter(|(name, addrs)| {
                !name.starts_with("*.")
                    && addrs
                        .iter()
                        .any(|a| toolgate::url_guard::classify(*a).is_some())
            })
            .map(|(name, _)| name.to_owned())
            .collect(),
        _ => Vec::new(),
    };
    let mut bases = Vec::new();
    for tool in config.registry().iter() {
        let mut target = Target::new(facts, tool, names.clone(), &user, &world, &mut rng);
        target.inside_hosts.clone_from(&inside_hosts);
        target.resolving = config.resolver().is_some();
        for note in &target.untested {
            runner.report.untested(tool.name(), note);
        }
        for case in target.cases(&mut rng) {
            runner.case(tool.name(), &case);
        }
        runner.replays(&target);
        if let Some(args) = &target.base {
            bases.push(limits::Base {
                tool: tool.name().to_owned(),
                args: args.clone(),
            });
        }
    }
    runner.loop_run(&config, &world, &names, &mut rng);
    runner.limits_and_flows(&config, &bases);
    let report = runner.report;
    let failures = report.failures();
    if !failures.is_empty() {
        write_cases(&args.cases, &args.config, &failures)?;
    }
    let text = match args.format.as_str() {
        "json" => report.to_json(&args.cases),
        "junit" => report.to_junit(),
        _ => report.to_text(&args.cases, &args.config),
    };
    match &args.out {
        Some(path) => crate::report::write_file(path, text.as_bytes())
            .with_context(|| format!("cannot write the report `{}`", path.display()))?,
        None => {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The default attacker: a user who owns a resource of a tool's resource
/// type (so ownership can be attacked), else any user, else `redteam`.
fn attacker(config: &Config, world: &World, rng: &mut Rng) -> String {
    let kinds: Vec<&str> = config
        .registry()
        .iter()
        .filter_map(|t| t.resource().map(|r| r.entity_type()))
        .collect();
    let owners: Vec<&str> = world
        .users()
        .filter(|u| {
            world
                .entities
                .iter()
                .any(|e| kinds.contains(&e.kind.as_str()) && e.owned_by(u))
        })
        .collect();
    if let Some(u) = rng.pick(&owners) {
        return (*u).to_owned();
    }
    world.users().next().unwrap_or("redteam").to_owned()
}

struct Runner<'a> {
    gate: &'a StoreGate,
    store: &'a Arc<dyn Store>,
    /// The gate's clock.
    clock: ManualClock,
    user: &'a str,
    users: Vec<String>,
    facts: &'a [toolgate::authz::PolicyFacts],
    /// The config's `[[limit]]`s.
    limits: Vec<toolgate::limit::Limit>,
    sessions: u64,
    report: Report,
}

impl Runner<'_> {
    fn session(&mut self) -> String {
        self.sessions += 1;
        format!("redteam-{}", self.sessions)
    }

    fn decide(&self, body: &str, user: &str, session: &str) -> Decisions {
        self.gate.decide_and_record(
            body.as_bytes(),
            Format::Auto,
            &Context::new(user, session, 1),
        )
    }

    /// One case in every format that can carry it, each in its own session.
    fn case(&mut self, tool: &str, case: &Case) {
        let (class, label, expect) = self.budgeted(tool, case);
        for w in Wire::ALL {
            // A valid call is only proposed where it can arrive whole.
            let call = case.args.as_deref().map(|args| Call {
                id: "call_redteam_1",
                name: &case.name,
                args,
            });
            let Some(mut body) = wire::body(w, call.as_ref(), case.text.as_deref(), case.end)
            else {
                continue;
            };
            if let (Some(dup), Some(args)) = (&case.envelope_dup, &case.args) {
                match wire::with_second_arguments(w, &body, args, dup) {
                    Some(b) => body = b,
                    None => continue,
                }
            }
            self.fresh_epoch();
            let session = self.session();
            let d = self.decide(&body, self.user, &session);
            self.report.push(Outcome::new(
                tool,
                class,
                &label,
                Some(w),
                expect,
                &d,
                body,
                self.user,
                &session,
            ));
        }
    }

    /// A call id used again, an approval used twice or for what it does not
    /// cover: sequences in one session (OpenAI JSON bodies).
    fn replays(&mut self, target: &Target<'_>) {
        let tool = target.tool;
        let Some(base) = &target.base else {
            return;
        };
        let args = canonical::to_string(&toolgate_json::Value::Object(base.clone()));
        let name = tool.name();
        let body = |id: &str, args: &str| {
            wire::body(
                Wire::Openai,
                Some(&Call { id, name, args }),
                None,
                End::Complete,
            )
            .unwrap_or_default()
        };
        let user = self.user.to_owned();
        let step = |r: &mut Self,
                    class: Class,
                    label: &str,
                    expect: Expect,
                    body: String,
                    user: &str,
                    session: &str|
         -> Decisions {
            let d = r.decide(&body, user, session);
            r.report.push(Outcome::new(
                name, class, label, None, expect, &d, body, user, session,
            ));
            d
        };
        if tool.risk() == Risk::Read && !tool.approval_required() {
            return;
        }
        self.fresh_epoch();
        let s1 = self.session();
        let first = body("call_replay_1", &args);
        if tool.approval_required() {
            let d = step(
                self,
                Class::Valid,
                "the call, held for approval",
                Expect::NotDeny,
                first.clone(),
                &user,
                &s1,
            );
            if !self.approve(&d) {
                return;
            }
            step(
                self,
                Class::Valid,
                "the approved call",
                Expect::Allow,
                first.clone(),
                &user,
                &s1,
            );
        } else {
            step(
                self,
                Class::Valid,
                "the call",
                Expect::Allow,
                first.clone(),
                &user,
                &s1,
            );
        }
        step(
            self,
            Class::Replay,
            "the same call id again",
            Expect::Deny,
            first,
            &user,
            &s1,
        );
        if !tool.approval_required() {
            return;
        }
        step(
            self,
            Class::Replay,
            "the used approval under a new call id",
            Expect::NotAllow,
            body("call_replay_2", &args),
            &user,
            &s1,
        );

        // One approval, tried for what it does not cover.
        self.fresh_epoch();
        let s2 = self.session();
        let asked = body("call_bound_1", &args);
        let d = step(
            self,
            Class::Valid,
            "a second call, held for approval",
            Expect::NotDeny,
            asked.clone(),
            &user,
            &s2,
        );
        if !self.approve(&d) {
            return;
        }
        if let Some((_, other)) = target
            .valid
            .iter()
            .find(|(_, o)| canonical::to_string(&toolgate_json::Value::Object(o.clone())) != args)
        {
            let other = canonical::to_string(&toolgate_json::Value::Object(other.clone()));
            step(
                self,
                Class::Replay,
                "the approval for other arguments",
                Expect::NotAllow,
                body("call_bound_2", &other),
                &user,
                &s2,
            );
        }
        let s3 = self.session();
        step(
            self,
            Class::Replay,
            "the approval from another session",
            Expect::NotAllow,
            body("call_bound_3", &args),
            &user,
            &s3,
        );
        // Another user the call is not denied for (held or allowed on
        // their own), so that only the approval's binding can stop it.
        let other = self.other_user(&body("call_probe", &args));
        step(
            self,
            Class::Replay,
            "the approval as another user",
            Expect::NotAllow,
            body("call_bound_4", &args),
            &other,
            &s2,
        );
        step(
            self,
            Class::Valid,
            "the approved call, after the misuses",
            Expect::Allow,
            asked,
            &user,
            &s2,
        );
    }

    /// A valid case whose amount alone is above a budget's cap is an attack
    /// on that budget: it must be denied (not allowed, with
    /// `over = "approval"`). Other cases keep their class.
    fn budgeted(&self, tool: &str, case: &Case) -> (Class, String, Expect) {
        let keep = (
            case.class,
            case.label.clone(),
            Expect::for_class(case.class),
        );
        if case.class != Class::Valid {
            return keep;
        }
        let Some(args) = case
            .args
            .as_deref()
            .and_then(|a| toolgate_json::from_slice(a.as_bytes()).ok())
        else {
            return keep;
        };
        for limit in self.limits.iter().filter(|l| l.applies_to(tool)) {
            let toolgate::limit::Measure::Sum { pointer, max, over } = &limit.measure else {
                continue;
            };
            let amount = args
                .pointer(pointer)
                .and_then(toolgate_json::Value::as_number)
                .and_then(toolgate::limit::Amount::of_number);
            if amount.is_some_and(|a| a > *max) {
                let expect = if *over == toolgate::limit::Over::Deny {
                    Expect::Deny
                } else {
                    Expect::NotAllow
                };
                let label = format!(
                    "{} (its amount alone is above `{}`'s cap)",
                    case.label, limit.name
                );
                return (Class::Limit, label, expect);
            }
        }
        keep
    }

    /// A user of the entities other than the attacker for whom `body` is
    /// not denied in a fresh session, else a user nobody defines.
    fn other_user(&mut self, body: &str) -> String {
        let users: Vec<String> = self
            .users
            .iter()
            .filter(|u| *u != self.user)
            .cloned()
            .collect();
        for u in users {
            let session = self.session();
            if Expect::NotDeny.holds(&self.decide(body, &u, &session)) {
                return u;
            }
        }
        "redteam-other-user".to_owned()
    }

    /// Approves the pending approval `d` names; whether there was one.
    fn approve(&mut self, d: &Decisions) -> bool {
        let id = d
            .decisions()
            .first()
            .and_then(|c| c.approval())
            .and_then(|a| ApprovalId::from_str(a.as_str()).ok());
        match id {
            Some(id) => self
                .store
                .approve(id, "redteam", "approved by toolgate redteam")
                .is_ok(),
            None => false,
        }
    }

    /// A session that runs past `[gate] max_turns`, with the first tool
    /// that needs no approval (or none: the run is reported untested).
    fn loop_run(&mut self, config: &Config, world: &World, names: &[String], rng: &mut Rng) {
        let max = config.gate().max_turns();
        // A tool no `[[limit]]` counts, so that only the turn cap stops it.
        let limited =
            |t: &toolgate::registry::Tool| config.limits().iter().any(|l| l.applies_to(t.name()));
        let Some((tool, args)) = config.registry().iter().find_map(|t| {
            if t.approval_required() || limited(t) {
                return None;
            }
            let target = Target::new(self.facts, t, names.to_vec(), self.user, world, rng);
            let base = target.base?;
            Some((
                t.name().to_owned(),
                canonical::to_string(&toolgate_json::Value::Object(base)),
            ))
        }) else {
            self.report.untested(
                "",
                "loop_run: no tool runs without approval, so no session was run to its turn cap",
            );
            return;
        };
        if max > 1000 {
            self.report.untested(
                &tool,
                "loop_run: `[gate] max_turns` is above 1000; the run to the cap was not tried",
            );
            return;
        }
        self.fresh_epoch();
        let session = self.session();
        let user = self.user.to_owned();
        for turn in 1..=max.saturating_add(1) {
            let id = format!("call_loop_{turn}");
            let body = wire::body(
                Wire::Openai,
                Some(&Call {
                    id: &id,
                    name: &tool,
                    args: &args,
                }),
                None,
                End::Complete,
            )
            .unwrap_or_default();
            let d = self.decide(&body, &user, &session);
            let (class, label, expect) = if turn <= max {
                (
                    Class::Valid,
                    format!("turn {turn} of {max}"),
                    Expect::NotDeny,
                )
            } else {
                (
                    Class::LoopRun,
                    format!("turn {turn}, past the session's cap of {max}"),
                    Expect::Deny,
                )
            };
            // Only the turns that fail and the last one are reported one by one.
            if turn > max || !expect.holds(&d) {
                self.report.push(Outcome::new(
                    &tool, class, &label, None, expect, &d, body, &user, &session,
                ));
            }
        }
    }
}

/// Writes each failing case's body and context into `dir`.
fn write_cases(dir: &Path, config: &Path, failures: &[&Outcome]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the cases folder `{}`", dir.display()))?;
    for f in failures {
        let (body_path, context_path) = f.case_files(dir);
        crate::report::write_file(&body_path, f.body.as_bytes())
            .with_context(|| format!("cannot write `{}`", body_path.display()))?;
        let context = format!(
            "{{\"session\":{},\"turn\":1,\"user\":{}}}\n",
            wire::quote(&f.session),
            wire::quote(&f.user)
        );
        crate::report::write_file(&context_path, context.as_bytes())
            .with_context(|| format!("cannot write `{}`", context_path.display()))?;
    }
    let _ = config;
    Ok(())
}
