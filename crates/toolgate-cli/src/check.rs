//! `toolgate check`: run the gate over raw provider responses.
//!
//! Each input is one response body as the provider sent it (JSON or an SSE
//! stream). The config gives the tools and limits; the context (optional)
//! gives the user, session, roles, turn, kill switch, approvals and the
//! caller's entities. Without `--context` the session is anonymous, at turn
//! 1, with no approvals and the kill switch off. Calls are authorized as the
//! config's `[authorization]` table says (Cedar policies; see
//! `toolgate::authz`), unless `--no-authorization` names the opt-out.
//!
//! # State
//!
//! By default the state lives in the config's store (`[store] url`, or
//! `--store URL`; see `toolgate_store::StoreGate`): the kill switch, approvals and
//! session counters come from it, every decision is audited in it before it
//! is printed, a call that needs approval gets a pending approval (its id in
//! the table and in `approval`), an approved call uses its approval once, and
//! time is the system clock. The context then gives only the user, session,
//! roles, turn and entities (a kill switch it carries applies too, the
//! stricter wins). The store counts the session's responses: a response is
//! decided at turn `max(responses so far + 1, the context's turn)`, so a
//! caller cannot reset the turn cap; and a non-read call whose call id the
//! store already allowed in the session is denied `replayed_call`. With
//! `--no-store` nothing is written and the context carries the state: its
//! kill switch, approvals (single and standing), rejections,
//! `allowed_calls` and `now`; it is then trusted for the turn.
//!
//! # Human output
//!
//! One block per input: a header line `NAME: FORMAT, finish KIND (REASON):
//! VERDICT` (`format not read` for a body refused before its format was
//! known; `no calls` for the verdict of a response that proposes none), one
//! line per response-level finding, then a table of the calls (index, call
//! id, tool, verdict, reasons as `code@pointer`, or `code` alone for the
//! call as a whole, followed by `[policy ids]` for an authorization denial). Call ids and
//! tool names come from the model: control characters are escaped and long
//! ones cut.
//!
//! # Wire format (`--json`)
//!
//! One JSON object per readable input, one per line (JSON Lines), in the
//! canonical form (RFC 8785: sorted keys, no whitespace). Members:
//!
//! | member | type | meaning |
//! |---|---|---|
//! | `input` | string | the file name as given (`-` for standard input) |
//! | `format` | string or `null` | the format read: `openai`, `responses`, `anthropic`, `gemini`, `mcp`; `null` if the body was refused before it was known |
//! | `streamed` | boolean | whether the body was an event stream |
//! | `finish` | object or `null` | `{"kind": …, "reason": …}`: kind is `complete`, `truncated`, `content_filtered`, `refused`, `malformed_call`, `paused`, `error` or `unknown`; reason is the provider's token |
//! | `verdict` | string | the response's verdict: `allow`, `needs_approval` or `deny` |
//! | `rejected` | object or `null` | why the body was refused as a whole: a reason (below) |
//! | `findings` | array | response-level reasons (a finish that is not complete, DSML or other markup in text, `calls_expected`, …), each a reason plus `denies` (boolean) |
//! | `decisions` | array | one object per proposed call, in order |
//!
//! A reason is `{"code": …, "pointer": …}` plus `"detail": …` when the stage
//! has a finer code (the URL guard's code for `url_policy`, the parser's
//! code for `body_invalid_json`). Codes are the stable list documented in
//! `toolgate::Code`. Pointers of findings and `rejected` are into the body;
//! pointers of a decision's reasons are into the call's arguments.
//!
//! A decision is `{"index", "call_id" (string or null), "tool", "verdict",
//! "reasons", "arguments" (for a call that is not denied, the canonical value
//! the gate checked: run the tool with this value, never with the model's
//! text; null for a denied call), "digest" (`sha256:…` of the canonical
//! arguments, the canonical text of `arguments`, or null when they did not
//! parse), "approval" (for an allow, the approval id used; for a
//! needs approval with the store, the pending approval's id; or null),
//! "policies" (the ids of the policies that decided at the authorization
//! stage, such as `refund-at-most-total` or `toolgate:default_deny`; empty
//! when an earlier stage denied), "pinned" (for each URL argument under a
//! resolve-mode policy, `resolve = true`, that passed: `{"pointer": …,
//! "addresses": ["93.184.216.34:443", …]}`, the
//! checked addresses with the URL's port, which are the only ones the tool
//! may connect to; empty otherwise), "feedback" (the text safe to return to
//! the model: codes and pointers only, never a policy id)}`.
//!
//! The text table does not print arguments; `--json` does, for the caller
//! that runs the tools.
//!
//! # Exit codes
//!
//! `0` every response allowed; `1` any response denied or needing approval;
//! `2` usage error, a config or context that does not load, or an unreadable
//! input (the other inputs are still checked).

use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate::{Code, Context, Decider, Decision, Decisions, Format, Gate, Reason, Verdict};
use toolgate_json::{canonical, Value};
use toolgate_store::StoreGate;

use crate::json_check::read_input;

/// The largest context file read, in bytes (bodies are bounded by `[gate] max_body_bytes`).
const MAX_BODY_BYTES: usize = toolgate::AdapterOptions::DEFAULT_MAX_STREAM_BYTES;

/// Flags of `toolgate check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The toolgate config (TOML): tools, schemas, policies, limits.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The provider format of the inputs, or `auto` to detect each one.
    #[arg(long, value_name = "FORMAT", default_value = "auto",
          value_parser = ["auto", "openai", "responses", "anthropic", "gemini", "mcp"])]
    format: String,

    /// The request context (JSON): user, session, roles, turn, max_turns,
    /// now, kill_switch, approvals, rejections, allowed_calls, entities.
    /// Unknown members are errors. Without it, calls are decided as the anonymous user "" in
    /// session "" at turn 1, and a warning says so.
    #[arg(long, value_name = "FILE")]
    context: Option<PathBuf>,

    /// Print one JSON object per input (JSON Lines) instead of tables.
    #[arg(long)]
    json: bool,

    /// DANGER: permit every call at the authorization stage (no per-user
    /// check), whatever the config's `[authorization]` says. Without it the
    /// config decides: Cedar policies, the explicit `mode = "none"`, or, when
    /// it names neither, every call that passes the earlier stages is denied
    /// `not_authorized`.
    #[arg(long)]
    no_authorization: bool,

    /// The store URL (`sqlite://PATH`, relative to the config's folder, or
    /// `sqlite:///ABS/PATH`, `sqlite::memory:`, or
    /// `postgres://USER@HOST:PORT/DB`) instead of the config's `[store] url`.
    #[arg(long, value_name = "URL", conflicts_with = "no_store")]
    store: Option<String>,

    /// Decide without a store: nothing is audited, and the context carries
    /// the kill switch, approvals, rejections and allowed call ids. The
    /// context is then TRUSTED for the turn: a caller that sends `turn: 1`
    /// every time is never stopped by `max_turns`, and a call id is a replay
    /// only if the context's `allowed_calls` names it. With a store, the
    /// store counts the session's responses and the call ids it allowed.
    #[arg(long)]
    no_store: bool,

    /// Response bodies (JSON or SSE); `-` reads standard input.
    #[arg(required = true, value_name = "RESPONSE")]
    inputs: Vec<PathBuf>,
}

/// Runs the command; the exit code follows the documented contract.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    // A config error names its file, line and column.
    let config = toolgate_edge::config::load(&args.config)?;
    let format: Format = args
        .format
        .parse()
        .map_err(|e| anyhow::anyhow!("--format: {e}"))?;
    let context = match &args.context {
        None => {
            eprintln!(
                "toolgate: warning: no --context: deciding as the anonymous user \"\" in session \"\" at turn 1"
            );
            Context::new("", "", 1)
        }
        Some(path) => {
            let bytes = crate::json_check::read_flag_file("--context", path, MAX_BODY_BYTES)?;
            // The strict parse first, for the line and column of a text
            // that is not JSON; the context's own rules after it.
            if let Err(e) = toolgate_json::from_slice(&bytes) {
                return Err(crate::json_check::not_strict_json("--context", path, &e));
            }
            Context::from_json(&bytes)
                .with_context(|| format!("cannot read context `{}`", path.display()))?
        }
    };
    let gate_config = config.gate();
    let gate = if args.no_authorization {
        let mut builder = Gate::builder(config.registry().clone())
            .gate_config(gate_config)
            .limits(config.limits().iter().cloned())
            .authorizer(toolgate::danger::NoAuthorization);
        // The config's `[resolver]`, as `Gate::from_config` gives it.
        if let Some(resolver) = config.resolver() {
            builder = builder.resolver(resolver.resolver());
        }
        builder.build().context("cannot build the gate")?
    } else {
        // Its error says which part failed ("cannot load the authorization
        // policies", "cannot build the gate"), its source why.
        Gate::from_config_with(&config, &toolgate_store::connect_source)?
    };
    let decider: Box<dyn Decider> = if args.no_store {
        Box::new(gate)
    } else {
        let store = crate::store_cmds::open(
            Some(&config),
            args.store.as_deref(),
            toolgate_store::StoreOptions::new(),
        )?;
        Box::new(StoreGate::new(gate, store).configured(&config))
    };

    let mut stdout = std::io::stdout().lock();
    let mut worst = Verdict::Allow;
    let mut unreadable = false;
    for path in &args.inputs {
        let name = path.display().to_string();
        let body = match read_input(path, gate_config.max_body_bytes()) {
            Ok(b) => b,
            Err(e) => {
                crate::report::error(&e);
                unreadable = true;
                continue;
            }
        };
        let decisions = decider.decide_body(&body, format, &context);
        worst = worst.max(decisions.verdict());
        if args.json {
            writeln!(
                stdout,
                "{}",
                canonical::to_string(&to_json(&name, &decisions))
            )?;
        } else {
            write_human(&mut stdout, &name, &decisions)?;
        }
    }
    stdout.flush()?;
    Ok(if unreadable {
        ExitCode::from(2)
    } else if worst == Verdict::Allow {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn write_human(out: &mut impl Write, name: &str, d: &Decisions) -> std::io::Result<()> {
    // A body refused before its format was read has none to name.
    let format = d.format().map_or("format not read", Format::as_str);
    // A response that proposes nothing is not an `allow`: nothing runs.
    let nothing = d.decisions().is_empty() && d.rejected().is_none();
    let verdict = if nothing && d.verdict() == Verdict::Allow {
        "no calls".to_owned()
    } else {
        d.verdict().to_string()
    };
    match &d.finish() {
        Some(f) => writeln!(
            out,
            "{name}: {format}, finish {} ({}): {verdict}",
            f.kind(),
            display(f.reason()),
        )?,
        None => writeln!(out, "{name}: {format}: {verdict}")?,
    }
    if let Some(r) = &d.rejected() {
        writeln!(out, "  rejected: {}", reason_text(r))?;
    }
    for r in d.findings() {
        let effect = if r.code.finding_denies() {
            "denies"
        } else {
            "reported"
        };
        writeln!(out, "  finding: {} ({effect})", reason_text(r))?;
    }
    if d.decisions().is_empty() {
        if nothing {
            writeln!(out, "  no calls: nothing runs")?;
        }
        return writeln!(out);
    }
    let rows: Vec<Vec<String>> = d
        .decisions()
        .iter()
        .map(|c| {
            vec![
                c.index().to_string(),
                c.call_id().map_or_else(|| "-".to_owned(), display),
                display(c.tool()),
                c.verdict().to_string(),
                reasons_cell(c),
            ]
        })
        .collect();
    crate::table::write(
        out,
        "  ",
        &["#", "call id", "tool", "verdict", "reasons"],
        &rows,
    )?;
    writeln!(out)
}

fn reasons_cell(d: &Decision) -> String {
    if d.reasons().is_empty() {
        return match d.approval() {
            Some(id) => format!("approved by {}", display(id.as_str())),
            None => "-".to_owned(),
        };
    }
    if d.verdict() == Verdict::NeedsApproval {
        if let Some(id) = d.approval() {
            return format!(
                "{} (approval {})",
                d.reasons()
                    .iter()
                    .map(|r| r.code.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                display(id.as_str())
            );
        }
    }
    let mut cell = d
        .reasons()
        .iter()
        .map(|r| {
            // `code@pointer`, or the code alone for the call as a whole.
            let mut s = if r.pointer.is_empty() {
                r.code.to_string()
            } else {
                format!("{}@{}", r.code, display(&r.pointer))
            };
            if let Some(detail) = r.detail {
                s.push_str(&format!("({detail})"));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(" ");
    // The policies that denied (authorization denials only).
    if d.verdict() == Verdict::Deny
        && !d.policies().is_empty()
        && d.reasons().iter().any(|r| {
            matches!(
                r.code,
                Code::NotAuthorized | Code::NotOwner | Code::AuthorizationError
            )
        })
    {
        let ids: Vec<String> = d.policies().iter().map(|p| display(p)).collect();
        cell.push_str(&format!(" [{}]", ids.join(", ")));
    }
    cell
}

fn reason_text(r: &Reason) -> String {
    let mut s = if r.pointer.is_empty() {
        r.code.to_string()
    } else {
        format!("{} at `{}`", r.code, display(&r.pointer))
    };
    if let Some(detail) = r.detail {
        s.push_str(&format!(" ({detail})"));
    }
    s
}

/// Text from the model, made safe for a terminal: control characters
/// escaped, at most 48 characters.
fn display(s: &str) -> String {
    terminal_safe(s, 48)
}

/// Text from outside (models, callers, the store) made safe for a terminal:
/// control characters, and characters that change how the text around them
/// reads or do not show ([`hidden`]), escaped; at most `max` characters,
/// `""` for nothing.
pub(crate) fn terminal_safe(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 8));
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() || hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str("\"\"");
    }
    out
}

/// Whether `c` changes how the text around it reads, or does not show:
/// the one table of hidden characters ([`toolgate::hidden`]), which the
/// approvals page escapes too.
pub(crate) fn hidden(c: char) -> bool {
    toolgate::hidden::is_hidden(c)
}

/// The `--json` object of one input (see the module documentation): the
/// library's wire form of the decisions, named by `input`.
pub fn to_json(name: &str, d: &Decisions) -> Value<'static> {
    let mut o = toolgate::wire::decisions_object(d);
    o.insert("input", Value::String(Cow::Owned(name.to_owned())));
    Value::Object(o)
}
