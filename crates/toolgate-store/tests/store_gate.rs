//! The gate on a store (issue 5): approvals bound to (user, session, tool,
//! digest) and used once, the audit record committed before the verdict,
//! the kill switch shared by every process, session escalation.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toolgate::config::Config;
use toolgate::{Context, Decisions, Format, Gate, Verdict};
use toolgate_json::{canonical, Digest, Value};
use toolgate_store::StoreGate;
use toolgate_store::{
    AppendReceipt, Approval, ApprovalFilter, ApprovalId, ApprovalUse, AuditEntry, AuditFilter,
    AuditRecord, AuditVerdict, Error as StoreError, KillMode, KillSwitchState, ManualClock,
    SessionCounters, SqliteOptions, SqliteStore, Store, Timestamp, Verification,
};

const CONFIG: &str = r#"
[gate]
escalate_after = 3

[authorization]
mode = "none"

[[tool]]
name = "refund"
risk = "destructive"
redact = ["/note"]
schema_json = '''{"type":"object","properties":{
  "order_id":{"type":"string"},
  "amount":{"type":"integer"},
  "card":{"type":"string","x-toolgate-redact":true},
  "note":{"type":"string"},
  "meta":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false}},
  "required":["order_id","amount"],"additionalProperties":false}'''

[[tool]]
name = "search"
risk = "read"
schema_json = '{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}'

[[tool]]
name = "ping"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}'
"#;

const T0: i64 = 1_767_225_600;

fn config() -> Config {
    Config::parse(CONFIG, Path::new("/nonexistent/toolgate.toml")).unwrap()
}

fn gate() -> Gate {
    Gate::builder(config().registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap()
}

fn clock() -> ManualClock {
    ManualClock::new(Timestamp::from_unix_seconds(T0))
}

fn memory_store(clock: &ManualClock) -> Arc<SqliteStore> {
    Arc::new(
        SqliteOptions::new()
            .clock(Arc::new(clock.clone()))
            .open_in_memory()
            .unwrap(),
    )
}

/// A store on which nothing can be written.
fn read_only_store() -> Arc<SqliteStore> {
    Arc::new(
        SqliteOptions::new()
            .read_only(true)
            .open_in_memory()
            .unwrap(),
    )
}

fn file_store(path: &Path, clock: &ManualClock) -> Arc<SqliteStore> {
    Arc::new(
        SqliteOptions::new()
            .clock(Arc::new(clock.clone()))
            .escalate_after(3)
            .open(path)
            .unwrap(),
    )
}

fn store_gate(store: Arc<dyn Store>, clock: &ManualClock) -> StoreGate {
    StoreGate::new(gate(), store)
        .with_clock(Arc::new(clock.clone()))
        .with_approval_expiry(Duration::from_secs(600))
}

/// An OpenAI chat response proposing `calls` (tool name, arguments text),
/// each with a call id of its own, as a provider gives them.
fn body(calls: &[(&str, &str)]) -> Vec<u8> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let calls: Vec<String> = calls
        .iter()
        .map(|(name, args)| {
            let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let args = canonical::to_string(&Value::String(Cow::Borrowed(args)));
            format!(
                r#"{{"id":"call_{i}","type":"function","function":{{"name":"{name}","arguments":{args}}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}]}}"#,
        calls.join(",")
    )
    .into_bytes()
}

fn ctx(user: &str, session: &str) -> Context {
    Context::new(user, session, 1)
}

fn decide(g: &StoreGate, c: &Context, calls: &[(&str, &str)]) -> Decisions {
    g.decide_and_record(&body(calls), Format::Auto, c)
}

fn approval_id(d: &Decisions) -> ApprovalId {
    d.decisions()[0]
        .approval()
        .map(|a| a.as_str())
        .unwrap()
        .parse()
        .unwrap()
}

const REFUND: &str = r#"{"order_id":"o-1","amount":30}"#;

#[test]
fn an_approval_lets_exactly_one_identical_call_through() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let alice = ctx("alice", "s-1");

    let first = decide(&g, &alice, &[("refund", REFUND)]);
    assert_eq!(first.decisions()[0].verdict(), Verdict::NeedsApproval);
    let id = approval_id(&first);
    // Asking again before a human decided reuses the pending approval.
    let again = decide(&g, &alice, &[("refund", REFUND)]);
    assert_eq!(approval_id(&again), id);

    store.approve(id, "bob", "checked").unwrap();
    let second = decide(&g, &alice, &[("refund", REFUND)]);
    assert_eq!(
        second.decisions()[0].verdict(),
        Verdict::Allow,
        "{second:?}"
    );
    assert_eq!(
        second.decisions()[0].approval().map(|a| a.as_str()),
        Some(&*id.to_string())
    );

    // Replay: the approval is used.
    let third = decide(&g, &alice, &[("refund", REFUND)]);
    assert_eq!(third.decisions()[0].verdict(), Verdict::NeedsApproval);
    assert_ne!(approval_id(&third), id);

    // Two identical calls in one response: one approval covers one.
    let id = approval_id(&third);
    store.approve(id, "bob", "").unwrap();
    let both = decide(&g, &alice, &[("refund", REFUND), ("refund", REFUND)]);
    let verdicts: Vec<Verdict> = both.decisions().iter().map(|d| d.verdict()).collect();
    assert_eq!(verdicts, [Verdict::Allow, Verdict::NeedsApproval]);
    assert!(store.verify().unwrap().is_intact());
}

#[test]
fn an_approval_covers_only_its_arguments() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let alice = ctx("alice", "s-1");
    let args = r#"{"order_id":"o-1","amount":30,"meta":{"a":1,"b":2}}"#;
    let id = approval_id(&decide(&g, &alice, &[("refund", args)]));
    store.approve(id, "bob", "").unwrap();

    // One changed byte.
    let changed = r#"{"order_id":"o-1","amount":31,"meta":{"a":1,"b":2}}"#;
    let d = decide(&g, &alice, &[("refund", changed)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::NeedsApproval);
    // Another tool name spelling is another tool (and unknown).
    let d = decide(&g, &alice, &[("Refund", args)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Deny);

    // The same object, members reordered and spaced: the same canonical
    // arguments, the same digest, so covered.
    let reordered = r#"{ "meta": {"b":2, "a":1}, "amount": 30, "order_id": "o-1" }"#;
    let digest = |t: &str| canonical::digest(&toolgate_json::from_str(t).unwrap());
    assert_eq!(digest(args), digest(reordered));
    let d = decide(&g, &alice, &[("refund", reordered)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
    assert_eq!(
        d.decisions()[0].approval().map(|a| a.as_str()),
        Some(&*id.to_string())
    );
}

#[test]
fn an_expired_approval_covers_nothing() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let alice = ctx("alice", "s-1");
    let id = approval_id(&decide(&g, &alice, &[("refund", REFUND)]));
    store.approve(id, "bob", "").unwrap();
    clock.advance(Duration::from_secs(600));
    let d = decide(&g, &alice, &[("refund", REFUND)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::NeedsApproval);
    assert_ne!(approval_id(&d), id);
    let a = store.get_approval(id).unwrap().unwrap();
    assert_eq!(a.uses, 0);
    // A pending approval past its expiry cannot be approved either.
    let late = approval_id(&d);
    clock.advance(Duration::from_secs(601));
    assert!(store.approve(late, "bob", "").is_err());
    // A context's `now` does not revive it.
    let mut back = alice.clone();
    back.now = Some(u64::try_from(T0).unwrap());
    let d = decide(&g, &back, &[("refund", REFUND)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::NeedsApproval);
}

#[test]
fn an_approval_of_another_session_or_user_covers_nothing() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let id = approval_id(&decide(&g, &ctx("alice", "s-1"), &[("refund", REFUND)]));
    store.approve(id, "bob", "").unwrap();
    for other in [ctx("alice", "s-2"), ctx("mallory", "s-1")] {
        let d = decide(&g, &other, &[("refund", REFUND)]);
        assert_eq!(d.decisions()[0].verdict(), Verdict::NeedsApproval);
    }
    let d = decide(&g, &ctx("alice", "s-1"), &[("refund", REFUND)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
}

#[test]
fn a_single_approval_is_used_once_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let clock = clock();
    let first = file_store(&path, &clock);
    let alice = ctx("alice", "s-1");
    let id = approval_id(&decide(
        &store_gate(first.clone(), &clock),
        &alice,
        &[("refund", REFUND)],
    ));
    first.approve(id, "bob", "").unwrap();
    // Eight gates, each on its own connection to the file, race for it.
    let allowed: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let g = store_gate(file_store(&path, &clock), &clock);
                let alice = alice.clone();
                s.spawn(move || decide(&g, &alice, &[("refund", REFUND)]).decisions()[0].verdict())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|v| *v == Verdict::Allow)
            .count()
    });
    assert_eq!(allowed, 1);
    assert!(first.verify().unwrap().is_intact());
}

#[test]
fn every_decision_is_audited_before_it_is_returned() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let alice = ctx("alice", "s-1");
    let args = r#"{"order_id":"o-1","amount":30,"card":"4111111111111111","note":"private"}"#;
    let d = decide(
        &g,
        &alice,
        &[
            ("search", r#"{"q":"socks"}"#),
            ("refund", args),
            ("nope", "{}"),
        ],
    );
    let verdicts: Vec<Verdict> = d.decisions().iter().map(|d| d.verdict()).collect();
    assert_eq!(
        verdicts,
        [Verdict::Allow, Verdict::NeedsApproval, Verdict::Deny]
    );
    let records = store.tail(10).unwrap();
    let calls: Vec<&AuditRecord> = records
        .iter()
        .filter(|r| r.entry.call_id.is_some())
        .collect();
    assert_eq!(calls.len(), 3);
    let verdicts: Vec<AuditVerdict> = calls.iter().map(|r| r.entry.verdict).collect();
    assert_eq!(
        verdicts,
        [
            AuditVerdict::Allow,
            AuditVerdict::NeedsApproval,
            AuditVerdict::Deny
        ]
    );
    let refund = &calls[1].entry;
    assert_eq!(refund.user.as_deref(), Some("alice"));
    assert_eq!(refund.session.as_deref(), Some("s-1"));
    assert_eq!(refund.tool.as_deref(), Some("refund"));
    assert_eq!(refund.call_id.as_deref(), d.decisions()[1].call_id());
    assert!(refund.call_id.is_some());
    assert_eq!(refund.reasons, ["approval_required"]);
    assert_eq!(refund.digest, d.decisions()[1].digest());
    let pending: ApprovalId = d.decisions()[1]
        .approval()
        .map(|a| a.as_str())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(refund.approval, Some(pending));
    // Secret fields, by schema annotation and by config, are keyed digests
    // (under the store's key), never the unkeyed digest a reader could
    // test guesses against.
    let recorded = refund.arguments.as_deref().unwrap();
    assert!(!recorded.contains("4111111111111111"), "{recorded}");
    assert!(!recorded.contains("private"), "{recorded}");
    let key = store.redaction_key().unwrap();
    let secret =
        |s: &str| key.digest(canonical::to_string(&Value::String(Cow::Borrowed(s))).as_bytes());
    assert!(recorded.contains(&secret("4111111111111111")), "{recorded}");
    assert!(recorded.contains(&secret("private")), "{recorded}");
    let plain = canonical::digest(&Value::String(Cow::Borrowed("private"))).to_string();
    assert!(!recorded.contains(&plain["sha256:".len()..]), "{recorded}");
    assert!(recorded.contains(r#""amount":30"#), "{recorded}");
    assert_eq!(calls[2].entry.reasons, ["unknown_tool"]);
    // A refused body is audited too.
    let refused = g.decide_and_record(b"{\"a\":1,\"a\":2}", Format::Auto, &alice);
    assert!(refused.rejected().is_some());
    let last = store.tail(1).unwrap().pop().unwrap();
    assert_eq!(last.entry.verdict, AuditVerdict::Deny);
    assert_eq!(last.entry.reasons, ["body_invalid_json"]);
    assert!(store.verify().unwrap().is_intact());
}

/// A store whose audit log cannot be written: every other call goes to a
/// working store.
struct AuditDown {
    inner: SqliteStore,
    broken: SqliteStore,
}

impl AuditDown {
    fn new(clock: &ManualClock) -> Self {
        let opts = SqliteOptions::new().clock(Arc::new(clock.clone()));
        Self {
            inner: opts.clone().open_in_memory().unwrap(),
            broken: opts.read_only(true).open_in_memory().unwrap(),
        }
    }
}

impl Store for AuditDown {
    fn append(&self, entry: AuditEntry) -> Result<AppendReceipt, StoreError> {
        self.broken.append(entry)
    }
    fn append_all(&self, entries: Vec<AuditEntry>) -> Result<Vec<AppendReceipt>, StoreError> {
        self.broken.append_all(entries)
    }
    fn verify(&self) -> Result<Verification, StoreError> {
        self.inner.verify()
    }
    fn tail(&self, n: u32) -> Result<Vec<AuditRecord>, StoreError> {
        self.inner.tail(n)
    }
    fn list(&self, filter: &AuditFilter) -> Result<Vec<AuditRecord>, StoreError> {
        self.inner.list(filter)
    }
    fn export_jsonl(&self, out: &mut dyn std::io::Write) -> Result<u64, StoreError> {
        self.inner.export_jsonl(out)
    }
    fn request_approval_with(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        expires_at: Timestamp,
        limits: toolgate_store::PendingLimits,
        requester: Option<&str>,
        upstream: Option<&str>,
        quorum: toolgate_store::Quorum,
    ) -> Result<ApprovalId, StoreError> {
        self.inner.request_approval_with(
            user, session, tool, digest, expires_at, limits, requester, upstream, quorum,
        )
    }
    fn approval_votes(
        &self,
        id: ApprovalId,
    ) -> Result<Vec<toolgate_store::ApprovalVote>, StoreError> {
        self.inner.approval_votes(id)
    }
    fn redaction_key(&self) -> Result<toolgate_store::RedactionKey, StoreError> {
        self.inner.redaction_key()
    }
    fn approve(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, StoreError> {
        self.inner.approve(id, actor, note)
    }
    fn deny(&self, id: ApprovalId, actor: &str, note: &str) -> Result<Approval, StoreError> {
        self.inner.deny(id, actor, note)
    }
    fn grant_standing_for(
        &self,
        user: &str,
        tool: &str,
        upstream: Option<&str>,
        until: Timestamp,
        actor: &str,
        note: &str,
    ) -> Result<ApprovalId, StoreError> {
        self.inner
            .grant_standing_for(user, tool, upstream, until, actor, note)
    }
    fn consume_routed(
        &self,
        user: &str,
        session: &str,
        tool: &str,
        digest: &Digest,
        upstream: Option<&str>,
        now: Timestamp,
    ) -> Result<Option<ApprovalUse>, StoreError> {
        self.inner
            .consume_routed(user, session, tool, digest, upstream, now)
    }
    fn get_approval(&self, id: ApprovalId) -> Result<Option<Approval>, StoreError> {
        self.inner.get_approval(id)
    }
    fn list_approvals(&self, filter: &ApprovalFilter) -> Result<Vec<Approval>, StoreError> {
        self.inner.list_approvals(filter)
    }
    fn count_approvals(&self, filter: &ApprovalFilter) -> Result<u64, StoreError> {
        self.inner.count_approvals(filter)
    }
    fn record_call(
        &self,
        session: &str,
        turn: u64,
        verdict: AuditVerdict,
        reasons: &[&str],
    ) -> Result<SessionCounters, StoreError> {
        self.inner.record_call(session, turn, verdict, reasons)
    }
    fn session(&self, session: &str) -> Result<SessionCounters, StoreError> {
        self.inner.session(session)
    }
    fn count_response(&self, session: &str) -> Result<u64, StoreError> {
        self.inner.count_response(session)
    }
    fn responses(&self, session: &str) -> Result<u64, StoreError> {
        self.inner.responses(session)
    }
    fn call_allowed(&self, session: &str, call_id: &str) -> Result<bool, StoreError> {
        self.inner.call_allowed(session, call_id)
    }
    fn claim_call(&self, session: &str, call_id: &str) -> Result<bool, StoreError> {
        self.inner.claim_call(session, call_id)
    }
    fn kill_switch(&self) -> Result<KillSwitchState, StoreError> {
        self.inner.kill_switch()
    }
    fn set_kill_switch(
        &self,
        mode: KillMode,
        reason: &str,
        actor: &str,
    ) -> Result<KillSwitchState, StoreError> {
        self.inner.set_kill_switch(mode, reason, actor)
    }
}

fn all_store_unavailable(d: &Decisions) {
    assert_eq!(d.verdict(), Verdict::Deny);
    for c in d.decisions() {
        assert_eq!(c.verdict(), Verdict::Deny, "{c:?}");
        assert!(
            c.reasons()
                .iter()
                .any(|r| r.code.as_str() == "store_unavailable"),
            "{c:?}"
        );
        assert!(
            c.feedback().contains("store_unavailable"),
            "{}",
            c.feedback()
        );
        assert_eq!(c.executable_args(), None);
    }
}

#[test]
fn an_audit_log_that_cannot_be_written_denies_everything() {
    let clock = clock();
    let down = Arc::new(AuditDown::new(&clock));
    let g = store_gate(down.clone(), &clock);
    let alice = ctx("alice", "s-1");
    // An approved call is denied too: its record cannot be written.
    let digest = canonical::digest(&toolgate_json::from_str(REFUND).unwrap());
    let id = down
        .inner
        .request_approval(
            "alice",
            "s-1",
            "refund",
            &digest,
            Timestamp::from_unix_seconds(T0 + 60),
        )
        .unwrap();
    down.inner.approve(id, "bob", "").unwrap();
    let d = decide(
        &g,
        &alice,
        &[
            ("search", r#"{"q":"socks"}"#),
            ("refund", REFUND),
            ("refund", r#"{"order_id":"o-2","amount":1}"#),
            ("nope", "{}"),
        ],
    );
    all_store_unavailable(&d);

    // A read-only store: nothing can be written at all.
    let g = store_gate(read_only_store(), &clock);
    all_store_unavailable(&decide(&g, &alice, &[("search", r#"{"q":"socks"}"#)]));
}

#[test]
fn a_kill_switch_flipped_elsewhere_is_honoured_on_the_next_decision() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let clock = clock();
    let g = store_gate(file_store(&path, &clock), &clock);
    let operator = file_store(&path, &clock);
    let alice = ctx("alice", "s-1");
    let calls = [("search", r#"{"q":"socks"}"#), ("ping", r#"{"n":1}"#)];
    let verdicts = |d: Decisions| {
        d.decisions()
            .iter()
            .map(|d| d.verdict())
            .collect::<Vec<_>>()
    };

    assert_eq!(
        verdicts(decide(&g, &alice, &calls)),
        [Verdict::Allow, Verdict::Allow]
    );
    operator
        .set_kill_switch(KillMode::DenyWrites, "incident 7", "oncall")
        .unwrap();
    let d = decide(&g, &alice, &calls);
    assert_eq!(d.decisions()[1].reasons()[0].code.as_str(), "kill_switch");
    assert_eq!(verdicts(d), [Verdict::Allow, Verdict::Deny]);
    operator
        .set_kill_switch(KillMode::DenyAll, "incident 7", "oncall")
        .unwrap();
    assert_eq!(
        verdicts(decide(&g, &ctx("bob", "s-9"), &calls)),
        [Verdict::Deny, Verdict::Deny]
    );
    operator
        .set_kill_switch(KillMode::Off, "", "oncall")
        .unwrap();
    assert_eq!(
        verdicts(decide(&g, &ctx("bob", "s-10"), &calls)),
        [Verdict::Allow, Verdict::Allow]
    );
    assert!(operator.verify().unwrap().is_intact());
}

#[test]
fn an_escalated_session_needs_a_human_and_hears_no_details() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let s = ctx("alice", "s-esc");
    for i in 0..3 {
        let d = decide(&g, &s, &[("refund", &format!(r#"{{"order_id":{i}}}"#))]);
        assert_eq!(d.decisions()[0].verdict(), Verdict::Deny);
        assert!(d.decisions()[0].feedback().contains("type_mismatch"));
    }
    assert!(store.session("s-esc").unwrap().is_escalated());
    // A write tool that needs no approval now needs a human.
    let d = decide(&g, &s, &[("ping", r#"{"n":1}"#)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::NeedsApproval);
    assert_eq!(
        d.decisions()[0].feedback(),
        toolgate::ESCALATED_HOLD_FEEDBACK
    );
    let id = approval_id(&d);
    store.approve(id, "bob", "").unwrap();
    let d = decide(&g, &s, &[("ping", r#"{"n":1}"#)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
    // Reads still run; denials say nothing more.
    let d = decide(&g, &s, &[("search", r#"{"q":"x"}"#), ("search", "{}")]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
    assert_eq!(d.decisions()[1].verdict(), Verdict::Deny);
    assert_eq!(
        d.decisions()[1].feedback(),
        toolgate::ESCALATED_DENY_FEEDBACK
    );
    // Other sessions are not affected.
    let d = decide(&g, &ctx("alice", "s-other"), &[("ping", r#"{"n":1}"#)]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
}

#[test]
fn repeated_rejections_of_one_shape_are_cut_off() {
    let clock = clock();
    // Escalation out of the way: only the shape counter matters here.
    let store = Arc::new(
        SqliteOptions::new()
            .clock(Arc::new(clock.clone()))
            .escalate_after(100)
            .open_in_memory()
            .unwrap(),
    );
    let g = store_gate(store.clone(), &clock);
    let s = ctx("alice", "s-probe");
    store
        .set_kill_switch(KillMode::DenyWrites, "probe", "test")
        .unwrap();
    for n in 0..3 {
        let d = decide(&g, &s, &[("ping", &format!(r#"{{"n":{n}}}"#))]);
        assert_eq!(d.decisions()[0].reasons()[0].code.as_str(), "kill_switch");
    }
    store.set_kill_switch(KillMode::Off, "", "test").unwrap();
    let d = decide(&g, &s, &[("ping", r#"{"n":99}"#)]);
    assert_eq!(
        d.decisions()[0].reasons()[0].code.as_str(),
        "repeated_rejection"
    );
    // Another shape still runs.
    let d = decide(&g, &s, &[("ping", "{}")]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
}

/// Issue 17: behind the MCP proxy an approval is bound to the digest of
/// the tool definition the call was made under. An approval given under
/// D1 does not let the same call through once the context says D2, even
/// if D2 is the definition now approved; back under D1 it is still there.
#[test]
fn an_approval_is_bound_to_the_tool_definition_it_was_given_under() {
    let clock = clock();
    let store = memory_store(&clock);
    let g = store_gate(store.clone(), &clock);
    let d1 = Digest::of(b"definition one");
    let d2 = Digest::of(b"definition two");
    let under_d1 = ctx("alice", "s-1").with_tool_definition("refund", d1);
    let under_d2 = ctx("alice", "s-1").with_tool_definition("refund", d2);

    let held = decide(&g, &under_d1, &[("refund", REFUND)]);
    assert_eq!(held.decisions()[0].verdict(), Verdict::NeedsApproval);
    let id = approval_id(&held);
    // The approval's key binds the arguments and D1.
    let a = store.get_approval(id).unwrap().unwrap();
    let args = held.decisions()[0].digest().unwrap();
    assert_eq!(
        a.digest,
        Some(toolgate_store::bound_digest(&args, Some(&d1), None))
    );
    assert_ne!(a.digest, Some(args));
    store.approve(id, "bob", "checked under D1").unwrap();

    // The server changed the tool: the same call under D2 is held anew.
    let after = decide(&g, &under_d2, &[("refund", REFUND)]);
    assert_eq!(after.decisions()[0].verdict(), Verdict::NeedsApproval);
    assert_ne!(approval_id(&after), id);
    // Nor does a context without a definition use it.
    let bare = decide(&g, &ctx("alice", "s-1"), &[("refund", REFUND)]);
    assert_eq!(bare.decisions()[0].verdict(), Verdict::NeedsApproval);
    // Under D1 the approval is still unused and lets the call through once.
    let back = decide(&g, &under_d1, &[("refund", REFUND)]);
    assert_eq!(back.decisions()[0].verdict(), Verdict::Allow, "{back:?}");
    assert_eq!(
        back.decisions()[0].approval().map(|a| a.as_str()),
        Some(&*id.to_string())
    );
}

/// `decide_and_record_once` (a process deciding one response, such as the
/// coding-agent hook): an allowed response's one record commits with the
/// session's response count in one transaction; anything else takes the
/// writing path; every response is counted once either way.
#[test]
fn one_commit_per_response_counts_it_with_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let clock = clock();
    let store = file_store(&path, &clock);
    let gate = Gate::builder(config().registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .max_turns(3)
        .build()
        .unwrap();
    let g = StoreGate::new(gate, store.clone()).with_clock(Arc::new(clock.clone()));
    let alice = ctx("alice", "s-1");
    let once =
        |calls: &[(&str, &str)]| g.decide_and_record_once(&body(calls), Format::Auto, &alice);
    for n in 1..=2 {
        let d = once(&[("search", r#"{"q":"socks"}"#)]);
        assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
        assert_eq!(store.responses("s-1").unwrap(), n);
        assert_eq!(store.tail(100).unwrap().len(), usize::try_from(n).unwrap());
    }
    // A denial is written on the writing path, counted once too.
    let d = once(&[("search", "{}")]);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Deny);
    assert_eq!(store.responses("s-1").unwrap(), 3);
    // The fourth response is over the turn limit, as on the writing path.
    let d = once(&[("search", r#"{"q":"socks"}"#)]);
    assert_eq!(d.decisions()[0].reasons()[0].code.as_str(), "loop_limit");
    assert_eq!(store.responses("s-1").unwrap(), 4);
    assert!(store.verify().unwrap().is_intact());
}

/// A record that expects its commit to bring the session's responses to a
/// count another process has passed meanwhile is not written at all.
#[test]
fn a_response_counted_meanwhile_elsewhere_fails_the_commit_writing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let clock = clock();
    let ours = file_store(&path, &clock);
    let theirs = file_store(&path, &clock);
    assert_eq!(theirs.count_response("s-1").unwrap(), 1);
    let entry = || {
        AuditEntry::new(Timestamp::from_unix_seconds(T0), AuditVerdict::Allow)
            .user("alice")
            .session("s-1")
            .tool("search")
    };
    let e = ours.append(entry().counting_response_as(1)).unwrap_err();
    assert_eq!(e.code(), toolgate_store::ErrorCode::Conflict);
    assert_eq!(ours.responses("s-1").unwrap(), 1);
    assert!(ours.tail(10).unwrap().is_empty());
    ours.append(entry().counting_response_as(2)).unwrap();
    assert_eq!(theirs.responses("s-1").unwrap(), 2);
    assert_eq!(theirs.tail(10).unwrap().len(), 1);
}

/// On the one-commit path an allowed write's call id is claimed by its
/// record's commit: the same id again is a replay, and an id another
/// process claimed first fails the commit, writing nothing.
#[test]
fn one_commit_claims_the_call_id_with_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    let clock = clock();
    let store = file_store(&path, &clock);
    let g = store_gate(store.clone(), &clock);
    let alice = ctx("alice", "s-1");
    let ping = |id: &str| {
        format!(
            r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"ping","arguments":"{{\"n\":1}}"}}}}]}}}}]}}"#
        )
        .into_bytes()
    };
    let d = g.decide_and_record_once(&ping("call_a"), Format::Auto, &alice);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Allow);
    assert!(store.call_allowed("s-1", "call_a").unwrap());
    assert_eq!(store.tail(10).unwrap().len(), 1);
    let d = g.decide_and_record_once(&ping("call_a"), Format::Auto, &alice);
    assert_eq!(d.decisions()[0].verdict(), Verdict::Deny);
    assert_eq!(d.decisions()[0].reasons()[0].code.as_str(), "replayed_call");

    let theirs = file_store(&path, &clock);
    assert!(theirs.claim_call("s-1", "call_b").unwrap());
    let claimed = AuditEntry::new(Timestamp::from_unix_seconds(T0), AuditVerdict::Allow)
        .user("alice")
        .session("s-1")
        .tool("ping")
        .call_id("call_b")
        .claiming_call()
        .counting_response();
    let before = store.tail(100).unwrap().len();
    let responses = store.responses("s-1").unwrap();
    let e = store.append(claimed).unwrap_err();
    assert_eq!(e.code(), toolgate_store::ErrorCode::Conflict);
    assert_eq!(store.tail(100).unwrap().len(), before);
    assert_eq!(store.responses("s-1").unwrap(), responses);
    assert!(store.verify().unwrap().is_intact());
}
