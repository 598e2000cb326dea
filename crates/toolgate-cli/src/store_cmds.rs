//! `toolgate audit`, `toolgate approvals` and `toolgate kill`: the store's
//! audit log, approvals and kill switch, for on-call humans.
//!
//! Every command finds the store through `--config FILE` (its `[store] url`,
//! relative to the config file's folder) or `--store URL`. `audit` commands
//! open the store read-only and never create it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use toolgate::config::Config;
use toolgate_store::StoreOptions;
use toolgate_store::{
    Approval, ApprovalFilter, ApprovalId, ApprovalState, AuditRecord, ErrorCode, KillMode,
    KillSwitchState, Store, Timestamp,
};

/// Where the store is: `--config` or `--store`.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// The toolgate config (TOML) whose `[store] url` names the store.
    #[arg(long, value_name = "FILE", required_unless_present = "store")]
    config: Option<PathBuf>,

    /// The store URL (`sqlite://PATH`, `sqlite:///ABS/PATH`,
    /// `postgres://USER@HOST:PORT/DB`), instead of the config's; a relative
    /// path is relative to the config's folder, or to the current folder
    /// without `--config`.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
}

impl StoreArgs {
    /// The config file `--config` names.
    pub fn config_path(&self) -> Option<&std::path::Path> {
        self.config.as_deref()
    }

    /// The config `--config` names, loaded; `None` without `--config`.
    pub fn config(&self) -> anyhow::Result<Option<Config>> {
        Ok(match &self.config {
            Some(path) => Some(toolgate_edge::config::load(path)?),
            None => None,
        })
    }

    /// Opens the store; `read_only` never creates or migrates it.
    pub fn open(&self, read_only: bool) -> anyhow::Result<Arc<dyn Store>> {
        self.open_with(read_only, true)
    }

    /// Opens the store; `advise` adds what to do when it cannot be opened
    /// (`toolgate migrate` does not advise running itself).
    fn open_with(&self, read_only: bool, advise: bool) -> anyhow::Result<Arc<dyn Store>> {
        let options = StoreOptions::new().read_only(read_only);
        let config = match &self.config {
            Some(path) => Some(toolgate_edge::config::load(path)?),
            None => None,
        };
        open_advised(config.as_ref(), self.store.as_deref(), options, advise)
    }
}

/// Opens the store named by `url` or else by `config` (its escalation
/// threshold applies either way).
pub fn open(
    config: Option<&Config>,
    url: Option<&str>,
    options: StoreOptions,
) -> anyhow::Result<Arc<dyn Store>> {
    open_advised(config, url, options, true)
}

fn open_advised(
    config: Option<&Config>,
    url: Option<&str>,
    options: StoreOptions,
    advise: bool,
) -> anyhow::Result<Arc<dyn Store>> {
    let (url, base, options) = match config {
        Some(c) => (
            url.unwrap_or(c.store().url()),
            c.base_dir().to_path_buf(),
            options.escalate_after(c.gate().escalate_after()),
        ),
        None => (url.unwrap_or_default(), PathBuf::from("."), options),
    };
    toolgate_store::open_store(url, &base, options).map_err(|e| {
        let err = anyhow::Error::new(e.clone());
        let shared = toolgate_store::StoreUrl::parse(url, &base).is_ok_and(|u| u.is_shared());
        match e.store_error().map(toolgate_store::Error::code) {
            _ if !advise => err.context("cannot open the store"),
            Some(ErrorCode::Unavailable) if shared => err.context(
                "the PostgreSQL store cannot be reached or is not prepared (`toolgate migrate` prepares it)",
            ),
            Some(ErrorCode::Unavailable) => err.context(
                "the store does not exist or cannot be opened (has `toolgate check` run yet?)",
            ),
            _ => err,
        }
    })
}

/// `toolgate migrate`: where the store is.
#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    store: StoreArgs,
}

/// Runs `toolgate migrate`: creates the store if needed and applies pending
/// migrations (safe while replicas run or start: PostgreSQL migrations take
/// an advisory lock, SQLite's a write lock), then checks that it answers.
pub fn migrate(args: &MigrateArgs) -> anyhow::Result<ExitCode> {
    // What was there before: a current schema opens read-only; an empty
    // database (or no SQLite file) has no schema at all.
    let before = match args.store.open_with(true, false) {
        Ok(store) => {
            drop(store);
            Before::Current
        }
        Err(e) => {
            let said = crate::report::render(&e);
            if said.contains("schema is version 0,")
                || said.contains("unable to open database file")
            {
                Before::Nothing
            } else {
                Before::Older
            }
        }
    };
    let store = args.store.open_with(false, false)?;
    store
        .ping()
        .context("the store was migrated but does not take writes")?;
    let shared = match &args.store.store {
        Some(url) => url.starts_with("postgres"),
        None => match &args.store.config {
            Some(path) => toolgate_edge::config::load(path)?
                .store()
                .url()
                .starts_with("postgres"),
            None => false,
        },
    };
    let (kind, version) = if shared {
        ("PostgreSQL", toolgate_store::PG_SCHEMA_VERSION)
    } else {
        ("SQLite", toolgate_store::SCHEMA_VERSION)
    };
    let said = match before {
        Before::Current => "store schema is current",
        Before::Nothing => "store schema created",
        Before::Older => "store schema migrated",
    };
    writeln!(std::io::stdout().lock(), "{said}: {kind} version {version}")?;
    Ok(ExitCode::SUCCESS)
}

/// The store's schema before `toolgate migrate` ran.
enum Before {
    /// At this build's version: nothing to do.
    Current,
    /// No schema at all: a new store.
    Nothing,
    /// An older version (or unreadable read-only): migrations applied.
    Older,
}

/// `toolgate audit …`.
#[derive(Debug, clap::Subcommand)]
pub enum AuditCommand {
    /// Walk the hash chain; name the first broken record. With
    /// `--checkpoints`, also check the log against every signed checkpoint
    /// in FILE (a log cut short and its head rewritten fails them).
    #[command(after_help = VERIFY_EXIT_CODES)]
    Verify {
        #[command(flatten)]
        store: StoreArgs,
        /// The checkpoints' sink (`[store] checkpoint_sink`, or a copy of
        /// it), checked with the public key of the config's
        /// `[store] checkpoint_key`.
        #[arg(long, value_name = "FILE")]
        checkpoints: Option<PathBuf>,
    },
    /// Write a signed checkpoint of the chain now, to the config's
    /// `[store] checkpoint_sink` and to the log.
    #[command(after_help = READ_EXIT_CODES)]
    Checkpoint {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Print the last records, oldest first.
    #[command(after_help = READ_EXIT_CODES)]
    Tail {
        #[command(flatten)]
        store: StoreArgs,
        /// How many records.
        #[arg(short = 'n', long, default_value_t = 20, value_name = "N")]
        lines: u32,
        /// One JSON object per record (the export's wire format) instead of
        /// one line of text.
        #[arg(long)]
        jsonl: bool,
    },
    /// Write every record as JSON Lines to standard output (the wire format
    /// documented in `toolgate_store::audit`, checkable without toolgate).
    #[command(after_help = READ_EXIT_CODES)]
    Export {
        #[command(flatten)]
        store: StoreArgs,
        /// The format: JSON Lines (the only one).
        #[arg(long, required = true)]
        jsonl: bool,
    },
}

const VERIFY_EXIT_CODES: &str = "\
Exit codes:
  0  the chain is intact (and every checkpoint holds)
  1  the chain is broken (the first broken record is named), or a
     checkpoint does not hold (each one is named)
  2  usage error, or a store that cannot be read";

const READ_EXIT_CODES: &str = "\
Exit codes:
  0  done
  2  usage error, or a store that cannot be read";

/// Runs `toolgate audit …`.
pub fn audit(command: &AuditCommand) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match command {
        AuditCommand::Verify { store, checkpoints } => {
            let opened = store.open(true)?;
            let v = opened.verify().context("cannot verify")?;
            let (seq, hash) = v.head;
            let held = match checkpoints {
                Some(file) => {
                    let key = checkpoint_config(store)?.key().to_path_buf();
                    let key = toolgate_store::CheckpointKey::from_file(&key)?.verifying();
                    let text = std::fs::read_to_string(file)
                        .with_context(|| format!("cannot read `{}`", file.display()))?;
                    let report = toolgate_store::verify_checkpoints(opened.as_ref(), &key, &text)
                        .context("cannot verify the checkpoints")?;
                    for f in &report.failures {
                        writeln!(out, "{f}")?;
                    }
                    writeln!(
                        out,
                        "checkpoints: {} read, {} do not hold",
                        report.checked,
                        report.failures.len()
                    )?;
                    report.failures.is_empty()
                }
                None => true,
            };
            match v.broken {
                None => {
                    writeln!(
                        out,
                        "audit log intact: {} records, head {seq} {hash}",
                        v.records
                    )?;
                    Ok(if held {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::from(1)
                    })
                }
                Some(b) => {
                    writeln!(
                        out,
                        "audit log broken at record {}: {} (last intact record {seq} {hash})",
                        b.seq,
                        b.kind.as_str()
                    )?;
                    Ok(ExitCode::from(1))
                }
            }
        }
        AuditCommand::Tail {
            store,
            lines,
            jsonl,
        } => {
            for r in store.open(true)?.tail(*lines).context("cannot read")? {
                if *jsonl {
                    writeln!(out, "{}", r.to_json())?;
                } else {
                    writeln!(out, "{}", record_line(&r))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Checkpoint { store } => {
            let c = checkpoint_config(store)?.clone();
            let key = toolgate_store::CheckpointKey::from_file(c.key())?;
            let now = {
                use toolgate_store::Clock as _;
                toolgate_store::SystemClock::new().now()
            };
            let written =
                toolgate_store::write_checkpoint(store.open(false)?.as_ref(), &key, c.sink(), now)
                    .context("cannot write the checkpoint")?;
            writeln!(
                out,
                "checkpoint {} of {} records written to {}",
                written.digest(),
                written.records,
                c.sink().display()
            )?;
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Export { store, .. } => {
            store
                .open(true)?
                .export_jsonl(&mut out)
                .context("cannot export")?;
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The config's `[store] checkpoint_*` (`--config` is needed).
fn checkpoint_config(store: &StoreArgs) -> anyhow::Result<toolgate::config::CheckpointConfig> {
    let path = store
        .config_path()
        .context("checkpoints need --config with [store] checkpoint_key and checkpoint_sink")?;
    let config = toolgate_edge::config::load(path)?;
    config
        .store()
        .checkpoint()
        .cloned()
        .with_context(|| format!("{}: [store] sets no checkpoint_key", path.display()))
}

/// `toolgate approvals …`.
#[derive(Debug, clap::Subcommand)]
pub enum ApprovalsCommand {
    /// List approvals, pending ones by default.
    #[command(after_help = READ_EXIT_CODES)]
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// Which: pending (unexpired), approved, denied, expired (no one
        /// decided in time) or all.
        #[arg(long, default_value = "pending",
              value_parser = ["pending", "approved", "denied", "expired", "withdrawn", "all"])]
        state: String,
        /// At most this many.
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// How the notices of held calls to the notification sinks
    /// (`[[approvals.notify]]`) went, the most recently changed first.
    #[command(after_help = READ_EXIT_CODES)]
    Notices {
        #[command(flatten)]
        store: StoreArgs,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Show one approval, with the arguments it is bound to.
    #[command(after_help = SHOW_EXIT_CODES)]
    Show {
        #[command(flatten)]
        store: StoreArgs,
        /// The approval's id.
        id: ApprovalId,
    },
    /// Approve a pending approval: exactly one identical call (same user,
    /// session, tool and argument digest) may then run once, before it
    /// expires.
    #[command(after_help = DECIDE_EXIT_CODES)]
    Approve {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        decision: DecisionArgs,
    },
    /// Deny a pending approval, or revoke an approved one not used yet.
    #[command(after_help = DECIDE_EXIT_CODES)]
    Deny {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        decision: DecisionArgs,
    },
    /// Grant a standing approval: TOOL for USER, with any arguments, in any
    /// session, until it expires (each use is audited). Revoke it with
    /// `approvals deny ID`.
    #[command(after_help = GRANT_EXIT_CODES)]
    Grant {
        #[command(flatten)]
        store: StoreArgs,
        /// The user it covers, exactly.
        #[arg(long)]
        user: String,
        /// The tool it covers, exactly.
        #[arg(long)]
        tool: String,
        /// The upstream it covers: only calls an MCP proxy routes there
        /// (`[mcp] upstream_name`, default `default`, or an HTTP upstream's
        /// name). Without it, only calls routed to no upstream (the API
        /// proxy, the hook, the service).
        #[arg(long, value_name = "NAME")]
        upstream: Option<String>,
        /// How long it lasts, in seconds (at most 30 days).
        #[arg(long, value_name = "SECONDS",
              value_parser = clap::value_parser!(u32).range(1..=2_592_000))]
        for_seconds: u32,
        /// A note for the audit log.
        #[arg(long, default_value = "")]
        note: String,
        /// Who grants it (default: `$USER`, else `cli`).
        #[arg(long)]
        actor: Option<String>,
    },
}

const GRANT_EXIT_CODES: &str = "\
Exit codes:
  0  granted (its id is printed)
  2  usage error, or a store that cannot be opened or written";

/// The id, note and actor of an approval decision.
#[derive(Debug, clap::Args)]
pub struct DecisionArgs {
    /// The approval's id.
    id: ApprovalId,
    /// A note for the audit log.
    #[arg(long, default_value = "")]
    note: String,
    /// Who decides (default: `$USER`, else `cli`).
    #[arg(long)]
    actor: Option<String>,
}

const SHOW_EXIT_CODES: &str = "\
Exit codes:
  0  shown
  1  no such approval
  2  usage error, or a store that cannot be opened";

const DECIDE_EXIT_CODES: &str = "\
Exit codes:
  0  done
  1  no such approval, or not in a state that allows it (already decided,
     used or expired)
  2  usage error, or a store that cannot be opened";

/// Runs `toolgate approvals …`.
pub fn approvals(command: &ApprovalsCommand) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match command {
        ApprovalsCommand::List {
            store,
            state,
            limit,
        } => {
            let mut filter = ApprovalFilter::new().limit(*limit);
            filter = match state.as_str() {
                "pending" => filter.state(ApprovalState::Pending),
                "approved" => filter.state(ApprovalState::Approved),
                "denied" => filter.state(ApprovalState::Denied),
                "expired" => filter.state(ApprovalState::Expired),
                "withdrawn" => filter.state(ApprovalState::Withdrawn),
                _ => filter,
            };
            let s = store.open(false)?;
            let list = s.list_approvals(&filter).context("cannot list approvals")?;
            if list.is_empty() {
                if state == "all" {
                    writeln!(out, "no approvals")?;
                } else {
                    writeln!(out, "no {state} approvals")?;
                }
            }
            if !list.is_empty() {
                // The upstream column when an approval of the page names
                // the MCP server its call goes to.
                let routed = list.iter().any(|a| a.upstream.is_some());
                let mut rows: Vec<Vec<String>> = Vec::with_capacity(list.len());
                for a in &list {
                    // What each call asked to do (canonical, secrets
                    // redacted), cut short and escaped for the terminal;
                    // `approvals show` prints all of it.
                    let asked = toolgate_store::asking_record(&*s, a).context("cannot read")?;
                    let mut row = approval_row(a, routed);
                    row.push(
                        asked
                            .as_ref()
                            .and_then(|e| e.arguments.as_deref())
                            .map_or_else(
                                || "-".to_owned(),
                                |t| crate::check::terminal_safe(t, LIST_ARGUMENTS_CHARS),
                            ),
                    );
                    rows.push(row);
                }
                let mut header = vec!["id", "state", "kind", "user", "session", "tool"];
                if routed {
                    header.push("upstream");
                }
                header.extend(["digest", "expires", "arguments"]);
                crate::table::write(&mut out, "", &header, &rows)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Notices { store, limit } => {
            let list = store
                .open(true)?
                .list_notices(*limit)
                .context("cannot list the notices")?;
            if list.is_empty() {
                writeln!(out, "no notices")?;
                return Ok(ExitCode::SUCCESS);
            }
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|n| {
                    vec![
                        n.approval.to_string(),
                        display(&n.sink),
                        n.state.as_str().to_owned(),
                        n.attempts.to_string(),
                        time(n.updated_at),
                        n.outcome.as_deref().map_or_else(|| "-".to_owned(), display),
                    ]
                })
                .collect();
            crate::table::write(
                &mut out,
                "",
                &[
                    "approval", "sink", "state", "attempts", "updated", "outcome",
                ],
                &rows,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Show { store, id } => {
            let config = store.config()?;
            let s = store.open(false)?;
            match s.get_approval(*id).context("cannot read")? {
                Some(a) => {
                    write_approval(&mut out, &a)?;
                    // What the approver decides on: the arguments of the
                    // call that asked (canonical, secrets redacted), why
                    // it was held, what else the session did; escaped for
                    // the terminal.
                    let limits: Vec<toolgate::limit::Limit> = config
                        .as_ref()
                        .map(|c| {
                            c.limits()
                                .iter()
                                .filter(|l| l.applies_to(&a.tool))
                                .cloned()
                                .collect()
                        })
                        .unwrap_or_default();
                    let why = toolgate_store::approval_context(&*s, &a, &limits, now()?)
                        .context("cannot read")?;
                    crate::approvals_why::write(&mut out, &why)?;
                    Ok(ExitCode::SUCCESS)
                }
                None => {
                    crate::report::message(&format!("no approval `{id}`"));
                    Ok(ExitCode::from(1))
                }
            }
        }
        ApprovalsCommand::Approve { store, decision }
        | ApprovalsCommand::Deny { store, decision } => {
            let grant = matches!(command, ApprovalsCommand::Approve { .. });
            let actor = actor(decision.actor.as_deref());
            let s = store.open(false)?;
            let result = if grant {
                s.approve(decision.id, &actor, &decision.note)
            } else {
                s.deny(decision.id, &actor, &decision.note)
            };
            match result {
                Ok(a) if grant && a.state == ApprovalState::Pending => {
                    writeln!(
                        out,
                        "approval {} approved by {}: {} of {} distinct approvers, still pending",
                        a.id,
                        display(&actor),
                        a.votes,
                        a.quorum.approvers
                    )?;
                    write_approval(&mut out, &a)?;
                    Ok(ExitCode::SUCCESS)
                }
                Ok(a) => {
                    writeln!(
                        out,
                        "approval {} {} by {}",
                        a.id,
                        a.state.as_str(),
                        display(&actor)
                    )?;
                    write_approval(&mut out, &a)?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::Conflict) => {
                    crate::report::message(e.message());
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(anyhow::Error::new(e).context("cannot decide the approval")),
            }
        }
        ApprovalsCommand::Grant {
            store,
            user,
            tool,
            upstream,
            for_seconds,
            note,
            actor: who,
        } => {
            if let Some(u) = upstream {
                if !toolgate::config::valid_upstream_name(u) {
                    anyhow::bail!(
                        "--upstream `{}`: must be 1 to {} letters, digits, `.`, `_` or `-`",
                        display(u),
                        toolgate::config::MAX_UPSTREAM_NAME_BYTES
                    );
                }
            }
            let actor = actor(who.as_deref());
            let now = now()?;
            let until = now.saturating_add(std::time::Duration::from_secs(u64::from(*for_seconds)));
            let id = store
                .open(false)?
                .grant_standing_for(user, tool, upstream.as_deref(), until, &actor, note)
                .context("cannot grant the approval")?;
            let route = match upstream {
                Some(u) => format!("routed to upstream `{}`", display(u)),
                None => "routed to no upstream".to_owned(),
            };
            writeln!(
                out,
                "approval {id} granted by {}: `{}` for user `{}` for {for_seconds} s (calls {route})",
                display(&actor),
                display(tool),
                display(user)
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `toolgate kill …`.
#[derive(Debug, clap::Subcommand)]
pub enum KillCommand {
    /// Turn the kill switch on: every process sharing the store honours it
    /// on its next decision.
    #[command(after_help = READ_EXIT_CODES)]
    On {
        #[command(flatten)]
        store: StoreArgs,
        /// `deny_all` denies every call; `deny_writes` lets reads run (the
        /// spelling of the API and of `kill status`; `deny-all` and
        /// `deny-writes` are accepted too).
        #[arg(
            long,
            default_value = "deny_all",
            value_parser = ["deny_all", "deny_writes", "deny-all", "deny-writes"],
            hide_possible_values = true
        )]
        mode: String,
        /// Why (recorded in the audit log).
        #[arg(long, required = true)]
        reason: String,
        /// Who (default: `$USER`, else `cli`).
        #[arg(long)]
        actor: Option<String>,
    },
    /// Turn the kill switch off.
    #[command(after_help = READ_EXIT_CODES)]
    Off {
        #[command(flatten)]
        store: StoreArgs,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
        /// Who (default: `$USER`, else `cli`).
        #[arg(long)]
        actor: Option<String>,
    },
    /// Print the kill switch.
    #[command(after_help = READ_EXIT_CODES)]
    Status {
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Runs `toolgate kill …`.
pub fn kill(command: &KillCommand) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let state = match command {
        KillCommand::On {
            store,
            mode,
            reason,
            actor: who,
        } => {
            let mode = if mode == "deny_writes" || mode == "deny-writes" {
                KillMode::DenyWrites
            } else {
                KillMode::DenyAll
            };
            store
                .open(false)?
                .set_kill_switch(mode, reason, &actor(who.as_deref()))
                .context("cannot flip the kill switch")?
        }
        KillCommand::Off {
            store,
            reason,
            actor: who,
        } => store
            .open(false)?
            .set_kill_switch(KillMode::Off, reason, &actor(who.as_deref()))
            .context("cannot flip the kill switch")?,
        KillCommand::Status { store } => store
            .open(false)?
            .kill_switch()
            .context("cannot read the kill switch")?,
    };
    writeln!(out, "{}", kill_line(&state))?;
    Ok(ExitCode::SUCCESS)
}

fn kill_line(k: &KillSwitchState) -> String {
    let mut s = format!("kill switch: {}", k.mode.as_str());
    if let Some(at) = k.changed_at {
        s.push_str(&format!(
            " (since {}, by {}",
            time(at),
            display(k.actor.as_deref().unwrap_or("?"))
        ));
        if let Some(r) = &k.reason {
            s.push_str(&format!(": {}", display(r)));
        }
        s.push(')');
    }
    s
}

pub(crate) fn actor(given: Option<&str>) -> String {
    given
        .map(str::to_owned)
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "cli".to_owned())
}

/// One approval as a row of `approvals list` (with the upstream column
/// when `routed`).
fn approval_row(a: &Approval, routed: bool) -> Vec<String> {
    let digest = a
        .digest
        .map(|d| d.to_string().chars().take(19).collect::<String>() + "…")
        .unwrap_or_else(|| "-".to_owned());
    let mut row = vec![
        a.id.to_string(),
        a.state.as_str().to_owned(),
        a.kind.as_str().to_owned(),
        display(&a.user),
        display(a.session.as_deref().unwrap_or("-")),
        display(&a.tool),
    ];
    if routed {
        row.push(display(a.upstream.as_deref().unwrap_or("-")));
    }
    row.extend([digest, time(a.expires_at)]);
    row
}

fn write_approval(out: &mut impl Write, a: &Approval) -> std::io::Result<()> {
    let opt = |s: Option<&str>| s.map_or_else(|| "-".to_owned(), display);
    writeln!(out, "id:         {}", a.id)?;
    writeln!(out, "kind:       {}", a.kind.as_str())?;
    writeln!(out, "state:      {}", a.state.as_str())?;
    writeln!(out, "user:       {}", display(&a.user))?;
    writeln!(out, "session:    {}", opt(a.session.as_deref()))?;
    writeln!(out, "tool:       {}", display(&a.tool))?;
    if let Some(upstream) = &a.upstream {
        writeln!(out, "upstream:   {}", display(upstream))?;
    }
    writeln!(
        out,
        "digest:     {}",
        a.digest.map_or_else(|| "-".to_owned(), |d| d.to_string())
    )?;
    writeln!(out, "created:    {}", time(a.created_at))?;
    writeln!(out, "expires:    {}", time(a.expires_at))?;
    writeln!(out, "decided by: {}", opt(a.decided_by.as_deref()))?;
    writeln!(
        out,
        "decided at: {}",
        a.decided_at.map_or_else(|| "-".to_owned(), time)
    )?;
    writeln!(out, "note:       {}", opt(a.note.as_deref()))?;
    writeln!(out, "uses:       {}", a.uses)?;
    if a.quorum.approvers > 1 || a.quorum.not_own {
        writeln!(
            out,
            "approvers:  {} of {} distinct{}",
            a.votes,
            a.quorum.approvers,
            if a.quorum.not_own {
                ", not the call's own user"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

/// The time now, by the system clock.
fn now() -> anyhow::Result<Timestamp> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .context("the system clock is before 1970")?;
    Ok(Timestamp::from_unix_millis(
        i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
    ))
}

/// The most characters of a call's arguments `approvals list` shows.
const LIST_ARGUMENTS_CHARS: usize = 60;

fn record_line(r: &AuditRecord) -> String {
    let e = &r.entry;
    let mut s = format!("{}  {}  {}", r.seq, time(e.time), e.verdict.as_str());
    for (k, v) in [
        ("user", e.user.as_deref()),
        ("session", e.session.as_deref()),
        ("tool", e.tool.as_deref()),
        ("call", e.call_id.as_deref()),
        ("risk", e.risk.as_deref()),
        ("actor", e.actor.as_deref()),
    ] {
        if let Some(v) = v {
            s.push_str(&format!("  {k}={}", display(v)));
        }
    }
    if let Some(id) = e.approval {
        s.push_str(&format!("  approval={id}"));
    }
    if !e.reasons.is_empty() {
        let reasons: Vec<String> = e.reasons.iter().map(|r| display(r)).collect();
        s.push_str(&format!("  reasons={}", reasons.join(",")));
    }
    if !e.policies.is_empty() {
        let policies: Vec<String> = e.policies.iter().map(|p| display(p)).collect();
        s.push_str(&format!("  policies={}", policies.join(",")));
    }
    // What was refused: its size here, its text in `--jsonl` and exports.
    if let Some(refused) = e
        .refused_arguments
        .as_deref()
        .and_then(|r| toolgate_json::from_str(r).ok())
    {
        if let Some(bytes) = refused
            .pointer("/bytes")
            .and_then(toolgate_json::Value::as_number)
        {
            s.push_str(&format!("  refused_arguments={}B", bytes.lexeme()));
        }
    }
    s
}

/// A time as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub(crate) fn time(t: Timestamp) -> String {
    let secs = t.unix_seconds();
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Text from the store (users, sessions and tools come from callers and
/// models), made safe for a terminal: control characters escaped, at most
/// 64 characters.
pub(crate) fn display(s: &str) -> String {
    crate::check::terminal_safe(s, 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc() {
        assert_eq!(time(Timestamp::EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            time(Timestamp::from_unix_seconds(1_767_225_600)),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            time(Timestamp::from_unix_seconds(951_825_599)),
            "2000-02-29T11:59:59Z"
        );
    }
}
