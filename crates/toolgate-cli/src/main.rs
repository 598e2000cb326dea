//! The `toolgate` command.
//!
//! Exit codes: each subcommand's `--help` states its own. In common: `0`
//! success, `1` something was rejected or not found (a denied call, an
//! invalid instance, a finding), `2` usage error, unreadable input, or a
//! schema, config or store that does not load. Every error is one line on
//! standard error, `toolgate: error: …`, each cause said once.

mod approvals_why;
mod check;
mod hook;
mod json_check;
mod lint_config;
mod mcp;
mod mcp_http;
mod narrow;
mod pins_cmd;
mod proxy;
mod receipt_cmd;
mod redteam;
mod replay;
mod report;
mod schema_cmds;
mod serve;
mod store_cmds;
mod strict_modes;
mod table;
mod usage_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

const EXIT_CODES: &str = "\
Exit codes:
  0  every input accepted
  1  at least one input rejected
  2  usage error, or an input or file that cannot be read";

const TOP_HELP: &str = "\
Each command's --help states its exit codes. In common:
  0  success
  1  something was rejected or not found (a denied call, an invalid
     instance, a lint finding, a broken audit chain, no such approval)
  2  usage error, an unreadable input, or a config, schema or store that
     does not load";

const NARROW_EXIT_CODES: &str = "\
Exit codes:
  0  the tools array was printed
  2  usage error, or a config or its policies that do not load";

const PROXY_EXIT_CODES: &str = "\
Routes: POST /v1/chat/completions and /v1/responses (to `[proxy] openai`),
POST /v1/messages (to `[proxy] anthropic`), the `forward` routes unchanged;
every other route is 404. See the book: docs/src/proxy.md.

Exit codes:
  0  stopped by Ctrl-C or SIGTERM
  2  usage error, a config, its policies or the store that do not load, a
     [proxy] table without a user or an upstream, or an address that cannot
     be listened on";

const SERVE_EXIT_CODES: &str = "\
Exit codes:
  0  stopped by Ctrl-C or SIGTERM after finishing the requests in flight
  2  usage error, a config, its policies or the store that do not load, or
     an address that cannot be listened on";
/// toolgate: a strict gate between what a language model proposes and what
/// software executes.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, after_help = TOP_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gate over raw provider responses: one decision per proposed
    /// call (allow, needs_approval or deny) with reason codes and pointers.
    #[command(after_help = CHECK_HELP)]
    Check(check::Args),
    /// Strict JSON: check texts, print their canonical form and digest.
    Json {
        #[command(subcommand)]
        command: JsonCommand,
    },
    /// Validate instances against a JSON Schema, strictly (no coercion) unless
    /// `--standard`; print every violation with its code, instance pointer and
    /// keyword location.
    #[command(after_help = VALIDATE_EXIT_CODES)]
    Validate(schema_cmds::ValidateArgs),
    /// Print the tools array one user may be offered, each resource argument
    /// narrowed to the ids the Cedar policies let that user touch.
    #[command(after_help = NARROW_EXIT_CODES)]
    Narrow(narrow::Args),
    /// Flag JSON Schemas that are too loose for a tool gate, and with
    /// `--config` the holes of a whole config (approval, resources, URLs,
    /// money, Cedar policies, narrowing, provider strict modes).
    #[command(after_help = LINT_EXIT_CODES)]
    Lint(schema_cmds::LintArgs),
    /// Attack the config's tools through the gate, without a model: attacks
    /// that must be denied and valid calls that must not be, in every
    /// provider format, over a throwaway store.
    #[command(after_help = REDTEAM_HELP)]
    Redteam(redteam::Args),
    /// Signed receipts of decisions: the public key of the config's
    /// receipt key, and the executor's check of a receipt.
    Receipt {
        #[command(subcommand)]
        command: receipt_cmd::ReceiptCommand,
    },
    /// The audit log: verify the hash chain, show the last records, export
    /// them as JSON Lines.
    Audit {
        #[command(subcommand)]
        command: store_cmds::AuditCommand,
    },
    /// Human approvals of held calls: list, show, approve, deny, grant, notices.
    Approvals {
        #[command(subcommand)]
        command: store_cmds::ApprovalsCommand,
    },
    /// Tool definitions MCP servers showed `toolgate mcp`, pinned per
    /// upstream: list, show (with a diff from the approved one), approve,
    /// reject.
    Pins {
        #[command(subcommand)]
        command: pins_cmd::PinsCommand,
    },
    /// The kill switch shared by every process using the store: on, off,
    /// status.
    Kill {
        #[command(subcommand)]
        command: store_cmds::KillCommand,
    },
    /// What a user, session or token has used of each configured
    /// `[[limit]]` in its window, and the labels a session holds (read
    /// from the store).
    Usage(usage_cmd::UsageArgs),
    /// Create the store if needed and apply pending schema migrations
    /// (`[store] url`: SQLite or PostgreSQL); safe while replicas run.
    #[command(after_help = MIGRATE_EXIT_CODES)]
    Migrate(store_cmds::MigrateArgs),
    /// The OpenAI- and Anthropic-compatible API proxy: every tool call in
    /// a model's response is decided before the application sees it, until
    /// Ctrl-C or SIGTERM.
    #[command(after_help = PROXY_EXIT_CODES)]
    Proxy(proxy::Args),
    /// The HTTP decision service: decide, approvals (with long-poll wait),
    /// kill switch, audit, health and metrics, until Ctrl-C or SIGTERM.
    #[command(after_help = SERVE_EXIT_CODES)]
    Serve(serve::Args),
    /// A stand-in model server: answers the OpenAI and Anthropic routes
    /// with recorded bodies (JSON and event streams) matched by a
    /// documented rule, and refuses every other request, until Ctrl-C or
    /// SIGTERM.
    #[command(after_help = REPLAY_HELP)]
    Replay(replay::Args),
    /// Run an MCP server behind the gate over stdio: the client starts
    /// `toolgate mcp --config C -- SERVER_CMD ARGS…` instead of the server;
    /// tools/list is filtered and pinned, tools/call gated, results checked.
    /// With `--listen`: a streamable-HTTP endpoint in front of the config's
    /// `[[mcp.upstream]]` servers.
    #[command(after_help = MCP_HELP)]
    Mcp(mcp::Args),
    /// The command hook of a coding agent (Claude Code, Codex CLI, Gemini
    /// CLI): reads one PreToolUse/BeforeTool or PostToolUse/AfterTool event
    /// on standard input, decides it, prints the agent's answer.
    #[command(after_help = HOOK_HELP)]
    Hook(hook::Args),
}

const REPLAY_HELP: &str = "\
DIR/replay.toml lists the recordings ([[recording]] with route, body, and
optionally user, model, status). A request gets the first recording whose
route is its method and path, whose body is .sse exactly when the request
says \"stream\": true, and whose model and user (the text of the request's
last user message), when given, are the request's. The book's \"toolgate
replay\" section (docs/src/proxy.md) documents the rule and the bounds.

Exit codes:
  0  stopped by Ctrl-C or SIGTERM
  2  usage error, recordings that do not load (the error names the file
     and the recording), or an address that cannot be listened on";

const HOOK_HELP: &str = "\
The book's \"Coding agents\" (docs/src/agents.md) has each agent's setup. Before a
tool: the call is decided as `toolgate check --format mcp` decides a
tools/call (over the config's store, in session AGENT:SESSION_ID); an
allowed call is answered with the canonical arguments where the agent
takes a replaced input. After a tool: the result is sanitized and audited.

Exit codes:
  0  answered on standard output (allow, deny or ask, in the agent's JSON)
  2  blocked: any error (a config, store or event that cannot be read, a
     decision later than --timeout-ms), with `toolgate: blocked: CODE` on
     standard error; all three agents block the call on exit code 2";

const MCP_HELP: &str = "\
Every frame from either side is read by the strict parser first; a frame it
refuses is answered with a JSON-RPC error and never forwarded. A tools/call
is decided as `toolgate check --format mcp` decides it, over the config's
store, and forwarded with the canonical arguments only if allowed; denied
and held calls are answered with an isError result. Findings go to
standard error. The book documents it (docs/src/mcp.md).

With --listen, toolgate serves MCP over streamable HTTP on ADDR/mcp (both
spec eras) until Ctrl-C or SIGTERM; a bearer token of [[mcp.token]] names
the user of each request (401 without one).

Exit codes:
  0  the client closed its side (--listen: stopped by a signal)
  1  the server closed its output while the client was connected
  2  usage error, a config, its policies or the store that do not load, or
     a server that cannot be started (--listen: no token or upstream
     configured, or the address cannot be bound)";

const CHECK_HELP: &str = "\
Each FILE is one response body as the provider sent it (JSON or SSE). With
--json, one JSON object per input is printed (JSON Lines); the wire format is
documented in the book (docs/src/check.md).

State lives in the config's store (`[store] url`, default
`sqlite://toolgate.db` beside the config): every decision is audited before it
is printed, a call needing approval gets a pending approval id (approve it with
`toolgate approvals approve ID`), approvals are used once, and the kill switch
(`toolgate kill`) is honoured. `--no-store` decides from the context alone.

Exit codes:
  0  every response allowed
  1  at least one call denied or needing approval (or a response denied)
  2  usage error, a config or context that does not load, or an unreadable input";

const REDTEAM_HELP: &str = "\
Cases come from each tool's schema, URL policies, resource mapping and the
config's entities (ownership is read from the entities, not the policies),
in the classes valid, type_confusion, duplicate_key, non_finite, bounds,
length, pattern_bypass, extra_member, missing_member, null_for_absent,
not_object, truncated, name_lookalike, markup_in_text, ssrf, ownership,
over_limit, replay and loop_run; each is wrapped in every format `check`
reads (JSON and streamed). Nothing is written to the config's store. An
attack held for approval counts as let through. Each failing case is
written to --cases as a body and a context that
`toolgate check --store sqlite::memory: --context CTX BODY` replays.

Exit codes:
  0  no attack allowed, no valid call denied
  1  an attack allowed (or held for approval), or a valid call denied
  2  usage error, a config that does not load, or a report or case that
     cannot be written";

const MIGRATE_EXIT_CODES: &str = "\
Exit codes:
  0  the store's schema is current
  2  usage error, or a store that cannot be reached, migrated or written";

const VALIDATE_EXIT_CODES: &str = "\
Exit codes:
  0  every instance valid
  1  at least one instance invalid (or not strict JSON)
  2  the schema does not compile, usage error, or an unreadable file";

const LINT_EXIT_CODES: &str = "\
Each schema is first compiled as the gate compiles a tool's (strict mode,
an object schema at the root); one that does not compile is an error, with
the compiler's code, the keyword's pointer and the message.

With --config, the config must load with its policies; besides each tool's
schema it flags: approval_off, resource_unmapped, url_unguarded,
url_not_resolved, money_as_number, enum_over_cap (--max-enum),
tool_never_permitted, policy_never_applies, forbid_without_code,
authorization_off. What OpenAI's and Anthropic's strict modes do not enforce
is listed as info (openai_strict_drops, anthropic_strict_drops). --allow
CODE[@NAME] accepts named findings: listed as allowed. The book's
`toolgate lint` section (docs/src/cli.md) has the JSON format and a CI recipe.

Exit codes:
  0  no findings (info and allowed ones do not count)
  1  at least one finding
  2  usage error (an unknown --allow code); a schema that cannot be read, is
     not strict JSON or does not compile; a config that does not load";

#[derive(Debug, Subcommand)]
enum JsonCommand {
    /// Parse each input with the strict profile; print `ok` and the digest of
    /// its canonical form, or `error` with the code, line:column and pointer.
    #[command(after_help = EXIT_CODES)]
    Check(json_check::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version: clap prints them, on standard output.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // A usage error, with the prefix every error of the command has.
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("{}{text}", report::PREFIX);
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Json {
            command: JsonCommand::Check(args),
        } => json_check::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Validate(args) => schema_cmds::validate(&args),
        Command::Lint(args) => schema_cmds::lint(&args),
        Command::Narrow(args) => narrow::run(&args),
        Command::Redteam(args) => redteam::run(&args),
        Command::Receipt { command } => receipt_cmd::run(&command),
        Command::Audit { command } => store_cmds::audit(&command),
        Command::Approvals { command } => store_cmds::approvals(&command),
        Command::Pins { command } => pins_cmd::run(&command),
        Command::Kill { command } => store_cmds::kill(&command),
        Command::Usage(args) => usage_cmd::usage(&args),
        Command::Migrate(args) => store_cmds::migrate(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Proxy(args) => proxy::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Hook(args) => hook::run(&args),
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
            report::error(&e);
            ExitCode::from(2)
        }
    }
}
