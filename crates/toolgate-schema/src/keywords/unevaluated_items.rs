//! `unevaluatedItems`: items no other keyword of this schema (or its in-place
//! subschemas that passed) evaluated.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `unevaluatedItems` keyword.
#[derive(Debug)]
pub(crate) struct UnevaluatedItems {
    node: NodeId,
    deny: bool,
    location: Box<str>,
}

/// Compiles `unevaluatedItems`: a schema.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    Ok(boxed(UnevaluatedItems {
        node: kw.sub(&[])?,
        deny: matches!(v, Value::Bool(false)),
        location: kw.location(),
    }))
}

impl Keyword for UnevaluatedItems {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Array(a) = v else { return true };
        let mut ok = true;
        for (i, item) in a.iter().enumerate() {
            if ann.item(i) {
                continue;
            }
            if self.deny {
                ok = false;
                cx.fail(
                    ErrorCode::UnknownItem,
                    &Path::Index(at, i),
                    &self.location,
                    item,
                    || "item is not allowed".to_owned(),
                );
            } else if cx.eval(self.node, item, &Path::Index(at, i)) {
                ann.mark_item(i);
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
    fn sees_prefix_items() {
        let s = r#"{"prefixItems":[true],"unevaluatedItems":false}"#;
        assert!(check_standard(s, "[1]"));
        assert!(!check_standard(s, "[1,2]"));
    }
}
