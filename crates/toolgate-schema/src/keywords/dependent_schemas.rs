//! `dependentSchemas`: when a member is present, the object must also match a schema.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `dependentSchemas` keyword.
#[derive(Debug)]
pub(crate) struct DependentSchemas {
    deps: Vec<(Box<str>, NodeId)>,
}

/// Compiles `dependentSchemas`: an object of schemas.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of schemas"))?;
    let mut deps = Vec::new();
    for k in o.keys() {
        deps.push((k.into(), kw.sub(&[k])?));
    }
    Ok(boxed(DependentSchemas { deps }))
}

impl Keyword for DependentSchemas {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (k, id) in &self.deps {
            if o.contains_key(k) {
                ok &= cx.eval_in_place(*id, v, at, ann);
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
    use crate::test_util::check_standard;

    #[test]
    fn dependency() {
        let s = r#"{"dependentSchemas":{"a":{"required":["b"]}}}"#;
        assert!(check_standard(s, r#"{"a":1,"b":1}"#));
        assert!(!check_standard(s, r#"{"a":1}"#));
    }
}
