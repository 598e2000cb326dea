#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! Contract 2 by the type: a decision is made by the gate and read through
//! its accessors; what code outside the gate may do to it only ever makes it
//! stricter (`Gate::deny_after`, `Decision::escalate`,
//! `Decision::await_approval`). Tried here as a caller that wants a deny to
//! run would try it.

use std::path::PathBuf;

use toolgate::config::Config;
use toolgate::{
    ApprovalRef, Code, Context, Decisions, Format, Gate, Verdict, ESCALATED_DENY_FEEDBACK,
    ESCALATED_HOLD_FEEDBACK,
};

fn gate() -> Gate {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = Config::load(path).unwrap();
    Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

fn ctx() -> Context {
    let mut c = Context::new("alice", "s-1", 1);
    c.now = Some(1_000);
    c
}

/// One OpenAI chat response with these (tool, arguments) calls.
fn body(calls: &[(&str, &str)]) -> String {
    let ids: Vec<String> = (0..calls.len()).map(|i| format!("call_{i}")).collect();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .zip(&ids)
        .map(|((name, args), id)| (id.as_str(), *name, *args))
        .collect();
    toolgate_testkit::openai_tool_calls(&calls)
}

const SEARCH: &str = r#"{"limit":5,"query":"shoes"}"#;
const REFUND: &str = r#"{"order_id":"ord_1","amount_cents":100,"reason":"late"}"#;
const BAD_REFUND: &str = r#"{"order_id":"ord_1","amount_cents":"100","reason":"late"}"#;

fn decide(calls: &[(&str, &str)]) -> Decisions {
    let c = ctx();
    gate().decide(body(calls).as_bytes(), Format::Auto, &c, &c)
}

#[test]
fn the_shop_gives_an_allow_a_hold_and_a_deny() {
    let d = decide(&[
        ("search", SEARCH),
        ("refund", REFUND),
        ("refund", BAD_REFUND),
    ]);
    let verdicts: Vec<_> = d.decisions().iter().map(|d| d.verdict()).collect();
    assert_eq!(
        verdicts,
        [Verdict::Allow, Verdict::NeedsApproval, Verdict::Deny],
        "{d:?}"
    );
    assert_eq!(d.decisions()[0].executable_args(), Some(SEARCH));
    assert!(d.decisions()[1].executable_args().is_none());
    assert!(d.decisions()[2].executable_args().is_none());
}

#[test]
fn deny_after_turns_an_allow_and_a_hold_into_a_deny_and_keeps_a_deny() {
    let gate = gate();
    let c = ctx();
    let text = body(&[
        ("search", SEARCH),
        ("refund", REFUND),
        ("refund", BAD_REFUND),
    ]);
    let mut d = gate.decide(text.as_bytes(), Format::Auto, &c, &c);
    let first_deny = d.decisions()[2].reasons().to_vec();
    for decision in d.decisions_mut() {
        assert!(
            decision.verdict() != Verdict::NeedsApproval
                || decision.await_approval(ApprovalRef::new("7"))
        );
        gate.deny_after(decision, Code::StoreUnavailable);
    }
    for decision in d.decisions() {
        assert_eq!(decision.verdict(), Verdict::Deny, "{decision:?}");
        assert!(decision.executable_args().is_none());
        assert!(decision.approval().is_none(), "{decision:?}");
        assert!(
            decision.feedback().starts_with("denied by toolgate"),
            "{decision:?}"
        );
        assert!(
            decision.feedback().contains("store_unavailable"),
            "{decision:?}"
        );
    }
    // An allow or a hold is denied for the new reason alone.
    for i in [0, 1] {
        let codes: Vec<_> = d.decisions()[i]
            .reasons()
            .iter()
            .map(|r| r.code.as_str())
            .collect();
        assert_eq!(codes, ["store_unavailable"]);
    }
    // A deny keeps its reasons, with the new one added once.
    let mut expected = first_deny;
    expected.push(toolgate::Reason::whole(Code::StoreUnavailable));
    assert_eq!(d.decisions()[2].reasons(), &expected[..]);
    gate.deny_after(d.decisions_mut().nth(2).unwrap(), Code::StoreUnavailable);
    assert_eq!(d.decisions()[2].reasons(), &expected[..]);
    assert_eq!(d.verdict(), Verdict::Deny);
}

#[test]
fn deny_all_after_refuses_a_response_without_calls() {
    let gate = gate();
    let c = ctx();
    let text = r#"{"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hello"}}]}"#;
    let mut d = gate.decide(text.as_bytes(), Format::Auto, &c, &c);
    assert_eq!(d.verdict(), Verdict::Allow, "{d:?}");
    gate.deny_all_after(&mut d, Code::StoreUnavailable);
    assert_eq!(d.verdict(), Verdict::Deny);
    assert_eq!(
        d.rejected().map(|r| r.code.as_str()),
        Some("store_unavailable")
    );
}

#[test]
fn an_approval_is_named_only_for_a_held_call() {
    let mut d = decide(&[
        ("search", SEARCH),
        ("refund", REFUND),
        ("refund", BAD_REFUND),
    ]);
    let taken: Vec<bool> = d
        .decisions_mut()
        .map(|decision| decision.await_approval(ApprovalRef::new("42")))
        .collect();
    assert_eq!(taken, [false, true, false]);
    let approvals: Vec<_> = d
        .decisions()
        .iter()
        .map(|d| d.approval().map(ApprovalRef::as_str))
        .collect();
    assert_eq!(approvals, [None, Some("42"), None]);
    // Naming an approval never lets the held call run.
    assert_eq!(d.decisions()[1].verdict(), Verdict::NeedsApproval);
    assert!(d.decisions()[1].executable_args().is_none());
}

#[test]
fn escalating_takes_the_details_out_and_changes_no_verdict() {
    let mut d = decide(&[
        ("search", SEARCH),
        ("refund", REFUND),
        ("refund", BAD_REFUND),
    ]);
    let before: Vec<_> = d
        .decisions()
        .iter()
        .map(|d| (d.verdict(), d.reasons().to_vec()))
        .collect();
    let allow_feedback = d.decisions()[0].feedback().to_owned();
    assert!(
        d.decisions()[2].feedback().contains("type_mismatch"),
        "{d:?}"
    );
    d.escalate();
    let after: Vec<_> = d
        .decisions()
        .iter()
        .map(|d| (d.verdict(), d.reasons().to_vec()))
        .collect();
    assert_eq!(before, after);
    assert_eq!(d.decisions()[0].feedback(), allow_feedback);
    assert_eq!(d.decisions()[1].feedback(), ESCALATED_HOLD_FEEDBACK);
    assert_eq!(d.decisions()[2].feedback(), ESCALATED_DENY_FEEDBACK);
}
