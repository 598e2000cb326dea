//! `unevaluatedProperties`: members no other keyword of this schema (or its
//! in-place subschemas that passed) evaluated.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `unevaluatedProperties` keyword.
#[derive(Debug)]
pub(crate) struct UnevaluatedProperties {
    node: NodeId,
    deny: bool,
    location: Box<str>,
}

/// Compiles `unevaluatedProperties`: a schema.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    Ok(boxed(UnevaluatedProperties {
        node: kw.sub(&[])?,
        deny: matches!(v, Value::Bool(false)),
        location: kw.location(),
    }))
}

/// The implicit `unevaluatedProperties: false` of a closed object (strict mode).
pub(crate) fn closed(false_node: NodeId, location: Box<str>) -> Box<dyn Keyword> {
    Box::new(UnevaluatedProperties {
        node: false_node,
        deny: true,
        location,
    })
}

impl Keyword for UnevaluatedProperties {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (i, (k, member)) in o.iter().enumerate() {
            if ann.prop(i) {
                continue;
            }
            if self.deny {
                ok = false;
                cx.fail(
                    ErrorCode::UnknownProperty,
                    &Path::Key(at, k),
                    &self.location,
                    member,
                    || "member is not allowed".to_owned(),
                );
            } else if cx.eval(self.node, member, &Path::Key(at, k)) {
                ann.mark_prop(i);
            } else {
                ok = false;
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
    fn sees_through_all_of() {
        let s = r#"{"allOf":[{"properties":{"a":true}}],"unevaluatedProperties":false}"#;
        assert!(check_standard(s, r#"{"a":1}"#));
        assert!(!check_standard(s, r#"{"a":1,"b":1}"#));
    }
}
