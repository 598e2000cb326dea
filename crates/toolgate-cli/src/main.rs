//! The `toolgate` command.
//!
//! Exit codes, for every subcommand:
//! - `0`: every input was accepted;
//! - `1`: at least one input was rejected;
//! - `2`: usage error, unreadable input, or a configuration that does not load.

mod json_check;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

const EXIT_CODES: &str = "\
Exit codes:
  0  every input accepted
  1  at least one input rejected
  2  usage error, or an input or file that cannot be read";

/// toolgate: a strict gate between what a language model proposes and what
/// software executes.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Strict JSON: check texts, print their canonical form and digest.
    Json {
        #[command(subcommand)]
        command: JsonCommand,
    },
}

#[derive(Debug, Subcommand)]
enum JsonCommand {
    /// Parse each input with the strict profile; print `ok` and the digest of
    /// its canonical form, or `error` with the code, line:column and pointer.
    #[command(after_help = EXIT_CODES)]
    Check(json_check::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Json {
            command: JsonCommand::Check(args),
        } => json_check::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Printing to a closed pipe (`toolgate … | head`) is not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("toolgate: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
