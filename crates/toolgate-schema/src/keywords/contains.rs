//! `contains` with `minContains` and `maxContains`: how many items match a schema.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `contains` keyword and its bounds.
#[derive(Debug)]
pub(crate) struct Contains {
    node: NodeId,
    min: u64,
    max: Option<u64>,
    location: Box<str>,
}

/// Compiles `contains`, reading `minContains` and `maxContains` beside it.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, _v: &Value) -> super::Compiled {
    let node = kw.sub(&[])?;
    let min = match kw.s.obj.get("minContains") {
        Some(m) => super::non_negative(kw, m)?,
        None => 1,
    };
    let max = match kw.s.obj.get("maxContains") {
        Some(m) => Some(super::non_negative(kw, m)?),
        None => None,
    };
    Ok(boxed(Contains {
        node,
        min,
        max,
        location: kw.location(),
    }))
}

/// `minContains` and `maxContains` alone: checked for shape, applied by `contains`.
pub(crate) fn compile_bound(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    super::non_negative(kw, v)?;
    Ok(None)
}

impl Keyword for Contains {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Array(a) = v else { return true };
        let mut count: u64 = 0;
        let exhaustive = ann.on || self.max.is_some();
        for (i, item) in a.iter().enumerate() {
            let here = Path::Index(at, i);
            if cx.quietly(|cx| cx.eval(self.node, item, &here)) {
                count += 1;
                ann.mark_item(i);
                if !exhaustive && count >= self.min {
                    return true;
                }
            }
        }
        let ok = count >= self.min && self.max.is_none_or(|m| count <= m);
        if !ok {
            cx.fail(ErrorCode::Contains, at, &self.location, v, || {
                match self.max {
                    Some(m) => format!(
                        "expected between {} and {m} items matching `contains`",
                        self.min
                    ),
                    None => format!("expected at least {} items matching `contains`", self.min),
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
    fn bounds() {
        let s = r#"{"contains":{"const":1},"minContains":2,"maxContains":3}"#;
        assert!(!check_standard(s, "[1]"));
        assert!(check_standard(s, "[1,1,2]"));
        assert!(!check_standard(s, "[1,1,1,1]"));
        assert!(check_standard(
            r#"{"contains":false,"minContains":0}"#,
            "[1]"
        ));
    }
}
