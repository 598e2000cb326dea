//! `GET /openapi.json`: the OpenAPI 3.1 document of the service's API
//! (every route but the approvals page under `/ui/`).
//!
//! The document is built here from the same definitions the handlers use:
//! the enumerations come from the types ([`Format::ALL`],
//! [`FindingCode::ALL`], the store's verdicts and states, the audit kinds of
//! [`crate::AUDIT_KINDS`]), the error codes from [`ERROR_CODES`], the
//! limits from the extractors' types (`u32` limits, `i64` sequence numbers).
//! Each operation lists its security (bearer token and roles), its
//! parameters, its body, its answer and every error status it can return.
//! The test suite runs `schemathesis` against a live `toolgate serve` with
//! this document, so an answer that does not match it fails the build.

use std::borrow::Cow;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use toolgate::sanitize::FindingCode;
use toolgate::Format;
use toolgate_json::{canonical, Number, Object, Value};
use toolgate_store::{ApprovalState, KillMode};

use crate::error::json_response;
use crate::state::AppState;

mod schemas;

use self::schemas::*;

/// Every stable error code (see the crate documentation).
pub const ERROR_CODES: [&str; 18] = [
    "invalid_json",
    "duplicate_key",
    "invalid_request",
    "unknown_field",
    "invalid_query",
    "unsupported_media_type",
    "payload_too_large",
    "request_timeout",
    "unauthorized",
    "forbidden",
    "not_found",
    "conflict",
    "invalid_config",
    "store_unavailable",
    "method_not_allowed",
    "duplicate_header",
    "restart_required",
    "identifier_too_long",
];

const KILL_MODES: [KillMode; 3] = [KillMode::Off, KillMode::DenyWrites, KillMode::DenyAll];

/// The largest JSON integer every client reads exactly (2^53 - 1).
const SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Who may call an operation.
#[derive(Clone, Copy)]
enum Access {
    /// No token.
    Open,
    /// A bearer token with one of these roles.
    Roles(&'static str),
    /// A bearer token with one of these roles, but every refusal is a
    /// `200` whose body denies (Claude Code runs a call whose HTTP hook
    /// answers anything else).
    RolesInBody(&'static str),
}

/// One operation of the document.
struct Op {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    access: Access,
    params: Vec<Value<'static>>,
    /// The body schema and whether it is required.
    body: Option<(Value<'static>, bool)>,
    /// The 200 answer's media type and schema.
    ok: (&'static str, Value<'static>),
    /// The error statuses besides the ones every operation of its kind has.
    errors: &'static [u16],
}

fn query(name: &str, schema: Value<'static>, description: &str) -> Value<'static> {
    o([
        ("name", s(name)),
        ("in", s("query")),
        ("required", Value::Bool(false)),
        ("description", s(description)),
        ("schema", schema),
    ])
}

fn path_id() -> Value<'static> {
    o([
        ("name", s("id")),
        ("in", s("path")),
        ("required", Value::Bool(true)),
        ("description", s("The approval's id.")),
        ("schema", ty("string")),
    ])
}

fn json_ok(schema: Value<'static>) -> (&'static str, Value<'static>) {
    ("application/json", schema)
}

fn limit(description: &str) -> Value<'static> {
    query("limit", int_range(0, u64::from(u32::MAX)), description)
}

fn operations() -> Vec<Op> {
    let agent = Access::Roles("agent, admin");
    let approver = Access::Roles("approver, admin");
    let admin = Access::Roles("admin");
    let seq = int_range(0, u64::try_from(i64::MAX).unwrap_or(u64::MAX));
    let note = object(
        &[(
            "note",
            o([
                ("type", s("string")),
                (
                    "maxLength",
                    n(u64::try_from(toolgate::identifier::MAX_NOTE_BYTES).unwrap_or(u64::MAX)),
                ),
            ]),
        )],
        &[],
        true,
    );
    let status = |values: &[&str]| answer(&[("status", one_of_enum(values.iter().copied()))]);
    vec![
        Op {
            method: "post",
            path: "/v1/decide",
            summary: "Decide every tool call of a model's response and record the decisions.",
            access: agent,
            params: vec![],
            body: Some((schema_ref("DecideRequest"), true)),
            ok: json_ok(schema_ref("Decisions")),
            errors: &[],
        },
        Op {
            method: "post",
            path: "/v1/results",
            summary: "Sanitize a tool's result before it goes back to the model.",
            access: agent,
            params: vec![],
            body: Some((schema_ref("ResultRequest"), true)),
            ok: json_ok(schema_ref("ResultAnswer")),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/v1/approvals",
            summary: "List approvals: the newest first, or after a cursor by ascending id; with the total.",
            access: approver,
            params: vec![
                query(
                    "state",
                    one_of_enum(approval_states().into_iter().chain(["all"])),
                    "Which approvals (default pending).",
                ),
                limit("At most this many (1 to 1000; default 100)."),
                query(
                    "after",
                    seq.clone(),
                    "Only approvals after this id, oldest first (the forward cursor).",
                ),
                query(
                    "before",
                    seq.clone(),
                    "Only approvals before this id (the cursor of newest-first pages).",
                ),
                query("user", identifier_query(), "Only this user's approvals."),
                query("session", identifier_query(), "Only this session's approvals."),
                query("tool", identifier_query(), "Only this tool's approvals."),
            ],
            body: None,
            ok: json_ok(answer(&[
                ("approvals", array_of(schema_ref("Approval"))),
                ("total", int_range(0, u64::MAX)),
            ])),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/v1/approvals/{id}",
            summary: "One approval, with what an approver decides on: the arguments of the call that asked, why it was held, the approvers so far, the session's recent decisions, labels and limit usage, and the values the holding policies read (facts).",
            access: approver,
            params: vec![path_id()],
            body: None,
            ok: json_ok(schema_ref("ApprovalDetail")),
            errors: &[404],
        },
        Op {
            method: "post",
            path: "/v1/approvals/{id}/approve",
            summary: "Approve a pending approval; under a two-person rule, one distinct approver's vote (the approval stays pending until the quorum is reached).",
            access: approver,
            params: vec![path_id()],
            body: Some((note.clone(), false)),
            ok: json_ok(schema_ref("Approval")),
            errors: &[404, 409],
        },
        Op {
            method: "post",
            path: "/v1/approvals/{id}/deny",
            summary: "Deny a pending approval, or revoke an unused approved one.",
            access: approver,
            params: vec![path_id()],
            body: Some((note.clone(), false)),
            ok: json_ok(schema_ref("Approval")),
            errors: &[404, 409],
        },
        Op {
            method: "get",
            path: "/v1/pins",
            summary: "List the tool definitions MCP servers showed `toolgate mcp`, by ascending id, each with its findings and its diff from the approved definition.",
            access: approver,
            params: vec![
                query(
                    "state",
                    one_of_enum(["pending", "approved", "rejected", "all"]),
                    "Which pins (default pending).",
                ),
                query("upstream", ty("string"), "Only this upstream's."),
                query("tool", ty("string"), "Only this tool's."),
                limit("At most this many (1 to 1000; default 100)."),
                query("after", seq.clone(), "Only pins after this id (the cursor)."),
            ],
            body: None,
            ok: json_ok(answer(&[("pins", array_of(schema_ref("Pin")))])),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/v1/pins/{id}",
            summary: "One tool-definition pin, with its findings and its diff from the approved definition.",
            access: approver,
            params: vec![path_id()],
            body: None,
            ok: json_ok(schema_ref("Pin")),
            errors: &[404],
        },
        Op {
            method: "post",
            path: "/v1/pins/{id}/approve",
            summary: "Approve a pending or rejected tool definition (audited `pin_approved`).",
            access: approver,
            params: vec![path_id()],
            body: Some((note.clone(), false)),
            ok: json_ok(schema_ref("Pin")),
            errors: &[404, 409],
        },
        Op {
            method: "post",
            path: "/v1/pins/{id}/reject",
            summary: "Reject a pending tool definition, or revoke an approved one (audited `pin_rejected`).",
            access: approver,
            params: vec![path_id()],
            body: Some((note, false)),
            ok: json_ok(schema_ref("Pin")),
            errors: &[404, 409],
        },
        Op {
            method: "get",
            path: "/v1/approvals/{id}/wait",
            summary: "Wait until an approval is decided, or the timeout.",
            access: Access::Roles("agent, approver, admin"),
            params: vec![
                path_id(),
                query(
                    "timeout",
                    ty("number"),
                    "Seconds to wait (default 30, at most 60; not positive: do not wait).",
                ),
            ],
            body: None,
            ok: json_ok(o([(
                "allOf",
                list([
                    schema_ref("Approval"),
                    answer(&[("timed_out", ty("boolean"))]),
                ]),
            )])),
            errors: &[404],
        },
        Op {
            method: "post",
            path: "/v1/hooks/claude",
            summary: "Claude Code's HTTP hook: decide one PreToolUse or audit one PostToolUse event.",
            access: Access::RolesInBody("agent (the token's name is the user decided for)"),
            params: vec![query(
                "on_hold",
                one_of_enum(["approval", "ask"]),
                "A held call: a toolgate approval (the default) or Claude Code's own ask.",
            )],
            body: Some((hook_event(), true)),
            ok: json_ok(hook_answer()),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/v1/notices",
            summary: "How the notices of held calls to the notification sinks ([[approvals.notify]]) went, the most recently changed first, and how many were dropped because the queue was full.",
            access: admin,
            params: vec![query(
                "limit",
                int_range(1, 1000),
                "At most this many (default 100).",
            )],
            body: None,
            ok: json_ok(schema_ref("Notices")),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/v1/kill",
            summary: "The kill switch.",
            access: admin,
            params: vec![],
            body: None,
            ok: json_ok(schema_ref("Kill")),
            errors: &[],
        },
        Op {
            method: "post",
            path: "/v1/kill",
            summary: "Flip the kill switch (audited).",
            access: admin,
            params: vec![],
            body: Some((
                object(
                    &[
                        ("mode", one_of_enum(KILL_MODES.iter().map(|m| m.as_str()))),
                        ("reason", ty("string")),
                    ],
                    &["mode"],
                    true,
                ),
                true,
            )),
            ok: json_ok(schema_ref("Kill")),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/v1/audit",
            summary: "A page of audit records, oldest first; all filters must match.",
            access: admin,
            params: vec![
                query("user", min_len_1(), "Only this user's records."),
                query("session", min_len_1(), "Only this session's records."),
                query("tool", min_len_1(), "Only this tool's records."),
                query(
                    "verdict",
                    one_of_enum(audit_verdicts()),
                    "Only records with this verdict.",
                ),
                query(
                    "kind",
                    one_of_enum(crate::routes::audit::AUDIT_KINDS),
                    "Only records of this kind.",
                ),
                query(
                    "since",
                    int_range(i64::MIN, u64::try_from(i64::MAX).unwrap_or(u64::MAX)),
                    "Only records at or after this time (Unix milliseconds).",
                ),
                query(
                    "until",
                    int_range(i64::MIN, u64::try_from(i64::MAX).unwrap_or(u64::MAX)),
                    "Only records before this time (Unix milliseconds).",
                ),
                limit("At most this many (1 to 1000; default 100)."),
                query(
                    "before",
                    seq.clone(),
                    "The page before this seq (the previous answer's next_before).",
                ),
                query(
                    "after",
                    seq,
                    "The page after this seq (the previous answer's next_after).",
                ),
            ],
            body: None,
            ok: json_ok(answer(&[
                ("records", array_of(schema_ref("AuditRecord"))),
                ("next_before", nullable("integer")),
                ("next_after", nullable("integer")),
            ])),
            errors: &[],
        },
        Op {
            method: "post",
            path: "/v1/reload",
            summary:
                "Re-read the config, policies, schemas, entities and the [server] tokens and metrics_auth; swap them atomically. Other [server] changes are refused (409 restart_required, naming the keys).",
            access: admin,
            params: vec![],
            body: None,
            ok: json_ok(answer(&[
                ("status", one_of_enum(["applied"])),
                ("config", ty("string")),
                ("tools", int_range(0, SAFE_INTEGER)),
                (
                    "server",
                    array_of(one_of_enum(["token", "metrics_auth"])),
                ),
            ])),
            errors: &[409, 422],
        },
        Op {
            method: "get",
            path: "/healthz",
            summary: "Liveness.",
            access: Access::Open,
            params: vec![],
            body: None,
            ok: json_ok(status(&["ok"])),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/readyz",
            summary: "Readiness: the store answers and can take a write (503 otherwise).",
            access: Access::Open,
            params: vec![],
            body: None,
            ok: json_ok(status(&["ready"])),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/metrics",
            summary: "Prometheus metrics (text exposition format).",
            access: Access::Open,
            params: vec![],
            body: None,
            ok: ("text/plain", ty("string")),
            errors: &[],
        },
        Op {
            method: "get",
            path: "/openapi.json",
            summary: "This document.",
            access: Access::Open,
            params: vec![],
            body: None,
            ok: json_ok(ty("object")),
            errors: &[],
        },
    ]
}

/// A string of at most [`toolgate::identifier::MAX_IDENTIFIER_BYTES`]
/// (characters bound it from above: every character is at least a byte).
fn identifier() -> Value<'static> {
    o([
        ("type", s("string")),
        (
            "maxLength",
            n(u64::try_from(toolgate::identifier::MAX_IDENTIFIER_BYTES).unwrap_or(u64::MAX)),
        ),
    ])
}

/// A non-empty [`identifier`].
fn identifier_query() -> Value<'static> {
    o([
        ("type", s("string")),
        ("minLength", n(1)),
        (
            "maxLength",
            n(u64::try_from(toolgate::identifier::MAX_IDENTIFIER_BYTES).unwrap_or(u64::MAX)),
        ),
    ])
}

fn min_len_1() -> Value<'static> {
    o([("type", s("string")), ("minLength", n(1))])
}

fn error_response(status: u16) -> Value<'static> {
    let description = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("error");
    o([
        ("description", s(description)),
        (
            "content",
            o([("application/json", o([("schema", schema_ref("Error"))]))]),
        ),
    ])
}

fn operation(op: &Op) -> Value<'static> {
    let mut out = Object::new();
    out.insert("summary", s(op.summary));
    out.insert(
        "operationId",
        s(&format!(
            "{}{}",
            op.method,
            op.path.replace(['/', '{', '}', '.'], "_")
        )),
    );
    let mut errors: Vec<u16> = op.errors.to_vec();
    match op.access {
        Access::Open => {
            out.insert("security", list([]));
        }
        Access::Roles(roles) => {
            out.insert("security", list([o([("bearer", list([]))])]));
            out.insert(
                "description",
                s(&format!(
                    "Roles: {roles}. Refusals (401, 403) are audited; more than one \
                     `Authorization` header is 400 `duplicate_header`."
                )),
            );
            errors.extend([400, 401, 403, 503]);
        }
        Access::RolesInBody(roles) => {
            // At the HTTP level a request without a token is answered (200,
            // denying), so the anonymous alternative `{}` is listed too.
            out.insert("security", list([o([("bearer", list([]))]), o([])]));
            out.insert(
                "description",
                s(&format!(
                    "Roles: {roles}. Every answer is 200: a refusal (no or an unknown \
                     token, an unreadable event, a store error, a decision later than 10 s) \
                     is a deny whose reason says `toolgate: blocked: CODE`, since Claude \
                     Code runs the call when its HTTP hook answers any other status."
                )),
            );
        }
    }
    let in_body = matches!(op.access, Access::RolesInBody(_));
    if !op.params.is_empty() {
        out.insert("parameters", Value::Array(op.params.clone()));
        if !in_body
            && op
                .params
                .iter()
                .any(|p| p.pointer("/in") == Some(&s("query")))
        {
            errors.push(400);
        }
    }
    if let Some((schema, required)) = &op.body {
        out.insert(
            "requestBody",
            o([
                ("required", Value::Bool(*required)),
                (
                    "content",
                    o([("application/json", o([("schema", schema.clone())]))]),
                ),
            ]),
        );
        if !in_body {
            errors.extend([400, 408, 413, 415]);
        }
    }
    if op.path == "/readyz" {
        errors.push(503);
    }
    errors.sort_unstable();
    errors.dedup();
    let mut responses = Object::new();
    responses.insert(
        "200",
        o([
            ("description", s("OK")),
            ("content", o([(op.ok.0, o([("schema", op.ok.1.clone())]))])),
        ]),
    );
    for status in errors {
        responses.insert(status.to_string(), error_response(status));
    }
    out.insert("responses", Value::Object(responses));
    Value::Object(out)
}

/// The document, as a JSON value, for a gate with these tools.
pub fn document_value(tools: &[&str]) -> Value<'static> {
    let mut paths = Object::new();
    for op in operations() {
        let entry = paths
            .get(op.path)
            .cloned()
            .unwrap_or_else(|| Value::Object(Object::new()));
        let mut methods = match entry {
            Value::Object(m) => m,
            _ => Object::new(),
        };
        methods.insert(op.method, operation(&op));
        paths.insert(op.path, Value::Object(methods));
    }
    o([
        ("openapi", s("3.1.0")),
        (
            "info",
            o([
                ("title", s("toolgate")),
                ("version", s(env!("CARGO_PKG_VERSION"))),
                (
                    "description",
                    s("toolgate's decision service: decisions on a model's tool calls, approvals, the kill switch, the audit log, tool-result sanitizing and reload. Every error is {\"error\": {\"code\", \"message\", \"pointer\"}} with a stable code."),
                ),
            ]),
        ),
        ("paths", Value::Object(paths)),
        ("components", components(tools)),
    ])
}

/// `GET /openapi.json`: the document for the current gate's tools.
pub async fn document(State(state): State<AppState>) -> Response {
    let gate = state.inner.gate.gate();
    let tools: Vec<&str> = gate.registry().iter().map(|t| t.name()).collect();
    json_response(
        StatusCode::OK,
        canonical::to_string(&document_value(&tools)),
    )
}
