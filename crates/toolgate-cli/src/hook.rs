//! `toolgate hook`: the command hook of Claude Code, Codex CLI and Gemini
//! CLI. Reads one event on standard input, decides it, prints the agent's
//! answer and exits as the agent expects ([`toolgate::hook`] has the
//! protocols).
//!
//! # Before the tool
//!
//! 1. The config loads, the event is read strictly (bounded by the config's
//!    `[gate] max_body_bytes`), the store opens.
//! 2. Every file path of the input must lie inside the agent's working
//!    directory ([`toolgate::hook::outside_project`]); one outside is
//!    denied `path_outside_project` (audited).
//! 3. The call is decided by the store gate of the config (the paved path,
//!    `StoreGate::from_config`) as an MCP `tools/call` of the event's tool
//!    name and input, for `--user` in session `AGENT:SESSION_ID`: audited,
//!    counted per agent session (each call is one turn), approvals bound
//!    and used once, the kill switch honoured.
//! 4. Allowed: the agent is answered with the canonical arguments where it
//!    takes a replaced input; held for approval: the agent's own "ask"
//!    (`--on-hold ask`, or `--ask TOOL`; Claude Code only) or a toolgate
//!    approval with the model told to retry; denied: the feedback (codes
//!    and pointers only).
//!
//! # After the tool
//!
//! The result is sanitized ([`toolgate::sanitize`]), audited as a
//! `tool_result` record, and what was found is reported as the agent's
//! protocol allows.
//!
//! # Failing closed
//!
//! Any error (a config, store or event that cannot be read, a decision
//! that takes longer than `--timeout-ms`) blocks the call: exit code 2 and
//! `toolgate: blocked: CODE` on standard error, never an allow.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use toolgate::hook::{outside_project, Agent, Answer, HookEvent, OnHold, Phase};
use toolgate::sanitize::{sanitize_str, SanitizeOptions};
use toolgate::{Context, Format};
use toolgate_json::canonical::{self, Digest};
use toolgate_store::{
    ApprovalId, AuditEntry, AuditFilter, AuditVerdict, Clock, Store, StoreGate, StoreOptions,
    SystemClock,
};

/// Flags of `toolgate hook`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent whose hook protocol is spoken.
    #[arg(long, value_parser = ["claude", "codex", "gemini"])]
    agent: String,

    /// The toolgate config (TOML): the agent's tools, policies, store.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The user the calls are decided for (the Cedar principal).
    #[arg(long, value_name = "NAME", default_value = "developer")]
    user: String,

    /// How a call held for approval is answered: `approval` (a toolgate
    /// approval; the model is told to retry once a human approved it) or
    /// `ask` (the agent's own prompt, where it has one: Claude Code).
    #[arg(long, value_name = "MODE", default_value = "approval", value_parser = ["approval", "ask"])]
    on_hold: String,

    /// A tool whose held calls use the agent's own "ask" whatever
    /// `--on-hold` says (repeatable).
    #[arg(long = "ask", value_name = "TOOL")]
    ask: Vec<String>,

    /// The longest the hook takes before it blocks the call, in
    /// milliseconds (keep it well under the agent's hook timeout).
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    timeout_ms: u64,

    /// The store URL instead of the config's `[store] url`.
    #[arg(long, value_name = "URL")]
    store: Option<String>,

    /// Where the hook remembers the Cedar policy texts that type-checked,
    /// so that the next run skips type-checking the very same text, and
    /// keeps the Cedar schema's JSON form, read instead of the very same
    /// schema text (default: `$XDG_CACHE_HOME/toolgate`, else
    /// `$HOME/.cache/toolgate`).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Parse the Cedar schema and type-check the policies on every run;
    /// remember nothing.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
}

/// Runs the hook. Always answers the agent itself: every error becomes a
/// blocked call (exit code 2), so this never returns an error.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let Ok(agent) = args.agent.parse::<Agent>() else {
        return Ok(emit(&Answer::blocked("unknown_agent")));
    };
    // The watchdog answers for the hook if the decision is late: the call
    // is blocked, and the process ends before the agent's own timeout.
    let lock = Arc::new(Mutex::new(false));
    {
        let lock = Arc::clone(&lock);
        let timeout = Duration::from_millis(args.timeout_ms);
        std::thread::spawn(move || {
            std::thread::sleep(timeout);
            let answered = lock.lock().unwrap_or_else(PoisonError::into_inner);
            if !*answered {
                let _ = std::io::stderr().write_all(Answer::blocked("timeout").stderr.as_bytes());
                std::process::exit(2);
            }
            drop(answered);
        });
    }
    let answer = decide(args, agent);
    let mut answered = lock.lock().unwrap_or_else(PoisonError::into_inner);
    *answered = true;
    Ok(emit(&answer))
}

fn emit(answer: &Answer) -> ExitCode {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(answer.stdout.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        let _ = std::io::stderr().write_all(Answer::blocked("output_failed").stderr.as_bytes());
        return ExitCode::from(2);
    }
    let _ = std::io::stderr().write_all(answer.stderr.as_bytes());
    ExitCode::from(answer.exit)
}

/// The folder validated policy texts are remembered in, if any.
fn cache_dir(args: &Args) -> Option<PathBuf> {
    if args.no_cache {
        return None;
    }
    if let Some(dir) = &args.cache_dir {
        return Some(dir.clone());
    }
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env("HOME")
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })
        .map(|base| base.join("toolgate"))
}

fn decide(args: &Args, agent: Agent) -> Answer {
    if let Some(dir) = cache_dir(args) {
        toolgate::authz::remember_validations(dir);
    }
    let Ok(config) = toolgate_edge::config::load(&args.config) else {
        return Answer::blocked("config_unavailable");
    };
    let max = config.gate().max_body_bytes();
    let mut body = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut body);
    if read.is_err() {
        return Answer::blocked("unreadable_event");
    }
    if body.len() > max {
        return Answer::blocked("event_too_large");
    }
    let event = match HookEvent::parse(agent, &body) {
        Ok(e) => e,
        Err(e) => {
            let code = if e.pointer().is_empty() {
                format!("unreadable_event ({})", e.code())
            } else {
                format!("unreadable_event ({} at {})", e.code(), e.pointer())
            };
            return Answer::blocked(&code);
        }
    };
    let Ok(store) = crate::store_cmds::open(
        Some(&config),
        args.store.as_deref(),
        StoreOptions::new().short_lived(true),
    ) else {
        return Answer::blocked("store_unavailable");
    };
    let note = format!("hook:{agent}");
    match event.phase() {
        Phase::Before => {
            if let Some(pointer) = outside_project(&event) {
                let entry = entry_for(&args.user, &event, AuditVerdict::Deny, &note)
                    .reason("path_outside_project")
                    .digest(canonical::digest(event.tool_input()));
                if store.append(entry).is_err() {
                    return Answer::blocked("store_unavailable");
                }
                let reason = format!("denied by toolgate: path_outside_project at {pointer}");
                return Answer::deny(agent, &reason, None);
            }
            let Ok(gate) = StoreGate::from_config(&config, store) else {
                return Answer::blocked("config_unavailable");
            };
            let context = Context::new(args.user.as_str(), event.session(), 1);
            let decisions = gate.decide_and_record_once(&event.call_body(), Format::Mcp, &context);
            let rejected = decisions
                .rejected()
                .map_or("internal_error", |r| r.code.as_str());
            let hold = if asks(args, &event) {
                OnHold::Ask
            } else {
                OnHold::Approval
            };
            Answer::before(&event, decisions.decisions().first(), rejected, hold)
        }
        Phase::After => {
            let text = event.result_text().unwrap_or_default();
            let clean = sanitize_str(&text, &SanitizeOptions::new());
            let mut entry = entry_for(&args.user, &event, AuditVerdict::ToolResult, &note)
                .digest(Digest::of(text.as_bytes()));
            let mut codes: Vec<&str> = Vec::new();
            for f in &clean.findings {
                if !codes.contains(&f.code.as_str()) {
                    codes.push(f.code.as_str());
                }
            }
            for c in codes {
                entry = entry.reason(c);
            }
            if store.append(entry).is_err() {
                return Answer::blocked("store_unavailable");
            }
            // A call held and answered with the agent's own "ask" ran: its
            // user approved it at the agent's prompt. Recorded as such.
            if agent == Agent::Claude && asks(args, &event) {
                if let Some(id) = asked_approval(store.as_ref(), &event) {
                    let granted =
                        entry_for(&args.user, &event, AuditVerdict::ApprovalGranted, &note)
                            .approval(id)
                            .actor(format!("agent:{agent}"))
                            .note("approved at the agent's own prompt; the tool ran");
                    if store.append(granted).is_err() {
                        return Answer::blocked("store_unavailable");
                    }
                }
            }
            Answer::after(agent, &clean)
        }
    }
}

/// The audit record of a hook event decided here (not by the gate).
fn entry_for(user: &str, event: &HookEvent, verdict: AuditVerdict, note: &str) -> AuditEntry {
    let mut e = AuditEntry::new(SystemClock::new().now(), verdict)
        .user(user)
        .session(event.session())
        .tool(event.tool_name())
        .note(note);
    if let Some(id) = event.tool_use_id() {
        e = e.call_id(id);
    }
    e
}

/// Whether held calls of this event's tool are answered with the agent's
/// own "ask".
fn asks(args: &Args, event: &HookEvent) -> bool {
    args.on_hold == "ask" || args.ask.iter().any(|t| t == event.tool_name())
}

/// The pending approval the gate opened for this very call (its session,
/// tool and call id) when it was held, if any.
fn asked_approval(store: &dyn Store, event: &HookEvent) -> Option<ApprovalId> {
    let call_id = event.tool_use_id()?;
    let filter = AuditFilter::new()
        .session(event.session())
        .tool(event.tool_name())
        .verdict(AuditVerdict::NeedsApproval)
        .newest_first()
        .limit(50);
    store
        .list(&filter)
        .ok()?
        .into_iter()
        .find(|r| r.entry.call_id.as_deref() == Some(call_id))
        .and_then(|r| r.entry.approval)
}
