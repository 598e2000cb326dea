//! What the providers' strict modes leave out of a tool's schema: the
//! keywords OpenAI's strict function calling and Anthropic's strict tool use
//! do not support (or drop), each reported as enforced by toolgate only.
//!
//! The subsets are the published ones (`PROVIDERS.md` §1.4 and §3.1):
//! - OpenAI: types, `enum`, `const`, `anyOf`, `$ref`/`$defs`, `pattern`,
//!   `format` in {date-time, time, date, duration, email, hostname, ipv4,
//!   ipv6, uuid}, the numeric bounds and `multipleOf`, `minItems`/`maxItems`;
//!   every property in `required`, `additionalProperties: false` on every
//!   object, and a root that is not `anyOf`.
//! - Anthropic: types, `enum`, `const`, `anyOf`, `allOf`, `$ref`/`$defs`,
//!   `pattern`, `format` in {date-time, time, date, duration, email,
//!   hostname, uri, ipv4, ipv6, uuid}, `minItems` of 0 or 1;
//!   `additionalProperties: false` on every object; no numeric or length
//!   bounds.
//!
//! Annotations (`description`, `title`, `default`, `examples`, `$schema`,
//! `$id`, `$comment`, …) constrain nothing and are not reported.

use toolgate_json::Value;

/// A provider's strict mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    pub const ALL: [Self; 2] = [Self::OpenAi, Self::Anthropic];

    /// The finding code.
    pub fn code(self) -> &'static str {
        match self {
            Self::OpenAi => "openai_strict_drops",
            Self::Anthropic => "anthropic_strict_drops",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "OpenAI strict function calling",
            Self::Anthropic => "Anthropic strict tool use",
        }
    }

    fn supports(self, keyword: &str) -> bool {
        const COMMON: &[&str] = &[
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "anyOf",
            "$ref",
            "$defs",
            "definitions",
            "pattern",
            "format",
        ];
        COMMON.contains(&keyword)
            || match self {
                Self::OpenAi => matches!(
                    keyword,
                    "minimum"
                        | "maximum"
                        | "exclusiveMinimum"
                        | "exclusiveMaximum"
                        | "multipleOf"
                        | "minItems"
                        | "maxItems"
                ),
                Self::Anthropic => matches!(keyword, "allOf" | "minItems"),
            }
    }

    fn supports_format(self, format: &str) -> bool {
        matches!(
            format,
            "date-time"
                | "time"
                | "date"
                | "duration"
                | "email"
                | "hostname"
                | "ipv4"
                | "ipv6"
                | "uuid"
        ) || (self == Self::Anthropic && format == "uri")
    }
}

/// One keyword (or rule) a provider's strict mode does not enforce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drop {
    pub provider: Provider,
    /// The keyword's pointer in the schema.
    pub pointer: String,
    pub message: String,
}

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords holding one subschema.
const ONE: &[&str] = &[
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords holding a map of subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords holding a list of subschemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// What both providers' strict modes leave to toolgate in `schema`, in
/// schema order, OpenAI's first.
pub fn drops(schema: &Value<'_>) -> Vec<Drop> {
    let mut out = Vec::new();
    for provider in Provider::ALL {
        if provider == Provider::OpenAi {
            if let Some(o) = schema.as_object() {
                if o.contains_key("anyOf") {
                    out.push(Drop {
                        provider,
                        pointer: "/anyOf".to_owned(),
                        message: format!("{}: the root must not be `anyOf`", provider.name()),
                    });
                }
            }
        }
        walk(schema, "", provider, &mut out);
    }
    out
}

fn walk(schema: &Value<'_>, at: &str, provider: Provider, out: &mut Vec<Drop>) {
    let Some(o) = schema.as_object() else {
        return;
    };
    let mut drop = |pointer: String, what: String| {
        out.push(Drop {
            provider,
            pointer,
            message: format!("{}: {what}", provider.name()),
        });
    };
    for (keyword, value) in o.iter() {
        let pointer = format!("{at}/{}", escape(keyword));
        if ANNOTATIONS.contains(&keyword) {
            continue;
        }
        if !provider.supports(keyword) {
            drop(pointer, format!("`{keyword}` is not in its schema subset"));
            continue;
        }
        match (keyword, value) {
            ("format", Value::String(f)) if !provider.supports_format(f) => drop(
                pointer,
                format!(
                    "`format: \"{}\"` is not in its schema subset",
                    f.escape_debug()
                ),
            ),
            ("minItems", Value::Number(n))
                if provider == Provider::Anthropic && n.as_u64().is_none_or(|n| n > 1) =>
            {
                drop(
                    pointer,
                    "`minItems` above 1 is not in its schema subset".to_owned(),
                );
            }
            ("additionalProperties", v) if v.as_bool() != Some(false) => drop(
                pointer,
                "`additionalProperties` other than `false` is not in its schema subset".to_owned(),
            ),
            _ => {}
        }
    }
    let is_object = o.contains_key("properties")
        || match o.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some("object")),
            _ => false,
        };
    if is_object && !o.contains_key("additionalProperties") {
        drop(
            format!("{at}/additionalProperties"),
            "every object must say `additionalProperties: false` (toolgate's strict mode closes it)"
                .to_owned(),
        );
    }
    if provider == Provider::OpenAi {
        if let Some(props) = o.get("properties").and_then(Value::as_object) {
            let required: Vec<&str> = o
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for name in props.keys().filter(|n| !required.contains(n)) {
                drop(
                    format!("{at}/properties/{}", escape(name)),
                    format!(
                        "optional property `{}`: every property must be `required` (an optional one is a union with `null`)",
                        name.escape_debug()
                    ),
                );
            }
        }
    }
    for (keyword, value) in o.iter() {
        let pointer = format!("{at}/{}", escape(keyword));
        if ONE.contains(&keyword) {
            walk(value, &pointer, provider, out);
        } else if MAP.contains(&keyword) {
            if let Some(map) = value.as_object() {
                for (name, sub) in map.iter() {
                    walk(sub, &format!("{pointer}/{}", escape(name)), provider, out);
                }
            }
        } else if LIST.contains(&keyword) {
            for (i, sub) in value.as_array().unwrap_or_default().iter().enumerate() {
                walk(sub, &format!("{pointer}/{i}"), provider, out);
            }
        }
    }
}

/// A JSON Pointer token.
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn pointers(schema: &str, provider: Provider) -> Vec<String> {
        let schema = toolgate_json::from_str(schema).unwrap();
        drops(&schema)
            .into_iter()
            .filter(|d| d.provider == provider)
            .map(|d| d.pointer)
            .collect()
    }

    #[test]
    fn each_provider_drops_what_its_subset_leaves_out() {
        let schema = r#"{"type":"object","properties":{
            "q":{"type":"string","maxLength":5,"format":"uri"},
            "n":{"type":"integer","minimum":1},
            "xs":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":3}},
            "required":["q","xs"],"additionalProperties":false,
            "allOf":[{"not":{"required":["n"]}}]}"#;
        assert_eq!(
            pointers(schema, Provider::OpenAi),
            [
                "/allOf",
                "/properties/n",
                "/properties/q/maxLength",
                "/properties/q/format",
                "/allOf/0/not",
            ]
        );
        assert_eq!(
            pointers(schema, Provider::Anthropic),
            [
                "/properties/q/maxLength",
                "/properties/n/minimum",
                "/properties/xs/minItems",
                "/properties/xs/maxItems",
                "/allOf/0/not",
            ]
        );
    }

    #[test]
    fn objects_must_be_closed_explicitly() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"boolean"}},"required":["a"]}"#;
        assert_eq!(
            pointers(schema, Provider::Anthropic),
            ["/additionalProperties"]
        );
        let schema = r#"{"anyOf":[{"type":"object","additionalProperties":false}]}"#;
        assert_eq!(pointers(schema, Provider::OpenAi), ["/anyOf"]);
    }
}
