//! `toolgate mcp --listen`: the streamable-HTTP MCP endpoint
//! (`toolgate_mcp::HttpProxy`) in front of the config's `[[mcp.upstream]]`,
//! until Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate::config::Config;
use toolgate_store::StoreGate;

/// Serves on `listen` (`"config"`: the config's `[mcp] listen`).
pub fn run(config: &Config, gate: StoreGate, listen: &str) -> anyhow::Result<ExitCode> {
    let addr: SocketAddr = if listen == "config" {
        toolgate_edge::config::McpConfig::from_config(config)?
            .http()
            .listen()
    } else {
        listen.parse().with_context(|| {
            format!(
                "--listen `{}` is not an address and port, such as 127.0.0.1:8070",
                listen.escape_debug()
            )
        })?
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr().unwrap_or(addr);
        let telemetry = toolgate_telemetry::Telemetry::start(config)?;
        let proxy = toolgate_mcp::HttpProxy::from_config(config, gate, local.port())
            .context("cannot start the MCP endpoint")?
            .with_telemetry(telemetry.clone());
        proxy
            .start_jwt(config)
            .await
            .context("cannot start the MCP endpoint")?;
        toolgate_edge::log::line(
            toolgate_edge::log::Level::Info,
            "mcp",
            "listening",
            &format!("serving on http://{local}{}", toolgate_mcp::ENDPOINT),
        );
        toolgate_mcp::serve_http(listener, proxy, toolgate_server::shutdown_signal())
            .await
            .context("the MCP endpoint failed")?;
        telemetry.shutdown().await;
        toolgate_edge::log::line(
            toolgate_edge::log::Level::Info,
            "edge",
            "stopped",
            "stopped",
        );
        anyhow::Ok(())
    })?;
    // Blocked reads of children may remain: leave them.
    runtime.shutdown_background();
    Ok(ExitCode::SUCCESS)
}
