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
    "held by toolgate for human approval; do not retry this call";

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
/// `canonical_args` and `digest` are present whenever the arguments parsed
/// strictly (also for a denied call, so that the audit and the approval
/// binding can name them); a call may run only when the verdict is
/// [`Verdict::Allow`], and then with exactly
/// [`Decision::executable_args`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decision {
    /// Position of the call in the response.
    pub index: usize,
    /// The provider's call id, if any.
    pub call_id: Option<String>,
    /// The tool name as proposed (exact; possibly not a registered tool).
    pub tool: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in stage order. Empty for an allow.
    pub reasons: Vec<Reason>,
    /// The arguments as canonical JSON (RFC 8785).
    pub canonical_args: Option<String>,
    /// The SHA-256 digest of `canonical_args`.
    pub digest: Option<Digest>,
    /// The digest of the arguments' shape: member names and JSON types with
    /// every scalar value blanked out. Near-identical retries share it; the
    /// `repeated_rejection` limit counts by it.
    pub shape: Option<Digest>,
    /// The policy ids that decided at the authorization stage.
    pub policies: Vec<String>,
    /// The approval that lets this call through, to be marked used by whoever
    /// executes it.
    pub approval: Option<String>,
    /// The addresses URL arguments under a resolve-mode policy were checked
    /// at, one entry per such argument present, in policy order: the tool
    /// must connect only there (a second lookup could be rebound). Empty
    /// unless the URL stage passed with a resolve-mode policy.
    pub pinned: Vec<PinnedUrl>,
    /// A short text safe to return to the model as the tool result: the
    /// verdict, reason codes and pointers only (see [`crate::feedback`]).
    pub feedback: String,
    /// For a call denied before its arguments were parsed into
    /// `canonical_args` (they did not parse; or an unknown tool, a response
    /// denied as a whole): the arguments as received (a string's text, an
    /// inline value's canonical text), for the audit log
    /// (`toolgate_store::StoreGate` records a bounded copy). Never run a tool with
    /// it, never show it to the model.
    pub received_arguments: Option<String>,
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
    pub fn await_approval(&mut self, approval: impl fmt::Display) -> bool {
        if self.verdict != Verdict::NeedsApproval {
            return false;
        }
        self.approval = Some(approval.to_string());
        true
    }
}

/// Everything the gate decided about one response.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decisions {
    /// The format the body was read as; `None` if it was refused before the
    /// format was known.
    pub format: Option<Format>,
    /// Whether the body was an event stream.
    pub streamed: bool,
    /// How the turn ended, if the body was read.
    pub finish: Option<Finish>,
    /// Why the body was refused as a whole (not strict JSON, unknown format,
    /// …), with a pointer into the body. A refused body has no decisions and
    /// its verdict is deny.
    pub rejected: Option<Reason>,
    /// Response-level reasons, pointers into the body: a finish that is not
    /// complete (`truncated`, …) and the adapter's findings (`dsml_markup`,
    /// `calls_expected`, …). [`Reason::code`]'s
    /// [`finding_denies`](crate::Code::finding_denies) says which of them deny
    /// the response.
    pub findings: Vec<Reason>,
    /// One decision per proposed call, in the response's order.
    pub decisions: Vec<Decision>,
}

impl Decisions {
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
