//! Stage 3: the arguments, parsed strictly with the tool's limits, must be
//! a JSON object.
//!
//! Arguments sent as a string are parsed on their own with the tool's
//! [`ParseOptions`]; inline arguments were parsed with the body and are
//! re-checked against the tool's limits by re-reading their canonical text
//! (so a tool's tighter limits hold whatever the provider's format) with the
//! tree-free [`Reader`], which accepts exactly what the tree parser accepts;
//! only a refusal is parsed again, by the tree parser, for its error. The
//! canonical text is computed here once, for the later stages. The
//! size limit (`max_argument_bytes`) counts the bytes the arguments took as
//! received ([`crate::adapter::ProposedCall::received_bytes`]): whitespace
//! inside an inline object and escapes inside a string count, so a value
//! padded to any size is `too_large` whatever its canonical length. A parse
//! error keeps the parser's code and pointer; anything but an object is
//! `not_object` (`null`, arrays, strings, numbers, a custom tool's free text).
//!
//! A number its double cannot hold exactly (`100.00000000000000000001`) is
//! `number_too_precise` at its pointer, inline or in a string, unless the
//! tool opts into rounding (`round_numbers = true`): the value checked and
//! handed on would otherwise not be the value the model wrote.

use std::borrow::Cow;

use toolgate_json::{ErrorCode, Limit, ParseOptions, Read, Reader, Value};

use crate::adapter::Arguments;
use crate::reason::{Code, Reason};

/// Arguments that passed stage 3.
#[derive(Debug)]
pub(crate) struct Parsed<'a> {
    /// The arguments, an object.
    pub(crate) value: Cow<'a, Value<'a>>,
    /// Their canonical text.
    pub(crate) canonical: String,
}

/// The arguments as an object value with its canonical text, or why not.
pub(crate) fn check<'a>(
    arguments: &'a Arguments,
    received_bytes: Option<usize>,
    options: &ParseOptions,
) -> Result<Parsed<'a>, Reason> {
    if received_bytes.is_some_and(|n| n > options.limits().get(Limit::InputBytes)) {
        return Err(Reason::new(Code::Parse(ErrorCode::TooLarge), ""));
    }
    let (value, canonical) = match arguments {
        Arguments::Value(v) if v.as_object().is_some() => {
            // Inline objects were read under the body's limits; hold them to
            // the tool's limits too, without building a second tree.
            if !options.allows_rounding() {
                if let Some(pointer) = inexact_number(v) {
                    return Err(Reason::new(
                        Code::Parse(ErrorCode::NumberTooPrecise),
                        pointer,
                    ));
                }
            }
            let text = toolgate_json::canonical::to_string(v);
            if Reader::new(*options).read(text.as_bytes(), &mut ()) != Read::Accepted {
                if let Err(e) = options.parse(text.as_bytes()) {
                    return Err(Reason::new(Code::Parse(e.code()), e.pointer()));
                }
            }
            (Cow::Borrowed(v), text)
        }
        other => {
            let value = other
                .resolve(options)
                .map_err(|e| Reason::new(Code::Parse(e.code()), e.pointer()))?;
            let text = toolgate_json::canonical::to_string(&value);
            (value, text)
        }
    };
    if value.as_object().is_none() {
        return Err(Reason::whole(Code::NotObject));
    }
    Ok(Parsed { value, canonical })
}

/// The pointer of the first number (in document order) that its double
/// does not hold exactly ([`toolgate_json::Number::is_exact`]), if any.
fn inexact_number(value: &Value<'_>) -> Option<String> {
    // An explicit stack: the value is within the body's depth limit, but
    // no recursion is needed.
    let mut stack: Vec<(String, &Value<'_>)> = vec![(String::new(), value)];
    while let Some((at, v)) = stack.pop() {
        match v {
            Value::Number(n) if !n.is_exact() => return Some(at),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    let mut p = at.clone();
                    toolgate_json::pointer::push_index(&mut p, i);
                    stack.push((p, item));
                }
            }
            Value::Object(members) => {
                let members: Vec<_> = members.iter().collect();
                for (name, member) in members.into_iter().rev() {
                    let mut p = at.clone();
                    toolgate_json::pointer::push_token(&mut p, name);
                    stack.push((p, member));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_json::{Limit, Limits};

    fn code(args: &Arguments, options: &ParseOptions) -> Result<String, (String, String)> {
        check(args, None, options)
            .map(|p| p.canonical)
            .map_err(|r| (r.code.as_str().to_owned(), r.pointer))
    }

    #[test]
    fn table() {
        let o = ParseOptions::new();
        let text = |s: &str| Arguments::Text(s.to_owned());
        assert_eq!(
            code(&text(r#"{"b":1.0,"a":2}"#), &o),
            Ok(r#"{"a":2,"b":1}"#.into())
        );
        assert_eq!(code(&Arguments::EmptyText, &o), Ok("{}".into()));
        assert_eq!(code(&Arguments::Absent, &o), Ok("{}".into()));
        assert_eq!(
            code(&text(r#"{"amount":1,"\u0061mount":1000}"#), &o),
            Err(("duplicate_key".into(), "".into()))
        );
        assert_eq!(
            code(&text(r#"{"amount": 300"#), &o).unwrap_err().0,
            "truncated"
        );
        assert_eq!(
            code(&text(r#"{"a":NaN}"#), &o).unwrap_err().0,
            "non_finite_number"
        );
        assert_eq!(
            code(&text(r#"{"a":1e400}"#), &o).unwrap_err().0,
            "non_finite_number"
        );
        assert_eq!(
            code(&text("[1]"), &o),
            Err(("not_object".into(), "".into()))
        );
        assert_eq!(
            code(&text("null"), &o),
            Err(("not_object".into(), "".into()))
        );
        assert_eq!(
            code(&text(r#""{}""#), &o),
            Err(("not_object".into(), "".into()))
        );
        assert_eq!(
            code(&Arguments::Value(Value::Null), &o),
            Err(("not_object".into(), "".into()))
        );
        assert_eq!(
            code(&Arguments::FreeText("{}".into()), &o),
            Err(("not_object".into(), "".into()))
        );
    }

    #[test]
    fn received_bytes_are_held_to_the_size_limit() {
        let o = ParseOptions::new().with_limits(Limits::new().set(Limit::InputBytes, 10).unwrap());
        let small = Arguments::Value(toolgate_json::from_str("{}").unwrap().into_owned());
        assert!(check(&small, Some(10), &o).is_ok());
        let e = check(&small, Some(11), &o).unwrap_err();
        assert_eq!(e.code.as_str(), "too_large");
    }

    #[test]
    fn tool_limits_apply_to_inline_objects_too() {
        let tight = ParseOptions::new().with_limits(Limits::new().set(Limit::Depth, 2).unwrap());
        let deep = toolgate_json::from_str(r#"{"a":{"b":{"c":1}}}"#)
            .unwrap()
            .into_owned();
        assert_eq!(
            code(&Arguments::Value(deep), &tight).unwrap_err().0,
            "too_deep"
        );
        let deep = Arguments::Text(r#"{"a":{"b":{"c":1}}}"#.into());
        assert_eq!(code(&deep, &tight).unwrap_err().0, "too_deep");
    }
}
