//! `anyOf`: at least one schema of a list.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `anyOf` keyword.
#[derive(Debug)]
pub(crate) struct AnyOf {
    nodes: Vec<NodeId>,
    location: Box<str>,
}

/// Compiles `anyOf`.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    Ok(boxed(AnyOf {
        nodes: super::all_of::schema_list(kw, v)?,
        location: kw.location(),
    }))
}

impl Keyword for AnyOf {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let mut ok = false;
        for id in &self.nodes {
            // With annotations on, every branch is evaluated: each valid one counts.
            if cx.quietly(|cx| cx.eval_in_place(*id, v, at, ann)) {
                ok = true;
                if !ann.on {
                    break;
                }
            }
        }
        if !ok {
            cx.fail(ErrorCode::SchemaCombinator, at, &self.location, v, || {
                format!(
                    "expected to match at least one of {} schemas",
                    self.nodes.len()
                )
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn any() {
        let s = r#"{"anyOf":[{"type":"string"},{"minimum":2}]}"#;
        assert!(check_standard(s, "\"x\""));
        assert!(check_standard(s, "3"));
        assert!(!check_standard(s, "1"));
    }
}
