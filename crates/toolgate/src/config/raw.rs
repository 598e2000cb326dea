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
    pub(crate) server: RawServer,
    #[serde(default)]
    pub(crate) proxy: RawProxy,
    #[serde(default)]
    pub(crate) mcp: RawMcp,
    #[serde(default)]
    pub(crate) import: Vec<Spanned<RawImport>>,
    #[serde(default)]
    pub(crate) tool: Vec<RawTool>,
    #[serde(default)]
    pub(crate) limit: Vec<Spanned<super::limits::RawLimit>>,
    pub(crate) resolver: Option<RawResolver>,
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
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) max_body_bytes: Option<Spanned<u64>>,
    pub(crate) header_timeout_seconds: Option<Spanned<u64>>,
    pub(crate) body_timeout_seconds: Option<Spanned<u64>>,
    pub(crate) max_connections: Option<Spanned<u64>>,
    pub(crate) store_poll_ms: Option<Spanned<u64>>,
    pub(crate) metrics_auth: Option<Spanned<RawMetricsAuth>>,
    #[serde(default)]
    pub(crate) token: Vec<RawToken>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProxy {
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) openai: Option<Spanned<String>>,
    pub(crate) anthropic: Option<Spanned<String>>,
    pub(crate) forward: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) on_deny: Option<Spanned<RawOnDeny>>,
    pub(crate) user: Option<Spanned<String>>,
    pub(crate) user_header: Option<Spanned<String>>,
    pub(crate) token_header: Option<Spanned<String>>,
    pub(crate) session_header: Option<Spanned<String>>,
    pub(crate) upstream_timeout_seconds: Option<Spanned<u64>>,
    pub(crate) idle_timeout_seconds: Option<Spanned<u64>>,
    pub(crate) pass_through: Option<Spanned<Vec<String>>>,
    pub(crate) narrow_tools: Option<bool>,
    pub(crate) wrap_results: Option<bool>,
    pub(crate) strip_markup: Option<bool>,
    pub(crate) offered_tools: Option<Spanned<String>>,
    pub(crate) deepseek: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) token: Vec<RawProxyToken>,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawOnDeny {
    Feedback,
    Error,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawProxyToken {
    pub(crate) sha256: Spanned<String>,
    pub(crate) user: Spanned<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcp {
    pub(crate) user: Option<Spanned<String>>,
    pub(crate) env: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) max_frame_bytes: Option<Spanned<u64>>,
    pub(crate) call_timeout_seconds: Option<Spanned<u64>>,
    pub(crate) max_result_bytes: Option<Spanned<u64>>,
    pub(crate) hold_seconds: Option<Spanned<u64>>,
    pub(crate) narrow_tools: Option<bool>,
    pub(crate) upstream_name: Option<Spanned<String>>,
    pub(crate) pin_first: Option<Spanned<String>>,
    pub(crate) approvals_url: Option<Spanned<String>>,
    pub(crate) listen: Option<Spanned<String>>,
    pub(crate) allowed_origins: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) allowed_hosts: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) max_sessions: Option<Spanned<u64>>,
    pub(crate) session_idle_seconds: Option<Spanned<u64>>,
    #[serde(default)]
    pub(crate) token: Vec<RawMcpToken>,
    #[serde(default)]
    pub(crate) upstream: Vec<RawMcpUpstream>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpToken {
    pub(crate) sha256: Spanned<String>,
    pub(crate) user: Spanned<String>,
    pub(crate) session: Option<Spanned<String>>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcpUpstream {
    pub(crate) name: Spanned<String>,
    pub(crate) url: Option<Spanned<String>>,
    pub(crate) command: Option<Spanned<String>>,
    pub(crate) args: Option<Vec<String>>,
    pub(crate) env: Option<Spanned<Vec<Spanned<String>>>>,
    pub(crate) namespace: Option<bool>,
    pub(crate) prefix: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawMetricsAuth {
    None,
    Token,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawToken {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) sha256: Spanned<String>,
    pub(crate) role: RawRole,
    pub(crate) users: Option<Spanned<Vec<String>>>,
}

#[derive(Debug, Clone, Copy, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawRole {
    Agent,
    Approver,
    Admin,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAuthorization {
    pub(crate) mode: Option<Spanned<RawAuthorizationMode>>,
    pub(crate) policies: Option<Spanned<String>>,
    pub(crate) entities: Option<Spanned<String>>,
    pub(crate) schema: Option<Spanned<String>>,
    pub(crate) context_entities: Option<Spanned<Vec<Spanned<String>>>>,
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
