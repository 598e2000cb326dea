//! Typed access to members of the parsed body, each failure an error with the
//! pointer of the member.

use toolgate_json::{pointer, Object, Value};

use super::error::{Error, ErrorCode};

/// `base` + `/key`.
pub(crate) fn key(base: &str, key: &str) -> String {
    let mut p = String::with_capacity(base.len() + key.len() + 1);
    p.push_str(base);
    pointer::push_token(&mut p, key);
    p
}

/// `base` + `/index`.
pub(crate) fn idx(base: &str, index: usize) -> String {
    let mut p = String::with_capacity(base.len() + 4);
    p.push_str(base);
    pointer::push_index(&mut p, index);
    p
}

/// The value as an object, or `wrong_type`.
pub(crate) fn as_object<'a, 'v>(v: &'a Value<'v>, at: &str) -> Result<&'a Object<'v>, Error> {
    v.as_object()
        .ok_or_else(|| Error::wrong_type(at, "object", v.type_name()))
}

/// A member that may be absent or `null`.
pub(crate) fn opt<'a, 'v>(o: &'a Object<'v>, name: &str) -> Option<&'a Value<'v>> {
    o.get(name).filter(|v| !v.is_null())
}

/// A required member (absent or `null` is `missing_field`).
pub(crate) fn req<'a, 'v>(o: &'a Object<'v>, name: &str, at: &str) -> Result<&'a Value<'v>, Error> {
    opt(o, name).ok_or_else(|| Error::new(ErrorCode::MissingField, key(at, name)))
}

/// A required string member.
pub(crate) fn req_str<'a>(o: &'a Object<'_>, name: &str, at: &str) -> Result<&'a str, Error> {
    let v = req(o, name, at)?;
    v.as_str()
        .ok_or_else(|| Error::wrong_type(key(at, name), "string", v.type_name()))
}

/// A string member that may be absent or `null`.
pub(crate) fn opt_str<'a>(
    o: &'a Object<'_>,
    name: &str,
    at: &str,
) -> Result<Option<&'a str>, Error> {
    match opt(o, name) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .map(Some)
            .ok_or_else(|| Error::wrong_type(key(at, name), "string", v.type_name())),
    }
}

/// A required array member.
pub(crate) fn req_array<'a, 'v>(
    o: &'a Object<'v>,
    name: &str,
    at: &str,
) -> Result<&'a [Value<'v>], Error> {
    let v = req(o, name, at)?;
    v.as_array()
        .ok_or_else(|| Error::wrong_type(key(at, name), "array", v.type_name()))
}

/// An array member that may be absent or `null`.
pub(crate) fn opt_array<'a, 'v>(
    o: &'a Object<'v>,
    name: &str,
    at: &str,
) -> Result<&'a [Value<'v>], Error> {
    match opt(o, name) {
        None => Ok(&[]),
        Some(v) => v
            .as_array()
            .ok_or_else(|| Error::wrong_type(key(at, name), "array", v.type_name())),
    }
}

/// A required object member.
pub(crate) fn req_object<'a, 'v>(
    o: &'a Object<'v>,
    name: &str,
    at: &str,
) -> Result<&'a Object<'v>, Error> {
    as_object(req(o, name, at)?, &key(at, name))
}

/// An object member that may be absent or `null`.
pub(crate) fn opt_object<'a, 'v>(
    o: &'a Object<'v>,
    name: &str,
    at: &str,
) -> Result<Option<&'a Object<'v>>, Error> {
    opt(o, name)
        .map(|v| as_object(v, &key(at, name)))
        .transpose()
}

/// A required non-negative integer member that fits `usize`.
pub(crate) fn req_index(o: &Object<'_>, name: &str, at: &str) -> Result<usize, Error> {
    let v = req(o, name, at)?;
    index_value(v, &key(at, name))
}

/// An index member that may be absent (then `default`).
pub(crate) fn opt_index(
    o: &Object<'_>,
    name: &str,
    at: &str,
    default: usize,
) -> Result<usize, Error> {
    match opt(o, name) {
        None => Ok(default),
        Some(v) => index_value(v, &key(at, name)),
    }
}

fn index_value(v: &Value<'_>, at: &str) -> Result<usize, Error> {
    let n = v
        .as_number()
        .ok_or_else(|| Error::wrong_type(at, "integer", v.type_name()))?;
    if !n.is_integer_lexeme() {
        return Err(Error::wrong_type(at, "integer", "number"));
    }
    n.as_u64()
        .and_then(|u| usize::try_from(u).ok())
        .ok_or_else(|| Error::new(ErrorCode::InvalidValue, at))
}

/// A short, printable rendering of a provider's finish or status token: at
/// most 64 bytes of `[A-Za-z0-9_.-]`, anything else replaced by `?`.
pub(crate) fn token(s: &str) -> String {
    s.chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/') {
                c
            } else {
                '?'
            }
        })
        .collect()
}
