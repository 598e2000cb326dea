//! Which argument values the audit log records only as digests: the tool's
//! `redact` pointers, and every value whose schema says
//! `"x-toolgate-redact": true`.
//!
//! The schema is walked alongside the value: `properties`,
//! `additionalProperties`, `items`, `prefixItems`, the subschemas of
//! `allOf`, `anyOf`, `oneOf`, and local `$ref`s (`#/…`), to a bounded depth.
//! A value matched by any marked subschema is redacted whole.

use toolgate_json::{pointer::push_token, Value};

use toolgate::registry::Tool;

/// How deep the walk follows schemas and values (the parser's limits bound
/// the value; this bounds `$ref` chains).
const MAX_DEPTH: usize = 64;

/// The JSON Pointers of `value`'s secret fields for `tool`.
pub(crate) fn pointers(tool: &Tool, value: &Value<'_>) -> Vec<String> {
    let mut out: Vec<String> = tool.redact().to_vec();
    let root = tool.raw_schema();
    let mut at = String::new();
    walk(root, root, value, &mut at, &mut out, 0);
    out.sort();
    out.dedup();
    out
}

/// What a secret value becomes in [`redacted_arguments`].
pub const REDACTED: &str = "[redacted]";

/// `text`, a call's canonical arguments for `tool`, with every value the
/// audit log records only as a digest (the same pointers: the tool's
/// `redact` list and the schema's `x-toolgate-redact`) replaced by
/// [`REDACTED`], as canonical JSON; `None` when the text does not parse
/// with the tool's options (nothing is shown rather than too much).
pub fn redacted_arguments(tool: &Tool, text: &str) -> Option<String> {
    let mut value = tool
        .parse_options()
        .parse(text.as_bytes())
        .ok()?
        .into_owned();
    let secrets = pointers(tool, &value);
    for p in &secrets {
        if p.is_empty() {
            return Some(format!("\"{REDACTED}\""));
        }
        if let Some(v) = value.pointer_mut(p) {
            *v = Value::String(REDACTED.into());
        }
    }
    Some(toolgate_json::canonical::to_string(&value))
}

fn walk(
    root: &Value<'_>,
    schema: &Value<'_>,
    value: &Value<'_>,
    at: &mut String,
    out: &mut Vec<String>,
    depth: usize,
) {
    let Some(s) = schema.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if s.get("x-toolgate-redact").and_then(Value::as_bool) == Some(true) {
        out.push(at.clone());
        return;
    }
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
    {
        walk(root, target, value, at, out, depth + 1);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(subs) = s.get(key).and_then(Value::as_array) {
            for sub in subs {
                walk(root, sub, value, at, out, depth + 1);
            }
        }
    }
    match value {
        Value::Object(members) => {
            let props = s.get("properties").and_then(Value::as_object);
            let additional = s.get("additionalProperties");
            for (name, v) in members.iter() {
                let sub = props.and_then(|p| p.get(name)).or(additional);
                if let Some(sub) = sub {
                    let len = at.len();
                    push_token(at, name);
                    walk(root, sub, v, at, out, depth + 1);
                    at.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            let prefix = s.get("prefixItems").and_then(Value::as_array);
            let rest = s.get("items");
            for (i, v) in items.iter().enumerate() {
                let sub = prefix.and_then(|p| p.get(i)).or(rest);
                if let Some(sub) = sub {
                    let len = at.len();
                    push_token(at, &i.to_string());
                    walk(root, sub, v, at, out, depth + 1);
                    at.truncate(len);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_json::from_str;

    fn found(schema: &str, value: &str) -> Vec<String> {
        let schema = from_str(schema).unwrap();
        let value = from_str(value).unwrap();
        let mut out = Vec::new();
        walk(&schema, &schema, &value, &mut String::new(), &mut out, 0);
        out
    }

    #[test]
    fn marked_fields_are_found_where_the_value_has_them() {
        let schema = r##"{"type":"object","properties":{
            "card":{"type":"string","x-toolgate-redact":true},
            "list":{"type":"array","items":{"$ref":"#/$defs/tok"}},
            "a/b":{"x-toolgate-redact":true},
            "n":{"type":"integer"}},
            "$defs":{"tok":{"type":"object","properties":{"t":{"x-toolgate-redact":true}}}}}"##;
        assert_eq!(
            found(
                schema,
                r#"{"card":"4111","n":1,"a/b":0,"list":[{"t":"x"},{"u":1},{"t":"y"}]}"#
            ),
            ["/card", "/a~1b", "/list/0/t", "/list/2/t"]
        );
        assert!(found(schema, r#"{"n":1}"#).is_empty());
    }

    #[test]
    fn redacted_arguments_replace_every_value_the_audit_log_digests() {
        let config = toolgate::config::Config::parse(
            r#"
[[tool]]
name = "pay"
risk = "read"
redact = ["/note"]
schema_json = '{"type":"object","properties":{"card":{"type":"string","x-toolgate-redact":true},"note":{"type":"string"},"amount":{"type":"integer"}}}'
"#,
            "/tmp/toolgate.toml",
        )
        .unwrap();
        let tool = config.registry().get("pay").unwrap();
        assert_eq!(
            redacted_arguments(tool, r#"{"amount":5,"card":"4111","note":"hi"}"#).unwrap(),
            r#"{"amount":5,"card":"[redacted]","note":"[redacted]"}"#
        );
        assert_eq!(
            redacted_arguments(tool, r#"{"amount":5}"#).unwrap(),
            r#"{"amount":5}"#
        );
        assert_eq!(redacted_arguments(tool, "not json"), None);
    }

    #[test]
    fn a_ref_cycle_ends() {
        let schema = r##"{"$ref":"#"}"##;
        assert!(found(schema, "{}").is_empty());
    }
}
