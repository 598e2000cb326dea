//! `propertyNames`: every member name, as a string, against a schema.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `propertyNames` keyword.
#[derive(Debug)]
pub(crate) struct PropertyNames {
    node: NodeId,
    location: Box<str>,
}

/// Compiles `propertyNames`: a schema.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, _v: &Value) -> super::Compiled {
    let node = kw.sub(&[])?;
    Ok(boxed(PropertyNames {
        node,
        location: kw.location(),
    }))
}

impl Keyword for PropertyNames {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (k, member) in o.iter() {
            let name = Value::String(k.into());
            let here = Path::Key(at, k);
            if !cx.quietly(|cx| cx.eval(self.node, &name, &here)) {
                ok = false;
                cx.fail(
                    ErrorCode::PropertyName,
                    &here,
                    &self.location,
                    member,
                    || "member name is not allowed by `propertyNames`".to_owned(),
                );
                if !cx.collect {
                    return false;
                }
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn names() {
        let s = r#"{"propertyNames":{"maxLength":3}}"#;
        assert!(check_standard(s, r#"{"abc":1}"#));
        assert!(!check_standard(s, r#"{"abcd":1}"#));
    }
}
