//! How the CLI's black-box tests run the `toolgate` binary of this build:
//! through [`toolgate_testkit::Cli`], with the binary's path that only this
//! crate's tests know.
#![allow(dead_code, reason = "each test file uses a part of it")]

use std::process::Output;

use toolgate_testkit::Cli;

/// The `toolgate` binary of this build, ready for arguments.
pub fn toolgate_cli() -> Cli {
    Cli::new(env!("CARGO_BIN_EXE_toolgate"))
}

/// `toolgate ARGS`, with standard input closed.
pub fn toolgate(args: &[&str]) -> Output {
    toolgate_cli().args(args).run()
}

/// `toolgate ARGS`, reading `stdin`.
pub fn toolgate_reading(args: &[&str], stdin: &[u8]) -> Output {
    toolgate_cli().args(args).stdin(stdin).run()
}
