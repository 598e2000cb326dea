//! The strict path with no tree: raw bytes in, a [`Checked`] out.

use toolgate_json::canonical::Digest;
use toolgate_json::{ParseOptions, Read, Reader};

use crate::error::ValidationErrors;
use crate::schema::Schema;
use crate::stream::{Frame, Walk};

/// A reusable strict checker: raw argument bytes in, a [`Checked`] out. On
/// success, the canonical text (RFC 8785) and its digest; on a rejection,
/// the parse error or every schema violation.
///
/// The document is validated while it is read
/// ([`toolgate_json::Reader`]), with no value tree, for the schemas and
/// documents this path covers (objects and arrays under `type`,
/// `properties`, `additionalProperties`, `required`, `items`,
/// `prefixItems`, the size keywords and `$ref`; any scalar keyword). A
/// document it does not accept this way — invalid, or under a keyword it
/// leaves to the tree (`anyOf`, `enum` of objects, `unevaluated*`, …) —
/// takes the tree path ([`toolgate_json::ParseOptions::parse`], then
/// [`Schema::validate`]), which decides and explains. The verdicts are the
/// tree path's on every input, and so is the canonical text.
///
/// A checker keeps its buffers between calls; keep one per thread.
///
/// ```
/// use toolgate_json::{from_str, ParseOptions};
/// use toolgate_schema::{Checked, Checker, Options, Schema};
///
/// let schema = from_str(r#"{"type":"object","properties":{"amount":{"type":"integer","maximum":500}},"required":["amount"]}"#)?;
/// let schema = Schema::compile(&schema, &Options::new())?;
/// let mut checker = Checker::new(ParseOptions::new());
///
/// match checker.check(&schema, br#"{ "amount": 300 }"#) {
///     Checked::Valid(ok) => assert_eq!(ok.canonical(), r#"{"amount":300}"#),
///     other => panic!("{other:?}"),
/// }
/// match checker.check(&schema, br#"{"amount": 300.0}"#) {
///     Checked::Invalid(errors) => assert_eq!(errors.as_slice()[0].code().as_str(), "type_mismatch"),
///     other => panic!("{other:?}"),
/// }
/// assert!(matches!(checker.check(&schema, br#"{"amount":1,"amount":2}"#), Checked::Malformed(_)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Checker {
    pub(crate) reader: Reader,
    pub(crate) frames: Vec<Frame>,
    /// The canonical text when the tree path decided.
    fallback: String,
}

/// What [`Checker::check`] found.
#[derive(Debug)]
#[non_exhaustive]
pub enum Checked<'c> {
    /// Strict JSON, valid against the schema.
    Valid(Valid<'c>),
    /// Not accepted by the strict parser.
    Malformed(toolgate_json::Error),
    /// Strict JSON, invalid against the schema: every violation.
    Invalid(ValidationErrors),
}

/// An accepted document: its canonical text, what a tool receives.
#[derive(Debug, Clone, Copy)]
pub struct Valid<'c> {
    canonical: &'c str,
    without_tree: bool,
}

impl Valid<'_> {
    /// The canonical text (RFC 8785, exact integers), byte for byte
    /// [`toolgate_json::canonical::to_string`] of the parsed value.
    pub fn canonical(&self) -> &str {
        self.canonical
    }

    /// The SHA-256 digest of the canonical text.
    pub fn digest(&self) -> Digest {
        Digest::of(self.canonical.as_bytes())
    }

    /// Whether the verdict was reached without building a value tree.
    pub fn without_tree(&self) -> bool {
        self.without_tree
    }
}

impl Checker {
    /// A checker reading with these options (the tool's limits).
    pub fn new(options: ParseOptions) -> Self {
        Self {
            reader: Reader::new(options),
            ..Self::default()
        }
    }

    /// The parse options in force.
    pub fn options(&self) -> &ParseOptions {
        self.reader.options()
    }

    /// Whether one raw JSON text is valid against `schema`: the verdict of
    /// [`Checker::check`] without the canonical text (less work), for a
    /// caller that needs only the verdict.
    pub fn is_valid(&mut self, schema: &Schema, input: &[u8]) -> bool {
        let compiled = schema.compiled();
        if !compiled.uses_dynamic_scope {
            let mut walk = Walk::new(compiled, &mut self.frames);
            if self.reader.scan(input, &mut walk) == Read::Accepted {
                return true;
            }
        }
        self.reader
            .options()
            .parse(input)
            .is_ok_and(|value| schema.is_valid(&value))
    }

    /// Checks one raw JSON text against `schema`.
    pub fn check<'c>(&'c mut self, schema: &Schema, input: &[u8]) -> Checked<'c> {
        let compiled = schema.compiled();
        if !compiled.uses_dynamic_scope {
            let mut walk = Walk::new(compiled, &mut self.frames);
            if self.reader.read(input, &mut walk) == Read::Accepted {
                return Checked::Valid(Valid {
                    canonical: self.reader.canonical(),
                    without_tree: true,
                });
            }
        }
        // The tree path decides, and explains a rejection.
        let value = match self.reader.options().parse(input) {
            Ok(value) => value,
            Err(e) => return Checked::Malformed(e),
        };
        if !schema.is_valid(&value) {
            if let Err(errors) = schema.validate(&value) {
                return Checked::Invalid(errors);
            }
        }
        self.fallback = toolgate_json::canonical::to_string(&value);
        Checked::Valid(Valid {
            canonical: &self.fallback,
            without_tree: false,
        })
    }
}
