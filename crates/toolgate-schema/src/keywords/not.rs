//! `not`: the value must not match a schema.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `not` keyword.
#[derive(Debug)]
pub(crate) struct Not {
    node: NodeId,
    location: Box<str>,
}

/// Compiles `not`: a schema.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, _v: &Value) -> super::Compiled {
    Ok(boxed(Not {
        node: kw.sub(&[])?,
        location: kw.location(),
    }))
}

impl Keyword for Not {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let ok = !cx.quietly(|cx| cx.eval(self.node, v, at));
        if !ok {
            cx.fail(ErrorCode::SchemaCombinator, at, &self.location, v, || {
                "expected not to match the `not` schema".to_owned()
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn negation() {
        assert!(check_standard(r#"{"not":{"type":"string"}}"#, "1"));
        assert!(!check_standard(r#"{"not":{"type":"string"}}"#, "\"a\""));
    }
}
