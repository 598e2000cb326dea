//! `toolgate usage`: what a user, session or token has used of each
//! configured `[[limit]]`, and the labels a session holds, read from the
//! store (the counts the gate decides with).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{anyhow, Context as _};
use toolgate::limit::Scope;
use toolgate_store::{Clock as _, SystemClock};

use crate::store_cmds::StoreArgs;

/// `toolgate usage …`.
#[derive(Debug, clap::Args)]
pub struct UsageArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// The user whose `per = "user"` limits to show.
    #[arg(long)]
    user: Option<String>,
    /// The session whose `per = "session"` limits and labels to show.
    #[arg(long)]
    session: Option<String>,
    /// The token whose `per = "token"` limits to show.
    #[arg(long)]
    token: Option<String>,
    /// Forget the counted calls of this `[[limit]]` for the user, session
    /// or token given (audited `limit_reset`, with `--reason`).
    #[arg(long, value_name = "LIMIT", requires = "reason")]
    reset: Option<String>,
    /// Why the reset (recorded in the audit log).
    #[arg(long)]
    reason: Option<String>,
    /// Who resets (default: `$USER`, else `cli`).
    #[arg(long)]
    actor: Option<String>,
}

/// Runs `toolgate usage`: one line per limit counting the given user,
/// session or token (and the `global` ones), then the session's labels.
pub fn usage(args: &UsageArgs) -> anyhow::Result<ExitCode> {
    let path = args
        .store
        .config_path()
        .ok_or_else(|| anyhow!("`usage` needs `--config` (the limits are the config's)"))?;
    let config = toolgate_edge::config::load(path).map_err(|e| anyhow!("{e}"))?;
    let store = args.store.open(args.reset.is_none())?;
    let mut out = std::io::stdout().lock();
    if let Some(name) = &args.reset {
        let limit = config
            .limits()
            .iter()
            .find(|l| l.name == *name)
            .ok_or_else(|| anyhow!("the config has no `[[limit]]` named `{name}`"))?;
        let key = match limit.scope {
            Scope::User => limit.key(
                args.user
                    .as_deref()
                    .ok_or_else(|| anyhow!("`{name}` counts per user: give `--user`"))?,
                "",
                None,
            ),
            Scope::Session => limit.key(
                "",
                args.session
                    .as_deref()
                    .ok_or_else(|| anyhow!("`{name}` counts per session: give `--session`"))?,
                None,
            ),
            Scope::Token => limit.key(
                "",
                "",
                Some(
                    args.token
                        .as_deref()
                        .ok_or_else(|| anyhow!("`{name}` counts per token: give `--token`"))?,
                ),
            ),
            _ => limit.key("", "", None),
        };
        let actor = crate::store_cmds::actor(args.actor.as_deref());
        let n = store
            .reset_limit(&key, &actor, args.reason.as_deref().unwrap_or_default())
            .context("cannot reset the limit")?;
        writeln!(
            out,
            "reset {}: {n} counted calls forgotten",
            crate::store_cmds::display(&key)
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let now = SystemClock::new().now();
    for limit in config.limits() {
        let (who, key) = match limit.scope {
            Scope::User => match &args.user {
                Some(u) => (format!("user {u}"), limit.key(u, "", None)),
                None => continue,
            },
            Scope::Session => match &args.session {
                Some(s) => (format!("session {s}"), limit.key("", s, None)),
                None => continue,
            },
            Scope::Token => match &args.token {
                Some(t) => (format!("token {t}"), limit.key("", "", Some(t))),
                None => continue,
            },
            _ => ("everyone".to_owned(), limit.key("", "", None)),
        };
        let used = toolgate_store::used_of(&*store, limit, &key, now)
            .with_context(|| format!("cannot read the usage of `{}`", limit.name))?;
        writeln!(
            out,
            "limit {} ({}): {used} of {} in the last {} s",
            limit.name,
            crate::store_cmds::display(&who),
            limit.cap(),
            limit.window_seconds
        )?;
    }
    if let Some(session) = &args.session {
        let labels = store
            .session_labels(session)
            .context("cannot read the session's labels")?;
        writeln!(
            out,
            "session {} labels: {}",
            crate::store_cmds::display(session),
            if labels.is_empty() {
                "none".to_owned()
            } else {
                labels.join(", ")
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
