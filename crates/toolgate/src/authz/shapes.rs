//! Cedar's check of a request against the schema, remembered per shape.
//!
//! `Request::new` with the schema checks the principal's and resource's
//! types for the action and the context's value against the action's
//! declared context type. The context check clones the whole context and
//! walks it as a restricted expression on every call, though its outcome
//! depends only on the context's *shape*: which attributes each record
//! holds and the Cedar type of each value (`Long` or `decimal`, a
//! string, a bool, a set's elements). The gate's contexts hold no entity
//! references, the only values whose ids the check looks at. So the shape
//! of a context that passed (the tool, whether its `labels` are empty,
//! and the arguments' shape, [`super::value::to_cedar_shaped`]) is
//! remembered, and a later request of that very shape skips the context
//! check; the scope check (the principal's and resource's types and ids)
//! still runs on every call. A shape not seen before, or one that failed,
//! is checked in full, so every answer, error or not, is the one the full
//! check gives.

use std::collections::HashSet;
use std::sync::RwLock;

use cedar_policy::{Context, EntityUid, Request, Schema};

/// How many shapes are remembered; past it, a request of a shape not yet
/// remembered is checked in full, as before.
const MAX_SHAPES: usize = 4096;

/// The longest shape remembered (a shape grows with the arguments: a
/// member's name and a letter per value). Longer ones are checked in full
/// every time, so what is kept stays under `MAX_SHAPES` × this (4 MiB)
/// whatever the calls hold.
const MAX_SHAPE_BYTES: usize = 1024;

/// The shapes of contexts that passed the schema's check.
#[derive(Debug, Default)]
pub(crate) struct CheckedShapes(RwLock<HashSet<String>>);

impl CheckedShapes {
    /// The request (principal, action, resource; `context`) of a call to
    /// `tool`, checked against `schema`; `args` is the shape of the
    /// context's `args`, `labels` whether its labels are not empty.
    pub(crate) fn request(
        &self,
        (principal, action, resource): (EntityUid, EntityUid, EntityUid),
        context: Context,
        schema: &Schema,
        (tool, labels, args): (&str, bool, &str),
    ) -> Result<Request, String> {
        let mut key = String::with_capacity(tool.len() + args.len() + 3);
        key.push_str(tool);
        key.push('\0');
        key.push(if labels { 'L' } else { '-' });
        key.push_str(args);
        let known = self.0.read().is_ok_and(|seen| seen.contains(&key));
        if known
            && cedar_policy::validate_scope_variables(&principal, &action, &resource, schema)
                .is_ok()
        {
            // INVARIANT: without a schema nothing is checked, so nothing fails.
            return Request::new(principal, action, resource, context, None)
                .map_err(|e| format!("request: {e}"));
        }
        let request = Request::new(principal, action, resource, context, Some(schema))
            .map_err(|e| format!("request: {e}"))?;
        if key.len() > MAX_SHAPE_BYTES {
            return Ok(request);
        }
        if let Ok(mut seen) = self.0.write() {
            if seen.len() < MAX_SHAPES {
                seen.insert(key);
            }
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;
    use std::str::FromStr as _;

    fn uids() -> (EntityUid, EntityUid, EntityUid) {
        (
            EntityUid::from_str(r#"User::"alice""#).unwrap(),
            EntityUid::from_str(r#"Action::"call""#).unwrap(),
            EntityUid::from_str(r#"Tool::"search""#).unwrap(),
        )
    }

    fn remembered(shapes: &CheckedShapes) -> usize {
        shapes.0.read().unwrap().len()
    }

    #[test]
    fn only_bounded_shapes_are_remembered() {
        let (schema, _) = Schema::from_cedarschema_str(
            "entity User; entity Tool; action call appliesTo { principal: User, resource: Tool };",
        )
        .unwrap();
        let shapes = CheckedShapes::default();
        let short = "s".repeat(MAX_SHAPE_BYTES - 16);
        shapes
            .request(uids(), Context::empty(), &schema, ("search", false, &short))
            .unwrap();
        assert_eq!(remembered(&shapes), 1);
        // A shape as long as the arguments an attacker can send is checked
        // in full and not kept: what is remembered stays bounded.
        let long = "s".repeat(MAX_SHAPE_BYTES + 1);
        for _ in 0..3 {
            shapes
                .request(uids(), Context::empty(), &schema, ("search", false, &long))
                .unwrap();
        }
        assert_eq!(remembered(&shapes), 1);
    }
}
