//! The feedback text: what the model is told about a call that did not run.
//!
//! It is returned to the model as the call's tool result, so it carries only
//! the verdict, reason codes, JSON Pointers and, for a schema violation, what
//! the schema expects there: never the rejected value, a file path, a
//! policy's source, a policy id or an error chain (DESIGN.md, contract 6;
//! threat 6).
//!
//! What the schema expects is the validator's message, built from the schema
//! alone, so that a model can fix its call in one retry: the missing
//! member's name, the expected type, the bound, the length or size, the
//! allowed values (`enum`, `const`; at most ten, each cut at 48 characters),
//! the pattern or format name, the declared members where an unknown one was
//! sent. The unknown member's own name is the model's text, not the
//! schema's: it stays masked (`*`), and the declared names are listed
//! instead. An escalated session gets none of this (see
//! [`Decision::escalate`](crate::Decision::escalate), which the store gate
//! applies).
//!
//! Pointers are redacted token by token: a reference token is shown only if
//! it is an array index or a property name the tool's own schema declares
//! (which the model was given anyway); any other token, such as the name of
//! an unknown member the model invented, becomes `*`. So a secret smuggled
//! into a member *name* is not echoed either.
//!
//! ```text
//! denied by toolgate: type_mismatch at /amount: expected integer; unknown_property at /*: member is not allowed: the declared members are `amount`, `order_id`
//! denied by toolgate: missing_required: missing required member `order_id`
//! denied by toolgate: unknown_tool
//! held by toolgate for human approval: approval_required; once a human approves it, make the same call again unchanged
//! allowed by toolgate
//! ```

use std::fmt::Write as _;

use crate::decision::Verdict;
use crate::reason::Reason;

/// At most this many reasons are listed; the rest are counted.
pub const MAX_LISTED: usize = 8;

/// The feedback for a verdict and its reasons. `known` says whether a
/// property name may be shown (see the module documentation).
pub fn render(verdict: Verdict, reasons: &[Reason], known: &dyn Fn(&str) -> bool) -> String {
    render_expecting(verdict, reasons, &[], known)
}

/// Like [`render`], with what the schema expects at each reason
/// (`expected[i]` for `reasons[i]`; missing or empty: nothing). The texts
/// must come from the schema alone, never from the rejected value.
pub fn render_expecting(
    verdict: Verdict,
    reasons: &[Reason],
    expected: &[String],
    known: &dyn Fn(&str) -> bool,
) -> String {
    let mut out = String::with_capacity(64);
    match verdict {
        Verdict::Allow => {
            out.push_str("allowed by toolgate");
            return out;
        }
        Verdict::NeedsApproval => out.push_str("held by toolgate for human approval: "),
        Verdict::Deny => out.push_str("denied by toolgate: "),
    }
    for (i, reason) in reasons.iter().take(MAX_LISTED).enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(reason.code.as_str());
        if !reason.pointer.is_empty() {
            out.push_str(" at ");
            push_redacted(&mut out, &reason.pointer, known);
        }
        if let Some(text) = expected.get(i).filter(|t| !t.is_empty()) {
            out.push_str(": ");
            out.push_str(text);
        }
    }
    if reasons.len() > MAX_LISTED {
        let _ = write!(out, "; and {} more", reasons.len() - MAX_LISTED);
    }
    if reasons.is_empty() {
        out.push_str(match verdict {
            Verdict::NeedsApproval => "approval_required",
            Verdict::Allow | Verdict::Deny => "internal_error",
        });
    }
    if verdict == Verdict::NeedsApproval {
        out.push_str("; once a human approves it, make the same call again unchanged");
    }
    out
}

/// Appends `pointer` with every token that is neither an array index nor a
/// known property name replaced by `*`.
fn push_redacted(out: &mut String, pointer: &str, known: &dyn Fn(&str) -> bool) {
    for token in pointer.split('/').skip(1) {
        out.push('/');
        let unescaped = toolgate_json::pointer::unescape_token(token);
        if is_index(token) || known(&unescaped) {
            out.push_str(token);
        } else {
            out.push('*');
        }
    }
}

fn is_index(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= 10
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reason::Code;
    use toolgate_schema::ErrorCode as SchemaCode;

    fn known(name: &str) -> bool {
        matches!(name, "amount" | "items" | "a/b")
    }

    #[test]
    fn renders_codes_and_redacted_pointers() {
        let reasons = [
            Reason::new(Code::Schema(SchemaCode::TypeMismatch), "/amount"),
            Reason::new(Code::Schema(SchemaCode::UnknownProperty), "/sk-live-SECRET"),
            Reason::new(Code::Schema(SchemaCode::Enum), "/items/3/sk~1x"),
            Reason::new(Code::Schema(SchemaCode::Enum), "/a~1b"),
            Reason::new(Code::UrlPolicy, "/amount").with_detail("private_address"),
        ];
        assert_eq!(
            render(Verdict::Deny, &reasons, &known),
            "denied by toolgate: type_mismatch at /amount; unknown_property at /*; \
             enum at /items/3/*; enum at /a~1b; url_policy at /amount"
        );
    }

    #[test]
    fn verdicts() {
        assert_eq!(render(Verdict::Allow, &[], &known), "allowed by toolgate");
        assert_eq!(
            render(Verdict::Deny, &[Reason::whole(Code::UnknownTool)], &known),
            "denied by toolgate: unknown_tool"
        );
        assert_eq!(
            render(
                Verdict::NeedsApproval,
                &[Reason::whole(Code::ApprovalRequired)],
                &known
            ),
            "held by toolgate for human approval: approval_required; once a human approves it, make the same call again unchanged"
        );
        assert_eq!(
            render(Verdict::Deny, &[], &known),
            "denied by toolgate: internal_error"
        );
    }

    #[test]
    fn schema_expectations_follow_their_reasons() {
        let reasons = [
            Reason::new(Code::Schema(SchemaCode::MissingRequired), ""),
            Reason::new(Code::Schema(SchemaCode::UnknownProperty), "/sk-live-SECRET"),
            Reason::new(Code::Schema(SchemaCode::TypeMismatch), "/amount"),
        ];
        let expected = [
            "missing required member `order_id`".to_owned(),
            "member is not allowed: the declared members are `amount`".to_owned(),
        ];
        assert_eq!(
            render_expecting(Verdict::Deny, &reasons, &expected, &known),
            "denied by toolgate: missing_required: missing required member `order_id`; \
             unknown_property at /*: member is not allowed: the declared members are `amount`; \
             type_mismatch at /amount"
        );
    }

    #[test]
    fn long_lists_are_cut() {
        let reasons = vec![Reason::new(Code::NotObject, "/00"); 11];
        let text = render(Verdict::Deny, &reasons, &known);
        assert!(text.ends_with("; and 3 more"), "{text}");
        assert!(!text.contains("00"), "{text}");
    }
}
