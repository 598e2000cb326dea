//! A fast acceptance check for leaf schemas.
//!
//! Most subschemas of a tool schema are leaves: a `type` with bounds, a
//! length, a pattern or a list of strings. For such a schema the compiler also
//! builds a [`Leaf`]: one struct, checked without dynamic dispatch. It only
//! ever *accepts*: when it says yes, every keyword of the schema would pass;
//! when it cannot tell (a number beyond `i64`, a float against an integer
//! bound, a pattern too complex for the linear matcher) or the value fails, the
//! full keyword list runs and decides, with its detailed errors. So the
//! verdicts are exactly those of the keyword list.

use toolgate_json::Value;

use crate::keywords::{type_bit, Simple, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};

/// The fast check of a leaf schema.
#[derive(Debug)]
pub(crate) struct Leaf {
    /// Allowed types; all when the schema has no `type`.
    types: u8,
    /// Inclusive integer bounds (exclusive ones are folded in by ±1).
    low: Option<i64>,
    high: Option<i64>,
    min_length: u64,
    max_length: Option<u64>,
    pattern: Option<Simple>,
    /// `enum` of strings only, or a string `const`.
    strings: Option<Vec<Box<str>>>,
}

fn bound(v: &Value<'_>) -> Option<i64> {
    let n = v.as_number()?;
    if n.is_integer_lexeme() {
        n.as_i64()
    } else {
        None
    }
}

fn count(v: &Value<'_>) -> Option<u64> {
    let n = v.as_number()?;
    if n.is_integer_lexeme() {
        n.as_u64()
    } else {
        None
    }
}

/// For a lexeme `-?digits.digits` (no exponent, integer part under 10^15):
/// its sign and integer part.
///
/// The integer part and the next integer away from zero are then exact
/// doubles, so the canonical value (the nearest double's) lies between them,
/// ends included, as the lexeme's value does.
fn fraction_parts(lexeme: &[u8]) -> Option<(bool, i64)> {
    let (negative, rest) = match lexeme.split_first() {
        Some((b'-', r)) => (true, r),
        _ => (false, lexeme),
    };
    let dot = rest.iter().position(|&b| b == b'.')?;
    let (int, frac) = rest.split_at(dot);
    if int.is_empty() || int.len() > 15 || !frac.iter().skip(1).all(u8::is_ascii_digit) {
        return None;
    }
    let mut value = 0i64;
    for &d in int {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(d - b'0');
    }
    Some((negative, value))
}

impl Leaf {
    /// The leaf check of a schema object, if every keyword in it is one the
    /// leaf understands (annotations aside).
    pub(crate) fn compile(obj: &toolgate_json::Object<'_>) -> Option<Self> {
        let mut leaf = Leaf {
            types: 0x7F,
            low: None,
            high: None,
            min_length: 0,
            max_length: None,
            pattern: None,
            strings: None,
        };
        for (k, v) in obj.iter() {
            match k {
                "type" => {
                    leaf.types = match v {
                        Value::String(s) => type_bit(s)?,
                        Value::Array(a) => a
                            .iter()
                            .try_fold(0u8, |m, t| Some(m | type_bit(t.as_str()?)?))?,
                        _ => return None,
                    };
                }
                "minimum" => leaf.low = Some(bound(v)?),
                "maximum" => leaf.high = Some(bound(v)?),
                "exclusiveMinimum" => leaf.low = Some(bound(v)?.checked_add(1)?),
                "exclusiveMaximum" => leaf.high = Some(bound(v)?.checked_sub(1)?),
                "minLength" => leaf.min_length = count(v)?,
                "maxLength" => leaf.max_length = Some(count(v)?),
                "pattern" => leaf.pattern = Some(Simple::compile(v.as_str()?)?),
                // `const` and `enum` together would need both checked.
                "const" if leaf.strings.is_none() => leaf.strings = Some(vec![v.as_str()?.into()]),
                "enum" if leaf.strings.is_none() => {
                    let list = v.as_array()?;
                    leaf.strings = Some(
                        list.iter()
                            .map(|s| s.as_str().map(Into::into))
                            .collect::<Option<Vec<_>>>()?,
                    );
                }
                "title" | "description" | "default" | "examples" | "$comment" | "deprecated"
                | "readOnly" | "writeOnly" => {}
                k if k.starts_with("x-") => {}
                _ => return None,
            }
        }
        // Two bounds of one kind (`minimum` and `exclusiveMinimum`) would
        // overwrite each other: leave such schemas to the keyword list.
        let lows = ["minimum", "exclusiveMinimum"]
            .iter()
            .filter(|k| obj.contains_key(k))
            .count();
        let highs = ["maximum", "exclusiveMaximum"]
            .iter()
            .filter(|k| obj.contains_key(k))
            .count();
        (lows <= 1 && highs <= 1).then_some(leaf)
    }

    /// Whether the schema surely accepts `v`. `false` means "not sure".
    pub(crate) fn accepts(&self, v: &Value<'_>) -> bool {
        match v {
            Value::Null => self.types & NULL != 0 && self.strings.is_none(),
            Value::Bool(_) => self.types & BOOLEAN != 0 && self.strings.is_none(),
            Value::Array(_) => self.types & ARRAY != 0 && self.strings.is_none(),
            Value::Object(_) => self.types & OBJECT != 0 && self.strings.is_none(),
            Value::Number(n) => {
                if self.strings.is_some() {
                    return false;
                }
                // An integer lexeme is an integer in both modes; anything
                // else is left to the keyword list.
                let type_ok = self.types & NUMBER != 0
                    || (self.types & INTEGER != 0 && n.is_integer_lexeme());
                if !type_ok {
                    return false;
                }
                if self.low.is_none() && self.high.is_none() {
                    return true;
                }
                if n.is_integer_lexeme() {
                    let Some(i) = n.as_i64() else { return false };
                    return self.low.is_none_or(|l| i >= l) && self.high.is_none_or(|h| i <= h);
                }
                // A fraction without exponent: the value lies between its
                // integer part and the next integer away from zero (the
                // canonical value may round onto either end), which decides
                // most comparisons with integer bounds.
                let Some((negative, int_part)) = n.lexeme_bytes().and_then(fraction_parts) else {
                    return false;
                };
                let (lo, hi) = if negative {
                    (-int_part - 1, -int_part)
                } else {
                    (int_part, int_part + 1)
                };
                // value in (lo, hi) for non-negative; (lo, hi] for negative.
                self.low.is_none_or(|l| lo >= l) && self.high.is_none_or(|h| hi <= h)
            }
            Value::String(s) => self.accepts_str(s),
        }
    }

    /// Whether the schema surely accepts the string `s`; `false` means
    /// "not sure" ([`Leaf::accepts`] of a string value).
    #[inline]
    pub(crate) fn accepts_str(&self, s: &str) -> bool {
        if self.types & STRING == 0 {
            return false;
        }
        let bytes = s.len() as u64;
        let max_ok = self.max_length.is_none_or(|m| bytes <= m);
        let min_ok = bytes / 4 >= self.min_length;
        if !(max_ok && min_ok) {
            return false;
        }
        if let Some(p) = &self.pattern {
            if !p.is_match(s) {
                return false;
            }
        }
        match &self.strings {
            Some(list) => list.iter().any(|x| x.as_ref() == s),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Leaf;

    fn leaf(schema: &str) -> Option<Leaf> {
        let v = toolgate_json::from_str(schema).unwrap();
        Leaf::compile(v.as_object().unwrap())
    }

    #[test]
    fn accepts_only_what_the_keywords_accept() {
        let l = leaf(r#"{"type":"integer","minimum":1,"exclusiveMaximum":5001}"#).unwrap();
        let yes = |t: &str| l.accepts(&toolgate_json::from_str(t).unwrap());
        assert!(yes("1") && yes("5000"));
        assert!(!yes("0") && !yes("5001") && !yes("3.0") && !yes("\"3\"") && !yes("1e2"));
        assert!(!yes("123456789012345678901234567890"));
        let l = leaf(r#"{"type":"number","minimum":0,"maximum":100}"#).unwrap();
        let yes = |t: &str| l.accepts(&toolgate_json::from_str(t).unwrap());
        assert!(yes("0.5") && yes("99.99") && yes("0.0") && yes("50"));
        assert!(!yes("100.5") && !yes("-0.5") && !yes("100.0") && !yes("1e1") && !yes("-0.0"));
        let l = leaf(r#"{"type":"number","minimum":-10,"maximum":-1}"#).unwrap();
        let yes = |t: &str| l.accepts(&toolgate_json::from_str(t).unwrap());
        assert!(yes("-1.5") && yes("-9.99") && !yes("-0.5") && !yes("-10.5") && !yes("-10.0"));
        let l = leaf(r#"{"type":"string","maxLength":3,"pattern":"^[a-z]+$","enum":["ab","abc"]}"#)
            .unwrap();
        let yes = |t: &str| l.accepts(&toolgate_json::from_str(t).unwrap());
        assert!(yes("\"ab\"") && !yes("\"a\"") && !yes("\"abcd\"") && !yes("1"));
        let l = leaf(r#"{"const":"refund"}"#).unwrap();
        let yes = |t: &str| l.accepts(&toolgate_json::from_str(t).unwrap());
        assert!(yes("\"refund\"") && !yes("\"Refund\"") && !yes("1") && !yes("null"));
        assert!(leaf(r#"{"const":1}"#).is_none());
        assert!(leaf(r#"{"const":"a","enum":["a","b"]}"#).is_none());
        assert!(leaf(r#"{"enum":["a","b"],"const":"a"}"#).is_none());
        assert!(leaf(r#"{"type":"object","properties":{}}"#).is_none());
        assert!(leaf(r#"{"minimum":1.5}"#).is_none());
        assert!(leaf(r#"{"minimum":1,"exclusiveMinimum":0}"#).is_none());
        assert!(leaf(r#"{"pattern":"(a|b)"}"#).is_none());
        assert!(leaf(r#"{"format":"date"}"#).is_none());
        // Beyond 2^53 the integer part may not be a double: the canonical
        // value of `18014398509481986.5` is 18014398509481988.
        let l = leaf(r#"{"maximum":18014398509481987}"#).unwrap();
        let rounding = toolgate_json::ParseOptions::new().allow_rounding(true);
        let yes = |t: &str| l.accepts(&rounding.parse(t.as_bytes()).unwrap());
        assert!(!yes("18014398509481986.5") && !yes("1000000000000000.5"));
        assert!(yes("999999999999999.5"));
    }
}
