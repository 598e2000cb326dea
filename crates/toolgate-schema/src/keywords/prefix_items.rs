//! `prefixItems`: the first items, each against its own schema.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `prefixItems` keyword.
#[derive(Debug)]
pub(crate) struct PrefixItems {
    nodes: Vec<NodeId>,
}

/// Compiles `prefixItems`: a non-empty array of schemas.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let a = v
        .as_array()
        .ok_or_else(|| kw.invalid("an array of schemas"))?;
    let mut nodes = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        nodes.push(kw.sub(&[&i.to_string()])?);
    }
    Ok(boxed(PrefixItems { nodes }))
}

impl Keyword for PrefixItems {
    fn part(&self) -> Part<'_> {
        Part::PrefixItems(&self.nodes)
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Array(a) = v else { return true };
        let mut ok = true;
        for (i, (item, id)) in a.iter().zip(&self.nodes).enumerate() {
            ok &= cx.eval(*id, item, &Path::Index(at, i));
            ann.mark_item(i);
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
    fn tuple() {
        let s = r#"{"prefixItems":[{"type":"integer"},{"type":"string"}]}"#;
        assert!(check_standard(s, r#"[1,"a",null]"#));
        assert!(check_standard(s, "[1]"));
        assert!(!check_standard(s, r#"["a"]"#));
    }
}
