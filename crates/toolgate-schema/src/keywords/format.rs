//! `format`: an assertion in strict mode (a name without a checker is a
//! compile error there); an annotation in standard mode unless format
//! assertion is turned on (by option or by the dialect's vocabulary).

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::{CompileErrorCode, ErrorCode};
use crate::format::{checker, Checker};
use crate::options::Mode;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled, asserting `format` keyword.
#[derive(Debug)]
pub(crate) struct Format {
    name: Box<str>,
    check: Checker,
    location: Box<str>,
}

/// Compiles `format`: a string.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let name = v.as_str().ok_or_else(|| kw.invalid("a string"))?;
    let strict = kw.mode() == Mode::Strict;
    let asserts = strict || kw.c.format_option || kw.s.format_vocab_asserts();
    if !asserts {
        return Ok(None);
    }
    match checker(name) {
        Some(check) => Ok(boxed(Format {
            name: name.into(),
            check,
            location: kw.location(),
        })),
        None if strict => Err(kw.error(
            CompileErrorCode::UnknownFormat,
            format!("format `{name}` has no checker; toolgate refuses what it cannot enforce"),
        )),
        None => Ok(None),
    }
}

impl Keyword for Format {
    fn part(&self) -> Part<'_> {
        Part::ScalarOnly
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::String(s) = v else { return true };
        let ok = (self.check)(s);
        if !ok {
            cx.fail(ErrorCode::Format, at, &self.location, v, || {
                format!("expected format `{}`", self.name)
            });
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{check, check_standard};

    #[test]
    fn asserts_in_strict_mode_only() {
        let s = r#"{"format":"ipv4"}"#;
        assert!(!check(s, "\"1.2.3\""));
        assert!(check_standard(s, "\"1.2.3\""));
        assert!(check(s, "\"1.2.3.4\""));
    }
}
