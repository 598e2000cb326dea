//! The wire form of decisions: the JSON shared by `toolgate check --json`
//! and the HTTP service (`POST /v1/decide`).
//!
//! A response's object has `format` (the format read, or `null`),
//! `streamed`, `finish` (`{"kind", "reason"}` or `null`), `verdict`,
//! `rejected` (a reason or `null`), `findings` (reasons with `denies`) and
//! `decisions`; a reason is `{"code", "pointer"}` plus `"detail"` when the
//! stage has a finer code; a decision is `{"index", "call_id", "tool",
//! "verdict", "reasons", "arguments", "digest", "approval", "policies",
//! "pinned", "feedback"}`, plus `"receipt"` (the signed receipt's
//! text, [`crate::receipt`]) when the gate signs receipts, `"charges"`
//! (`[{"limit", "amount"}]`) and `"labels"` on an allowed call that counts
//! toward a `[[limit]]` or brings session labels, and `"retry_after"`
//! (seconds) on a call denied over a limit. The members are
//! documented in the book (`docs/src/check.md`).
//!
//! `arguments` is the canonical value the gate checked, for every call that
//! is not denied (`null` for a denied one): the caller runs the tool with
//! it, never with the model's raw text, which a second parser may read
//! differently. Written in the canonical form, its text is exactly the text
//! `digest` is the SHA-256 of.

use std::borrow::Cow;

use toolgate_json::{Limit, Limits, Number, Object, ParseOptions, Value};

use crate::decision::{Decision, Decisions, PinnedUrl, Verdict};
use crate::reason::Reason;

fn string(s: impl Into<String>) -> Value<'static> {
    Value::String(Cow::Owned(s.into()))
}

fn number(n: usize) -> Value<'static> {
    Value::Number(Number::from(u64::try_from(n).unwrap_or(u64::MAX)))
}

fn or_null<T>(v: Option<T>, f: impl FnOnce(T) -> Value<'static>) -> Value<'static> {
    v.map_or(Value::Null, f)
}

/// A digest's text (`sha256:` and 64 lower-case hex digits), as its
/// `Display` writes it, without the formatting machinery: every decision's
/// answer carries one.
fn digest_text(d: &toolgate_json::Digest) -> String {
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in d.as_bytes() {
        for nibble in [b >> 4, b & 0x0f] {
            // INVARIANT: a nibble is below 16, always a hex digit.
            out.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
    out
}

fn reason_json(r: &Reason) -> Object<'static> {
    let mut o = Object::new();
    o.insert("code", string(r.code.as_str()));
    o.insert("pointer", string(r.pointer.clone()));
    if let Some(detail) = r.detail {
        o.insert("detail", string(detail));
    }
    o
}

/// The decisions of one response as a JSON object (every member of the wire
/// format above but `input`, which names where the body came from).
pub fn decisions_object(d: &Decisions) -> Object<'static> {
    let mut o = Object::new();
    o.insert("format", or_null(d.format, |f| string(f.as_str())));
    o.insert("streamed", Value::Bool(d.streamed));
    o.insert(
        "finish",
        or_null(d.finish.as_ref(), |f| {
            let mut fo = Object::new();
            fo.insert("kind", string(f.kind()));
            fo.insert("reason", string(f.reason()));
            Value::Object(fo)
        }),
    );
    o.insert("verdict", string(d.verdict().as_str()));
    o.insert(
        "rejected",
        or_null(d.rejected.as_ref(), |r| Value::Object(reason_json(r))),
    );
    o.insert(
        "findings",
        Value::Array(
            d.findings
                .iter()
                .map(|r| {
                    let mut fo = reason_json(r);
                    fo.insert("denies", Value::Bool(r.code.finding_denies()));
                    Value::Object(fo)
                })
                .collect(),
        ),
    );
    o.insert(
        "decisions",
        Value::Array(d.decisions.iter().map(decision_json).collect()),
    );
    o
}

/// The canonical text of [`decisions_object`], written directly: no tree
/// of values is built, and a decision's `arguments` (already canonical
/// text, [`Decision::canonical_args`]) is copied, not read back and
/// written again. Members are written in the canonical order (every name
/// is ASCII, so byte order is RFC 8785's UTF-16 order).
pub fn decisions_text(d: &Decisions) -> String {
    let mut out = String::with_capacity(512 + 512 * d.decisions.len());
    out.push_str("{\"decisions\":[");
    for (i, decision) in d.decisions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_decision(&mut out, decision);
    }
    out.push_str("],\"findings\":[");
    for (i, r) in d.findings.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_reason(&mut out, r, Some(r.code.finding_denies()));
    }
    out.push_str("],\"finish\":");
    match d.finish.as_ref() {
        None => out.push_str("null"),
        Some(f) => {
            out.push_str("{\"kind\":");
            push_string(&mut out, f.kind());
            out.push_str(",\"reason\":");
            push_string(&mut out, f.reason());
            out.push('}');
        }
    }
    out.push_str(",\"format\":");
    match d.format {
        None => out.push_str("null"),
        Some(f) => push_string(&mut out, f.as_str()),
    }
    out.push_str(",\"rejected\":");
    match d.rejected.as_ref() {
        None => out.push_str("null"),
        Some(r) => write_reason(&mut out, r, None),
    }
    out.push_str(",\"streamed\":");
    out.push_str(if d.streamed { "true" } else { "false" });
    out.push_str(",\"verdict\":");
    push_string(&mut out, d.verdict().as_str());
    out.push('}');
    out
}

/// Appends `s` as a canonical JSON string. Identifiers, codes and
/// feedback are plain text, appended as they are; one with a character
/// to escape goes through the canonical writer.
fn push_string(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&toolgate_json::canonical::to_string(&Value::String(
            Cow::Borrowed(s),
        )));
    }
}

/// A reason's object in canonical order; `denies` for a finding.
fn write_reason(out: &mut String, r: &Reason, denies: Option<bool>) {
    out.push_str("{\"code\":");
    push_string(out, r.code.as_str());
    if let Some(denies) = denies {
        out.push_str(",\"denies\":");
        out.push_str(if denies { "true" } else { "false" });
    }
    if let Some(detail) = r.detail {
        out.push_str(",\"detail\":");
        push_string(out, detail);
    }
    out.push_str(",\"pointer\":");
    push_string(out, &r.pointer);
    out.push('}');
}

fn write_strings<'a>(out: &mut String, items: impl IntoIterator<Item = &'a str>) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_string(out, item);
    }
    out.push(']');
}

/// One decision's object in canonical order (see [`decision_json`]).
fn write_decision(out: &mut String, d: &Decision) {
    out.push_str("{\"approval\":");
    match d.approval.as_ref() {
        None => out.push_str("null"),
        Some(a) => push_string(out, a.as_str()),
    }
    out.push_str(",\"arguments\":");
    match (d.verdict, d.canonical_args.as_deref()) {
        (Verdict::Deny, _) | (_, None) => out.push_str("null"),
        (_, Some(text)) => out.push_str(text),
    }
    out.push_str(",\"call_id\":");
    match d.call_id.as_deref() {
        None => out.push_str("null"),
        Some(id) => push_string(out, id),
    }
    if !d.charges().is_empty() {
        out.push_str(",\"charges\":[");
        for (i, c) in d.charges().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"amount\":");
            push_string(out, &c.amount.to_string());
            out.push_str(",\"limit\":");
            push_string(out, &c.limit);
            out.push('}');
        }
        out.push(']');
    }
    out.push_str(",\"digest\":");
    match d.digest {
        None => out.push_str("null"),
        Some(g) => {
            out.push('"');
            out.push_str(&digest_text(&g));
            out.push('"');
        }
    }
    out.push_str(",\"feedback\":");
    push_string(out, &d.feedback);
    out.push_str(",\"index\":");
    out.push_str(&d.index.to_string());
    if !d.labels().is_empty() {
        out.push_str(",\"labels\":");
        write_strings(out, d.labels().iter().map(String::as_str));
    }
    out.push_str(",\"pinned\":[");
    for (i, p) in d.pinned.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"addresses\":");
        let addresses: Vec<String> = p.addresses.iter().map(ToString::to_string).collect();
        write_strings(out, addresses.iter().map(String::as_str));
        out.push_str(",\"pointer\":");
        push_string(out, &p.pointer);
        out.push('}');
    }
    out.push_str("],\"policies\":");
    write_strings(out, d.policies.iter().map(String::as_str));
    out.push_str(",\"reasons\":[");
    for (i, r) in d.reasons.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_reason(out, r, None);
    }
    out.push(']');
    if let Some(receipt) = d.receipt() {
        out.push_str(",\"receipt\":");
        push_string(out, receipt);
    }
    if let Some(seconds) = d.retry_after() {
        out.push_str(",\"retry_after\":");
        out.push_str(&seconds.to_string());
    }
    out.push_str(",\"tool\":");
    push_string(out, &d.tool);
    out.push_str(",\"verdict\":");
    push_string(out, d.verdict.as_str());
    out.push('}');
}

fn decision_json(d: &Decision) -> Value<'static> {
    let mut o = Object::new();
    o.insert("index", number(d.index));
    o.insert("call_id", or_null(d.call_id.clone(), string));
    o.insert("tool", string(d.tool.clone()));
    o.insert("verdict", string(d.verdict.as_str()));
    o.insert(
        "reasons",
        Value::Array(
            d.reasons
                .iter()
                .map(|r| Value::Object(reason_json(r)))
                .collect(),
        ),
    );
    o.insert("arguments", arguments(d));
    o.insert("digest", or_null(d.digest, |g| string(digest_text(&g))));
    o.insert("approval", or_null(d.approval.clone(), string));
    o.insert(
        "policies",
        Value::Array(d.policies.iter().map(|p| string(p.clone())).collect()),
    );
    o.insert(
        "pinned",
        Value::Array(d.pinned.iter().map(pinned_json).collect()),
    );
    o.insert("feedback", string(d.feedback.clone()));
    // Only with a receipt key: an answer without one keeps its shape.
    if let Some(receipt) = d.receipt() {
        o.insert("receipt", string(receipt));
    }
    // Only with `[[limit]]`s or labelled tools: what a caller without a
    // store keeps for its next context (`limit_events`, `labels`), and
    // when a call over a limit can be retried.
    if !d.charges().is_empty() {
        o.insert(
            "charges",
            Value::Array(
                d.charges()
                    .iter()
                    .map(|c| {
                        let mut e = Object::new();
                        e.insert("limit", string(c.limit.clone()));
                        e.insert("amount", string(c.amount.to_string()));
                        Value::Object(e)
                    })
                    .collect(),
            ),
        );
    }
    if !d.labels().is_empty() {
        o.insert(
            "labels",
            Value::Array(d.labels().iter().map(|l| string(l.clone())).collect()),
        );
    }
    if let Some(seconds) = d.retry_after() {
        o.insert("retry_after", Value::Number(Number::from(seconds)));
    }
    Value::Object(o)
}

/// The checked value of a call that is not denied, read back from its
/// canonical text; `null` for a denied call or one whose arguments did not
/// parse.
fn arguments(d: &Decision) -> Value<'static> {
    if d.verdict == Verdict::Deny {
        return Value::Null;
    }
    let Some(text) = d.canonical_args.as_deref() else {
        return Value::Null;
    };
    // The canonical text was written from a value the gate's limits admitted;
    // it is read back under the ceilings, which are never below them. A text
    // that does not read back (it cannot happen) is handed on as nothing
    // rather than as something else.
    read_canonical(text).unwrap_or(Value::Null)
}

fn read_canonical(text: &str) -> Option<Value<'static>> {
    let limits = Limit::ALL
        .iter()
        .try_fold(Limits::new(), |l, &limit| l.set(limit, limit.ceiling()))
        .ok()?;
    let value = ParseOptions::new()
        .with_limits(limits)
        .allow_noncharacters(true)
        .parse(text.as_bytes())
        .ok()?;
    Some(value.into_owned())
}

fn pinned_json(p: &PinnedUrl) -> Value<'static> {
    let mut o = Object::new();
    o.insert("pointer", string(p.pointer.clone()));
    o.insert(
        "addresses",
        Value::Array(p.addresses.iter().map(|a| string(a.to_string())).collect()),
    );
    Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_json::canonical;

    /// Every optional member, escapes and several calls: the text written
    /// directly is the canonical text of the tree.
    #[test]
    fn the_direct_text_is_the_trees_canonical_text() {
        use crate::decision::ApprovalRef;
        use crate::reason::Code;
        let call = |index: usize, verdict: Verdict| Decision {
            index,
            call_id: Some(format!("call \"{index}\"\u{1}é")),
            tool: "t\\ool".into(),
            verdict,
            reasons: vec![Reason::new(Code::NotObject, "/a~1b")],
            canonical_args: Some(r#"{"a":[1,"x\n"],"b":1e+21}"#.into()),
            digest: Some(toolgate_json::Digest::of(b"x")),
            shape: None,
            policies: vec!["p1".into(), "p\t2".into()],
            approval: Some(ApprovalRef::new("ap-1")),
            pinned: vec![PinnedUrl {
                pointer: "/url".into(),
                addresses: vec!["127.0.0.1:443".parse().unwrap()],
            }],
            feedback: "feedback \u{7f} 😀".into(),
            received_arguments: None,
            receipt: None,
            charges: vec![crate::limit::Charge {
                limit: "spend".into(),
                key: "k".into(),
                window_ms: 1000,
                cap: crate::limit::Amount::from_u64(5),
                amount: crate::limit::Amount::from_u64(2),
                enforce: true,
                code: Code::BudgetExceeded,
                call_id: None,
            }],
            labels: vec!["pii".into()],
            retry_after: Some(7),
            held_facts: Vec::new(),
        };
        let empty = || Decisions {
            format: Some(crate::adapter::Format::OpenAiChat),
            streamed: true,
            finish: None,
            rejected: None,
            findings: Vec::new(),
            decisions: Vec::new(),
        };
        let mut reason = Reason::new(Code::NotObject, "");
        reason.detail = Some("type");
        let mut with_all = empty();
        with_all.findings = vec![reason.clone(), Reason::new(Code::Truncated, "/x")];
        with_all.rejected = Some(reason);
        with_all.decisions = vec![
            call(0, Verdict::Allow),
            call(1, Verdict::Deny),
            call(2, Verdict::NeedsApproval),
        ];
        let mut bare = call(0, Verdict::Allow);
        bare.call_id = None;
        bare.digest = None;
        bare.approval = None;
        bare.pinned.clear();
        bare.charges.clear();
        bare.labels.clear();
        bare.retry_after = None;
        bare.canonical_args = None;
        let mut plain = empty();
        plain.decisions = vec![bare];
        plain.finish = Some(crate::adapter::Finish::Complete {
            reason: "tool_\"calls".into(),
        });
        plain.format = None;
        plain.streamed = false;
        for d in [empty(), with_all, plain] {
            let tree = canonical::to_string(&Value::Object(decisions_object(&d)));
            assert_eq!(decisions_text(&d), tree);
        }
    }

    /// The answer's digest is the digest's own text.
    #[test]
    fn a_digest_is_written_as_its_text() {
        for input in [&b""[..], b"x", b"\x00\xff\x10\x0f"] {
            let d = toolgate_json::Digest::of(input);
            assert_eq!(digest_text(&d), d.to_string());
        }
    }
}
