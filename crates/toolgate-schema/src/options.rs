//! Compile options: the mode, the error cap, format assertion, registered documents.

use toolgate_json::Value;

/// How closely the validator follows the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Mode {
    /// toolgate's default. On top of the specification:
    /// - `integer` accepts only integer lexemes (`3.0`, `1e2` and `-0.0` are
    ///   type errors; `-0` is an integer);
    /// - a schema that declares `properties` or `patternProperties` and says
    ///   nothing of `additionalProperties` or `unevaluatedProperties` is closed
    ///   (except in-place subschemas: `allOf`/`anyOf`/`oneOf`/`not`/`if`/`then`/`else`/
    ///   `dependentSchemas` branches, whose parent decides);
    /// - `format` is an assertion, and a `format` without a checker is a compile error;
    /// - an unknown keyword is a compile error.
    #[default]
    Strict,
    /// The specification exactly, as the JSON Schema Test Suite checks it:
    /// unknown keywords are ignored, `format` is an annotation unless
    /// [`Options::format_assertion`] turns it on.
    Standard,
}

/// How to compile a schema. Built once, used for any number of compilations.
///
/// ```
/// use toolgate_schema::{Mode, Options};
/// let options = Options::new().mode(Mode::Standard).max_errors(10);
/// assert_eq!(options.get_mode(), Mode::Standard);
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) mode: Mode,
    pub(crate) max_errors: usize,
    pub(crate) format_assertion: bool,
    pub(crate) documents: Vec<(String, Value<'static>)>,
}

impl Default for Options {
    fn default() -> Self {
        Self::new()
    }
}

impl Options {
    /// Strict mode, at most 100 errors, no registered documents.
    pub fn new() -> Self {
        Self {
            mode: Mode::Strict,
            max_errors: 100,
            format_assertion: false,
            documents: Vec::new(),
        }
    }

    /// Sets the mode.
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// The mode.
    pub fn get_mode(&self) -> Mode {
        self.mode
    }

    /// At most this many errors are listed by `validate` (at least 1).
    #[must_use]
    pub fn max_errors(mut self, max: usize) -> Self {
        self.max_errors = max.max(1);
        self
    }

    /// In standard mode, makes `format` an assertion (unknown formats stay
    /// ignored, as the specification says). Strict mode always asserts.
    #[must_use]
    pub fn format_assertion(mut self, on: bool) -> Self {
        self.format_assertion = on;
        self
    }

    /// Registers a document that `$ref`s may point to, under an absolute URI.
    /// Nothing is ever fetched: a `$ref` to an unregistered URI is a compile error.
    #[must_use]
    pub fn register(mut self, uri: impl Into<String>, document: Value<'_>) -> Self {
        self.documents.push((uri.into(), document.into_owned()));
        self
    }
}
