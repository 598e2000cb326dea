//! `toolgate mcp`: an MCP server behind the gate, over stdio. The MCP
//! client starts `toolgate mcp --config C -- SERVER_CMD ARGS…` instead of
//! the server; toolgate starts the server as its child (with only the
//! environment variables `[mcp] env` names, its standard error passed
//! through) and sits between them (see `toolgate_mcp`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use toolgate_mcp::{Ended, Proxy, ProxyOptions};
use toolgate_store::StoreGate;

/// Flags of `toolgate mcp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The toolgate config (TOML): tools, policies, store, and the `[mcp]`
    /// table (user, the server's environment, frame and result caps, call
    /// timeout).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The user every call is decided as, instead of the config's `[mcp]
    /// user` (default `mcp`). Requests' `_meta` never name it.
    #[arg(long, value_name = "NAME")]
    user: Option<String>,

    /// The session calls are decided in (approvals are bound to it).
    /// Default: a new one per run, `mcp-PID-MILLISECONDS`.
    #[arg(long, value_name = "ID")]
    session: Option<String>,

    /// The store URL instead of the config's `[store] url`.
    #[arg(long, value_name = "URL")]
    store: Option<String>,

    /// Serve streamable HTTP on this address (`[mcp] listen` when given
    /// without a value) in front of the config's `[[mcp.upstream]]`,
    /// instead of wrapping a stdio server; the user comes from the
    /// client's bearer token (`[[mcp.token]]`).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "config",
          conflicts_with_all = ["server", "user", "session"])]
    listen: Option<String>,

    /// The MCP server's command and its arguments, after `--`.
    #[arg(
        required_unless_present = "listen",
        last = true,
        value_name = "SERVER_CMD"
    )]
    server: Vec<OsString>,
}

/// Runs the proxy until the client or the server closes.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let config = toolgate_edge::config::load(&args.config)?;
    crate::serve::log_format(&config);
    let store = crate::store_cmds::open(
        Some(&config),
        args.store.as_deref(),
        toolgate_store::StoreOptions::new(),
    )?;
    let gate = StoreGate::from_config(&config, store)?;
    let mcp = &toolgate_edge::config::McpConfig::from_config(&config)?;
    if let Some(listen) = &args.listen {
        return crate::mcp_http::run(&config, gate, listen);
    }
    let user = args.user.clone().unwrap_or_else(|| mcp.user().to_owned());
    if let Err(why) = toolgate_edge::config::check_user_name(&user) {
        anyhow::bail!("--user: {why}");
    }
    let session = match &args.session {
        Some(s) => s.clone(),
        None => {
            let ms = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            format!("mcp-{}-{ms}", std::process::id())
        }
    };
    let (program, server_args) = args
        .server
        .split_first()
        .context("no server command after `--`")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let narrowed = if mcp.narrow_tools() {
        match toolgate::authz::from_config_with(&config, &toolgate_store::connect_source)
            .context("cannot load the authorization policies for narrow_tools")?
        {
            toolgate::authz::ConfiguredAuthorizer::Cedar(cedar) => Some(
                cedar
                    .narrow(
                        config.registry(),
                        &toolgate::Context::new(user.as_str(), session.as_str(), 1),
                    )
                    .context("cannot narrow the tools for the user")?,
            ),
            _ => anyhow::bail!("[mcp] narrow_tools needs Cedar policies in [authorization]"),
        }
    } else {
        None
    };
    let mut proxy = Proxy::new(gate, user, session, ProxyOptions::from_config(mcp))
        .with_pins(mcp.upstream_name(), mcp.pin_first());
    if let Some(n) = narrowed {
        proxy = proxy.with_narrowed(n);
    }
    if let Some(url) = mcp.approvals_url() {
        proxy = proxy
            .with_approvals_url(url)
            .context("cannot make the secret for [mcp] approvals_url's requestState")?;
    }
    let telemetry = {
        let _in_runtime = runtime.enter();
        toolgate_telemetry::Telemetry::start(&config)?
    };
    let proxy = proxy.with_telemetry(telemetry.clone());
    let outcome = runtime.block_on(async {
        let mut child =
            toolgate_mcp::spawn_server(program, server_args, mcp.env()).with_context(|| {
                format!(
                    "cannot start the server `{}`",
                    program.to_string_lossy().escape_debug()
                )
            })?;
        let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
            anyhow::bail!("cannot connect to the server's standard input and output");
        };
        let ended = proxy
            .run(
                tokio::io::BufReader::new(tokio::io::stdin()),
                tokio::io::stdout(),
                tokio::io::BufReader::new(child_out),
                child_in,
            )
            .await;
        let status =
            match tokio::time::timeout(std::time::Duration::from_secs(5), child.wait()).await {
                Ok(Ok(status)) => Some(status),
                _ => {
                    let _ = child.kill().await;
                    None
                }
            };
        telemetry.shutdown().await;
        anyhow::Ok((ended, status))
    });
    // Standard input's reader may still be blocked in a read: leave it.
    runtime.shutdown_background();
    let (ended, status) = outcome?;
    Ok(match ended {
        Ended::ClientClosed => ExitCode::SUCCESS,
        _ => {
            let how = status.map_or_else(|| "did not exit".to_owned(), |s| s.to_string());
            toolgate_edge::log::line(
                toolgate_edge::log::Level::Error,
                "mcp",
                "upstream_closed",
                &format!("the server closed its output ({how})"),
            );
            ExitCode::from(1)
        }
    })
}
