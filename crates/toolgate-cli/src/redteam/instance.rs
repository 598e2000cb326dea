//! Instances a schema should accept: the smallest and the largest value of
//! each subschema, built from what the schema says (`const`, `enum`,
//! `examples`, `default`, types, bounds, `pattern`, `format`). Every
//! instance is checked against the compiled schema by the caller; a guess
//! that does not validate is dropped, never reported as the schema's fault.

use std::borrow::Cow;

use toolgate_json::{Number, Object, Value};

/// Which end of each range an instance takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Required members only, lower bounds, shortest strings.
    Min,
    /// Every declared member, upper bounds, longest strings (capped).
    Max,
}

/// The longest string or array built, whatever the schema allows.
const CAP: u64 = 256;

/// A value `schema` accepts, or `None` when none could be built.
pub fn build(schema: &Value<'_>, size: Size) -> Option<Value<'static>> {
    build_at(schema, size, 0)
}

fn build_at(schema: &Value<'_>, size: Size, depth: usize) -> Option<Value<'static>> {
    if depth > 16 {
        return None;
    }
    let o = match schema {
        Value::Bool(true) => return Some(Value::Null),
        Value::Object(o) => o,
        _ => return None,
    };
    if let Some(c) = o.get("const") {
        return Some(c.clone().into_owned());
    }
    if let Some(values) = o.get("enum").and_then(Value::as_array) {
        let pick = match size {
            Size::Min => values.first(),
            Size::Max => values.last(),
        };
        return pick.map(|v| v.clone().into_owned());
    }
    if size == Size::Min {
        if let Some(d) = o.get("default") {
            return Some(d.clone().into_owned());
        }
    }
    if let Some(e) = o
        .get("examples")
        .and_then(Value::as_array)
        .and_then(<[_]>::first)
    {
        return Some(e.clone().into_owned());
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = o.get(key).and_then(Value::as_array).and_then(<[_]>::first) {
            return build_at(first, size, depth + 1);
        }
    }
    match type_of(o)? {
        "object" => object(o, size, depth),
        "array" => array(o, size, depth),
        "string" => string(o, size).map(|s| Value::String(Cow::Owned(s))),
        "integer" => integer(o, size).map(|n| Value::Number(Number::from(n))),
        "number" => number(o, size),
        "boolean" => Some(Value::Bool(size == Size::Max)),
        "null" => Some(Value::Null),
        _ => None,
    }
}

/// The declared type (the first non-null one of a list).
pub fn type_of<'a>(o: &'a Object<'_>) -> Option<&'a str> {
    match o.get("type")? {
        Value::String(s) => Some(s),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or_else(|| types.iter().find_map(Value::as_str)),
        _ => None,
    }
}

fn object(o: &Object<'_>, size: Size, depth: usize) -> Option<Value<'static>> {
    let required: Vec<&str> = o
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Object::new();
    if let Some(props) = o.get("properties").and_then(Value::as_object) {
        for (name, sub) in props.iter() {
            if size == Size::Min && !required.contains(&name) {
                continue;
            }
            let value = build_at(sub, size, depth + 1)?;
            out.insert(name.to_owned(), value);
        }
    }
    // A required member no `properties` declares cannot be built.
    if required.iter().any(|r| !out.contains_key(r)) {
        return None;
    }
    Some(Value::Object(out))
}

fn array(o: &Object<'_>, size: Size, depth: usize) -> Option<Value<'static>> {
    let min = uint(o, "minItems").unwrap_or(0);
    let count = match size {
        Size::Min => min,
        Size::Max => uint(o, "maxItems").unwrap_or(min.max(2)).min(8).max(min),
    };
    let mut items = Vec::new();
    if let Some(prefix) = o.get("prefixItems").and_then(Value::as_array) {
        for p in prefix {
            items.push(build_at(p, size, depth + 1)?);
        }
    }
    if u64::try_from(items.len()).unwrap_or(u64::MAX) < count {
        let item = build_at(o.get("items")?, size, depth + 1)?;
        while u64::try_from(items.len()).unwrap_or(u64::MAX) < count.min(CAP) {
            items.push(item.clone());
        }
    }
    Some(Value::Array(items))
}

fn string(o: &Object<'_>, size: Size) -> Option<String> {
    let min = uint(o, "minLength").unwrap_or(0);
    let max = uint(o, "maxLength");
    if let Some(format) = o.get("format").and_then(Value::as_str) {
        return format_instance(format).map(str::to_owned);
    }
    if let Some(pattern) = o.get("pattern").and_then(Value::as_str) {
        return crate::redteam::pattern::generate(pattern, size == Size::Max);
    }
    let len = match size {
        Size::Min => min.max(1),
        Size::Max => max.unwrap_or(min.max(16)).min(CAP).max(min),
    };
    let len = usize::try_from(len).ok()?;
    Some("a".repeat(len))
}

/// A value each common `format` accepts.
fn format_instance(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "2026-01-01T00:00:00Z",
        "date" => "2026-01-01",
        "time" => "00:00:00Z",
        "duration" => "P1D",
        "email" | "idn-email" => "someone@example.com",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "uri" | "iri" | "uri-reference" | "iri-reference" => "https://example.com/",
        "uuid" => "123e4567-e89b-12d3-a456-426614174000",
        "json-pointer" => "/a",
        "regex" => "^a$",
        _ => return None,
    })
}

/// The inclusive integer range the schema allows, as far as it says.
pub fn int_range(o: &Object<'_>) -> (Option<i64>, Option<i64>) {
    let lo = int_bound(o, "minimum", 0).max(int_bound(o, "exclusiveMinimum", 1));
    let hi = min_opt(
        int_bound(o, "maximum", 0),
        int_bound(o, "exclusiveMaximum", -1),
    );
    (lo, hi)
}

fn int_bound(o: &Object<'_>, key: &str, shift: i64) -> Option<i64> {
    // A bound that is not an integer of `i64` leaves the range open here:
    // the instance is checked against the compiled schema anyway.
    o.get(key)?.as_number()?.as_i64()?.checked_add(shift)
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn integer(o: &Object<'_>, size: Size) -> Option<i64> {
    let (lo, hi) = int_range(o);
    let v = match size {
        Size::Min => lo.unwrap_or(0).max(hi.map_or(i64::MIN, |h| h.min(0))),
        Size::Max => hi.unwrap_or(lo.map_or(1000, |l| l.saturating_add(1000))),
    };
    let v = match (lo, hi) {
        (Some(l), _) if v < l => l,
        (_, Some(h)) if v > h => h,
        _ => v,
    };
    Some(v)
}

fn number(o: &Object<'_>, size: Size) -> Option<Value<'static>> {
    integer(o, size).map(|n| Value::Number(Number::from(n)))
}

fn uint(o: &Object<'_>, key: &str) -> Option<u64> {
    o.get(key)?.as_number()?.as_u64()
}
