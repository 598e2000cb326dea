//! `uniqueItems`: no two items are equal (by value).

use std::collections::HashSet;

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `uniqueItems: true`.
#[derive(Debug)]
pub(crate) struct UniqueItems {
    location: Box<str>,
}

/// Compiles `uniqueItems`: a boolean; `false` needs no check.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    match v {
        Value::Bool(true) => Ok(boxed(UniqueItems {
            location: kw.location(),
        })),
        Value::Bool(false) => Ok(None),
        _ => Err(kw.invalid("a boolean")),
    }
}

/// Arrays up to this length are compared pairwise; longer ones through their
/// canonical forms, so the check stays linear-ish.
const PAIRWISE_MAX: usize = 32;

fn all_unique(items: &[Value]) -> bool {
    if items.len() <= PAIRWISE_MAX {
        for (i, a) in items.iter().enumerate() {
            if items.iter().skip(i + 1).any(|b| a == b) {
                return false;
            }
        }
        return true;
    }
    let mut seen = HashSet::with_capacity(items.len());
    items
        .iter()
        .all(|x| seen.insert(toolgate_json::canonical::to_string(x)))
}

impl Keyword for UniqueItems {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::Array(a) = v else { return true };
        let ok = all_unique(a);
        if !ok {
            cx.fail(ErrorCode::UniqueItems, at, &self.location, v, || {
                "expected all items to be different".to_owned()
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn by_value() {
        let s = r#"{"uniqueItems":true}"#;
        assert!(!check(s, "[1, 1.0]"));
        assert!(!check(s, r#"[{"a":1,"b":2},{"b":2,"a":1}]"#));
        assert!(check(s, "[1, true]"));
        let many: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        assert!(check(s, &format!("[{}]", many.join(","))));
        assert!(!check(s, &format!("[{},5]", many.join(","))));
    }
}
