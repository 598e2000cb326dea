//! One pass, value out: [`Checker::load`] checks a document as it is read
//! and tells a builder what it reads, so that the caller's own value (a
//! Python object, a typed struct) is made in the same pass, with no
//! [`toolgate_json::Value`] tree between.

use toolgate_json::{visit, Name, Read, Tape, Value, Visitor};

use crate::checker::Checker;
use crate::error::ValidationErrors;
use crate::schema::Schema;
use crate::stream::Walk;

/// What [`Checker::load`] tells: a [`Visitor`] that builds a value, and can
/// start over. The events are those of [`toolgate_json::Reader`], in
/// document order; they are told only while the document passes the
/// schema so far, and when the one-pass read leaves the verdict to the
/// tree, the builder is [`Build::restart`]ed and told the parsed value
/// again ([`toolgate_json::visit`]). Whatever it made before a restart, or
/// before a load that does not end in [`Loaded::Built`], is not the value.
///
/// A builder that returns `false` from an event stops the load
/// ([`Loaded::Stopped`]), say because it could not make a value; it keeps
/// its own reason.
pub trait Build: Visitor {
    /// Forgets what was told so far: the next event starts a new document.
    fn restart(&mut self);
}

/// A [`Tape`] builds the events themselves, to be told again elsewhere
/// (say, read and checked without a lock, the value made where it is held).
impl Build for Tape {
    fn restart(&mut self) {
        self.clear();
    }
}

/// How a [`Checker::load`] ended.
#[derive(Debug)]
#[non_exhaustive]
pub enum Loaded {
    /// Strict JSON, valid against the schema: the builder was told the
    /// whole document, once since its last restart.
    Built {
        /// Whether the document was checked and told in one pass, without
        /// a value tree.
        without_tree: bool,
    },
    /// Not accepted by the strict parser: the error
    /// [`toolgate_json::ParseOptions::parse`] gives.
    Malformed(toolgate_json::Error),
    /// Strict JSON, invalid against the schema: every violation, as
    /// [`Schema::validate`] lists them.
    Invalid(ValidationErrors),
    /// The builder stopped the load, and the document is strict JSON
    /// valid against the schema (a refusal is told first).
    Stopped,
}

impl Checker {
    /// Checks one raw JSON text against `schema` and tells `builder` the
    /// document as it is read, in one pass: on [`Loaded::Built`] the
    /// builder has made the checked value. The verdicts and errors are
    /// those of [`Checker::check`] (the tree path's on every input); the
    /// canonical text is not written.
    ///
    /// ```
    /// use toolgate_json::{from_str, visit, ParseOptions, Tape};
    /// use toolgate_schema::{Checker, Loaded, Options, Schema};
    ///
    /// let schema = from_str(r#"{"type":"object","properties":{"n":{"type":"integer","maximum":5}}}"#)?;
    /// let schema = Schema::compile(&schema, &Options::new())?;
    /// let mut checker = Checker::new(ParseOptions::new());
    /// let mut tape = Tape::new();
    ///
    /// assert!(matches!(checker.load(&schema, br#"{"n": 3}"#, &mut tape), Loaded::Built { without_tree: true }));
    /// let mut told = Tape::new();
    /// visit(&from_str(r#"{"n":3}"#)?, &mut told);
    /// assert_eq!(tape, told);
    ///
    /// match checker.load(&schema, br#"{"n": 7}"#, &mut tape) {
    ///     Loaded::Invalid(errors) => assert_eq!(errors.as_slice()[0].code().as_str(), "out_of_range"),
    ///     other => panic!("{other:?}"),
    /// }
    /// assert!(matches!(checker.load(&schema, br#"{"n": 1, "n": 2}"#, &mut tape), Loaded::Malformed(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load<B: Build + ?Sized>(
        &mut self,
        schema: &Schema,
        input: &[u8],
        builder: &mut B,
    ) -> Loaded {
        builder.restart();
        let compiled = schema.compiled();
        if !compiled.uses_dynamic_scope {
            let mut both = Both {
                walk: Walk::new(compiled, &mut self.frames),
                builder: &mut *builder,
                stopped: false,
            };
            let read = self.reader.scan(input, &mut both);
            let stopped = both.stopped;
            match read {
                Read::Accepted => return Loaded::Built { without_tree: true },
                // The builder stopped (it keeps its reason) before the
                // verdict: a refusal of the document still comes first.
                _ if stopped => {
                    return match self.tree(schema, input) {
                        Ok(_) => Loaded::Stopped,
                        Err(refused) => refused,
                    }
                }
                _ => builder.restart(),
            }
        }
        let value = match self.tree(schema, input) {
            Ok(value) => value,
            Err(refused) => return refused,
        };
        if visit(&value, builder) {
            Loaded::Built {
                without_tree: false,
            }
        } else {
            Loaded::Stopped
        }
    }
}

impl Checker {
    /// The tree path: the parsed value when it is valid, or the refusal
    /// that explains why not.
    fn tree<'i>(&self, schema: &Schema, input: &'i [u8]) -> Result<Value<'i>, Loaded> {
        let value = self
            .reader
            .options()
            .parse(input)
            .map_err(Loaded::Malformed)?;
        schema.validate(&value).map_err(Loaded::Invalid)?;
        Ok(value)
    }
}

/// The schema walk and the builder on one read: the walk hears each event
/// first, and the builder only what the walk let pass.
struct Both<'w, 'b, B: ?Sized> {
    walk: Walk<'w>,
    builder: &'b mut B,
    /// Whether the builder (not the walk) stopped the read.
    stopped: bool,
}

impl<B: Build + ?Sized> Both<'_, '_, B> {
    #[inline(always)]
    fn built(&mut self, on: bool) -> bool {
        self.stopped = !on;
        on
    }
}

impl<B: Build + ?Sized> Visitor for Both<'_, '_, B> {
    #[inline]
    fn begin_object(&mut self) -> bool {
        self.walk.begin_object() && {
            let on = self.builder.begin_object();
            self.built(on)
        }
    }

    fn member(&mut self, name: &str) -> bool {
        self.member_name(name) != Name::Stop
    }

    #[inline]
    fn member_name(&mut self, name: &str) -> Name {
        let said = self.walk.member_name(name);
        if said == Name::Stop {
            return said;
        }
        let on = self.builder.member(name);
        if self.built(on) {
            said
        } else {
            Name::Stop
        }
    }

    #[inline]
    fn end_object(&mut self) -> bool {
        self.walk.end_object() && {
            let on = self.builder.end_object();
            self.built(on)
        }
    }

    #[inline]
    fn begin_array(&mut self) -> bool {
        self.walk.begin_array() && {
            let on = self.builder.begin_array();
            self.built(on)
        }
    }

    #[inline]
    fn end_array(&mut self) -> bool {
        self.walk.end_array() && {
            let on = self.builder.end_array();
            self.built(on)
        }
    }

    #[inline]
    fn scalar(&mut self, value: &Value<'_>) -> bool {
        self.walk.scalar(value) && {
            let on = self.builder.scalar(value);
            self.built(on)
        }
    }

    #[inline]
    fn string(&mut self, s: &str) -> bool {
        self.walk.string(s) && {
            let on = self.builder.string(s);
            self.built(on)
        }
    }
}
