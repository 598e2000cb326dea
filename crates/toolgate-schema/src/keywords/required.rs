//! `required`: these members must be present (a `null` member is present).

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::names::NameSet;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `required` keyword.
#[derive(Debug)]
pub(crate) struct Required {
    names: Vec<Box<str>>,
    set: NameSet,
    location: Box<str>,
}

/// Reads an array of strings.
pub(crate) fn string_list(
    kw: &Kw<'_, '_>,
    v: &Value,
) -> Result<Vec<Box<str>>, crate::CompileError> {
    v.as_array()
        .ok_or_else(|| kw.invalid("an array of strings"))?
        .iter()
        .map(|x| {
            x.as_str()
                .map(Into::into)
                .ok_or_else(|| kw.invalid("an array of strings"))
        })
        .collect()
}

/// Compiles `required`.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let names = string_list(kw, v)?;
    if names.is_empty() {
        return Ok(None);
    }
    Ok(boxed(Required {
        set: NameSet::new(names.iter().map(AsRef::as_ref)),
        names,
        location: kw.location(),
    }))
}

/// Checks that `names` are members of `o`, reporting each missing one.
pub(crate) fn check_present(
    names: &[Box<str>],
    o: &toolgate_json::Object,
    v: &Value,
    at: &Path<'_>,
    cx: &mut Cx<'_>,
    location: &str,
) -> bool {
    let mut ok = true;
    for n in names {
        if !o.contains_key(n) {
            ok = false;
            cx.fail(ErrorCode::MissingRequired, at, location, v, || {
                format!("missing required member `{n}`")
            });
            if !cx.collect {
                return false;
            }
        }
    }
    ok
}

impl Keyword for Required {
    fn part(&self) -> Part<'_> {
        Part::Required(&self.set)
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        // Fast path: one pass over the members marks the required names seen.
        let n = self.set.len();
        if n <= 64 && o.len() >= n {
            let mut seen: u64 = 0;
            for k in o.keys() {
                if let Some(i) = self.set.find(k) {
                    seen |= 1 << i;
                }
            }
            if seen.count_ones() as usize == n {
                return true;
            }
        }
        check_present(&self.names, o, v, at, cx, &self.location)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::check_standard;

    #[test]
    fn null_counts_as_present() {
        let s = r#"{"required":["a"]}"#;
        assert!(check_standard(s, r#"{"a":null}"#));
        assert!(!check_standard(s, r#"{"b":1}"#));
        assert!(check_standard(s, "[]"));
    }
}
