//! The gate; documented on [`Gate`].

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use toolgate_json::canonical::{self, Digest};
use toolgate_json::Value;

use crate::adapter::{AdapterOptions, Envelope, Format, ProposedCall};
use crate::authorize::{Authorizer, AuthzRequest, DenyAll};
use crate::context::{ApprovalKey, Context, StateView};
use crate::decision::{Decision, Decisions, Verdict};
use crate::feedback;
use crate::reason::{Code, Reason};
use crate::receipt::{ReceiptKey, ReceiptPublicKey};
use crate::registry::Registry;
use crate::stage::{
    self, approval::Outcome, default_urls::DefaultUrls, limits::Limits, policy::UrlArg,
    usage::Planned,
};
use crate::url_guard::{Resolve, SystemResolver, UrlPolicyError};

/// The gate: a raw provider response in, one [`Decision`] per proposed call
/// out.
///
/// [`Gate::decide`] is a total function: it never returns an error and never
/// panics. Whatever goes wrong, reading the body, parsing the arguments,
/// reading the state, even a bug caught at the boundary, ends in *deny*
/// (fail closed; DESIGN.md contract 1). A gate is built once
/// ([`Gate::builder`]) from a [`Registry`] and an [`Authorizer`], and is
/// immutable and shareable afterwards.
///
/// ```
/// use toolgate::{registry::Registry, Context, Gate, Verdict};
///
/// // No tools registered, no authorizer named: nothing can run.
/// let gate = Gate::builder(Registry::new()).build()?;
/// let body = br#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
///   "tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":"{}"}}]}}]}"#;
/// let context = Context::new("alice", "s-1", 1);
/// let decisions = gate.decide(body, toolgate::Format::Auto, &context, &context);
/// assert_eq!(decisions.verdict(), Verdict::Deny);
/// assert_eq!(decisions.decisions()[0].reasons()[0].code.as_str(), "unknown_tool");
/// assert_eq!(decisions.decisions()[0].feedback(), "denied by toolgate: unknown_tool");
/// # Ok::<(), toolgate::GateError>(())
/// ```
///
/// The decision pipeline over a registry.
pub struct Gate {
    registry: Registry,
    tools: HashMap<String, Extras>,
    authorizer: Box<dyn Authorizer>,
    adapter: AdapterOptions,
    limits: Limits,
    resolver: Arc<dyn Resolve + Send + Sync>,
    /// The key that signs every decision's receipt, if any.
    receipts: Option<Arc<ReceiptKey>>,
}

/// What the gate precomputes per tool.
#[derive(Debug)]
struct Extras {
    urls: Vec<UrlArg>,
    /// The default URL guard (`None`: the tool opted out).
    default_urls: Option<DefaultUrls>,
    /// Every property name the tool's schema declares: the names feedback
    /// may show.
    names: HashSet<String>,
    /// The `[[limit]]`s counting the tool.
    limits: Vec<crate::limit::Limit>,
}

impl Gate {
    /// The default turn cap per session.
    pub const DEFAULT_MAX_TURNS: u32 = 20;
    /// The default cap on calls per response.
    pub const DEFAULT_MAX_CALLS: usize = 16;
    /// The default number of rejections of one tool and argument shape after
    /// which a session's further such calls are denied `repeated_rejection`.
    pub const DEFAULT_MAX_REJECTIONS: u32 = 3;

    /// Starts building a gate over `registry`.
    pub fn builder(registry: Registry) -> GateBuilder {
        GateBuilder {
            registry,
            authorizer: None,
            adapter: AdapterOptions::new(),
            resolver: None,
            receipts: None,
            usage_limits: Vec::new(),
            limits: Limits {
                max_turns: Self::DEFAULT_MAX_TURNS,
                max_calls: Self::DEFAULT_MAX_CALLS,
                max_rejections: Self::DEFAULT_MAX_REJECTIONS,
            },
        }
    }

    /// The gate a config describes: its tools, its `[gate]` limits and the
    /// authorizer its `[authorization]` table names (Cedar policies, none,
    /// or deny-all when the table is absent). The paved path: the CLI, the
    /// HTTP service and the Python package build their gates here.
    pub fn from_config(config: &crate::config::Config) -> Result<Self, FromConfigError> {
        Self::from_config_with(config, &|_| Ok(None))
    }

    /// [`Gate::from_config`], with entity sources of kinds the gate does
    /// not build itself built by `connect` (`toolgate-store` builds the
    /// PostgreSQL ones: see [`crate::authz::from_config_with`]).
    pub fn from_config_with(
        config: &crate::config::Config,
        connect: crate::authz::SourceConnector<'_>,
    ) -> Result<Self, FromConfigError> {
        let authorizer = crate::authz::from_config_with(config, connect)
            .map_err(FromConfigError::Authorization)?;
        let mut builder = Self::builder(config.registry().clone())
            .gate_config(config.gate())
            .limits(config.limits().iter().cloned())
            .authorizer(authorizer);
        if let Some(resolver) = config.resolver() {
            builder = builder.resolver(resolver.resolver());
        }
        if let Some(receipts) = config.receipts() {
            let key = ReceiptKey::from_file(receipts.key())
                .map_err(FromConfigError::Receipts)?
                .with_seconds(receipts.seconds());
            builder = builder.receipts(key);
        }
        builder.build().map_err(FromConfigError::Gate)
    }

    /// The registry the gate decides against.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The `[[limit]]`s counting calls of `tool` (none for a tool it does
    /// not know): what an approver is shown the usage of.
    pub fn tool_limits(&self, tool: &str) -> &[crate::limit::Limit] {
        self.tools.get(tool).map_or(&[], |e| e.limits.as_slice())
    }

    /// The public key that verifies this gate's receipts, if it signs them.
    pub fn receipt_public_key(&self) -> Option<ReceiptPublicKey> {
        self.receipts.as_ref().map(|k| k.public_key())
    }

    /// [`Gate::deny_after`] on every decision of `decisions`; a response
    /// without calls and not refused is refused for `code`.
    pub fn deny_all_after(&self, decisions: &mut Decisions, code: Code) {
        for d in &mut decisions.decisions {
            self.deny_after(d, code);
        }
        if decisions.decisions.is_empty() && decisions.rejected.is_none() {
            decisions.rejected = Some(Reason::whole(code));
        }
    }

    /// Denies `decision` for `code`, a fact learned after the gate decided
    /// (the store failed, the approval queue is full): an allow or a hold
    /// becomes a deny for `code` alone, without an approval; a deny gets
    /// `code` added. The feedback is rendered again, with the property names
    /// of the tool's schema as the gate renders it. Nothing here turns a deny
    /// into anything else (DESIGN.md contract 2).
    pub fn deny_after(&self, decision: &mut Decision, code: Code) {
        let reason = Reason::whole(code);
        let reasons = match decision.verdict {
            Verdict::Allow | Verdict::NeedsApproval => {
                decision.approval = None;
                vec![reason]
            }
            Verdict::Deny => {
                let mut reasons = std::mem::take(&mut decision.reasons);
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
                reasons
            }
        };
        let extras = self.tools.get(&decision.tool);
        let known = |name: &str| extras.is_some_and(|e| e.names.contains(name));
        decision.feedback = feedback::render(Verdict::Deny, &reasons, &known);
        // A denied call does not run: it counts toward no limit and brings
        // no label.
        decision.charges.clear();
        decision.labels.clear();
        decision.verdict = Verdict::Deny;
        decision.reasons = reasons;
        // The receipt says what the decision now says: deny, with the
        // times of the first (a receipt is never made to last longer).
        if let (Some(key), Some(old)) = (&self.receipts, decision.receipt.take()) {
            let mut claims = old.claims;
            claims.verdict = Verdict::Deny;
            decision.receipt = Some(crate::receipt::IssuedReceipt {
                text: key.sign(&claims),
                claims,
            });
        }
    }

    /// Decides every call of one raw response body. Never fails, never
    /// panics: anything that goes wrong is a denial.
    pub fn decide(
        &self,
        body: &[u8],
        format: Format,
        context: &Context,
        state: &dyn StateView,
    ) -> Decisions {
        guarded(|| match self.adapter.read(body, format) {
            Ok(envelope) => self.decide_envelope_inner(&envelope, context, state),
            Err(e) => Decisions {
                format: None,
                streamed: false,
                finish: None,
                rejected: Some(body_reason(&e)),
                findings: Vec::new(),
                decisions: Vec::new(),
            },
        })
    }

    /// Decides every call of an envelope already read by an adapter.
    pub fn decide_envelope(
        &self,
        envelope: &Envelope,
        context: &Context,
        state: &dyn StateView,
    ) -> Decisions {
        guarded(|| self.decide_envelope_inner(envelope, context, state))
    }

    fn decide_envelope_inner(
        &self,
        envelope: &Envelope,
        context: &Context,
        state: &dyn StateView,
    ) -> Decisions {
        let findings = stage::finish::response_reasons(&envelope.finish, &envelope.findings);
        let response_denial = stage::finish::check(&findings);
        let now = context.now_or_clock();
        let turn = effective_turn(state, context);
        let mut run = Run {
            context,
            state,
            now,
            turn,
            calls_in_response: envelope.calls.len(),
            granted: Vec::new(),
            allowed_ids: Vec::new(),
            charges: Vec::new(),
            labels: None,
        };
        let decisions = envelope
            .calls
            .iter()
            .map(|call| {
                let mut d = self.decide_call(call, response_denial.as_ref(), &mut run);
                if let (Some(key), Some(digest)) = (&self.receipts, &d.digest) {
                    d.receipt = Some(key.issue(d.call_id.as_deref(), &d.tool, digest, d.verdict));
                }
                d
            })
            .collect();
        Decisions {
            format: Some(envelope.format),
            streamed: envelope.streamed,
            finish: Some(envelope.finish.clone()),
            rejected: None,
            findings,
            decisions,
        }
    }

    /// The stages, in their fixed order, for one call.
    fn decide_call(
        &self,
        call: &ProposedCall,
        response_denial: Option<&Reason>,
        run: &mut Run<'_>,
    ) -> Decision {
        let mut d = Decision {
            index: call.index,
            call_id: call
                .call_id
                .as_deref()
                .map(|id| crate::identifier::bounded(id).into_owned()),
            tool: crate::identifier::bounded(&call.tool_name()).into_owned(),
            verdict: Verdict::Deny,
            reasons: Vec::new(),
            canonical_args: None,
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
        };
        // 0. identifiers: what the model and the caller named, bounded
        // before anything is read or written under them.
        let ids = [
            call.call_id.as_deref().unwrap_or_default(),
            &call.name,
            &run.context.user,
            &run.context.session,
        ];
        if !ids.into_iter().all(crate::identifier::within) {
            d.received_arguments = received_text(&call.arguments);
            return deny(d, vec![Reason::whole(Code::IdentifierTooLong)], None);
        }
        // 1. finish and response-level findings.
        if let Some(reason) = response_denial {
            d.received_arguments = received_text(&call.arguments);
            return deny(d, vec![reason.clone()], None);
        }
        // 2. registry.
        let tool =
            match stage::registry::check(&self.registry, call.namespace.as_deref(), &call.name) {
                Ok(tool) => tool,
                Err(reason) => {
                    d.received_arguments = received_text(&call.arguments);
                    return deny(d, vec![reason], None);
                }
            };
        let Some(extras) = self.tools.get(tool.name()) else {
            // INVARIANT: `build` precomputes every registered tool.
            return deny(d, vec![Reason::whole(Code::InternalError)], None);
        };
        // 3. strict parse.
        let (arguments, text) =
            match stage::parse::check(&call.arguments, call.received_bytes, tool.parse_options()) {
                Ok(parsed) => (parsed.value, parsed.canonical),
                Err(reason) => {
                    d.received_arguments = received_text(&call.arguments);
                    return deny(d, vec![reason], Some(extras));
                }
            };
        let digest = Digest::of(text.as_bytes());
        let shape = shape_digest(&arguments);
        d.canonical_args = Some(text);
        d.digest = Some(digest);
        d.shape = Some(shape);
        // 4. schema.
        if let Err((reasons, expected)) = stage::schema::check(tool.schema(), &arguments) {
            let mut d = deny(d, reasons, Some(extras));
            let known = |name: &str| extras.names.contains(name);
            d.feedback = feedback::render_expecting(Verdict::Deny, &d.reasons, &expected, &known);
            return d;
        }
        // 5. argument policies.
        match stage::policy::check(&extras.urls, &arguments, self.resolver.as_ref()) {
            Ok(pinned) => d.pinned = pinned,
            Err(reasons) => return deny(d, reasons, Some(extras)),
        }
        if let Some(default_urls) = &extras.default_urls {
            match default_urls.check(&arguments, self.resolver.as_ref()) {
                Ok(pinned) => d.pinned.extend(pinned),
                Err(reasons) => return deny(d, reasons, Some(extras)),
            }
        }
        // 6. authorization, with the session's labels when the policies
        // read them.
        let labels: &[String] = if self.authorizer.reads_session_labels() {
            read_session_labels(run);
            match &run.labels {
                Some(Ok(labels)) => labels,
                _ => return deny(d, vec![Reason::whole(Code::StoreUnavailable)], Some(extras)),
            }
        } else {
            &[]
        };
        let canonical = d.canonical_args.as_deref().unwrap_or_default();
        let request = AuthzRequest {
            context: run.context,
            tool,
            arguments: &arguments,
            canonical,
            resource_id: tool
                .resource()
                .and_then(|r| arguments.pointer(r.id_pointer())),
            labels,
        };
        let (authorized, policies, facts) =
            stage::authorize::check(self.authorizer.as_ref(), &request);
        d.policies = policies;
        d.held_facts = facts;
        let held_by_policy = match authorized {
            Ok(held) => held,
            Err(reason) => return deny(d, vec![reason], Some(extras)),
        };
        // 7. limits.
        let limits = run
            .turn
            .ok_or_else(|| Reason::whole(Code::StoreUnavailable))
            .and_then(|turn| stage::limits::turns(&self.limits, turn, run.context.max_turns))
            .and_then(|()| stage::limits::calls(&self.limits, run.calls_in_response))
            .and_then(|()| {
                stage::limits::rejections(
                    &self.limits,
                    run.state,
                    &run.context.session,
                    tool.name(),
                    &shape,
                )
            });
        if let Err(reason) = limits {
            return deny(d, vec![reason], Some(extras));
        }
        // 7b. rate limits and budgets.
        let now_ms = run
            .state
            .now_millis()
            .unwrap_or_else(|| run.now.saturating_mul(1000));
        let planned = match stage::usage::check(
            &extras.limits,
            &arguments,
            run.context,
            d.call_id.as_deref(),
            run.state,
            now_ms,
            &run.charges,
        ) {
            Ok(planned) => planned,
            Err(over) => {
                let mut d = deny(d, vec![over.reason], Some(extras));
                if let Some(seconds) = over.retry_after {
                    d.retry_after = Some(seconds);
                    let _ = write!(d.feedback, "; retry after {seconds} s");
                }
                return d;
            }
        };
        // 8. kill switch.
        if let Err(reason) = stage::kill_switch::check(run.state, tool.risk()) {
            return deny(d, vec![reason], Some(extras));
        }
        // 9. risk tier and approval.
        let key = ApprovalKey {
            user: &run.context.user,
            session: &run.context.session,
            tool: tool.name(),
            digest: &digest,
        };
        let required = match stage::approval::required(tool, run.state, &run.context.session) {
            Ok(required) => required || planned.hold.is_some() || held_by_policy,
            Err(reason) => return deny(d, vec![reason], Some(extras)),
        };
        // A replayed call is denied before an approval is used or asked
        // for: a retrying loop must neither spend a human's approval nor
        // ask again for a call that already ran.
        let replay_id = replay_id(tool.risk(), call.call_id.as_deref());
        if let Err(reason) = replay_seen(replay_id, run) {
            return deny(d, vec![reason], Some(extras));
        }
        let outcome = stage::approval::check(required, run.state, &key, run.now, &run.granted);
        // 10. replays: a non-read call is allowed once per call id.
        let replay = |run: &mut Run<'_>| claim(replay_id, run);
        let Planned { charges, hold } = planned;
        let allow = |mut d: Decision, run: &mut Run<'_>| {
            run.charges.extend(charges.iter().cloned());
            d.charges = charges;
            d.labels = tool.labels().to_vec();
            finish(d, Verdict::Allow, Vec::new(), Some(extras))
        };
        match outcome {
            Outcome::NotRequired => match replay(run) {
                Ok(()) => allow(d, run),
                Err(reason) => deny(d, vec![reason], Some(extras)),
            },
            Outcome::Approved(grant) => {
                run.granted.push(grant.id.as_str().to_owned());
                d.approval = Some(grant.id);
                match replay(run) {
                    Ok(()) => allow(d, run),
                    Err(reason) => deny(d, vec![reason], Some(extras)),
                }
            }
            // Held over a budget: the human sees why.
            Outcome::Required(reason) => {
                let reason = hold.unwrap_or(reason);
                finish(d, Verdict::NeedsApproval, vec![reason], Some(extras))
            }
            Outcome::Denied(reason) => deny(d, vec![reason], Some(extras)),
        }
    }
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("tools", &self.registry.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Gate`]. Without [`GateBuilder::authorizer`], the gate uses
/// [`DenyAll`]: allowing calls without authorization takes the named
/// [`crate::danger::NoAuthorization`].
#[must_use]
pub struct GateBuilder {
    registry: Registry,
    authorizer: Option<Box<dyn Authorizer>>,
    adapter: AdapterOptions,
    limits: Limits,
    resolver: Option<Arc<dyn Resolve + Send + Sync>>,
    receipts: Option<Arc<ReceiptKey>>,
    usage_limits: Vec<crate::limit::Limit>,
}

impl GateBuilder {
    /// Signs a receipt of every decision whose arguments parsed with `key`
    /// ([`crate::receipt`]); without it decisions carry none.
    pub fn receipts(mut self, key: ReceiptKey) -> Self {
        self.receipts = Some(Arc::new(key));
        self
    }

    /// Rate limits and budgets across calls (the config's `[[limit]]`
    /// tables; see [`crate::limit::Limit`]), added to those given before.
    pub fn limits(mut self, limits: impl IntoIterator<Item = crate::limit::Limit>) -> Self {
        self.usage_limits.extend(limits);
        self
    }

    /// The resolver of resolve-mode URL policies (`resolve = true`); by
    /// default the [`SystemResolver`]. It is called during
    /// [`Gate::decide`], once per resolve-mode URL argument. With a
    /// resolver set here (as [`Gate::from_config`] does for a config's
    /// `[resolver]` table), the default URL guard resolves too.
    pub fn resolver(mut self, resolver: Arc<dyn Resolve + Send + Sync>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// The authorization hook.
    pub fn authorizer(mut self, authorizer: impl Authorizer + 'static) -> Self {
        self.authorizer = Some(Box::new(authorizer));
        self
    }

    /// The config's `[gate]` table: how bodies are read, the turn cap and
    /// the calls per response (the authorizer and resolver stay the
    /// caller's choice).
    pub fn gate_config(self, config: &crate::config::GateConfig) -> Self {
        self.adapter_options(config.adapter_options())
            .max_turns(config.max_turns())
            .max_calls_per_response(
                usize::try_from(config.max_calls_per_response()).unwrap_or(usize::MAX),
            )
    }

    /// How bodies are read (the parser's limits for the body, stream bounds).
    pub fn adapter_options(mut self, options: AdapterOptions) -> Self {
        self.adapter = options;
        self
    }

    /// The turn cap per session (a context may lower it, never raise it).
    pub fn max_turns(mut self, max: u32) -> Self {
        self.limits.max_turns = max;
        self
    }

    /// The cap on calls per response.
    pub fn max_calls_per_response(mut self, max: usize) -> Self {
        self.limits.max_calls = max;
        self
    }

    /// Rejections of one tool and argument shape after which the session's
    /// further such calls are denied `repeated_rejection`.
    pub fn max_repeated_rejections(mut self, max: u32) -> Self {
        self.limits.max_rejections = max;
        self
    }

    /// Compiles the per-tool policies. Fails if a URL policy does not
    /// compile.
    pub fn build(self) -> Result<Gate, GateError> {
        let mut tools = HashMap::with_capacity(self.registry.len());
        for tool in &self.registry {
            let urls = tool
                .url_policies()
                .iter()
                .map(UrlArg::compile)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|source| GateError {
                    tool: tool.name().to_owned(),
                    source,
                })?;
            let default_urls =
                DefaultUrls::new(tool, self.resolver.is_some()).map_err(|source| GateError {
                    tool: tool.name().to_owned(),
                    source,
                })?;
            let mut names = HashSet::new();
            collect_property_names(tool.raw_schema(), &mut names);
            let limits = self
                .usage_limits
                .iter()
                .filter(|l| l.applies_to(tool.name()))
                .cloned()
                .collect();
            tools.insert(
                tool.name().to_owned(),
                Extras {
                    urls,
                    default_urls,
                    names,
                    limits,
                },
            );
        }
        Ok(Gate {
            registry: self.registry,
            tools,
            authorizer: self.authorizer.unwrap_or_else(|| Box::new(DenyAll)),
            adapter: self.adapter,
            limits: self.limits,
            resolver: self
                .resolver
                .unwrap_or_else(|| Arc::new(SystemResolver::new())),
            receipts: self.receipts,
        })
    }
}

impl fmt::Debug for GateBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GateBuilder")
            .field("tools", &self.registry.len())
            .field("authorizer", &self.authorizer.is_some())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Why [`Gate::from_config`] could not build the gate.
#[derive(Debug)]
#[non_exhaustive]
pub enum FromConfigError {
    /// The `[authorization]` policies or schema did not load.
    Authorization(crate::authz::LoadError),
    /// A tool's URL policy does not compile.
    Gate(GateError),
    /// The `[gate] receipt_key` file could not be read.
    Receipts(crate::receipt::ReceiptKeyError),
}

impl fmt::Display for FromConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Authorization(_) => f.write_str("cannot load the authorization policies"),
            Self::Gate(_) => f.write_str("cannot build the gate"),
            Self::Receipts(_) => f.write_str("cannot read the receipt key"),
        }
    }
}

impl std::error::Error for FromConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Authorization(e) => Some(e),
            Self::Gate(e) => Some(e),
            Self::Receipts(e) => Some(e),
        }
    }
}

/// A gate that could not be built: a tool's URL policy does not compile.
#[derive(Debug)]
pub struct GateError {
    tool: String,
    source: UrlPolicyError,
}

impl GateError {
    /// The tool whose policy failed.
    pub fn tool(&self) -> &str {
        &self.tool
    }
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}`: url policy does not compile", self.tool)
    }
}

impl std::error::Error for GateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The arguments as received, for the audit of a call whose arguments
/// were never parsed: a string's text, an inline value's canonical text.
fn received_text(arguments: &crate::adapter::Arguments) -> Option<String> {
    use crate::adapter::Arguments;
    match arguments {
        Arguments::Text(t) | Arguments::FreeText(t) => Some(t.clone()),
        Arguments::Value(v) => Some(canonical::to_string(v)),
        Arguments::EmptyText => Some(String::new()),
        Arguments::Absent => None,
    }
}

/// Per-response state of one `decide` run.
struct Run<'a> {
    context: &'a Context,
    state: &'a dyn StateView,
    now: u64,
    /// The turn decided at: the state's count of earlier responses plus
    /// one, or the context's turn if higher; `None` if the state could not
    /// say.
    turn: Option<u32>,
    calls_in_response: usize,
    /// Approvals already granted to earlier calls of this response.
    granted: Vec<String>,
    /// Call ids of non-read calls allowed earlier in this response.
    allowed_ids: Vec<String>,
    /// What calls allowed earlier in this response add to limits.
    charges: Vec<crate::limit::Charge>,
    /// The session's labels, read once per response when policies need
    /// them (`Err`: unreadable).
    labels: Option<Result<Vec<String>, ()>>,
}

/// Reads the session's labels into the run on first use.
fn read_session_labels(run: &mut Run<'_>) {
    if run.labels.is_none() {
        run.labels = Some(run.state.session_labels(&run.context.session).map_err(drop));
    }
}

/// The turn of this response: `max(earlier responses + 1, context turn)`.
fn effective_turn(state: &dyn StateView, context: &Context) -> Option<u32> {
    let earlier = state.earlier_responses(&context.session).ok()?;
    let counted = u32::try_from(earlier.saturating_add(1)).unwrap_or(u32::MAX);
    Some(counted.max(context.turn))
}

/// The id a call is judged by for replays: a non-read call's provider id.
/// Read tools are exempt, and a call without an id cannot be told from a
/// new one.
fn replay_id(risk: crate::registry::Risk, call_id: Option<&str>) -> Option<&str> {
    call_id.filter(|_| risk != crate::registry::Risk::Read)
}

/// Denies `replayed_call` a call whose id was already allowed in the
/// session (earlier in this response, or as the state remembers), reading
/// only: the check before the approval stage.
fn replay_seen(id: Option<&str>, run: &Run<'_>) -> Result<(), Reason> {
    let Some(id) = id else {
        return Ok(());
    };
    if run.allowed_ids.iter().any(|a| a == id) {
        return Err(Reason::whole(Code::ReplayedCall));
    }
    match run.state.call_allowed(&run.context.session, id) {
        Ok(false) => Ok(()),
        Ok(true) => Err(Reason::whole(Code::ReplayedCall)),
        Err(_) => Err(Reason::whole(Code::StoreUnavailable)),
    }
}

/// Records a call about to be allowed as allowed (after [`replay_seen`]);
/// a concurrent decision that claimed the id first makes this one a replay.
fn claim(id: Option<&str>, run: &mut Run<'_>) -> Result<(), Reason> {
    let Some(id) = id else {
        return Ok(());
    };
    match run.state.claim_call(&run.context.session, id) {
        Ok(true) => {
            run.allowed_ids.push(id.to_owned());
            Ok(())
        }
        Ok(false) => Err(Reason::whole(Code::ReplayedCall)),
        Err(_) => Err(Reason::whole(Code::StoreUnavailable)),
    }
}

fn deny(d: Decision, reasons: Vec<Reason>, extras: Option<&Extras>) -> Decision {
    finish(d, Verdict::Deny, reasons, extras)
}

fn finish(
    mut d: Decision,
    verdict: Verdict,
    reasons: Vec<Reason>,
    extras: Option<&Extras>,
) -> Decision {
    let known = |name: &str| extras.is_some_and(|e| e.names.contains(name));
    d.feedback = feedback::render(verdict, &reasons, &known);
    d.verdict = verdict;
    d.reasons = reasons;
    d
}

/// The response-level reason for a refused body: the parser's code as
/// detail when the body was not strict JSON.
fn body_reason(e: &crate::adapter::Error) -> Reason {
    let reason = Reason::new(Code::Body(e.code()), e.pointer());
    match e.json_error() {
        Some(json) => reason.with_detail(json.code().as_str()),
        None => reason,
    }
}

/// Runs `f`, turning a panic into a denial of the whole response.
fn guarded(f: impl FnOnce() -> Decisions) -> Decisions {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Decisions {
        format: None,
        streamed: false,
        finish: None,
        rejected: Some(Reason::whole(Code::InternalError)),
        findings: Vec::new(),
        decisions: Vec::new(),
    })
}

/// The digest of a value's shape: member names (sorted) and JSON types,
/// every scalar blanked to its type.
fn shape_digest(value: &Value<'_>) -> Digest {
    let mut out = String::with_capacity(64);
    write_shape(value, &mut out);
    Digest::of(out.as_bytes())
}

fn write_shape(value: &Value<'_>, out: &mut String) {
    match value {
        Value::Null => out.push('n'),
        Value::Bool(_) => out.push('b'),
        Value::Number(_) => out.push('#'),
        Value::String(_) => out.push('s'),
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_shape(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut members: Vec<_> = o.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (name, v) in members {
                out.push_str(&canonical::to_string(&Value::String(name.into())));
                out.push(':');
                write_shape(v, out);
                out.push(',');
            }
            out.push('}');
        }
    }
}

/// Every member name under a `properties` keyword anywhere in a schema.
pub(crate) fn collect_property_names(schema: &Value<'_>, names: &mut HashSet<String>) {
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(props)) = o.get("properties") {
                    names.extend(props.keys().map(str::to_owned));
                }
                stack.extend(o.iter().map(|(_, v)| v));
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_json::from_str;

    #[test]
    fn shapes_ignore_scalar_values_but_not_names_or_types() {
        let a = shape_digest(&from_str(r#"{"amount":1,"to":"x"}"#).unwrap());
        let b = shape_digest(&from_str(r#"{"to":"y","amount":2}"#).unwrap());
        let c = shape_digest(&from_str(r#"{"amount":"1","to":"x"}"#).unwrap());
        let d = shape_digest(&from_str(r#"{"amount2":1,"to":"x"}"#).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn property_names_are_collected_everywhere() {
        let mut names = HashSet::new();
        collect_property_names(
            &from_str(r#"{"properties":{"a":{"properties":{"b":{}}}},"$defs":{"x":{"properties":{"c":{}}}}}"#)
                .unwrap(),
            &mut names,
        );
        let mut names: Vec<_> = names.into_iter().collect();
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn an_empty_gate_denies_and_never_panics_on_garbage() {
        let gate = Gate::builder(Registry::new()).build().unwrap();
        let ctx = Context::new("u", "s", 1);
        for body in [&b""[..], b"{", b"\xff\xfe", b"data: x\n\n"] {
            let d = gate.decide(body, Format::Auto, &ctx, &ctx);
            assert_eq!(d.verdict(), Verdict::Deny);
            assert!(d.rejected.is_some());
        }
        for body in [&b"[]"[..], b"{\"jsonrpc\":\"2.0\"}"] {
            let d = gate.decide(body, Format::Auto, &ctx, &ctx);
            assert!(d.decisions.iter().all(|d| d.verdict == Verdict::Deny));
        }
    }
}
