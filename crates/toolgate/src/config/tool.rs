//! `[[tool]]` entries and imported tools: each one checked and turned into
//! a registry [`Tool`], its schema compiled in strict mode.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toolgate_json::{Limits, ParseOptions, Value};
use toolgate_schema::{Options, Schema};

use super::authorization::is_entity_type;
use super::error::{Cause, Error, ErrorCode};
use super::gate::GateConfig;
use super::import::{json_summary, Imported};
use super::load::Loader;
use super::pointer::{self, PointerError};
use super::raw::{limit_key, RawApproval, RawRisk, RawTool, RawUrlPolicies, RawUrlPolicy};
use super::{toml_json, uri_args};
use crate::registry::{ResourceMapping, Risk, Tool, ToolOrigin, UrlPolicyConfig, UrlUnchecked};

/// An imported tool with no config entry: its own schema, its default tier.
pub(super) fn tool_from_import(
    imported: Imported,
    file: &Path,
    gate: &GateConfig,
) -> Result<Tool, Error> {
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
    if let Some(message) = unguarded_url(&imported.schema) {
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
        namespace: None,
        description: imported.description,
        raw_schema: imported.schema,
        resource: None,
        url_policies: Vec::new(),
        url_unchecked: Vec::new(),
        url_default: true,
        parse_options: ParseOptions::new().with_limits(*gate.limits()),
        redact: Vec::new(),
        labels: Vec::new(),
        egress: false,
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

impl Loader<'_> {
    /// A `[[tool]]` entry (declared at `line`), over the imported tool of
    /// its name if any: its schema, risk and approval, then each key that
    /// points into the schema, then its limits under the gate's.
    pub(super) fn tool(
        &self,
        raw: &RawTool,
        import: Option<&(Imported, PathBuf)>,
        gate: &GateConfig,
        line: usize,
        resolve_default: bool,
    ) -> Result<Tool, Error> {
        let name = raw.name.get_ref();
        let (raw_schema, from) = self.schema(raw, import)?;
        let schema = self.compile_schema(&raw_schema, &from, name)?;
        let (risk, approval_required) = risk_and_approval(raw);
        let resource = self.resource(raw, &raw_schema)?;
        let url_policies = self.url_policies(raw, &raw_schema, resolve_default)?;
        self.check_urls_findable(raw, &raw_schema)?;
        let url_unchecked = self.url_unchecked(raw, &raw_schema)?;
        let url_default = !matches!(
            raw.url_policy.as_ref().map(Spanned::get_ref),
            Some(RawUrlPolicies::None)
        );
        let redact = self.redact(raw, &raw_schema)?;
        let limits = self.tool_limits(raw, gate)?;
        let labels = self.tool_labels(raw)?;

        let namespace = raw.namespace.as_ref().map(|ns| ns.get_ref().clone());
        Ok(Tool {
            name: qualified_name(raw),
            namespace,
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
            url_unchecked,
            url_default,
            parse_options: ParseOptions::new()
                .with_limits(limits)
                .allow_rounding(raw.round_numbers),
            redact,
            labels,
            egress: raw.egress,
            origin: ToolOrigin::Config {
                file: self.file().to_path_buf(),
                line,
            },
        })
    }

    /// The entry's schema, compiled: its root must be an object schema.
    /// Errors point where the schema came from.
    fn compile_schema(
        &self,
        raw_schema: &Value,
        from: &SchemaFrom,
        name: &str,
    ) -> Result<Schema, Error> {
        let fail = |code, message: String| match from {
            SchemaFrom::Config { key, span, .. } => {
                self.at_key(code, span.start, key, message).tool(name)
            }
            SchemaFrom::Import { file, pointer } => Error::new(code, file, message)
                .at_pointer(pointer.clone())
                .tool(name),
        };
        if !root_is_object(raw_schema) {
            return Err(fail(
                ErrorCode::SchemaNotObject,
                "the schema must have `\"type\": \"object\"`".to_owned(),
            ));
        }
        compile(raw_schema).map_err(|e| {
            let what = match from {
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
        })
    }

    /// `resource`: an entity type name, and an id pointer the schema
    /// declares.
    fn resource(
        &self,
        raw: &RawTool,
        raw_schema: &Value,
    ) -> Result<Option<ResourceMapping>, Error> {
        let name = raw.name.get_ref();
        let Some(r) = &raw.resource else {
            return Ok(None);
        };
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
        pointer::check_declared(raw_schema, &r.id).map_err(|e| {
            self.pointer_error(e, at, "resource", false, &r.id)
                .tool(name)
        })?;
        Ok(Some(ResourceMapping {
            entity_type: r.entity_type.clone(),
            id_pointer: r.id.clone(),
        }))
    }

    /// `url_policy`: each policy on an argument the schema declares, one per
    /// argument, and one the URL guard compiles (`"none"`: no policies).
    fn url_policies(
        &self,
        raw: &RawTool,
        raw_schema: &Value,
        resolve_default: bool,
    ) -> Result<Vec<UrlPolicyConfig>, Error> {
        let name = raw.name.get_ref();
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
                pointer::check_declared_pattern(raw_schema, &p.arg).map_err(|e| {
                    self.pointer_error(e, at, "url_policy", false, &p.arg)
                        .tool(name)
                })?;
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
                    resolve: p.resolve.unwrap_or(resolve_default),
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
        Ok(url_policies)
    }

    /// Unless the entry opts out with `url_policy = "none"`, the schema's
    /// URL arguments can be found (the default URL guard checks those no
    /// policy names).
    fn check_urls_findable(&self, raw: &RawTool, raw_schema: &Value) -> Result<(), Error> {
        let name = raw.name.get_ref();
        if !matches!(
            raw.url_policy.as_ref().map(Spanned::get_ref),
            Some(RawUrlPolicies::None)
        ) {
            if let Some(message) = unguarded_url(raw_schema) {
                let (at, key) = match &raw.url_policy {
                    Some(p) => (p.span().start, "url_policy"),
                    None => (raw.name.span().start, "name"),
                };
                return Err(self
                    .at_key(ErrorCode::UnguardedUrl, at, key, message)
                    .tool(name));
            }
        }
        Ok(())
    }

    /// `url_unchecked`: arguments (pointers the schema declares, `*` for any
    /// item or member) the default URL guard leaves alone, each with a
    /// reason of 1 to 500 characters without control characters.
    fn url_unchecked(&self, raw: &RawTool, raw_schema: &Value) -> Result<Vec<UrlUnchecked>, Error> {
        let name = raw.name.get_ref();
        let mut out: Vec<UrlUnchecked> = Vec::with_capacity(raw.url_unchecked.len());
        for entry in &raw.url_unchecked {
            let at = entry.span().start;
            let e = entry.get_ref();
            pointer::check_declared_pattern(raw_schema, &e.arg).map_err(|err| {
                self.pointer_error(err, at, "url_unchecked", true, &e.arg)
                    .tool(name)
            })?;
            let reason = e.reason.trim();
            let problem = if reason.is_empty() {
                Some("`reason` must say why the argument's URLs need no check")
            } else if reason.chars().count() > 500 || reason.chars().any(char::is_control) {
                Some("`reason` must be at most 500 characters, without control characters")
            } else if out.iter().any(|u| u.arg == e.arg) {
                Some("the argument is listed twice")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(self
                    .at_value(
                        ErrorCode::InvalidUrlUnchecked,
                        at,
                        "url_unchecked",
                        format!("`url_unchecked` `{}`: {problem}", e.arg.escape_debug()),
                    )
                    .tool(name));
            }
            out.push(UrlUnchecked {
                arg: e.arg.clone(),
                reason: reason.to_owned(),
            });
        }
        Ok(out)
    }

    /// `redact`: pointers the schema declares.
    fn redact(&self, raw: &RawTool, raw_schema: &Value) -> Result<Vec<String>, Error> {
        let name = raw.name.get_ref();
        let mut redact = Vec::with_capacity(raw.redact.len());
        for r in &raw.redact {
            pointer::check_declared(raw_schema, r.get_ref()).map_err(|e| {
                self.pointer_error(e, r.span().start, "redact", true, r.get_ref())
                    .tool(name)
            })?;
            redact.push(r.get_ref().clone());
        }
        Ok(redact)
    }

    /// The tool's parse limits: the gate's, each tightened (never loosened)
    /// by the entry's own.
    fn tool_limits(&self, raw: &RawTool, gate: &GateConfig) -> Result<Limits, Error> {
        let name = raw.name.get_ref();
        let mut limits = *gate.limits();
        for (limit, value) in raw.limit_fields() {
            let Some(v) = value else { continue };
            let ceiling = gate.limits().get(limit);
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
        Ok(limits)
    }

    /// The error for a pointer `p` given at `key` (at `at`; `element`: an
    /// array element) that is malformed or names no declared property.
    fn pointer_error(
        &self,
        e: PointerError,
        at: usize,
        key: &str,
        element: bool,
        p: &str,
    ) -> Error {
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
        if element {
            self.at_value(code, at, key, message)
        } else {
            self.at_key(code, at, key, message)
        }
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
            (Some(s), None) => self.schema_key(s, name),
            (None, Some(j)) => self.schema_json(j, name),
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

    /// `schema`: a file path (the file read as strict JSON) or an inline
    /// table.
    fn schema_key(
        &self,
        s: &Spanned<toml::Value>,
        name: &str,
    ) -> Result<(Value<'static>, SchemaFrom), Error> {
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

    /// `schema_json`: the schema as a JSON text.
    fn schema_json(
        &self,
        j: &Spanned<String>,
        name: &str,
    ) -> Result<(Value<'static>, SchemaFrom), Error> {
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
}

/// The entry's risk tier, and whether its calls need approval (`approval`,
/// else the tier's default).
fn risk_and_approval(raw: &RawTool) -> (Risk, bool) {
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
    (risk, approval_required)
}

/// The name a `[[tool]]` entry is registered under: `namespace.name` when
/// it names a namespace.
pub(super) fn qualified_name(raw: &RawTool) -> String {
    match &raw.namespace {
        Some(ns) => format!("{}.{}", ns.get_ref(), raw.name.get_ref()),
        None => raw.name.get_ref().clone(),
    }
}

/// Why a name cannot be a tool name, if it cannot.
pub(super) fn name_problem(name: &str) -> Option<&'static str> {
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

/// Why a tool cannot load: its schema's `$ref`s fan out too far to find
/// its URL arguments (which the default URL guard checks).
fn unguarded_url(schema: &Value) -> Option<String> {
    uri_args::find(schema).is_none().then(|| {
        "the schema's `$ref`s fan out too far to find its URL arguments \
         (strings with `format` `uri`, `uri-reference`, `iri` or `iri-reference`): \
         simplify it, or opt out with `url_policy = \"none\"`"
            .to_owned()
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
