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
//! receipt_key = "receipts.key" # sign a receipt of every decision: an Ed25519
//!                              # seed, 64 hex digits (optional)
//! receipt_seconds = 60         # how long a receipt is valid (default 60)
//!
//! [store]
//! url = "sqlite://toolgate.db"  # the default; relative to this file's folder;
//!                               # or "sqlite:///abs/path.db", "sqlite::memory:"
//! refused_arguments = "text"    # arguments that never parsed are audited by
//!                               # their first 4 KiB ("text", the default) or
//!                               # their length and keyed digest ("digest")
//! checkpoint_key = "audit.key"  # signed checkpoints of the audit chain: an
//!                               # Ed25519 seed, 64 hex digits (optional)
//! checkpoint_sink = "/var/lib/toolgate-checkpoints/serve.jsonl"
//!                               # where they are appended (with the key)
//! checkpoint_seconds = 300      # how often `serve` writes one (default 300)
//!
//! [approvals]
//! expiry_seconds = 3600         # a pending approval's life (default one hour)
//! max_pending_per_session = 20  # approvals waiting per session (default 20)
//! max_pending_per_user = 100    # approvals waiting per user (default 100)
//! max_pending_per_token = 200   # approvals waiting that one `serve` token
//!                               # asked for, whatever users it names
//!                               # (default 200); a held call beyond any
//!                               # is denied `approval_queue_full`
//!
//! [server]                    # `toolgate serve`
//! listen = "127.0.0.1:8080"   # the default
//! max_body_bytes = 8388608    # a request body's cap (default 8 MiB)
//! header_timeout_seconds = 10 # a request's headers must arrive within this
//!                             # (also an idle keep-alive connection's life)
//! body_timeout_seconds = 30   # a request's body must arrive within this (408)
//! max_connections = 1024      # connections served at once; more wait
//!                             # (these three limits hold on every listener:
//!                             # serve, mcp --listen and proxy; see toolgate-edge)
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
//! [proxy]                     # `toolgate proxy`: the model-API proxy
//! listen = "127.0.0.1:8090"   # the default
//! openai = "https://api.openai.com"        # /v1/chat/completions, /v1/responses
//! anthropic = "https://api.anthropic.com"  # /v1/messages
//! forward = ["GET /v1/models", "GET /v1/models/*"] # other routes forwarded
//!                             # unchanged (`*`: one path segment); the rest
//!                             # 404; stored output (responses.retrieve, …)
//!                             # is never forwarded
//! on_deny = "feedback"        # a denied call becomes assistant text ("error":
//!                             # the whole response becomes an API error)
//! user_header = "x-user"      # the user: a header a trusted front sets, or
//!                             # `user = "alice"` (one fixed user), or
//!                             # [[proxy.token]] sha256 = "…", user = "alice"
//!                             # (the token in `token_header`, default
//!                             # x-toolgate-token)
//! session_header = "x-toolgate-session"   # the default
//! upstream_timeout_seconds = 300 # a whole upstream response (default 300)
//! idle_timeout_seconds = 60   # silence between two stream events (default 60)
//! pass_through = []           # built-in item types that may pass (see the proxy's pass list)
//! narrow_tools = false        # narrow each request's `tools` for its user
//! strip_markup = false        # replace text holding tool-call markup (JSON)
//! wrap_results = false        # wrap tool results in the history as untrusted
//!                             # data (sanitized and capped either way)
//! offered_tools = "report"    # a registered tool offered with another schema:
//!                             # "report" | "replace" (the registered one) |
//!                             # "refuse" (400); reported and audited always
//! deepseek = "report"         # DeepSeek thinking-mode request pitfalls:
//!                             # "report" | "normalize"
//!
//! [mcp]                       # `toolgate mcp` (stdio; `--listen`: see
//!                             # toolgate_edge::config::McpHttpConfig for listen, [[mcp.token]],
//!                             # [[mcp.upstream]] and the other HTTP keys)
//! user = "mcp"                # the user every call is decided as (default "mcp")
//! env = ["PATH", "HOME"]      # variables the server is given from toolgate's
//!                             # environment (default none: an empty one)
//! max_frame_bytes = 4194304   # one JSON-RPC line from either side (default 4 MiB)
//! call_timeout_seconds = 60   # a forwarded tools/call's wait for the server
//! max_result_bytes = 65536    # a result's text, capped (default 64 KiB)
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
//! url_unchecked = [{ arg = "/note", reason = "shown as text, never fetched" }]
//! round_numbers = false              # true: admit numbers a double cannot hold, rounded
//! labels = ["untrusted_content"]     # session labels its results bring in
//! egress = true                      # it can send data out (policies: context.egress)
//!
//! [[limit]]                          # rate limits and budgets (crate::limit::Limit)
//! name = "refund_total"
//! tools = ["refund"]
//! per = "user"                       # user | session | token | global
//! sum = "/amount"                    # or `calls = N` (a rate limit)
//! max = "500.00"                     # exact decimal string or integer
//! over = "deny"                      # or "approval"
//! window_seconds = 86400
//!
//! [resolver]                         # hosts resolve by default where this table is
//! mode = "static"                    # or "system"
//! hosts = { "example.com" = ["93.184.215.14"], "*.example.com" = ["93.184.215.14"] }
//! ```
//!
//! A `url_policy` takes `arg`, `hosts`, and optionally `schemes` (default
//! `["https"]`), `ports` (default: the scheme's), `allow_private` (default
//! `false`) and `resolve` (default: `true` with a `[resolver]` table,
//! `false` without): resolving, the gate resolves the host (through the
//! `[resolver]` table's resolver, or [`GateBuilder::resolver`](crate::GateBuilder::resolver),
//! the system resolver by default), denies the call `url_policy` if any
//! address is forbidden or none is found (`url_resolve_failed`), and pins
//! the checked addresses in [`Decision::pinned`](crate::Decision::pinned).
//! A `[resolver]` table is `mode = "system"` or `mode = "static"` with a
//! `hosts` table of lower-case names or `*.` wildcards to IP addresses
//! ([`ResolverConfig`]; at most [`MAX_STATIC_NAMES`] names of at most
//! [`MAX_STATIC_ADDRESSES`] addresses); [`crate::Gate::from_config`] gives
//! the gate its resolver. `hosts` are read by the
//! URL guard itself ([`crate::url_guard`]): exact names, `*.` wildcards
//! with at least two labels, IP addresses, or `*` (any host that passes
//! the other checks); a policy it cannot compile is a config error with
//! its reason.
//!
//! URL arguments are guarded by default: every string argument that no
//! `url_policy` names and that looks like a URL (the schema gives it a
//! URI-like `format` anywhere, its name is URL-like, or its value parses as
//! a network URL) must pass the default URL policy
//! ([`UrlPolicyConfig::default_guard`](crate::url_guard::UrlPolicyConfig::default_guard)),
//! unless `url_unchecked` exempts it by name with a reason (which `toolgate
//! lint` shows) or the tool opts out whole with `url_policy = "none"`
//! (DANGER: then nothing checks its URLs). A schema whose `$ref`s fan out
//! too far to find its URL arguments does not load
//! ([`ErrorCode::UnguardedUrl`]). A policy's `arg` may name every item of
//! an array or value of a map with a `*` token (`arg = "/links/*/href"`):
//! each one present is checked. An imported tool gets the default guard, or
//! the policy of a `[[tool]]` entry of its name.
//!
//! `round_numbers = true` (DANGER) admits numbers a double cannot hold
//! exactly, rounded; by default their calls are denied `number_too_precise`.
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
//!
//! `namespace = "crm"` in a `[[tool]]` entry declares a tool that only a call
//! naming that namespace calls (an OpenAI Responses `function_call` with
//! `"namespace": "crm"`): it is registered as `crm.NAME` (the name audit
//! records and policies see), a call to `NAME` without the namespace (or in
//! another) is `unknown_tool`, and a call named `crm.NAME` without one is
//! too. A namespace follows the rules of a name and holds no `.`.

mod approvals;
mod authorization;
mod error;
pub mod front;
mod gate;
mod import;
mod limits;
mod load;
mod pins;
mod pointer;
mod raw;
mod receipts;
pub mod reference;
mod resolver;
mod sources;
mod store;
mod toml_json;
mod tool;
pub(crate) mod uri_args;

use std::path::{Path, PathBuf};

use self::error::Cause;
use self::front::FrontEndTables;
use self::load::Loader;
use crate::registry::Registry;

// The public interface is:
pub use self::approvals::{
    ApprovalsConfig, NotifyKind, NotifySink, QuorumNeed, QuorumRule, QuorumScope,
    DEFAULT_APPROVAL_EXPIRY_SECONDS, DEFAULT_MAX_PENDING_PER_SESSION, DEFAULT_MAX_PENDING_PER_USER,
    MAX_APPROVAL_EXPIRY_SECONDS, MAX_MAX_PENDING, MAX_QUORUM_APPROVERS, MIN_NOTIFY_SECRET_BYTES,
};
pub use self::authorization::{AuthorizationConfig, AuthorizationMode};
pub use self::error::{Error, ErrorCode};
pub use self::gate::{
    GateConfig, DEFAULT_ESCALATE_AFTER, DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_CALLS_PER_RESPONSE,
    DEFAULT_MAX_TURNS,
};
pub use self::import::ImportFormat;
pub use self::limits::{MAX_LABEL_BYTES, MAX_TOOL_LABELS};
pub use self::load::{import_file, import_slice};
pub use self::pins::{
    valid_upstream_name, PinFirst, DEFAULT_UPSTREAM_NAME, MAX_UPSTREAM_NAME_BYTES,
};
pub use self::receipts::ReceiptConfig;
pub use self::resolver::{ResolverConfig, MAX_STATIC_ADDRESSES, MAX_STATIC_NAMES};
pub use self::sources::{EntitySourceConfig, SourceKind};
pub use self::store::{
    CheckpointConfig, RefusedArguments, StoreConfig, DEFAULT_CHECKPOINT_SECONDS, DEFAULT_STORE_URL,
};
/// A loaded config: every value checked, every schema compiled.
#[derive(Debug, Clone)]
pub struct Config {
    path: PathBuf,
    gate: GateConfig,
    store: StoreConfig,
    approvals: ApprovalsConfig,
    authorization: AuthorizationConfig,
    resolver: Option<ResolverConfig>,
    receipts: Option<ReceiptConfig>,
    registry: Registry,
    limits: Vec<crate::limit::Limit>,
    front: FrontEndTables,
    text: Text,
}

/// The config's text, kept to place the front ends' errors (not printed
/// by `Debug`).
#[derive(Clone)]
struct Text(std::sync::Arc<str>);

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Text({} bytes)", self.0.len())
    }
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
        Loader::new(text, path.as_ref()).load()
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

    /// The front ends' tables as written: checked for unknown keys and
    /// value types by [`Config::load`], their values by the crate that owns
    /// them (`toolgate_edge::config`), which every front end calls right
    /// after loading (see [`front`]).
    pub fn front_end_tables(&self) -> &FrontEndTables {
        &self.front
    }

    /// An error at the key whose value starts at byte `value_start` of the
    /// config's text (a [`front::Spanned`] value's `span().start`): the
    /// file, the key's line and column, and the key.
    pub fn error_at_key(
        &self,
        code: ErrorCode,
        value_start: usize,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(code, &self.path, message)
            .at_offset(&self.text.0, error::key_start(&self.text.0, value_start))
            .key(key)
    }

    /// An error at the value that starts at byte `value_start` of the
    /// config's text (an array's element), under `key`.
    pub fn error_at_value(
        &self,
        code: ErrorCode,
        value_start: usize,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(code, &self.path, message)
            .at_offset(&self.text.0, value_start)
            .key(key)
    }

    /// An error about a whole table (named by `key`), without a position.
    pub fn error_in_table(&self, code: ErrorCode, key: &str, message: impl Into<String>) -> Error {
        Error::new(code, &self.path, message).key(key)
    }

    /// The folder relative paths in the config are resolved against (the
    /// config file's folder).
    pub fn base_dir(&self) -> &Path {
        self.path.parent().unwrap_or_else(|| Path::new(""))
    }

    /// Signed receipts (`[gate] receipt_key`, `receipt_seconds`), if the
    /// config names a key.
    pub fn receipts(&self) -> Option<&ReceiptConfig> {
        self.receipts.as_ref()
    }

    /// The `[authorization]` table.
    pub fn authorization(&self) -> &AuthorizationConfig {
        &self.authorization
    }

    /// The `[resolver]` table, if the config has one: then URL policies
    /// resolve hosts by default, and [`Gate::from_config`](crate::Gate::from_config)
    /// gives the gate this resolver.
    pub fn resolver(&self) -> Option<&ResolverConfig> {
        self.resolver.as_ref()
    }

    /// The tools.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The `[[limit]]` tables: rate limits and budgets (see
    /// [`crate::limit::Limit`]).
    pub fn limits(&self) -> &[crate::limit::Limit] {
        &self.limits
    }

    /// The tools, owned.
    pub fn into_registry(self) -> Registry {
        self.registry
    }
}
