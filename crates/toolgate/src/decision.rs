//! What the gate decides: one [`Decision`] per proposed call, gathered with
//! the response-level facts in [`Decisions`].

use std::fmt;
use std::net::SocketAddr;

use toolgate_json::canonical::Digest;

use crate::adapter::{Finish, Format};
use crate::reason::Reason;

/// The feedback of a denied call in an escalated session: no details.
pub const ESCALATED_DENY_FEEDBACK: &str = "denied by toolgate";
/// The feedback of a held call in an escalated session: no details.
pub const ESCALATED_HOLD_FEEDBACK: &str =
    "held by toolgate for human approval; once a human approves it, make the same call again unchanged";

/// The verdict on one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// Run the call, with [`Decision::canonical_args`].
    Allow,
    /// A human must approve this exact call first (`approval_required`).
    NeedsApproval,
    /// Do not run the call.
    Deny,
}

impl Verdict {
    /// The wire name: `allow`, `needs_approval`, `deny`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::NeedsApproval => "needs_approval",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The gate's decision on one proposed call.
///
/// Made by the gate alone and read through its accessors: its fields are
/// private, and the only changes code outside the gate can make are
/// monotone ([`Gate::deny_after`](crate::Gate::deny_after),
/// [`Decision::escalate`], [`Decision::await_approval`]): nothing turns a
/// deny into anything else, or adds what the gate did not check (DESIGN.md
/// contract 2).
///
/// ```compile_fail
/// # fn f(d: &mut toolgate::Decision) {
/// // A deny cannot be edited into an allow: the fields are private.
/// d.verdict = toolgate::Verdict::Allow;
/// # }
/// ```
///
/// ```compile_fail
/// # fn f(d: &mut toolgate::Decisions) {
/// // Nor can a refused response be un-refused.
/// d.rejected = None;
/// # }
/// ```
///
/// `canonical_args` and `digest` are present whenever the arguments parsed
/// strictly (also for a denied call, so that the audit and the approval
/// binding can name them); a call may run only when the verdict is
/// [`Verdict::Allow`], and then with exactly
/// [`Decision::executable_args`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decision {
    /// Position of the call in the response.
    pub(crate) index: usize,
    /// The provider's call id, if any.
    pub(crate) call_id: Option<String>,
    /// The tool name as proposed (exact; possibly not a registered tool).
    pub(crate) tool: String,
    /// The verdict.
    pub(crate) verdict: Verdict,
    /// Why, in stage order. Empty for an allow.
    pub(crate) reasons: Vec<Reason>,
    /// The arguments as canonical JSON (RFC 8785).
    pub(crate) canonical_args: Option<String>,
    /// The SHA-256 digest of `canonical_args`.
    pub(crate) digest: Option<Digest>,
    /// The digest of the arguments' shape: member names and JSON types with
    /// every scalar value blanked out. Near-identical retries share it; the
    /// `repeated_rejection` limit counts by it.
    pub(crate) shape: Option<Digest>,
    /// The policy ids that decided at the authorization stage.
    pub(crate) policies: Vec<String>,
    /// The approval that lets this call through, to be marked used by whoever
    /// executes it.
    pub(crate) approval: Option<ApprovalRef>,
    /// The addresses URL arguments under a resolve-mode policy were checked
    /// at, one entry per such argument present, in policy order: the tool
    /// must connect only there (a second lookup could be rebound). Empty
    /// unless the URL stage passed with a resolve-mode policy.
    pub(crate) pinned: Vec<PinnedUrl>,
    /// A short text safe to return to the model as the tool result: the
    /// verdict, reason codes and pointers only (see [`crate::feedback`]).
    pub(crate) feedback: String,
    /// For a call denied before its arguments were parsed into
    /// `canonical_args` (they did not parse; or an unknown tool, a response
    /// denied as a whole): the arguments as received (a string's text, an
    /// inline value's canonical text), for the audit log
    /// (`toolgate_store::StoreGate` records a bounded copy). Never run a tool with
    /// it, never show it to the model.
    pub(crate) received_arguments: Option<String>,
    /// The signed receipt of this decision, when the gate has a receipt key
    /// and the arguments parsed ([`crate::receipt`]).
    pub(crate) receipt: Option<crate::receipt::IssuedReceipt>,
    /// What the call adds to each `[[limit]]` that counts it, if it runs
    /// (an allowed call only): the store applies them with the audit record.
    pub(crate) charges: Vec<crate::limit::Charge>,
    /// The labels the call's result brings into the session, if it runs
    /// (an allowed call of a labelled tool only).
    pub(crate) labels: Vec<String>,
    /// For a call denied `rate_limited` or `budget_exceeded`: seconds until
    /// a retry can succeed, as the feedback says (`None`: never within the
    /// window, or not told).
    pub(crate) retry_after: Option<u64>,
    /// For a call a policy held: the values the holding policies read
    /// ([`crate::PolicyFact`]), for the approvers.
    pub(crate) held_facts: Vec<crate::authorize::PolicyFact>,
}

/// A reference to an approval: the id the store gave it, as decimal digits
/// (`"7"`), the same text everywhere it is shown (decisions, the approvals
/// API, audit records).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApprovalRef(String);

impl ApprovalRef {
    /// The reference with this text.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }

    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ApprovalRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<ApprovalRef> for String {
    fn from(r: ApprovalRef) -> Self {
        r.0
    }
}

/// The checked addresses of one URL argument (resolve mode).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PinnedUrl {
    /// The JSON Pointer of the URL argument, such as `/url`.
    pub pointer: String,
    /// Every address the host resolved to, each checked, with the URL's
    /// effective port; in the resolver's order without duplicates. For an
    /// IP-literal host, that address alone.
    pub addresses: Vec<SocketAddr>,
}

impl Decision {
    /// The canonical arguments, only when the call may run.
    pub fn executable_args(&self) -> Option<&str> {
        match self.verdict {
            Verdict::Allow => self.canonical_args.as_deref(),
            Verdict::NeedsApproval | Verdict::Deny => None,
        }
    }

    /// Position of the call in the response.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The provider's call id, if any.
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// The tool name as proposed (exact; possibly not a registered tool).
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Why, in stage order. Empty for an allow.
    pub fn reasons(&self) -> &[Reason] {
        &self.reasons
    }

    /// The arguments as canonical JSON (RFC 8785), whenever they parsed
    /// strictly, whatever the verdict. To run a call, use
    /// [`Decision::executable_args`].
    pub fn canonical_args(&self) -> Option<&str> {
        self.canonical_args.as_deref()
    }

    /// The SHA-256 digest of [`Decision::canonical_args`].
    pub fn digest(&self) -> Option<Digest> {
        self.digest
    }

    /// The digest of the arguments' shape: member names and JSON types with
    /// every scalar value blanked out. Near-identical retries share it; the
    /// `repeated_rejection` limit counts by it.
    pub fn shape(&self) -> Option<Digest> {
        self.shape
    }

    /// The policy ids that decided at the authorization stage.
    pub fn policies(&self) -> &[String] {
        &self.policies
    }

    /// For a call a policy held for a human: the values the holding
    /// policies read (such as the order's total), bounded; empty otherwise.
    /// For the approvers, never for the model.
    pub fn held_facts(&self) -> &[crate::authorize::PolicyFact] {
        &self.held_facts
    }

    /// The approval this call uses (an allow) or waits for (a hold).
    pub fn approval(&self) -> Option<&ApprovalRef> {
        self.approval.as_ref()
    }

    /// The addresses URL arguments under a resolve-mode policy were checked
    /// at, one entry per such argument present, in policy order: the tool
    /// must connect only there. Empty unless the URL stage passed with a
    /// resolve-mode policy.
    pub fn pinned(&self) -> &[PinnedUrl] {
        &self.pinned
    }

    /// A short text safe to return to the model as the tool result: the
    /// verdict, reason codes and pointers only (see [`crate::feedback`]).
    pub fn feedback(&self) -> &str {
        &self.feedback
    }

    /// For a call denied before its arguments parsed: the arguments as
    /// received, for the audit log only. Never run a tool with it, never
    /// show it to the model.
    pub fn received_arguments(&self) -> Option<&str> {
        self.received_arguments.as_deref()
    }

    /// The signed receipt of this decision (`tgr1.…`), for the service that
    /// executes the call to check with [`crate::receipt::verify`]: present
    /// when the gate was given a receipt key and the arguments parsed,
    /// whatever the verdict (only an allow's passes verification). A
    /// decision denied after the gate decided carries a deny receipt.
    pub fn receipt(&self) -> Option<&str> {
        self.receipt.as_ref().map(|r| r.text.as_str())
    }

    /// What the receipt says (call id, tool, digest, verdict, times).
    pub fn receipt_claims(&self) -> Option<&crate::receipt::Receipt> {
        self.receipt.as_ref().map(|r| &r.claims)
    }

    /// What the call adds to each `[[limit]]` counting it, if it runs: set
    /// on an allowed call only. A store applies them in the audit record's
    /// transaction; a caller without a store keeps them (the context's
    /// `limit_events`).
    pub fn charges(&self) -> &[crate::limit::Charge] {
        &self.charges
    }

    /// The session labels the call's result brings in, if it runs (the
    /// tool's `labels`): set on an allowed call only.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// For a call denied `rate_limited` or `budget_exceeded`: the seconds
    /// after which a retry can succeed, as the feedback says.
    pub fn retry_after(&self) -> Option<u64> {
        self.retry_after
    }

    /// Takes the details out of the feedback of a denied or held call (a
    /// session escalated by repeated rejections learns nothing more from
    /// it): [`ESCALATED_DENY_FEEDBACK`] and [`ESCALATED_HOLD_FEEDBACK`]. An
    /// allow is left as it is.
    pub fn escalate(&mut self) {
        let text = match self.verdict {
            Verdict::Allow => return,
            Verdict::Deny => ESCALATED_DENY_FEEDBACK,
            Verdict::NeedsApproval => ESCALATED_HOLD_FEEDBACK,
        };
        text.clone_into(&mut self.feedback);
    }

    /// Names the pending approval a held call waits for. Only a held call
    /// takes one: for an allow or a deny this does nothing and returns
    /// `false`.
    pub fn await_approval(&mut self, approval: ApprovalRef) -> bool {
        if self.verdict != Verdict::NeedsApproval {
            return false;
        }
        self.approval = Some(approval);
        true
    }
}

/// Everything the gate decided about one response. Sealed like
/// [`Decision`]: read through its accessors, changed only by the monotone
/// operations.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decisions {
    /// The format the body was read as; `None` if it was refused before the
    /// format was known.
    pub(crate) format: Option<Format>,
    /// Whether the body was an event stream.
    pub(crate) streamed: bool,
    /// How the turn ended, if the body was read.
    pub(crate) finish: Option<Finish>,
    /// Why the body was refused as a whole (not strict JSON, unknown format,
    /// …), with a pointer into the body. A refused body has no decisions and
    /// its verdict is deny.
    pub(crate) rejected: Option<Reason>,
    /// Response-level reasons, pointers into the body: a finish that is not
    /// complete (`truncated`, …) and the adapter's findings (`dsml_markup`,
    /// `calls_expected`, …). [`Reason::code`]'s
    /// [`finding_denies`](crate::Code::finding_denies) says which of them deny
    /// the response.
    pub(crate) findings: Vec<Reason>,
    /// One decision per proposed call, in the response's order.
    pub(crate) decisions: Vec<Decision>,
}

impl Decisions {
    /// The format the body was read as; `None` if it was refused before the
    /// format was known.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Whether the body was an event stream.
    pub fn streamed(&self) -> bool {
        self.streamed
    }

    /// How the turn ended, if the body was read.
    pub fn finish(&self) -> Option<&Finish> {
        self.finish.as_ref()
    }

    /// Why the body was refused as a whole, with a pointer into the body. A
    /// refused body has no decisions and its verdict is deny.
    pub fn rejected(&self) -> Option<&Reason> {
        self.rejected.as_ref()
    }

    /// Response-level reasons: a finish that is not complete and the
    /// adapter's findings; [`Code::finding_denies`](crate::Code::finding_denies)
    /// says which of them deny the response.
    pub fn findings(&self) -> &[Reason] {
        &self.findings
    }

    /// One decision per proposed call, in the response's order.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    /// The decisions, to apply the monotone operations to
    /// ([`Gate::deny_after`](crate::Gate::deny_after),
    /// [`Decision::await_approval`]).
    pub fn decisions_mut(&mut self) -> impl Iterator<Item = &mut Decision> {
        self.decisions.iter_mut()
    }

    /// The decisions, by value.
    pub fn into_decisions(self) -> Vec<Decision> {
        self.decisions
    }

    /// [`Decision::escalate`] on every decision.
    pub fn escalate(&mut self) {
        for d in &mut self.decisions {
            d.escalate();
        }
    }

    /// The verdict on the response: deny if the body was refused, a finding
    /// denies or any call is denied; otherwise needs approval if any call
    /// does; otherwise allow (also for a response without calls).
    pub fn verdict(&self) -> Verdict {
        let response_denied =
            self.rejected.is_some() || self.findings.iter().any(|r| r.code.finding_denies());
        if response_denied {
            return Verdict::Deny;
        }
        self.decisions
            .iter()
            .map(|d| d.verdict)
            .max()
            .unwrap_or(Verdict::Allow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::FindingCode;
    use crate::reason::Code;

    fn decision(verdict: Verdict) -> Decision {
        Decision {
            index: 0,
            call_id: None,
            tool: "t".into(),
            verdict,
            reasons: Vec::new(),
            canonical_args: Some("{}".into()),
            digest: None,
            shape: None,
            policies: Vec::new(),
            approval: None,
            pinned: Vec::new(),
            feedback: String::new(),
            received_arguments: None,
            receipt: None,
            charges: Vec::new(),
            labels: Vec::new(),
            retry_after: None,
            held_facts: Vec::new(),
        }
    }

    #[test]
    fn worst_verdict_wins() {
        let mut d = Decisions {
            format: None,
            streamed: false,
            finish: None,
            rejected: None,
            findings: Vec::new(),
            decisions: vec![decision(Verdict::Allow), decision(Verdict::NeedsApproval)],
        };
        assert_eq!(d.verdict(), Verdict::NeedsApproval);
        d.findings
            .push(Reason::whole(Code::Finding(FindingCode::DsmlMarkup)));
        assert_eq!(d.verdict(), Verdict::NeedsApproval);
        d.findings
            .push(Reason::whole(Code::Finding(FindingCode::CallsExpected)));
        assert_eq!(d.verdict(), Verdict::Deny);
        d.decisions.clear();
        d.findings.clear();
        assert_eq!(d.verdict(), Verdict::Allow);
        d.rejected = Some(Reason::whole(Code::InternalError));
        assert_eq!(d.verdict(), Verdict::Deny);
    }

    #[test]
    fn only_an_allow_is_executable() {
        assert_eq!(decision(Verdict::Allow).executable_args(), Some("{}"));
        assert_eq!(decision(Verdict::Deny).executable_args(), None);
        assert_eq!(decision(Verdict::NeedsApproval).executable_args(), None);
    }
}
