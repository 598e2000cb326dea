//! The URL arguments of a tool's schema: every place where the schema gives a
//! string a URI-like `format` (`uri`, `uri-reference`, `iri`,
//! `iri-reference`), found anywhere a value of the arguments can be
//! described (`properties`, `items`, `prefixItems`, `additionalProperties`,
//! `patternProperties`, the branches of `anyOf`, `oneOf` and `allOf`,
//! `if`/`then`/`else`, `dependentSchemas`, and local `$ref`s such as
//! `#/$defs/Link`). The default URL guard checks such an argument when no
//! `url_policy` names it (see `stage::default_urls`).

use toolgate_json::Value;

/// The `format` names that describe URLs.
pub(crate) const URI_FORMATS: [&str; 4] = ["uri", "uri-reference", "iri", "iri-reference"];

/// How many local `$ref`s one path follows before giving up (a loop).
const MAX_REF_HOPS: usize = 32;

/// How many schema nodes one search visits at most (`$ref`s can fan out).
const MAX_VISITS: usize = 100_000;

/// One step of an instance path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// A named member (`properties`).
    Name(String),
    /// Any array item (`items`, `prefixItems`, `contains`, …).
    AnyItem,
    /// Any member (`additionalProperties`, `patternProperties`).
    AnyMember,
}

/// A URL argument: where in the arguments, where in the schema, which format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriArg {
    pub(crate) path: Vec<Step>,
    pub(crate) schema_pointer: String,
    pub(crate) format: String,
}

impl UriArg {
    /// The JSON Pointer a `url_policy`'s `arg` names this argument with:
    /// named members as pointer tokens, `*` for any item or member. `None`
    /// if a member the path names is itself called `*` (a pointer cannot
    /// tell it from the wildcard).
    #[cfg(test)]
    pub(crate) fn pointer(&self) -> Option<String> {
        let literal_star = self
            .path
            .iter()
            .any(|s| matches!(s, Step::Name(n) if n == "*"));
        (!literal_star).then(|| self.display_raw())
    }

    /// The instance path for people: named members as pointer tokens, `*`
    /// for any item or member.
    #[cfg(test)]
    pub(crate) fn display(&self) -> String {
        let out = self.display_raw();
        if out.is_empty() {
            "/".to_owned()
        } else {
            out
        }
    }

    #[cfg(test)]
    fn display_raw(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Name(name) => toolgate_json::pointer::push_token(&mut out, name),
                Step::AnyItem | Step::AnyMember => out.push_str("/*"),
            }
        }
        out
    }
}

/// Every URL argument of `schema`, in schema order, each place once; `None`
/// if the schema's `$ref`s fan out beyond what one search visits (then the
/// caller must assume the worst).
pub(crate) fn find(schema: &Value<'_>) -> Option<Vec<UriArg>> {
    let mut walker = Walker {
        root: schema,
        path: Vec::new(),
        out: Vec::new(),
        visits: 0,
    };
    let mut at = String::new();
    walker.walk(schema, &mut at, 0);
    (walker.visits <= MAX_VISITS).then_some(walker.out)
}

struct Walker<'v, 'a> {
    root: &'v Value<'a>,
    path: Vec<Step>,
    out: Vec<UriArg>,
    visits: usize,
}

impl Walker<'_, '_> {
    fn walk(&mut self, node: &Value<'_>, at: &mut String, hops: usize) {
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return;
        }
        let Some(object) = node.as_object() else {
            return;
        };
        if let Some(format) = object.get("format").and_then(Value::as_str) {
            if URI_FORMATS.contains(&format) && !self.out.iter().any(|o| o.path == self.path) {
                self.out.push(UriArg {
                    path: self.path.clone(),
                    schema_pointer: format!("{at}/format"),
                    format: format.to_owned(),
                });
            }
        }
        if let Some(target) = object
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            if hops < MAX_REF_HOPS {
                if let Some(next) = self.root.pointer(target) {
                    let mut there = target.to_owned();
                    self.walk(next, &mut there, hops + 1);
                }
            }
        }
        for (keyword, value) in object.iter() {
            match keyword {
                "properties" => {
                    for (name, schema) in value.as_object().into_iter().flat_map(|o| o.iter()) {
                        let step = Step::Name(name.to_owned());
                        self.sub(at, hops, keyword, Some(step), schema, Some(name));
                    }
                }
                "patternProperties" | "dependentSchemas" => {
                    let step = (keyword == "patternProperties").then_some(Step::AnyMember);
                    for (name, schema) in value.as_object().into_iter().flat_map(|o| o.iter()) {
                        self.sub(at, hops, keyword, step.clone(), schema, Some(name));
                    }
                }
                "additionalProperties" | "unevaluatedProperties" => {
                    self.sub(at, hops, keyword, Some(Step::AnyMember), value, None);
                }
                "items" | "contains" | "unevaluatedItems" => {
                    self.sub(at, hops, keyword, Some(Step::AnyItem), value, None);
                }
                "prefixItems" => {
                    for (i, schema) in value.as_array().into_iter().flatten().enumerate() {
                        let token = i.to_string();
                        self.sub(at, hops, keyword, Some(Step::AnyItem), schema, Some(&token));
                    }
                }
                "anyOf" | "oneOf" | "allOf" => {
                    for (i, schema) in value.as_array().into_iter().flatten().enumerate() {
                        let token = i.to_string();
                        self.sub(at, hops, keyword, None, schema, Some(&token));
                    }
                }
                "if" | "then" | "else" => self.sub(at, hops, keyword, None, value, None),
                _ => {}
            }
        }
    }

    /// Walks a subschema under `keyword` (and `token`), one `step` deeper in
    /// the instance if given.
    fn sub(
        &mut self,
        at: &mut String,
        hops: usize,
        keyword: &str,
        step: Option<Step>,
        schema: &Value<'_>,
        token: Option<&str>,
    ) {
        let len = at.len();
        toolgate_json::pointer::push_token(at, keyword);
        if let Some(t) = token {
            toolgate_json::pointer::push_token(at, t);
        }
        let pushed = step.is_some();
        if let Some(s) = step {
            self.path.push(s);
        }
        self.walk(schema, at, hops);
        if pushed {
            self.path.pop();
        }
        at.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn found(schema: &str) -> Vec<(String, Option<String>, String)> {
        find(&toolgate_json::from_str(schema).unwrap())
            .unwrap()
            .into_iter()
            .map(|a| (a.display(), a.pointer(), a.schema_pointer))
            .collect()
    }

    #[test]
    fn finds_every_place() {
        let got = found(
            r##"{"type":"object","properties":{
                "url":{"type":"string","format":"uri"},
                "n":{"type":"string","format":"email"},
                "links":{"type":"array","items":{"$ref":"#/$defs/Link"}},
                "next":{"anyOf":[{"type":"null"},{"type":"string","format":"iri-reference"}]},
                "tags":{"type":"object","additionalProperties":{"type":"string","format":"iri"}}},
              "$defs":{"Link":{"type":"object","properties":{"href":{"type":"string","format":"uri-reference"}}},
                       "Loop":{"$ref":"#/$defs/Loop"}}}"##,
        );
        assert_eq!(
            got,
            [
                (
                    "/url".to_owned(),
                    Some("/url".to_owned()),
                    "/properties/url/format".to_owned()
                ),
                (
                    "/links/*/href".to_owned(),
                    Some("/links/*/href".to_owned()),
                    "/$defs/Link/properties/href/format".to_owned()
                ),
                (
                    "/next".to_owned(),
                    Some("/next".to_owned()),
                    "/properties/next/anyOf/1/format".to_owned()
                ),
                (
                    "/tags/*".to_owned(),
                    Some("/tags/*".to_owned()),
                    "/properties/tags/additionalProperties/format".to_owned()
                ),
            ]
        );
        assert!(
            found(r##"{"$ref":"#/$defs/Loop","$defs":{"Loop":{"$ref":"#/$defs/Loop"}}}"##)
                .is_empty()
        );
        // Twenty levels of two references each: over a million paths.
        let mut defs = Vec::new();
        for i in 0..20 {
            defs.push(format!(
                r##""d{i}":{{"anyOf":[{{"$ref":"#/$defs/d{n}"}},{{"$ref":"#/$defs/d{n}"}}]}}"##,
                n = i + 1
            ));
        }
        defs.push(r#""d20":{"type":"string"}"#.to_owned());
        let fan = format!(
            r##"{{"$ref":"#/$defs/d0","$defs":{{{}}}}}"##,
            defs.join(",")
        );
        assert!(find(&toolgate_json::from_str(&fan).unwrap()).is_none());
    }
}
