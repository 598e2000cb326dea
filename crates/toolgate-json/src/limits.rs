//! Resource limits: every one is on by default and has a hard ceiling.

use std::fmt;

/// One of the parser's resource limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Length of the whole input, in bytes.
    InputBytes,
    /// Nesting of arrays and objects: `1` has depth 0, `[]` depth 1, `[[1]]` depth 2.
    Depth,
    /// Length of one string or member name after unescaping, in UTF-8 bytes.
    StringBytes,
    /// Members in one object.
    ObjectMembers,
    /// Items in one array.
    ArrayItems,
    /// Values in the whole document, containers included.
    Values,
}

impl Limit {
    /// Every limit, in a stable order.
    pub const ALL: [Limit; 6] = [
        Self::InputBytes,
        Self::Depth,
        Self::StringBytes,
        Self::ObjectMembers,
        Self::ArrayItems,
        Self::Values,
    ];

    /// The stable name of the limit, such as `max_depth`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::InputBytes => "max_input_bytes",
            Self::Depth => "max_depth",
            Self::StringBytes => "max_string_bytes",
            Self::ObjectMembers => "max_object_members",
            Self::ArrayItems => "max_array_items",
            Self::Values => "max_values",
        }
    }

    /// The value used when nothing else is configured.
    pub const fn default_value(self) -> usize {
        match self {
            Self::InputBytes => 8 << 20,
            Self::Depth => 64,
            Self::StringBytes => 1 << 20,
            Self::ObjectMembers => 10_000,
            Self::ArrayItems => 100_000,
            Self::Values => 1_000_000,
        }
    }

    /// The largest value the limit may be set to.
    ///
    /// The depth ceiling keeps every recursive walk over a parsed value
    /// (dropping, comparing, serializing) well inside a thread's stack.
    pub const fn ceiling(self) -> usize {
        match self {
            Self::InputBytes => 1 << 30,
            Self::Depth => 1024,
            Self::StringBytes => 1 << 30,
            Self::ObjectMembers => 10_000_000,
            Self::ArrayItems => 100_000_000,
            Self::Values => 100_000_000,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A limit was set to zero or above its ceiling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{limit}` must be between 1 and {ceiling}, got {requested}")]
pub struct LimitError {
    limit: Limit,
    requested: usize,
    ceiling: usize,
}

impl LimitError {
    /// The limit that was set.
    pub fn limit(&self) -> Limit {
        self.limit
    }

    /// The refused value.
    pub fn requested(&self) -> usize {
        self.requested
    }
}

/// The set of limits a parse runs under. [`Limits::default`] turns every one on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub(crate) input_bytes: usize,
    pub(crate) depth: usize,
    pub(crate) string_bytes: usize,
    pub(crate) object_members: usize,
    pub(crate) array_items: usize,
    pub(crate) values: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            input_bytes: Limit::InputBytes.default_value(),
            depth: Limit::Depth.default_value(),
            string_bytes: Limit::StringBytes.default_value(),
            object_members: Limit::ObjectMembers.default_value(),
            array_items: Limit::ArrayItems.default_value(),
            values: Limit::Values.default_value(),
        }
    }
}

impl Limits {
    /// Every limit at its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets one limit. A value of zero or above [`Limit::ceiling`] is refused:
    /// limits can be tuned, never switched off.
    pub fn set(mut self, limit: Limit, value: usize) -> Result<Self, LimitError> {
        let ceiling = limit.ceiling();
        if value == 0 || value > ceiling {
            return Err(LimitError {
                limit,
                requested: value,
                ceiling,
            });
        }
        *self.slot(limit) = value;
        Ok(self)
    }

    /// The current value of one limit.
    pub fn get(&self, limit: Limit) -> usize {
        match limit {
            Limit::InputBytes => self.input_bytes,
            Limit::Depth => self.depth,
            Limit::StringBytes => self.string_bytes,
            Limit::ObjectMembers => self.object_members,
            Limit::ArrayItems => self.array_items,
            Limit::Values => self.values,
        }
    }

    fn slot(&mut self, limit: Limit) -> &mut usize {
        match limit {
            Limit::InputBytes => &mut self.input_bytes,
            Limit::Depth => &mut self.depth,
            Limit::StringBytes => &mut self.string_bytes,
            Limit::ObjectMembers => &mut self.object_members,
            Limit::ArrayItems => &mut self.array_items,
            Limit::Values => &mut self.values,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_are_enforced() {
        for limit in Limit::ALL {
            assert!(Limits::new().set(limit, 0).is_err());
            assert!(Limits::new().set(limit, limit.ceiling() + 1).is_err());
            let l = Limits::new().set(limit, limit.ceiling()).unwrap();
            assert_eq!(l.get(limit), limit.ceiling());
            assert_eq!(Limits::new().get(limit), limit.default_value());
        }
    }

    #[test]
    fn error_names_the_limit() {
        let e = Limits::new().set(Limit::Depth, 5000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`max_depth` must be between 1 and 1024, got 5000"
        );
    }
}
