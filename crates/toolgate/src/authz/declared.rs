//! What the Cedar schema declares for each tool's `context.args`: the types
//! the arguments are converted to (see [`super::value`]).
//!
//! Read from the schema's JSON form ([`cedar_policy::SchemaFragment`]), so
//! that a JSON Schema `number` can become the Cedar type its attribute is
//! declared with (a `decimal` holds `3` as `3.0`), and an argument the Cedar
//! schema does not declare can be left out of the request (no policy can
//! read it: policies are type-checked against the schema).

use std::collections::HashMap;

use toolgate_json::Value;

/// How many common-type references one resolution follows (a loop).
const MAX_ALIAS_HOPS: usize = 32;

/// A declared Cedar type, as far as argument conversion cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Declared {
    /// `Long`.
    Long,
    /// `decimal`.
    Decimal,
    /// A record with these attributes (records are closed in Cedar).
    Record(HashMap<String, Declared>),
    /// A set of this element type.
    Set(Box<Declared>),
    /// Anything else (`String`, `Bool`, an entity, another extension type):
    /// converted by the value's own JSON type.
    Other,
}

/// The schema's JSON form (Cedar's, written from the fragment parsed once
/// for the schema itself, or kept from an earlier parse), which
/// [`args_by_action`] and [`facts_by_action`] read; `null` when there is
/// none or it does not read (they then find nothing declared).
pub(crate) fn json_root(json: Option<&str>) -> Value<'static> {
    json.and_then(|json| toolgate_json::from_str(json).ok().map(Value::into_owned))
        .unwrap_or(Value::Null)
}

/// The declared type of `context.args` of every action, by action id (the
/// tool's name), from the Cedar schema text. Actions whose `args` cannot be
/// read are left out (their arguments are converted by their JSON types).
pub(crate) fn args_by_action(root: &Value<'_>) -> HashMap<String, Declared> {
    let mut out = HashMap::new();
    let Some(namespaces) = root.as_object() else {
        return out;
    };
    for (ns_name, ns) in namespaces.iter() {
        let common = ns.pointer("/commonTypes").and_then(Value::as_object);
        let Some(actions) = ns.pointer("/actions").and_then(Value::as_object) else {
            continue;
        };
        let resolver = Resolver { common };
        for (action, def) in actions.iter() {
            let Some(context) = def.pointer("/appliesTo/context") else {
                continue;
            };
            let Declared::Record(attrs) = resolver.resolve(context, 0) else {
                continue;
            };
            if let Some(args) = attrs.get("args") {
                // Actions are named by the tool in the unqualified namespace.
                if ns_name.is_empty() {
                    out.insert(action.to_owned(), args.clone());
                }
            }
        }
    }
    out
}

/// The session facts each action's declared context holds, by action id:
/// the names among `labels` and `egress` its context record declares (the
/// gate adds only those to the request's context, which the schema checks).
pub(crate) fn facts_by_action(root: &Value<'_>) -> HashMap<String, Vec<&'static str>> {
    let mut out = HashMap::new();
    let Some(namespaces) = root.as_object() else {
        return out;
    };
    for (ns_name, ns) in namespaces.iter() {
        let common = ns.pointer("/commonTypes").and_then(Value::as_object);
        let Some(actions) = ns.pointer("/actions").and_then(Value::as_object) else {
            continue;
        };
        let resolver = Resolver { common };
        for (action, def) in actions.iter() {
            let Some(context) = def.pointer("/appliesTo/context") else {
                continue;
            };
            let Declared::Record(attrs) = resolver.resolve(context, 0) else {
                continue;
            };
            let facts: Vec<&'static str> = ["labels", "egress"]
                .into_iter()
                .filter(|f| attrs.contains_key(*f))
                .collect();
            if ns_name.is_empty() && !facts.is_empty() {
                out.insert(action.to_owned(), facts);
            }
        }
    }
    out
}

/// Why a tool's JSON Schema lets through a number its declared Cedar type
/// cannot hold exactly (so a valid call would be denied for its type alone):
/// a `number` or `integer` argument declared `decimal` needs `multipleOf` a
/// multiple of 0.0001 (for `number`) and both bounds within ±922337203685477;
/// one declared `Long` needs a whole `multipleOf` (for `number`) and both
/// bounds within `i64`. Follows `properties` and `items` where the Cedar
/// schema declares a record or a set; the message names the argument's
/// JSON Pointer.
pub(crate) fn number_problem(schema: &Value<'_>, declared: &Declared) -> Option<String> {
    let mut pointer = String::new();
    walk_numbers(schema, declared, &mut pointer)
}

fn walk_numbers(schema: &Value<'_>, declared: &Declared, pointer: &mut String) -> Option<String> {
    let o = schema.as_object()?;
    match declared {
        Declared::Record(attrs) => {
            for (name, sub) in o
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.iter())
            {
                let Some(d) = attrs.get(name) else { continue };
                let len = pointer.len();
                toolgate_json::pointer::push_token(pointer, name);
                let found = walk_numbers(sub, d, pointer);
                pointer.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Declared::Set(element) => {
            let items = o.get("items")?;
            let len = pointer.len();
            pointer.push_str("/*");
            let found = walk_numbers(items, element, pointer);
            pointer.truncate(len);
            found
        }
        Declared::Long | Declared::Decimal => {
            let types: Vec<&str> = match o.get("type") {
                Some(Value::String(t)) => vec![t.as_ref()],
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                _ => return None,
            };
            let fraction = types.contains(&"number");
            if !fraction && !types.contains(&"integer") {
                return None;
            }
            let decimal = *declared == Declared::Decimal;
            // The exact scale the declared type holds: 10^4 for a decimal.
            let scale = if decimal { 4 } else { 0 };
            let step_ok = !fraction
                || o.get("multipleOf")
                    .and_then(Value::as_number)
                    .and_then(|m| super::value::scaled(m, scale))
                    .is_some_and(|m| m != 0);
            let limit: i128 = if decimal {
                i128::from(i64::MAX)
            } else {
                i128::from(i64::MAX) * 10_000
            };
            let bound = |keys: [&str; 2]| {
                keys.iter().any(|k| {
                    o.get(k)
                        .and_then(Value::as_number)
                        .and_then(|n| super::value::scaled(n, 4))
                        .is_some_and(|v| v.abs() <= limit)
                })
            };
            let bounded =
                bound(["minimum", "exclusiveMinimum"]) && bound(["maximum", "exclusiveMaximum"]);
            if step_ok && bounded {
                return None;
            }
            let shown = if pointer.is_empty() {
                "/"
            } else {
                pointer.as_str()
            };
            Some(if decimal {
                format!(
                    "argument `{shown}` is a JSON Schema {} the cedar schema declares `decimal`, which holds four fraction digits within ±922337203685477: give it {}`minimum` and `maximum` within that range",
                    if fraction { "`number`" } else { "`integer`" },
                    if fraction { "a `multipleOf` such as 0.01, and " } else { "" }
                )
            } else {
                format!(
                    "argument `{shown}` is a JSON Schema {} the cedar schema declares `Long`: give it {}`minimum` and `maximum` within the range of `Long`{}",
                    if fraction { "`number`" } else { "`integer`" },
                    if fraction { "a whole `multipleOf`, and " } else { "" },
                    if fraction { ", or declare it `decimal`" } else { "" }
                )
            })
        }
        Declared::Other => None,
    }
}

struct Resolver<'v, 'a> {
    common: Option<&'v toolgate_json::Object<'a>>,
}

impl Resolver<'_, '_> {
    fn resolve(&self, ty: &Value<'_>, hops: usize) -> Declared {
        let Some(o) = ty.as_object() else {
            return Declared::Other;
        };
        let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "Record" => {
                let mut attrs = HashMap::new();
                for (name, attr) in o
                    .get("attributes")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(|a| a.iter())
                {
                    attrs.insert(name.to_owned(), self.resolve(attr, hops));
                }
                Declared::Record(attrs)
            }
            "Set" => Declared::Set(Box::new(
                o.get("element")
                    .map_or(Declared::Other, |e| self.resolve(e, hops)),
            )),
            "Extension" => self.named(o.get("name").and_then(Value::as_str).unwrap_or(""), hops),
            "EntityOrCommon" => {
                self.named(o.get("name").and_then(Value::as_str).unwrap_or(""), hops)
            }
            other => self.named(other, hops),
        }
    }

    /// A type by name: a primitive, an extension, a common type, or else an
    /// entity type.
    fn named(&self, name: &str, hops: usize) -> Declared {
        let base = name.strip_prefix("__cedar::").unwrap_or(name);
        match base {
            "Long" => return Declared::Long,
            "decimal" => return Declared::Decimal,
            _ => {}
        }
        if name.starts_with("__cedar::") || hops >= MAX_ALIAS_HOPS {
            return Declared::Other;
        }
        match self.common.and_then(|c| c.get(name)) {
            Some(alias) => self.resolve(alias, hops + 1),
            None => Declared::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

    use super::*;

    #[test]
    fn reads_the_args_of_each_action() {
        let schema = r#"
            type Money = decimal;
            type Line = { price: Money, qty: Long };
            entity User;
            action pay appliesTo {
              principal: [User], resource: [User],
              context: { args: { amount: decimal, lines: Set<Line>, note?: String, n: __cedar::Long, m: Money }, turn: Long },
            };
            action ping appliesTo { principal: [User], resource: [User], context: {} };
        "#;
        let (fragment, _) = cedar_policy::SchemaFragment::from_cedarschema_str(schema).unwrap();
        let got = args_by_action(&json_root(fragment.to_json_string().ok().as_deref()));
        let Declared::Record(args) = &got["pay"] else {
            panic!("{got:?}")
        };
        assert_eq!(args["amount"], Declared::Decimal);
        assert_eq!(args["n"], Declared::Long);
        assert_eq!(args["m"], Declared::Decimal);
        assert_eq!(args["note"], Declared::Other);
        let Declared::Set(line) = &args["lines"] else {
            panic!()
        };
        let Declared::Record(line) = line.as_ref() else {
            panic!()
        };
        assert_eq!(line["price"], Declared::Decimal);
        assert_eq!(line["qty"], Declared::Long);
        assert!(!got.contains_key("ping"));
    }
}
