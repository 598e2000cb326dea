//! `dependentRequired`: when a member is present, others must be too.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::validator::{Ann, Cx, Keyword, Path};

/// The compiled `dependentRequired` keyword.
#[derive(Debug)]
pub(crate) struct DependentRequired {
    deps: Vec<(Box<str>, Vec<Box<str>>)>,
    location: Box<str>,
}

/// Compiles `dependentRequired`: an object of string arrays.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of string arrays"))?;
    let mut deps = Vec::new();
    for (k, list) in o.iter() {
        deps.push((k.into(), super::required::string_list(kw, list)?));
    }
    Ok(boxed(DependentRequired {
        deps,
        location: kw.location(),
    }))
}

impl Keyword for DependentRequired {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, _ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        for (k, names) in &self.deps {
            if o.contains_key(k)
                && !super::required::check_present(names, o, v, at, cx, &self.location)
            {
                ok = false;
                if !cx.collect {
                    return false;
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
    fn dependency() {
        let s = r#"{"dependentRequired":{"card":["cvv"]}}"#;
        assert!(check_standard(s, r#"{"card":1,"cvv":2}"#));
        assert!(!check_standard(s, r#"{"card":1}"#));
        assert!(check_standard(s, r#"{"cvv":1}"#));
    }
}
