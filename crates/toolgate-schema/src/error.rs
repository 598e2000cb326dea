//! Compile errors and validation errors.

use std::fmt;

/// Why a schema could not be compiled. A stable wire code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompileErrorCode {
    /// A keyword toolgate does not know (strict mode only; standard mode ignores it).
    UnknownKeyword,
    /// A keyword toolgate knows but cannot enforce (for example `$recursiveRef`,
    /// a draft-07 `dependencies`, or a `format` it has no checker for in strict mode).
    UnsupportedKeyword,
    /// A keyword's value has the wrong type or is out of its allowed range.
    InvalidKeyword,
    /// A `pattern`, `patternProperties` key or similar is not an ECMA-262 regular expression.
    InvalidRegex,
    /// A `$ref` or `$dynamicRef` points nowhere in the registered documents.
    UnresolvableRef,
    /// The schema declares a `$schema` dialect other than draft 2020-12.
    UnsupportedDraft,
    /// A `format` name that has no checker, in a mode where `format` asserts.
    UnknownFormat,
    /// A URI given to the compiler (an `$id` or a registered document's URI) is malformed.
    InvalidUri,
    /// The schema needs more compiled nodes than the compiler allows.
    TooLarge,
}

impl CompileErrorCode {
    /// The code as written on the wire: `unknown_keyword`, `unresolvable_ref`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownKeyword => "unknown_keyword",
            Self::UnsupportedKeyword => "unsupported_keyword",
            Self::InvalidKeyword => "invalid_keyword",
            Self::InvalidRegex => "invalid_regex",
            Self::UnresolvableRef => "unresolvable_ref",
            Self::UnsupportedDraft => "unsupported_draft",
            Self::UnknownFormat => "unknown_format",
            Self::InvalidUri => "invalid_uri",
            Self::TooLarge => "too_large",
        }
    }
}

impl fmt::Display for CompileErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A schema could not be compiled: the code, the JSON Pointer of the offending
/// keyword in the schema, and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    // Boxed so that `Result<Schema, CompileError>` stays one pointer wide.
    inner: Box<CompileErrorImpl>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CompileErrorImpl {
    code: CompileErrorCode,
    pointer: String,
    message: String,
}

impl CompileError {
    pub(crate) fn new(
        code: CompileErrorCode,
        pointer: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            inner: Box::new(CompileErrorImpl {
                code,
                pointer: pointer.into(),
                message: message.into(),
            }),
        }
    }

    /// The stable code.
    pub fn code(&self) -> CompileErrorCode {
        self.inner.code
    }

    /// Where in the schema: a JSON Pointer to the keyword, prefixed with the
    /// document URI and `#` when the keyword is in a registered document.
    pub fn pointer(&self) -> &str {
        &self.inner.pointer
    }

    /// The message, lower-case, one line.
    pub fn message(&self) -> &str {
        &self.inner.message
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} at schema `{}`",
            self.inner.code, self.inner.message, self.inner.pointer
        )
    }
}

impl std::error::Error for CompileError {}

/// At most this many schema values or names are listed in one message.
const MAX_LISTED: usize = 10;
/// At most this many characters of one listed value are shown.
const MAX_SHOWN_CHARS: usize = 48;

/// Schema values (an `enum`'s, a `const`) for a message: canonical JSON in
/// backticks, at most [`MAX_LISTED`], each cut at [`MAX_SHOWN_CHARS`]
/// characters. Only ever called with values from the schema.
pub(crate) fn list_values<'a>(
    values: impl ExactSizeIterator<Item = &'a toolgate_json::Value<'a>>,
) -> String {
    let n = values.len();
    let shown = values
        .take(MAX_LISTED)
        .map(|v| toolgate_json::canonical::to_string(v));
    list(shown, n)
}

/// Schema names (declared members) for a message, as [`list_values`] does.
pub(crate) fn list_names<'a>(names: impl Iterator<Item = &'a str>, n: usize) -> String {
    list(names.take(MAX_LISTED).map(str::to_owned), n)
}

fn list(shown: impl Iterator<Item = String>, n: usize) -> String {
    let mut out = String::new();
    for (i, text) in shown.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('`');
        let mut chars = text.chars();
        out.extend(chars.by_ref().take(MAX_SHOWN_CHARS));
        if chars.next().is_some() {
            out.push('…');
        }
        out.push('`');
    }
    if n > MAX_LISTED {
        out.push_str(&format!(" and {} more", n - MAX_LISTED));
    }
    out
}

/// What an instance got wrong. A stable wire code that agents and operators
/// match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `type`: the value has another JSON type (in strict mode, `3.0` is not an integer).
    TypeMismatch,
    /// `required`, `dependentRequired`: a member is missing.
    MissingRequired,
    /// A member no schema allows: `additionalProperties: false`,
    /// `unevaluatedProperties: false`, or a closed object in strict mode.
    UnknownProperty,
    /// An array item no schema allows: `items: false`, `unevaluatedItems: false`.
    UnknownItem,
    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
    OutOfRange,
    /// `minLength`, `maxLength` (counted in code points).
    Length,
    /// `minItems`, `maxItems`, `minProperties`, `maxProperties`.
    Size,
    /// `pattern`.
    Pattern,
    /// `enum`.
    Enum,
    /// `const`.
    Const,
    /// `format`, when it asserts.
    Format,
    /// `multipleOf`.
    NotMultiple,
    /// `uniqueItems`.
    UniqueItems,
    /// `contains`, `minContains`, `maxContains`.
    Contains,
    /// `propertyNames`: a member name fails its schema.
    PropertyName,
    /// `anyOf`, `oneOf`, `not`.
    SchemaCombinator,
    /// The schema `false`.
    FalseSchema,
    /// The schema recursed deeper than the validator allows (a `$ref` loop that
    /// consumes no input). Fail closed.
    RecursionLimit,
}

impl ErrorCode {
    /// The code as written on the wire: `type_mismatch`, `missing_required`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TypeMismatch => "type_mismatch",
            Self::MissingRequired => "missing_required",
            Self::UnknownProperty => "unknown_property",
            Self::UnknownItem => "unknown_item",
            Self::OutOfRange => "out_of_range",
            Self::Length => "length",
            Self::Size => "size",
            Self::Pattern => "pattern",
            Self::Enum => "enum",
            Self::Const => "const",
            Self::Format => "format",
            Self::NotMultiple => "not_multiple",
            Self::UniqueItems => "unique_items",
            Self::Contains => "contains",
            Self::PropertyName => "property_name",
            Self::SchemaCombinator => "schema_combinator",
            Self::FalseSchema => "false_schema",
            Self::RecursionLimit => "recursion_limit",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One violation: a code, where in the instance (JSON Pointer), which schema
/// keyword (JSON Pointer into the schema), and a message built from the schema
/// alone.
///
/// No rendering of a `ValidationError` contains instance values: the message
/// describes the constraint (`expected integer`) and, in [`Display`](fmt::Display),
/// the JSON type that was found. [`ValidationError::masked`] leaves out the
/// found type and the schema location too, for feeding back to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    inner: Box<ValidationErrorImpl>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ValidationErrorImpl {
    code: ErrorCode,
    instance_pointer: String,
    keyword_location: String,
    message: String,
    found: &'static str,
}

impl ValidationError {
    pub(crate) fn new(
        code: ErrorCode,
        instance_pointer: String,
        keyword_location: &str,
        message: String,
        found: &'static str,
    ) -> Self {
        Self {
            inner: Box::new(ValidationErrorImpl {
                code,
                instance_pointer,
                keyword_location: keyword_location.to_owned(),
                message,
                found,
            }),
        }
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.inner.code
    }

    /// The JSON Pointer of the offending value in the instance (`""` is the root).
    pub fn instance_pointer(&self) -> &str {
        &self.inner.instance_pointer
    }

    /// The JSON Pointer of the keyword in the schema, for example
    /// `/properties/amount/maximum`. A keyword in a registered document is
    /// written `uri#pointer`.
    pub fn keyword_location(&self) -> &str {
        &self.inner.keyword_location
    }

    /// The constraint that was violated, from the schema alone: `expected integer`,
    /// `at most 10 code points`. Never contains instance values.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// A one-line rendering for a model: code, instance pointer, constraint.
    /// Never contains instance values nor the found type.
    pub fn masked(&self) -> String {
        format!(
            "{} at `{}`: {}",
            self.inner.code,
            display_pointer(&self.inner.instance_pointer),
            self.inner.message
        )
    }
}

fn display_pointer(p: &str) -> &str {
    if p.is_empty() {
        "/"
    } else {
        p
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at `{}`: {}, found {} (schema `{}`)",
            self.inner.code,
            display_pointer(&self.inner.instance_pointer),
            self.inner.message,
            self.inner.found,
            display_pointer(&self.inner.keyword_location)
        )
    }
}

impl std::error::Error for ValidationError {}

/// Every violation found, up to the cap set with [`crate::Options::max_errors`].
/// Never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationErrors {
    errors: Vec<ValidationError>,
    truncated: bool,
}

impl ValidationErrors {
    pub(crate) fn new(errors: Vec<ValidationError>, truncated: bool) -> Self {
        Self { errors, truncated }
    }

    /// The violations, in the order they were found.
    pub fn iter(&self) -> std::slice::Iter<'_, ValidationError> {
        self.errors.iter()
    }

    /// The number of violations listed.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Always `false`: a `ValidationErrors` lists at least one violation.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Whether more violations existed than the cap let through.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// The violations as a list.
    pub fn as_slice(&self) -> &[ValidationError] {
        &self.errors
    }

    /// One masked line per violation (see [`ValidationError::masked`]).
    pub fn masked(&self) -> String {
        let mut out = String::new();
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&e.masked());
        }
        if self.truncated {
            out.push_str("\nmore errors not shown");
        }
        out
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        if self.truncated {
            f.write_str("\nmore errors not shown")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

impl<'a> IntoIterator for &'a ValidationErrors {
    type Item = &'a ValidationError;
    type IntoIter = std::slice::Iter<'a, ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl IntoIterator for ValidationErrors {
    type Item = ValidationError;
    type IntoIter = std::vec::IntoIter<ValidationError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.into_iter()
    }
}
