//! The public compiled schema.

use std::sync::Arc;

use toolgate_json::Value;

use crate::compiler::Compiler;
use crate::error::{CompileError, ValidationErrors};
use crate::options::{Mode, Options};
use crate::validator::{Ann, Compiled, Cx, Path};

/// A compiled schema: immutable, `Send + Sync`, cheap to clone.
#[derive(Debug, Clone)]
pub struct Schema {
    inner: Arc<Compiled>,
}

impl Schema {
    /// Compiles a JSON Schema (draft 2020-12).
    ///
    /// # Errors
    ///
    /// A [`CompileError`] with the code and the schema pointer of the first
    /// keyword that cannot be compiled (or, in strict mode, enforced).
    pub fn compile(schema: &Value, options: &Options) -> Result<Self, CompileError> {
        Ok(Self {
            inner: Arc::new(Compiler::compile(schema, options)?),
        })
    }

    /// Whether `instance` is valid. Stops at the first violation.
    pub fn is_valid(&self, instance: &Value) -> bool {
        let mut cx = Cx::new(&self.inner, false);
        self.inner.eval(
            self.inner.root,
            instance,
            &Path::Root,
            &mut cx,
            &mut Ann::off(),
        )
    }

    /// Validates `instance`, listing every violation up to the error cap.
    ///
    /// # Errors
    ///
    /// [`ValidationErrors`], never empty, when `instance` is invalid.
    pub fn validate(&self, instance: &Value) -> Result<(), ValidationErrors> {
        let mut cx = Cx::new(&self.inner, true);
        let ok = self.inner.eval(
            self.inner.root,
            instance,
            &Path::Root,
            &mut cx,
            &mut Ann::off(),
        );
        if ok {
            return Ok(());
        }
        let mut errors = cx.errors;
        if errors.is_empty() {
            // INVARIANT: a failing keyword records an error while collecting;
            // fail closed with a generic one if one ever does not.
            errors.push(crate::error::ValidationError::new(
                crate::ErrorCode::SchemaCombinator,
                String::new(),
                "",
                "the value does not match the schema".to_owned(),
                instance.type_name(),
            ));
        }
        Err(ValidationErrors::new(errors, cx.truncated))
    }

    /// The compiled validator.
    pub(crate) fn compiled(&self) -> &Compiled {
        &self.inner
    }

    /// The mode the schema was compiled in.
    pub fn mode(&self) -> Mode {
        self.inner.mode
    }
}
