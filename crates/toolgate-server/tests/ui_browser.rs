//! The approvals page end to end in a real browser: the service on a real
//! socket, headless Chromium (Debian's `/usr/bin/chromium`) driven by
//! `tests/browser/approve.mjs` with playwright-core. The script acts as the
//! agent (decide → needs_approval → wait), approves in the page and sees the
//! wait return approved and the same call allowed; it checks that an
//! argument holding `<script>` shows as text, denies the other call, logs
//! out, and sets the kill switch as an admin. It also reads the pins panel
//! (issue 17): a tool definition an MCP server changed, waiting with its
//! findings and its diff (markup in it shown as text), approved in the page.
//!
//! Needs node, Chromium and `npm ci` in `tests/browser`; without them the
//! test says so and passes, unless `TOOLGATE_REQUIRE_EXTERNAL=1` (CI).
//! `TOOLGATE_UI_SCREENSHOT=FILE` (relative to the checkout) saves a
//! screenshot of the page with two pending calls: `docs/src/approvals-page.png`.
//! `TOOLGATE_CHROMIUM` names another Chromium binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use toolgate::config::Config;
use toolgate_json::Value;
use toolgate_server::AppState;
use toolgate_store::{
    AuditFilter, AuditVerdict, PinFilter, PinFirst, PinState, SeenTool, SqliteOptions, Store as _,
};
use toolgate_testkit::shop_dir;

mod shop_copy;

use shop_copy::s;

const AGENT: &str = "agent-demo-token";
const APPROVER: &str = "approver-demo-token";
const ADMIN: &str = "admin-demo-token";

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Why the browser test cannot run here, if it cannot.
fn missing_tool() -> Option<String> {
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !node.is_ok_and(|s| s.success()) {
        return Some("node is not installed".into());
    }
    let chromium = chromium();
    if !chromium.exists() {
        return Some(format!(
            "{} is missing (apt-get install chromium)",
            chromium.display()
        ));
    }
    let module = manifest().join("tests/browser/node_modules/playwright-core");
    if !module.exists() {
        return Some(format!(
            "{} is missing (npm ci in tests/browser)",
            module.display()
        ));
    }
    None
}

fn chromium() -> PathBuf {
    std::env::var_os("TOOLGATE_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// The shop example in `dir`, with its store there, and one more tool,
/// `add_note`, whose free-text argument can carry markup: a write that
/// needs approval like the refund.
fn shop_copy(dir: &Path) -> Config {
    toolgate_testkit::copy_shop(dir);
    std::fs::write(
        dir.join("schemas/add_note.json"),
        r#"{
  "type": "object",
  "properties": {
    "order_id": { "type": "string", "pattern": "^ord_[A-Za-z0-9]{1,32}$" },
    "text": { "type": "string", "maxLength": 500 }
  },
  "required": ["order_id", "text"],
  "additionalProperties": false
}"#,
    )
    .unwrap();
    // Orders may carry a label, which someone outside the shop wrote: the
    // policy that holds a note reads it, and the page shows it as text.
    let schema = std::fs::read_to_string(dir.join("shop.cedarschema")).unwrap();
    let mut schema = schema.replace(
        "  total_cents: Long,\n};",
        "  total_cents: Long,\n  label?: String,\n};",
    );
    let entities = std::fs::read_to_string(dir.join("entities.json")).unwrap();
    let labelled = entities.replace(
        r#""total_cents": 2599 }"#,
        r#""total_cents": 2599, "label": "<img src=x onerror=\"window.__toolgateXss = 3\">" }"#,
    );
    assert_ne!(labelled, entities);
    std::fs::write(dir.join("entities.json"), labelled).unwrap();
    schema.push_str(
        "\naction add_note appliesTo {\n  principal: [User],\n  resource: [Order],\n  \
         context: { args: { order_id: String, text: String }, turn: Long, risk: String },\n};\n",
    );
    std::fs::write(dir.join("shop.cedarschema"), schema).unwrap();
    let mut policies = std::fs::read_to_string(dir.join("policies.cedar")).unwrap();
    policies.push_str(
        "\n@id(\"owner-notes-order\")\npermit(principal, action == Action::\"add_note\", resource)\n\
         when { resource.owner == principal };\n\n\
         @id(\"note-on-a-labelled-order\")\n@approval(\"required\")\n\
         forbid(principal, action == Action::\"add_note\", resource)\n\
         when { resource has label && resource.label != \"\" && resource.total_cents > 1000 };\n",
    );
    std::fs::write(dir.join("policies.cedar"), policies).unwrap();

    let mut config = std::fs::read_to_string(shop_dir().join("toolgate.toml")).unwrap();
    let db = dir.join("toolgate.db");
    config = config.replace(
        "url = \"sqlite://toolgate.db\"",
        &format!("url = \"sqlite://{}\"", db.display()),
    );
    config.push_str(
        "\n[[tool]]\nname = \"add_note\"\ndescription = \"Add a note to an order.\"\n\
         risk = \"write\"\nschema = \"schemas/add_note.json\"\n\
         resource = { type = \"Order\", id = \"/order_id\" }\n",
    );
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, &config).unwrap();
    Config::parse(&config, &path).unwrap()
}

/// An OpenAI response proposing `add_note` with markup in its text, and a
/// right-to-left override (U+202E) that would show "amount: 1" as
/// "1 :tnuoma" (issue 13, item 7).
fn note_response() -> String {
    let args = format!(
        r#"{{"order_id":"ord_1002","text":"<script>window.__toolgateXss = 1</script><img src=x onerror=\"window.__toolgateXss = 2\"> & more amount: {}1"}}"#,
        '\u{202e}'
    );
    let mut call = toolgate_json::Object::new();
    call.insert("name", Value::String("add_note".into()));
    call.insert("arguments", Value::String(args.into()));
    format!(
        r#"{{"id":"chatcmpl-ui-1","object":"chat.completion","created":1767225600,"model":"gpt-4.1","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_note_1","type":"function","function":{}}}]}}}}]}}"#,
        toolgate_json::canonical::to_string(&Value::Object(call))
    )
}

#[test]
fn approve_in_the_browser_releases_the_waiting_call() {
    if let Some(why) = missing_tool() {
        toolgate_testkit::skip(&format!("the browser test cannot run: {why}"));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = shop_copy(dir.path());
    let note_file = dir.path().join("note-response.json");
    std::fs::write(&note_file, note_response()).unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let pin_id = seed_pins(&dir.path().join("toolgate.db"));
    let state = AppState::from_config(&config).unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(toolgate_server::serve(listener, state, async move {
        let _ = stopped.await;
    }));

    let mut node = Command::new("node");
    node.arg("approve.mjs")
        .current_dir(manifest().join("tests/browser"))
        .env("TOOLGATE_URL", format!("http://{addr}"))
        .env("AGENT_TOKEN", AGENT)
        .env("APPROVER_TOKEN", APPROVER)
        .env("ADMIN_TOKEN", ADMIN)
        .env(
            "REFUND_BODY",
            shop_dir().join("responses/openai-refund-needs-approval.json"),
        )
        .env("NOTE_BODY", &note_file)
        .env("PIN_ID", pin_id.to_string())
        .env("CHROMIUM", chromium())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(shot) = std::env::var_os("TOOLGATE_UI_SCREENSHOT") {
        // A relative path is relative to the checkout.
        node.env("SCREENSHOT", manifest().join("../..").join(shot));
    }
    let child = node.spawn().unwrap();
    let pid = child.id().to_string();
    // Its end, waited for by a thread; killed if it takes over 120 s.
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = tx.send(());
        out
    });
    if rx.recv_timeout(Duration::from_secs(120)).is_err() {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid])
            .status();
    }
    let out = waiter.join().unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = stop.send(());
    runtime.block_on(server).unwrap().unwrap();
    assert!(
        out.status.success(),
        "the browser script failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line:\n{stdout}\n{stderr}"));
    let r = toolgate_json::from_str(line).unwrap().into_owned();
    let b = |p: &str| {
        r.pointer(p)
            .and_then(Value::as_bool)
            .unwrap_or_else(|| panic!("no boolean at {p} in {line}"))
    };

    assert_eq!(s(&r, "/csp"), toolgate_server::ui::CSP);
    assert_eq!(s(&r, "/who"), "demo-approver (approver)");
    // decide → needs_approval → wait → approved in the page → allow.
    assert_eq!(s(&r, "/first_verdict"), "needs_approval");
    assert_eq!(s(&r, "/wait_state"), "approved");
    assert!(!b("/wait_timed_out"));
    assert_eq!(s(&r, "/decided_by"), "demo-approver");
    assert_eq!(
        s(&r, "/approval_note"),
        "checked order ord_1002 with the customer"
    );
    assert_eq!(s(&r, "/second_verdict"), "allow");
    assert_eq!(s(&r, "/second_refund_verdict"), "allow");
    assert!(s(&r, "/status_after_approve").contains("approved by demo-approver"));
    assert_eq!(s(&r, "/denied_state"), "denied");
    // The refund's card showed what a human needs to decide.
    let card = s(&r, "/refund_card");
    for part in [
        "refund",
        "destructive",
        "alice",
        "sess-ui",
        "approval_required",
        "\"amount_cents\": 2599",
        "\"order_id\": \"ord_1002\"",
    ] {
        assert!(card.contains(part), "the card lacks {part:?}: {card}");
    }
    // The markup in the arguments was shown as text and never ran.
    let args = s(&r, "/note_arguments");
    assert!(
        args.contains(r#""text": "<script>window.__toolgateXss = 1</script><img src=x onerror=\"window.__toolgateXss = 2\"> & more amount: \u202E1""#),
        "{args}"
    );
    // The override is shown escaped, never applied.
    assert!(!args.contains('\u{202e}'), "{args:?}");
    assert_eq!(
        r.pointer("/note_argument_elements")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some("0")
    );
    assert_eq!(
        r.pointer("/script_elements")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some(r#"["/ui/app.js"]"#)
    );
    assert_eq!(
        r.pointer("/img_elements")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some("0")
    );
    // What the policy that held the note read: the order's total, and the
    // label's markup as text (no element: `img_elements` is 0 above).
    let facts = r.pointer("/note_facts").map(Value::to_canonical_string);
    assert_eq!(
        facts.as_deref(),
        Some(
            r#"[{"elements":0,"text":"resource.label = \"<img src=x onerror=\\\"window.__toolgateXss = 3\\\">\""},{"elements":0,"text":"resource.total_cents = 2599"}]"#
        )
    );
    assert!(!b("/xss_ran"));
    assert!(!b("/xss_ran_at_end"));
    // Approvers see the kill switch read-only; the page never reloaded and
    // the browser reported no error (a CSP violation would be one).
    assert!(b("/kill_readonly"));
    assert!(!b("/kill_form"));
    assert!(b("/no_approvals_shown"));
    // Logging out ends the session; an admin sets the kill switch from the
    // page (its reason shown as text) and the agent's refund is then denied.
    assert_eq!(
        r.pointer("/after_logout")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some(r#"{"me":null}"#)
    );
    let detail = s(&r, "/kill_detail");
    assert!(
        detail.starts_with("since ") && detail.ends_with(" by demo-admin — <b>incident</b> 7"),
        "{detail}"
    );
    assert_eq!(
        r.pointer("/kill_detail_elements")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some("0")
    );
    assert_eq!(s(&r, "/verdict_under_kill"), "deny");
    assert_eq!(s(&r, "/reasons_under_kill/0/code"), "kill_switch");
    assert_eq!(
        r.pointer("/loads")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some("1")
    );
    assert_eq!(
        r.pointer("/console_errors")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some("[]")
    );

    // The pins panel: the changed definition with its findings and diff,
    // its markup shown as text, approved by the page's user.
    let pin_card = s(&r, "/pin_card");
    for part in [
        "add",
        "upstream calc",
        "description (changed)",
        "hidden:/description:zero_width",
        "instructions:description:cue:<important>",
        r#"-   "description": "Add two integers.","#,
        r#"+   "description": "Add two integers.\u200b <IMPORTANT><img src=x onerror=window.__toolgateXss=3></IMPORTANT>","#,
    ] {
        assert!(
            pin_card.contains(part),
            "the pin card lacks {part:?}: {pin_card}"
        );
    }
    assert_eq!(
        r.pointer("/pin_diff_lines")
            .map(Value::to_canonical_string)
            .as_deref(),
        Some(r#"{"added":1,"removed":1}"#)
    );
    assert_eq!(s(&r, "/pin_state"), "approved");
    assert_eq!(s(&r, "/pin_decided_by"), "demo-approver");
    assert!(s(&r, "/status_after_pin").contains("approved by demo-approver"));

    // The store agrees: granted by the page's user with its note, then used.
    let store = SqliteOptions::new()
        .open(dir.path().join("toolgate.db"))
        .unwrap();
    assert_eq!(
        store
            .pin_state("calc", "add", &pending_add().digest)
            .unwrap(),
        Some(PinState::Approved)
    );
    let pin_record = store
        .list(&AuditFilter::new().limit(1000))
        .unwrap()
        .into_iter()
        .rev()
        .find(|r| r.entry.verdict == AuditVerdict::PinApproved)
        .unwrap();
    assert_eq!(pin_record.entry.actor.as_deref(), Some("demo-approver"));
    assert_eq!(
        pin_record.entry.note.as_deref(),
        Some("upstream calc: read the diff")
    );
    let records = store.list(&AuditFilter::new().limit(1000)).unwrap();
    let granted = records
        .iter()
        .find(|r| r.entry.verdict == AuditVerdict::ApprovalGranted)
        .expect("an approval_granted record");
    assert_eq!(granted.entry.actor.as_deref(), Some("demo-approver"));
    assert_eq!(
        granted.entry.note.as_deref(),
        Some("checked order ord_1002 with the customer")
    );
    assert!(records
        .iter()
        .any(|r| r.entry.verdict == AuditVerdict::ApprovalUsed));
    let denied = records
        .iter()
        .find(|r| r.entry.verdict == AuditVerdict::ApprovalDenied)
        .expect("an approval_denied record");
    assert_eq!(denied.entry.note.as_deref(), Some("no markup in notes"));
    assert!(store.verify().unwrap().is_intact());
}

/// `add` as an MCP server first showed it.
fn first_add() -> SeenTool {
    let def = r#"{"description":"Add two integers.","name":"add"}"#;
    SeenTool::new(
        "add",
        toolgate_json::Digest::of(def.as_bytes()),
        def,
        vec![],
    )
}

/// `add` changed: a zero-width space, and instructions with markup.
fn pending_add() -> SeenTool {
    let def = "{\"description\":\"Add two integers.\u{200b} <IMPORTANT><img src=x onerror=window.__toolgateXss=3></IMPORTANT>\",\"name\":\"add\"}";
    SeenTool::new(
        "add",
        toolgate_json::Digest::of(def.as_bytes()),
        def,
        vec![
            "hidden:/description:zero_width".to_owned(),
            "instructions:description:cue:<important>".to_owned(),
        ],
    )
}

/// The pins `toolgate mcp` would have written for upstream `calc`: its
/// first catalog trusted, then `add` changed (pending). The pending pin's
/// id.
fn seed_pins(db: &Path) -> u64 {
    let store = SqliteOptions::new().open(db).unwrap();
    let catalog = toolgate_json::Digest::of(b"catalog");
    store
        .observe_catalog("calc", &catalog, &[first_add()], PinFirst::Trust)
        .unwrap();
    let changed = toolgate_json::Digest::of(b"catalog 2");
    let states = store
        .observe_catalog("calc", &changed, &[pending_add()], PinFirst::Trust)
        .unwrap();
    assert_eq!(states, [PinState::Pending]);
    store
        .list_pins(&PinFilter::new().state(PinState::Pending))
        .unwrap()[0]
        .id
        .get()
}
