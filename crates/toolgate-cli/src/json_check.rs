//! `toolgate json check`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use toolgate_json::{canonical, Limit, Limits, ParseOptions};

/// Flags of `toolgate json check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files to check; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    inputs: Vec<PathBuf>,

    /// Also print the canonical form (RFC 8785) of each accepted input.
    #[arg(long)]
    canonical: bool,

    #[command(flatten)]
    limits: LimitArgs,
}

/// The parser's limits as flags, shared by every command that parses JSON.
#[derive(Debug, clap::Args)]
pub struct LimitArgs {
    /// Largest input, in bytes [default: 8388608, at most 1073741824].
    #[arg(long, value_name = "N")]
    max_bytes: Option<usize>,
    /// Deepest nesting of arrays and objects [default: 64, at most 1024].
    #[arg(long, value_name = "N")]
    max_depth: Option<usize>,
    /// Longest string or member name after unescaping, in bytes [default: 1048576].
    #[arg(long, value_name = "N")]
    max_string_bytes: Option<usize>,
    /// Most members in one object [default: 10000].
    #[arg(long, value_name = "N")]
    max_members: Option<usize>,
    /// Most items in one array [default: 100000].
    #[arg(long, value_name = "N")]
    max_items: Option<usize>,
    /// Most values in one document [default: 1000000].
    #[arg(long, value_name = "N")]
    max_values: Option<usize>,
    /// Admit Unicode noncharacters (rejected by default, as I-JSON requires).
    #[arg(long)]
    allow_noncharacters: bool,
}

impl LimitArgs {
    /// The parse options these flags describe.
    pub fn options(&self) -> anyhow::Result<ParseOptions> {
        let mut limits = Limits::new();
        for (flag, limit, value) in [
            ("--max-bytes", Limit::InputBytes, self.max_bytes),
            ("--max-depth", Limit::Depth, self.max_depth),
            (
                "--max-string-bytes",
                Limit::StringBytes,
                self.max_string_bytes,
            ),
            ("--max-members", Limit::ObjectMembers, self.max_members),
            ("--max-items", Limit::ArrayItems, self.max_items),
            ("--max-values", Limit::Values, self.max_values),
        ] {
            if let Some(value) = value {
                // Named as the user typed it, not by the library's name.
                limits = limits.set(limit, value).map_err(|_| {
                    anyhow::anyhow!(
                        "`{flag}` must be between 1 and {}, got {value}",
                        limit.ceiling()
                    )
                })?;
            }
        }
        Ok(ParseOptions::new()
            .with_limits(limits)
            .allow_noncharacters(self.allow_noncharacters))
    }
}

/// Reads one input, never more than `limit + 1` bytes, so that an oversized
/// input is reported as `too_large` without being loaded whole.
pub fn read_input(path: &PathBuf, limit: usize) -> anyhow::Result<Vec<u8>> {
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(cap)
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(cap).read_to_end(&mut bytes))
            .with_context(|| format!("cannot read `{}`", path.display()))?;
    }
    Ok(bytes)
}

/// Reads the file a flag names (`--context`, `--schema`), at most `limit`
/// bytes; an error names the flag and the file, and says the cause once.
pub fn read_flag_file(flag: &str, path: &PathBuf, limit: usize) -> anyhow::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        return read_input(path, limit).with_context(|| format!("cannot read {flag}"));
    }
    let cap = u64::try_from(limit).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(cap.saturating_add(1)).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read {flag} `{}`", path.display()))?;
    if bytes.len() > limit {
        anyhow::bail!("{flag} `{}` is larger than {limit} bytes", path.display());
    }
    Ok(bytes)
}

/// A strict parse error of a file a flag names, in one line: the flag, the
/// file, the code, line:column, the pointer and what the code means.
pub fn not_strict_json(
    flag: &str,
    path: &std::path::Path,
    e: &toolgate_json::Error,
) -> anyhow::Error {
    anyhow::anyhow!(
        "{flag} `{}` is not strict JSON: {} at {}:{} (`{}`): {}",
        path.display(),
        e.code(),
        e.line(),
        e.column(),
        e.pointer(),
        e.code().description()
    )
}

/// Runs the command; the exit code follows the documented contract.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let options = args.limits.options()?;
    let max_bytes = options.limits().get(Limit::InputBytes);
    let mut stdout = std::io::stdout().lock();
    let mut rejected = false;
    let mut unreadable = false;
    for path in &args.inputs {
        let name = path.display();
        let bytes = match read_input(path, max_bytes) {
            Ok(b) => b,
            Err(e) => {
                crate::report::error(&e);
                unreadable = true;
                continue;
            }
        };
        match options.parse(&bytes) {
            Ok(value) => {
                let text = canonical::to_string(&value);
                let digest = canonical::Digest::of(text.as_bytes());
                if args.canonical {
                    writeln!(stdout, "{name}: ok {digest} {text}")?;
                } else {
                    writeln!(stdout, "{name}: ok {digest}")?;
                }
            }
            Err(e) => {
                rejected = true;
                writeln!(
                    stdout,
                    "{name}: error {} {}:{} `{}`: {}",
                    e.code(),
                    e.line(),
                    e.column(),
                    e.pointer(),
                    e.code().description()
                )?;
            }
        }
    }
    stdout.flush()?;
    Ok(if unreadable {
        ExitCode::from(2)
    } else if rejected {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
