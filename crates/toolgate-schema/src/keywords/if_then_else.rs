//! `if`, `then`, `else`: a conditional. `then`/`else` without `if` do nothing.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled conditional, held by `if`.
#[derive(Debug)]
pub(crate) struct IfThenElse {
    cond: NodeId,
    then: Option<NodeId>,
    otherwise: Option<NodeId>,
}

/// Compiles `if`, with the `then` and `else` beside it.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, _v: &Value) -> super::Compiled {
    let cond = kw.sub(&[])?;
    let (doc, then_ptr, else_ptr) = (kw.s.doc, kw.s.ptr_of("then", &[]), kw.s.ptr_of("else", &[]));
    let then = match kw.s.obj.get("then") {
        Some(_) => Some(kw.c.compile_loc(doc, then_ptr)?),
        None => None,
    };
    let otherwise = match kw.s.obj.get("else") {
        Some(_) => Some(kw.c.compile_loc(doc, else_ptr)?),
        None => None,
    };
    Ok(boxed(IfThenElse {
        cond,
        then,
        otherwise,
    }))
}

/// `then` and `else` are compiled by `if`.
pub(crate) fn compile_branch(kw: &mut Kw<'_, '_>, _v: &Value) -> super::Compiled {
    if kw.s.obj.contains_key("if") {
        return Ok(None);
    }
    // Without `if` the branch never applies; still compile it so mistakes surface.
    kw.sub(&[])?;
    Ok(None)
}

impl Keyword for IfThenElse {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let mut cond_ann = if ann.on {
            Ann::for_value(v)
        } else {
            Ann::off()
        };
        let holds = cx.quietly(|cx| cx.eval_in_place(self.cond, v, at, &mut cond_ann));
        if holds {
            if ann.on {
                ann.merge(&cond_ann);
            }
            self.then.is_none_or(|id| cx.eval_in_place(id, v, at, ann))
        } else {
            self.otherwise
                .is_none_or(|id| cx.eval_in_place(id, v, at, ann))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn conditional() {
        let s = r#"{"if":{"type":"integer"},"then":{"minimum":1},"else":{"type":"string"}}"#;
        assert!(check_standard(s, "2"));
        assert!(!check_standard(s, "0"));
        assert!(check_standard(s, "\"a\""));
        assert!(!check_standard(s, "null"));
    }
}
