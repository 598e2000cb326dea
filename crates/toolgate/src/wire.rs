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

    /// The answer's digest is the digest's own text.
    #[test]
    fn a_digest_is_written_as_its_text() {
        for input in [&b""[..], b"x", b"\x00\xff\x10\x0f"] {
            let d = toolgate_json::Digest::of(input);
            assert_eq!(digest_text(&d), d.to_string());
        }
    }
}
