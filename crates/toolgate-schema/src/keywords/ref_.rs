//! `$ref`: apply the referenced schema in place. Resolved at compile time
//! against the registered documents; nothing is fetched.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::CompileErrorCode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `$ref` keyword.
#[derive(Debug)]
pub(crate) struct Ref {
    node: NodeId,
}

/// Compiles `$ref`: a URI reference.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let r = v.as_str().ok_or_else(|| kw.invalid("a URI reference"))?;
    let ((doc, ptr), _) = kw.c.resolve_ref(&kw.s.base, r).ok_or_else(|| {
        kw.error(
            CompileErrorCode::UnresolvableRef,
            format!("`{r}` does not resolve to a schema in the registered documents"),
        )
    })?;
    let node = kw.c.compile_loc(doc, ptr)?;
    Ok(boxed(Ref { node }))
}

impl Keyword for Ref {
    fn part(&self) -> Part<'_> {
        Part::Ref(self.node)
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        cx.eval_in_place(self.node, v, at, ann)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn local_refs() {
        let s = r##"{"$defs":{"n":{"type":"integer"}},"items":{"$ref":"#/$defs/n"}}"##;
        assert!(check_standard(s, "[1,2]"));
        assert!(!check_standard(s, r#"[1,"a"]"#));
        let rec = r##"{"properties":{"child":{"$ref":"#"}},"type":"object"}"##;
        assert!(check_standard(rec, r#"{"child":{"child":{}}}"#));
        assert!(!check_standard(rec, r#"{"child":{"child":1}}"#));
    }
}
