//! toolgate's TOML config: the gate's limits, the store, authorization, and
//! the tools, declared in the config or imported from the tool lists users
//! already have.
//!
//! ```toml
//! [gate]
//! max_turns = 8                # a session's turns (default 20)
//! max_calls_per_response = 8   # calls in one model response (default 16)
//! escalate_after = 3           # rejections after which a session's non-read
//!                              # calls need a human (default 3)
//! max_body_bytes = 8388608     # a provider response body's size, JSON or
//!                              # stream (default 8 MiB, at most 1 GiB)
//! max_argument_bytes = 65536   # parse limits of every tool's arguments: also
//! max_depth = 16               # max_string_bytes, max_object_members,
//!                              # max_array_items, max_values
//!
//! [store]
//! url = "sqlite://toolgate.db"  # the default; relative to this file's folder;
//!                               # or "sqlite:///abs/path.db", "sqlite::memory:"
//! refused_arguments = "text"    # arguments that never parsed are audited by
//!                               # their first 4 KiB ("text", the default) or
//!                               # their length and keyed digest ("digest")
//!
//! [approvals]
//! expiry_seconds = 3600         # a pending approval's life (default one hour)
//! max_pending_per_session = 20  # approvals waiting per session (default 20)
//! max_pending_per_user = 100    # approvals waiting per user (default 100);
//!                               # a held call beyond either is denied
//!                               # `approval_queue_full`
//!
//! [server]                    # `toolgate serve`
//! listen = "127.0.0.1:8080"   # the default
//! max_body_bytes = 8388608    # a request body's cap (default 8 MiB)
//! header_timeout_seconds = 10 # a request's headers must arrive within this
//!                             # (also an idle keep-alive connection's life)
//! body_timeout_seconds = 30   # a request's body must arrive within this (408)
//! max_connections = 1024      # connections served at once; more wait
//! metrics_auth = "none"       # "token": GET /metrics needs a bearer token
//!                             # (any role); "none" (the default): public
//!
//! [[server.token]]            # bearer tokens, stored as SHA-256 hashes
//! name = "support-agent"      # the actor in the audit log (optional)
//! sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//! role = "agent"              # agent | approver | admin
//! users = ["alice", "team-*"] # the users an agent token may decide and wait
//!                             # for: names, or prefixes ending in `*`;
//!                             # without `users`, any user (the default)
//!
//! [authorization]
//! mode = "cedar"                     # or "none" (DANGER: no per-user check);
//!                                    # "cedar" when `policies` is given
//! policies = "policies/shop.cedar"   # paths are relative to this file's folder
//! schema = "shop.cedarschema"        # required with `policies`
//! entities = "entities.json"
//! context_entities = ["Order"]       # entity types a decision context may
//!                                    # add (default none; see below)
//!
//! import = [{ path = "mcp-tools.json", format = "mcp" }]   # openai | anthropic | mcp
//!
//! [[tool]]
//! name = "refund"
//! risk = "destructive"               # read | write | destructive
//! approval = "required"              # required | none; default: required unless read
//! schema = "schemas/refund.json"     # or an inline table, or schema_json = "{…}"
//! resource = { type = "Order", id = "/order_id" }
//! redact = ["/card_number"]
//! max_argument_bytes = 4096          # per-tool limits: at most the gate's
//!
//! [[tool]]
//! name = "fetch_url"
//! risk = "read"
//! schema = "schemas/fetch_url.json"
//! url_policy = { arg = "/url", schemes = ["https"], hosts = ["*.example.com"], ports = [443] }
//! ```
//!
//! A `url_policy` takes `arg`, `hosts`, and optionally `schemes` (default
//! `["https"]`), `ports` (default: the scheme's), `allow_private` (default
//! `false`) and `resolve` (default `false`): with `resolve = true` the gate
//! resolves the host (through [`GateBuilder::resolver`](crate::GateBuilder::resolver),
//! the system resolver by default), denies the call `url_policy` if any
//! address is forbidden, and pins the checked addresses in
//! [`Decision::pinned`](crate::Decision::pinned). `hosts` are read by the
//! URL guard itself ([`crate::url_guard`]): exact names, `*.` wildcards
//! with at least two labels, IP addresses, or `*` (any host that passes
//! the other checks); a policy it cannot compile is a config error with
//! its reason.
//!
//! URL arguments are guarded by default: a tool whose schema gives a string
//! a URI-like `format` (`uri`, `uri-reference`, `iri`, `iri-reference`)
//! anywhere (nested members, array items, map values, `$ref`s, `anyOf`,
//! `oneOf` and `allOf` branches) loads only if a `url_policy` names that
//! argument, or if the tool opts out by name with `url_policy = "none"`
//! (DANGER: then nothing checks its URLs). Otherwise the load fails with
//! [`ErrorCode::UnguardedUrl`], naming the tool and the argument's JSON
//! Pointer. A policy's `arg` may name every item of an array or value of a
//! map with a `*` token (`arg = "/links/*/href"`): each one present is
//! checked. An imported tool is guarded by a `[[tool]]` entry of its name.
//!
//! [`Config::load`] reads it all, every schema compiled in strict mode, or
//! returns the first [`Error`]: the file, the line and column (or the JSON
//! Pointer in an imported list), the key, the tool and an [`ErrorCode`].
//! Unknown keys are errors. There is no half-loaded config.
//!
//! `context_entities` names the entity types a decision context's `entities`
//! may add (never an entity the `entities` file defines). The principal's
//! type (`User`) there also lets the context's `roles` make a user the file
//! does not define a member of those roles; a user the file defines has the
//! roles the file gives, whatever the context says. By default the context
//! adds nothing.
//!
//! A `[[tool]]` entry with the name of an imported tool overrides it (its
//! risk, approval and policies; its schema when it gives one): annotations
//! from MCP servers are untrusted, the config always wins. Two config entries,
//! or two imported tools, with one name are an error. Names are compared byte
//! for byte, see [`crate::registry`].

mod error;
mod import;
mod pointer;
mod raw;
mod toml_json;
mod uri_args;

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use toolgate_json::{Limit, Limits, ParseOptions, Value};
use toolgate_schema::{Options, Schema};

pub use self::error::{Error, ErrorCode};

/// How a call whose arguments never parsed is audited: `[store]
/// refused_arguments`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RefusedArguments {
    /// `text` (the default): the raw text, at most 4 KiB of it (the
    /// store's `audit::REFUSED_TEXT_MAX`), and its length.
    #[default]
    Text,
    /// `digest`: only the length and the HMAC-SHA256 under the store's
    /// redaction key (for tools whose arguments may carry secrets).
    Digest,
}

use self::error::{key_at, key_start, Cause};
use self::import::{json_summary, Imported};
use self::pointer::PointerError;
use self::raw::{
    limit_key, RawApproval, RawAuthorizationMode, RawConfig, RawMetricsAuth, RawRisk, RawRole,
    RawTool, RawUrlPolicies, RawUrlPolicy,
};
use crate::registry::{Registry, ResourceMapping, Risk, Tool, ToolOrigin, UrlPolicyConfig};

/// The store used when `[store]` names none.
pub const DEFAULT_STORE_URL: &str = "sqlite://toolgate.db";
/// Turns per session when `[gate]` sets no `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 20;
/// Calls per model response when `[gate]` sets no `max_calls_per_response`.
pub const DEFAULT_MAX_CALLS_PER_RESPONSE: u32 = 16;
/// Rejections after which a session is escalated when `[gate]` sets no
/// `escalate_after`.
pub const DEFAULT_ESCALATE_AFTER: u32 = 3;
/// Seconds a pending approval stays usable when `[approvals]` sets no
/// `expiry_seconds`.
pub const DEFAULT_APPROVAL_EXPIRY_SECONDS: u64 = 3600;
/// The longest `expiry_seconds` accepted: 30 days.
pub const MAX_APPROVAL_EXPIRY_SECONDS: u64 = 30 * 24 * 3600;
/// Unexpired pending approvals per session when `[approvals]` sets no
/// `max_pending_per_session`.
pub const DEFAULT_MAX_PENDING_PER_SESSION: u32 = 20;
/// Unexpired pending approvals per user when `[approvals]` sets no
/// `max_pending_per_user`.
pub const DEFAULT_MAX_PENDING_PER_USER: u32 = 100;
/// The largest `max_pending_per_session` / `max_pending_per_user` accepted.
pub const MAX_MAX_PENDING: u32 = 100_000;
/// The address `toolgate serve` listens on when `[server]` sets no `listen`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// A request body's cap when `[server]` sets no `max_body_bytes`: 8 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 8 << 20;
/// The largest `max_body_bytes` accepted: 256 MiB.
pub const MAX_MAX_BODY_BYTES: u64 = 256 << 20;
/// Seconds a request's headers may take when `[server]` sets no
/// `header_timeout_seconds`.
pub const DEFAULT_HEADER_TIMEOUT_SECONDS: u64 = 10;
/// Seconds a request's body may take when `[server]` sets no
/// `body_timeout_seconds`.
pub const DEFAULT_BODY_TIMEOUT_SECONDS: u64 = 30;
/// The longest `header_timeout_seconds` or `body_timeout_seconds` accepted:
/// one hour.
pub const MAX_TIMEOUT_SECONDS: u64 = 3600;
/// Connections served at once when `[server]` sets no `max_connections`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The largest `max_connections` accepted.
pub const MAX_MAX_CONNECTIONS: u64 = 1 << 20;
/// Bytes of one call's arguments when `[gate]` sets no `max_argument_bytes`.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 64 << 10;

/// The format of an imported tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[non_exhaustive]
pub enum ImportFormat {
    /// An OpenAI `tools` array: Chat Completions
    /// (`{"type":"function","function":{"name","parameters"}}`) or Responses
    /// (`{"type":"function","name","parameters"}`) items, or a request body
    /// holding one.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic `tools` (`name`, `input_schema`), or a request body holding them.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// An MCP `tools/list` result (`{"tools":[…]}`) or the whole JSON-RPC
    /// response. `annotations` give the default risk tier.
    #[serde(rename = "mcp")]
    Mcp,
}

impl ImportFormat {
    /// The name used in the config: `openai`, `anthropic` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Mcp => "mcp",
        }
    }
}

impl fmt::Display for ImportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `[gate]` table: loop limits and the parse limits of every tool's
/// arguments (each tool may tighten them, never loosen them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateConfig {
    max_turns: u32,
    max_calls_per_response: u32,
    escalate_after: u32,
    max_body_bytes: usize,
    limits: Limits,
}

impl Default for GateConfig {
    fn default() -> Self {
        Self {
            max_turns: DEFAULT_MAX_TURNS,
            max_calls_per_response: DEFAULT_MAX_CALLS_PER_RESPONSE,
            escalate_after: DEFAULT_ESCALATE_AFTER,
            max_body_bytes: Limit::InputBytes.default_value(),
            limits: default_limits(),
        }
    }
}

fn default_limits() -> Limits {
    // The default is below the parser's ceiling, so `set` cannot fail; the
    // parser's own default stands if it ever did.
    Limits::new()
        .set(Limit::InputBytes, DEFAULT_MAX_ARGUMENT_BYTES)
        .unwrap_or_default()
}

impl GateConfig {
    /// Turns a session may take; past it every call is denied.
    pub fn max_turns(&self) -> u32 {
        self.max_turns
    }

    /// Calls one model response may carry.
    pub fn max_calls_per_response(&self) -> u32 {
        self.max_calls_per_response
    }

    /// Rejections in a session after which the store escalates it: its
    /// further non-read calls need a human.
    pub fn escalate_after(&self) -> u32 {
        self.escalate_after
    }

    /// The parse limits: the default of every tool and the ceiling of its own.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The largest provider response body read, JSON or event stream, in
    /// bytes (`max_body_bytes`, default 8 MiB).
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// How the gate's adapters read bodies under this table: the body's
    /// size limit for a JSON body and for a stream. Give it to
    /// [`GateBuilder::adapter_options`](crate::GateBuilder::adapter_options)
    /// (`toolgate check` and `toolgate serve` do).
    pub fn adapter_options(&self) -> crate::adapter::AdapterOptions {
        let parse = toolgate_json::ParseOptions::new().with_limits(
            Limits::new()
                .set(Limit::InputBytes, self.max_body_bytes)
                .unwrap_or_default(),
        );
        crate::adapter::AdapterOptions::new()
            .with_parse_options(parse)
            .with_max_stream_bytes(self.max_body_bytes)
    }
}

/// The `[store]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    url: String,
    refused_arguments: RefusedArguments,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: DEFAULT_STORE_URL.to_owned(),
            refused_arguments: RefusedArguments::Text,
        }
    }
}

impl StoreConfig {
    /// The store URL, such as `sqlite://toolgate.db` (the default).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How arguments that never parsed are audited (`refused_arguments`).
    pub fn refused_arguments(&self) -> RefusedArguments {
        self.refused_arguments
    }
}

/// The `[approvals]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalsConfig {
    expiry_seconds: u64,
    max_pending_per_session: u32,
    max_pending_per_user: u32,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            expiry_seconds: DEFAULT_APPROVAL_EXPIRY_SECONDS,
            max_pending_per_session: DEFAULT_MAX_PENDING_PER_SESSION,
            max_pending_per_user: DEFAULT_MAX_PENDING_PER_USER,
        }
    }
}

impl ApprovalsConfig {
    /// How long a pending approval (and the approval granted on it) stays
    /// usable after the call that asked for it.
    pub fn expiry(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.expiry_seconds)
    }

    /// The cap on unexpired pending approvals per session.
    pub fn max_pending_per_session(&self) -> u32 {
        self.max_pending_per_session
    }

    /// The cap on unexpired pending approvals per user.
    pub fn max_pending_per_user(&self) -> u32 {
        self.max_pending_per_user
    }
}

/// What an HTTP caller may do: `[[server.token]] role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ServerRole {
    /// `agent`: decide, and wait on an approval.
    Agent,
    /// `approver`: list, read, approve and deny approvals (and wait).
    Approver,
    /// `admin`: everything, including the kill switch and the audit log.
    Admin,
}

impl ServerRole {
    /// The name used in the config: `agent`, `approver` or `admin`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Approver => "approver",
            Self::Admin => "admin",
        }
    }
}

impl fmt::Display for ServerRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `[[server.token]]`: the SHA-256 of a bearer token and its role. The
/// token itself is never in the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerToken {
    name: Option<String>,
    sha256: [u8; 32],
    role: ServerRole,
    users: Option<Vec<String>>,
}

impl ServerToken {
    /// The token's name (the actor recorded for its approvals), if given.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The SHA-256 of the token.
    pub fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    /// The role.
    pub fn role(&self) -> ServerRole {
        self.role
    }

    /// The users the token may speak for (`users`: exact names, or
    /// prefixes ending in `*`); `None`: any user.
    pub fn users(&self) -> Option<&[String]> {
        self.users.as_deref()
    }

    /// Whether the token may decide and wait for `user`: any user without
    /// `users`, else a name equal to one of them or starting with a prefix
    /// given as `prefix*`.
    pub fn may_speak_for(&self, user: &str) -> bool {
        speaks_for(self.users(), user)
    }
}

/// Whether a token bound to `users` (`None`: unbound) may speak for `user`:
/// a name equal to one of them, or starting with a prefix given as
/// `prefix*`.
pub fn speaks_for(users: Option<&[String]>, user: &str) -> bool {
    users.is_none_or(|users| {
        users.iter().any(|u| match u.strip_suffix('*') {
            Some(prefix) => user.starts_with(prefix),
            None => u == user,
        })
    })
}

/// Who may read `GET /metrics`: `[server] metrics_auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MetricsAuth {
    /// `none`: anyone who reaches the port (the default).
    #[default]
    None,
    /// `token`: a caller with any configured bearer token.
    Token,
}

/// The `[server]` table: how `toolgate serve` listens and who may call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    listen: std::net::SocketAddr,
    max_body_bytes: usize,
    header_timeout: std::time::Duration,
    body_timeout: std::time::Duration,
    max_connections: usize,
    metrics_auth: MetricsAuth,
    tokens: Vec<ServerToken>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_timeout: std::time::Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECONDS),
            body_timeout: std::time::Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECONDS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            metrics_auth: MetricsAuth::None,
            tokens: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// The address to listen on (default `127.0.0.1:8080`).
    pub fn listen(&self) -> std::net::SocketAddr {
        self.listen
    }

    /// The largest request body accepted, in bytes.
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// How long a request's headers may take to arrive (default 10 s); an
    /// idle keep-alive connection is closed after as long.
    pub fn header_timeout(&self) -> std::time::Duration {
        self.header_timeout
    }

    /// How long a request's body may take to arrive (default 30 s).
    pub fn body_timeout(&self) -> std::time::Duration {
        self.body_timeout
    }

    /// How many connections are served at once (default 1024); more wait
    /// to be accepted.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// The bearer tokens.
    pub fn tokens(&self) -> &[ServerToken] {
        &self.tokens
    }

    /// Who may read `GET /metrics`.
    pub fn metrics_auth(&self) -> MetricsAuth {
        self.metrics_auth
    }
}

/// How calls are authorized: `[authorization] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthorizationMode {
    /// Cedar policies (`mode = "cedar"`, the default when `policies` is given).
    Cedar,
    /// DANGER: no per-user check ([`crate::danger::NoAuthorization`]); only
    /// when written explicitly, `mode = "none"`.
    None,
}

/// The `[authorization]` table. Paths are resolved against the config file's
/// folder; the files are read by the authorization stage
/// ([`crate::authz::from_config`]). Without a mode (no `mode`, no
/// `policies`) the gate denies every call `not_authorized`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationConfig {
    mode: Option<AuthorizationMode>,
    policies: Option<PathBuf>,
    entities: Option<PathBuf>,
    schema: Option<PathBuf>,
    context_entities: Vec<String>,
}

impl AuthorizationConfig {
    /// The entity types a decision context may add entities of
    /// (`context_entities`; empty by default: the context adds nothing).
    pub fn context_entities(&self) -> &[String] {
        &self.context_entities
    }

    /// The mode, or `None` when the config names none (every call denied).
    pub fn mode(&self) -> Option<AuthorizationMode> {
        self.mode
    }

    /// The Cedar policies file.
    pub fn policies(&self) -> Option<&Path> {
        self.policies.as_deref()
    }

    /// The static entities file (Cedar entity JSON).
    pub fn entities(&self) -> Option<&Path> {
        self.entities.as_deref()
    }

    /// The Cedar schema file the policies are validated against.
    pub fn schema(&self) -> Option<&Path> {
        self.schema.as_deref()
    }
}

/// A loaded config: every value checked, every schema compiled.
#[derive(Debug, Clone)]
pub struct Config {
    path: PathBuf,
    gate: GateConfig,
    store: StoreConfig,
    approvals: ApprovalsConfig,
    server: ServerConfig,
    authorization: AuthorizationConfig,
    registry: Registry,
}

impl Config {
    /// Reads and checks the config file at `path`, the schema files and tool
    /// lists it names (relative to its folder), and compiles every schema.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = crate::fsread::read_to_string(path).map_err(|e| {
            Error::new(ErrorCode::Io, path, format!("cannot read the config: {e}"))
                .cause(Cause::Io(e))
        })?;
        Self::parse(&text, path)
    }

    /// Checks config text as if read from `path`: errors name `path`, and
    /// relative paths in the config are resolved against its folder.
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let base = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Loader {
            text,
            file: path,
            base,
        }
        .load()
    }

    /// The config file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The `[gate]` table.
    pub fn gate(&self) -> &GateConfig {
        &self.gate
    }

    /// The `[store]` table.
    pub fn store(&self) -> &StoreConfig {
        &self.store
    }

    /// The `[approvals]` table.
    pub fn approvals(&self) -> &ApprovalsConfig {
        &self.approvals
    }

    /// The `[server]` table.
    pub fn server(&self) -> &ServerConfig {
        &self.server
    }

    /// The folder relative paths in the config are resolved against (the
    /// config file's folder).
    pub fn base_dir(&self) -> &Path {
        self.path.parent().unwrap_or_else(|| Path::new(""))
    }

    /// The `[authorization]` table.
    pub fn authorization(&self) -> &AuthorizationConfig {
        &self.authorization
    }

    /// The tools.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The tools, owned.
    pub fn into_registry(self) -> Registry {
        self.registry
    }
}

/// Reads a tool list (OpenAI, Anthropic or MCP) into a registry, with the
/// default gate limits, the default risk tiers (MCP annotations, otherwise
/// `destructive`) and approval required for every tool that is not `read`.
pub fn import_file(path: impl AsRef<Path>, format: ImportFormat) -> Result<Registry, Error> {
    let path = path.as_ref();
    let bytes = crate::fsread::read(path).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            path,
            format!("cannot read the tool list: {e}"),
        )
        .cause(Cause::Io(e))
    })?;
    import_slice(&bytes, format, path)
}

/// Like [`import_file`], for a tool list already in memory; `origin` names it
/// in errors.
pub fn import_slice(
    bytes: &[u8],
    format: ImportFormat,
    origin: impl AsRef<Path>,
) -> Result<Registry, Error> {
    let origin = origin.as_ref();
    let gate = GateConfig::default();
    let mut registry = Registry::new();
    for imported in import::read(format, bytes, origin)? {
        let tool = tool_from_import(imported, origin, &gate)?;
        insert(&mut registry, tool)?;
    }
    Ok(registry)
}

fn insert(registry: &mut Registry, tool: Tool) -> Result<(), Error> {
    registry.insert(tool).map_err(|tool| {
        let e = Error::new(
            ErrorCode::DuplicateTool,
            tool.origin_file(),
            "a tool of this name is already declared",
        )
        .tool(&tool.name);
        match &tool.origin {
            ToolOrigin::Import { pointer, .. } => e.at_pointer(pointer.clone()),
            _ => e,
        }
    })
}

/// 64 hexadecimal digits (either case) as 32 bytes.
fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

/// Why a name cannot be a tool name, if it cannot.
fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a tool name must not be empty")
    } else if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
        Some("a tool name must not start or end with whitespace")
    } else if name.chars().any(char::is_control) {
        Some("a tool name must not contain control characters")
    } else {
        None
    }
}

fn root_is_object(schema: &Value) -> bool {
    schema
        .as_object()
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str)
        == Some("object")
}

fn compile(schema: &Value) -> Result<Schema, toolgate_schema::CompileError> {
    Schema::compile(schema, &Options::new())
}

/// An imported tool with no config entry: its own schema, its default tier.
fn tool_from_import(imported: Imported, file: &Path, gate: &GateConfig) -> Result<Tool, Error> {
    let at = |code, message: String| {
        Error::new(code, file, message)
            .at_pointer(imported.pointer.clone())
            .tool(&imported.name)
    };
    if let Some(problem) = name_problem(&imported.name) {
        return Err(at(ErrorCode::InvalidName, problem.to_owned()));
    }
    if !root_is_object(&imported.schema) {
        return Err(at(
            ErrorCode::SchemaNotObject,
            "the schema must have `\"type\": \"object\"`".to_owned(),
        ));
    }
    let schema = compile(&imported.schema).map_err(|e| {
        at(
            ErrorCode::SchemaCompile,
            format!("the schema does not compile: {e}"),
        )
        .cause(Cause::Schema(e))
    })?;
    if let Some(message) = unguarded_url(&imported.schema, &[]) {
        return Err(at(
            ErrorCode::UnguardedUrl,
            format!(
                "{message} (in a `[[tool]]` entry of this name, which overrides the imported tool)"
            ),
        ));
    }
    Ok(Tool {
        approval_required: imported.risk.approval_required_by_default(),
        risk: imported.risk,
        schema,
        origin: ToolOrigin::Import {
            file: file.to_path_buf(),
            pointer: imported.pointer,
        },
        name: imported.name,
        description: imported.description,
        raw_schema: imported.schema,
        resource: None,
        url_policies: Vec::new(),
        parse_options: ParseOptions::new().with_limits(gate.limits),
        redact: Vec::new(),
    })
}

/// Where a tool's schema came from, for messages.
enum SchemaFrom {
    Config {
        key: &'static str,
        span: Range<usize>,
        /// The schema file, as written in the config.
        path: Option<String>,
    },
    Import {
        file: PathBuf,
        pointer: String,
    },
}

struct Loader<'t> {
    text: &'t str,
    file: &'t Path,
    base: PathBuf,
}

impl Loader<'_> {
    /// An error at the key whose value starts at `value_start`.
    fn at_key(
        &self,
        code: ErrorCode,
        value_start: usize,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(code, self.file, message)
            .at_offset(self.text, key_start(self.text, value_start))
            .key(key)
    }

    /// An error at a value (an array element).
    fn at_value(
        &self,
        code: ErrorCode,
        value_start: usize,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(code, self.file, message)
            .at_offset(self.text, value_start)
            .key(key)
    }

    fn resolve(&self, path: &str) -> PathBuf {
        self.base.join(path)
    }

    fn load(self) -> Result<Config, Error> {
        let de = toml::de::Deserializer::parse(self.text).map_err(|e| self.toml_error(e, true))?;
        let raw = RawConfig::deserialize(de).map_err(|e| self.toml_error(e, false))?;

        let gate = self.gate(&raw)?;
        let mut store = match &raw.store.url {
            None => StoreConfig::default(),
            Some(url) if url.get_ref().trim().is_empty() => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    url.span().start,
                    "url",
                    "`url` must not be empty",
                ))
            }
            Some(url) => StoreConfig {
                url: url.get_ref().clone(),
                ..StoreConfig::default()
            },
        };
        if let Some(mode) = &raw.store.refused_arguments {
            store.refused_arguments = match mode.get_ref().as_str() {
                "text" => RefusedArguments::Text,
                "digest" => RefusedArguments::Digest,
                _ => {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        mode.span().start,
                        "refused_arguments",
                        "`refused_arguments` must be \"text\" or \"digest\"",
                    ))
                }
            };
        }
        let mut approvals = ApprovalsConfig::default();
        if let Some(v) = &raw.approvals.expiry_seconds {
            let n = *v.get_ref();
            if n == 0 || n > MAX_APPROVAL_EXPIRY_SECONDS {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    "expiry_seconds",
                    format!("`expiry_seconds` must be between 1 and {MAX_APPROVAL_EXPIRY_SECONDS}"),
                ));
            }
            approvals.expiry_seconds = n;
        }
        for (key, value, slot) in [
            (
                "max_pending_per_session",
                &raw.approvals.max_pending_per_session,
                &mut approvals.max_pending_per_session,
            ),
            (
                "max_pending_per_user",
                &raw.approvals.max_pending_per_user,
                &mut approvals.max_pending_per_user,
            ),
        ] {
            if let Some(v) = value {
                let n = *v.get_ref();
                if n == 0 || n > u64::from(MAX_MAX_PENDING) {
                    return Err(self.at_key(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        key,
                        format!("`{key}` must be between 1 and {MAX_MAX_PENDING}"),
                    ));
                }
                *slot = u32::try_from(n).unwrap_or(MAX_MAX_PENDING);
            }
        }
        let server = self.server(&raw)?;
        let path_of = |p: &Option<Spanned<String>>| p.as_ref().map(|p| self.resolve(p.get_ref()));
        let authorization = AuthorizationConfig {
            mode: self.authorization_mode(&raw)?,
            policies: path_of(&raw.authorization.policies),
            entities: path_of(&raw.authorization.entities),
            schema: path_of(&raw.authorization.schema),
            context_entities: self.context_entities(&raw)?,
        };

        // Imported tools, by name; two with one name are ambiguous.
        let mut imported: Vec<(Imported, PathBuf)> = Vec::new();
        let mut imported_names: HashMap<String, usize> = HashMap::new();
        for entry in &raw.import {
            let path = entry.get_ref().path.get_ref();
            let span = entry.get_ref().path.span();
            let file = self.resolve(path);
            let bytes = crate::fsread::read(&file).map_err(|e| {
                self.at_key(
                    ErrorCode::Io,
                    span.start,
                    "path",
                    format!("cannot read the tool list `{}`: {e}", path.escape_debug()),
                )
                .cause(Cause::Io(e))
            })?;
            for tool in import::read(entry.get_ref().format, &bytes, &file)? {
                if imported_names.contains_key(&tool.name) {
                    return Err(Error::new(
                        ErrorCode::DuplicateTool,
                        &file,
                        "a tool of this name is already imported",
                    )
                    .at_pointer(tool.pointer.clone())
                    .tool(&tool.name));
                }
                imported_names.insert(tool.name.clone(), imported.len());
                imported.push((tool, file.clone()));
            }
        }

        let mut registry = Registry::new();
        let mut used = vec![false; imported.len()];
        let mut lines: HashMap<&str, usize> = HashMap::new();
        for tool in &raw.tool {
            let name = tool.name.get_ref();
            let name_at = tool.name.span().start;
            if let Some(problem) = name_problem(name) {
                return Err(self
                    .at_key(ErrorCode::InvalidName, name_at, "name", problem)
                    .tool(name));
            }
            if let Some(line) = lines.get(name.as_str()) {
                return Err(self
                    .at_key(
                        ErrorCode::DuplicateTool,
                        name_at,
                        "name",
                        format!("a tool of this name is already declared at line {line}"),
                    )
                    .tool(name));
            }
            let (line, _) = error::line_column(self.text, key_start(self.text, name_at));
            lines.insert(name, line);
            let from_import = imported_names.get(name).copied();
            if let Some(i) = from_import {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
            }
            let import = from_import.and_then(|i| imported.get(i));
            let built = self.tool(tool, import, &gate, line)?;
            insert(&mut registry, built)?;
        }
        for ((tool, file), used) in imported.into_iter().zip(used) {
            if !used {
                let built = tool_from_import(tool, &file, &gate)?;
                insert(&mut registry, built)?;
            }
        }
        Ok(Config {
            path: self.file.to_path_buf(),
            gate,
            store,
            approvals,
            server,
            authorization,
            registry,
        })
    }

    fn toml_error(&self, e: toml::de::Error, syntax: bool) -> Error {
        let raw_message = e.message().trim().replace('\n', "; ");
        let code = if syntax {
            ErrorCode::TomlSyntax
        } else if raw_message.starts_with("unknown field") {
            ErrorCode::UnknownKey
        } else if raw_message.starts_with("missing field") {
            ErrorCode::MissingKey
        } else if raw_message.starts_with("invalid type") {
            ErrorCode::InvalidType
        } else {
            ErrorCode::InvalidValue
        };
        let message = people_words(&raw_message);
        let Some(span) = e.span() else {
            return Error::new(code, self.file, message).cause(Cause::Toml(e));
        };
        // The error points at a key (unknown key) or at a value (wrong type):
        // name the key, and report the place the error points at, the value
        // for a wrong value.
        let start = key_at(self.text, span.start)
            .map_or_else(|| key_start(self.text, span.start), |_| span.start);
        let key = match code {
            ErrorCode::UnknownKey | ErrorCode::MissingKey => backticked(&raw_message),
            _ => key_at(self.text, start).map(str::to_owned),
        };
        let at = match code {
            ErrorCode::InvalidType | ErrorCode::InvalidValue => span.start,
            _ => start,
        };
        let message = match (&key, code) {
            (Some(k), ErrorCode::InvalidType | ErrorCode::InvalidValue) => {
                format!("`{k}`: {message}")
            }
            _ => message,
        };
        let mut err = Error::new(code, self.file, message)
            .at_offset(self.text, at)
            .cause(Cause::Toml(e));
        if let Some(k) = key {
            err = err.key(k);
        }
        err
    }

    /// `[server]`: an address, a body cap, timeouts and a connection cap in
    /// range, tokens as 64 hex digits.
    fn server(&self, raw: &RawConfig) -> Result<ServerConfig, Error> {
        let mut server = ServerConfig::default();
        if let Some(v) = &raw.server.listen {
            server.listen = v.get_ref().parse().map_err(|_| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    v.span().start,
                    "listen",
                    "`listen` must be an address and port, such as \"127.0.0.1:8080\"",
                )
            })?;
        }
        if let Some(v) = &raw.server.max_body_bytes {
            let n = *v.get_ref();
            let bytes = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_BODY_BYTES);
            server.max_body_bytes = bytes.ok_or_else(|| {
                self.at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    "max_body_bytes",
                    format!("`max_body_bytes` must be between 1 and {MAX_MAX_BODY_BYTES}"),
                )
            })?;
        }
        for (v, key, field) in [
            (
                &raw.server.header_timeout_seconds,
                "header_timeout_seconds",
                &mut server.header_timeout,
            ),
            (
                &raw.server.body_timeout_seconds,
                "body_timeout_seconds",
                &mut server.body_timeout,
            ),
        ] {
            if let Some(v) = v {
                let n = *v.get_ref();
                if n == 0 || n > MAX_TIMEOUT_SECONDS {
                    return Err(self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        key,
                        format!("`{key}` must be between 1 and {MAX_TIMEOUT_SECONDS}"),
                    ));
                }
                *field = std::time::Duration::from_secs(n);
            }
        }
        if let Some(v) = &raw.server.max_connections {
            let n = *v.get_ref();
            server.max_connections = usize::try_from(n)
                .ok()
                .filter(|_| n != 0 && n <= MAX_MAX_CONNECTIONS)
                .ok_or_else(|| {
                    self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_connections",
                        format!("`max_connections` must be between 1 and {MAX_MAX_CONNECTIONS}"),
                    )
                })?;
        }
        if let Some(m) = &raw.server.metrics_auth {
            server.metrics_auth = match m.get_ref() {
                RawMetricsAuth::None => MetricsAuth::None,
                RawMetricsAuth::Token => MetricsAuth::Token,
            };
        }
        for t in &raw.server.token {
            let users = match &t.users {
                None => None,
                Some(list) => {
                    let bad = list.get_ref().iter().find(|u| {
                        let name = u.strip_suffix('*').unwrap_or(u);
                        u.is_empty() || name.contains('*')
                    });
                    if bad.is_some() || list.get_ref().is_empty() {
                        return Err(self.at_key(
                            ErrorCode::InvalidValue,
                            list.span().start,
                            "users",
                            "`users` must list user names, or prefixes ending in one `*` (`\"*\"` is any user)",
                        ));
                    }
                    Some(list.get_ref().clone())
                }
            };
            let hex = t.sha256.get_ref();
            let sha256 = parse_sha256(hex).ok_or_else(|| {
                self.at_key(
                    ErrorCode::InvalidValue,
                    t.sha256.span().start,
                    "sha256",
                    "`sha256` must be the SHA-256 of the token: 64 hexadecimal digits",
                )
            })?;
            if server.tokens.iter().any(|o| o.sha256 == sha256) {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    t.sha256.span().start,
                    "sha256",
                    "this token is already declared",
                ));
            }
            server.tokens.push(ServerToken {
                name: t.name.as_ref().map(|n| n.get_ref().clone()),
                sha256,
                role: match t.role {
                    RawRole::Agent => ServerRole::Agent,
                    RawRole::Approver => ServerRole::Approver,
                    RawRole::Admin => ServerRole::Admin,
                },
                users,
            });
        }
        Ok(server)
    }

    /// `context_entities`: entity type names, each once.
    fn context_entities(&self, raw: &RawConfig) -> Result<Vec<String>, Error> {
        let Some(list) = &raw.authorization.context_entities else {
            return Ok(Vec::new());
        };
        let mut out: Vec<String> = Vec::new();
        for t in list.get_ref() {
            let name = t.get_ref();
            let problem = if !is_entity_type(name) {
                Some("is not an entity type name (such as `Order` or `Shop::Order`)")
            } else if out.contains(name) {
                Some("is listed twice")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(self.at_value(
                    ErrorCode::InvalidValue,
                    t.span().start,
                    "context_entities",
                    format!("`context_entities`: `{}` {problem}", name.escape_debug()),
                ));
            }
            out.push(name.clone());
        }
        Ok(out)
    }

    /// `mode`: `cedar` needs `policies` and `schema`; `none` takes neither.
    fn authorization_mode(&self, raw: &RawConfig) -> Result<Option<AuthorizationMode>, Error> {
        let a = &raw.authorization;
        let mode = match (&a.mode, &a.policies) {
            (None, None) => None,
            (None, Some(_)) => Some(AuthorizationMode::Cedar),
            (Some(m), _) => Some(match m.get_ref() {
                RawAuthorizationMode::Cedar => AuthorizationMode::Cedar,
                RawAuthorizationMode::None => AuthorizationMode::None,
            }),
        };
        match (mode, &a.mode) {
            (Some(AuthorizationMode::None), Some(_)) => {
                if let Some((key, at)) = [
                    ("policies", a.policies.as_ref().map(|v| v.span().start)),
                    ("schema", a.schema.as_ref().map(|v| v.span().start)),
                    ("entities", a.entities.as_ref().map(|v| v.span().start)),
                    (
                        "context_entities",
                        a.context_entities.as_ref().map(|v| v.span().start),
                    ),
                ]
                .into_iter()
                .find_map(|(k, v)| v.map(|at| (k, at)))
                {
                    return Err(self.at_key(
                        ErrorCode::ConflictingKeys,
                        at,
                        key,
                        format!("`{key}` is given with `mode = \"none\"`, which reads no policies"),
                    ));
                }
            }
            (Some(AuthorizationMode::Cedar), _) => {
                let at = a
                    .mode
                    .as_ref()
                    .map(|m| m.span().start)
                    .or_else(|| a.policies.as_ref().map(|p| p.span().start))
                    .unwrap_or_default();
                for (key, value) in [("policies", &a.policies), ("schema", &a.schema)] {
                    if value.is_none() {
                        let key_of_at = if a.mode.is_some() { "mode" } else { "policies" };
                        return Err(self.at_key(
                            ErrorCode::MissingKey,
                            at,
                            key_of_at,
                            format!(
                                "`mode = \"cedar\"` needs `{key}` (the cedar {})",
                                if key == "schema" {
                                    "schema the policies are validated against"
                                } else {
                                    "policies file"
                                }
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(mode)
    }

    fn gate(&self, raw: &RawConfig) -> Result<GateConfig, Error> {
        let mut gate = GateConfig::default();
        for (slot, value, key) in [
            (&mut gate.max_turns, &raw.gate.max_turns, "max_turns"),
            (
                &mut gate.max_calls_per_response,
                &raw.gate.max_calls_per_response,
                "max_calls_per_response",
            ),
            (
                &mut gate.escalate_after,
                &raw.gate.escalate_after,
                "escalate_after",
            ),
        ] {
            if let Some(v) = value {
                *slot = u32::try_from(*v.get_ref())
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        self.at_key(
                            ErrorCode::InvalidLimit,
                            v.span().start,
                            key,
                            format!("`{key}` must be between 1 and {}", u32::MAX),
                        )
                    })?;
            }
        }
        if let Some(v) = &raw.gate.max_body_bytes {
            let n = *v.get_ref();
            let ceiling = Limit::InputBytes.ceiling();
            gate.max_body_bytes = usize::try_from(n)
                .ok()
                .filter(|&b| b != 0 && b <= ceiling)
                .ok_or_else(|| {
                    self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_body_bytes",
                        format!("`max_body_bytes` must be between 1 and {ceiling}"),
                    )
                })?;
        }
        for (limit, value) in raw.gate.limit_fields() {
            if let Some(v) = value {
                gate.limits = self.set_limit(gate.limits, limit, v)?;
            }
        }
        Ok(gate)
    }

    fn set_limit(
        &self,
        limits: Limits,
        limit: Limit,
        value: &Spanned<u64>,
    ) -> Result<Limits, Error> {
        let key = limit_key(limit);
        let n = usize::try_from(*value.get_ref()).unwrap_or(usize::MAX);
        limits.set(limit, n).map_err(|e| {
            self.at_key(
                ErrorCode::InvalidLimit,
                value.span().start,
                key,
                format!(
                    "`{key}` must be between 1 and {}, got {}",
                    limit.ceiling(),
                    value.get_ref()
                ),
            )
            .cause(Cause::Limit(e))
        })
    }

    fn tool(
        &self,
        raw: &RawTool,
        import: Option<&(Imported, PathBuf)>,
        gate: &GateConfig,
        line: usize,
    ) -> Result<Tool, Error> {
        let name = raw.name.get_ref();
        let (raw_schema, from) = self.schema(raw, import)?;
        let fail = |code, message: String| match &from {
            SchemaFrom::Config { key, span, .. } => {
                self.at_key(code, span.start, key, message).tool(name)
            }
            SchemaFrom::Import { file, pointer } => Error::new(code, file, message)
                .at_pointer(pointer.clone())
                .tool(name),
        };
        if !root_is_object(&raw_schema) {
            return Err(fail(
                ErrorCode::SchemaNotObject,
                "the schema must have `\"type\": \"object\"`".to_owned(),
            ));
        }
        let schema = compile(&raw_schema).map_err(|e| {
            let what = match &from {
                SchemaFrom::Config {
                    key, path: None, ..
                } => format!("`{key}`"),
                SchemaFrom::Config {
                    key, path: Some(p), ..
                } => format!("`{key}` (`{}`)", p.escape_debug()),
                SchemaFrom::Import { .. } => "the imported schema".to_owned(),
            };
            fail(
                ErrorCode::SchemaCompile,
                format!("{what} does not compile: {e}"),
            )
            .cause(Cause::Schema(e))
        })?;

        let risk = match raw.risk {
            RawRisk::Read => Risk::Read,
            RawRisk::Write => Risk::Write,
            RawRisk::Destructive => Risk::Destructive,
        };
        let approval_required = match raw.approval {
            Some(RawApproval::Required) => true,
            Some(RawApproval::None) => false,
            None => risk.approval_required_by_default(),
        };

        let pointer_error = |e: PointerError, at: usize, key: &str, element: bool, p: &str| {
            let (code, message) = match e {
                PointerError::Malformed(why) => (
                    ErrorCode::InvalidPointer,
                    format!(
                        "`{key}`: `{}` is not a valid JSON Pointer: {why}",
                        p.escape_debug()
                    ),
                ),
                PointerError::Undeclared => (
                    ErrorCode::UndeclaredProperty,
                    format!(
                        "`{key}`: `{}` does not name a property declared by the schema",
                        p.escape_debug()
                    ),
                ),
            };
            let e = if element {
                self.at_value(code, at, key, message)
            } else {
                self.at_key(code, at, key, message)
            };
            e.tool(name)
        };

        let resource = match &raw.resource {
            None => None,
            Some(r) => {
                let at = r.span().start;
                let r = r.get_ref();
                if !is_entity_type(&r.entity_type) {
                    return Err(self
                        .at_key(
                            ErrorCode::InvalidValue,
                            at,
                            "resource",
                            format!(
                                "`resource`: `{}` is not an entity type name (such as `Order` or `Shop::Order`)",
                                r.entity_type.escape_debug()
                            ),
                        )
                        .tool(name));
                }
                pointer::check_declared(&raw_schema, &r.id)
                    .map_err(|e| pointer_error(e, at, "resource", false, &r.id))?;
                Some(ResourceMapping {
                    entity_type: r.entity_type.clone(),
                    id_pointer: r.id.clone(),
                })
            }
        };

        let mut url_policies: Vec<UrlPolicyConfig> = Vec::new();
        let listed = match raw
            .url_policy
            .as_ref()
            .map(|p| (p.span().start, p.get_ref()))
        {
            Some((at, RawUrlPolicies::Policies(list))) => Some((at, list)),
            Some((_, RawUrlPolicies::None)) | None => None,
        };
        if let Some((at, list)) = listed {
            for p in list {
                pointer::check_declared_pattern(&raw_schema, &p.arg)
                    .map_err(|e| pointer_error(e, at, "url_policy", false, &p.arg))?;
                if url_policies.iter().any(|q| q.arg == p.arg) {
                    return Err(self
                        .at_key(
                            ErrorCode::InvalidUrlPolicy,
                            at,
                            "url_policy",
                            format!("`url_policy`: two policies for `{}`", p.arg.escape_debug()),
                        )
                        .tool(name));
                }
                if let Some(problem) = url_policy_problem(p) {
                    return Err(self
                        .at_key(
                            ErrorCode::InvalidUrlPolicy,
                            at,
                            "url_policy",
                            format!("`url_policy`: {problem}"),
                        )
                        .tool(name));
                }
                let policy = UrlPolicyConfig {
                    arg: p.arg.clone(),
                    schemes: p.schemes.clone(),
                    hosts: p.hosts.clone(),
                    ports: p.ports.clone(),
                    allow_private: p.allow_private,
                    resolve: p.resolve,
                };
                // The URL guard's own compiler has the last word (one rule,
                // one message, whichever command loads the config).
                if let Err(e) = crate::stage::policy::UrlArg::compile(&policy) {
                    return Err(self
                        .at_key(
                            ErrorCode::InvalidUrlPolicy,
                            at,
                            "url_policy",
                            format!("`url_policy`: {e}"),
                        )
                        .tool(name));
                }
                url_policies.push(policy);
            }
        }

        if !matches!(
            raw.url_policy.as_ref().map(Spanned::get_ref),
            Some(RawUrlPolicies::None)
        ) {
            if let Some(message) = unguarded_url(&raw_schema, &url_policies) {
                let (at, key) = match &raw.url_policy {
                    Some(p) => (p.span().start, "url_policy"),
                    None => (raw.name.span().start, "name"),
                };
                return Err(self
                    .at_key(ErrorCode::UnguardedUrl, at, key, message)
                    .tool(name));
            }
        }

        let mut redact = Vec::with_capacity(raw.redact.len());
        for r in &raw.redact {
            pointer::check_declared(&raw_schema, r.get_ref())
                .map_err(|e| pointer_error(e, r.span().start, "redact", true, r.get_ref()))?;
            redact.push(r.get_ref().clone());
        }

        let mut limits = gate.limits;
        for (limit, value) in raw.limit_fields() {
            let Some(v) = value else { continue };
            let ceiling = gate.limits.get(limit);
            if usize::try_from(*v.get_ref()).map_or(true, |n| n > ceiling) {
                let key = limit_key(limit);
                return Err(self
                    .at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        key,
                        format!("`{key}` = {} is above the gate's {ceiling}", v.get_ref()),
                    )
                    .tool(name));
            }
            limits = self.set_limit(limits, limit, v).map_err(|e| e.tool(name))?;
        }

        Ok(Tool {
            name: name.clone(),
            description: raw
                .description
                .clone()
                .or_else(|| import.and_then(|(i, _)| i.description.clone())),
            risk,
            approval_required,
            schema,
            raw_schema,
            resource,
            url_policies,
            parse_options: ParseOptions::new().with_limits(limits),
            redact,
            origin: ToolOrigin::Config {
                file: self.file.to_path_buf(),
                line,
            },
        })
    }

    /// The schema of a config entry: `schema` (a file path or an inline
    /// table), `schema_json`, or the imported tool's.
    fn schema(
        &self,
        raw: &RawTool,
        import: Option<&(Imported, PathBuf)>,
    ) -> Result<(Value<'static>, SchemaFrom), Error> {
        let name = raw.name.get_ref();
        match (&raw.schema, &raw.schema_json) {
            (Some(_), Some(j)) => Err(self
                .at_key(
                    ErrorCode::ConflictingKeys,
                    j.span().start,
                    "schema_json",
                    "give either `schema` or `schema_json`, not both",
                )
                .tool(name)),
            (Some(s), None) => {
                let span = s.span();
                let from = SchemaFrom::Config {
                    key: "schema",
                    span: span.clone(),
                    path: s.get_ref().as_str().map(str::to_owned),
                };
                match s.get_ref() {
                    toml::Value::String(path) => {
                        let file = self.resolve(path);
                        let bytes = crate::fsread::read(&file).map_err(|e| {
                            self.at_key(
                                ErrorCode::Io,
                                span.start,
                                "schema",
                                format!("`schema`: cannot read `{}`: {e}", path.escape_debug()),
                            )
                            .tool(name)
                            .cause(Cause::Io(e))
                        })?;
                        let value = toolgate_json::from_slice(&bytes).map_err(|e| {
                            Error::new(
                                ErrorCode::InvalidJson,
                                &file,
                                format!("`schema`: invalid JSON: {}", json_summary(&e)),
                            )
                            .at_line_column(e.line(), e.column())
                            .key("schema")
                            .tool(name)
                            .cause(Cause::Json(e))
                        })?;
                        Ok((value.into_owned(), from))
                    }
                    toml::Value::Table(_) => {
                        let value = toml_json::to_json(s.get_ref()).map_err(|(at, why)| {
                            self.at_key(
                                ErrorCode::InvalidSchemaValue,
                                span.start,
                                "schema",
                                format!("`schema`: at `{at}`: {why}"),
                            )
                            .tool(name)
                        })?;
                        Ok((value, from))
                    }
                    other => Err(self
                        .at_key(
                            ErrorCode::InvalidType,
                            span.start,
                            "schema",
                            format!(
                                "`schema` must be a file path or a table, not a {}",
                                other.type_str()
                            ),
                        )
                        .tool(name)),
                }
            }
            (None, Some(j)) => {
                let value = toolgate_json::from_str(j.get_ref()).map_err(|e| {
                    self.at_key(
                        ErrorCode::InvalidJson,
                        j.span().start,
                        "schema_json",
                        format!(
                            "`schema_json`: invalid JSON: {} (line {} column {} of the JSON text)",
                            json_summary(&e),
                            e.line(),
                            e.column()
                        ),
                    )
                    .tool(name)
                    .cause(Cause::Json(e))
                })?;
                Ok((
                    value.into_owned(),
                    SchemaFrom::Config {
                        key: "schema_json",
                        span: j.span(),
                        path: None,
                    },
                ))
            }
            (None, None) => match import {
                Some((tool, file)) => Ok((
                    tool.schema.clone(),
                    SchemaFrom::Import {
                        file: file.clone(),
                        pointer: tool.pointer.clone(),
                    },
                )),
                None => Err(self
                    .at_key(
                        ErrorCode::MissingSchema,
                        raw.name.span().start,
                        "name",
                        "no `schema` or `schema_json`, and no imported tool has this name",
                    )
                    .tool(name)),
            },
        }
    }
}

/// Why a tool with these URL policies cannot load: the first URL argument
/// of its schema (a string with a URI-like `format`) that no policy guards.
fn unguarded_url(schema: &Value, policies: &[UrlPolicyConfig]) -> Option<String> {
    let Some(args) = uri_args::find(schema) else {
        return Some(
            "the schema's `$ref`s fan out too far to find its URL arguments \
             (strings with `format` `uri`, `uri-reference`, `iri` or `iri-reference`): \
             simplify it, or opt out with `url_policy = \"none\"`"
                .to_owned(),
        );
    };
    args.into_iter().find_map(|arg| {
        let shown = arg.display();
        match arg.pointer() {
            Some(p) if policies.iter().any(|q| q.arg == p) => None,
            Some(p) => Some(format!(
                "argument `{shown}` is a URL (`format: \"{}\"` at schema `{}`) and no `url_policy` guards it: \
                 add `url_policy = {{ arg = \"{}\", hosts = [\"…\"] }}`, or opt out with `url_policy = \"none\"`",
                arg.format.escape_debug(),
                arg.schema_pointer.escape_debug(),
                p.escape_debug()
            )),
            None => Some(format!(
                "argument `{shown}` is a URL (`format: \"{}\"` at schema `{}`) under a member named `*`, \
                 which a `url_policy` cannot name (`*` is any item or member): \
                 only `url_policy = \"none\"` lets this tool load, and then nothing checks its URLs",
                arg.format.escape_debug(),
                arg.schema_pointer.escape_debug()
            )),
        }
    })
}

/// `Order`, `Shop::Order`: Cedar entity type names.
fn is_entity_type(s: &str) -> bool {
    s.split("::").all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn url_policy_problem(p: &RawUrlPolicy) -> Option<String> {
    if p.schemes.is_empty() {
        return Some("`schemes` must not be empty".to_owned());
    }
    for s in &p.schemes {
        let mut chars = s.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '-' | '.')
            });
        if !ok {
            return Some(format!(
                "`{}` is not a lower-case URL scheme",
                s.escape_debug()
            ));
        }
    }
    if p.hosts.is_empty() {
        return Some("`hosts` must not be empty: list the hosts the argument may name".to_owned());
    }
    if p.ports.contains(&0) {
        return Some("port 0 is not a port".to_owned());
    }
    None
}

/// The first backticked word of a message: the key in serde's
/// `unknown field `x`` and `missing field `x``.
fn backticked(message: &str) -> Option<String> {
    let rest = message.split_once('`')?.1;
    Some(rest.split_once('`')?.0.to_owned())
}

/// serde's wording, in the config's terms (keys, not fields; no Rust types):
/// `invalid type: string "x", expected u64` reads `expected a non-negative
/// integer, found string "x"`.
fn people_words(message: &str) -> String {
    let message = match message
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.rsplit_once(", expected "))
    {
        Some((found, expected)) => format!("expected {expected}, found {found}"),
        None => message.to_owned(),
    };
    message
        .replace("unknown field", "unknown key")
        .replace("missing field", "missing key")
        .replace("unknown variant", "unknown value")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected u16", "expected an integer from 0 to 65535")
        .replace("a sequence", "an array")
        .replace("expected a map", "expected a table")
        .replace("expected struct ", "expected a table ")
}
