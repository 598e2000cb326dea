//! `oneOf`: exactly one schema of a list.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `oneOf` keyword.
#[derive(Debug)]
pub(crate) struct OneOf {
    nodes: Vec<NodeId>,
    location: Box<str>,
}

/// Compiles `oneOf`.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    Ok(boxed(OneOf {
        nodes: super::all_of::schema_list(kw, v)?,
        location: kw.location(),
    }))
}

impl Keyword for OneOf {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let mut valid = 0usize;
        let mut kept = Ann::off();
        for id in &self.nodes {
            let mut branch = if ann.on {
                Ann::for_value(v)
            } else {
                Ann::off()
            };
            if cx.quietly(|cx| cx.eval_in_place(*id, v, at, &mut branch)) {
                valid += 1;
                if valid > 1 {
                    break;
                }
                kept = branch;
            }
        }
        let ok = valid == 1;
        if ok {
            if ann.on {
                ann.merge(&kept);
            }
        } else {
            cx.fail(ErrorCode::SchemaCombinator, at, &self.location, v, || {
                if valid == 0 {
                    format!(
                        "expected to match exactly one of {} schemas, matched none",
                        self.nodes.len()
                    )
                } else {
                    format!(
                        "expected to match exactly one of {} schemas, matched several",
                        self.nodes.len()
                    )
                }
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn exactly_one() {
        let s = r#"{"oneOf":[{"type":"integer"},{"minimum":2}]}"#;
        assert!(check_standard(s, "1"));
        assert!(check_standard(s, "2.5"));
        assert!(!check_standard(s, "3"));
        assert!(!check_standard(s, "1.5"));
    }
}
