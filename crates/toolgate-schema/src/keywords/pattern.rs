//! `pattern`: an ECMA-262 regular expression, unanchored, matched with `regress`.

use regress::Regex;
use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::{CompileError, CompileErrorCode, ErrorCode};
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `pattern` keyword.
#[derive(Debug)]
pub(crate) struct Pattern {
    regex: Regex,
    source: Box<str>,
    location: Box<str>,
}

/// Compiles an ECMA-262 pattern: with the `u` flag when the pattern is valid
/// in Unicode mode (so `\p{…}` and astral characters work), else without.
pub(crate) fn compile_regex(source: &str) -> Result<Regex, String> {
    match Regex::with_flags(source, "u") {
        Ok(r) => Ok(r),
        Err(first) => Regex::new(source).map_err(|_| first.to_string()),
    }
}

/// Compiles `pattern`: a string.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let source = v.as_str().ok_or_else(|| kw.invalid("a string"))?;
    let regex = compile_regex(source).map_err(|e| regex_error(kw, source, &e))?;
    Ok(boxed(Pattern {
        regex,
        source: source.into(),
        location: kw.location(),
    }))
}

/// The compile error for a bad pattern.
pub(crate) fn regex_error(kw: &Kw<'_, '_>, source: &str, e: &str) -> CompileError {
    kw.error(
        CompileErrorCode::InvalidRegex,
        format!("`{source}` is not an ECMA-262 regular expression: {e}"),
    )
}

impl Keyword for Pattern {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::String(s) = v else { return true };
        let ok = self.regex.find(s).is_some();
        if !ok {
            cx.fail(ErrorCode::Pattern, at, &self.location, v, || {
                format!("expected to match `{}`", self.source)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check;

    #[test]
    fn ecma_semantics_unanchored() {
        assert!(check(r#"{"pattern":"^[a-z]+$"}"#, "\"abc\""));
        assert!(!check(r#"{"pattern":"^[a-z]+$"}"#, "\"abc1\""));
        assert!(check(r#"{"pattern":"b"}"#, "\"abc\""));
        assert!(check(r#"{"pattern":"\\p{L}"}"#, "\"é\""));
        assert!(!check(r#"{"pattern":"^\\d$"}"#, "\"\u{0663}\""));
    }
}
