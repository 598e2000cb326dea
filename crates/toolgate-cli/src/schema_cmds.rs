//! `toolgate validate` and `toolgate lint`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context as _};
use toolgate_json::{canonical, Limit, Object, Value};
use toolgate_schema::{Mode, Options, Schema};

use crate::json_check::{read_input, LimitArgs};

/// Flags of `toolgate validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The JSON Schema (draft 2020-12) to validate against.
    #[arg(long, value_name = "SCHEMA")]
    schema: PathBuf,

    /// Instances to validate; `-` reads standard input.
    #[arg(required = true, value_name = "INSTANCE")]
    inputs: Vec<PathBuf>,

    /// Follow the specification exactly instead of toolgate's strict mode
    /// (where `3.0` is not an integer, objects with `properties` are closed and
    /// `format` is an assertion).
    #[arg(long)]
    standard: bool,

    /// Print one JSON object per instance instead of text.
    #[arg(long)]
    json: bool,

    /// Report at most this many violations per instance.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_errors: usize,

    #[command(flatten)]
    limits: LimitArgs,
}

/// Flags of `toolgate lint`.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Schemas to lint; `-` reads standard input.
    #[arg(required_unless_present = "config", value_name = "SCHEMA")]
    schemas: Vec<PathBuf>,

    /// Also lint a toolgate config: it must load with its policies; each
    /// tool's schema is linted, and its risk, resource mapping, URL and
    /// money arguments, the Cedar policies and the narrowed enums are
    /// checked; what the providers' strict modes leave to toolgate is listed
    /// as `info`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Accept findings of this code (`CODE`), or of this code on one tool
    /// or policy (`CODE@NAME`): they are listed as `allowed` and do not
    /// change the exit code. Repeatable.
    #[arg(long, value_name = "CODE[@NAME]")]
    allow: Vec<String>,

    /// The most ids narrowing may put into a resource argument's `enum`
    /// (the static entities of its type) before `enum_over_cap`.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_enum: usize,

    /// `text` (one line per finding) or `json` (one document).
    #[arg(long, value_enum, default_value_t = LintFormat::Text)]
    format: LintFormat,
}

/// The output of `toolgate lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LintFormat {
    Text,
    Json,
}

/// Reads and strictly parses a schema file; any failure is a usage-level error.
/// The schema a flag names (`--schema`): errors name the flag.
fn load_flag_schema(flag: &str, path: &PathBuf) -> anyhow::Result<Value<'static>> {
    let bytes = crate::json_check::read_flag_file(flag, path, Limit::InputBytes.default_value())?;
    let value = toolgate_json::from_slice(&bytes)
        .map_err(|e| crate::json_check::not_strict_json(flag, path, &e))?;
    Ok(value.into_owned())
}

fn load_schema(path: &PathBuf) -> anyhow::Result<Value<'static>> {
    let limit = Limit::InputBytes.default_value();
    let bytes = read_input(path, limit)?;
    let value = toolgate_json::from_slice(&bytes).map_err(|e| {
        anyhow!(
            "`{}` is not strict JSON: {} at line {} column {} at `{}`",
            path.display(),
            e.code(),
            e.line(),
            e.column(),
            e.pointer()
        )
    })?;
    Ok(value.into_owned())
}

/// Runs `toolgate validate`.
pub fn validate(args: &ValidateArgs) -> anyhow::Result<ExitCode> {
    let parse = args.limits.options()?;
    let mode = if args.standard {
        Mode::Standard
    } else {
        Mode::Strict
    };
    let document = load_flag_schema("--schema", &args.schema)?;
    let options = Options::new().mode(mode).max_errors(args.max_errors.max(1));
    let schema = Schema::compile(&document, &options).map_err(|e| {
        anyhow!(
            "`{}` does not compile: {} at `{}`: {}",
            args.schema.display(),
            e.code().as_str(),
            e.pointer(),
            e.message()
        )
    })?;
    let max_bytes = parse.limits().get(Limit::InputBytes);
    let mut out = std::io::stdout().lock();
    let (mut invalid, mut unreadable) = (false, false);
    for path in &args.inputs {
        let name = path.display().to_string();
        let bytes = match read_input(path, max_bytes) {
            Ok(b) => b,
            Err(e) => {
                crate::report::error(&e);
                unreadable = true;
                continue;
            }
        };
        let report = match parse.parse(&bytes) {
            Err(e) => {
                invalid = true;
                Report::Unparsable(e)
            }
            Ok(instance) => match schema.validate(&instance) {
                Ok(()) => Report::Valid,
                Err(errors) => {
                    invalid = true;
                    Report::Invalid(errors)
                }
            },
        };
        if args.json {
            writeln!(out, "{}", canonical::to_string(&report.to_json(&name)))?;
        } else {
            report.print(&mut out, &name)?;
        }
    }
    out.flush()?;
    Ok(exit(unreadable, invalid))
}

enum Report {
    Valid,
    Invalid(toolgate_schema::ValidationErrors),
    Unparsable(toolgate_json::Error),
}

impl Report {
    fn print(&self, out: &mut impl Write, name: &str) -> std::io::Result<()> {
        match self {
            Self::Valid => writeln!(out, "{name}: valid"),
            Self::Unparsable(e) => writeln!(
                out,
                "{name}: invalid\n  {} at `{}` (line {} column {}): {}",
                e.code(),
                e.pointer(),
                e.line(),
                e.column(),
                e.code().description()
            ),
            Self::Invalid(errors) => {
                writeln!(out, "{name}: invalid")?;
                for e in errors.iter() {
                    writeln!(out, "  {} [keyword `{}`]", e.masked(), e.keyword_location())?;
                }
                if errors.is_truncated() {
                    writeln!(out, "  … more violations not listed (--max-errors)")?;
                }
                Ok(())
            }
        }
    }

    /// The `--json` wire format, one object per instance:
    /// `{"input", "valid", "errors": [{"code", "instance_pointer",
    /// "keyword_location", "message"}], "truncated"}`; an instance that is not
    /// strict JSON has `"parse_error": {"code", "pointer", "line", "column"}`
    /// instead of `errors`. Messages never contain instance values.
    fn to_json<'a>(&'a self, name: &'a str) -> Value<'a> {
        let mut o = Object::new();
        o.insert("input", Value::from(name));
        o.insert("valid", Value::Bool(matches!(self, Self::Valid)));
        match self {
            Self::Valid => {
                o.insert("errors", Value::Array(Vec::new()));
            }
            Self::Unparsable(e) => {
                let mut p = Object::new();
                p.insert("code", Value::from(e.code().as_str()));
                p.insert("pointer", Value::from(e.pointer()));
                p.insert("line", Value::from(count(e.line())));
                p.insert("column", Value::from(count(e.column())));
                o.insert("parse_error", Value::Object(p));
            }
            Self::Invalid(errors) => {
                let list = errors
                    .iter()
                    .map(|e| {
                        let mut item = Object::new();
                        item.insert("code", Value::from(e.code().as_str()));
                        item.insert("instance_pointer", Value::from(e.instance_pointer()));
                        item.insert("keyword_location", Value::from(e.keyword_location()));
                        item.insert("message", Value::from(e.masked()));
                        Value::Object(item)
                    })
                    .collect();
                o.insert("errors", Value::Array(list));
                o.insert("truncated", Value::Bool(errors.is_truncated()));
            }
        }
        Value::Object(o)
    }
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Runs `toolgate lint`: each schema is compiled as the gate compiles a
/// tool's (strict mode, an object schema at the root) before it is linted;
/// one that does not compile is an error (exit 2), never "no findings". The
/// config, if any, is linted by [`crate::lint_config`].
pub fn lint(args: &LintArgs) -> anyhow::Result<ExitCode> {
    let mut report = crate::lint_config::Report::new(&args.allow)?;
    let mut failed = false;
    if let Some(path) = &args.config {
        if let Err(e) = crate::lint_config::lint(path, args.max_enum, &mut report) {
            crate::report::error(&e);
            failed = true;
        }
    }
    for path in &args.schemas {
        let name = path.display().to_string();
        let document = match load_schema(path)
            .with_context(|| format!("cannot lint `{name}`"))
            .and_then(|d| {
                gate_compiles(&d)
                    .map(|()| d)
                    .map_err(|e| anyhow!("`{name}` {e}"))
            }) {
            Ok(d) => d,
            Err(e) => {
                crate::report::error(&e);
                failed = true;
                continue;
            }
        };
        let subject = crate::lint_config::Subject::Schema;
        report.subject(&name, subject.clone());
        report.schema_findings(&name, &subject, &toolgate_schema::lint(&document));
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        LintFormat::Text => report.print_text(&mut out)?,
        LintFormat::Json => report.print_json(&mut out)?,
    }
    out.flush()?;
    if !failed {
        for unused in report.unused_allows() {
            eprintln!("toolgate: warning: `--allow {unused}` accepted no finding");
        }
    }
    Ok(exit(failed, report.has_errors()))
}

/// Whether the gate would take `document` as a tool's schema: strict mode
/// compiles it and its root is an object schema. The error names the
/// compiler's code, the keyword's pointer and the message.
fn gate_compiles(document: &Value<'_>) -> Result<(), String> {
    if let Err(e) = Schema::compile(document, &Options::new().mode(Mode::Strict)) {
        return Err(format!(
            "does not compile: {} at `{}`: {}",
            e.code().as_str(),
            e.pointer(),
            e.message()
        ));
    }
    let root_type = document
        .as_object()
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str);
    if root_type != Some("object") {
        return Err(
            "is not a tool's schema: the gate takes only an object schema (`\"type\": \"object\"` at the root)"
                .to_owned(),
        );
    }
    Ok(())
}

fn exit(error: bool, rejected: bool) -> ExitCode {
    if error {
        ExitCode::from(2)
    } else if rejected {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
