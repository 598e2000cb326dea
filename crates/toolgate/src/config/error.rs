//! Config errors: what went wrong, in which file, at which line and column
//! (or JSON Pointer, for imported JSON files), under which key.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a config (or an imported tool list) was refused. A stable wire code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// A file could not be read.
    Io,
    /// The TOML text is not valid TOML.
    TomlSyntax,
    /// A key the config does not know.
    UnknownKey,
    /// A required key is missing.
    MissingKey,
    /// A value has the wrong type (a string where a number belongs, …).
    InvalidType,
    /// A value has the right type but is not allowed (an unknown risk tier,
    /// an empty store URL, a bad entity type, …).
    InvalidValue,
    /// Two keys that exclude each other are both given (`schema` and `schema_json`).
    ConflictingKeys,
    /// A limit is zero, above its hard ceiling, or (for a tool) above the gate's.
    InvalidLimit,
    /// A tool name is empty, has surrounding whitespace or control characters.
    InvalidName,
    /// Two tools have the same name.
    DuplicateTool,
    /// A tool has no schema: none in the config and no imported tool of that name.
    MissingSchema,
    /// A JSON text (a schema file, `schema_json`, an imported tool list) is
    /// refused by the strict parser.
    InvalidJson,
    /// An inline TOML schema has no JSON form (a date-time, a NaN or infinite float).
    InvalidSchemaValue,
    /// A schema's root is not an object schema (`"type": "object"`).
    SchemaNotObject,
    /// A schema does not compile in strict mode.
    SchemaCompile,
    /// A JSON Pointer is malformed (RFC 6901) or empty where a property is needed.
    InvalidPointer,
    /// A JSON Pointer does not name a property declared by the tool's schema.
    UndeclaredProperty,
    /// A URL policy is malformed (no hosts, a bad scheme or host pattern, port 0, …).
    InvalidUrlPolicy,
    /// An imported tool list does not have the shape of its format.
    InvalidImport,
    /// A tool's schema `$ref`s fan out too far to find its URL arguments
    /// (strings with `format` `uri`, `uri-reference`, `iri` or
    /// `iri-reference`, which the default URL guard checks), and the tool
    /// does not opt out with `url_policy = "none"`.
    UnguardedUrl,
    /// The `[resolver]` table is malformed (an unknown mode, a bad name or
    /// address in the static table).
    InvalidResolver,
    /// A `url_unchecked` entry is malformed (no reason, a bad pointer).
    InvalidUrlUnchecked,
}

impl ErrorCode {
    /// The code as written on the wire: `unknown_key`, `schema_compile`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Io => "io",
            Self::TomlSyntax => "toml_syntax",
            Self::UnknownKey => "unknown_key",
            Self::MissingKey => "missing_key",
            Self::InvalidType => "invalid_type",
            Self::InvalidValue => "invalid_value",
            Self::ConflictingKeys => "conflicting_keys",
            Self::InvalidLimit => "invalid_limit",
            Self::InvalidName => "invalid_name",
            Self::DuplicateTool => "duplicate_tool",
            Self::MissingSchema => "missing_schema",
            Self::InvalidJson => "invalid_json",
            Self::InvalidSchemaValue => "invalid_schema_value",
            Self::SchemaNotObject => "schema_not_object",
            Self::SchemaCompile => "schema_compile",
            Self::InvalidPointer => "invalid_pointer",
            Self::UndeclaredProperty => "undeclared_property",
            Self::InvalidUrlPolicy => "invalid_url_policy",
            Self::InvalidImport => "invalid_import",
            Self::UnguardedUrl => "unguarded_url",
            Self::InvalidResolver => "invalid_resolver",
            Self::InvalidUrlUnchecked => "invalid_url_unchecked",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused config: the [`ErrorCode`], the file, the place in it (line and
/// column for TOML and JSON texts, a JSON Pointer for a place in an imported
/// tool list), the key and the tool concerned, and the underlying error.
///
/// The `Display` rendering is one line, `file:line:column: tool `name`:
/// message`, and already summarizes the underlying error (which
/// [`std::error::Error::source`] still returns).
pub struct Error {
    // Boxed so that `Result<Config, Error>` stays one pointer wide.
    inner: Box<ErrorImpl>,
}

struct ErrorImpl {
    code: ErrorCode,
    file: PathBuf,
    line: Option<usize>,
    column: Option<usize>,
    pointer: Option<String>,
    key: Option<String>,
    tool: Option<String>,
    message: String,
    cause: Option<Cause>,
}

/// The underlying error, kept typed (never flattened into the message only).
#[derive(Debug)]
pub(crate) enum Cause {
    Io(std::io::Error),
    Toml(toml::de::Error),
    Json(toolgate_json::Error),
    Schema(toolgate_schema::CompileError),
    Limit(toolgate_json::LimitError),
}

impl Error {
    pub(crate) fn new(code: ErrorCode, file: &Path, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(ErrorImpl {
                code,
                file: file.to_path_buf(),
                line: None,
                column: None,
                pointer: None,
                key: None,
                tool: None,
                message: message.into(),
                cause: None,
            }),
        }
    }

    /// Places the error at a byte offset of `text` (the file's contents).
    pub(crate) fn at_offset(self, text: &str, offset: usize) -> Self {
        let (line, column) = line_column(text, offset);
        self.at_line_column(line, column)
    }

    pub(crate) fn at_line_column(mut self, line: usize, column: usize) -> Self {
        self.inner.line = Some(line);
        self.inner.column = Some(column);
        self
    }

    pub(crate) fn at_pointer(mut self, pointer: impl Into<String>) -> Self {
        self.inner.pointer = Some(pointer.into());
        self
    }

    pub(crate) fn key(mut self, key: impl Into<String>) -> Self {
        self.inner.key = Some(key.into());
        self
    }

    pub(crate) fn tool(mut self, tool: &str) -> Self {
        self.inner.tool = Some(tool.to_owned());
        self
    }

    pub(crate) fn cause(mut self, cause: Cause) -> Self {
        self.inner.cause = Some(cause);
        self
    }

    /// The stable error code.
    pub fn code(&self) -> ErrorCode {
        self.inner.code
    }

    /// The file the error is in: the config, a schema file or an imported
    /// tool list.
    pub fn file(&self) -> &Path {
        &self.inner.file
    }

    /// One-based line in [`Error::file`], when the error has a text position.
    pub fn line(&self) -> Option<usize> {
        self.inner.line
    }

    /// One-based column in [`Error::file`], counted in characters, when the
    /// error has a text position.
    pub fn column(&self) -> Option<usize> {
        self.inner.column
    }

    /// The JSON Pointer of the place in an imported tool list.
    pub fn pointer(&self) -> Option<&str> {
        self.inner.pointer.as_deref()
    }

    /// The config key concerned, such as `schema` or `max_depth`.
    pub fn config_key(&self) -> Option<&str> {
        self.inner.key.as_deref()
    }

    /// The name of the tool concerned.
    pub fn tool_name(&self) -> Option<&str> {
        self.inner.tool.as_deref()
    }

    /// The message, without the file, position and tool prefix.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The strict parser's error, when a JSON text was refused.
    pub fn json_error(&self) -> Option<&toolgate_json::Error> {
        match &self.inner.cause {
            Some(Cause::Json(e)) => Some(e),
            _ => None,
        }
    }

    /// The schema compiler's error, when a schema did not compile.
    pub fn compile_error(&self) -> Option<&toolgate_schema::CompileError> {
        match &self.inner.cause {
            Some(Cause::Schema(e)) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        write!(f, "{}", i.file.display())?;
        if let (Some(line), Some(column)) = (i.line, i.column) {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(p) = &i.pointer {
            write!(f, ": at `{p}`")?;
        }
        if let Some(t) = &i.tool {
            write!(f, ": tool `{}`", t.escape_debug())?;
        }
        write!(f, ": {}", i.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("Error")
            .field("code", &i.code)
            .field("file", &i.file)
            .field("line", &i.line)
            .field("column", &i.column)
            .field("pointer", &i.pointer)
            .field("key", &i.key)
            .field("tool", &i.tool)
            .field("message", &i.message)
            .field("cause", &i.cause)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner.cause {
            Some(Cause::Io(e)) => Some(e),
            Some(Cause::Toml(e)) => Some(e),
            Some(Cause::Json(e)) => Some(e),
            Some(Cause::Schema(e)) => Some(e),
            Some(Cause::Limit(e)) => Some(e),
            None => None,
        }
    }
}

/// One-based line and column (in characters) of a byte offset in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or_default();
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// The byte offset where the key of the value starting at `value_start` begins
/// (`key = value`, `"quoted key" = value`, `a.b = value`); `value_start` itself
/// when no key is found before it.
pub(crate) fn key_start(text: &str, value_start: usize) -> usize {
    let Some(before) = text.get(..value_start) else {
        return value_start;
    };
    let Some(rest) = before.trim_end_matches([' ', '\t']).strip_suffix('=') else {
        return value_start;
    };
    let mut rest = rest.trim_end_matches([' ', '\t']);
    loop {
        let start = if let Some(inner) = rest.strip_suffix('"') {
            inner.rfind('"')
        } else if let Some(inner) = rest.strip_suffix('\'') {
            inner.rfind('\'')
        } else {
            let bare = rest.trim_end_matches(is_bare_key_char);
            (bare.len() < rest.len()).then_some(bare.len())
        };
        let Some(start) = start else {
            return value_start;
        };
        // A dotted key: keep going left over `.`.
        let head = rest.get(..start).unwrap_or_default();
        match head.trim_end_matches([' ', '\t']).strip_suffix('.') {
            Some(h) => rest = h.trim_end_matches([' ', '\t']),
            None => return start,
        }
    }
}

/// A character of a bare key (TOML 1.1 admits letters beyond ASCII).
fn is_bare_key_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The key at `offset` when a key starts there (a bare key followed by `=`
/// or `.`), as written.
pub(crate) fn key_at(text: &str, offset: usize) -> Option<&str> {
    let rest = text.get(offset..)?;
    let len = rest
        .find(|c: char| !is_bare_key_char(c))
        .unwrap_or(rest.len());
    let key = rest.get(..len)?;
    let after = rest.get(len..)?.trim_start_matches([' ', '\t']);
    (!key.is_empty() && (after.starts_with('=') || after.starts_with('.'))).then_some(key)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn positions() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(line_column(t, 0), (1, 1));
        assert_eq!(line_column(t, 6), (2, 1));
        let v = t.find('2').unwrap();
        assert_eq!(line_column(t, v), (2, 6));
        assert_eq!(key_start(t, v), 6);
        let t = "x = { \"q k\" = 3, a.b = 4 }";
        let three = t.find('3').unwrap();
        assert_eq!(key_start(t, three), t.find('"').unwrap());
        let four = t.find('4').unwrap();
        assert_eq!(key_start(t, four), t.find("a.b").unwrap());
        assert_eq!(key_at("name = 1", 0), Some("name"));
        assert_eq!(key_at("[gate]", 0), None);
    }
}
