//! The config file as written: serde types, every one closed to unknown keys.
//! [`super::Config`] is built from these after checking every value.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use toml::Spanned;

use super::ImportFormat;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    #[serde(default)]
    pub(crate) gate: RawGate,
    #[serde(default)]
    pub(crate) store: RawStore,
    #[serde(default)]
    pub(crate) authorization: RawAuthorization,
    #[serde(default)]
    pub(crate) approvals: RawApprovals,
    #[serde(default)]
    pub(crate) server: super::front::RawServer,
    #[serde(default)]
    pub(crate) proxy: super::front::RawProxy,
    #[serde(default)]
    pub(crate) mcp: super::front::RawMcp,
    #[serde(default)]
    pub(crate) import: Vec<Spanned<RawImport>>,
    #[serde(default)]
    pub(crate) tool: Vec<RawTool>,
    #[serde(default)]
    pub(crate) limit: Vec<Spanned<super::limits::RawLimit>>,
    pub(crate) resolver: Option<RawResolver>,
    pub(crate) jwt: Option<super::front::RawJwt>,
    pub(crate) login: Option<super::front::RawLogin>,
    pub(crate) oidc: Option<super::front::RawOidc>,
    #[serde(default)]
    pub(crate) telemetry: super::front::RawTelemetry,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResolver {
    pub(crate) mode: Spanned<String>,
    pub(crate) hosts: Option<Spanned<std::collections::BTreeMap<String, Vec<String>>>>,
}

/// One `url_unchecked` entry: an argument the default URL guard leaves
/// alone, and why.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUrlUnchecked {
    pub(crate) arg: String,
    pub(crate) reason: String,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGate {
    pub(crate) max_turns: Option<Spanned<u64>>,
    pub(crate) max_calls_per_response: Option<Spanned<u64>>,
    pub(crate) escalate_after: Option<Spanned<u64>>,
    pub(crate) max_body_bytes: Option<Spanned<u64>>,
    pub(crate) max_argument_bytes: Option<Spanned<u64>>,
    pub(crate) max_depth: Option<Spanned<u64>>,
    pub(crate) max_string_bytes: Option<Spanned<u64>>,
    pub(crate) max_object_members: Option<Spanned<u64>>,
    pub(crate) max_array_items: Option<Spanned<u64>>,
    pub(crate) max_values: Option<Spanned<u64>>,
    pub(crate) receipt_key: Option<Spanned<String>>,
    pub(crate) receipt_seconds: Option<Spanned<u64>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStore {
    pub(crate) url: Option<Spanned<String>>,
    pub(crate) refused_arguments: Option<Spanned<String>>,
    pub(crate) checkpoint_key: Option<Spanned<String>>,
    pub(crate) checkpoint_sink: Option<Spanned<String>>,
    pub(crate) checkpoint_seconds: Option<Spanned<u64>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawApprovals {
    pub(crate) expiry_seconds: Option<Spanned<u64>>,
    pub(crate) max_pending_per_session: Option<Spanned<u64>>,
    pub(crate) max_pending_per_user: Option<Spanned<u64>>,
    pub(crate) max_pending_per_token: Option<Spanned<u64>>,
    #[serde(default)]
    pub(crate) quorum: Vec<RawQuorum>,
    pub(crate) page_url: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) notify: Vec<RawNotify>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNotify {
    pub(crate) name: Spanned<String>,
    pub(crate) kind: RawNotifyKind,
    pub(crate) url: Option<Spanned<String>>,
    pub(crate) url_env: Option<Spanned<String>>,
    pub(crate) secret_file: Option<Spanned<String>>,
    pub(crate) secret_env: Option<Spanned<String>>,
    pub(crate) timeout_ms: Option<Spanned<u64>>,
    pub(crate) max_attempts: Option<Spanned<u64>>,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawNotifyKind {
    Webhook,
    Slack,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQuorum {
    pub(crate) tool: Option<Spanned<String>>,
    pub(crate) risk: Option<RawRisk>,
    pub(crate) approvers: Spanned<u64>,
    pub(crate) not_own: Option<bool>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuthorization {
    pub(crate) mode: Option<Spanned<RawAuthorizationMode>>,
    pub(crate) policies: Option<Spanned<String>>,
    pub(crate) entities: Option<Spanned<String>>,
    pub(crate) schema: Option<Spanned<String>>,
    pub(crate) context_entities: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub(crate) sources: Vec<Spanned<RawEntitySource>>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEntitySource {
    pub(crate) kind: Spanned<RawSourceKind>,
    pub(crate) types: Spanned<Vec<Spanned<String>>>,
    pub(crate) url: Option<Spanned<String>>,
    pub(crate) query: Option<Spanned<String>>,
    pub(crate) timeout_ms: Option<Spanned<u64>>,
    pub(crate) ttl_seconds: Option<Spanned<u64>>,
    pub(crate) max_entries: Option<Spanned<u64>>,
    pub(crate) max_bytes: Option<Spanned<u64>>,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawSourceKind {
    Http,
    Postgres,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawAuthorizationMode {
    Cedar,
    None,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawImport {
    pub(crate) path: Spanned<String>,
    pub(crate) format: ImportFormat,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawRisk {
    Read,
    Write,
    Destructive,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawApproval {
    Required,
    None,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTool {
    pub(crate) name: Spanned<String>,
    pub(crate) namespace: Option<Spanned<String>>,
    pub(crate) description: Option<String>,
    pub(crate) risk: RawRisk,
    pub(crate) approval: Option<RawApproval>,
    pub(crate) schema: Option<Spanned<toml::Value>>,
    pub(crate) schema_json: Option<Spanned<String>>,
    pub(crate) resource: Option<Spanned<RawResource>>,
    pub(crate) url_policy: Option<Spanned<RawUrlPolicies>>,
    #[serde(default)]
    pub(crate) redact: Vec<Spanned<String>>,
    pub(crate) max_argument_bytes: Option<Spanned<u64>>,
    pub(crate) max_depth: Option<Spanned<u64>>,
    pub(crate) max_string_bytes: Option<Spanned<u64>>,
    pub(crate) max_object_members: Option<Spanned<u64>>,
    pub(crate) max_array_items: Option<Spanned<u64>>,
    pub(crate) max_values: Option<Spanned<u64>>,
    /// `round_numbers = true`: DANGER, admit numbers a double cannot hold,
    /// rounded (refused by default, `number_too_precise`).
    #[serde(default)]
    pub(crate) round_numbers: bool,
    /// `url_unchecked = [{ arg, reason }]`: DANGER, arguments the default
    /// URL guard leaves alone.
    #[serde(default)]
    pub(crate) url_unchecked: Vec<Spanned<RawUrlUnchecked>>,
    /// `labels = ["untrusted_content"]`: session labels its results bring.
    pub(crate) labels: Option<Spanned<Vec<Spanned<String>>>>,
    /// `egress = true`: it can send data out.
    #[serde(default)]
    pub(crate) egress: bool,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResource {
    #[serde(rename = "type")]
    pub(crate) entity_type: String,
    pub(crate) id: String,
}

fn default_schemes() -> Vec<String> {
    vec!["https".to_owned()]
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUrlPolicy {
    pub(crate) arg: String,
    #[serde(default = "default_schemes")]
    pub(crate) schemes: Vec<String>,
    pub(crate) hosts: Vec<String>,
    #[serde(default)]
    pub(crate) ports: Vec<u16>,
    #[serde(default)]
    pub(crate) allow_private: bool,
    pub(crate) resolve: Option<bool>,
}

/// A tool's `url_policy`: one table or an array of tables (`url_policy =
/// { … }`, `url_policy = [{ … }, { … }]`, also `[[tool.url_policy]]`), or
/// the named opt-out `url_policy = "none"`.
#[derive(Debug)]
pub(crate) enum RawUrlPolicies {
    /// `url_policy = "none"`: DANGER, the tool's URL arguments are unchecked.
    None,
    /// The policies.
    Policies(Vec<RawUrlPolicy>),
}

impl<'de> Deserialize<'de> for RawUrlPolicies {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawUrlPolicies;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table, an array of tables, or \"none\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                if v == "none" {
                    Ok(RawUrlPolicies::None)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(v), &self))
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                RawUrlPolicy::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|t| RawUrlPolicies::Policies(vec![t]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(t) = seq.next_element()? {
                    out.push(t);
                }
                Ok(RawUrlPolicies::Policies(out))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The parse limits of a `[gate]` or `[[tool]]` table, with their config names.
macro_rules! limit_fields {
    ($t:ty) => {
        impl $t {
            pub(crate) fn limit_fields(
                &self,
            ) -> [(toolgate_json::Limit, &Option<Spanned<u64>>); 6] {
                use toolgate_json::Limit;
                [
                    (Limit::InputBytes, &self.max_argument_bytes),
                    (Limit::Depth, &self.max_depth),
                    (Limit::StringBytes, &self.max_string_bytes),
                    (Limit::ObjectMembers, &self.max_object_members),
                    (Limit::ArrayItems, &self.max_array_items),
                    (Limit::Values, &self.max_values),
                ]
            }
        }
    };
}

limit_fields!(RawGate);
limit_fields!(RawTool);

/// The config name of a parse limit (`max_argument_bytes` is the parser's
/// `max_input_bytes`: the arguments are the input).
pub(crate) fn limit_key(limit: toolgate_json::Limit) -> &'static str {
    match limit {
        toolgate_json::Limit::InputBytes => "max_argument_bytes",
        other => other.name(),
    }
}

/// What each table above is for, for the configuration reference
/// ([`super::reference`]): registered here, beside the types.
pub(crate) const TABLE_DOCS: &[super::reference::TableDoc] = &[
    super::reference::TableDoc {
        type_name: "RawGate",
        about: "The gate's limits, for every surface. A call or response past one is denied with its code.",
        keys: &[
            ("max_turns", "a session's decided responses before every call of it is `loop_limit` (default 20)"),
            ("max_calls_per_response", "calls in one response; more deny them all `too_many_calls` (default 16)"),
            ("escalate_after", "rejections after which a session's non-read calls need a human (default 3)"),
            ("max_body_bytes", "a provider response body, JSON or stream (default 8 MiB, at most 1 GiB)"),
            ("max_argument_bytes", "a call's arguments as received (`too_large`); the parse limits below apply to every tool, a tool may lower them"),
            ("receipt_key", "an Ed25519 seed (64 hex digits) file: each decision carries a signed receipt an executor verifies"),
            ("receipt_seconds", "how long a receipt is valid (default 60, 1 to 3600)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawStore",
        about: "Where decisions, approvals, counters and the audit log are kept.",
        keys: &[
            ("url", "`sqlite://PATH` (relative to this file; the default `sqlite://toolgate.db`), `sqlite:///ABS`, `sqlite::memory:` or `postgres://…`"),
            ("refused_arguments", "arguments that never parsed are audited as `\"text\"` (their first 4 KiB, the default) or `\"digest\"`"),
            ("checkpoint_key", "an Ed25519 seed (64 hex digits) file: signed checkpoints of the audit chain"),
            ("checkpoint_sink", "the file checkpoints are appended to"),
            ("checkpoint_seconds", "how often `serve` writes one (default 300)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawAuthorization",
        about: "Who may call what: Cedar policies over the user, the tool and the resource. Without this table every call is denied `not_authorized`.",
        keys: &[
            ("mode", "`\"cedar\"` (the default with `policies`) or `\"none\"` (DANGER: no per-user check)"),
            ("policies", "the Cedar policy file"),
            ("entities", "the Cedar entities file (JSON): users, roles, resources"),
            ("schema", "the Cedar schema; required with `policies`"),
            ("context_entities", "entity types a decision context may add (default none)"),
            ("sources", "`[[authorization.sources]]`: entities the gate fetches itself (see the table below)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawEntitySource",
        about: "An entity source the gate queries for the call's resource when the static entities do not define it; an answer that fails, is late or malformed denies `entity_source_unavailable`.",
        keys: &[
            ("kind", "`\"http\"` (JSON entities by type and id) or `\"postgres\"` (a query, read-only)"),
            ("types", "the entity types this source serves"),
            ("url", "the endpoint (`http://`) or the PostgreSQL URL"),
            ("query", "PostgreSQL only: the query, `$1` the type and `$2` the id"),
            ("timeout_ms", "the whole exchange (default 1000, at most 30000)"),
            ("ttl_seconds", "how long an answer is cached (default 5; 0: never)"),
            ("max_entries", "cached answers (default 10000)"),
            ("max_bytes", "the largest answer read (default 64 KiB, at most 1 MiB)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawApprovals",
        about: "Pending human approvals: their life and how many may wait (a held call beyond is `approval_queue_full`).",
        keys: &[
            ("expiry_seconds", "a pending approval's life (default 3600)"),
            ("max_pending_per_session", "default 20"),
            ("max_pending_per_user", "default 100"),
            ("max_pending_per_token", "approvals one `serve` token asked for (default 200)"),
            ("quorum", "two-person rules: how many distinct approvers a held call of a tool or risk tier needs"),
            ("page_url", "the approvals page's address as approvers reach it (`https://gate.example.com/ui/`): notifications link to `PAGE_URL#approval-ID`"),
            ("notify", "where `toolgate serve` sends a notice of each held call"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawNotify",
        about: "A notification sink: `toolgate serve` posts a notice of each new pending approval to it, off the decision path (a failing sink never approves, blocks or slows anything; deliveries are recorded).",
        keys: &[
            ("name", "the sink's name in delivery records (`[a-z0-9_-]`, 1 to 64)"),
            ("kind", "`webhook`: toolgate's JSON notice, signed; `slack`: a Slack-compatible incoming-webhook message"),
            ("url", "where to post (`http` or `https`); exactly one of `url` and `url_env`"),
            ("url_env", "the environment variable holding the URL (a Slack webhook URL is a secret)"),
            ("secret_file", "webhook: a file holding the HMAC-SHA256 key (at least 16 bytes); exactly one of `secret_file` and `secret_env`"),
            ("secret_env", "webhook: the environment variable holding the HMAC-SHA256 key"),
            ("timeout_ms", "one attempt's deadline (default 5000, at most 60000)"),
            ("max_attempts", "attempts before a delivery is recorded failed (default 4, at most 10)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawQuorum",
        about: "A two-person rule: a held call of `tool` (or of any tool of `risk`) is approved only when `approvers` distinct approvers (by identity, not by token) approved it. Where several rules match, the most approvers and any `not_own` win.",
        keys: &[
            ("tool", "the tool it covers (exactly one of `tool` and `risk`)"),
            ("risk", "the risk tier it covers"),
            ("approvers", "distinct approvers needed, 1 to 10"),
            ("not_own", "refuse the user the call was made for as an approver (default false)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawServer",
        about: "`toolgate serve`, the HTTP service.",
        keys: &[
            ("listen", "address and port (default `127.0.0.1:8080`)"),
            ("max_body_bytes", "a request body's cap (default 8 MiB)"),
            ("header_timeout_seconds", "a request's headers must arrive within this (default 10)"),
            ("body_timeout_seconds", "a request's body must arrive within this (default 30; `408`)"),
            ("max_connections", "connections served at once; more wait (default 1024)"),
            ("metrics_auth", "whether `GET /metrics` needs a bearer token (default `\"none\"`)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawToken",
        about: "A bearer token of `toolgate serve`, stored as its SHA-256.",
        keys: &[
            ("name", "the actor in the audit log"),
            ("sha256", "the token's SHA-256, 64 hex digits"),
            ("role", "what it may do: decide (agent), decide approvals (approver), everything (admin)"),
            ("users", "the users an agent token may decide for: names, or prefixes ending in `*` (default: any)"),
            ("identity", "the person holding an approver or admin token, as a two-person rule counts approvers (default: the token's `name`)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawProxy",
        about: "`toolgate proxy`, the model-API proxy (see its chapter for every key).",
        keys: &[
            ("listen", "default `127.0.0.1:8090`"),
            ("openai", "the upstream of `/v1/chat/completions` and `/v1/responses`"),
            ("anthropic", "the upstream of `/v1/messages`"),
            ("forward", "other routes passed on unchanged, `\"METHOD /v1/path\"` (`*`: one segment)"),
            ("on_deny", "a denied call becomes assistant text (`\"feedback\"`) or the response an API error"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawProxyToken",
        about: "A token an application sends to the proxy (`token_header`), and the user it speaks for.",
        keys: &[],
    },
    super::reference::TableDoc {
        type_name: "RawMcp",
        about: "`toolgate mcp`, the MCP proxy (stdio, or HTTP with `listen`; see its chapter).",
        keys: &[
            ("user", "the user every call is decided as (default `\"mcp\"`)"),
            ("env", "variables the server is given from toolgate's environment (default none)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawMcpToken",
        about: "A bearer token of the MCP HTTP endpoint, and the user (and session) it speaks for.",
        keys: &[],
    },
    super::reference::TableDoc {
        type_name: "RawMcpUpstream",
        about: "An MCP server behind the HTTP endpoint: a `url`, or a `command` with `args`.",
        keys: &[],
    },
    super::reference::TableDoc {
        type_name: "RawImport",
        about: "Tools imported from a list users already have (`import = [{ path, format }]`); a `[[tool]]` of the same name overrides the import.",
        keys: &[("format", "the list's format")],
    },
    super::reference::TableDoc {
        type_name: "RawLimit",
        about: "`[[limit]]`: a rate limit (`calls`) or a budget (`sum`) over a sliding window, counted in the store with the audit record; a call past it is `rate_limited` or `budget_exceeded`.",
        keys: &[
            ("name", "the limit's name (`[a-z0-9_]`), unique; shown by `toolgate usage` and reset by it"),
            ("tools", "the tools it counts"),
            ("per", "`\"user\"`, `\"session\"`, `\"token\"` or `\"global\"`: whose calls are counted together"),
            ("calls", "a rate limit: calls that run per window"),
            ("sum", "a budget: the JSON Pointer of the numeric argument summed (exact decimals)"),
            ("max", "the cap of `calls` or of the sum"),
            ("over", "a budget crossed: `\"deny\"` (the default) or `\"approval\"` (held for a human)"),
            ("window_seconds", "the sliding window (1 s to 31 days)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawTool",
        about: "A tool the model may call. A call to any other name is `unknown_tool`.",
        keys: &[
            ("name", "the exact name the model calls (compared byte for byte)"),
            ("namespace", "a namespace only calls naming it reach (registered as `NAMESPACE.NAME`)"),
            ("risk", "what a call does: reads, writes, or destroys; decides approval's default and `deny_writes`"),
            ("approval", "whether a call needs a human (default: `\"required\"` unless `risk = \"read\"`)"),
            ("schema", "the JSON Schema (2020-12, strict): a file path or an inline table"),
            ("schema_json", "the JSON Schema as JSON text"),
            ("url_policy", "the URL policies of its URL arguments: `{ arg, hosts, schemes, ports, allow_private, resolve }`, an array of them, or `\"none\"` (DANGER)"),
            ("redact", "JSON Pointers of arguments kept out of the audit log and the approvals page"),
            ("round_numbers", "DANGER: admit numbers a double cannot hold, rounded (default `false`: `number_too_precise`)"),
            ("labels", "session labels the tool's results bring in (e.g. `untrusted_content`, `private_data`), for policies"),
            ("egress", "`true` when the tool can send data out (email, HTTP POST, a URL from arguments)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawResource",
        about: "The resource a call acts on, for authorization: its Cedar entity type and the JSON Pointer of its id in the arguments.",
        keys: &[],
    },
    super::reference::TableDoc {
        type_name: "RawUrlUnchecked",
        about: "An argument the default URL guard leaves alone, and why (`toolgate lint` shows it).",
        keys: &[],
    },
    super::reference::TableDoc {
        type_name: "RawResolver",
        about: "How URL policies resolve hosts: `\"system\"`, or `\"static\"` with a `hosts` table of names to addresses. With this table, hosts resolve by default.",
        keys: &[],
    },
    super::reference::TableDoc {
        type_name: "RawJwt",
        about: "Bearer tokens from the organisation's identity provider (JWTs), accepted beside the static tokens by `serve`, `mcp --listen` and `proxy`: see [Identity](identity.md).",
        keys: &[
            ("issuer", "the `iss` every token must carry"),
            ("audience", "this service's identifiers: a token's `aud` must name one"),
            ("jwks_file", "the issuer's public keys (a JWKS file), read at start"),
            ("jwks_url", "the issuer's JWKS URL (`https://`; `http://` on loopback only), fetched at start and every `refresh_seconds`"),
            ("algorithms", "allowed `alg` values (default all of RS256–512, PS256–512, ES256, ES384, EdDSA; never `none` or HMAC)"),
            ("user_claim", "the claim naming the user the gate decides for (default `sub`)"),
            ("roles_claim", "the claim listing the caller's groups (e.g. `groups`)"),
            ("roles", "for `serve`: `agent`, `approver`, `admin`, each a list of `roles_claim` values that grant it (the highest matched wins)"),
            ("default_role", "the role of a token no `roles` entry matches (default `agent` without `roles_claim`, else refused)"),
            ("leeway_seconds", "the clock skew allowed on `exp` and `nbf` (default 30, at most 300)"),
            ("refresh_seconds", "how often `jwks_url` is fetched again (default 300, 30 to 86400)"),
            ("mcp_resource", "the MCP endpoint's URL (`https://host/mcp`): its OAuth protected resource metadata names it, and its tokens' `aud` must (RFC 9728, RFC 8707)"),
            ("authorization_servers", "the authorization servers that metadata names (default: `issuer`)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawLogin",
        about: "Approvers log in to the approvals page with the organisation's identity, as an authenticating reverse proxy asserts it (`GET /ui/login/proxy`): see [Identity](identity.md).",
        keys: &[
            ("user_header", "the header naming the user (e.g. `x-forwarded-user`)"),
            ("groups_header", "the header listing the user's groups, comma-separated (e.g. `x-forwarded-groups`)"),
            ("trusted_proxies", "the reverse proxy's IP addresses: the headers from any other peer are refused"),
            ("roles", "`approver` and `admin`, each a list of groups that grant it (the highest matched wins)"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawOidc",
        about: "Approvers log in to the approvals page with OpenID Connect (authorization code with PKCE, `GET /ui/login/oidc`); the id_token is verified with `[jwt]`'s issuer and keys, roles from `[jwt.roles]`: see [Identity](identity.md).",
        keys: &[
            ("client_id", "toolgate's client id at the provider (the id_token's audience)"),
            ("redirect_uri", "`https://HOST/ui/login/oidc/callback`, as registered at the provider"),
            ("authorization_endpoint", "the provider's authorization endpoint; with `token_endpoint`, or neither: then both are read from `[jwt]` issuer's discovery document (`/.well-known/openid-configuration`) when the service starts"),
            ("token_endpoint", "the provider's token endpoint (with `authorization_endpoint`, or neither)"),
            ("client_secret_file", "a confidential client's secret, in a file (its final newline is not part of it)"),
            ("client_secret_env", "a confidential client's secret, in an environment variable"),
            ("token_endpoint_auth", "`\"none\"` (a public client: the default without a secret), `\"client_secret_basic\"` (the default with one) or `\"client_secret_post\"`"),
        ],
    },
    super::reference::TableDoc {
        type_name: "RawTelemetry",
        about: "OpenTelemetry traces and metrics over OTLP, and the decision log (see the operations chapter). Without `endpoint` nothing is exported; argument values never leave unless a tool is listed in `record_arguments`.",
        keys: &[
            ("endpoint", "the OTLP receiver's base URL, `http://` or `https://` (e.g. `http://127.0.0.1:4318`; `/v1/traces` and `/v1/metrics` are appended for HTTP)"),
            ("protocol", "`\"http/protobuf\"` (the default) or `\"grpc\"` (a build with the `grpc` feature)"),
            ("sample_ratio", "the share of traces started here that are kept, 0 to 1 (default 1); a caller's `traceparent` decision is followed"),
            ("service_name", "the `service.name` resource attribute (default `\"toolgate\"`)"),
            ("queue_size", "spans waiting for export; past it spans are dropped and counted, never waited for (default 2048, at most 65536)"),
            ("metrics_seconds", "how often metrics are exported over OTLP (default 60; 0: no OTLP metrics)"),
            ("record_arguments", "tools whose arguments, redacted as the audit log redacts, go on their decision spans as `gen_ai.tool.call.arguments` (default none)"),
            ("log_format", "`\"text\"` (the default) or `\"json\"`: one JSON line per event with `trace_id` and `span_id`"),
            ("decision_log", "the level of the one event per decision: `\"off\"` (the default), `\"debug\"` or `\"info\"`"),
        ],
    },
];
