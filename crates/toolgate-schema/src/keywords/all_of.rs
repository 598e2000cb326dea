//! `allOf`: every schema of a list.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `allOf` keyword.
#[derive(Debug)]
pub(crate) struct AllOf {
    nodes: Vec<NodeId>,
}

/// Compiles a non-empty array of schemas (shared by `allOf`, `anyOf`, `oneOf`).
pub(crate) fn schema_list(
    kw: &mut Kw<'_, '_>,
    v: &Value,
) -> Result<Vec<NodeId>, crate::CompileError> {
    let a = v
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| kw.invalid("a non-empty array of schemas"))?;
    let mut nodes = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        nodes.push(kw.sub(&[&i.to_string()])?);
    }
    Ok(nodes)
}

/// Compiles `allOf`.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    Ok(boxed(AllOf {
        nodes: schema_list(kw, v)?,
    }))
}

impl Keyword for AllOf {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let mut ok = true;
        for id in &self.nodes {
            ok &= cx.eval_in_place(*id, v, at, ann);
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
    fn all() {
        let s = r#"{"allOf":[{"minimum":1},{"maximum":3}]}"#;
        assert!(check_standard(s, "2"));
        assert!(!check_standard(s, "4"));
    }
}
