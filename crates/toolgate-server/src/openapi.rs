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

fn s(text: &str) -> Value<'static> {
    Value::String(Cow::Owned(text.to_owned()))
}

fn n(value: u64) -> Value<'static> {
    Value::Number(Number::from(value))
}

fn i(value: i64) -> Value<'static> {
    Value::Number(Number::from(value))
}

fn o<const N: usize>(members: [(&str, Value<'static>); N]) -> Value<'static> {
    let mut out = Object::new();
    for (k, v) in members {
        out.insert(k.to_owned(), v);
    }
    Value::Object(out)
}

fn list(items: impl IntoIterator<Item = Value<'static>>) -> Value<'static> {
    Value::Array(items.into_iter().collect())
}

fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Value<'static> {
    list(items.into_iter().map(s))
}

fn ty(name: &str) -> Value<'static> {
    o([("type", s(name))])
}

fn nullable(name: &str) -> Value<'static> {
    o([("type", strings([name, "null"]))])
}

fn one_of_enum<'a>(values: impl IntoIterator<Item = &'a str>) -> Value<'static> {
    o([("type", s("string")), ("enum", strings(values))])
}

fn int_range(min: i64, max: u64) -> Value<'static> {
    o([
        ("type", s("integer")),
        ("minimum", i(min)),
        ("maximum", n(max)),
    ])
}

fn array_of(items: Value<'static>) -> Value<'static> {
    o([("type", s("array")), ("items", items)])
}

fn schema_ref(name: &str) -> Value<'static> {
    o([("$ref", s(&format!("#/components/schemas/{name}")))])
}

/// An object schema: `members` with their schemas, the `required` ones,
/// and whether other members are refused (request bodies) or allowed.
fn object(members: &[(&str, Value<'static>)], required: &[&str], closed: bool) -> Value<'static> {
    let mut props = Object::new();
    for (k, v) in members {
        props.insert((*k).to_owned(), v.clone());
    }
    let mut out = Object::new();
    out.insert("type", s("object"));
    out.insert("properties", Value::Object(props));
    out.insert("required", strings(required.iter().copied()));
    if closed {
        out.insert("additionalProperties", Value::Bool(false));
    }
    Value::Object(out)
}

/// Every member required: an answer's shape.
fn answer(members: &[(&str, Value<'static>)]) -> Value<'static> {
    let names: Vec<&str> = members.iter().map(|(k, _)| *k).collect();
    object(members, &names, false)
}

fn reason() -> Value<'static> {
    object(
        &[
            ("code", ty("string")),
            ("pointer", ty("string")),
            ("detail", ty("string")),
        ],
        &["code", "pointer"],
        false,
    )
}

fn decision_verdict() -> Value<'static> {
    one_of_enum(["allow", "deny", "needs_approval"])
}

fn decisions() -> Value<'static> {
    let finding = object(
        &[
            ("code", ty("string")),
            ("pointer", ty("string")),
            ("detail", ty("string")),
            ("denies", ty("boolean")),
        ],
        &["code", "pointer", "denies"],
        false,
    );
    let decision = answer(&[
        ("index", int_range(0, SAFE_INTEGER)),
        ("call_id", nullable("string")),
        ("tool", ty("string")),
        ("verdict", decision_verdict()),
        ("reasons", array_of(schema_ref("Reason"))),
        (
            "arguments",
            o([(
                "description",
                s("the canonical value the gate checked, to run the tool with; null for a denied call"),
            )]),
        ),
        ("digest", nullable("string")),
        ("approval", nullable("string")),
        ("policies", array_of(ty("string"))),
        (
            "pinned",
            array_of(answer(&[
                ("pointer", ty("string")),
                ("addresses", array_of(ty("string"))),
            ])),
        ),
        ("feedback", ty("string")),
    ]);
    let finish = o([(
        "oneOf",
        list([
            ty("null"),
            answer(&[("kind", ty("string")), ("reason", ty("string"))]),
        ]),
    )]);
    let rejected = o([("oneOf", list([ty("null"), schema_ref("Reason")]))]);
    answer(&[
        ("format", nullable("string")),
        ("streamed", ty("boolean")),
        ("finish", finish),
        ("verdict", decision_verdict()),
        ("rejected", rejected),
        ("findings", array_of(finding)),
        ("decisions", array_of(decision)),
    ])
}

fn digest_string() -> Value<'static> {
    o([
        ("type", s("string")),
        ("pattern", s("^sha256:[0-9a-f]{64}$")),
    ])
}

/// The context document ([`toolgate::Context`]).
fn context() -> Value<'static> {
    let u32_from_1 = int_range(1, u64::from(u32::MAX));
    let single = object(
        &[
            ("id", ty("string")),
            ("kind", one_of_enum(["single"])),
            ("user", ty("string")),
            ("session", ty("string")),
            ("tool", ty("string")),
            ("digest", digest_string()),
            ("expires_at", int_range(0, u64::MAX)),
            ("used", ty("boolean")),
        ],
        &["id", "user", "session", "tool", "digest", "expires_at"],
        true,
    );
    // A standing approval: the tool for the user, any arguments, until it
    // expires (in one session if it names one).
    let standing = object(
        &[
            ("id", ty("string")),
            ("kind", one_of_enum(["standing"])),
            ("user", ty("string")),
            ("session", ty("string")),
            ("tool", ty("string")),
            ("expires_at", int_range(0, u64::MAX)),
        ],
        &["id", "kind", "user", "tool", "expires_at"],
        true,
    );
    let approval = o([("oneOf", list([single, standing]))]);
    let rejection = object(
        &[("tool", ty("string")), ("shape", digest_string())],
        &["tool", "shape"],
        true,
    );
    object(
        &[
            ("user", ty("string")),
            ("session", ty("string")),
            ("roles", array_of(ty("string"))),
            ("turn", u32_from_1.clone()),
            ("max_turns", u32_from_1),
            ("now", int_range(0, u64::MAX)),
            (
                "kill_switch",
                one_of_enum(KILL_MODES.iter().map(|m| m.as_str())),
            ),
            ("approvals", array_of(approval)),
            ("rejections", array_of(rejection)),
            ("allowed_calls", array_of(ty("string"))),
            ("entities", o([])),
        ],
        &["user", "session", "turn"],
        true,
    )
}

fn decide_request() -> Value<'static> {
    object(
        &[
            ("body", ty("string")),
            (
                "format",
                one_of_enum(Format::ALL.iter().map(|f| f.as_str())),
            ),
            ("context", schema_ref("Context")),
        ],
        &["body"],
        true,
    )
}

fn millis() -> Value<'static> {
    ty("integer")
}

fn nullable_millis() -> Value<'static> {
    nullable("integer")
}

fn approval() -> Value<'static> {
    answer(&[
        ("id", ty("string")),
        ("kind", one_of_enum(["single", "standing"])),
        ("user", ty("string")),
        ("session", nullable("string")),
        ("tool", ty("string")),
        ("digest", nullable("string")),
        ("created_at", millis()),
        ("expires_at", millis()),
        ("state", one_of_enum(approval_states())),
        ("decided_by", nullable("string")),
        ("decided_at", nullable_millis()),
        ("note", nullable("string")),
        ("used_at", nullable_millis()),
        ("uses", int_range(0, u64::MAX)),
    ])
}

/// A tool-definition pin with its findings and diff (`GET /v1/pins/{id}`).
fn pin() -> Value<'static> {
    let member = answer(&[
        ("member", ty("string")),
        ("change", one_of_enum(["added", "removed", "changed"])),
    ]);
    let line = answer(&[("op", one_of_enum([" ", "-", "+"])), ("text", ty("string"))]);
    let approved = o([(
        "oneOf",
        list([
            ty("null"),
            answer(&[("id", ty("string")), ("digest", digest_string())]),
        ]),
    )]);
    answer(&[
        ("id", ty("string")),
        ("upstream", ty("string")),
        ("tool", ty("string")),
        ("state", one_of_enum(["pending", "approved", "rejected"])),
        ("digest", digest_string()),
        (
            "definition",
            o([(
                "description",
                s("the definition as the server showed it: name, title, description, inputSchema, outputSchema, annotations"),
            )]),
        ),
        ("findings", array_of(ty("string"))),
        ("first_seen", millis()),
        ("last_seen", millis()),
        ("decided_by", nullable("string")),
        ("decided_at", nullable_millis()),
        ("note", nullable("string")),
        (
            "diff",
            answer(&[
                ("approved", approved),
                ("members", array_of(member)),
                ("lines", array_of(line)),
            ]),
        ),
    ])
}

fn approval_states() -> [&'static str; 5] {
    [
        ApprovalState::Pending.as_str(),
        ApprovalState::Approved.as_str(),
        ApprovalState::Denied.as_str(),
        ApprovalState::Expired.as_str(),
        ApprovalState::Withdrawn.as_str(),
    ]
}

fn kill() -> Value<'static> {
    answer(&[
        ("mode", one_of_enum(KILL_MODES.iter().map(|m| m.as_str()))),
        ("reason", nullable("string")),
        ("actor", nullable("string")),
        ("changed_at", nullable_millis()),
    ])
}

fn audit_verdicts() -> Vec<&'static str> {
    toolgate_store::Verdict::ALL
        .iter()
        .map(|v| v.as_str())
        .collect()
}

fn audit_record() -> Value<'static> {
    let hash = digest_string();
    let always = [
        (
            "v",
            o([
                ("type", s("integer")),
                (
                    "description",
                    s("the record's format version: 2 for records written now, 1 for older ones, kept with the record (its hash covers its own format)"),
                ),
            ]),
        ),
        ("seq", int_range(1, u64::MAX)),
        ("time", ty("integer")),
        ("verdict", one_of_enum(audit_verdicts())),
        ("user", nullable("string")),
        ("session", nullable("string")),
        ("tool", nullable("string")),
        ("call_id", nullable("string")),
        ("reasons", array_of(ty("string"))),
        ("policies", array_of(ty("string"))),
        (
            "digest",
            o([("oneOf", list([ty("null"), digest_string()]))]),
        ),
        (
            "arguments",
            o([(
                "description",
                s("the canonical value the gate checked, to run the tool with; null for a denied call"),
            )]),
        ),
        (
            "approval",
            o([
                ("type", strings(["string", "null"])),
                ("pattern", s("^[0-9]+$")),
                (
                    "description",
                    s("the approval the record concerns: decimal digits, the same id /v1/decide and /v1/approvals give; records of version 1 (v = 1, written by older builds) carry it as an integer"),
                ),
            ]),
        ),
        ("actor", nullable("string")),
        ("note", nullable("string")),
        ("prev", hash.clone()),
        ("hash", hash),
    ];
    let required: Vec<&str> = always.iter().map(|(k, _)| *k).collect();
    // Written only when present (older records have neither).
    let refused = object(
        &[
            ("bytes", int_range(0, u64::MAX)),
            ("text", ty("string")),
            ("truncated", ty("boolean")),
            ("hmac", ty("string")),
        ],
        &["bytes"],
        false,
    );
    let mut members = always.to_vec();
    members.push(("refused_arguments", refused));
    members.push(("risk", one_of_enum(["read", "write", "destructive"])));
    object(&members, &required, false)
}

/// `tools`: the registered tools' names, the only ones accepted.
fn result_request(tools: &[&str]) -> Value<'static> {
    let tool = if tools.is_empty() {
        ty("string")
    } else {
        one_of_enum(tools.iter().copied())
    };
    object(
        &[
            ("tool", tool),
            ("result", o([])),
            ("call_id", identifier()),
            ("session", identifier()),
        ],
        &["tool", "result"],
        true,
    )
}

fn result_answer() -> Value<'static> {
    answer(&[
        ("tool", ty("string")),
        ("call_id", nullable("string")),
        ("session", nullable("string")),
        ("content", ty("string")),
        ("wrapped", ty("string")),
        ("truncated", ty("boolean")),
        ("changed", ty("boolean")),
        (
            "findings",
            array_of(answer(&[
                (
                    "code",
                    one_of_enum(FindingCode::ALL.iter().map(|c| c.as_str())),
                ),
                ("offset", int_range(0, SAFE_INTEGER)),
            ])),
        ),
    ])
}

fn error() -> Value<'static> {
    answer(&[(
        "error",
        answer(&[
            ("code", one_of_enum(ERROR_CODES)),
            ("message", ty("string")),
            ("pointer", ty("string")),
        ]),
    )])
}

fn components(tools: &[&str]) -> Value<'static> {
    let mut schemas = Object::new();
    for (name, schema) in [
        ("Error", error()),
        ("Reason", reason()),
        ("Decisions", decisions()),
        ("Context", context()),
        ("DecideRequest", decide_request()),
        ("Approval", approval()),
        ("Pin", pin()),
        ("Kill", kill()),
        ("AuditRecord", audit_record()),
        ("ResultRequest", result_request(tools)),
        ("ResultAnswer", result_answer()),
    ] {
        schemas.insert(name, schema);
    }
    o([
        ("schemas", Value::Object(schemas)),
        (
            "securitySchemes",
            o([(
                "bearer",
                o([
                    ("type", s("http")),
                    ("scheme", s("bearer")),
                    (
                        "description",
                        s("A token of `[[server.token]]`; its role (agent, approver, admin) decides which routes it may use."),
                    ),
                ]),
            )]),
        ),
    ])
}

/// Who may call an operation.
#[derive(Clone, Copy)]
enum Access {
    /// No token.
    Open,
    /// A bearer token with one of these roles.
    Roles(&'static str),
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
            summary: "One approval.",
            access: approver,
            params: vec![path_id()],
            body: None,
            ok: json_ok(schema_ref("Approval")),
            errors: &[404],
        },
        Op {
            method: "post",
            path: "/v1/approvals/{id}/approve",
            summary: "Approve a pending approval.",
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
    }
    if !op.params.is_empty() {
        out.insert("parameters", Value::Array(op.params.clone()));
        if op
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
        errors.extend([400, 408, 413, 415]);
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
