//! `toolgate pins`: the tool definitions MCP servers showed `toolgate mcp`,
//! pinned in the store per upstream; a human lists them, reads what changed
//! and approves or rejects a definition.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate_store::{diff_definitions, ErrorCode, PinFilter, PinId, PinState, Store, ToolPin};

use crate::store_cmds::StoreArgs;

/// Which upstream: `--upstream`, else the config's `[mcp] upstream_name`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamArgs {
    /// The upstream (MCP server) whose pins these are (default: the
    /// config's `[mcp] upstream_name`, else `default`).
    #[arg(long, value_name = "NAME")]
    upstream: Option<String>,
}

/// Which pin of a tool: its name, and its id when it has several.
#[derive(Debug, Clone, clap::Args)]
pub struct PinArgs {
    /// The tool's name, exactly as the server lists it.
    tool: String,
    /// The pin's id (from `pins list`), when the tool has several
    /// definitions waiting, or to approve a rejected one.
    #[arg(long)]
    id: Option<PinId>,
}

/// `toolgate pins …`.
#[derive(Debug, clap::Subcommand)]
pub enum PinsCommand {
    /// List the pinned tool definitions of the upstream, pending ones by
    /// default.
    #[command(after_help = LIST_EXIT_CODES)]
    List {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        upstream: UpstreamArgs,
        /// Which: pending (waiting for a human), approved, rejected or all.
        #[arg(long, default_value = "pending",
              value_parser = ["pending", "approved", "rejected", "all"])]
        state: String,
    },
    /// Show a tool's definition waiting for a human (or the one `--id`
    /// names): its findings, and a diff from the definition approved last
    /// (which members changed, then the lines of both in canonical pretty
    /// form).
    #[command(after_help = DECIDE_EXIT_CODES)]
    Show {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        upstream: UpstreamArgs,
        #[command(flatten)]
        pin: PinArgs,
    },
    /// Approve a tool's definition waiting for a human (or the one `--id`
    /// names): `toolgate mcp` shows the tool and lets its calls through
    /// from its next list.
    #[command(after_help = DECIDE_EXIT_CODES)]
    Approve {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        upstream: UpstreamArgs,
        #[command(flatten)]
        pin: PinArgs,
        /// A note for the audit log.
        #[arg(long, default_value = "")]
        note: String,
        /// Who approves (default: `$USER`, else `cli`).
        #[arg(long)]
        actor: Option<String>,
    },
    /// Reject a tool's definition waiting for a human, or revoke an
    /// approved one (`--id`): the tool stays hidden and its calls denied.
    #[command(after_help = DECIDE_EXIT_CODES)]
    Reject {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        upstream: UpstreamArgs,
        #[command(flatten)]
        pin: PinArgs,
        /// A note for the audit log.
        #[arg(long, default_value = "")]
        note: String,
        /// Who rejects (default: `$USER`, else `cli`).
        #[arg(long)]
        actor: Option<String>,
    },
}

const LIST_EXIT_CODES: &str = "\
Exit codes:
  0  done
  2  usage error, or a store that cannot be read";

const DECIDE_EXIT_CODES: &str = "\
Exit codes:
  0  done
  1  no such pin, several waiting (name one with --id), or not in a state
     that allows it (already approved or rejected)
  2  usage error, or a store that cannot be opened";

/// Runs `toolgate pins …`.
pub fn run(command: &PinsCommand) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match command {
        PinsCommand::List {
            store,
            upstream,
            state,
        } => {
            let upstream = upstream_name(store, upstream)?;
            let mut filter = PinFilter::new().upstream(upstream.as_str()).limit(1000);
            if let Some(s) = PinState::parse(state) {
                filter = filter.state(s);
            }
            let s = store.open(false)?;
            let pins = s.list_pins(&filter).context("cannot list the tool pins")?;
            if let Some(c) = s
                .latest_catalog(&upstream)
                .context("cannot read the catalog")?
            {
                writeln!(
                    out,
                    "upstream {}: latest catalog {} ({} tools, last seen {})",
                    display(&upstream),
                    c.digest,
                    c.tools,
                    crate::store_cmds::time(c.last_seen)
                )?;
            }
            if pins.is_empty() {
                writeln!(
                    out,
                    "no {state} tool pins for upstream {}",
                    display(&upstream)
                )?;
                return Ok(ExitCode::SUCCESS);
            }
            let rows: Vec<Vec<String>> = pins.iter().map(row).collect();
            crate::table::write(
                &mut out,
                "",
                &["id", "state", "tool", "digest", "first seen", "findings"],
                &rows,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        PinsCommand::Show {
            store,
            upstream,
            pin,
        } => {
            let upstream = upstream_name(store, upstream)?;
            let s = store.open(false)?;
            let Some(p) = find(&*s, &upstream, pin)? else {
                return Ok(ExitCode::from(1));
            };
            write_pin(&mut out, &*s, &p)?;
            Ok(ExitCode::SUCCESS)
        }
        PinsCommand::Approve {
            store,
            upstream,
            pin,
            note,
            actor,
        }
        | PinsCommand::Reject {
            store,
            upstream,
            pin,
            note,
            actor,
        } => {
            let approve = matches!(command, PinsCommand::Approve { .. });
            let upstream = upstream_name(store, upstream)?;
            let actor = crate::store_cmds::actor(actor.as_deref());
            let s = store.open(false)?;
            let Some(p) = find(&*s, &upstream, pin)? else {
                return Ok(ExitCode::from(1));
            };
            let result = if approve {
                s.approve_pin(p.id, &actor, note)
            } else {
                s.reject_pin(p.id, &actor, note)
            };
            match result {
                Ok(p) => {
                    writeln!(
                        out,
                        "pin {} of `{}` ({}) {} by {}",
                        p.id,
                        display(&p.tool),
                        p.digest,
                        p.state,
                        display(&actor)
                    )?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::Conflict) => {
                    crate::report::message(e.message());
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(anyhow::Error::new(e).context("cannot decide the pin")),
            }
        }
    }
}

/// The upstream named by `--upstream`, else by the config, else `default`.
fn upstream_name(store: &StoreArgs, upstream: &UpstreamArgs) -> anyhow::Result<String> {
    if let Some(u) = &upstream.upstream {
        if !toolgate::config::valid_upstream_name(u) {
            anyhow::bail!(
                "--upstream `{}`: must be 1 to {} letters, digits, `.`, `_` or `-`",
                display(u),
                toolgate::config::MAX_UPSTREAM_NAME_BYTES
            );
        }
        return Ok(u.clone());
    }
    match store.config_path() {
        Some(path) => {
            let config = toolgate_edge::config::load(path)?;
            Ok(toolgate_edge::config::McpConfig::from_config(&config)?
                .upstream_name()
                .to_owned())
        }
        None => Ok(toolgate::config::DEFAULT_UPSTREAM_NAME.to_owned()),
    }
}

/// The pin `args` names: by id (of this upstream and tool), else the one
/// pending definition of the tool. `None` after saying why not.
fn find(store: &dyn Store, upstream: &str, args: &PinArgs) -> anyhow::Result<Option<ToolPin>> {
    if let Some(id) = args.id {
        let p = store.get_pin(id).context("cannot read the pin")?;
        return Ok(match p {
            Some(p) if p.upstream == upstream && p.tool == args.tool => Some(p),
            _ => {
                crate::report::message(&format!(
                    "no pin `{id}` of `{}` for upstream {}",
                    display(&args.tool),
                    display(upstream)
                ));
                None
            }
        });
    }
    let pending = store
        .list_pins(
            &PinFilter::new()
                .upstream(upstream)
                .tool(args.tool.as_str())
                .state(PinState::Pending)
                .limit(1000),
        )
        .context("cannot list the tool pins")?;
    match pending.as_slice() {
        [one] => Ok(Some(one.clone())),
        [] => {
            crate::report::message(&format!(
                "no definition of `{}` waits for a human (upstream {}; `toolgate pins list --state all`)",
                display(&args.tool),
                display(upstream)
            ));
            Ok(None)
        }
        several => {
            let ids: Vec<String> = several.iter().map(|p| p.id.to_string()).collect();
            crate::report::message(&format!(
                "{} definitions of `{}` wait for a human (pins {}): name one with --id",
                several.len(),
                display(&args.tool),
                ids.join(", ")
            ));
            Ok(None)
        }
    }
}

fn write_pin(out: &mut impl Write, store: &dyn Store, p: &ToolPin) -> anyhow::Result<()> {
    let opt = |s: Option<&str>| s.map_or_else(|| "-".to_owned(), display);
    writeln!(out, "pin:        {}", p.id)?;
    writeln!(out, "upstream:   {}", display(&p.upstream))?;
    writeln!(out, "tool:       {}", display(&p.tool))?;
    writeln!(out, "state:      {}", p.state)?;
    writeln!(out, "digest:     {}", p.digest)?;
    writeln!(out, "first seen: {}", crate::store_cmds::time(p.first_seen))?;
    writeln!(out, "last seen:  {}", crate::store_cmds::time(p.last_seen))?;
    writeln!(out, "decided by: {}", opt(p.decided_by.as_deref()))?;
    writeln!(out, "note:       {}", opt(p.note.as_deref()))?;
    if p.findings.is_empty() {
        writeln!(out, "findings:   none")?;
    } else {
        writeln!(out, "findings:")?;
        for f in &p.findings {
            writeln!(out, "  - {}", display(f))?;
        }
    }
    let before = toolgate_store::approved_before(store, p).context("cannot list the tool pins")?;
    match &before {
        Some(b) => writeln!(
            out,
            "\ndiff from the approved definition (pin {}, {}):",
            b.id, b.digest
        )?,
        None => writeln!(
            out,
            "\nno definition of `{}` was approved before: all of it is new",
            display(&p.tool)
        )?,
    }
    let diff = diff_definitions(
        before.as_ref().map(|b| b.definition.as_str()),
        &p.definition,
    );
    out.write_all(diff.render().as_bytes())?;
    Ok(())
}

/// One pin as a row of `pins list`.
fn row(p: &ToolPin) -> Vec<String> {
    vec![
        p.id.to_string(),
        p.state.to_string(),
        display(&p.tool),
        p.digest.to_string().chars().take(19).collect::<String>() + "…",
        crate::store_cmds::time(p.first_seen),
        p.findings.len().to_string(),
    ]
}

fn display(s: &str) -> String {
    crate::check::terminal_safe(s, 64)
}
