//! Stage 1: the response's finish signal and its findings.
//!
//! A turn that did not end normally (cut off, filtered, refused, malformed,
//! paused, failed, unknown) denies every call of the response: a truncated
//! `300000` that reads `300` is still a number (threat 4). Whether there are
//! calls comes only from the structured fields (the adapter's job), never
//! from the finish signal. A finding that denies
//! ([`Code::finding_denies`]) also denies every call.

use crate::adapter::{Finding, Finish};
use crate::reason::{Code, Reason};

/// The code a finish that is not complete denies with; `None` when complete.
pub(crate) fn finish_code(finish: &Finish) -> Option<Code> {
    Some(match finish {
        Finish::Complete { .. } => return None,
        Finish::Truncated { .. } => Code::Truncated,
        Finish::ContentFiltered { .. } => Code::ContentFiltered,
        Finish::Refused { .. } => Code::Refused,
        Finish::MalformedCall { .. } => Code::MalformedCall,
        Finish::Paused { .. } => Code::IncompleteTurn,
        Finish::Error { .. } => Code::ProviderError,
        // `Finish` is non-exhaustive: anything new fails closed.
        _ => Code::FinishUnknown,
    })
}

/// The response-level reasons: the finish (if not complete), then every
/// finding, pointers into the body.
pub(crate) fn response_reasons(finish: &Finish, findings: &[Finding]) -> Vec<Reason> {
    let mut out = Vec::with_capacity(findings.len() + 1);
    if let Some(code) = finish_code(finish) {
        out.push(Reason::whole(code));
    }
    out.extend(
        findings
            .iter()
            .map(|f| Reason::new(Code::Finding(f.code), f.pointer.clone())),
    );
    out
}

/// The reason every call of the response is denied with, if any: the first
/// response-level reason that denies. The pointer is `""` (the call as a
/// whole); the response-level reason keeps the body pointer.
pub(crate) fn check(response: &[Reason]) -> Option<Reason> {
    response
        .iter()
        .find(|r| r.code.finding_denies())
        .map(|r| Reason::whole(r.code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{read, FindingCode, Format};

    #[test]
    fn finishes_map_to_codes() {
        let cases = [
            (
                r#"{"choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","content":"x"}}]}"#,
                Some("truncated"),
            ),
            (
                r#"{"choices":[{"index":0,"finish_reason":"content_filter","message":{"role":"assistant","content":"x"}}]}"#,
                Some("content_filtered"),
            ),
            (
                r#"{"choices":[{"index":0,"finish_reason":"weird","message":{"role":"assistant","content":"x"}}]}"#,
                Some("finish_unknown"),
            ),
            (
                r#"{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"x"}}]}"#,
                None,
            ),
        ];
        for (body, code) in cases {
            let env = read(body.as_bytes(), Format::OpenAiChat).unwrap();
            assert_eq!(finish_code(&env.finish).map(Code::as_str), code, "{body}");
        }
    }

    #[test]
    fn denying_findings_deny_every_call_but_leaks_do_not() {
        let leak = Reason::new(
            Code::Finding(FindingCode::DsmlMarkup),
            "/choices/0/message/content",
        );
        assert_eq!(check(std::slice::from_ref(&leak)), None);
        let expected = Reason::new(Code::Finding(FindingCode::CallsExpected), "/choices/0");
        assert_eq!(
            check(&[leak, expected]),
            Some(Reason::whole(Code::Finding(FindingCode::CallsExpected)))
        );
        assert_eq!(
            check(&[Reason::whole(Code::Truncated)]),
            Some(Reason::whole(Code::Truncated))
        );
    }
}
