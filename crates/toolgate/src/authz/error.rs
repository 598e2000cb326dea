//! Load errors of the Cedar authorizer: what, in which file, at which line
//! and column, for which policy.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why the Cedar policies, schema or entities were refused. A stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LoadErrorCode {
    /// A file could not be read.
    Io,
    /// The config names no Cedar authorization (no `policies`, or
    /// `mode = "none"`), or names policies without a schema.
    NotConfigured,
    /// The Cedar schema does not parse or is inconsistent.
    Schema,
    /// The policies do not parse.
    PolicySyntax,
    /// A policy does not type-check against the schema (strict validation).
    PolicyValidation,
    /// Two policies carry the same `@id`, or an `@id` is empty.
    DuplicatePolicyId,
    /// An annotation toolgate reads (`@code`) has a value it does not know.
    InvalidAnnotation,
    /// The file holds a policy template; toolgate loads static policies only.
    Template,
    /// An entities file is not strict JSON, or its entities do not conform
    /// to the schema (wrong attribute types, missing attributes, duplicates).
    Entities,
    /// A registered tool has no action in the Cedar schema, or its resource
    /// type is not declared there.
    UnknownAction,
    /// A tool's JSON Schema lets through a number that the Cedar type its
    /// argument is declared with cannot hold exactly (a `decimal` holds four
    /// fraction digits within ±922337203685477, a `Long` whole numbers
    /// within `i64`): a valid call would be denied for its type alone.
    UnrepresentableNumber,
    /// An entity source is misconfigured (a type not in the schema, or
    /// also trusted from the context; a base URL that is not one).
    EntitySource,
}

impl LoadErrorCode {
    /// The code as written on the wire: `policy_syntax`, `policy_validation`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Io => "io",
            Self::NotConfigured => "not_configured",
            Self::Schema => "schema",
            Self::PolicySyntax => "policy_syntax",
            Self::PolicyValidation => "policy_validation",
            Self::DuplicatePolicyId => "duplicate_policy_id",
            Self::InvalidAnnotation => "invalid_annotation",
            Self::Template => "template",
            Self::Entities => "entities",
            Self::UnknownAction => "unknown_action",
            Self::UnrepresentableNumber => "unrepresentable_number",
            Self::EntitySource => "entity_source",
        }
    }
}

impl fmt::Display for LoadErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Cedar policies, a schema or entities that cannot be loaded: the code, the
/// file, the one-based line and column when known, the policy id when one is
/// concerned, and the underlying Cedar error as [`std::error::Error::source`].
///
/// Rendered on one line: `file:line:column: policy `id`: message`.
pub struct LoadError {
    // Boxed so that `Result<CedarAuthorizer, LoadError>` stays small.
    inner: Box<Inner>,
}

struct Inner {
    code: LoadErrorCode,
    file: PathBuf,
    line: Option<usize>,
    column: Option<usize>,
    policy: Option<String>,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl LoadError {
    pub(crate) fn new(code: LoadErrorCode, file: &Path, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                code,
                file: file.to_path_buf(),
                line: None,
                column: None,
                policy: None,
                message: message.into(),
                source: None,
            }),
        }
    }

    /// Places the error at byte `offset` of `text`, the file's contents.
    pub(crate) fn at_offset(mut self, text: &str, offset: usize) -> Self {
        let (line, column) = line_column(text, offset);
        self.inner.line = Some(line);
        self.inner.column = Some(column);
        self
    }

    pub(crate) fn policy(mut self, id: impl Into<String>) -> Self {
        self.inner.policy = Some(id.into());
        self
    }

    pub(crate) fn source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.inner.source = Some(Box::new(source));
        self
    }

    /// The stable error code.
    pub fn code(&self) -> LoadErrorCode {
        self.inner.code
    }

    /// The file concerned: the policies, the schema, the entities or the config.
    pub fn file(&self) -> &Path {
        &self.inner.file
    }

    /// One-based line in [`LoadError::file`], when known.
    pub fn line(&self) -> Option<usize> {
        self.inner.line
    }

    /// One-based column (in characters), when known.
    pub fn column(&self) -> Option<usize> {
        self.inner.column
    }

    /// The id of the policy concerned, when one is.
    pub fn policy_id(&self) -> Option<&str> {
        self.inner.policy.as_deref()
    }

    /// The message, without the file, position and policy prefix.
    pub fn message(&self) -> &str {
        &self.inner.message
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        write!(f, "{}", i.file.display())?;
        if let (Some(line), Some(column)) = (i.line, i.column) {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(p) = &i.policy {
            write!(f, ": policy `{}`", p.escape_debug())?;
        }
        write!(f, ": {}", i.message)
    }
}

impl fmt::Debug for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("LoadError")
            .field("code", &i.code)
            .field("file", &i.file)
            .field("line", &i.line)
            .field("column", &i.column)
            .field("policy", &i.policy)
            .field("message", &i.message)
            .field("source", &i.source)
            .finish()
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// One-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset = offset.saturating_sub(1);
    }
    let before = text.get(..offset).unwrap_or_default();
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}
