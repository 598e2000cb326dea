//! `const`: the value equals one value.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `const` keyword.
#[derive(Debug)]
pub(crate) struct Const {
    value: Value<'static>,
    location: Box<str>,
}

/// Compiles `const`: any value.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    Ok(boxed(Const {
        value: v.clone().into_owned(),
        location: kw.location(),
    }))
}

impl Keyword for Const {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let ok = *v == self.value;
        if !ok {
            cx.fail(ErrorCode::Const, at, &self.location, v, || {
                format!(
                    "expected {}",
                    crate::error::list_values(std::iter::once(&self.value))
                )
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn const_compares_by_value() {
        assert!(check(r#"{"const":{"a":[1,2]}}"#, r#"{"a":[1,2]}"#));
        assert!(!check(r#"{"const":false}"#, "0"));
    }
}
