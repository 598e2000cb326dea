//! Canonical arguments to Cedar values, built in code (no JSON text in
//! between).
//!
//! | JSON | Cedar |
//! |---|---|
//! | `true`, `false` | `Bool` |
//! | a number whose canonical form is an integer within `i64` | `Long` |
//! | a number whose canonical form has at most four fraction digits and no exponent | `decimal` |
//! | a string | `String` |
//! | an array | `Set` |
//! | an object | a record |
//! | `null` as a member's value | the member is absent |
//!
//! Anything else (`null` in an array or at the top, a number Cedar cannot
//! hold) is an error, which denies `authorization_error`. Numbers follow
//! their canonical form (the form the tool executes): `3.0` is the `Long` 3.

use cedar_policy::RestrictedExpression;
use toolgate_json::{Number, Value};

/// Why an argument has no Cedar form. Holds a JSON Pointer, never a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueError {
    pub(crate) pointer: String,
    pub(crate) what: &'static str,
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "argument at `{}` has no cedar form: {}",
            self.pointer, self.what
        )
    }
}

/// The Cedar form of `value`; `pointer` locates it, for errors.
pub(crate) fn to_cedar(
    value: &Value<'_>,
    pointer: &mut String,
) -> Result<RestrictedExpression, ValueError> {
    match value {
        Value::Null => Err(ValueError {
            pointer: pointer.clone(),
            what: "null",
        }),
        Value::Bool(b) => Ok(RestrictedExpression::new_bool(*b)),
        Value::Number(n) => number(n).ok_or_else(|| ValueError {
            pointer: pointer.clone(),
            what: "a number outside `Long` and `decimal`",
        }),
        Value::String(s) => Ok(RestrictedExpression::new_string(s.to_string())),
        Value::Array(items) => {
            let mut set = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                set.push(to_cedar(item, pointer)?);
                pointer.truncate(len);
            }
            Ok(RestrictedExpression::new_set(set))
        }
        Value::Object(object) => {
            let mut fields = Vec::with_capacity(object.len());
            for (name, member) in object.iter() {
                if member.is_null() {
                    continue;
                }
                let len = pointer.len();
                toolgate_json::pointer::push_token(pointer, name);
                fields.push((name.to_owned(), to_cedar(member, pointer)?));
                pointer.truncate(len);
            }
            // Member names are unique: the strict parser rejects duplicates.
            RestrictedExpression::new_record(fields).map_err(|_| ValueError {
                pointer: pointer.clone(),
                what: "a duplicate member",
            })
        }
    }
}

/// A `Long` or a `decimal`, by the number's canonical text.
fn number(n: &Number) -> Option<RestrictedExpression> {
    let text = n.canonical();
    if let Ok(long) = text.parse::<i64>() {
        return Some(RestrictedExpression::new_long(long));
    }
    let (whole, fraction) = text.split_once('.')?;
    let digits = whole.strip_prefix('-').unwrap_or(whole);
    let ok = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (1..=4).contains(&fraction.len())
        && fraction.bytes().all(|b| b.is_ascii_digit());
    // A decimal holds at most i64::MAX / 10^4 in its whole part.
    let fits = digits.len() < 15;
    (ok && fits).then(|| RestrictedExpression::new_decimal(text.as_ref()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn cedar(json: &str) -> Result<RestrictedExpression, ValueError> {
        to_cedar(&toolgate_json::from_str(json).unwrap(), &mut String::new())
    }

    #[test]
    fn maps_json_to_cedar() {
        let expr = cedar(r#"{"a":1,"b":"x","c":[true,2.5],"d":null,"e":{"f":3.0}}"#).unwrap();
        let expected: RestrictedExpression =
            r#"{"a": 1, "b": "x", "c": [true, decimal("2.5")], "e": {"f": 3}}"#
                .parse()
                .unwrap();
        assert_eq!(expr, expected);
    }

    #[test]
    fn refuses_what_cedar_cannot_hold() {
        assert_eq!(cedar(r#"{"a":[null]}"#).unwrap_err().pointer, "/a/0");
        assert_eq!(cedar(r#"{"a":{"b":1e300}}"#).unwrap_err().pointer, "/a/b");
        assert_eq!(cedar(r#"{"a":0.00001}"#).unwrap_err().pointer, "/a");
        assert_eq!(
            cedar(r#"{"a":99999999999999999999}"#).unwrap_err().pointer,
            "/a"
        );
        assert!(cedar("null").is_err());
    }
}
