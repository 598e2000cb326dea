//! The values the policies that held a call read ([`PolicyFact`]), kept
//! with its approval for the humans who decide it: one rule for both
//! stores, which keep only the text.
//!
//! Kept as a JSON array of `{"path": …, "value": …}`, bounded as the gate
//! bounds them. A value read from the call's arguments that the config
//! marks secret (the tool's `redact` pointers, `"x-toolgate-redact"` in its
//! schema: what the audit log keeps only as a digest) is kept as
//! [`REDACTED`], and so is any value that contains one.

use toolgate::registry::Tool;
use toolgate::PolicyFact;
use toolgate_json::{Object, Value};

use crate::persist::secrets::{pointers, REDACTED};

/// `facts` with each secret argument value replaced by [`REDACTED`],
/// given the call's canonical arguments for `tool`; every argument value
/// is redacted when the arguments cannot be read.
pub(crate) fn redact(
    tool: &Tool,
    canonical: Option<&str>,
    facts: &[PolicyFact],
) -> Vec<PolicyFact> {
    let parsed = canonical.and_then(|t| tool.parse_options().parse(t.as_bytes()).ok());
    let secrets = parsed.as_ref().map(|v| pointers(tool, v));
    facts
        .iter()
        .map(|f| {
            let secret = match (arg_pointer(&f.path), &secrets) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(p), Some(s)) => s.iter().any(|s| overlaps(s, &p)),
            };
            if secret {
                PolicyFact::new(f.path.clone(), REDACTED)
            } else {
                f.clone()
            }
        })
        .collect()
}

/// `context.args.a.b` as the JSON Pointer `/a/b` (`context.args` as the
/// whole arguments, `""`); `None` for a path outside the arguments.
fn arg_pointer(path: &str) -> Option<String> {
    let rest = path.strip_prefix("context.args")?;
    if rest.is_empty() {
        return Some(String::new());
    }
    let rest = rest.strip_prefix('.')?;
    Some(rest.split('.').fold(String::new(), |mut p, segment| {
        p.push('/');
        p.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        p
    }))
}

/// Whether one pointer is the other or lies inside it.
fn overlaps(a: &str, b: &str) -> bool {
    let inside = |outer: &str, inner: &str| {
        inner == outer
            || (inner.starts_with(outer) && inner.as_bytes().get(outer.len()) == Some(&b'/'))
    };
    inside(a, b) || inside(b, a)
}

/// The text a store keeps, `None` for no facts.
pub(crate) fn to_text(facts: &[PolicyFact]) -> Option<String> {
    if facts.is_empty() {
        return None;
    }
    let items = facts
        .iter()
        .take(PolicyFact::MAX_FACTS)
        .map(|f| {
            let mut o = Object::new();
            o.insert("path", Value::String(f.path.clone().into()));
            o.insert("value", Value::String(f.value.clone().into()));
            Value::Object(o)
        })
        .collect();
    Some(toolgate_json::canonical::to_string(&Value::Array(items)))
}

/// The facts a store kept; none for text it cannot read.
pub(crate) fn from_text(text: Option<&str>) -> Vec<PolicyFact> {
    let Some(Ok(value)) = text.map(toolgate_json::from_str) else {
        return Vec::new();
    };
    value
        .as_array()
        .into_iter()
        .flatten()
        .take(PolicyFact::MAX_FACTS)
        .filter_map(|item| {
            let o = item.as_object()?;
            let path = o.get("path")?.as_str()?;
            let value = o.get("value")?.as_str()?;
            Some(PolicyFact::new(path, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_paths_and_overlaps() {
        assert_eq!(
            arg_pointer("context.args.card.number").as_deref(),
            Some("/card/number")
        );
        assert_eq!(arg_pointer("context.args").as_deref(), Some(""));
        assert_eq!(arg_pointer("context.argsx"), None);
        assert_eq!(arg_pointer("resource.total"), None);
        assert!(overlaps("/card", "/card/number"));
        assert!(overlaps("/card/number", "/card"));
        assert!(overlaps("", "/a"));
        assert!(!overlaps("/card", "/cards"));
    }

    #[test]
    fn text_round_trip_keeps_markup_as_text() {
        let facts = vec![
            PolicyFact::new("resource.total_cents", "12000"),
            PolicyFact::new("resource.note", "\"<script>x</script>\""),
        ];
        let text = to_text(&facts).unwrap();
        assert_eq!(from_text(Some(&text)), facts);
        assert_eq!(to_text(&[]), None);
        assert!(from_text(Some("not json")).is_empty());
    }
}
