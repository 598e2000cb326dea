//! `type`: the JSON type. In strict mode `integer` means an integer lexeme.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::decimal::Dec;
use crate::error::ErrorCode;
use crate::options::Mode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

pub(crate) const NULL: u8 = 1;
pub(crate) const BOOLEAN: u8 = 2;
pub(crate) const INTEGER: u8 = 4;
pub(crate) const NUMBER: u8 = 8;
pub(crate) const STRING: u8 = 16;
pub(crate) const ARRAY: u8 = 32;
pub(crate) const OBJECT: u8 = 64;

/// The compiled `type` keyword.
#[derive(Debug)]
pub(crate) struct Type {
    mask: u8,
    expected: Box<str>,
    location: Box<str>,
}

/// The bit of a JSON Schema type name.
pub(crate) fn bit(name: &str) -> Option<u8> {
    Some(match name {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "integer" => INTEGER,
        "number" => NUMBER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => return None,
    })
}

/// Compiles `type`: a type name or a non-empty list of unique names.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let names: Vec<&str> = match v {
        Value::String(s) => vec![s.as_ref()],
        Value::Array(a) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .ok_or_else(|| kw.invalid("a type name or a list of them"))
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(kw.invalid("a type name or a list of them")),
    };
    let mut mask = 0;
    for n in &names {
        let b = bit(n).ok_or_else(|| kw.invalid("one of the seven JSON Schema type names"))?;
        if mask & b != 0 {
            return Err(kw.invalid("a list of distinct type names"));
        }
        mask |= b;
    }
    Ok(boxed(Type {
        mask,
        expected: names.join(" or ").into(),
        location: kw.location(),
    }))
}

/// Whether a number is an integer under the mode's rules.
pub(crate) fn is_integer(n: &toolgate_json::Number, mode: Mode) -> bool {
    if n.is_integer_lexeme() {
        return true;
    }
    if mode == Mode::Strict {
        return false;
    }
    let mut buf = [0; 32];
    Dec::of_number(n, &mut buf).is_some_and(|d| d.is_integer())
}

impl Keyword for Type {
    fn part(&self) -> Part<'_> {
        Part::Type(self.mask)
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let ok = match v {
            Value::Null => self.mask & NULL != 0,
            Value::Bool(_) => self.mask & BOOLEAN != 0,
            Value::Number(n) => {
                self.mask & NUMBER != 0 || (self.mask & INTEGER != 0 && is_integer(n, cx.mode()))
            }
            Value::String(_) => self.mask & STRING != 0,
            Value::Array(_) => self.mask & ARRAY != 0,
            Value::Object(_) => self.mask & OBJECT != 0,
        };
        if !ok {
            cx.fail(ErrorCode::TypeMismatch, at, &self.location, v, || {
                format!("expected {}", self.expected)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{check, check_standard};

    #[test]
    fn strict_integer_means_integer_lexeme() {
        let s = r#"{"type":"integer"}"#;
        assert!(check(s, "3"));
        assert!(check(s, "-0"));
        assert!(check(s, "123456789012345678901234567890"));
        assert!(!check(s, "3.0"));
        assert!(!check(s, "1e2"));
        assert!(!check(s, "-0.0"));
        assert!(!check(s, "true"));
        assert!(!check(s, "\"1200\""));
        assert!(check_standard(s, "3.0"));
        assert!(check_standard(s, "1e2"));
        assert!(!check_standard(s, "1.5"));
    }

    #[test]
    fn null_is_a_value_not_absence() {
        let s = r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#;
        assert!(!check(s, r#"{"a":null}"#));
        assert!(check(r#"{"type":["string","null"]}"#, "null"));
    }
}
