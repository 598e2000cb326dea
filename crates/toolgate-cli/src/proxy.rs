//! `toolgate proxy`: the OpenAI- and Anthropic-compatible API proxy
//! (`toolgate_proxy`) on the config's tools, policies and store, until
//! Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate_edge::config::ProxyConfig;
use toolgate_store::StoreGate;

/// Flags of `toolgate proxy`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The toolgate config (TOML): tools, policies, store, and the `[proxy]`
    /// table (upstream base URLs, forwarded routes, how the user is known,
    /// what a denied call becomes, timeouts).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The address to listen on, instead of the config's `[proxy] listen`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,

    /// Send every API to this base URL instead of the config's `[proxy]
    /// openai` and `anthropic` (a `toolgate replay` server, a local model
    /// server).
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
}

/// Runs the proxy until a shutdown signal.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let config = toolgate_edge::config::load(&args.config)?;
    crate::serve::log_format(&config);
    let mut table = ProxyConfig::from_config(&config)?;
    if let Some(base) = &args.upstream {
        table = table
            .with_upstream(base)
            .map_err(|why| anyhow::anyhow!("--upstream: {why}"))?;
    }
    let store = crate::store_cmds::open(Some(&config), None, toolgate_store::StoreOptions::new())?;
    let gate = StoreGate::from_config(&config, store).context("cannot start the proxy")?;
    let listen = args.listen.unwrap_or_else(|| table.listen());
    let proxy = toolgate_proxy::Proxy::with_table(&config, table, gate)
        .context("cannot start the proxy")?;
    crate::serve::until_signal(listen, "proxying", |listener| async move {
        let telemetry = toolgate_telemetry::Telemetry::start(&config)?;
        let proxy = proxy.with_telemetry(telemetry.clone());
        proxy
            .start_jwt(&config)
            .await
            .context("cannot start the proxy")?;
        let served = toolgate_proxy::serve(listener, proxy, toolgate_server::shutdown_signal())
            .await
            .context("the proxy failed");
        telemetry.shutdown().await;
        served
    })?;
    Ok(ExitCode::SUCCESS)
}
