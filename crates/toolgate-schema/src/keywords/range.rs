//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`: exact
//! comparisons of decimal lexemes, so big integers never round.

use std::cmp::Ordering;

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::decimal::Dec;
use crate::error::ErrorCode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

#[derive(Debug, Clone, Copy)]
enum Bound {
    Minimum,
    Maximum,
    ExclusiveMinimum,
    ExclusiveMaximum,
}

/// A compiled numeric bound.
#[derive(Debug)]
pub(crate) struct Range {
    bound: Bound,
    lexeme: Box<str>,
    int: Option<i64>,
    location: Box<str>,
}

fn compile(kw: &mut Kw<'_, '_>, v: &Value, bound: Bound) -> super::Compiled {
    let n = v.as_number().ok_or_else(|| kw.invalid("a number"))?;
    let lexeme: Box<str> = n.lexeme().into();
    Dec::parse(&lexeme).ok_or_else(|| kw.invalid("a number"))?;
    Ok(boxed(Range {
        bound,
        int: n.as_i64(),
        lexeme,
        location: kw.location(),
    }))
}

/// Compiles `minimum`.
pub(crate) fn compile_minimum(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, Bound::Minimum)
}

/// Compiles `maximum`.
pub(crate) fn compile_maximum(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, Bound::Maximum)
}

/// Compiles `exclusiveMinimum`.
pub(crate) fn compile_exclusive_minimum(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, Bound::ExclusiveMinimum)
}

/// Compiles `exclusiveMaximum`.
pub(crate) fn compile_exclusive_maximum(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, Bound::ExclusiveMaximum)
}

impl Keyword for Range {
    fn part(&self) -> Part<'_> {
        Part::ScalarOnly
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::Number(n) = v else { return true };
        // Instance compared to the bound.
        let ord = match (n.as_i64(), self.int) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            _ => {
                let mut buf = [0; 32];
                match (Dec::of_number(n, &mut buf), Dec::parse(&self.lexeme)) {
                    (Some(a), Some(b)) => Some(a.cmp(&b)),
                    _ => None,
                }
            }
        };
        let ok = ord.is_some_and(|o| match self.bound {
            Bound::Minimum => o != Ordering::Less,
            Bound::Maximum => o != Ordering::Greater,
            Bound::ExclusiveMinimum => o == Ordering::Greater,
            Bound::ExclusiveMaximum => o == Ordering::Less,
        });
        if !ok {
            cx.fail(ErrorCode::OutOfRange, at, &self.location, v, || {
                let rel = match self.bound {
                    Bound::Minimum => "at least",
                    Bound::Maximum => "at most",
                    Bound::ExclusiveMinimum => "above",
                    Bound::ExclusiveMaximum => "below",
                };
                format!("expected a number {rel} {}", self.lexeme)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn big_integers_do_not_round() {
        let s = r#"{"maximum":9007199254740992}"#;
        assert!(check(s, "9007199254740992"));
        assert!(!check(s, "9007199254740993"));
        let s = r#"{"exclusiveMaximum":18446744073709551616}"#;
        assert!(check(s, "18446744073709551615"));
        assert!(!check(s, "18446744073709551616"));
        // A non-integer lexeme is judged at its canonical value, the
        // nearest double's shortest digits: the value the tool receives.
        assert!(check(r#"{"minimum":0.1}"#, "0.09999999999999999999"));
        assert!(!check(r#"{"minimum":0.1}"#, "0.0999999999999999"));
        assert!(!check(
            r#"{"exclusiveMaximum":5000}"#,
            "4999.99999999999999999"
        ));
    }
}
