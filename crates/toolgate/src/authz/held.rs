//! What the policies that held a call read, for the humans who approve
//! it: every attribute a held policy's conditions access from `principal`,
//! `resource` or `context` (`resource.total_cents`,
//! `context.args.amount_cents`), found in the policy's JSON form and
//! evaluated again for the call's request and entities.
//!
//! Only a hold pays for this (a decision that permits or denies never
//! does), and the answer is bounded: at most
//! [`PolicyFact::MAX_FACTS`] paths, each value cut to
//! [`PolicyFact::MAX_CHARS`]. A value that cannot be read (an attribute
//! the entity lacks) is shown as [`UNREADABLE`].

use std::str::FromStr;

use cedar_policy::{eval_expression, Entities, Expression, Policy, PolicyId, PolicySet, Request};
use toolgate_json::Value;

use crate::authorize::PolicyFact;

/// What a path that cannot be evaluated is shown as.
pub const UNREADABLE: &str = "(absent)";

/// The variables a path may start from.
const VARS: [&str; 3] = ["principal", "resource", "context"];

/// The values the policies `held` (in `set`) read for `request`.
pub(super) fn read(
    set: &PolicySet,
    held: &[PolicyId],
    request: &Request,
    entities: &Entities,
) -> Vec<PolicyFact> {
    let mut paths: Vec<Vec<String>> = Vec::new();
    for policy in held.iter().filter_map(|id| set.policy(id)) {
        paths_of(policy, &mut paths);
    }
    paths
        .into_iter()
        .take(PolicyFact::MAX_FACTS)
        .map(|path| {
            let value = Expression::from_str(&expression(&path))
                .ok()
                .and_then(|e| eval_expression(request, entities, &e).ok())
                .map_or_else(|| UNREADABLE.to_owned(), |v| v.to_string());
            PolicyFact::new(path.join("."), value)
        })
        .collect()
}

/// `["resource", "total"]` as `resource["total"]`: every attribute in
/// the bracket form, whatever its name.
fn expression(path: &[String]) -> String {
    let mut text = String::new();
    for (i, part) in path.iter().enumerate() {
        if i == 0 {
            text.push_str(part);
        } else {
            text.push_str(&format!("[\"{}\"]", part.escape_debug()));
        }
    }
    text
}

/// The attribute paths `policy`'s conditions read, in order, each once,
/// added to `out`.
fn paths_of(policy: &Policy, out: &mut Vec<Vec<String>>) {
    let Ok(json) = policy.to_json() else {
        return;
    };
    let text = json.to_string();
    let Ok(est) = toolgate_json::from_str(&text) else {
        return;
    };
    if let Some(conditions) = est.as_object().and_then(|o| o.get("conditions")) {
        walk(conditions, out);
    }
}

fn walk(expr: &Value<'_>, out: &mut Vec<Vec<String>>) {
    match expr {
        Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
        Value::Object(o) => {
            for (key, inner) in o.iter() {
                if key == "." {
                    if let Some(path) = path(inner) {
                        if !out.contains(&path) {
                            out.push(path);
                        }
                        continue;
                    }
                }
                if key != "Value" {
                    walk(inner, out);
                }
            }
        }
        _ => {}
    }
}

/// `{"left": …, "attr": …}` as a path from one of [`VARS`].
fn path(access: &Value<'_>) -> Option<Vec<String>> {
    let mut path = Vec::new();
    let mut at = access.as_object()?;
    loop {
        path.push(at.get("attr")?.as_str()?.to_owned());
        let left = at.get("left")?.as_object()?;
        if let Some(inner) = left.get(".").and_then(Value::as_object) {
            at = inner;
            continue;
        }
        let var = left.get("Var")?.as_str()?;
        if !VARS.contains(&var) {
            return None;
        }
        path.push(var.to_owned());
        break;
    }
    path.reverse();
    Some(path)
}
