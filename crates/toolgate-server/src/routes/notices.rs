//! `GET /v1/notices`: how the notices of held calls to the notification
//! sinks went (admin), and how many were dropped because the queue was
//! full.

use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use toolgate_json::{canonical, Object, Value};

use super::ok_json;
use crate::auth::Admin;
use crate::error::ApiError;
use crate::extract::StrictQuery;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NoticesQuery {
    limit: Option<u32>,
}

pub(super) async fn list_notices(
    State(state): State<AppState>,
    Admin(_caller): Admin,
    StrictQuery(q): StrictQuery<NoticesQuery>,
) -> Result<Response, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(super::invalid_query("`limit` must be between 1 and 1000"));
    }
    let notices = state.blocking(move |s| s.list_notices(limit)).await?;
    let list = notices
        .iter()
        .map(|n| {
            let mut o = Object::new();
            o.insert("approval", Value::String(n.approval.to_string().into()));
            o.insert("sink", Value::String(n.sink.clone().into()));
            o.insert("state", Value::String(n.state.as_str().into()));
            o.insert("attempts", Value::Number(u64::from(n.attempts).into()));
            o.insert(
                "claimed_at",
                Value::Number(n.claimed_at.unix_millis().into()),
            );
            o.insert(
                "updated_at",
                Value::Number(n.updated_at.unix_millis().into()),
            );
            o.insert(
                "outcome",
                n.outcome
                    .clone()
                    .map_or(Value::Null, |t| Value::String(t.into())),
            );
            Value::Object(o)
        })
        .collect();
    let mut o = Object::new();
    o.insert("notices", Value::Array(list));
    o.insert(
        "dropped",
        Value::Number(state.inner.notices_dropped.load(Ordering::Relaxed).into()),
    );
    Ok(ok_json(canonical::to_string(&Value::Object(o))))
}
