//! `additionalProperties`: members not named by `properties` nor matched by
//! `patternProperties` of the same schema. Also closes objects in strict mode.

use regress::Regex;
use toolgate_json::{Object, Value};

use crate::compiler::{boxed, Kw};
use crate::error::{CompileError, ErrorCode};
use crate::names::NameSet;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `additionalProperties` keyword.
#[derive(Debug)]
pub(crate) struct AdditionalProperties {
    names: NameSet,
    patterns: Vec<Regex>,
    node: NodeId,
    /// The subschema is `false`: report `unknown_property` without evaluating.
    deny: bool,
    location: Box<str>,
}

fn siblings(obj: &Object) -> NameSet {
    obj.get("properties")
        .and_then(Value::as_object)
        .map(|p| NameSet::new(p.keys()))
        .unwrap_or_default()
}

fn sibling_patterns(obj: &Object) -> Result<Vec<Regex>, String> {
    match obj.get("patternProperties").and_then(Value::as_object) {
        Some(p) => p.keys().map(super::compile_regex).collect(),
        None => Ok(Vec::new()),
    }
}

/// Compiles `additionalProperties`: a schema.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let node = kw.sub(&[])?;
    let patterns = sibling_patterns(kw.s.obj).map_err(|e| {
        kw.error(
            crate::CompileErrorCode::InvalidRegex,
            format!("a `patternProperties` key is not an ECMA-262 regular expression: {e}"),
        )
    })?;
    Ok(boxed(AdditionalProperties {
        names: siblings(kw.s.obj),
        patterns,
        node,
        deny: matches!(v, Value::Bool(false)),
        location: kw.location(),
    }))
}

/// The implicit `additionalProperties: false` of a closed object (strict mode).
pub(crate) fn closed(
    obj: &Object,
    false_node: NodeId,
    location: Box<str>,
) -> Result<Box<dyn Keyword>, CompileError> {
    let patterns = sibling_patterns(obj).map_err(|e| {
        CompileError::new(
            crate::CompileErrorCode::InvalidRegex,
            location.to_string(),
            format!("a `patternProperties` key is not an ECMA-262 regular expression: {e}"),
        )
    })?;
    Ok(Box::new(AdditionalProperties {
        names: siblings(obj),
        patterns,
        node: false_node,
        deny: true,
        location,
    }))
}

impl AdditionalProperties {
    /// The message of an unknown member: the names the schema declares.
    fn not_allowed(&self) -> String {
        let mut out = if self.names.len() == 0 {
            "member is not allowed: the schema declares no members".to_owned()
        } else {
            format!(
                "member is not allowed: the declared members are {}",
                crate::error::list_names(self.names.names(), self.names.len())
            )
        };
        if !self.patterns.is_empty() {
            out.push_str(" (or names matching `patternProperties`)");
        }
        out
    }
}

impl Keyword for AdditionalProperties {
    fn part(&self) -> Part<'_> {
        if !self.patterns.is_empty() {
            return Part::Opaque;
        }
        Part::Additional {
            deny: self.deny,
            node: self.node,
        }
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (i, (k, member)) in o.iter().enumerate() {
            if self.names.contains(k) || self.patterns.iter().any(|re| re.find(k).is_some()) {
                continue;
            }
            if self.deny {
                ok = false;
                cx.fail(
                    ErrorCode::UnknownProperty,
                    &Path::Key(at, k),
                    &self.location,
                    member,
                    || self.not_allowed(),
                );
            } else {
                ok &= cx.eval(self.node, member, &Path::Key(at, k));
                ann.mark_prop(i);
            }
            if !ok && !cx.collect {
                return false;
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn additional() {
        let s = r#"{"properties":{"a":true},"patternProperties":{"^x":true},"additionalProperties":{"type":"integer"}}"#;
        assert!(check_standard(s, r#"{"a":"s","xy":"s","b":1}"#));
        assert!(!check_standard(s, r#"{"b":"s"}"#));
    }
}
