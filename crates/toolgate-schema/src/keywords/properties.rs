//! `properties`: named members against their schemas.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::names::NameSet;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `properties` keyword: names sorted for binary search.
#[derive(Debug)]
pub(crate) struct Properties {
    names: NameSet,
    nodes: Vec<NodeId>,
}

/// Compiles `properties`: an object of schemas.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of schemas"))?;
    let mut nodes = Vec::with_capacity(o.len());
    for (k, _) in o.iter() {
        nodes.push(kw.sub(&[k])?);
    }
    // INVARIANT: member names of a parsed object are unique, so position i
    // of the set is member i of `properties`.
    Ok(boxed(Properties {
        names: NameSet::new(o.keys()),
        nodes,
    }))
}

impl Keyword for Properties {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (i, (k, member)) in o.iter().enumerate() {
            let Some(j) = self.names.find(k) else {
                continue;
            };
            if let Some(id) = self.nodes.get(j) {
                ok &= cx.eval(*id, member, &Path::Key(at, k));
                ann.mark_prop(i);
                if !ok && !cx.collect {
                    return false;
                }
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{check, check_standard};

    #[test]
    fn strict_closes_declared_objects() {
        let s = r#"{"type":"object","properties":{"a":{"type":"integer"}}}"#;
        assert!(check(s, r#"{"a":1}"#));
        assert!(!check(s, r#"{"a":1,"b":2}"#));
        assert!(check_standard(s, r#"{"a":1,"b":2}"#));
        let open = r#"{"properties":{"a":true},"additionalProperties":true}"#;
        assert!(check(open, r#"{"a":1,"b":2}"#));
    }

    #[test]
    fn strict_closure_sees_through_all_of() {
        let s = r#"{"properties":{"a":true},"allOf":[{"properties":{"b":true}}]}"#;
        assert!(check(s, r#"{"a":1,"b":2}"#));
        assert!(!check(s, r#"{"a":1,"c":2}"#));
    }
}
