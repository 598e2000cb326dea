//! `patternProperties`: members whose names match a pattern against its schema.

use regress::Regex;
use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `patternProperties` keyword.
#[derive(Debug)]
pub(crate) struct PatternProperties {
    patterns: Vec<(Regex, NodeId)>,
}

/// Compiles the patterns of a `patternProperties` object (used by
/// `additionalProperties` too).
pub(crate) fn regexes(kw: &Kw<'_, '_>, v: &Value) -> Result<Vec<Regex>, crate::CompileError> {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of schemas"))?;
    o.keys()
        .map(|k| super::compile_regex(k).map_err(|e| super::pattern::regex_error(kw, k, &e)))
        .collect()
}

/// Compiles `patternProperties`: an object from patterns to schemas.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of schemas"))?;
    let res = regexes(kw, v)?;
    let mut patterns = Vec::with_capacity(res.len());
    for (re, k) in res.into_iter().zip(o.keys()) {
        patterns.push((re, kw.sub(&[k])?));
    }
    Ok(boxed(PatternProperties { patterns }))
}

impl Keyword for PatternProperties {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (i, (k, member)) in o.iter().enumerate() {
            for (re, id) in &self.patterns {
                if re.find(k).is_some() {
                    ok &= cx.eval(*id, member, &Path::Key(at, k));
                    ann.mark_prop(i);
                    if !ok && !cx.collect {
                        return false;
                    }
                }
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn by_pattern() {
        let s = r#"{"patternProperties":{"^x-":{"type":"string"}}}"#;
        assert!(check_standard(s, r#"{"x-a":"s","y":1}"#));
        assert!(!check_standard(s, r#"{"x-a":1}"#));
    }
}
