//! `toolgate replay`: a stand-in model server answering the OpenAI and
//! Anthropic routes with recorded bodies (`toolgate_proxy::replay`), until
//! Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate_proxy::replay::{self, Recordings};

/// Flags of `toolgate replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder of recordings: its `replay.toml` and the bodies it names.
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,

    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8089")]
    listen: SocketAddr,

    /// The largest request body read; a larger one is answered 413.
    #[arg(long, value_name = "BYTES", default_value_t = replay::DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: usize,
}

/// Loads the recordings and serves them until a shutdown signal.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let recordings = Recordings::load(&args.dir).context("cannot load the recordings")?;
    let count = recordings.list().len();
    let max = args.max_request_bytes;
    crate::serve::until_signal(
        args.listen,
        &format!("replaying {count} recordings"),
        |listener| async move {
            replay::serve(
                listener,
                recordings,
                max,
                toolgate_server::shutdown_signal(),
            )
            .await
            .context("the replay server failed")
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
