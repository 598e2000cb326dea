//! The document's building blocks and its component schemas (decisions,
//! contexts, approvals, pins, audit records, results, errors).

use super::*;

pub(super) fn s(text: &str) -> Value<'static> {
    Value::String(Cow::Owned(text.to_owned()))
}

pub(super) fn n(value: u64) -> Value<'static> {
    Value::Number(Number::from(value))
}

pub(super) fn i(value: i64) -> Value<'static> {
    Value::Number(Number::from(value))
}

pub(super) fn o<const N: usize>(members: [(&str, Value<'static>); N]) -> Value<'static> {
    let mut out = Object::new();
    for (k, v) in members {
        out.insert(k.to_owned(), v);
    }
    Value::Object(out)
}

pub(super) fn list(items: impl IntoIterator<Item = Value<'static>>) -> Value<'static> {
    Value::Array(items.into_iter().collect())
}

pub(super) fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Value<'static> {
    list(items.into_iter().map(s))
}

pub(super) fn ty(name: &str) -> Value<'static> {
    o([("type", s(name))])
}

pub(super) fn nullable(name: &str) -> Value<'static> {
    o([("type", strings([name, "null"]))])
}

pub(super) fn one_of_enum<'a>(values: impl IntoIterator<Item = &'a str>) -> Value<'static> {
    o([("type", s("string")), ("enum", strings(values))])
}

pub(super) fn int_range(min: i64, max: u64) -> Value<'static> {
    o([
        ("type", s("integer")),
        ("minimum", i(min)),
        ("maximum", n(max)),
    ])
}

pub(super) fn array_of(items: Value<'static>) -> Value<'static> {
    o([("type", s("array")), ("items", items)])
}

pub(super) fn schema_ref(name: &str) -> Value<'static> {
    o([("$ref", s(&format!("#/components/schemas/{name}")))])
}

/// An object schema: `members` with their schemas, the `required` ones,
/// and whether other members are refused (request bodies) or allowed.
pub(super) fn object(
    members: &[(&str, Value<'static>)],
    required: &[&str],
    closed: bool,
) -> Value<'static> {
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
pub(super) fn answer(members: &[(&str, Value<'static>)]) -> Value<'static> {
    let names: Vec<&str> = members.iter().map(|(k, _)| *k).collect();
    object(members, &names, false)
}

pub(super) fn reason() -> Value<'static> {
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

pub(super) fn decision_verdict() -> Value<'static> {
    one_of_enum(["allow", "deny", "needs_approval"])
}

pub(super) fn decisions() -> Value<'static> {
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
    let decision_members = [
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
        (
            "receipt",
            o([
                ("type", s("string")),
                (
                    "description",
                    s("the signed receipt (`tgr1.…`), present when `[gate] receipt_key` is set"),
                ),
            ]),
        ),
        (
            "charges",
            o([
                ("type", s("array")),
                (
                    "items",
                    answer(&[("limit", ty("string")), ("amount", ty("string"))]),
                ),
                (
                    "description",
                    s("what the allowed call adds to each `[[limit]]` counting it (a caller without a store keeps them as `limit_events`)"),
                ),
            ]),
        ),
        (
            "labels",
            o([
                ("type", s("array")),
                ("items", ty("string")),
                (
                    "description",
                    s("the session labels the allowed call's result brings in"),
                ),
            ]),
        ),
        (
            "retry_after",
            o([
                ("type", s("integer")),
                ("minimum", n(0)),
                (
                    "description",
                    s("seconds after which a call denied `rate_limited` or `budget_exceeded` can succeed"),
                ),
            ]),
        ),
    ];
    // Every member is always present but the optional ones.
    let optional = ["receipt", "charges", "labels", "retry_after"];
    let required: Vec<&str> = decision_members
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !optional.contains(k))
        .collect();
    let decision = object(&decision_members, &required, false);
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

pub(super) fn digest_string() -> Value<'static> {
    o([
        ("type", s("string")),
        ("pattern", s("^sha256:[0-9a-f]{64}$")),
    ])
}

/// The context document ([`toolgate::Context`]).
pub(super) fn context() -> Value<'static> {
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
    // A counted call of a `[[limit]]`, kept by a caller without a store.
    let limit_event = object(
        &[
            ("limit", ty("string")),
            ("at", int_range(0, u64::MAX)),
            ("amount", o([("oneOf", list([ty("number"), ty("string")]))])),
        ],
        &["limit", "at", "amount"],
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
            ("limit_events", array_of(limit_event)),
            ("labels", array_of(ty("string"))),
            ("entities", o([])),
        ],
        &["user", "session", "turn"],
        true,
    )
}

pub(super) fn decide_request() -> Value<'static> {
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

pub(super) fn millis() -> Value<'static> {
    ty("integer")
}

pub(super) fn nullable_millis() -> Value<'static> {
    nullable("integer")
}

pub(super) fn approval() -> Value<'static> {
    answer(&approval_members())
}

/// One approval with what a human needs to decide it (`GET
/// /v1/approvals/{id}`): the tool's risk tier and, from the call that asked
/// for it, its call id, reasons, the policies that held it and canonical
/// arguments as escaped text; the approvers so far; the session's recent
/// decisions, labels, and the usage of the limits counting the tool; what
/// the policies that held it read (`facts`: a Cedar path and the value as
/// Cedar writes it, secrets redacted).
pub(super) fn approval_detail() -> Value<'static> {
    let mut members = approval_members();
    let approver = answer(&[
        ("approver", ty("string")),
        ("at", millis()),
        ("note", nullable("string")),
    ]);
    let recent = answer(&[
        ("seq", int_range(0, u64::MAX)),
        ("time", millis()),
        ("verdict", one_of_enum(["allow", "deny", "needs_approval"])),
        ("user", nullable("string")),
        ("session", nullable("string")),
        ("tool", nullable("string")),
        ("reasons", array_of(ty("string"))),
        ("approval", nullable("string")),
        ("actor", nullable("string")),
        ("note", nullable("string")),
        ("call_id", nullable("string")),
        ("policies", array_of(ty("string"))),
    ]);
    let usage = answer(&[
        ("limit", ty("string")),
        ("per", one_of_enum(["user", "session", "global"])),
        ("used", ty("string")),
        ("cap", ty("string")),
        ("window_seconds", int_range(0, u64::MAX)),
    ]);
    let fact = answer(&[("path", ty("string")), ("value", ty("string"))]);
    members.extend([
        ("risk", nullable("string")),
        ("call_id", nullable("string")),
        ("reasons", array_of(ty("string"))),
        ("policies", array_of(ty("string"))),
        ("arguments", nullable("string")),
        ("approvers", array_of(approver)),
        ("recent", array_of(recent)),
        ("labels", array_of(ty("string"))),
        ("usage", array_of(usage)),
        ("facts", array_of(fact)),
    ]);
    answer(&members)
}

/// The notices of held calls (`GET /v1/notices`).
pub(super) fn notices() -> Value<'static> {
    let notice = answer(&[
        ("approval", ty("string")),
        ("sink", ty("string")),
        ("state", one_of_enum(["sending", "delivered", "failed"])),
        ("attempts", int_range(0, u64::from(u32::MAX))),
        ("claimed_at", millis()),
        ("updated_at", millis()),
        ("outcome", nullable("string")),
    ]);
    answer(&[
        ("notices", array_of(notice)),
        ("dropped", int_range(0, u64::MAX)),
    ])
}

fn approval_members() -> Vec<(&'static str, Value<'static>)> {
    vec![
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
        ("upstream", nullable("string")),
        ("approvers_needed", int_range(1, 10)),
        ("approvers_so_far", int_range(0, u64::MAX)),
        ("not_own", ty("boolean")),
    ]
}

/// A tool-definition pin with its findings and diff (`GET /v1/pins/{id}`).
pub(super) fn pin() -> Value<'static> {
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

pub(super) fn approval_states() -> [&'static str; 5] {
    [
        ApprovalState::Pending.as_str(),
        ApprovalState::Approved.as_str(),
        ApprovalState::Denied.as_str(),
        ApprovalState::Expired.as_str(),
        ApprovalState::Withdrawn.as_str(),
    ]
}

pub(super) fn kill() -> Value<'static> {
    answer(&[
        ("mode", one_of_enum(KILL_MODES.iter().map(|m| m.as_str()))),
        ("reason", nullable("string")),
        ("actor", nullable("string")),
        ("changed_at", nullable_millis()),
    ])
}

pub(super) fn audit_verdicts() -> Vec<&'static str> {
    toolgate_store::AuditVerdict::ALL
        .iter()
        .map(|v| v.as_str())
        .collect()
}

pub(super) fn audit_record() -> Value<'static> {
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
pub(super) fn result_request(tools: &[&str]) -> Value<'static> {
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

pub(super) fn result_answer() -> Value<'static> {
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

pub(super) fn error() -> Value<'static> {
    answer(&[(
        "error",
        answer(&[
            ("code", one_of_enum(ERROR_CODES)),
            ("message", ty("string")),
            ("pointer", ty("string")),
        ]),
    )])
}

pub(super) fn components(tools: &[&str]) -> Value<'static> {
    let mut schemas = Object::new();
    for (name, schema) in [
        ("Error", error()),
        ("Reason", reason()),
        ("Decisions", decisions()),
        ("Context", context()),
        ("DecideRequest", decide_request()),
        ("Approval", approval()),
        ("ApprovalDetail", approval_detail()),
        ("Notices", notices()),
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

/// A Claude Code hook event (`PreToolUse` or `PostToolUse`) as its HTTP
/// hook posts it; members the gate does not read are allowed.
pub(super) fn hook_event() -> Value<'static> {
    object(
        &[
            (
                "hook_event_name",
                one_of_enum(["PreToolUse", "PostToolUse"]),
            ),
            ("session_id", super::min_len_1()),
            ("tool_name", super::min_len_1()),
            ("tool_input", ty("object")),
            ("tool_use_id", ty("string")),
            ("cwd", ty("string")),
            ("tool_response", o([])),
        ],
        &["hook_event_name", "session_id", "tool_name", "tool_input"],
        false,
    )
}

/// What a Claude Code hook answers: `{}` (no objection), a PreToolUse
/// decision (`allow` with the checked value as `updatedInput`, `deny` with
/// a reason, `ask`), or a PostToolUse `block` with the findings.
pub(super) fn hook_answer() -> Value<'static> {
    let specific = object(
        &[
            ("hookEventName", one_of_enum(["PreToolUse"])),
            ("permissionDecision", one_of_enum(["allow", "deny", "ask"])),
            ("permissionDecisionReason", ty("string")),
            ("updatedInput", ty("object")),
        ],
        &["hookEventName", "permissionDecision"],
        true,
    );
    object(
        &[
            ("hookSpecificOutput", specific),
            ("decision", one_of_enum(["block"])),
            ("reason", ty("string")),
            ("systemMessage", ty("string")),
        ],
        &[],
        true,
    )
}
