//! `multipleOf`: exact decimal divisibility (no floating point).

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::decimal::Dec;
use crate::error::ErrorCode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `multipleOf` keyword.
#[derive(Debug)]
pub(crate) struct MultipleOf {
    lexeme: Box<str>,
    location: Box<str>,
}

/// Compiles `multipleOf`: a number above zero.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let n = v
        .as_number()
        .ok_or_else(|| kw.invalid("a number above zero"))?;
    let lexeme: Box<str> = n.lexeme().into();
    let d = Dec::parse(&lexeme).ok_or_else(|| kw.invalid("a number above zero"))?;
    if d.is_zero() || d.is_negative() {
        return Err(kw.invalid("a number above zero"));
    }
    Ok(boxed(MultipleOf {
        lexeme,
        location: kw.location(),
    }))
}

impl Keyword for MultipleOf {
    fn part(&self) -> Part<'_> {
        Part::ScalarOnly
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::Number(n) = v else { return true };
        let mut buf = [0; 32];
        let ok = match (Dec::of_number(n, &mut buf), Dec::parse(&self.lexeme)) {
            (Some(a), Some(b)) => a.is_multiple_of(&b),
            _ => false,
        };
        if !ok {
            cx.fail(ErrorCode::NotMultiple, at, &self.location, v, || {
                format!("expected a multiple of {}", self.lexeme)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn exact_decimals() {
        let s = r#"{"multipleOf":0.01}"#;
        assert!(check(s, "19.99"));
        assert!(!check(s, "19.999"));
        assert!(check(
            r#"{"multipleOf":3}"#,
            "300000000000000000000000000000"
        ));
    }
}
