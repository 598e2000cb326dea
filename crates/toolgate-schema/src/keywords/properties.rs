//! `properties`: named members against their schemas.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::ErrorCode;
use crate::names::NameSet;
use crate::stream::Part;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `properties` keyword: names sorted for binary search.
#[derive(Debug)]
pub(crate) struct Properties {
    names: NameSet,
    nodes: Vec<NodeId>,
    /// Members not named here are `unknown_property` (an `additionalProperties:
    /// false` or the strict closure folded into this keyword), reported at
    /// this location.
    closed: Option<Box<str>>,
    /// A `required` whose names are all declared here, folded in: the bits
    /// of their positions, the names in order, and the keyword's location.
    required: Option<(u64, Vec<Box<str>>, Box<str>)>,
}

/// What the object keywords of one schema can fold into `properties`.
#[derive(Debug, Default)]
pub(crate) struct Fold {
    pub(crate) closed: Option<Box<str>>,
    pub(crate) required: Option<(Vec<Box<str>>, Box<str>)>,
}

impl Fold {
    /// Whether `required` can be folded: at most 64 names, all declared in
    /// `properties` among its first 64 (a name's bit is its position).
    pub(crate) fn can_fold_required(properties: &Value, required: &Value) -> bool {
        let (Some(p), Some(r)) = (properties.as_object(), required.as_array()) else {
            return false;
        };
        r.len() <= 64
            && r.iter().all(|n| {
                n.as_str()
                    .is_some_and(|n| p.keys().position(|k| k == n).is_some_and(|i| i < 64))
            })
    }
}

/// Compiles `properties`: an object of schemas.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    compile_folded(kw, v, Fold::default())
}

/// Compiles `properties` with the closure and `required` folded in, so that
/// one pass over the members does the work of three keywords.
pub(crate) fn compile_folded(kw: &mut Kw<'_, '_>, v: &Value, fold: Fold) -> super::Compiled {
    let o = v
        .as_object()
        .ok_or_else(|| kw.invalid("an object of schemas"))?;
    let mut nodes = Vec::with_capacity(o.len());
    for (k, _) in o.iter() {
        nodes.push(kw.sub(&[k])?);
    }
    // INVARIANT: member names of a parsed object are unique, so position i
    // of the set is member i of `properties`.
    let names = NameSet::new(o.keys());
    let required = fold.required.map(|(list, location)| {
        let mask = list
            .iter()
            .filter_map(|n| names.find(n))
            .fold(0u64, |m, i| m | (1u64 << i));
        (mask, list, location)
    });
    Ok(boxed(Properties {
        names,
        nodes,
        closed: fold.closed,
        required,
    }))
}

impl Keyword for Properties {
    fn part(&self) -> Part<'_> {
        Part::Properties {
            names: &self.names,
            nodes: &self.nodes,
            closed: self.closed.is_some(),
            required: self.required.as_ref().map_or(0, |(mask, _, _)| *mask),
        }
    }

    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let Value::Object(o) = v else { return true };
        let mut ok = true;
        let mut seen: u64 = 0;
        let mut unknown = false;
        for (i, (k, member)) in o.iter().enumerate() {
            let Some(j) = self.names.find(k) else {
                if self.closed.is_some() {
                    // Reported after `required`, in the order the separate
                    // keywords would report them.
                    unknown = true;
                    ok = false;
                    if !cx.collect {
                        return false;
                    }
                }
                continue;
            };
            if j < 64 {
                seen |= 1 << j;
            }
            if let Some(id) = self.nodes.get(j) {
                // A leaf that accepts needs no evaluation (and records no
                // annotation of its own).
                if cx.schema.leaf_accepts(*id, member) {
                    ann.mark_prop(i);
                    continue;
                }
                ok &= cx.eval(*id, member, &Path::Key(at, k));
                ann.mark_prop(i);
                if !ok && !cx.collect {
                    return false;
                }
            }
        }
        if let Some((mask, names, location)) = &self.required {
            if seen & mask != *mask {
                ok &= super::required::check_present(names, o, v, at, cx, location);
            }
        }
        if let (true, Some(location)) = (unknown, &self.closed) {
            for (k, member) in o.iter() {
                if !self.names.contains(k) {
                    cx.fail(
                        ErrorCode::UnknownProperty,
                        &Path::Key(at, k),
                        location,
                        member,
                        || {
                            format!(
                                "member is not allowed: the declared members are {}",
                                crate::error::list_names(self.names.names(), self.names.len())
                            )
                        },
                    );
                }
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{check, check_standard};

    #[test]
    fn strict_closes_declared_objects() {
        let s = r#"{"type":"object","properties":{"a":{"type":"integer"}}}"#;
        assert!(check(s, r#"{"a":1}"#));
        assert!(!check(s, r#"{"a":1,"b":2}"#));
        assert!(check_standard(s, r#"{"a":1,"b":2}"#));
        let open = r#"{"properties":{"a":true},"additionalProperties":true}"#;
        assert!(check(open, r#"{"a":1,"b":2}"#));
    }

    #[test]
    fn required_beyond_the_64th_property_is_checked() {
        let props: Vec<String> = (0..70)
            .map(|i| format!(r#""p{i}":{{"type":"integer"}}"#))
            .collect();
        let s = format!(
            r#"{{"type":"object","properties":{{{}}},"required":["p1","p69"]}}"#,
            props.join(",")
        );
        assert!(check(&s, r#"{"p1":1,"p69":2}"#));
        assert!(!check(&s, r#"{"p1":1}"#));
        assert!(!check(&s, r#"{"p69":1}"#));
    }

    #[test]
    fn strict_closure_sees_through_all_of() {
        let s = r#"{"properties":{"a":true},"allOf":[{"properties":{"b":true}}]}"#;
        assert!(check(s, r#"{"a":1,"b":2}"#));
        assert!(!check(s, r#"{"a":1,"c":2}"#));
    }
}
