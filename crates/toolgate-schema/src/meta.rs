//! The draft 2020-12 meta-schemas, bundled so that a schema may `$ref` them
//! (for example to check that a tool's schema is itself a schema). They are
//! added to a compilation only when a document refers to them.

use std::sync::OnceLock;

use toolgate_json::Value;

const PREFIX: &str = "https://json-schema.org/draft/2020-12/";

/// Written for toolgate after the draft 2020-12 meta-schemas (same identifiers,
/// same constraints); only the layout is ours.
const TEXTS: &[(&str, &str)] = &[
    (
        "https://json-schema.org/draft/2020-12/schema",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/schema",
  "$vocabulary": {
    "https://json-schema.org/draft/2020-12/vocab/core": true,
    "https://json-schema.org/draft/2020-12/vocab/applicator": true,
    "https://json-schema.org/draft/2020-12/vocab/unevaluated": true,
    "https://json-schema.org/draft/2020-12/vocab/validation": true,
    "https://json-schema.org/draft/2020-12/vocab/meta-data": true,
    "https://json-schema.org/draft/2020-12/vocab/format-annotation": true,
    "https://json-schema.org/draft/2020-12/vocab/content": true
  },
  "$dynamicAnchor": "meta",
  "title": "core and validation specifications meta-schema",
  "allOf": [
    {"$ref": "meta/core"},
    {"$ref": "meta/applicator"},
    {"$ref": "meta/unevaluated"},
    {"$ref": "meta/validation"},
    {"$ref": "meta/meta-data"},
    {"$ref": "meta/format-annotation"},
    {"$ref": "meta/content"}
  ],
  "type": ["object", "boolean"],
  "properties": {
    "definitions": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}},
    "dependencies": {
      "type": "object",
      "additionalProperties": {
        "anyOf": [{"$dynamicRef": "#meta"}, {"$ref": "meta/validation#/$defs/stringArray"}]
      }
    },
    "$recursiveAnchor": {"$ref": "meta/core#/$defs/anchorString"},
    "$recursiveRef": {"$ref": "meta/core#/$defs/uriReferenceString"}
  }
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/core",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/core",
  "$dynamicAnchor": "meta",
  "title": "core vocabulary meta-schema",
  "type": ["object", "boolean"],
  "properties": {
    "$id": {"$ref": "#/$defs/uriReferenceString", "pattern": "^[^#]*#?$"},
    "$schema": {"$ref": "#/$defs/uriString"},
    "$ref": {"$ref": "#/$defs/uriReferenceString"},
    "$anchor": {"$ref": "#/$defs/anchorString"},
    "$dynamicRef": {"$ref": "#/$defs/uriReferenceString"},
    "$dynamicAnchor": {"$ref": "#/$defs/anchorString"},
    "$vocabulary": {
      "type": "object",
      "propertyNames": {"$ref": "#/$defs/uriString"},
      "additionalProperties": {"type": "boolean"}
    },
    "$comment": {"type": "string"},
    "$defs": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}}
  },
  "$defs": {
    "anchorString": {"type": "string", "pattern": "^[A-Za-z_][-A-Za-z0-9._]*$"},
    "uriString": {"type": "string", "format": "uri"},
    "uriReferenceString": {"type": "string", "format": "uri-reference"}
  }
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/applicator",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/applicator",
  "$dynamicAnchor": "meta",
  "title": "applicator vocabulary meta-schema",
  "type": ["object", "boolean"],
  "properties": {
    "prefixItems": {"$ref": "#/$defs/schemaArray"},
    "items": {"$dynamicRef": "#meta"},
    "contains": {"$dynamicRef": "#meta"},
    "additionalProperties": {"$dynamicRef": "#meta"},
    "properties": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}},
    "patternProperties": {
      "type": "object",
      "additionalProperties": {"$dynamicRef": "#meta"},
      "propertyNames": {"format": "regex"}
    },
    "dependentSchemas": {"type": "object", "additionalProperties": {"$dynamicRef": "#meta"}},
    "propertyNames": {"$dynamicRef": "#meta"},
    "if": {"$dynamicRef": "#meta"},
    "then": {"$dynamicRef": "#meta"},
    "else": {"$dynamicRef": "#meta"},
    "allOf": {"$ref": "#/$defs/schemaArray"},
    "anyOf": {"$ref": "#/$defs/schemaArray"},
    "oneOf": {"$ref": "#/$defs/schemaArray"},
    "not": {"$dynamicRef": "#meta"}
  },
  "$defs": {
    "schemaArray": {"type": "array", "minItems": 1, "items": {"$dynamicRef": "#meta"}}
  }
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/unevaluated",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/unevaluated",
  "$dynamicAnchor": "meta",
  "title": "unevaluated applicator vocabulary meta-schema",
  "type": ["object", "boolean"],
  "properties": {
    "unevaluatedItems": {"$dynamicRef": "#meta"},
    "unevaluatedProperties": {"$dynamicRef": "#meta"}
  }
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/validation",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/validation",
  "$dynamicAnchor": "meta",
  "title": "validation vocabulary meta-schema",
  "type": ["object", "boolean"],
  "properties": {
    "type": {
      "anyOf": [
        {"$ref": "#/$defs/simpleTypes"},
        {"type": "array", "items": {"$ref": "#/$defs/simpleTypes"}, "minItems": 1, "uniqueItems": true}
      ]
    },
    "const": true,
    "enum": {"type": "array", "items": true},
    "multipleOf": {"type": "number", "exclusiveMinimum": 0},
    "maximum": {"type": "number"},
    "exclusiveMaximum": {"type": "number"},
    "minimum": {"type": "number"},
    "exclusiveMinimum": {"type": "number"},
    "maxLength": {"$ref": "#/$defs/nonNegativeInteger"},
    "minLength": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
    "pattern": {"type": "string", "format": "regex"},
    "maxItems": {"$ref": "#/$defs/nonNegativeInteger"},
    "minItems": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
    "uniqueItems": {"type": "boolean", "default": false},
    "maxContains": {"$ref": "#/$defs/nonNegativeInteger"},
    "minContains": {"$ref": "#/$defs/nonNegativeInteger", "default": 1},
    "maxProperties": {"$ref": "#/$defs/nonNegativeInteger"},
    "minProperties": {"$ref": "#/$defs/nonNegativeIntegerDefault0"},
    "required": {"$ref": "#/$defs/stringArray"},
    "dependentRequired": {"type": "object", "additionalProperties": {"$ref": "#/$defs/stringArray"}}
  },
  "$defs": {
    "nonNegativeInteger": {"type": "integer", "minimum": 0},
    "nonNegativeIntegerDefault0": {"$ref": "#/$defs/nonNegativeInteger", "default": 0},
    "simpleTypes": {"enum": ["array", "boolean", "integer", "null", "number", "object", "string"]},
    "stringArray": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "default": []}
  }
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/meta-data",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/meta-data",
  "$dynamicAnchor": "meta",
  "title": "meta-data vocabulary meta-schema",
  "type": ["object", "boolean"],
  "properties": {
    "title": {"type": "string"},
    "description": {"type": "string"},
    "default": true,
    "deprecated": {"type": "boolean", "default": false},
    "readOnly": {"type": "boolean", "default": false},
    "writeOnly": {"type": "boolean", "default": false},
    "examples": {"type": "array", "items": true}
  }
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-annotation",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/format-annotation",
  "$dynamicAnchor": "meta",
  "title": "format vocabulary meta-schema for annotation results",
  "type": ["object", "boolean"],
  "properties": {"format": {"type": "string"}}
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-assertion",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/format-assertion",
  "$dynamicAnchor": "meta",
  "title": "format vocabulary meta-schema for assertion results",
  "type": ["object", "boolean"],
  "properties": {"format": {"type": "string"}}
}"##,
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/content",
        r##"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://json-schema.org/draft/2020-12/meta/content",
  "$dynamicAnchor": "meta",
  "title": "content vocabulary meta-schema",
  "type": ["object", "boolean"],
  "properties": {
    "contentEncoding": {"type": "string"},
    "contentMediaType": {"type": "string"},
    "contentSchema": {"$dynamicRef": "#meta"}
  }
}"##,
    ),
];

/// The bundled meta-schemas, parsed once.
pub(crate) fn documents() -> &'static [(&'static str, Value<'static>)] {
    static DOCS: OnceLock<Vec<(&'static str, Value<'static>)>> = OnceLock::new();
    DOCS.get_or_init(|| {
        TEXTS
            .iter()
            .filter_map(|(u, t)| toolgate_json::from_str(t).ok().map(|v| (*u, v)))
            .collect()
    })
}

/// Whether a document refers (`$ref`, `$dynamicRef` or `$schema` of a
/// registered dialect) to a bundled meta-schema.
pub(crate) fn mentions_meta(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.iter().any(|(k, v)| {
            (matches!(k, "$ref" | "$dynamicRef")
                && v.as_str().is_some_and(|s| s.starts_with(PREFIX)))
                || mentions_meta(v)
        }),
        Value::Array(a) => a.iter().any(mentions_meta),
        _ => false,
    }
}

/// Whether a document URI is a bundled meta-schema.
pub(crate) fn is_meta(uri: &str) -> bool {
    uri.starts_with(PREFIX)
}

#[cfg(test)]
mod tests {
    #[test]
    fn all_parse() {
        assert_eq!(super::documents().len(), super::TEXTS.len());
    }
}
