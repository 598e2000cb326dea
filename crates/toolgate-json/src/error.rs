//! Parse errors: a stable code, a position and the JSON Pointer of the place.

use std::fmt;

/// What went wrong, as a stable machine-readable code.
///
/// The string returned by [`ErrorCode::as_str`] is a wire contract: agents and
/// operators match on it, so an existing code never changes its spelling or
/// meaning. New codes may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The input is not well-formed UTF-8 (overlong forms, encoded surrogates,
    /// code points above U+10FFFF, stray continuation bytes, UTF-16/32 text).
    InvalidUtf8,
    /// The input starts with a UTF-8 byte order mark.
    ByteOrderMark,
    /// A `\u` escape leaves a lone, or reversed, UTF-16 surrogate.
    LoneSurrogate,
    /// A Unicode noncharacter (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), raw or escaped.
    Noncharacter,
    /// A raw control character (U+0000..U+001F) inside a string.
    ControlCharacter,
    /// A backslash escape that JSON does not define, or a malformed `\u` escape.
    InvalidEscape,
    /// An object member name appears twice in one object (compared after unescaping).
    DuplicateKey,
    /// A number that is not finite: it overflows an IEEE double (`1e400`), or
    /// is one of the non-JSON literals `NaN`, `Infinity`, `-Infinity`.
    NonFiniteNumber,
    /// A non-zero number that underflows to zero as an IEEE double (`1e-400`).
    NumberOutOfRange,
    /// A non-integer number written with more precision than the IEEE
    /// double it becomes holds (`100.00000000000000000001`): its decimal
    /// value differs from that of the double's shortest round-trip form, so
    /// the value checked and handed on would not be the value written.
    /// Refused unless [`crate::ParseOptions::allow_rounding`].
    NumberTooPrecise,
    /// More nested arrays and objects than the depth limit allows.
    TooDeep,
    /// The input is longer than the input-bytes limit.
    TooLarge,
    /// A string (after unescaping) is longer than the string-bytes limit.
    StringTooLong,
    /// An object has more members than the members limit allows.
    TooManyMembers,
    /// An array has more items than the items limit allows.
    TooManyItems,
    /// The document holds more values in total than the values limit allows.
    TooManyValues,
    /// The input ends before the JSON text is complete (`{"amount": 300`).
    Truncated,
    /// A complete JSON text is followed by more than whitespace.
    TrailingData,
    /// Any other violation of the RFC 8259 grammar.
    InvalidSyntax,
}

impl ErrorCode {
    /// The stable wire name of the code, such as `duplicate_key`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "invalid_utf8",
            Self::ByteOrderMark => "byte_order_mark",
            Self::LoneSurrogate => "lone_surrogate",
            Self::Noncharacter => "noncharacter",
            Self::ControlCharacter => "control_character",
            Self::InvalidEscape => "invalid_escape",
            Self::DuplicateKey => "duplicate_key",
            Self::NonFiniteNumber => "non_finite_number",
            Self::NumberOutOfRange => "number_out_of_range",
            Self::NumberTooPrecise => "number_too_precise",
            Self::TooDeep => "too_deep",
            Self::TooLarge => "too_large",
            Self::StringTooLong => "string_too_long",
            Self::TooManyMembers => "too_many_members",
            Self::TooManyItems => "too_many_items",
            Self::TooManyValues => "too_many_values",
            Self::Truncated => "truncated",
            Self::TrailingData => "trailing_data",
            Self::InvalidSyntax => "invalid_syntax",
        }
    }

    /// Every code, in a stable order (for documentation and tests).
    pub const ALL: [ErrorCode; 19] = [
        Self::InvalidUtf8,
        Self::ByteOrderMark,
        Self::LoneSurrogate,
        Self::Noncharacter,
        Self::ControlCharacter,
        Self::InvalidEscape,
        Self::DuplicateKey,
        Self::NonFiniteNumber,
        Self::NumberOutOfRange,
        Self::NumberTooPrecise,
        Self::TooDeep,
        Self::TooLarge,
        Self::StringTooLong,
        Self::TooManyMembers,
        Self::TooManyItems,
        Self::TooManyValues,
        Self::Truncated,
        Self::TrailingData,
        Self::InvalidSyntax,
    ];

    /// A short description for people. Never contains input text.
    pub const fn description(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "invalid utf-8",
            Self::ByteOrderMark => "byte order mark is not allowed",
            Self::LoneSurrogate => "escape leaves a lone surrogate",
            Self::Noncharacter => "unicode noncharacter is not allowed",
            Self::ControlCharacter => "raw control character in string",
            Self::InvalidEscape => "invalid escape sequence",
            Self::DuplicateKey => "duplicate member name",
            Self::NonFiniteNumber => "number is not finite",
            Self::NumberOutOfRange => "non-zero number underflows to zero",
            Self::NumberTooPrecise => "number has more precision than a double holds",
            Self::TooDeep => "nesting exceeds the depth limit",
            Self::TooLarge => "input exceeds the size limit",
            Self::StringTooLong => "string exceeds the length limit",
            Self::TooManyMembers => "object exceeds the members limit",
            Self::TooManyItems => "array exceeds the items limit",
            Self::TooManyValues => "document exceeds the values limit",
            Self::Truncated => "input ends early",
            Self::TrailingData => "trailing data after the json value",
            Self::InvalidSyntax => "invalid json syntax",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rejected JSON text: what ([`Error::code`]), where in the bytes
/// ([`Error::offset`], [`Error::line`], [`Error::column`]) and where in the
/// document ([`Error::pointer`]).
///
/// The `Display` rendering never contains text taken from the input; the
/// duplicated member name is only available through [`Error::key`].
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    // Boxed so that `Result<Value, Error>` stays two words wide.
    inner: Box<ErrorImpl>,
}

#[derive(Clone, PartialEq, Eq)]
struct ErrorImpl {
    code: ErrorCode,
    offset: usize,
    line: usize,
    column: usize,
    pointer: String,
    key: Option<String>,
}

impl Error {
    pub(crate) fn new(
        code: ErrorCode,
        input: &[u8],
        offset: usize,
        pointer: String,
        key: Option<String>,
    ) -> Self {
        let offset = offset.min(input.len());
        let before = input.get(..offset).unwrap_or_default();
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let column = offset - line_start + 1;
        Self {
            inner: Box::new(ErrorImpl {
                code,
                offset,
                line,
                column,
                pointer,
                key,
            }),
        }
    }

    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        self.inner.code
    }

    /// Zero-based byte offset of the offending byte in the input.
    pub fn offset(&self) -> usize {
        self.inner.offset
    }

    /// One-based line number (lines end at `\n`).
    pub fn line(&self) -> usize {
        self.inner.line
    }

    /// One-based column, counted in bytes from the start of the line.
    pub fn column(&self) -> usize {
        self.inner.column
    }

    /// The JSON Pointer (RFC 6901) of the value being read when the error was
    /// found; `""` is the whole document. For [`ErrorCode::DuplicateKey`] this
    /// is the pointer of the object that holds the duplicated name.
    pub fn pointer(&self) -> &str {
        &self.inner.pointer
    }

    /// For [`ErrorCode::DuplicateKey`], the duplicated member name (unescaped).
    ///
    /// This is input text: do not show it to a model or write it to logs
    /// that must not hold argument values.
    pub fn key(&self) -> Option<&str> {
        self.inner.key.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} at line {} column {}",
            self.inner.code.as_str(),
            self.inner.code.description(),
            self.inner.line,
            self.inner.column
        )?;
        if self.inner.code == ErrorCode::DuplicateKey {
            write!(f, " in object at `{}`", self.inner.pointer)
        } else {
            write!(f, " at `{}`", self.inner.pointer)
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug output may end up in logs: keep the member name out of it.
        f.debug_struct("Error")
            .field("code", &self.inner.code)
            .field("offset", &self.inner.offset)
            .field("line", &self.inner.line)
            .field("column", &self.inner.column)
            .field("pointer", &self.inner.pointer)
            .finish()
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()));
            assert!(code
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
        }
    }

    #[test]
    fn line_and_column_are_one_based() {
        let e = Error::new(ErrorCode::InvalidSyntax, b"[1,\n  x]", 6, "/1".into(), None);
        assert_eq!((e.line(), e.column(), e.offset()), (2, 3, 6));
        assert_eq!(
            e.to_string(),
            "invalid_syntax: invalid json syntax at line 2 column 3 at `/1`"
        );
    }
}
