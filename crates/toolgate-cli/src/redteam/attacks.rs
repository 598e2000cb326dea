//! The cases: for one tool, the valid calls it must let through and the
//! attacks it must deny, derived from its schema, its URL policies, its
//! resource mapping and the entities. Each case is the text of one call's
//! arguments (raw: it may be no JSON at all) with the name it is proposed
//! under and how the response ends; the runner wraps it in every format.

use std::borrow::Cow;

use toolgate::authz::{Clause, CompareOp, Operand, PolicyEffect, PolicyFacts};
use toolgate::registry::{Tool, UrlPolicyConfig};
use toolgate_json::{canonical, Object, Value};

use super::instance::{self, int_range, type_of, Size};
use super::rng::Rng;
use super::variants::{
    allows_null, boundary_values, confusions, lengths, lookalikes, markup, missing_ids,
    out_of_bounds, pattern_bypasses, resolving_urls, rounding, ssrf_urls,
};
use super::wire::{quote, End};
use super::world::{Entity, World};

/// What a case is, and so what it must come to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A call the tool's owner means to allow: never denied.
    Valid,
    /// `"1200"`, `"yes"`, `true`, `3.0`, `1e2`, non-ASCII digits for a typed value.
    TypeConfusion,
    /// The same member twice: plain, spelled with an escape, nested, in the envelope.
    DuplicateKey,
    /// `NaN`, `Infinity`, overflow and underflow.
    NonFinite,
    /// One past each bound; integers beyond 64 bits.
    Bounds,
    /// Lengths one past the limit, in code points.
    Length,
    /// A trailing newline or non-ASCII digits past an anchored pattern.
    PatternBypass,
    /// A number written with more precision than a double holds
    /// (`100.00000000000000000001` reads as `100`).
    Rounding,
    /// Members the schema does not declare.
    ExtraMember,
    /// A required member left out.
    MissingMember,
    /// `null` for a member that is absent or typed.
    NullForAbsent,
    /// Arguments that are not an object (double-encoded, an array, a scalar).
    NotObject,
    /// A response cut off by the token limit, or a stream that breaks.
    Truncated,
    /// A tool name that only looks like the registered one.
    NameLookalike,
    /// A call written in the text instead of the structured field.
    MarkupInText,
    /// A URL argument aimed at a private, loopback or metadata address or
    /// another host.
    Ssrf,
    /// Another user's resource, or one that does not exist.
    Ownership,
    /// A value above the resource's limit.
    OverLimit,
    /// A call id or an approval used again, or an approval used for other
    /// arguments, another session or another user.
    Replay,
    /// A session that runs past its turn cap.
    LoopRun,
    /// A `[[limit]]` attacked: a sum or a count split across calls,
    /// sessions, one response and concurrent requests, and a window's edge.
    Limit,
    /// A data-flow rule attacked: an egress call after the session read
    /// labelled results, directly or with other tools' calls between.
    Flow,
}

impl Class {
    /// The class's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Valid => "valid",
            Class::TypeConfusion => "type_confusion",
            Class::DuplicateKey => "duplicate_key",
            Class::NonFinite => "non_finite",
            Class::Bounds => "bounds",
            Class::Length => "length",
            Class::PatternBypass => "pattern_bypass",
            Class::Rounding => "rounding",
            Class::ExtraMember => "extra_member",
            Class::MissingMember => "missing_member",
            Class::NullForAbsent => "null_for_absent",
            Class::NotObject => "not_object",
            Class::Truncated => "truncated",
            Class::NameLookalike => "name_lookalike",
            Class::MarkupInText => "markup_in_text",
            Class::Ssrf => "ssrf",
            Class::Ownership => "ownership",
            Class::OverLimit => "over_limit",
            Class::Replay => "replay",
            Class::LoopRun => "loop_run",
            Class::Limit => "limit",
            Class::Flow => "flow",
        }
    }
}

/// One case before it is wrapped.
#[derive(Debug, Clone)]
pub struct Case {
    /// What it is.
    pub class: Class,
    /// What it tries, in a few words.
    pub label: String,
    /// The tool name as proposed.
    pub name: String,
    /// The arguments text; `None` for a response with no structured call.
    pub args: Option<String>,
    /// Text before the call.
    pub text: Option<String>,
    /// How the response ends.
    pub end: End,
    /// A second `arguments`/`input` member in the envelope (JSON bodies only).
    pub envelope_dup: Option<String>,
}

/// An integer argument bounded by an integer attribute of the resource.
#[derive(Debug, Clone)]
pub struct Limit {
    /// The argument (top-level name).
    pub arg: String,
    /// The resource's attribute.
    pub attr: String,
    /// Whether the attribute's value itself is allowed.
    pub inclusive: bool,
}

/// What the red team knows of one tool.
pub struct Target<'a> {
    /// The tool.
    pub tool: &'a Tool,
    /// Every registered name (look-alikes must not be one).
    pub names: Vec<String>,
    /// A valid instance (an object), if one could be built.
    pub base: Option<Object<'static>>,
    /// Other valid instances.
    pub valid: Vec<(String, Object<'static>)>,
    /// The resource the base call acts on (one the user owns).
    pub owned: Option<&'a Entity>,
    /// Resources of other users.
    pub others: Vec<&'a Entity>,
    /// `(argument, attribute)`: an integer argument bounded by an integer
    /// attribute of the resource.
    pub limits: Vec<Limit>,
    /// Why some classes could not be tried.
    pub untested: Vec<String>,
    /// The URL arguments (top-level names) and their policies (`None`: the
    /// default URL guard).
    pub urls: Vec<(String, Option<&'a UrlPolicyConfig>)>,
    /// Other top-level string arguments the default URL guard checks by
    /// their value: a network URL there must be denied too.
    pub url_shaped: Vec<String>,
    /// Names of the config's static resolver table that resolve to a
    /// forbidden address: aimed at through every resolving URL argument.
    pub inside_hosts: Vec<String>,
    /// Whether URL hosts are resolved (a `[resolver]` table): a name the
    /// table does not hold must be denied.
    pub resolving: bool,
}

/// The top-level member name a single-segment JSON Pointer names.
fn top_level(pointer: &str) -> Option<String> {
    let rest = pointer.strip_prefix('/')?;
    (!rest.contains('/')).then(|| rest.replace("~1", "/").replace("~0", "~"))
}

fn properties(tool: &Tool) -> Vec<(&str, &Object<'static>)> {
    tool.raw_schema()
        .as_object()
        .and_then(|o| o.get("properties"))
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter_map(|(n, s)| Some((n, s.as_object()?)))
                .collect()
        })
        .unwrap_or_default()
}

fn required(tool: &Tool) -> Vec<String> {
    tool.raw_schema()
        .as_object()
        .and_then(|o| o.get("required"))
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a property looks like it holds a URL.
fn url_like(name: &str, schema: &Object<'_>) -> bool {
    let format = schema.get("format").and_then(Value::as_str);
    if matches!(
        format,
        Some("uri" | "iri" | "uri-reference" | "iri-reference")
    ) {
        return true;
    }
    // The gate's own rule for names (the default URL guard's).
    type_of(schema) == Some("string") && toolgate::url_guard::is_url_like_name(name)
}

/// A URL a policy allows: its first host (a wildcard's `www.`), its first scheme.
fn allowed_url(policy: Option<&UrlPolicyConfig>) -> String {
    let Some(p) = policy else {
        return "https://example.com/".to_owned();
    };
    let scheme = p.schemes().first().map_or("https", String::as_str);
    let host = p.hosts().first().map_or("example.com", String::as_str);
    let host = match host.strip_prefix("*.") {
        Some(rest) => format!("www.{rest}"),
        None => host.to_owned(),
    };
    match p.ports().first() {
        Some(port) => format!("{scheme}://{host}:{port}/"),
        None => format!("{scheme}://{host}/"),
    }
}

/// The host of [`allowed_url`].
pub(super) fn allowed_host(policy: Option<&UrlPolicyConfig>) -> String {
    let url = allowed_url(policy);
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    rest.split(['/', ':'])
        .next()
        .unwrap_or("example.com")
        .to_owned()
}

impl<'a> Target<'a> {
    /// What is known of `tool`, attacking as `user`.
    pub fn new(
        facts: &[PolicyFacts],
        tool: &'a Tool,
        names: Vec<String>,
        user: &str,
        world: &'a World,
        rng: &mut Rng,
    ) -> Self {
        let mut untested = Vec::new();
        let props = properties(tool);
        // URL arguments: those with a policy, and those that look like URLs.
        let mut urls: Vec<(String, Option<&UrlPolicyConfig>)> = Vec::new();
        for p in tool.url_policies() {
            match top_level(p.arg()) {
                Some(n) => urls.push((n, Some(p))),
                None => untested.push(format!(
                    "ssrf: the URL argument `{}` is nested; only top-level arguments are attacked",
                    p.arg()
                )),
            }
        }
        let unchecked = |name: &str| {
            tool.url_unchecked()
                .iter()
                .find(|u| top_level(u.arg()).as_deref() == Some(name))
        };
        let mut url_shaped = Vec::new();
        for (name, schema) in &props {
            if urls.iter().any(|(n, _)| n == name) {
                continue;
            }
            if let Some(u) = unchecked(name) {
                untested.push(format!(
                    "ssrf: `{name}` is exempt from the default URL guard (`url_unchecked`: {})",
                    u.reason()
                ));
            } else if url_like(name, schema) {
                // Attacked as the default guard would be attacked; a tool
                // that opts out whole (`url_policy = "none"`) shows its hole.
                urls.push(((*name).to_owned(), None));
            } else if type_of(schema) == Some("string") && tool.url_default_guard() {
                url_shaped.push((*name).to_owned());
            }
        }
        // The resource: one the user owns, and other users' ones.
        let (mut owned, mut others) = (None, Vec::new());
        let mut resource_arg = None;
        if let Some(r) = tool.resource() {
            match top_level(r.id_pointer()) {
                Some(arg) => resource_arg = Some(arg),
                None => untested.push(format!(
                    "ownership: the resource argument `{}` is nested; only top-level arguments are attacked",
                    r.id_pointer()
                )),
            }
            let mine: Vec<&Entity> = world
                .of_kind(r.entity_type())
                .filter(|e| e.owned_by(user))
                .collect();
            owned = rng.pick(&mine).copied();
            others = world
                .of_kind(r.entity_type())
                .filter(|e| e.has_owner() && !e.owned_by(user))
                .take(3)
                .collect();
            if owned.is_none() {
                untested.push(format!(
                    "valid calls: no `{}` in the entities is owned by `{user}`",
                    r.entity_type()
                ));
            }
        }
        // Integer arguments bounded by an integer attribute of the resource:
        // where a policy compares them (`context.args.amount_cents >
        // resource.total_cents` in a forbid), or else where the names end
        // in the same unit (`amount_cents`, `total_cents`): then a value
        // above the attribute is an attack even if no policy says so.
        let mut limits: Vec<Limit> = Vec::new();
        if let Some(res) = owned {
            for f in facts.iter().filter(|f| f.actions.matches(tool.name())) {
                for c in &f.comparisons {
                    let (Some(arg), Operand::ResourceAttr(attr)) = (top_level(&c.arg), &c.operand)
                    else {
                        continue;
                    };
                    if c.clause != Clause::When || c.negated || res.int(attr).is_none() {
                        continue;
                    }
                    let inclusive = match (f.effect, c.op) {
                        (PolicyEffect::Forbid, CompareOp::Gt)
                        | (PolicyEffect::Permit, CompareOp::Le) => true,
                        (PolicyEffect::Forbid, CompareOp::Ge)
                        | (PolicyEffect::Permit, CompareOp::Lt) => false,
                        _ => continue,
                    };
                    if !limits.iter().any(|l| l.arg == arg && l.attr == *attr) {
                        limits.push(Limit {
                            arg,
                            attr: attr.clone(),
                            inclusive,
                        });
                    }
                }
            }
            for (name, schema) in &props {
                if !matches!(type_of(schema), Some("integer" | "number")) {
                    continue;
                }
                for (attr, _) in res
                    .attrs
                    .iter()
                    .filter(|(_, a)| matches!(a, super::world::Attr::Int(_)))
                {
                    if same_unit(name, attr)
                        && !limits.iter().any(|l| l.arg == *name && l.attr == *attr)
                    {
                        limits.push(Limit {
                            arg: (*name).to_owned(),
                            attr: attr.clone(),
                            inclusive: true,
                        });
                    }
                }
            }
        }
        let mut target = Target {
            tool,
            names,
            base: None,
            valid: Vec::new(),
            owned,
            others,
            limits,
            untested,
            urls,
            url_shaped,
            inside_hosts: Vec::new(),
            resolving: false,
        };
        let fix = |mut o: Object<'static>, size: Size, t: &Target<'_>| -> Object<'static> {
            if let (Some(arg), Some(res)) = (&resource_arg, t.owned) {
                o.insert(arg.clone(), Value::String(Cow::Owned(res.id.clone())));
            }
            for (name, policy) in &t.urls {
                if o.contains_key(name) || size == Size::Max {
                    o.insert(
                        name.clone(),
                        Value::String(Cow::Owned(allowed_url(*policy))),
                    );
                }
            }
            if let Some(res) = t.owned {
                for Limit {
                    arg,
                    attr,
                    inclusive,
                } in &t.limits
                {
                    if let (Some(limit), true) =
                        (res.int(attr), o.contains_key(arg) || size == Size::Max)
                    {
                        let top = if *inclusive {
                            limit
                        } else {
                            limit.saturating_sub(1)
                        };
                        let v = match size {
                            Size::Min => 1.min(top),
                            Size::Max => top,
                        };
                        o.insert(arg.clone(), Value::Number(v.into()));
                    }
                }
            }
            o
        };
        let tool_ok = |o: &Object<'static>| tool.schema().is_valid(&Value::Object(o.clone()));
        let resource_ok = tool.resource().is_none() || owned.is_some();
        for (size, label) in [
            (Size::Min, "minimal instance"),
            (Size::Max, "maximal instance"),
        ] {
            let built = instance::build(tool.raw_schema(), size)
                .and_then(|v| match v {
                    Value::Object(o) => Some(o),
                    _ => None,
                })
                .map(|o| fix(o, size, &target));
            match built {
                Some(o) if tool_ok(&o) && resource_ok => {
                    if target.base.is_none() {
                        target.base = Some(o.clone());
                    }
                    target.valid.push((label.to_owned(), o));
                }
                _ => {}
            }
        }
        // The schema's own examples.
        if let Some(examples) = tool
            .raw_schema()
            .as_object()
            .and_then(|o| o.get("examples"))
            .and_then(Value::as_array)
        {
            for (i, e) in examples.iter().enumerate() {
                if let Some(o) = e.as_object() {
                    let o = fix(o.clone().into_owned(), Size::Min, &target);
                    if tool_ok(&o) && resource_ok {
                        target.valid.push((format!("schema example {i}"), o));
                    }
                }
            }
        }
        // Each bound of each integer, and lengths counted in code points.
        if let Some(base) = target.base.clone() {
            for (name, schema) in &props {
                let variants =
                    boundary_values(schema, target.limits.iter().any(|l| l.arg == *name));
                for (label, v) in variants {
                    let mut o = base.clone();
                    o.insert((*name).to_owned(), v);
                    if tool_ok(&o) {
                        target.valid.push((format!("`{name}` {label}"), o));
                    }
                }
            }
        }
        if target.base.is_none() {
            target.untested.push(
                "no valid call could be built from the schema: add `examples` to it (attacks that \
                 change a valid call were not tried)"
                    .to_owned(),
            );
        }
        target
    }

    /// Every case: the valid calls, then the attacks.
    pub fn cases(&self, rng: &mut Rng) -> Vec<Case> {
        let mut out = Vec::new();
        let name = self.tool.name().to_owned();
        let case = |class, label: String, args: String| Case {
            class,
            label,
            name: name.clone(),
            args: Some(args),
            text: None,
            end: End::Complete,
            envelope_dup: None,
        };
        for (label, o) in &self.valid {
            out.push(case(Class::Valid, label.clone(), render(&members(o))));
        }
        self.not_object(&mut out, &case);
        let Some(base) = &self.base else {
            return out;
        };
        let m = members(base);
        let base_text = render(&m);
        let props = properties(self.tool);
        let declared: Vec<&str> = props.iter().map(|(n, _)| *n).collect();

        for (name, schema) in &props {
            let present = base.contains_key(name);
            let with = |v: &str| {
                let mut m = m.clone();
                set(&mut m, name, v);
                render(&m)
            };
            for (label, v) in confusions(schema, base.get(name)) {
                out.push(case(
                    Class::TypeConfusion,
                    format!("`{name}` {label}"),
                    with(&v),
                ));
            }
            if matches!(type_of(schema), Some("integer" | "number")) {
                for v in [
                    "NaN",
                    "Infinity",
                    "-Infinity",
                    "1e400",
                    "-1e400",
                    "1e-400",
                    "nan",
                    "+1",
                ] {
                    out.push(case(Class::NonFinite, format!("`{name}` {v}"), with(v)));
                }
            }
            for (label, v) in out_of_bounds(schema, base.get(name)) {
                out.push(case(Class::Bounds, format!("`{name}` {label}"), with(&v)));
            }
            for (label, v) in rounding(schema, base.get(name)) {
                out.push(case(Class::Rounding, format!("`{name}` {label}"), with(&v)));
            }
            for (label, v) in lengths(schema, base.get(name)) {
                out.push(case(Class::Length, format!("`{name}` {label}"), with(&v)));
            }
            for (label, v) in pattern_bypasses(schema, base.get(name)) {
                out.push(case(
                    Class::PatternBypass,
                    format!("`{name}` {label}"),
                    with(&v),
                ));
            }
            if !allows_null(schema) {
                out.push(case(
                    Class::NullForAbsent,
                    format!("`{name}` null"),
                    with("null"),
                ));
            }
            if present {
                let mut dup = m.clone();
                let value = m
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                dup.push((quote(name), value.clone()));
                out.push(case(
                    Class::DuplicateKey,
                    format!("`{name}` twice, same value"),
                    render(&dup),
                ));
                let alt = other_value(schema, base.get(name), self);
                let mut dup = m.clone();
                dup.push((quote(name), alt.clone()));
                out.push(case(
                    Class::DuplicateKey,
                    format!("`{name}` twice, another value last"),
                    render(&dup),
                ));
                let mut dup = m.clone();
                dup.insert(0, (quote(name), alt.clone()));
                out.push(case(
                    Class::DuplicateKey,
                    format!("`{name}` twice, another value first"),
                    render(&dup),
                ));
                let mut dup = m.clone();
                dup.push((escaped_key(name), alt.clone()));
                out.push(case(
                    Class::DuplicateKey,
                    format!("`{name}` again, spelled with a \\u escape"),
                    render(&dup),
                ));
                // A nested duplicate: inside the value when it is an object.
                if let Some(Value::Object(inner)) = base.get(name) {
                    if let Some((k, v)) = inner.iter().next() {
                        let mut im = members(&inner.clone().into_owned());
                        im.push((quote(k), canonical::to_string(v)));
                        out.push(case(
                            Class::DuplicateKey,
                            format!("`{name}/{k}` twice"),
                            with(&render(&im)),
                        ));
                    }
                }
            }
        }
        // A nested duplicate where the schema has no object member: an
        // object the schema does not expect, holding a duplicate.
        out.push(case(
            Class::DuplicateKey,
            "an undeclared member holding a duplicate".to_owned(),
            render(
                &[
                    m.clone(),
                    vec![(quote(&undeclared(&declared)), r#"{"a":1,"a":2}"#.to_owned())],
                ]
                .concat(),
            ),
        ));
        // Envelope duplicates: a second `arguments`/`input` in the call.
        let mut alt = m.clone();
        if let Some((k, _)) = alt.first().cloned() {
            let p = props.iter().find(|(n, _)| quote(n) == k);
            let v = p.map_or_else(
                || "null".to_owned(),
                |(_, s)| other_value(s, base.get(&unquote(&k)), self),
            );
            set(&mut alt, &unquote(&k), &v);
        }
        out.push(Case {
            envelope_dup: Some(render(&alt)),
            ..case(
                Class::DuplicateKey,
                "the arguments member twice in the envelope".to_owned(),
                base_text.clone(),
            )
        });

        // Members the schema does not declare.
        let open_by_design = self.tool.raw_schema().as_object().is_some_and(|o| {
            o.get("additionalProperties")
                .is_some_and(|a| a.as_object().is_some())
                || o.contains_key("patternProperties")
        });
        if !open_by_design {
            let first = declared.first().copied().unwrap_or("a");
            let mut names = vec![
                undeclared(&declared),
                "__proto__".to_owned(),
                "constructor".to_owned(),
                capitalized(first),
                format!("{first} "),
                format!("{first}\u{200b}"),
                format!("{first}\u{0}"),
            ];
            names.retain(|n| !declared.contains(&n.as_str()));
            for n in names {
                let mut mm = m.clone();
                mm.push((quote(&n), r#""x""#.to_owned()));
                out.push(case(
                    Class::ExtraMember,
                    format!("undeclared member {}", quote(&n)),
                    render(&mm),
                ));
            }
        }
        for r in required(self.tool) {
            let mm: Vec<_> = m.iter().filter(|(k, _)| *k != quote(&r)).cloned().collect();
            out.push(case(
                Class::MissingMember,
                format!("`{r}` left out"),
                render(&mm),
            ));
        }

        // Cut off.
        out.push(Case {
            end: End::Truncated,
            ..case(
                Class::Truncated,
                "complete arguments, finish says out of tokens".to_owned(),
                base_text.clone(),
            )
        });
        out.push(Case {
            end: End::Cut,
            ..case(
                Class::Truncated,
                "stream cut mid-arguments".to_owned(),
                base_text.clone(),
            )
        });
        let half: String = base_text
            .chars()
            .take(base_text.chars().count() / 2)
            .collect();
        out.push(case(
            Class::Truncated,
            "half the arguments, finish says complete".to_owned(),
            half,
        ));

        // Look-alike names.
        for (label, n) in lookalikes(self.tool.name()) {
            if self.names.contains(&n) {
                continue;
            }
            out.push(Case {
                name: n,
                ..case(Class::NameLookalike, label, base_text.clone())
            });
        }

        // Calls written in text.
        for (label, text) in markup(self.tool.name(), &base_text, rng) {
            out.push(Case {
                args: None,
                text: Some(text),
                ..case(Class::MarkupInText, label, String::new())
            });
        }

        // URL arguments.
        for (arg, policy) in &self.urls {
            // The table's names that point inside are aimed at whether or
            // not the argument resolves (a policy that does not is the hole);
            // an unlisted name only where resolving is on.
            let resolves = policy.map_or(self.resolving, |p| p.resolve());
            let mut urls = ssrf_urls(*policy);
            urls.extend(resolving_urls(*policy, &self.inside_hosts, resolves));
            for (label, url) in urls {
                let label = match policy {
                    Some(_) => format!("`{arg}` {label}"),
                    None => format!("`{arg}` (default URL guard) {label}"),
                };
                out.push(case(Class::Ssrf, label, {
                    let mut mm = m.clone();
                    set(&mut mm, arg, &quote(&url));
                    render(&mm)
                }));
            }
        }
        // A network URL in any other string: the default guard checks it
        // by its value.
        for arg in &self.url_shaped {
            for (label, url) in [
                ("cloud metadata", "http://169.254.169.254/latest/meta-data/"),
                ("loopback, short form", "http://127.1:6379/"),
                ("the gopher scheme", "gopher://10.0.0.1:70/_x"),
            ] {
                out.push(case(
                    Class::Ssrf,
                    format!("`{arg}` a URL-shaped value aimed at {label}"),
                    {
                        let mut mm = m.clone();
                        set(&mut mm, arg, &quote(url));
                        render(&mm)
                    },
                ));
            }
        }

        // Ownership and limits, from the entities.
        if let (Some(r), Some(owned)) = (self.tool.resource(), self.owned) {
            if let Some(arg) = top_level(r.id_pointer()) {
                for other in &self.others {
                    let mut mm = m.clone();
                    set(&mut mm, &arg, &quote(&other.id));
                    out.push(case(
                        Class::Ownership,
                        format!("another user's {} `{}`", r.entity_type(), other.id),
                        render(&mm),
                    ));
                    // And the swap hidden behind a duplicate.
                    let mut mm = m.clone();
                    mm.push((escaped_key(&arg), quote(&other.id)));
                    out.push(case(
                        Class::Ownership,
                        format!(
                            "another user's {} behind an escaped duplicate",
                            r.entity_type()
                        ),
                        render(&mm),
                    ));
                }
                for id in missing_ids(&owned.id) {
                    let mut mm = m.clone();
                    set(&mut mm, &arg, &quote(&id));
                    out.push(case(
                        Class::Ownership,
                        format!("a {} that does not exist", r.entity_type()),
                        render(&mm),
                    ));
                }
            }
            for Limit {
                arg,
                attr,
                inclusive,
            } in &self.limits
            {
                if let Some(limit) = owned.int(attr) {
                    let mut mm = m.clone();
                    let first_over = if *inclusive {
                        limit.saturating_add(1)
                    } else {
                        limit
                    };
                    set(&mut mm, arg, &first_over.to_string());
                    out.push(case(
                        Class::OverLimit,
                        format!("`{arg}` just past the resource's `{attr}`"),
                        render(&mm),
                    ));
                    let mut mm = m.clone();
                    set(
                        &mut mm,
                        arg,
                        &limit
                            .saturating_mul(10)
                            .max(limit.saturating_add(1))
                            .to_string(),
                    );
                    out.push(case(
                        Class::OverLimit,
                        format!("`{arg}` far above the resource's `{attr}`"),
                        render(&mm),
                    ));
                }
            }
        }
        out
    }

    fn not_object(&self, out: &mut Vec<Case>, case: &dyn Fn(Class, String, String) -> Case) {
        let base = self.base.as_ref().map(|b| render(&members(b)));
        let mut texts: Vec<(&str, String)> = vec![
            ("an array", "[]".to_owned()),
            ("null", "null".to_owned()),
            ("a number", "1".to_owned()),
            ("true", "true".to_owned()),
            ("an empty string", r#""""#.to_owned()),
            ("no text at all", String::new()),
            ("only spaces", "   ".to_owned()),
            ("two objects", "{}{}".to_owned()),
        ];
        if let Some(b) = base {
            texts.push(("the arguments double-encoded as a string", quote(&b)));
            texts.push(("the arguments in an array", format!("[{b}]")));
            texts.push(("the arguments followed by more text", format!("{b} {b}")));
        }
        for (label, t) in texts {
            out.push(case(Class::NotObject, label.to_owned(), t));
        }
    }
}

/// Whether two names end in the same unit: the last `_`-separated word,
/// at least three letters (`amount_cents`, `total_cents`).
fn same_unit(arg: &str, attr: &str) -> bool {
    let unit = |s: &str| s.rsplit(['_', '-']).next().map(str::to_ascii_lowercase);
    match (unit(arg), unit(attr)) {
        (Some(a), Some(b)) => a.len() >= 3 && a == b && arg.contains('_') && attr.contains('_'),
        _ => false,
    }
}

/// The members of an object as `(quoted name, value text)`.
fn members(o: &Object<'_>) -> Vec<(String, String)> {
    o.iter()
        .map(|(k, v)| (quote(k), canonical::to_string(v)))
        .collect()
}

fn render(m: &[(String, String)]) -> String {
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    format!("{{{}}}", parts.join(","))
}

/// Sets (or adds) member `name` to the value text `v`.
fn set(m: &mut Vec<(String, String)>, name: &str, v: &str) {
    let key = quote(name);
    match m.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = v.to_owned(),
        None => m.push((key, v.to_owned())),
    }
}

fn unquote(k: &str) -> String {
    toolgate_json::from_slice(k.as_bytes())
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `name` as a JSON string whose first character is a `\u` escape.
fn escaped_key(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if u32::from(c) <= 0xffff => {
            let rest = quote(chars.as_str());
            let rest = rest.get(1..).unwrap_or("\"");
            format!("\"\\u{:04x}{rest}", u32::from(c))
        }
        _ => quote(name),
    }
}

fn undeclared(declared: &[&str]) -> String {
    ["note", "extra", "debug", "x_extra"]
        .iter()
        .find(|n| !declared.contains(n))
        .map_or_else(|| "x_undeclared_member".to_owned(), |n| (*n).to_owned())
}

pub(super) fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Another value for a duplicate: valid on its own where one is known.
fn other_value(schema: &Object<'_>, base: Option<&Value<'_>>, t: &Target<'_>) -> String {
    if let (Some(r), Some(Value::String(_))) = (t.tool.resource(), base) {
        if let (Some(other), Some(_)) = (t.others.first(), top_level(r.id_pointer())) {
            return quote(&other.id);
        }
    }
    match (type_of(schema), base) {
        (Some("integer" | "number"), Some(Value::Number(n))) => {
            let (_, hi) = int_range(schema);
            let v = n.as_i64().unwrap_or(0);
            hi.map_or(v.saturating_add(1), |h| {
                if h > v {
                    h
                } else {
                    v.saturating_sub(1)
                }
            })
            .to_string()
        }
        (_, Some(Value::String(s))) => {
            if let Some(values) = schema.get("enum").and_then(Value::as_array) {
                if let Some(other) = values.iter().find(|v| v.as_str() != Some(s)) {
                    return canonical::to_string(other);
                }
            }
            quote(&format!("{s}x"))
        }
        (_, Some(Value::Bool(b))) => (!b).to_string(),
        _ => "null".to_owned(),
    }
}
