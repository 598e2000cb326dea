//! `items`: every item after those `prefixItems` covers.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `items` keyword.
#[derive(Debug)]
pub(crate) struct Items {
    node: NodeId,
    skip: usize,
    deny: bool,
    location: Box<str>,
}

/// Compiles `items`: a schema (the draft-07 array form is refused).
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    if matches!(v, Value::Array(_)) {
        return Err(kw.error(
            crate::CompileErrorCode::UnsupportedKeyword,
            "`items` as an array is draft-07; use `prefixItems`",
        ));
    }
    let skip =
        kw.s.obj
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(0, <[Value]>::len);
    Ok(boxed(Items {
        node: kw.sub(&[])?,
        skip,
        deny: matches!(v, Value::Bool(false)),
        location: kw.location(),
    }))
}

impl Keyword for Items {
    fn part(&self) -> Part<'_> {
        Part::Items {
            skip: self.skip,
            node: self.node,
            deny: self.deny,
        }
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Array(a) = v else { return true };
        let mut ok = true;
        for (i, item) in a.iter().enumerate().skip(self.skip) {
            if self.deny {
                ok = false;
                cx.fail(
                    ErrorCode::UnknownItem,
                    &Path::Index(at, i),
                    &self.location,
                    item,
                    || match self.skip {
                        0 => "no item is allowed: expected an empty array".to_owned(),
                        n => format!("no item is allowed here: expected at most {n} items"),
                    },
                );
            } else {
                ok &= cx.eval(self.node, item, &Path::Index(at, i));
            }
            if !ok && !cx.collect {
                return false;
            }
        }
        if ok {
            ann.mark_items_from(self.skip);
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn after_prefix() {
        let s = r#"{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}"#;
        assert!(check_standard(s, r#"["a",1,2]"#));
        assert!(!check_standard(s, r#"["a","b"]"#));
        assert!(!check_standard(r#"{"items":false}"#, "[1]"));
    }
}
