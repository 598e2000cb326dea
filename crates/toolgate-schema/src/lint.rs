//! The lint: flags schemas too loose for a tool gate. It reads the schema
//! document as written (no `$ref` following: every subschema, `$defs`
//! included, is visited where it stands), and judges it as strict mode
//! compiles it: an object that strict mode closes (it declares `properties`
//! and says nothing of `additionalProperties`) is not `open_object`.
//!
//! The lint does not compile: a document that is not a schema, or that the
//! compiler refuses, may have no findings. Compile it first
//! ([`crate::Schema::compile`]), as `toolgate lint` does.

use std::fmt;

use toolgate_json::{pointer, Object, Value};

use crate::keywords::{subschema_shape, Shape};

/// What a finding is about. A stable wire code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FindingCode {
    /// An object schema that lets unnamed members through even in strict mode:
    /// `additionalProperties: true` (or `{}`), or an object without
    /// `properties`, or an `anyOf`/`oneOf`/`allOf` branch that nothing closes.
    /// (Strict mode closes an object that declares `properties` and says
    /// nothing of `additionalProperties`: that one is not reported.)
    OpenObject,
    /// An `integer` or `number` without a lower and an upper bound (nor `enum`/`const`).
    UnboundedNumber,
    /// A `string` without `maxLength`, `enum`, `const`, `pattern` or `format`.
    UnboundedString,
    /// An `array` without `maxItems` (nor a closed `prefixItems` tuple).
    UnboundedArray,
    /// A property that is not `required` and has no `default`: the tool must
    /// cope with its absence.
    OptionalWithoutDefault,
    /// A string with `format: uri` (or `uri-reference`, `iri`, `iri-reference`):
    /// it needs a URL policy at the gate (schemes, hosts, no private addresses).
    UriNeedsPolicy,
    /// Two `anyOf` branches can accept the same value, so which one matched
    /// is ambiguous.
    OverlappingAnyOf,
    /// A subschema that accepts any value (`true`, `{}`, or no type-constraining keyword).
    AcceptsAnything,
    /// A `format` toolgate has no checker for: strict mode refuses the schema.
    UnknownFormat,
}

impl FindingCode {
    /// The code as written on the wire: `open_object`, `unbounded_number`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenObject => "open_object",
            Self::UnboundedNumber => "unbounded_number",
            Self::UnboundedString => "unbounded_string",
            Self::UnboundedArray => "unbounded_array",
            Self::OptionalWithoutDefault => "optional_without_default",
            Self::UriNeedsPolicy => "uri_needs_policy",
            Self::OverlappingAnyOf => "overlapping_any_of",
            Self::AcceptsAnything => "accepts_anything",
            Self::UnknownFormat => "unknown_format",
        }
    }
}

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One lint finding: a code, the JSON Pointer of the subschema in the schema,
/// and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    code: FindingCode,
    pointer: String,
    message: String,
}

impl Finding {
    /// The stable code.
    pub fn code(&self) -> FindingCode {
        self.code
    }

    /// The JSON Pointer of the subschema (or keyword) in the schema.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What is loose and how to tighten it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{} at schema `{p}`: {}", self.code, self.message)
    }
}

/// Lints a schema, returning every finding in document order.
///
/// ```
/// use toolgate_schema::{lint, FindingCode};
/// let schema = toolgate_json::from_str(
///     r#"{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":true}"#,
/// )?;
/// let codes: Vec<_> = lint(&schema).iter().map(|f| f.code()).collect();
/// assert_eq!(
///     codes,
///     [FindingCode::OpenObject, FindingCode::OptionalWithoutDefault, FindingCode::UnboundedNumber]
/// );
/// # Ok::<(), toolgate_json::Error>(())
/// ```
pub fn lint(schema: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    walk(schema, String::new(), &mut out);
    out
}

fn push(out: &mut Vec<Finding>, code: FindingCode, pointer: &str, message: impl Into<String>) {
    out.push(Finding {
        code,
        pointer: pointer.to_owned(),
        message: message.into(),
    });
}

const ALL_TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// The types a schema admits, from `type`, `const` and `enum` (all when unconstrained).
fn types_of(o: &Object) -> Vec<&'static str> {
    let from_value = |v: &Value| -> &'static str {
        match v {
            Value::Number(n) if n.is_integer_lexeme() => "integer",
            other => other.type_name(),
        }
    };
    if let Some(c) = o.get("const") {
        return vec![from_value(c)];
    }
    if let Some(Value::Array(e)) = o.get("enum") {
        let mut t: Vec<&'static str> = e.iter().map(from_value).collect();
        t.sort_unstable();
        t.dedup();
        return t;
    }
    let declared: Vec<&str> = match o.get("type") {
        Some(Value::String(s)) => vec![s.as_ref()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => return ALL_TYPES.to_vec(),
    };
    ALL_TYPES
        .iter()
        .copied()
        .filter(|t| declared.contains(t) || (*t == "integer" && declared.contains(&"number")))
        .collect()
}

fn has_any(o: &Object, keys: &[&str]) -> bool {
    keys.iter().any(|k| o.contains_key(k))
}

fn walk(schema: &Value, ptr: String, out: &mut Vec<Finding>) {
    let o = match schema {
        Value::Bool(true) => {
            push(
                out,
                FindingCode::AcceptsAnything,
                &ptr,
                "the schema `true` accepts any value",
            );
            return;
        }
        Value::Object(o) => o,
        _ => return,
    };
    check(o, &ptr, out);
    for (k, v) in o.iter() {
        let mut p = ptr.clone();
        pointer::push_token(&mut p, k);
        match subschema_shape(k) {
            Shape::Single => {
                // `additionalProperties: true` is reported as an open object instead.
                if !(k == "additionalProperties"
                    || k == "unevaluatedProperties"
                    || k == "contentSchema")
                    || !matches!(v, Value::Bool(true))
                {
                    walk(v, p, out);
                }
            }
            Shape::Map => {
                if let Value::Object(m) = v {
                    for (name, sub) in m.iter() {
                        let mut q = p.clone();
                        pointer::push_token(&mut q, name);
                        walk(sub, q, out);
                    }
                }
            }
            Shape::List => {
                if let Value::Array(a) = v {
                    for (i, sub) in a.iter().enumerate() {
                        let mut q = p.clone();
                        pointer::push_index(&mut q, i);
                        walk(sub, q, out);
                    }
                }
            }
            Shape::None => {}
        }
    }
}

/// Whether strict mode closes this object schema (as the compiler does): it
/// declares `properties` or `patternProperties`, says nothing of
/// `additionalProperties` or `unevaluatedProperties`, and is not an in-place
/// branch (`not`, `if`, `then`, `else`, or an `allOf`/`anyOf`/`oneOf`/
/// `dependentSchemas` member), whose object the enclosing schema closes.
fn strict_closes(o: &Object, ptr: &str) -> bool {
    let mut tokens = ptr.rsplit('/');
    let last = tokens.next().unwrap_or("");
    let parent = tokens.next().unwrap_or("");
    let in_place = matches!(last, "not" | "if" | "then" | "else")
        || matches!(parent, "allOf" | "anyOf" | "oneOf" | "dependentSchemas");
    has_any(o, &["properties", "patternProperties"])
        && !has_any(o, &["additionalProperties", "unevaluatedProperties"])
        && !in_place
}

fn check(o: &Object, ptr: &str, out: &mut Vec<Finding>) {
    let types = types_of(o);
    let exact = has_any(o, &["const", "enum"]);
    let composed = has_any(
        o,
        &[
            "$ref",
            "$dynamicRef",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
            "if",
        ],
    );
    if types.len() == ALL_TYPES.len()
        && !composed
        && !has_any(o, &["properties", "items", "prefixItems"])
    {
        push(
            out,
            FindingCode::AcceptsAnything,
            ptr,
            "no `type`, `enum`, `const` or reference: any value is accepted",
        );
        return;
    }
    let declares = |t: &str| types.contains(&t) && types.len() < ALL_TYPES.len();
    if declares("object") || o.contains_key("properties") {
        let closed = |k: &str| matches!(o.get(k), Some(Value::Bool(false)));
        let open_additional = matches!(
            o.get("additionalProperties"),
            None | Some(Value::Bool(true))
        ) || matches!(o.get("additionalProperties"), Some(Value::Object(a)) if a.is_empty());
        if !closed("unevaluatedProperties") && open_additional && !strict_closes(o, ptr) {
            push(
                out,
                FindingCode::OpenObject,
                ptr,
                "unnamed members are accepted: add `additionalProperties: false`",
            );
        }
        if let Some(Value::Object(props)) = o.get("properties") {
            let required: Vec<&str> = match o.get("required") {
                Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for (name, sub) in props.iter() {
                let has_default = sub.as_object().is_some_and(|s| s.contains_key("default"));
                if !required.contains(&name) && !has_default {
                    let mut p = ptr.to_owned();
                    pointer::push_token(&mut p, "properties");
                    pointer::push_token(&mut p, name);
                    push(
                        out,
                        FindingCode::OptionalWithoutDefault,
                        &p,
                        format!("`{name}` is optional and has no `default`: list it in `required` or give a default"),
                    );
                }
            }
        }
    }
    if !exact && (declares("integer") || declares("number")) {
        let low = has_any(o, &["minimum", "exclusiveMinimum"]);
        let high = has_any(o, &["maximum", "exclusiveMaximum"]);
        if !(low && high) {
            push(
                out,
                FindingCode::UnboundedNumber,
                ptr,
                "a number without both bounds: add `minimum` and `maximum`",
            );
        }
    }
    if !exact && declares("string") && !has_any(o, &["maxLength", "pattern", "format"]) {
        push(
            out,
            FindingCode::UnboundedString,
            ptr,
            "a string without `maxLength`, `enum`, `pattern` or `format`",
        );
    }
    if !exact && declares("array") && !o.contains_key("maxItems") {
        let closed_tuple =
            o.contains_key("prefixItems") && matches!(o.get("items"), Some(Value::Bool(false)));
        if !closed_tuple {
            push(
                out,
                FindingCode::UnboundedArray,
                ptr,
                "an array without `maxItems`",
            );
        }
    }
    if let Some(Value::String(f)) = o.get("format") {
        if matches!(
            f.as_ref(),
            "uri" | "uri-reference" | "iri" | "iri-reference"
        ) {
            push(
                out,
                FindingCode::UriNeedsPolicy,
                ptr,
                format!("`format: {f}` strings need a URL policy at the gate (schemes, hosts, no private addresses)"),
            );
        }
        if !crate::format::KNOWN.contains(&f.as_ref()) {
            push(
                out,
                FindingCode::UnknownFormat,
                ptr,
                format!("format `{f}` has no checker: strict mode refuses the schema"),
            );
        }
    }
    if let Some(Value::Array(branches)) = o.get("anyOf") {
        for (i, a) in branches.iter().enumerate() {
            for (j, b) in branches.iter().enumerate().skip(i + 1) {
                if overlaps(a, b) {
                    let mut p = ptr.to_owned();
                    pointer::push_token(&mut p, "anyOf");
                    push(
                        out,
                        FindingCode::OverlappingAnyOf,
                        &p,
                        format!("branches {i} and {j} can accept the same value: use `oneOf` with disjoint branches or a discriminator"),
                    );
                }
            }
        }
    }
}

/// Whether two `anyOf` branches may accept a common value: they share a type
/// and are not told apart by `const`/`enum` values or by a required member
/// whose `const` differs (a discriminator).
fn overlaps<'a>(a: &Value<'a>, b: &Value<'a>) -> bool {
    let (a, b) = match (a, b) {
        (Value::Bool(false), _) | (_, Value::Bool(false)) => return false,
        (Value::Object(a), Value::Object(b)) => (a, b),
        _ => return true,
    };
    let ta = types_of(a);
    let tb = types_of(b);
    if !ta.iter().any(|t| tb.contains(t)) {
        return false;
    }
    let values = |o: &Object<'a>| -> Option<Vec<Value<'a>>> {
        if let Some(c) = o.get("const") {
            return Some(vec![c.clone()]);
        }
        o.get("enum")
            .and_then(Value::as_array)
            .map(<[Value<'a>]>::to_vec)
    };
    if let (Some(va), Some(vb)) = (values(a), values(b)) {
        return va.iter().any(|x| vb.contains(x));
    }
    !discriminated(a, b)
}

fn discriminated(a: &Object, b: &Object) -> bool {
    let (Some(Value::Object(pa)), Some(Value::Object(pb))) =
        (a.get("properties"), b.get("properties"))
    else {
        return false;
    };
    pa.iter().any(|(name, sa)| {
        let ca = sa.as_object().and_then(|s| s.get("const"));
        let cb = pb
            .get(name)
            .and_then(Value::as_object)
            .and_then(|s| s.get("const"));
        matches!((ca, cb), (Some(x), Some(y)) if x != y)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(schema: &str) -> Vec<(FindingCode, String)> {
        lint(&toolgate_json::from_str(schema).unwrap())
            .into_iter()
            .map(|f| (f.code(), f.pointer().to_owned()))
            .collect()
    }

    #[test]
    fn tight_schema_has_no_findings() {
        let s = r#"{
            "type": "object",
            "additionalProperties": false,
            "required": ["id", "amount", "tags", "kind"],
            "properties": {
                "id": {"type": "string", "pattern": "^[0-9]{6}$"},
                "amount": {"type": "integer", "minimum": 1, "maximum": 500},
                "tags": {"type": "array", "maxItems": 3, "items": {"enum": ["a", "b"]}},
                "kind": {"anyOf": [{"const": "x"}, {"const": "y"}]},
                "note": {"type": "string", "maxLength": 20, "default": ""}
            }
        }"#;
        assert_eq!(codes(s), []);
    }

    #[test]
    fn loose_schema_findings() {
        let s = r#"{
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri"},
                "n": {"type": "number", "minimum": 0},
                "s": {"type": "string"},
                "list": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}},
                "any": {},
                "either": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "format": "email"}]}
            },
            "required": ["url", "n", "s", "list", "any", "either"]
        }"#;
        assert_eq!(
            codes(s),
            [
                (FindingCode::UriNeedsPolicy, "/properties/url".to_owned()),
                (FindingCode::UnboundedNumber, "/properties/n".to_owned()),
                (FindingCode::UnboundedString, "/properties/s".to_owned()),
                (FindingCode::UnboundedArray, "/properties/list".to_owned()),
                (FindingCode::AcceptsAnything, "/properties/any".to_owned()),
                (
                    FindingCode::OverlappingAnyOf,
                    "/properties/either/anyOf".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn open_object_only_where_strict_mode_leaves_it_open() {
        let open = |s: &str| {
            codes(s)
                .into_iter()
                .filter(|(c, _)| *c == FindingCode::OpenObject)
                .map(|(_, p)| p)
                .collect::<Vec<_>>()
        };
        // Closed by strict mode: declares properties, silent on the rest.
        assert!(
            open(r#"{"type":"object","properties":{"a":{"const":1}},"required":["a"]}"#).is_empty()
        );
        assert!(open(r#"{"type":"object","patternProperties":{"^a$":{"const":1}}}"#).is_empty());
        // Opened on purpose, or nothing to close by.
        assert_eq!(
            open(r#"{"type":"object","properties":{"a":{"const":1}},"additionalProperties":true}"#),
            [""]
        );
        assert_eq!(
            open(r#"{"type":"object","properties":{"a":{"const":1}},"additionalProperties":{}}"#),
            [""]
        );
        assert_eq!(open(r#"{"type":"object"}"#), [""]);
        // A branch is not closed by itself.
        assert_eq!(
            open(r#"{"anyOf":[{"type":"object","properties":{"a":{"const":1}}}]}"#),
            ["/anyOf/0"]
        );
    }

    #[test]
    fn discriminated_any_of_does_not_overlap() {
        let s = r#"{"anyOf":[
            {"type":"object","additionalProperties":false,"required":["k"],"properties":{"k":{"const":"a"}}},
            {"type":"object","additionalProperties":false,"required":["k"],"properties":{"k":{"const":"b"}}}
        ]}"#;
        assert!(!codes(s)
            .iter()
            .any(|(c, _)| *c == FindingCode::OverlappingAnyOf));
    }
}
