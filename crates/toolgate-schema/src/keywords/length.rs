//! `minLength`, `maxLength`: string length in Unicode code points.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `minLength` or `maxLength` keyword.
#[derive(Debug)]
pub(crate) struct Length {
    limit: u64,
    max: bool,
    location: Box<str>,
}

/// Compiles `minLength`.
pub(crate) fn compile_min(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let limit = super::non_negative(kw, v)?;
    Ok(boxed(Length {
        limit,
        max: false,
        location: kw.location(),
    }))
}

/// Compiles `maxLength`.
pub(crate) fn compile_max(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let limit = super::non_negative(kw, v)?;
    Ok(boxed(Length {
        limit,
        max: true,
        location: kw.location(),
    }))
}

impl Keyword for Length {
    fn part(&self) -> Part<'_> {
        Part::ScalarOnly
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::String(s) = v else { return true };
        let bytes = s.len() as u64;
        let ok = if self.max {
            // Bytes bound code points from above.
            bytes <= self.limit || (s.chars().count() as u64) <= self.limit
        } else {
            // A code point is at most four bytes.
            bytes >= self.limit
                && (bytes / 4 >= self.limit || (s.chars().count() as u64) >= self.limit)
        };
        if !ok {
            cx.fail(ErrorCode::Length, at, &self.location, v, || {
                let rel = if self.max { "at most" } else { "at least" };
                format!("expected {rel} {} characters", self.limit)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn counts_code_points() {
        assert!(check(r#"{"maxLength":2}"#, "\"\u{1F600}\u{1F600}\""));
        assert!(!check(r#"{"minLength":3}"#, "\"\u{1F600}\u{1F600}\""));
        assert!(check(r#"{"maxLength":2}"#, "2"));
    }
}
