//! The service's wire types: requests read from strict JSON values (unknown
//! members refused), responses written as canonical JSON.

use std::borrow::Cow;

use toolgate::{Context, Decisions, Format};
use toolgate_json::{canonical, Number, Object, Value};
use toolgate_store::{Approval, ApprovalContext, AuditRecord, KillMode, KillSwitchState};

use crate::error::ApiError;

/// `POST /v1/decide`: `{"body": "…", "format": "auto", "context": {…}}`.
#[derive(Debug)]
pub struct DecideRequest {
    /// The raw provider response (JSON text or an SSE stream body).
    pub body: String,
    /// The format, `auto` by default.
    pub format: Format,
    /// The context; user and session empty at turn 1 when absent.
    pub context: Context,
}

/// `POST /v1/kill`: `{"mode": "off|deny_writes|deny_all", "reason": "…"}`.
#[derive(Debug)]
pub struct KillRequest {
    /// The new mode.
    pub mode: KillMode,
    /// Why (recorded in the audit log).
    pub reason: String,
}

pub(crate) fn object<'v>(v: &'v Value<'static>) -> Result<&'v Object<'static>, ApiError> {
    v.as_object()
        .ok_or_else(|| ApiError::invalid_request("the body must be a JSON object", ""))
}

pub(crate) fn only(o: &Object<'_>, names: &[&str]) -> Result<(), ApiError> {
    for k in o.keys() {
        if !names.contains(&k) {
            let mut p = String::new();
            toolgate_json::pointer::push_token(&mut p, k);
            return Err(ApiError::unknown_field(p));
        }
    }
    Ok(())
}

pub(crate) fn string_member(
    o: &Object<'_>,
    name: &str,
    required: bool,
) -> Result<Option<String>, ApiError> {
    match o.get(name) {
        None if required => Err(ApiError::invalid_request(
            format!("missing member `{name}`"),
            format!("/{name}"),
        )),
        None => Ok(None),
        Some(v) => v.as_str().map(|s| Some(s.to_owned())).ok_or_else(|| {
            ApiError::invalid_request(format!("`{name}` must be a string"), format!("/{name}"))
        }),
    }
}

/// [`string_member`] of at most `max` bytes: longer is `400
/// identifier_too_long` at the member (see [`toolgate::identifier`]).
pub(crate) fn bounded_member(
    o: &Object<'_>,
    name: &str,
    required: bool,
    max: usize,
) -> Result<Option<String>, ApiError> {
    let value = string_member(o, name, required)?;
    if value.as_ref().is_some_and(|v| v.len() > max) {
        return Err(ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "identifier_too_long",
            format!("`{name}` is longer than {max} bytes"),
        )
        .at(format!("/{name}")));
    }
    Ok(value)
}

impl DecideRequest {
    /// Reads a decide request.
    pub fn from_value(v: &Value<'static>) -> Result<Self, ApiError> {
        let o = object(v)?;
        only(o, &["body", "format", "context"])?;
        let body = string_member(o, "body", true)?.unwrap_or_default();
        let format = match string_member(o, "format", false)? {
            None => Format::Auto,
            Some(f) => f.parse().map_err(|_| {
                ApiError::invalid_request(
                    "`format` must be auto, openai, responses, anthropic, gemini or mcp",
                    "/format",
                )
            })?,
        };
        let context = match o.get("context") {
            None => Context::new("", "", 1),
            Some(c) => {
                // The value the request's strict reader parsed, handed on
                // as it is (numbers keep their lexemes: `1.0` and `1e0`
                // are judged as `toolgate check --context` judges them).
                Context::from_value(c).map_err(|e| {
                    let pointer = format!("/context{}", e.pointer());
                    match e.kind() {
                        toolgate::ContextErrorKind::UnknownMember => {
                            ApiError::unknown_field(pointer)
                        }
                        _ => ApiError::invalid_request(format!("context: {e}"), pointer),
                    }
                })?
            }
        };
        Ok(Self {
            body,
            format,
            context,
        })
    }
}

impl KillRequest {
    /// Reads a kill request.
    pub fn from_value(v: &Value<'static>) -> Result<Self, ApiError> {
        let o = object(v)?;
        only(o, &["mode", "reason"])?;
        let mode = string_member(o, "mode", true)?.unwrap_or_default();
        let mode = KillMode::parse(&mode).ok_or_else(|| {
            ApiError::invalid_request("`mode` must be off, deny_writes or deny_all", "/mode")
        })?;
        let reason = string_member(o, "reason", false)?.unwrap_or_default();
        Ok(Self { mode, reason })
    }
}

/// The optional note of an approve or deny: `{"note": "…"}`.
pub fn note(v: Option<&Value<'static>>) -> Result<String, ApiError> {
    match v {
        None => Ok(String::new()),
        Some(v) => {
            let o = object(v)?;
            only(o, &["note"])?;
            Ok(
                bounded_member(o, "note", false, toolgate::identifier::MAX_NOTE_BYTES)?
                    .unwrap_or_default(),
            )
        }
    }
}

fn string(s: impl Into<String>) -> Value<'static> {
    Value::String(Cow::Owned(s.into()))
}

fn u64_value(n: u64) -> Value<'static> {
    Value::Number(Number::from(n))
}

fn i64_value(n: i64) -> Value<'static> {
    Value::Number(Number::from(n))
}

fn or_null<T>(v: Option<T>, f: impl FnOnce(T) -> Value<'static>) -> Value<'static> {
    v.map_or(Value::Null, f)
}

/// The decisions, as `toolgate check --json` prints them (without `input`),
/// written as canonical text directly (no tree of values).
pub fn decisions(d: &Decisions) -> String {
    toolgate::wire::decisions_text(d)
}

/// One approval. Times are Unix milliseconds.
pub fn approval_object(a: &Approval) -> Object<'static> {
    let mut o = Object::new();
    o.insert("id", string(a.id.to_string()));
    o.insert("kind", string(a.kind.as_str()));
    o.insert("user", string(a.user.clone()));
    o.insert("session", or_null(a.session.clone(), string));
    o.insert("tool", string(a.tool.clone()));
    o.insert("digest", or_null(a.digest, |d| string(d.to_string())));
    o.insert("created_at", i64_value(a.created_at.unix_millis()));
    o.insert("expires_at", i64_value(a.expires_at.unix_millis()));
    o.insert("state", string(a.state.as_str()));
    o.insert("decided_by", or_null(a.decided_by.clone(), string));
    o.insert(
        "decided_at",
        or_null(a.decided_at, |t| i64_value(t.unix_millis())),
    );
    o.insert("note", or_null(a.note.clone(), string));
    o.insert(
        "used_at",
        or_null(a.used_at, |t| i64_value(t.unix_millis())),
    );
    o.insert("uses", u64_value(a.uses));
    o.insert("upstream", or_null(a.upstream.clone(), string));
    o.insert("approvers_needed", u64_value(u64::from(a.quorum.approvers)));
    o.insert("approvers_so_far", u64_value(u64::from(a.votes)));
    o.insert("not_own", Value::Bool(a.quorum.not_own));
    o
}

/// One approval with what a human needs to decide it: the tool's risk tier
/// (`null` for a tool the config no longer has) and, from the audit record
/// of the call that asked for it, `call_id`, `reasons`, `policies` (the
/// rules that held it) and `arguments` — the canonical arguments
/// pretty-printed as text, secret fields already replaced by their digest
/// (`null` when the record has none); then the `approvers` so far, the
/// session's `recent` decisions (newest first), its `labels`, and the
/// `usage` of each `[[limit]]` counting the tool for the user, the session
/// or everyone.
pub fn approval_detail_object(
    a: &Approval,
    risk: Option<&str>,
    why: &ApprovalContext,
) -> Object<'static> {
    let asked = why.asked.as_ref();
    let mut o = approval_object(a);
    o.insert("risk", or_null(risk, string));
    o.insert(
        "call_id",
        or_null(asked.and_then(|e| e.call_id.clone()), string),
    );
    let strings = |list: &[String]| Value::Array(list.iter().map(|r| string(r.clone())).collect());
    o.insert(
        "reasons",
        asked.map_or(Value::Array(Vec::new()), |e| strings(&e.reasons)),
    );
    o.insert(
        "policies",
        asked.map_or(Value::Array(Vec::new()), |e| strings(&e.policies)),
    );
    let arguments = asked
        .and_then(|e| e.arguments.as_deref())
        .and_then(|text| toolgate_json::from_str(text).ok())
        .map(|v| pretty(&v));
    o.insert("arguments", or_null(arguments, string));
    o.insert(
        "approvers",
        Value::Array(
            why.votes
                .iter()
                .map(|v| {
                    let mut vo = Object::new();
                    vo.insert("approver", string(v.approver.clone()));
                    vo.insert("at", i64_value(v.at.unix_millis()));
                    vo.insert("note", or_null(v.note.clone(), string));
                    Value::Object(vo)
                })
                .collect(),
        ),
    );
    o.insert(
        "recent",
        Value::Array(
            why.recent
                .iter()
                .map(|r| {
                    let mut ro = audit_summary_object(r);
                    ro.insert("call_id", or_null(r.entry.call_id.clone(), string));
                    ro.insert("policies", strings(&r.entry.policies));
                    Value::Object(ro)
                })
                .collect(),
        ),
    );
    o.insert("labels", strings(&why.labels));
    o.insert(
        "usage",
        Value::Array(
            why.usage
                .iter()
                .map(|u| {
                    let mut uo = Object::new();
                    uo.insert("limit", string(u.name.clone()));
                    uo.insert("per", string(u.scope));
                    uo.insert("used", string(u.used.to_string()));
                    uo.insert("cap", string(u.cap.to_string()));
                    uo.insert("window_seconds", u64_value(u.window_seconds));
                    Value::Object(uo)
                })
                .collect(),
        ),
    );
    o.insert(
        "facts",
        Value::Array(
            why.facts
                .iter()
                .map(|f| {
                    let mut fo = Object::new();
                    fo.insert("path", string(f.path.clone()));
                    fo.insert("value", string(f.value.clone()));
                    Value::Object(fo)
                })
                .collect(),
        ),
    );
    o
}

/// JSON text indented by two spaces, members in the value's order (for a
/// canonical value: sorted). Strings keep their JSON escapes.
pub fn pretty(v: &Value<'_>) -> String {
    let mut out = String::new();
    write_pretty(&mut out, v, 0);
    out
}

fn write_pretty(out: &mut String, v: &Value<'_>, depth: usize) {
    let indent = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                write_pretty(out, item, depth + 1);
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(members) if !members.is_empty() => {
            out.push('{');
            for (i, (k, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, depth + 1);
                out.push_str(&canonical::to_string(&Value::String(Cow::Borrowed(k))));
                out.push_str(": ");
                write_pretty(out, item, depth + 1);
            }
            indent(out, depth);
            out.push('}');
        }
        scalar => out.push_str(&canonical::to_string(scalar)),
    }
}

/// One audit record as the approvals page lists it: who, what, the verdict
/// and why, without the arguments, digests and hashes (the full record is
/// `GET /v1/audit`, admin only).
pub fn audit_summary_object(r: &AuditRecord) -> Object<'static> {
    let e = &r.entry;
    let mut o = Object::new();
    o.insert("seq", u64_value(r.seq));
    o.insert("time", i64_value(e.time.unix_millis()));
    o.insert("verdict", string(e.verdict.as_str()));
    o.insert("user", or_null(e.user.clone(), string));
    o.insert("session", or_null(e.session.clone(), string));
    o.insert("tool", or_null(e.tool.clone(), string));
    o.insert(
        "reasons",
        Value::Array(e.reasons.iter().map(|r| string(r.clone())).collect()),
    );
    o.insert("approval", or_null(e.approval, |a| string(a.to_string())));
    o.insert("actor", or_null(e.actor.clone(), string));
    o.insert("note", or_null(e.note.clone(), string));
    o
}

/// The kill switch as an object: `{"mode", "reason", "actor", "changed_at"}`.
pub fn kill_object(k: &KillSwitchState) -> Object<'static> {
    let mut o = Object::new();
    o.insert("mode", string(k.mode.as_str()));
    o.insert("reason", or_null(k.reason.clone(), string));
    o.insert("actor", or_null(k.actor.clone(), string));
    o.insert(
        "changed_at",
        or_null(k.changed_at, |t| i64_value(t.unix_millis())),
    );
    o
}

/// One approval as a document.
pub fn approval(a: &Approval) -> String {
    canonical::to_string(&Value::Object(approval_object(a)))
}

/// The result of a wait: the approval plus `timed_out`.
pub fn waited(a: &Approval, timed_out: bool) -> String {
    let mut o = approval_object(a);
    o.insert("timed_out", Value::Bool(timed_out));
    canonical::to_string(&Value::Object(o))
}

/// A page of approvals: `{"approvals": […]}`.
/// `GET /v1/approvals`'s answer: the page, and how many approvals match
/// the query in all (`total`, whatever the page's cursor and limit).
pub fn approvals_page(list: &[Approval], total: u64) -> String {
    let mut o = Object::new();
    o.insert(
        "approvals",
        Value::Array(
            list.iter()
                .map(|a| Value::Object(approval_object(a)))
                .collect(),
        ),
    );
    o.insert("total", Value::Number(total.into()));
    canonical::to_string(&Value::Object(o))
}

/// The kill switch: `{"mode", "reason", "actor", "changed_at"}`.
pub fn kill(k: &KillSwitchState) -> String {
    canonical::to_string(&Value::Object(kill_object(k)))
}

/// A page of audit records, oldest first, each in the export's wire format:
/// `{"next_after": SEQ or null, "next_before": SEQ or null, "records": […]}`.
pub fn audit_page(
    records: &[AuditRecord],
    next_before: Option<u64>,
    next_after: Option<u64>,
) -> String {
    let cursor = |c: Option<u64>| c.map_or_else(|| "null".to_owned(), |n| n.to_string());
    let mut out = String::from("{\"next_after\":");
    out.push_str(&cursor(next_after));
    out.push_str(",\"next_before\":");
    out.push_str(&cursor(next_before));
    out.push_str(",\"records\":[");
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&r.to_json());
    }
    out.push_str("]}");
    out
}

/// One tool-definition pin, with what a human needs to decide it: the
/// definition (as JSON), the findings in it, and the diff from the
/// definition of the tool approved last (`approved`, null for a tool never
/// approved): the members that changed and the lines of both in canonical
/// pretty form (`op` `" "`, `"-"` or `"+"`). Times are Unix milliseconds.
pub fn pin_object(
    p: &toolgate_store::ToolPin,
    before: Option<&toolgate_store::ToolPin>,
) -> Object<'static> {
    let mut o = Object::new();
    o.insert("id", string(p.id.to_string()));
    o.insert("upstream", string(p.upstream.clone()));
    o.insert("tool", string(p.tool.clone()));
    o.insert("state", string(p.state.as_str()));
    o.insert("digest", string(p.digest.to_string()));
    o.insert(
        "definition",
        toolgate_json::from_str(&p.definition)
            .map_or_else(|_| string(p.definition.clone()), Value::into_owned),
    );
    o.insert(
        "findings",
        Value::Array(p.findings.iter().map(|f| string(f.clone())).collect()),
    );
    o.insert("first_seen", i64_value(p.first_seen.unix_millis()));
    o.insert("last_seen", i64_value(p.last_seen.unix_millis()));
    o.insert("decided_by", or_null(p.decided_by.clone(), string));
    o.insert(
        "decided_at",
        or_null(p.decided_at, |t| i64_value(t.unix_millis())),
    );
    o.insert("note", or_null(p.note.clone(), string));
    let diff =
        toolgate_store::diff_definitions(before.map(|b| b.definition.as_str()), &p.definition);
    let mut d = Object::new();
    d.insert(
        "approved",
        or_null(before, |b| {
            let mut a = Object::new();
            a.insert("id", string(b.id.to_string()));
            a.insert("digest", string(b.digest.to_string()));
            Value::Object(a)
        }),
    );
    d.insert(
        "members",
        Value::Array(
            diff.members
                .iter()
                .map(|(m, c)| {
                    let mut x = Object::new();
                    x.insert("member", string(m.clone()));
                    x.insert("change", string(c.as_str()));
                    Value::Object(x)
                })
                .collect(),
        ),
    );
    d.insert(
        "lines",
        Value::Array(
            diff.lines
                .iter()
                .map(|(op, text)| {
                    let mut x = Object::new();
                    x.insert("op", string(op.mark().to_string()));
                    x.insert("text", string(text.clone()));
                    Value::Object(x)
                })
                .collect(),
        ),
    );
    o.insert("diff", Value::Object(d));
    o
}

/// A page of pins (each as [`pin_object`]).
pub fn pins_page(items: &[(toolgate_store::ToolPin, Option<toolgate_store::ToolPin>)]) -> String {
    let mut o = Object::new();
    o.insert(
        "pins",
        Value::Array(
            items
                .iter()
                .map(|(p, b)| Value::Object(pin_object(p, b.as_ref())))
                .collect(),
        ),
    );
    canonical::to_string(&Value::Object(o))
}

/// One pin (as [`pin_object`]).
pub fn pin(p: &toolgate_store::ToolPin, before: Option<&toolgate_store::ToolPin>) -> String {
    canonical::to_string(&Value::Object(pin_object(p, before)))
}
