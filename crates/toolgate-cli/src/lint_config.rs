//! `toolgate lint --config`: the findings of a config (each tool's schema,
//! its risk, resource mapping and URL arguments, the Cedar policies and
//! entities, the providers' strict modes), and the report `toolgate lint`
//! prints, as text or JSON.
//!
//! Every finding has a stable code, a subject (a tool, a policy, or a schema
//! file), a JSON Pointer into the tool's schema (or empty), a message and a
//! one-line fix. Findings of severity `error` make the command exit 1, unless
//! `--allow` accepts them (severity `allowed`); `info` findings (what a
//! provider's strict mode leaves to toolgate) never change the exit code.

use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, bail};
use toolgate::authz::{ActionScope, ConfiguredAuthorizer, PolicyEffect};
use toolgate::limit::{Limit, Measure};
use toolgate::registry::{Risk, Tool};
use toolgate_json::{canonical, Object, Value};
use toolgate_schema::FindingCode;

use crate::strict_modes::{self, escape};

/// A tool with write or destructive risk whose calls need no approval.
pub const APPROVAL_OFF: &str = "approval_off";
/// A resource-like argument (`*_id`) on a tool that maps no resource.
pub const RESOURCE_UNMAPPED: &str = "resource_unmapped";
/// A URL-like argument no `url_policy` names: only the default URL guard
/// (any public host) checks it.
pub const URL_UNGUARDED: &str = "url_unguarded";
/// A `url_policy` that does not resolve hosts.
pub const URL_NOT_RESOLVED: &str = "url_not_resolved";
/// An argument exempt from the default URL guard (`url_unchecked`), shown
/// with its reason; or a tool that opts out whole (`url_policy = "none"`).
pub const URL_UNCHECKED: &str = "url_unchecked";
/// A money-like argument of type `number`.
pub const MONEY_AS_NUMBER: &str = "money_as_number";
/// Narrowing could put more ids than `--max-enum` into an `enum`.
pub const ENUM_OVER_CAP: &str = "enum_over_cap";
/// A policy whose scope names no configured tool's action.
pub const POLICY_NEVER_APPLIES: &str = "policy_never_applies";
/// A tool no permit can apply to: every call is denied.
pub const TOOL_NEVER_PERMITTED: &str = "tool_never_permitted";
/// A forbid without a `@code` annotation.
pub const FORBID_WITHOUT_CODE: &str = "forbid_without_code";
/// `[authorization] mode = "none"`.
pub const AUTHORIZATION_OFF: &str = "authorization_off";
/// A money-like argument of a non-read tool that no `[[limit]]` sums.
pub const MONEY_WITHOUT_BUDGET: &str = "money_without_budget";
/// An `egress = true` tool no forbid policy's scope names.
pub const EGRESS_WITHOUT_FLOW_RULE: &str = "egress_without_flow_rule";

/// The config codes (errors unless allowed).
const CONFIG_CODES: &[&str] = &[
    APPROVAL_OFF,
    RESOURCE_UNMAPPED,
    URL_UNGUARDED,
    URL_NOT_RESOLVED,
    URL_UNCHECKED,
    MONEY_AS_NUMBER,
    ENUM_OVER_CAP,
    POLICY_NEVER_APPLIES,
    TOOL_NEVER_PERMITTED,
    FORBID_WITHOUT_CODE,
    AUTHORIZATION_OFF,
    MONEY_WITHOUT_BUDGET,
    EGRESS_WITHOUT_FLOW_RULE,
];

/// The schema lint's codes.
const SCHEMA_CODES: &[FindingCode] = &[
    FindingCode::OpenObject,
    FindingCode::UnboundedNumber,
    FindingCode::UnboundedString,
    FindingCode::UnboundedArray,
    FindingCode::OptionalWithoutDefault,
    FindingCode::UriNeedsPolicy,
    FindingCode::OverlappingAnyOf,
    FindingCode::AcceptsAnything,
    FindingCode::UnknownFormat,
];

/// How much a finding counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Exit 1.
    Error,
    /// An error `--allow` accepted: shown, does not change the exit code.
    Allowed,
    /// Informational: never changes the exit code.
    Info,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Allowed => "allowed",
            Self::Info => "info",
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A schema file given on the command line.
    Schema,
    /// A config's tool.
    Tool(String),
    /// A config's policy, by id.
    Policy(String),
    /// The config as a whole.
    Config,
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    code: &'static str,
    severity: Severity,
    /// The file: the schema or the config.
    source: String,
    subject: Subject,
    pointer: String,
    message: String,
    fix: Option<String>,
}

/// `--allow CODE` or `--allow CODE@NAME` (a tool or a policy).
#[derive(Debug, Clone)]
struct Allow {
    code: String,
    only: Option<String>,
    used: bool,
}

/// The findings of one run, in the order found.
#[derive(Debug, Default)]
pub struct Report {
    findings: Vec<Finding>,
    /// Subjects linted (in order), to print `no findings` for each quiet one.
    subjects: Vec<(String, Subject)>,
    allows: Vec<Allow>,
}

impl Report {
    /// A report that accepts the findings `allow` names (`CODE` or
    /// `CODE@NAME`); an unknown code is a usage error.
    pub fn new(allow: &[String]) -> anyhow::Result<Self> {
        let mut allows = Vec::with_capacity(allow.len());
        for a in allow {
            let (code, only) = match a.split_once('@') {
                Some((c, n)) if !n.is_empty() => (c, Some(n.to_owned())),
                Some(_) => bail!(
                    "`--allow {}`: name a tool or policy after `@`",
                    a.escape_debug()
                ),
                None => (a.as_str(), None),
            };
            let known =
                CONFIG_CODES.contains(&code) || SCHEMA_CODES.iter().any(|c| c.as_str() == code);
            if !known {
                bail!(
                    "`--allow {}`: `{}` is not a finding code that can be allowed (informational findings need none)",
                    a.escape_debug(),
                    code.escape_debug()
                );
            }
            allows.push(Allow {
                code: code.to_owned(),
                only,
                used: false,
            });
        }
        Ok(Self {
            allows,
            ..Self::default()
        })
    }

    /// Registers a subject, so it is reported even without findings.
    pub fn subject(&mut self, source: &str, subject: Subject) {
        self.subjects.push((source.to_owned(), subject));
    }

    /// Adds a finding; an error an `--allow` names becomes `allowed`.
    fn push(&mut self, mut f: Finding) {
        if f.severity == Severity::Error {
            let name = match &f.subject {
                Subject::Tool(n) | Subject::Policy(n) => Some(n.as_str()),
                Subject::Schema | Subject::Config => None,
            };
            for a in &mut self.allows {
                if a.code == f.code && (a.only.is_none() || a.only.as_deref() == name) {
                    a.used = true;
                    f.severity = Severity::Allowed;
                }
            }
        }
        self.findings.push(f);
    }

    /// The schema lint's findings for `subject` of `source`.
    pub fn schema_findings(
        &mut self,
        source: &str,
        subject: &Subject,
        findings: &[toolgate_schema::Finding],
    ) {
        for f in findings {
            self.push(Finding {
                code: f.code().as_str(),
                severity: Severity::Error,
                source: source.to_owned(),
                subject: subject.clone(),
                pointer: f.pointer().to_owned(),
                message: f.message().to_owned(),
                fix: schema_fix(f.code()).map(str::to_owned),
            });
        }
    }

    /// Whether any finding counts (an error no `--allow` accepted).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// Writes the report as text: per subject its findings,
    /// `NAME: CODE at `POINTER`: MESSAGE — FIX` (with `[info]` or
    /// `[allowed]` after the code), or `NAME: no findings` (for a tool or a
    /// schema; a policy without findings is not listed).
    pub fn print_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (source, subject) in &self.subjects {
            let name = display_name(source, subject);
            let mine: Vec<&Finding> = self
                .findings
                .iter()
                .filter(|f| &f.source == source && &f.subject == subject)
                .collect();
            // A quiet policy is not listed: policies are many, tools matter.
            if mine.is_empty() && !matches!(subject, Subject::Policy(_)) {
                writeln!(out, "{name}: no findings")?;
            }
            for f in mine {
                let tag = match f.severity {
                    Severity::Error => "",
                    Severity::Allowed => " [allowed]",
                    Severity::Info => " [info]",
                };
                write!(
                    out,
                    "{name}: {}{tag} at `{}`: {}",
                    f.code, f.pointer, f.message
                )?;
                match &f.fix {
                    Some(fix) => writeln!(out, " — {fix}")?,
                    None => writeln!(out)?,
                }
            }
        }
        Ok(())
    }

    /// Writes the report as one JSON document (canonical form):
    /// `{"findings": [{"code", "severity", "source", "tool", "policy",
    /// "pointer", "message", "fix"}], "summary": {"error", "allowed",
    /// "info"}}`; `tool`, `policy` and `fix` are null when they do not
    /// apply.
    pub fn print_json(&self, out: &mut impl Write) -> std::io::Result<()> {
        let findings = self
            .findings
            .iter()
            .map(|f| {
                let mut o = Object::new();
                o.insert("code", Value::from(f.code));
                o.insert("severity", Value::from(f.severity.as_str()));
                o.insert("source", Value::from(f.source.as_str()));
                let (tool, policy) = match &f.subject {
                    Subject::Tool(n) => (Value::from(n.as_str()), Value::Null),
                    Subject::Policy(n) => (Value::Null, Value::from(n.as_str())),
                    Subject::Schema | Subject::Config => (Value::Null, Value::Null),
                };
                o.insert("tool", tool);
                o.insert("policy", policy);
                o.insert("pointer", Value::from(f.pointer.as_str()));
                o.insert("message", Value::from(f.message.as_str()));
                o.insert("fix", f.fix.as_deref().map_or(Value::Null, Value::from));
                Value::Object(o)
            })
            .collect();
        let count = |s: Severity| {
            let n = self.findings.iter().filter(|f| f.severity == s).count();
            Value::from(i64::try_from(n).unwrap_or(i64::MAX))
        };
        let mut summary = Object::new();
        summary.insert("error", count(Severity::Error));
        summary.insert("allowed", count(Severity::Allowed));
        summary.insert("info", count(Severity::Info));
        let mut doc = Object::new();
        doc.insert("findings", Value::Array(findings));
        doc.insert("summary", Value::Object(summary));
        writeln!(out, "{}", canonical::to_string(&Value::Object(doc)))
    }

    /// The `--allow`s that accepted nothing (stale, or misspelt names).
    pub fn unused_allows(&self) -> impl Iterator<Item = String> + '_ {
        self.allows
            .iter()
            .filter(|a| !a.used)
            .map(|a| match &a.only {
                Some(n) => format!("{}@{n}", a.code),
                None => a.code.clone(),
            })
    }
}

fn display_name(source: &str, subject: &Subject) -> String {
    match subject {
        Subject::Schema | Subject::Config => source.to_owned(),
        Subject::Tool(n) => format!("{source}: tool `{}`", n.escape_debug()),
        Subject::Policy(n) => format!("{source}: policy `{}`", n.escape_debug()),
    }
}

/// The one-line fix of a schema lint finding.
fn schema_fix(code: FindingCode) -> Option<&'static str> {
    Some(match code {
        FindingCode::OpenObject => "declare `properties` and set `additionalProperties: false`",
        FindingCode::UnboundedNumber => "add `minimum` and `maximum` (or an `enum`)",
        FindingCode::UnboundedString => "add `maxLength`, a `pattern`, a `format` or an `enum`",
        FindingCode::UnboundedArray => "add `maxItems`",
        FindingCode::OptionalWithoutDefault => "make it `required`, or give it a `default`",
        FindingCode::UriNeedsPolicy => "add a `url_policy` for the argument",
        FindingCode::OverlappingAnyOf => {
            "make the branches exclusive (a `const` tag or disjoint types)"
        }
        FindingCode::AcceptsAnything => "give the subschema a `type` and bounds",
        FindingCode::UnknownFormat => "use a `format` toolgate checks, or a `pattern`",
        _ => return None,
    })
}

/// Lints the config at `path` into `report`: it must load with its
/// authorization (or the error is returned); then each tool, each policy
/// and the authorization mode are checked. `max_enum` caps narrowed enums.
pub fn lint(path: &Path, max_enum: usize, report: &mut Report) -> anyhow::Result<()> {
    let config = toolgate_edge::config::load(path).map_err(|e| anyhow!("{e}"))?;
    let authorizer = toolgate::authz::from_config_with(&config, &toolgate_store::connect_source)
        .map_err(|e| anyhow!("{e}"))?;
    let source = path.display().to_string();
    let cedar = authorizer.cedar();
    for tool in config.registry() {
        let subject = Subject::Tool(tool.name().to_owned());
        report.subject(&source, subject.clone());
        let mut lint = ToolLint {
            report,
            source: &source,
            subject: &subject,
        };
        lint.tool(tool, &authorizer, max_enum);
        lint.flow(tool, config.limits(), &authorizer);
    }
    if let Some(cedar) = cedar {
        for policy in cedar.policy_facts() {
            let subject = Subject::Policy(policy.id.clone());
            report.subject(&source, subject.clone());
            let finding = |code, message: String, fix: &str| Finding {
                code,
                severity: Severity::Error,
                source: source.clone(),
                subject: subject.clone(),
                pointer: String::new(),
                message,
                fix: Some(fix.to_owned()),
            };
            if let ActionScope::Actions(list) = &policy.actions {
                if !list.iter().any(|a| config.registry().contains(a)) {
                    let named = if list.is_empty() {
                        "no action".to_owned()
                    } else {
                        list.iter()
                            .map(|a| format!("`{}`", a.escape_debug()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    report.push(finding(
                        POLICY_NEVER_APPLIES,
                        format!(
                            "the {}'s scope matches {named}, and no configured tool has that name: it never applies",
                            policy.effect.as_str()
                        ),
                        "name a configured tool's action in its scope, or remove the policy",
                    ));
                }
            }
            if policy.effect == PolicyEffect::Forbid && !policy.has_code {
                report.push(finding(
                    FORBID_WITHOUT_CODE,
                    "a forbid without `@code`: its denial's reason code falls back to the tool's default (`not_owner` or `not_authorized`)".to_owned(),
                    "annotate it `@code(\"not_owner\")` (ownership) or `@code(\"not_authorized\")`",
                ));
            }
        }
    }
    if matches!(authorizer, ConfiguredAuthorizer::None(_)) {
        report.subject(&source, Subject::Config);
        report.push(Finding {
            code: AUTHORIZATION_OFF,
            severity: Severity::Error,
            source: source.clone(),
            subject: Subject::Config,
            pointer: String::new(),
            message: "`[authorization] mode = \"none\"`: every call any user makes on any resource is authorized".to_owned(),
            fix: Some("write Cedar policies: `mode = \"cedar\"` with `policies` and `schema`".to_owned()),
        });
    }
    Ok(())
}

/// The findings of one tool.
struct ToolLint<'r, 's> {
    report: &'r mut Report,
    source: &'s str,
    subject: &'s Subject,
}

impl ToolLint<'_, '_> {
    fn push(&mut self, code: &'static str, pointer: &str, message: String, fix: String) {
        self.report.push(Finding {
            code,
            severity: Severity::Error,
            source: self.source.to_owned(),
            subject: self.subject.clone(),
            pointer: pointer.to_owned(),
            message,
            fix: Some(fix),
        });
    }

    fn tool(&mut self, tool: &Tool, authorizer: &ConfiguredAuthorizer, max_enum: usize) {
        let schema = tool.raw_schema();
        // URL arguments are reported per argument below (`url_unguarded`).
        let findings: Vec<_> = toolgate_schema::lint(schema)
            .into_iter()
            .filter(|f| f.code() != FindingCode::UriNeedsPolicy)
            .collect();
        self.report
            .schema_findings(self.source, self.subject, &findings);
        if tool.risk() != Risk::Read && !tool.approval_required() {
            self.push(
                APPROVAL_OFF,
                "",
                format!(
                    "a `{}` tool whose calls need no human approval (`approval = \"none\"`)",
                    tool.risk()
                ),
                "remove `approval = \"none\"` (approval is the default for write and destructive tools)".to_owned(),
            );
        }
        let args = arguments(schema);
        self.resources(tool, &args);
        self.urls(tool, &args);
        for arg in args.iter().filter(|a| is_money(a)) {
            self.push(
                MONEY_AS_NUMBER,
                &arg.schema_pointer,
                format!(
                    "money-like argument `{}` is a `number`: fractions such as `0.1 + 0.2` do not add up, and `1e2` or `100.000001` pass",
                    arg.pointer.escape_debug()
                ),
                "use an `integer` of minor units (`amount_cents`) with `minimum` and `maximum`".to_owned(),
            );
        }
        match authorizer {
            ConfiguredAuthorizer::Cedar(cedar) => {
                let permitted = cedar
                    .policy_facts()
                    .iter()
                    .any(|p| p.effect == PolicyEffect::Permit && p.actions.matches(tool.name()));
                if !permitted {
                    self.push(
                        TOOL_NEVER_PERMITTED,
                        "",
                        "no permit policy's scope matches this tool's action: every call is denied"
                            .to_owned(),
                        format!(
                            "add a permit for `Action::\"{}\"`, or remove the tool",
                            tool.name().escape_debug()
                        ),
                    );
                }
                if let Some(mapping) = tool.resource() {
                    let count = cedar.entity_count(mapping.entity_type());
                    if count > max_enum {
                        self.push(
                            ENUM_OVER_CAP,
                                        &schema_pointer(mapping.id_pointer()),
                            format!(
                                "narrowing can put up to {count} `{}` ids into the `enum` of `{}` (cap {max_enum}): providers cap enums (OpenAI: 1000 values in all) and every id costs prompt tokens",
                                mapping.entity_type().escape_debug(),
                                mapping.id_pointer().escape_debug()
                            ),
                            "give each request its user's entities in the context instead of a large static entities file, or raise `--max-enum`".to_owned(),
                        );
                    }
                }
            }
            ConfiguredAuthorizer::DenyAll(_) => self.push(
                TOOL_NEVER_PERMITTED,
                "",
                "the config has no `[authorization]`: every call is denied `not_authorized`"
                    .to_owned(),
                "add `[authorization]` with Cedar `policies` and `schema` that permit the tool"
                    .to_owned(),
            ),
            _ => {}
        }
        // Nothing to fix: the gate checks these; constrained decoding does not.
        for d in strict_modes::drops(schema) {
            self.report.push(Finding {
                code: d.provider.code(),
                severity: Severity::Info,
                source: self.source.to_owned(),
                subject: self.subject.clone(),
                pointer: d.pointer,
                message: format!("{}: enforced by toolgate only", d.message),
                fix: None,
            });
        }
    }

    /// `money_without_budget` and `egress_without_flow_rule`: harm spread
    /// over calls that no limit or policy watches.
    fn flow(&mut self, tool: &Tool, limits: &[Limit], authorizer: &ConfiguredAuthorizer) {
        if tool.risk() != Risk::Read {
            for arg in arguments(tool.raw_schema())
                .iter()
                .filter(|a| is_money_named(a))
            {
                let budgeted = limits.iter().any(|l| {
                    l.applies_to(tool.name())
                        && matches!(&l.measure, Measure::Sum { pointer, .. } if *pointer == arg.pointer)
                });
                if !budgeted {
                    self.push(
                        MONEY_WITHOUT_BUDGET,
                        &arg.schema_pointer,
                        format!(
                            "money-like argument `{}` that no `[[limit]]` sums: forty small calls pass where one large one would not",
                            arg.pointer.escape_debug()
                        ),
                        format!(
                            "add a `[[limit]]` with `tools = [\"{}\"]`, `sum = \"{}\"`, `max` and `window_seconds`",
                            tool.name().escape_debug(),
                            arg.pointer.escape_debug()
                        ),
                    );
                }
            }
        }
        if tool.egress() {
            let ruled = authorizer.cedar().is_some_and(|c| {
                c.policy_facts()
                    .iter()
                    .any(|p| p.effect == PolicyEffect::Forbid && p.actions.matches(tool.name()))
            });
            if !ruled {
                self.push(
                    EGRESS_WITHOUT_FLOW_RULE,
                    "",
                    "an `egress = true` tool that no forbid policy names: a session holding untrusted content and private data can send it out".to_owned(),
                    "add the trifecta forbid for its action (docs/src/limits.md), with `labels` and `egress` in its context".to_owned(),
                );
            }
        }
    }

    /// `resource_unmapped`: a top-level `*_id` argument of a tool that maps
    /// no resource.
    fn resources(&mut self, tool: &Tool, args: &[Arg<'_>]) {
        if tool.resource().is_some() {
            return;
        }
        for arg in args.iter().filter(|a| a.top_level && is_resource_like(a)) {
            self.push(
                RESOURCE_UNMAPPED,
                &arg.schema_pointer,
                format!(
                    "argument `{}` names a resource, and the tool maps none: authorization cannot see whose it is (another user's id passes)",
                    arg.pointer.escape_debug()
                ),
                format!(
                    "map it: `resource = {{ type = \"…\", id = \"{}\" }}`, with policies that check its owner",
                    arg.pointer.escape_debug()
                ),
            );
        }
    }

    /// `url_unguarded`, `url_unchecked` and `url_not_resolved`.
    fn urls(&mut self, tool: &Tool, args: &[Arg<'_>]) {
        let policies = tool.url_policies();
        if !tool.url_default_guard() {
            self.push(
                URL_UNCHECKED,
                "",
                "`url_policy = \"none\"`: no URL argument of this tool is checked, not even by the default URL guard (no reason given)".to_owned(),
                "remove it, or exempt single arguments with `url_unchecked = [{ arg = \"/…\", reason = \"…\" }]`".to_owned(),
            );
        }
        for u in tool.url_unchecked() {
            self.report.push(Finding {
                code: URL_UNCHECKED,
                severity: Severity::Info,
                source: self.source.to_owned(),
                subject: self.subject.clone(),
                pointer: schema_pointer(u.arg()),
                message: format!(
                    "argument `{}` is exempt from the default URL guard: {}",
                    u.arg().escape_debug(),
                    u.reason().escape_debug()
                ),
                fix: None,
            });
        }
        for arg in args.iter().filter(|a| is_url_like(a)) {
            if policies.iter().any(|p| p.arg() == arg.pointer)
                || tool.url_unchecked().iter().any(|u| u.arg() == arg.pointer)
            {
                continue;
            }
            let guarded = if tool.url_default_guard() {
                "only the default URL guard checks it (http or https, any public host)"
            } else {
                "nothing checks it (`url_policy = \"none\"`): any scheme, host and address passes (SSRF)"
            };
            self.push(
                URL_UNGUARDED,
                &arg.schema_pointer,
                format!(
                    "argument `{}` is URL-like and no `url_policy` names it: {guarded}",
                    arg.pointer.escape_debug()
                ),
                format!(
                    "add `url_policy = {{ arg = \"{}\", schemes = [\"https\"], hosts = [\"…\"], resolve = true }}`",
                    arg.pointer.escape_debug()
                ),
            );
        }
        for policy in policies.iter().filter(|p| !p.resolve()) {
            self.push(
                URL_NOT_RESOLVED,
                &schema_pointer(policy.arg()),
                format!(
                    "the url policy of `{}` checks the host's name, not the addresses it resolves to, so a name that resolves to a private or metadata address (DNS rebinding) passes",
                    policy.arg().escape_debug()
                ),
                "add a `[resolver]` table (policies then resolve by default; `mode = \"static\"` needs no DNS) or set `resolve = true`, and connect only to the pinned addresses".to_owned(),
            );
        }
    }
}

/// A property of a tool's schema, reached through `properties` only.
struct Arg<'a> {
    name: &'a str,
    /// The argument's pointer in the call's arguments (`/order_id`).
    pointer: String,
    /// Its subschema's pointer in the tool's schema (`/properties/order_id`).
    schema_pointer: String,
    schema: &'a Value<'static>,
    top_level: bool,
}

/// Every property of `schema`, and of its nested object properties.
fn arguments<'a>(schema: &'a Value<'static>) -> Vec<Arg<'a>> {
    fn walk<'a>(schema: &'a Value<'static>, at: &str, in_schema: &str, out: &mut Vec<Arg<'a>>) {
        let Some(props) = schema
            .as_object()
            .and_then(|o| o.get("properties"))
            .and_then(Value::as_object)
        else {
            return;
        };
        for (name, sub) in props.iter() {
            let pointer = format!("{at}/{}", escape(name));
            let schema_pointer = format!("{in_schema}/properties/{}", escape(name));
            walk(sub, &pointer, &schema_pointer, out);
            out.push(Arg {
                name,
                top_level: at.is_empty(),
                pointer,
                schema_pointer,
                schema: sub,
            });
        }
    }
    let mut out = Vec::new();
    walk(schema, "", "", &mut out);
    out.sort_by(|a, b| a.schema_pointer.cmp(&b.schema_pointer));
    out
}

/// The schema pointer of an argument pointer: each member under
/// `properties`, `*` (any item) under `items`.
fn schema_pointer(arg: &str) -> String {
    arg.split('/')
        .skip(1)
        .map(|t| {
            if t == "*" {
                "/items".to_owned()
            } else {
                format!("/properties/{t}")
            }
        })
        .collect()
}

/// Whether the subschema's `type` is (or includes) `ty`.
fn has_type(schema: &Value<'_>, ty: &str) -> bool {
    match schema.as_object().and_then(|o| o.get("type")) {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    }
}

fn is_resource_like(arg: &Arg<'_>) -> bool {
    let n = arg.name;
    (has_type(arg.schema, "string") || has_type(arg.schema, "integer"))
        && (n == "id" || n.ends_with("_id") || (n.len() > 2 && n.ends_with("Id")))
}

fn is_url_like(arg: &Arg<'_>) -> bool {
    let format = arg
        .schema
        .as_object()
        .and_then(|o| o.get("format"))
        .and_then(Value::as_str);
    if matches!(
        format,
        Some("uri" | "uri-reference" | "iri" | "iri-reference")
    ) {
        return true;
    }
    if !has_type(arg.schema, "string") {
        return false;
    }
    // The gate's own rule (the default URL guard's).
    toolgate::url_guard::is_url_like_name(arg.name)
}

fn is_money(arg: &Arg<'_>) -> bool {
    has_type(arg.schema, "number") && !has_type(arg.schema, "integer") && is_money_named(arg)
}

/// A number or integer argument named like money.
fn is_money_named(arg: &Arg<'_>) -> bool {
    const WORDS: &[&str] = &[
        "amount", "price", "cost", "total", "balance", "fee", "refund", "payment", "charge",
    ];
    let lower = arg.name.to_ascii_lowercase();
    (has_type(arg.schema, "number") || has_type(arg.schema, "integer"))
        && WORDS.iter().any(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn argument_names() {
        let schema = toolgate_json::from_str(
            r#"{"type":"object","properties":{
                "order_id":{"type":"string"},"userId":{"type":"integer"},"id":{"type":"string"},
                "paid":{"type":"boolean"},"callback_url":{"type":"string"},"homeUrl":{"type":"string"},
                "link":{"type":"string","format":"uri"},"curly":{"type":"string"},
                "total_price":{"type":"number"},"amount_cents":{"type":"integer"},
                "nested":{"type":"object","properties":{"fee":{"type":"number"},"inner_id":{"type":"string"}}}}}"#,
        )
        .unwrap()
        .into_owned();
        let args = arguments(&schema);
        let names = |f: fn(&Arg<'_>) -> bool| -> Vec<String> {
            args.iter()
                .filter(|a| f(a))
                .map(|a| a.pointer.clone())
                .collect()
        };
        assert_eq!(
            names(|a| a.top_level && is_resource_like(a)),
            ["/id", "/order_id", "/userId"]
        );
        assert_eq!(names(is_url_like), ["/callback_url", "/homeUrl", "/link"]);
        assert_eq!(names(is_money), ["/nested/fee", "/total_price"]);
        assert_eq!(schema_pointer("/a/*/b"), "/properties/a/items/properties/b");
    }
}
