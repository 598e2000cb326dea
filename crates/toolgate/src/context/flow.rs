//! The context's `limit_events` and `labels`: the usage and session labels
//! a caller without a store keeps.

use toolgate_json::{Object, Value};

use super::{
    array, check_members, member_pointer, object, string, u64_value, Context, ContextError,
    ContextErrorKind, LimitEvent,
};
use crate::limit::Amount;

/// The most `limit_events` a context carries.
pub(super) const MAX_EVENTS: usize = 10_000;
/// The most `labels` a context carries.
pub(super) const MAX_LABELS: usize = 64;

/// Reads `limit_events` and `labels` into `ctx`.
pub(super) fn read(obj: &Object<'_>, ctx: &mut Context) -> Result<(), ContextError> {
    if let Some(list) = obj.get("limit_events") {
        let items = array(list, "/limit_events")?;
        if items.len() > MAX_EVENTS {
            return Err(ContextError::new(
                ContextErrorKind::InvalidValue,
                "/limit_events",
            ));
        }
        for (i, e) in items.iter().enumerate() {
            let p = format!("/limit_events/{i}");
            let o = object(e, &p)?;
            check_members(o, &p, &["limit", "at", "amount"])?;
            let at_pointer = member_pointer(&p, "at");
            let at = u64_value(
                o.get("at").ok_or_else(|| {
                    ContextError::new(ContextErrorKind::MissingMember, at_pointer.clone())
                })?,
                &at_pointer,
            )?;
            ctx.limit_events.push(LimitEvent {
                limit: string(o, &p, "limit")?,
                at,
                amount: amount(o.get("amount"), &member_pointer(&p, "amount"))?,
            });
        }
    }
    if let Some(list) = obj.get("labels") {
        let items = array(list, "/labels")?;
        if items.len() > MAX_LABELS {
            return Err(ContextError::new(ContextErrorKind::InvalidValue, "/labels"));
        }
        for (i, l) in items.iter().enumerate() {
            let p = format!("/labels/{i}");
            let label = l
                .as_str()
                .ok_or_else(|| ContextError::wrong_type(&p, "a string"))?;
            ctx.labels.push(label.to_owned());
        }
    }
    Ok(())
}

/// An event's amount: a non-negative number or decimal string.
fn amount(v: Option<&Value<'_>>, pointer: &str) -> Result<Amount, ContextError> {
    let v = v.ok_or_else(|| ContextError::new(ContextErrorKind::MissingMember, pointer))?;
    let a = match v {
        Value::Number(n) => Amount::of_number(n),
        Value::String(s) => Amount::parse(s),
        _ => return Err(ContextError::wrong_type(pointer, "a number")),
    };
    a.filter(|a| !a.is_negative())
        .ok_or_else(|| ContextError::new(ContextErrorKind::InvalidValue, pointer))
}

/// The context's events of `key`'s limit after `since_ms`, in milliseconds.
pub(super) fn events(ctx: &Context, key: &str, since_ms: u64) -> Vec<(u64, Amount)> {
    let limit = key.split('/').next().unwrap_or_default();
    ctx.limit_events
        .iter()
        .filter(|e| e.limit == limit)
        .map(|e| (e.at.saturating_mul(1000), e.amount))
        .filter(|(at, _)| *at > since_ms)
        .collect()
}
