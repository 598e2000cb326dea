//! `toolgate narrow`: the tools array one user may be offered, each resource
//! argument narrowed to an `enum` of the ids the Cedar policies let that
//! user touch (see `toolgate::CedarAuthorizer::narrow`).
//!
//! Prints one JSON array (canonical form) in the OpenAI Chat Completions
//! `tools` shape (default) or the Anthropic Messages `tools` shape. Tools the
//! user cannot call at all are left out. The gate still checks every call.
//!
//! # Exit codes
//!
//! `0` the array was printed; `2` usage error, a config, policies or
//! entities that do not load.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate::authz::{self, ToolsFormat};
use toolgate::config::Config;
use toolgate::Context;
use toolgate_json::canonical;

use crate::json_check::read_input;

/// The largest entities file read, in bytes.
const MAX_ENTITIES_BYTES: usize = 64 << 20;

/// Flags of `toolgate narrow`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The toolgate config (TOML) with Cedar `[authorization]`.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The user the tools are for (the Cedar principal `User::"ID"`).
    #[arg(long, value_name = "ID")]
    user: String,

    /// A role of the user (`Role::"ROLE"`, a parent of the principal); may
    /// be repeated. Counted as a decision context's `roles` are: only for a
    /// user the static entities do not define, and only if the config's
    /// `[authorization] context_entities` names `User`.
    #[arg(long = "role", value_name = "ROLE")]
    roles: Vec<String>,

    /// The user's entities (Cedar entity JSON: an array), added to the
    /// config's static entities as a decision context's `entities` are: only
    /// of the types `[authorization] context_entities` names.
    #[arg(long, value_name = "FILE")]
    entities: Option<PathBuf>,

    /// Also leave out the tools whose `[[limit]]`s this user (and
    /// `--session`, and everyone for `global` ones) has used up in their
    /// window, reading the config's store.
    #[arg(long)]
    usage: bool,

    /// The session, for `--usage`'s `per = "session"` limits.
    #[arg(long, value_name = "ID", requires = "usage")]
    session: Option<String>,

    /// The shape of the tools array.
    #[arg(long, value_name = "FORMAT", default_value = "openai",
          value_parser = ["openai", "anthropic"])]
    format: String,
}

/// Runs the command.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let config = toolgate_edge::config::load(&args.config)?;
    let authorizer = authz::from_config_with(&config, &toolgate_store::connect_source)
        .context("cannot load the authorization policies")?;
    let cedar = authorizer.cedar().ok_or_else(|| {
        anyhow::anyhow!(
            "config `{}` names no cedar policies (`[authorization] policies`)",
            args.config.display()
        )
    })?;
    let mut context = Context::new(args.user.clone(), "", 1);
    context.roles.clone_from(&args.roles);
    if let Some(path) = &args.entities {
        let bytes = read_input(path, MAX_ENTITIES_BYTES)?;
        let value = toolgate_json::from_slice(&bytes)
            .with_context(|| format!("entities `{}` are not strict json", path.display()))?;
        context.entities = Some(value.into_owned());
    }
    let mut narrowed = cedar
        .narrow(config.registry(), &context)
        .context("cannot narrow the tools")?;
    if args.usage {
        let hidden = exhausted_tools(&config, &args.user, args.session.as_deref())?;
        narrowed.tools.retain(|t| !hidden.contains(&t.name));
    }
    let format = match args.format.as_str() {
        "anthropic" => ToolsFormat::Anthropic,
        _ => ToolsFormat::OpenAi,
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        canonical::to_string(&narrowed.to_json(format))
    )?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The tools some limit counting this user, session or everyone has used
/// up now, read from the config's store.
fn exhausted_tools(
    config: &Config,
    user: &str,
    session: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    use toolgate_store::{Clock as _, SystemClock, UsageOf};
    let store = crate::store_cmds::open(Some(config), None, toolgate_store::StoreOptions::new())?;
    let of = UsageOf {
        user,
        session,
        token: None,
    };
    toolgate_store::exhausted_tools(
        store.as_ref(),
        config.limits(),
        of,
        SystemClock::new().now(),
    )
    .context("cannot read the usage of the limits")
}
