//! `minItems`, `maxItems`, `minProperties`, `maxProperties`.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

/// A compiled count bound.
#[derive(Debug)]
pub(crate) struct Size {
    limit: u64,
    max: bool,
    items: bool,
    location: Box<str>,
}

fn compile(kw: &mut Kw<'_, '_>, v: &Value, max: bool, items: bool) -> super::Compiled {
    let limit = super::non_negative(kw, v)?;
    Ok(boxed(Size {
        limit,
        max,
        items,
        location: kw.location(),
    }))
}

/// Compiles `minItems`.
pub(crate) fn compile_min_items(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, false, true)
}

/// Compiles `maxItems`.
pub(crate) fn compile_max_items(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, true, true)
}

/// Compiles `minProperties`.
pub(crate) fn compile_min_properties(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, false, false)
}

/// Compiles `maxProperties`.
pub(crate) fn compile_max_properties(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile(kw, v, true, false)
}

impl Keyword for Size {
    fn part(&self) -> Part<'_> {
        Part::Size {
            limit: self.limit,
            max: self.max,
            items: self.items,
        }
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let n = match (v, self.items) {
            (Value::Array(a), true) => a.len(),
            (Value::Object(o), false) => o.len(),
            _ => return true,
        } as u64;
        let ok = if self.max {
            n <= self.limit
        } else {
            n >= self.limit
        };
        if !ok {
            cx.fail(ErrorCode::Size, at, &self.location, v, || {
                let rel = if self.max { "at most" } else { "at least" };
                let what = if self.items { "items" } else { "members" };
                format!("expected {rel} {} {what}", self.limit)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn counts() {
        assert!(check(r#"{"maxItems":2}"#, "[1,2]"));
        assert!(!check(r#"{"maxItems":2}"#, "[1,2,3]"));
        assert!(!check(r#"{"minProperties":1}"#, "{}"));
        assert!(check(r#"{"minProperties":1}"#, "[]"));
    }
}
