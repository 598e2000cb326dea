//! JSON Pointers in the config (`resource.id`, `url_policy.arg`, `redact`):
//! RFC 6901 syntax, and a check that they name a property the tool's schema
//! declares.

use toolgate_json::{pointer::unescape_token, Value};

/// Why a pointer was refused.
pub(crate) enum PointerError {
    /// Not RFC 6901, or the empty pointer (which names the whole arguments).
    Malformed(&'static str),
    /// Well-formed, but the schema declares no such property.
    Undeclared,
}

/// Checks the syntax of a pointer that must name a member of the arguments,
/// returning its unescaped tokens.
pub(crate) fn parse(pointer: &str) -> Result<Vec<String>, PointerError> {
    if pointer.is_empty() {
        return Err(PointerError::Malformed(
            "the empty pointer names the whole arguments, not a property",
        ));
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(PointerError::Malformed("a JSON Pointer starts with `/`"));
    };
    let mut tokens = Vec::new();
    for raw in rest.split('/') {
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                return Err(PointerError::Malformed(
                    "`~` must be followed by `0` or `1` in a JSON Pointer",
                ));
            }
        }
        tokens.push(unescape_token(raw).into_owned());
    }
    Ok(tokens)
}

/// How many local `$ref`s a walk follows before giving up (a loop).
const MAX_REF_HOPS: usize = 32;

/// Checks that `pointer` names a property reachable from the schema's root
/// through `properties` (following local `$ref`s such as `#/$defs/Card`, and
/// the branches of `allOf`, `anyOf` and `oneOf`).
pub(crate) fn check_declared(schema: &Value, pointer: &str) -> Result<(), PointerError> {
    check(schema, pointer, false)
}

/// Like [`check_declared`], where a `*` token also names every item of an
/// array (`items`, `prefixItems`) or every value of a map
/// (`additionalProperties`, `patternProperties`) the schema declares: the
/// `arg` of a `url_policy`.
pub(crate) fn check_declared_pattern(schema: &Value, pointer: &str) -> Result<(), PointerError> {
    check(schema, pointer, true)
}

fn check(schema: &Value, pointer: &str, wildcards: bool) -> Result<(), PointerError> {
    let tokens = parse(pointer)?;
    let mut current = vec![schema];
    for token in &tokens {
        let mut next = Vec::new();
        for node in current {
            if wildcards && token == "*" {
                any_item_or_member(schema, node, 0, &mut next);
            } else {
                declared(schema, node, token, 0, &mut next);
            }
        }
        if next.is_empty() {
            return Err(PointerError::Undeclared);
        }
        current = next;
    }
    Ok(())
}

/// Pushes the subschemas `node` (or one of its combinator branches)
/// declares for any array item or map value.
fn any_item_or_member<'v, 'a>(
    root: &'v Value<'a>,
    node: &'v Value<'a>,
    depth: usize,
    out: &mut Vec<&'v Value<'a>>,
) {
    if depth > MAX_REF_HOPS || out.len() > MAX_REF_HOPS {
        return;
    }
    let Some(object) = resolve_refs(root, node).and_then(Value::as_object) else {
        return;
    };
    for keyword in ["items", "additionalProperties"] {
        if let Some(sub) = object.get(keyword).filter(|s| s.as_object().is_some()) {
            out.push(sub);
        }
    }
    out.extend(
        object
            .get("prefixItems")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    for (_, sub) in object
        .get("patternProperties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|o| o.iter())
    {
        out.push(sub);
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for branch in object
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            any_item_or_member(root, branch, depth + 1, out);
        }
    }
}

/// Pushes the subschemas `node` (or one of its combinator branches)
/// declares for the property `token`.
fn declared<'v, 'a>(
    root: &'v Value<'a>,
    node: &'v Value<'a>,
    token: &str,
    depth: usize,
    out: &mut Vec<&'v Value<'a>>,
) {
    if depth > MAX_REF_HOPS || out.len() > MAX_REF_HOPS {
        return;
    }
    let Some(object) = resolve_refs(root, node).and_then(Value::as_object) else {
        return;
    };
    if let Some(p) = object
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.get(token))
    {
        out.push(p);
    }
    for keyword in ["allOf", "anyOf", "oneOf"] {
        for branch in object
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            declared(root, branch, token, depth + 1, out);
        }
    }
}

fn resolve_refs<'v, 'a>(root: &'v Value<'a>, mut node: &'v Value<'a>) -> Option<&'v Value<'a>> {
    for _ in 0..MAX_REF_HOPS {
        let target = match node.as_object().and_then(|o| o.get("$ref")) {
            None => return Some(node),
            Some(r) => r.as_str()?.strip_prefix('#')?,
        };
        node = root.pointer(target)?;
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn syntax() {
        assert!(parse("/a/b~0~1").is_ok_and(|t| t == ["a", "b~/"]));
        assert!(parse("").is_err());
        assert!(parse("a").is_err());
        assert!(parse("/a~2").is_err());
        assert!(parse("/a~").is_err());
    }

    #[test]
    fn declared() {
        let s = toolgate_json::from_str(
            r##"{"type":"object","properties":{"card":{"$ref":"#/$defs/Card"},"n":{"type":"integer"}},
                "$defs":{"Card":{"type":"object","properties":{"number":{"type":"string"}}},
                         "Loop":{"$ref":"#/$defs/Loop"}}}"##,
        );
        let s = s.unwrap();
        assert!(check_declared(&s, "/n").is_ok());
        assert!(check_declared(&s, "/card/number").is_ok());
        assert!(check_declared(&s, "/card/cvv").is_err());
        assert!(check_declared(&s, "/n/x").is_err());
        assert!(check_declared(&s, "/m").is_err());
        let s = toolgate_json::from_str(
            r#"{"type":"object","anyOf":[{"properties":{"a":{"type":"string"}}},
                {"allOf":[{"properties":{"b":{"type":"object","properties":{"c":{}}}}}]}]}"#,
        )
        .unwrap();
        assert!(check_declared(&s, "/a").is_ok());
        assert!(check_declared(&s, "/b/c").is_ok());
        assert!(check_declared(&s, "/c").is_err());
        let s = toolgate_json::from_str(
            r#"{"type":"object","properties":{"urls":{"type":"array","items":{"type":"string"}},
                "hooks":{"type":"object","additionalProperties":{"type":"object","properties":{"u":{}}}}}}"#,
        )
        .unwrap();
        assert!(check_declared_pattern(&s, "/urls/*").is_ok());
        assert!(check_declared_pattern(&s, "/hooks/*/u").is_ok());
        assert!(check_declared_pattern(&s, "/hooks/*/v").is_err());
        assert!(check_declared_pattern(&s, "/*").is_err());
        assert!(check_declared(&s, "/urls/*").is_err());
    }
}
