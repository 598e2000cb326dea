//! The parsed value: JSON's six types, numbers kept exactly, objects kept in
//! input order with unique member names.

use std::borrow::Cow;
use std::fmt;

use crate::number::{self, NumberError};

/// A JSON value as accepted by the strict parser.
///
/// Strings and member names without escapes borrow from the input (`'a`);
/// [`Value::into_owned`] detaches a value from its input.
///
/// Equality compares values, not spellings: numbers are equal when their
/// canonical forms are equal (`1.0 == 1`, `1E2 == 100`), objects when they hold
/// the same members regardless of order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, with its exact value.
    Number(Number),
    /// A string, unescaped.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object.
    Object(Object<'a>),
}

impl<'a> Value<'a> {
    /// The JSON type name: `null`, `boolean`, `number`, `string`, `array` or `object`.
    #[inline]
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Bool(_) => "boolean",
            Self::Number(_) => "number",
            Self::String(_) => "string",
            Self::Array(_) => "array",
            Self::Object(_) => "object",
        }
    }

    /// Whether the value is `null`.
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// The boolean, if this is one.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number, if this is one.
    #[inline]
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Self::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The string, if this is one.
    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The items, if this is an array.
    #[inline]
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members, if this is an object.
    #[inline]
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Self::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Looks up a value by JSON Pointer (RFC 6901). `""` is the value itself.
    pub fn pointer(&self, pointer: &str) -> Option<&Value<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut current = self;
        for raw in rest.split('/') {
            let token = crate::pointer::unescape_token(raw);
            current = match current {
                Self::Object(o) => o.get(&token)?,
                Self::Array(a) => {
                    if token.len() > 1 && token.starts_with('0') {
                        return None;
                    }
                    let index: usize = token.parse().ok()?;
                    a.get(index)?
                }
                _ => return None,
            };
        }
        Some(current)
    }

    /// Looks up a value by JSON Pointer (RFC 6901), for changing it.
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        let mut current = self;
        for raw in rest.split('/') {
            let token = crate::pointer::unescape_token(raw);
            current = match current {
                Self::Object(o) => o.get_mut(&token)?,
                Self::Array(a) => {
                    if token.len() > 1 && token.starts_with('0') {
                        return None;
                    }
                    let index: usize = token.parse().ok()?;
                    a.get_mut(index)?
                }
                _ => return None,
            };
        }
        Some(current)
    }

    /// The canonical JSON text of the value (see [`crate::canonical`]).
    pub fn to_canonical_string(&self) -> String {
        crate::canonical::to_string(self)
    }

    /// The same value, owning all its strings.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(b),
            Self::Number(n) => Value::Number(n),
            Self::String(s) => Value::String(Cow::Owned(s.into_owned())),
            Self::Array(items) => Value::Array(items.into_iter().map(Value::into_owned).collect()),
            Self::Object(o) => Value::Object(o.into_owned()),
        }
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Self::Bool(b)
    }
}

impl From<i64> for Value<'_> {
    fn from(n: i64) -> Self {
        Self::Number(Number::from(n))
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Self::String(Cow::Borrowed(s))
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Self::String(Cow::Owned(s))
    }
}

/// A JSON number, kept exactly as written.
///
/// Integer lexemes (no fraction, no exponent) of any length are kept with all
/// their digits; numbers with a fraction or exponent are known to be finite and
/// not to underflow. The original lexeme is available from [`Number::lexeme`].
#[derive(Clone)]
pub struct Number {
    repr: Repr,
}

/// Lexemes up to this many bytes are stored inline, without an allocation.
const INLINE: usize = 21;

#[derive(Clone)]
enum Repr {
    /// An integer lexeme that fits an `i64`, other than `-0`.
    Int(i64),
    /// Any other lexeme, exactly as written: `-0`, integers beyond `i64`, and
    /// every lexeme with a fraction or exponent (known to be finite).
    Inline {
        is_int: bool,
        len: u8,
        bytes: [u8; INLINE],
    },
    Heap {
        is_int: bool,
        text: Box<str>,
    },
}

impl Number {
    /// Parses a number lexeme with the strict profile's rules: RFC 8259
    /// grammar, finite, no underflow of a non-zero value. Precision is not
    /// checked here (see [`Number::is_exact`]).
    pub fn from_lexeme(lexeme: &str) -> Result<Self, NumberError> {
        number::parse_lexeme(lexeme.as_bytes())
    }

    pub(crate) fn int(v: i64) -> Self {
        Self { repr: Repr::Int(v) }
    }

    /// A lexeme the parser has checked (ASCII, RFC 8259 grammar, finite).
    pub(crate) fn checked_lexeme(lexeme: &str, is_int: bool) -> Self {
        let raw = lexeme.as_bytes();
        let repr = match u8::try_from(raw.len()) {
            Ok(len) if raw.len() <= INLINE => {
                let mut bytes = [0u8; INLINE];
                for (slot, b) in bytes.iter_mut().zip(raw) {
                    *slot = *b;
                }
                Repr::Inline { is_int, len, bytes }
            }
            _ => Repr::Heap {
                is_int,
                text: lexeme.into(),
            },
        };
        Self { repr }
    }

    /// Whether the double this number reads as holds exactly the value
    /// written: always for an integer lexeme (kept exact), and for a
    /// non-integer one whose decimal value is that of its double's shortest
    /// round-trip form (`0.1`, `2.5e-3`, `1e300`; not
    /// `100.00000000000000000001`). The parser refuses the others
    /// (`number_too_precise`) unless [`crate::ParseOptions::allow_rounding`].
    pub fn is_exact(&self) -> bool {
        match self.text() {
            Some(text) if !self.is_integer_lexeme() => self
                .as_f64()
                .is_some_and(|v| number::is_exact(text.as_bytes(), v)),
            _ => true,
        }
    }

    /// The number from a finite double. Returns `None` for NaN and infinities.
    pub fn from_f64(value: f64) -> Option<Self> {
        if !value.is_finite() {
            return None;
        }
        Some(Self::checked_lexeme(&number::format_f64(value), false))
    }

    /// The stored lexeme, for every representation but `Int`.
    #[inline]
    fn text(&self) -> Option<&str> {
        match &self.repr {
            Repr::Int(_) => None,
            // INVARIANT: inline bytes were copied from a `&str` of `len` bytes.
            Repr::Inline { len, bytes, .. } => bytes
                .get(..usize::from(*len))
                .and_then(|b| std::str::from_utf8(b).ok()),
            Repr::Heap { text, .. } => Some(text),
        }
    }

    /// The number exactly as it was written.
    #[inline]
    pub fn lexeme(&self) -> Cow<'_, str> {
        match &self.repr {
            Repr::Int(v) => Cow::Owned(v.to_string()),
            _ => Cow::Borrowed(self.text().unwrap_or_default()),
        }
    }

    /// The lexeme's bytes exactly as written (ASCII), without the copy or
    /// the UTF-8 check of [`Number::lexeme`]; `None` for an integer lexeme
    /// kept as an `i64` (then [`Number::as_i64`] has it).
    ///
    /// ```
    /// let v = toolgate_json::from_str("[12.50, 7]")?;
    /// let items = v.as_array().unwrap();
    /// assert_eq!(items[0].as_number().unwrap().lexeme_bytes(), Some(&b"12.50"[..]));
    /// assert_eq!(items[1].as_number().unwrap().lexeme_bytes(), None);
    /// # Ok::<(), toolgate_json::Error>(())
    /// ```
    #[inline]
    pub fn lexeme_bytes(&self) -> Option<&[u8]> {
        match &self.repr {
            Repr::Int(_) => None,
            Repr::Inline { len, bytes, .. } => bytes.get(..usize::from(*len)),
            Repr::Heap { text, .. } => Some(text.as_bytes()),
        }
    }

    /// Whether the lexeme is an integer lexeme: no fraction and no exponent.
    /// `3.0` and `1e2` are not; `-0` is.
    #[inline]
    pub fn is_integer_lexeme(&self) -> bool {
        match &self.repr {
            Repr::Int(_) => true,
            Repr::Inline { is_int, .. } | Repr::Heap { is_int, .. } => *is_int,
        }
    }

    /// The value as an `i64`, if it is an integer lexeme within range.
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        match &self.repr {
            Repr::Int(v) => Some(*v),
            _ if self.is_integer_lexeme() => self.text()?.parse().ok(),
            _ => None,
        }
    }

    /// The value as a `u64`, if it is a non-negative integer lexeme within range.
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        match &self.repr {
            Repr::Int(v) => u64::try_from(*v).ok(),
            _ if self.is_integer_lexeme() => match self.text()? {
                "-0" => Some(0),
                s => s.parse().ok(),
            },
            _ => None,
        }
    }

    /// The nearest double, if it is finite. Every non-integer lexeme has one;
    /// an integer lexeme too long for a double has none.
    pub fn as_f64(&self) -> Option<f64> {
        let v = match &self.repr {
            #[expect(
                clippy::cast_precision_loss,
                reason = "nearest double is what this accessor promises"
            )]
            Repr::Int(v) => *v as f64,
            _ => self.text()?.parse().ok()?,
        };
        v.is_finite().then_some(v)
    }

    /// Whether the number is below zero. `-0` and `-0.0` are not.
    #[inline]
    pub fn is_negative(&self) -> bool {
        match &self.repr {
            Repr::Int(v) => *v < 0,
            _ => {
                let text = self.text().unwrap_or_default();
                text.starts_with('-')
                    && text.bytes().any(|b| (b'1'..=b'9').contains(&b))
                    && self.as_f64().is_none_or(|f| f != 0.0)
            }
        }
    }

    /// The canonical text of the number (RFC 8785 with exact big integers).
    pub fn canonical(&self) -> Cow<'_, str> {
        match &self.repr {
            Repr::Int(v) => Cow::Owned(number::canonical_i64(*v)),
            _ if self.is_integer_lexeme() => match self.text().unwrap_or_default() {
                "-0" => Cow::Borrowed("0"),
                s => Cow::Borrowed(s),
            },
            _ => {
                let mut out = String::new();
                if !number::write_plain_decimal(self.text().unwrap_or_default(), &mut out) {
                    out = number::format_f64(self.as_f64().unwrap_or_default());
                }
                Cow::Owned(out)
            }
        }
    }
}

impl From<i64> for Number {
    fn from(v: i64) -> Self {
        Self::int(v)
    }
}

impl From<u64> for Number {
    fn from(v: u64) -> Self {
        match i64::try_from(v) {
            Ok(i) => Self::int(i),
            Err(_) => Self::checked_lexeme(&v.to_string(), true),
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        match (&self.repr, &other.repr) {
            (Repr::Int(a), Repr::Int(b)) => a == b,
            _ => self.canonical() == other.canonical(),
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({})", self.lexeme())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lexeme())
    }
}

/// A JSON object: members in input order, member names unique.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    // INVARIANT: no two members share a name.
    members: Vec<(Cow<'a, str>, Value<'a>)>,
}

impl<'a> Object<'a> {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn from_unique(members: Vec<(Cow<'a, str>, Value<'a>)>) -> Self {
        Self { members }
    }

    /// The number of members.
    #[inline]
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are no members.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The value of the member with exactly this name.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Value<'a>> {
        self.members.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The value of the member with exactly this name, for changing it.
    #[inline]
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value<'a>> {
        self.members
            .iter_mut()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// Whether a member with exactly this name exists.
    #[inline]
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets a member, returning the value it replaces. A new name goes last.
    pub fn insert(&mut self, name: impl Into<Cow<'a, str>>, value: Value<'a>) -> Option<Value<'a>> {
        let name = name.into();
        if let Some((_, slot)) = self.members.iter_mut().find(|(k, _)| *k == name) {
            return Some(std::mem::replace(slot, value));
        }
        self.members.push((name, value));
        None
    }

    /// Removes a member, returning its value.
    pub fn remove(&mut self, name: &str) -> Option<Value<'a>> {
        let index = self.members.iter().position(|(k, _)| k == name)?;
        Some(self.members.remove(index).1)
    }

    /// The members in input order.
    #[inline]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value<'a>)> {
        self.members.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The member names in input order.
    #[inline]
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.members.iter().map(|(k, _)| k.as_ref())
    }

    /// The same object, owning all its strings.
    pub fn into_owned(self) -> Object<'static> {
        Object {
            members: self
                .members
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                .collect(),
        }
    }
}

impl PartialEq for Object<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl<'o, 'a> IntoIterator for &'o Object<'a> {
    type Item = (&'o str, &'o Value<'a>);
    type IntoIter = Box<dyn Iterator<Item = (&'o str, &'o Value<'a>)> + 'o>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<'a, K: Into<Cow<'a, str>>> FromIterator<(K, Value<'a>)> for Object<'a> {
    /// Collects members; a later member with an earlier name replaces it.
    fn from_iter<I: IntoIterator<Item = (K, Value<'a>)>>(iter: I) -> Self {
        let mut o = Object::new();
        for (k, v) in iter {
            o.insert(k, v);
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_by_value() {
        let a = Number::from_lexeme("1.0").unwrap();
        let b = Number::from_lexeme("1").unwrap();
        let c = Number::from_lexeme("1E0").unwrap();
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_ne!(a, Number::from_lexeme("2").unwrap());
        assert_eq!(
            Number::from_lexeme("-0").unwrap(),
            Number::from_lexeme("0").unwrap()
        );
    }

    #[test]
    fn accessors_are_checked() {
        let n = Number::from_lexeme("18446744073709551616").unwrap();
        assert_eq!(n.as_u64(), None);
        assert_eq!(n.as_i64(), None);
        assert!(n.is_integer_lexeme());
        assert_eq!(n.lexeme(), "18446744073709551616");
        let n = Number::from_lexeme("18446744073709551615").unwrap();
        assert_eq!(n.as_u64(), Some(u64::MAX));
        let n = Number::from_lexeme("-9223372036854775808").unwrap();
        assert_eq!(n.as_i64(), Some(i64::MIN));
        let n = Number::from_lexeme("2.5").unwrap();
        assert_eq!(n.as_i64(), None);
        assert_eq!(n.as_f64(), Some(2.5));
        assert!(!n.is_integer_lexeme());
        let n = Number::from_lexeme("-0").unwrap();
        assert_eq!(n.as_i64(), Some(0));
        assert_eq!(n.as_u64(), Some(0));
        assert!(!n.is_negative());
        let huge = format!("1{}", "0".repeat(400));
        assert_eq!(Number::from_lexeme(&huge).unwrap().as_f64(), None);
    }

    #[test]
    fn pointer_mut_reaches_what_pointer_reads() {
        let mut v = crate::from_slice(br#"{"a":[{"b~/":1},2],"c":{}}"#).unwrap();
        *v.pointer_mut("/a/0/b~0~1").unwrap() = Value::from(7);
        assert_eq!(v.pointer("/a/0/b~0~1"), Some(&Value::from(7)));
        assert!(v.pointer_mut("/a/01").is_none());
        assert!(v.pointer_mut("/a/5").is_none());
        assert!(v.pointer_mut("/c/x").is_none());
        assert!(v.pointer_mut("").is_some());
    }

    #[test]
    fn object_equality_ignores_order() {
        let a: Object = [
            ("a".to_owned(), Value::from(1)),
            ("b".to_owned(), Value::Null),
        ]
        .into_iter()
        .collect();
        let b: Object = [
            ("b".to_owned(), Value::Null),
            ("a".to_owned(), Value::from(1)),
        ]
        .into_iter()
        .collect();
        assert_eq!(a, b);
    }
}
