//! `toolgate serve`: the HTTP decision service (`toolgate_server`) on the
//! config's tools, policies and store, until Ctrl-C or SIGTERM; requests in
//! flight finish (and their audit records are committed) before it exits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate::config::Config;

/// Flags of `toolgate serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The toolgate config (TOML): tools, policies, store, and the `[server]`
    /// table (listen address, body cap, header and body timeouts, connection
    /// cap, bearer tokens).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,

    /// The address to listen on, instead of the config's `[server] listen`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
}

/// Runs the service until a shutdown signal.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    // A config error names its file, line and column.
    let config = toolgate_edge::config::load(&args.config)?;
    log_format(&config);
    // The error keeps its causes (the store's, the policies'), which the
    // report prints once each.
    let state = toolgate_server::AppState::from_config(&config)
        .map_err(|e| anyhow::anyhow!(e))
        .context("cannot start the service")?;
    let server = toolgate_edge::config::ServerConfig::from_config(&config)?;
    if server.tokens().is_empty() && config.front_end_tables().jwt.is_none() {
        eprintln!("toolgate: warning: the config has no [[server.token]] and no [jwt]: every API call is refused (401)");
    }
    let listen = args.listen.unwrap_or_else(|| server.listen());
    until_signal(listen, "serving", |listener| async move {
        let telemetry = toolgate_telemetry::Telemetry::start(&config)?;
        let state = state.with_telemetry(telemetry.clone());
        state
            .start_jwt(&config)
            .await
            .map_err(|e| anyhow::anyhow!(e))
            .context("cannot start the service")?;
        let served = toolgate_server::serve(listener, state, toolgate_server::shutdown_signal())
            .await
            .context("the server failed");
        telemetry.shutdown().await;
        served
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Makes every line the process writes JSON from now on when the config
/// says `[telemetry] log_format = "json"` (before the first line).
pub(crate) fn log_format(config: &Config) {
    use toolgate_edge::config::{LogFormat, TelemetryConfig};
    // The config was checked when it loaded: its table is read again here.
    if TelemetryConfig::from_config(config).is_ok_and(|t| t.log_format() == LogFormat::Json) {
        toolgate_edge::log::use_json();
    }
}

/// Listens on `listen` and runs `serve` on a multi-threaded runtime until it
/// returns (Ctrl-C or SIGTERM): `toolgate serve` and `toolgate proxy`.
/// `doing` names what it does on the line that gives the address.
pub(crate) fn until_signal<F>(
    listen: SocketAddr,
    doing: &str,
    serve: impl FnOnce(tokio::net::TcpListener) -> F,
) -> anyhow::Result<()>
where
    F: std::future::Future<Output = anyhow::Result<()>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let local = listener.local_addr().unwrap_or(listen);
        toolgate_edge::log::line(
            toolgate_edge::log::Level::Info,
            "edge",
            "listening",
            &format!("{doing} on http://{local}"),
        );
        serve(listener).await?;
        toolgate_edge::log::line(
            toolgate_edge::log::Level::Info,
            "edge",
            "stopped",
            "stopped",
        );
        anyhow::Ok(())
    })
}
