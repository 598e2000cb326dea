//! `properties`: named members against their schemas.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `properties` keyword: names sorted for binary search.
#[derive(Debug)]
pub(crate) struct Properties {
    props: Vec<(Box<str>, NodeId)>,
}

/// Compiles `properties`: an object of schemas.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of schemas"))?;
    let mut props = Vec::with_capacity(o.len());
    for (k, _) in o.iter() {
        let id = kw.sub(&[k])?;
        props.push((Box::<str>::from(k), id));
    }
    props.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(boxed(Properties { props }))
}

impl Keyword for Properties {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (i, (k, member)) in o.iter().enumerate() {
            let Ok(j) = self.props.binary_search_by(|p| p.0.as_ref().cmp(k)) else {
                continue;
            };
            if let Some((_, id)) = self.props.get(j) {
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
