//! `enum`: the value equals one of a list (numbers by value: `1.0` equals `1`).

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `enum` keyword.
#[derive(Debug)]
pub(crate) struct Enum {
    values: Vec<Value<'static>>,
    location: Box<str>,
}

/// Compiles `enum`: an array.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let values = v
        .as_array()
        .ok_or_else(|| kw.invalid("an array"))?
        .iter()
        .map(|x| x.clone().into_owned())
        .collect();
    Ok(boxed(Enum {
        values,
        location: kw.location(),
    }))
}

impl Keyword for Enum {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let ok = self.values.iter().any(|x| x == v);
        if !ok {
            cx.fail(ErrorCode::Enum, at, &self.location, v, || {
                format!(
                    "expected one of {}",
                    crate::error::list_values(self.values.iter())
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
    fn matches_by_value() {
        let s = r#"{"enum":["a",1,null]}"#;
        assert!(check(s, "\"a\""));
        assert!(check(s, "null"));
        assert!(!check(s, "\"b\""));
        assert!(!check(s, "false"));
    }
}
