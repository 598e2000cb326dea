//! Canonical arguments to Cedar values, built in code (no JSON text in
//! between), guided by the type the Cedar schema declares for each argument
//! (see [`super::declared`]).
//!
//! | JSON | declared | Cedar |
//! |---|---|---|
//! | a number | `decimal` | `decimal`, exactly: `3` is `decimal("3.0")`, `1e2` is `decimal("100.0")`, `2.5e-3` is `decimal("0.0025")`; a value with more than four fraction digits, or beyond ±922337203685477.5807, has no exact form (an error; the config loader refuses a JSON Schema that lets one through, see [`super::CedarAuthorizer::check_registry`]) |
//! | a number | `Long` | `Long`, if the value is a whole number within `i64` (else an error) |
//! | a number | not declared | by its canonical form: a whole number within `i64` is a `Long`, a value with at most four fraction digits a `decimal` (else an error) |
//! | an object's member | the record does not declare it | left out: no policy can read it |
//! | `true`, `false` | any | `Bool` |
//! | a string | any | `String` |
//! | an array | any | `Set` |
//! | an object | any | a record |
//! | `null` as a member's value | any | the member is absent |
//!
//! Anything else (`null` in an array or at the top) is an error, which
//! denies `authorization_error`. Numbers follow their canonical form (the
//! form the tool executes), never a rounded one.

use cedar_policy::RestrictedExpression;
use toolgate_json::{Number, Value};

use super::declared::Declared;

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

/// The Cedar form of `value` as no declared type guides it; `pointer`
/// locates it, for errors.
#[cfg(test)]
pub(crate) fn to_cedar(
    value: &Value<'_>,
    pointer: &mut String,
) -> Result<RestrictedExpression, ValueError> {
    to_cedar_as(value, None, pointer)
}

/// The Cedar form of `value`, as the type `declared` for it (`None`: as its
/// own JSON type says); `pointer` locates it, for errors.
#[cfg(test)]
pub(crate) fn to_cedar_as(
    value: &Value<'_>,
    declared: Option<&Declared>,
    pointer: &mut String,
) -> Result<RestrictedExpression, ValueError> {
    to_cedar_shaped(value, declared, pointer, &mut String::new())
}

/// [`to_cedar_as`], also writing the Cedar value's shape to `shape`: its
/// type, attribute names and element types, all a schema's type check
/// looks at (`b` bool, `l` Long, `d` decimal, `s` string, `[…]` a set's
/// elements, `{n:name…}` a record's attributes, each name after its
/// length). Two values of one shape pass or fail the same check
/// ([`super::shapes`]).
pub(crate) fn to_cedar_shaped(
    value: &Value<'_>,
    declared: Option<&Declared>,
    pointer: &mut String,
    shape: &mut String,
) -> Result<RestrictedExpression, ValueError> {
    match value {
        Value::Null => Err(ValueError {
            pointer: pointer.clone(),
            what: "null",
        }),
        Value::Bool(b) => {
            shape.push('b');
            Ok(RestrictedExpression::new_bool(*b))
        }
        Value::Number(n) => {
            let (form, what) = match declared {
                Some(Declared::Decimal) => (
                    exact_decimal(n).map(|e| (e, 'd')),
                    "a number with more than four fraction digits or beyond the range of `decimal`",
                ),
                Some(Declared::Long) => (
                    exact_long(n).map(|e| (e, 'l')),
                    "a number that is not a whole `Long`",
                ),
                _ => (number(n), "a number outside `Long` and `decimal`"),
            };
            let (form, kind) = form.ok_or_else(|| ValueError {
                pointer: pointer.clone(),
                what,
            })?;
            shape.push(kind);
            Ok(form)
        }
        Value::String(s) => {
            shape.push('s');
            Ok(RestrictedExpression::new_string(s.to_string()))
        }
        Value::Array(items) => {
            let mut set = Vec::with_capacity(items.len());
            shape.push('[');
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&i.to_string());
                let element = match declared {
                    Some(Declared::Set(e)) => Some(e.as_ref()),
                    _ => None,
                };
                set.push(to_cedar_shaped(item, element, pointer, shape)?);
                pointer.truncate(len);
            }
            shape.push(']');
            Ok(RestrictedExpression::new_set(set))
        }
        Value::Object(object) => {
            let mut fields = Vec::with_capacity(object.len());
            shape.push('{');
            let attrs = match declared {
                Some(Declared::Record(attrs)) => Some(attrs),
                _ => None,
            };
            for (name, member) in object.iter() {
                if member.is_null() {
                    continue;
                }
                let declared = match attrs {
                    // Undeclared: no policy can read it (they are
                    // type-checked against the schema), so it is left out.
                    Some(attrs) => match attrs.get(name) {
                        Some(d) => Some(d),
                        None => continue,
                    },
                    None => None,
                };
                let len = pointer.len();
                toolgate_json::pointer::push_token(pointer, name);
                shape.push_str(&name.len().to_string());
                shape.push(':');
                shape.push_str(name);
                fields.push((
                    name.to_owned(),
                    to_cedar_shaped(member, declared, pointer, shape)?,
                ));
                pointer.truncate(len);
            }
            shape.push('}');
            // Member names are unique: the strict parser rejects duplicates.
            RestrictedExpression::new_record(fields).map_err(|_| ValueError {
                pointer: pointer.clone(),
                what: "a duplicate member",
            })
        }
    }
}

/// A `Long` (`l`) or a `decimal` (`d`), by the number's canonical text.
fn number(n: &Number) -> Option<(RestrictedExpression, char)> {
    let text = n.canonical();
    if let Ok(long) = text.parse::<i64>() {
        return Some((RestrictedExpression::new_long(long), 'l'));
    }
    let (whole, fraction) = text.split_once('.')?;
    let digits = whole.strip_prefix('-').unwrap_or(whole);
    let ok = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (1..=4).contains(&fraction.len())
        && fraction.bytes().all(|b| b.is_ascii_digit());
    // A decimal holds at most i64::MAX / 10^4 in its whole part.
    let fits = digits.len() < 15;
    (ok && fits).then(|| (RestrictedExpression::new_decimal(text.as_ref()), 'd'))
}

/// The largest `decimal`, in ten-thousandths.
const DECIMAL_MAX_SCALED: i128 = i64::MAX as i128;

/// A number's exact value as (negative, significant digits without leading
/// or trailing zeros, power of ten): `-2.50e-3` is `(true, "25", -4)`. Zero
/// is `(false, "", 0)`. `None` for text that is not a JSON number.
fn exact(text: &str) -> Option<(bool, String, i64)> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (rest.get(..i)?, rest.get(i + 1..)?.parse::<i64>().ok()?),
        None => (rest, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty()
        || !whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let fraction_len = i64::try_from(fraction.len()).ok()?;
    let mut digits: String = whole.chars().chain(fraction.chars()).collect();
    let mut power = exponent.checked_sub(fraction_len)?;
    let trimmed = digits.trim_end_matches('0').len();
    power = power.checked_add(i64::try_from(digits.len() - trimmed).ok()?)?;
    digits.truncate(trimmed);
    let digits = digits.trim_start_matches('0').to_owned();
    if digits.is_empty() {
        return Some((false, digits, 0));
    }
    Some((negative, digits, power))
}

/// The value times `10^scale`, if it is a whole number within `i128`.
pub(crate) fn scaled(n: &Number, scale: i64) -> Option<i128> {
    let (negative, digits, power) = exact(n.canonical().as_ref())?;
    if digits.is_empty() {
        return Some(0);
    }
    let power = power.checked_add(scale)?;
    if power < 0 || digits.len() > 38 {
        return None;
    }
    let mut v: i128 = digits.parse().ok()?;
    for _ in 0..power {
        v = v.checked_mul(10)?;
    }
    Some(if negative { -v } else { v })
}

/// The exact `decimal` of a number: at most four fraction digits, within
/// the range of `decimal`.
fn exact_decimal(n: &Number) -> Option<RestrictedExpression> {
    let v = scaled(n, 4)?;
    if v.abs() > DECIMAL_MAX_SCALED {
        return None;
    }
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs();
    let text = format!("{sign}{}.{:04}", a / 10_000, a % 10_000);
    Some(RestrictedExpression::new_decimal(text))
}

/// The exact `Long` of a whole number within `i64`.
fn exact_long(n: &Number) -> Option<RestrictedExpression> {
    let v = i64::try_from(scaled(n, 0)?).ok()?;
    Some(RestrictedExpression::new_long(v))
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

    fn as_declared(json: &str, declared: &Declared) -> Option<RestrictedExpression> {
        let v = toolgate_json::from_str(json).unwrap();
        to_cedar_as(&v, Some(declared), &mut String::new()).ok()
    }

    #[test]
    fn numbers_become_the_declared_type_exactly() {
        let d = |json: &str| as_declared(json, &Declared::Decimal);
        let decimal = |text: &str| Some(RestrictedExpression::new_decimal(text));
        assert_eq!(d("3"), decimal("3.0000"));
        assert_eq!(d("1e2"), decimal("100.0000"));
        assert_eq!(d("2.5e-3"), decimal("0.0025"));
        assert_eq!(d("-0.5"), decimal("-0.5000"));
        assert_eq!(d("0"), decimal("0.0000"));
        assert_eq!(d("-0.0"), decimal("0.0000"));
        assert_eq!(d("922337203685477"), decimal("922337203685477.0000"));
        assert_eq!(d("-922337203685477"), decimal("-922337203685477.0000"));
        assert_eq!(d("922337203685478"), None);
        assert_eq!(d("123456.789"), decimal("123456.7890"));
        assert_eq!(d("0.00001"), None);
        assert_eq!(d("1e-7"), None);
        assert_eq!(d("1e21"), None);
        let l = |json: &str| as_declared(json, &Declared::Long);
        assert_eq!(l("3"), Some(RestrictedExpression::new_long(3)));
        assert_eq!(l("1e2"), Some(RestrictedExpression::new_long(100)));
        assert_eq!(l("2.5"), None);
        assert_eq!(l("9223372036854775808"), None);
        // Undeclared members are left out.
        let record = Declared::Record([("a".to_owned(), Declared::Decimal)].into());
        let got = as_declared(r#"{"a":1,"b":0.123456789}"#, &record).unwrap();
        let expected: RestrictedExpression = r#"{"a": decimal("1.0000")}"#.parse().unwrap();
        assert_eq!(got, expected);
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
