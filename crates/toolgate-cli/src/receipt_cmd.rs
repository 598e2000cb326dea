//! `toolgate receipt`: the public key of a config's receipt key, and the
//! executor's check of a receipt (`toolgate::receipt::verify`) for services
//! that shell out.
//!
//! # Exit codes
//!
//! `public-key`: `0` printed; `2` no key or an unreadable one.
//! `verify`: `0` the receipt lets the call run (its claims printed as one
//! JSON line); `1` it does not (its code printed on standard error); `2`
//! usage error, unreadable files, a key that is not one.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context as _};
use toolgate::receipt::{self, ReceiptKey, ReceiptPublicKey};
use toolgate_json::{canonical, Number, Object, Value};

use crate::json_check::read_input;

/// The largest argument file `verify` reads: the gate's ceiling of one
/// call's arguments.
const MAX_ARGUMENT_BYTES: usize = 64 << 20;

/// `toolgate receipt …`.
#[derive(Debug, clap::Subcommand)]
pub enum ReceiptCommand {
    /// Print the public key (64 hex digits) that verifies the receipts of
    /// the config's `[gate] receipt_key`.
    PublicKey {
        /// The toolgate config (TOML).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
    /// Check that RECEIPT lets TOOL run with exactly the canonical argument
    /// text in FILE, now.
    Verify {
        /// The gate's public key, 64 hex digits.
        #[arg(long, value_name = "HEX")]
        public_key: String,
        /// The tool about to run.
        #[arg(long, value_name = "NAME")]
        tool: String,
        /// The file holding the canonical arguments, byte for byte (`-`:
        /// standard input).
        #[arg(long, value_name = "FILE")]
        arguments: PathBuf,
        /// The receipt (`tgr1.…`).
        receipt: String,
    },
}

/// Runs `toolgate receipt`.
pub fn run(command: &ReceiptCommand) -> anyhow::Result<ExitCode> {
    match command {
        ReceiptCommand::PublicKey { config } => {
            let config = toolgate_edge::config::load(config)?;
            let receipts = config.receipts().ok_or_else(|| {
                anyhow!(
                    "config `{}` names no `[gate] receipt_key`",
                    config.path().display()
                )
            })?;
            let key = ReceiptKey::from_file(receipts.key())?;
            writeln!(std::io::stdout().lock(), "{}", key.public_key())?;
            Ok(ExitCode::SUCCESS)
        }
        ReceiptCommand::Verify {
            public_key,
            tool,
            arguments,
            receipt,
        } => {
            let key = ReceiptPublicKey::from_hex(public_key).ok_or_else(|| {
                anyhow!("`--public-key` is not an Ed25519 public key (64 hex digits)")
            })?;
            let bytes = read_input(arguments, MAX_ARGUMENT_BYTES)?;
            let text = String::from_utf8(bytes)
                .ok()
                .with_context(|| format!("`{}` is not UTF-8", arguments.display()))?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            match receipt::verify(receipt, tool, &text, &key, now) {
                Ok(claims) => {
                    let mut o = Object::new();
                    o.insert(
                        "call_id",
                        claims
                            .call_id
                            .map_or(Value::Null, |c| Value::String(c.into())),
                    );
                    o.insert("tool", Value::String(claims.tool.into()));
                    o.insert("args", Value::String(claims.args.into()));
                    o.insert("verdict", Value::String(claims.verdict.as_str().into()));
                    o.insert("issued", Value::Number(Number::from(claims.issued)));
                    o.insert("expires", Value::Number(Number::from(claims.expires)));
                    writeln!(
                        std::io::stdout().lock(),
                        "{}",
                        canonical::to_string(&Value::Object(o))
                    )?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    writeln!(std::io::stderr().lock(), "toolgate: {e}")?;
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}
