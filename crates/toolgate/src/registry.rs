//! The tool registry: the tools a gate knows, looked up by exact name.
//!
//! A [`Registry`] is built once, by [`crate::config::Config::load`] (toolgate's
//! TOML config, with its imports) or by [`crate::config::import_file`] (a tool
//! list as users already have it: OpenAI, Anthropic or MCP), and is immutable
//! afterwards. Every [`Tool`] in it carries a compiled schema: a registry
//! with a tool whose schema does not compile cannot exist.
//!
//! Names are compared byte for byte ([`Registry::get`]): no case folding, no
//! Unicode normalization, no trimming, no prefix matching. A name that came
//! from JSON is compared after JSON unescaping, so `"ref\u0075nd"` *is*
//! `refund`, while `Refund`, `refund ` and the NFD spelling of `café` are
//! other names.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use toolgate_json::{ParseOptions, Value};
use toolgate_schema::Schema;

/// How much harm a tool can do. The tiers are complete by definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Risk {
    /// Reads data; changes nothing.
    Read,
    /// Changes data in a way that can be undone.
    Write,
    /// Changes data in a way that cannot be undone (deletes, payments, refunds).
    Destructive,
}

impl Risk {
    /// The tier as written in the config: `read`, `write` or `destructive`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Destructive => "destructive",
        }
    }

    /// Whether a tool of this tier needs a human's approval when the config
    /// says nothing: every tier but [`Risk::Read`].
    pub fn approval_required_by_default(self) -> bool {
        self != Self::Read
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which entity a call acts on, for authorization: an entity type and the
/// JSON Pointer of the argument that holds the entity's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMapping {
    pub(crate) entity_type: String,
    pub(crate) id_pointer: String,
}

impl ResourceMapping {
    /// The entity type, such as `Order`.
    pub fn entity_type(&self) -> &str {
        &self.entity_type
    }

    /// The JSON Pointer of the argument holding the entity id, such as
    /// `/order_id`. It names a property the tool's schema declares.
    pub fn id_pointer(&self) -> &str {
        &self.id_pointer
    }
}

/// A URL policy on one argument, as configured. Plain data: the URL guard
/// stage interprets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPolicyConfig {
    pub(crate) arg: String,
    pub(crate) schemes: Vec<String>,
    pub(crate) hosts: Vec<String>,
    pub(crate) ports: Vec<u16>,
    pub(crate) allow_private: bool,
    pub(crate) resolve: bool,
}

impl UrlPolicyConfig {
    /// The JSON Pointer of the argument holding the URL, such as `/url`. It
    /// names a property the tool's schema declares.
    pub fn arg(&self) -> &str {
        &self.arg
    }

    /// Allowed schemes, lower-case (default: `https` only).
    pub fn schemes(&self) -> &[String] {
        &self.schemes
    }

    /// Allowed hosts: exact names or `*.`-prefixed wildcards, lower-case as
    /// written in the config. Never empty.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// Allowed ports. Empty means: only the default port of the scheme.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// Whether private, loopback, link-local and similar addresses are
    /// allowed (default `false`).
    pub fn allow_private(&self) -> bool {
        self.allow_private
    }

    /// Whether resolve mode is on (by default, when the config has a
    /// `[resolver]` table): the gate resolves the host, denies the URL if
    /// any address is forbidden (DNS rebinding), and pins the checked
    /// addresses in the decision.
    pub fn resolve(&self) -> bool {
        self.resolve
    }
}

/// An argument a tool exempts from the default URL guard by name
/// (`url_unchecked = [{ arg = "/notes/*", reason = "…" }]`), with the
/// reason, which `toolgate lint` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlUnchecked {
    pub(crate) arg: String,
    pub(crate) reason: String,
}

impl UrlUnchecked {
    /// The JSON Pointer of the argument (`*` for any item or member).
    pub fn arg(&self) -> &str {
        &self.arg
    }

    /// Why its URLs need no check, as the operator wrote it.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Where a tool was declared.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolOrigin {
    /// A `[[tool]]` entry of a toolgate config.
    Config {
        /// The config file.
        file: PathBuf,
        /// One-based line of the entry's `name`.
        line: usize,
    },
    /// An imported tool list.
    Import {
        /// The imported file.
        file: PathBuf,
        /// The JSON Pointer of the tool in the file.
        pointer: String,
    },
}

/// One registered tool: its name, risk, compiled schema and the policies
/// that apply to its arguments.
#[derive(Debug, Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) namespace: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) risk: Risk,
    pub(crate) approval_required: bool,
    pub(crate) schema: Schema,
    pub(crate) raw_schema: Value<'static>,
    pub(crate) resource: Option<ResourceMapping>,
    pub(crate) url_policies: Vec<UrlPolicyConfig>,
    pub(crate) url_unchecked: Vec<UrlUnchecked>,
    pub(crate) url_default: bool,
    pub(crate) parse_options: ParseOptions,
    pub(crate) redact: Vec<String>,
    pub(crate) origin: ToolOrigin,
    /// Session labels its results bring in (`labels` in its entry).
    pub(crate) labels: Vec<String>,
    /// Whether it can send data out (`egress = true`).
    pub(crate) egress: bool,
}

impl Tool {
    /// The exact name it is registered under: `namespace.name` for a
    /// tool declared in a namespace.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace it is declared in (`namespace` in its `[[tool]]`
    /// entry): only a call naming this namespace calls it.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Whether a call naming `name` in `namespace` (or in none) is a call
    /// to this tool: the namespace and the name match exactly.
    pub fn is_called_by(&self, namespace: Option<&str>, name: &str) -> bool {
        match (namespace, self.namespace()) {
            (None, None) => self.name == name,
            (Some(ns), Some(own)) => {
                ns == own
                    && self
                        .name
                        .strip_prefix(own)
                        .and_then(|rest| rest.strip_prefix('.'))
                        == Some(name)
            }
            _ => false,
        }
    }

    /// The description given to the model, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The risk tier.
    pub fn risk(&self) -> Risk {
        self.risk
    }

    /// Whether every call needs a human's approval.
    pub fn approval_required(&self) -> bool {
        self.approval_required
    }

    /// The compiled (strict) schema of the arguments.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The schema document as written, for emitting tool declarations.
    pub fn raw_schema(&self) -> &Value<'static> {
        &self.raw_schema
    }

    /// The authorization resource mapping, if configured.
    pub fn resource(&self) -> Option<&ResourceMapping> {
        self.resource.as_ref()
    }

    /// The URL policies on the arguments.
    pub fn url_policies(&self) -> &[UrlPolicyConfig] {
        &self.url_policies
    }

    /// The arguments the default URL guard leaves alone, by name.
    pub fn url_unchecked(&self) -> &[UrlUnchecked] {
        &self.url_unchecked
    }

    /// Whether the default URL guard applies to the arguments no URL policy
    /// names (every tool but one with `url_policy = "none"`): any string
    /// that the schema declares a URI, whose name is URL-like, or whose
    /// value parses as a network URL, must pass
    /// [`UrlPolicyConfig::default_guard`](crate::url_guard::UrlPolicyConfig::default_guard).
    pub fn url_default_guard(&self) -> bool {
        self.url_default
    }

    /// How to parse this tool's arguments: the gate's limits, tightened by
    /// the tool's own.
    pub fn parse_options(&self) -> &ParseOptions {
        &self.parse_options
    }

    /// JSON Pointers of secret arguments, to be replaced by their digest
    /// wherever arguments are recorded.
    pub fn redact(&self) -> &[String] {
        &self.redact
    }

    /// The session labels a call of it brings into the session once it
    /// runs (`labels = ["untrusted_content"]` in its `[[tool]]` entry): what
    /// its results carry (third-party text, private records).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// Whether it can send data out of the session (`egress = true`: mail,
    /// an HTTP POST, a URL built from arguments): policies see it as
    /// `context.egress`.
    pub fn egress(&self) -> bool {
        self.egress
    }

    /// Where the tool was declared.
    pub fn origin(&self) -> &ToolOrigin {
        &self.origin
    }

    /// The file the tool was declared in.
    pub fn origin_file(&self) -> &Path {
        match &self.origin {
            ToolOrigin::Config { file, .. } | ToolOrigin::Import { file, .. } => file,
        }
    }
}

/// The registered tools, looked up by exact name.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    // Declaration order, for stable listings; `index` maps a name to its slot.
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
}

impl Registry {
    /// An empty registry: every call is to an unknown tool.
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool whose name is exactly `name`, byte for byte.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).and_then(|&i| self.tools.get(i))
    }

    /// Whether a tool is named exactly `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// The tools, in declaration order (config entries first, then imported
    /// tools no config entry named).
    pub fn iter(&self) -> std::slice::Iter<'_, Tool> {
        self.tools.iter()
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Adds a tool; refuses (returning it) a name already registered.
    pub(crate) fn insert(&mut self, tool: Tool) -> Result<(), Box<Tool>> {
        if self.index.contains_key(&tool.name) {
            return Err(Box::new(tool));
        }
        self.index.insert(tool.name.clone(), self.tools.len());
        self.tools.push(tool);
        Ok(())
    }
}

impl<'a> IntoIterator for &'a Registry {
    type Item = &'a Tool;
    type IntoIter = std::slice::Iter<'a, Tool>;

    fn into_iter(self) -> Self::IntoIter {
        self.tools.iter()
    }
}
