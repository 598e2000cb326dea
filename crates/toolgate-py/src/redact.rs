//! Pointers safe to show a model: every reference token that is neither an
//! array index nor a member name the schema declares becomes `*`, so that no
//! text the input chose (a member name such as `IGNORE PREVIOUS
//! INSTRUCTIONS`, a secret smuggled into a name) reaches a message, as the
//! gate's feedback does. The exact pointer stays available to a caller who
//! asks for it by name (`exact_pointer`, `exact_instance_pointer`).

use std::collections::HashSet;

use toolgate_json::Value;

/// The member names a schema declares (under `properties`, anywhere in it):
/// the names a model was given anyway.
#[derive(Debug, Clone, Default)]
pub(crate) struct Known {
    names: HashSet<String>,
}

impl Known {
    /// No name is known: every member-name token is masked.
    pub(crate) fn none() -> Self {
        Self::default()
    }

    /// These names.
    pub(crate) fn of_names(names: &[&str]) -> Self {
        Self {
            names: names.iter().map(|&n| n.to_owned()).collect(),
        }
    }

    /// Every name under a `properties` keyword anywhere in `schema`.
    pub(crate) fn of_schema(schema: &Value<'_>) -> Self {
        let mut names = HashSet::new();
        let mut stack = vec![schema];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(o) => {
                    if let Some(Value::Object(props)) = o.get("properties") {
                        names.extend(props.keys().map(str::to_owned));
                    }
                    stack.extend(o.iter().map(|(_, v)| v));
                }
                Value::Array(items) => stack.extend(items.iter()),
                _ => {}
            }
        }
        Self { names }
    }

    /// `pointer` with every token that is neither an array index nor a
    /// known name replaced by `*`.
    pub(crate) fn redact(&self, pointer: &str) -> String {
        let mut out = String::with_capacity(pointer.len());
        for token in pointer.split('/').skip(1) {
            out.push('/');
            if is_index(token)
                || self
                    .names
                    .contains(&*toolgate_json::pointer::unescape_token(token))
            {
                out.push_str(token);
            } else {
                out.push('*');
            }
        }
        out
    }
}

fn is_index(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= 10
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'))
}
