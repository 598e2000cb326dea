//! `toolgate mcp` (stdio) with the official MCP TypeScript SDK as the
//! client: npm `@modelcontextprotocol/sdk` (the version
//! `tests/mcp/ts/package.json` pins, unchanged; its `Client` and
//! `StdioClientTransport`) in `tests/mcp/ts/client.mjs`, in front of the
//! FastMCP server of the Python SDK (`examples/mcp/server.py`).
//!
//! Every scenario runs in three eras: the SDK's own latest protocol
//! version, and 2025-06-18 and 2025-03-26, which the client offers through
//! a transport wrapper that rewrites the `initialize` request's
//! `protocolVersion` (the SDK's `Client` has no option for it).
//!
//! Needs `node` (env `TOOLGATE_NODE`, else `node` on `PATH`) with
//! `tests/mcp/ts/node_modules` installed (`npm ci` there), and a Python
//! with `mcp==2.3.0` (env `TOOLGATE_MCP_PYTHON`, else the workspace's
//! `target/py/venv/bin/python`). Without them each test says `SKIPPED`
//! and passes, unless `TOOLGATE_REQUIRE_EXTERNAL=1`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod mcp_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_support::{json, sdk_python, text_at, Folder, Steps};
use toolgate_json::Value;
use toolgate_testkit::examples_dir;

/// The SDK version `tests/mcp/ts/package.json` pins.
const TS_SDK_VERSION: &str = "1.32.2";

/// What the client is told to offer, and the version the handshake must
/// then settle on. `latest` is the SDK's own `LATEST_PROTOCOL_VERSION`.
const ERAS: [(&str, &str); 3] = [
    ("latest", "2025-11-25"),
    ("2025-06-18", "2025-06-18"),
    ("2025-03-26", "2025-03-26"),
];

/// Node with the installed SDK and a Python with the Python SDK.
struct External {
    node: PathBuf,
    python: PathBuf,
}

fn ts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/ts")
}

fn external() -> Result<External, String> {
    let node =
        std::env::var_os("TOOLGATE_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let node_ok = Command::new(&node)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !node_ok {
        return Err(format!(
            "no node at `{}` (install Node.js 18+, or set TOOLGATE_NODE)",
            node.display()
        ));
    }
    let sdk = ts_dir().join("node_modules/@modelcontextprotocol/sdk/package.json");
    if !sdk.is_file() {
        return Err(format!(
            "no `{}` (run: (cd crates/toolgate-mcp/tests/mcp/ts && npm ci))",
            sdk.display()
        ));
    }
    let python = sdk_python()?;
    Ok(External { node, python })
}

/// One audit record: (verdict, tool, reasons).
type AuditRow = (String, String, String);

/// One scenario played by the TypeScript client in one era, in a folder of
/// its own (a copy of the example's config and a fresh store).
struct Run {
    dir: Folder,
    era: String,
    steps: Steps,
}

impl Run {
    fn play(ext: &External, era: &str, negotiated: &str, scenario: &str) -> Self {
        let dir = Folder::with_config(&examples_dir().join("mcp/toolgate.toml"));
        let out = Command::new(&ext.node)
            .current_dir(ts_dir())
            .arg("client.mjs")
            .arg(era)
            .arg(scenario)
            .arg(toolgate_testkit::toolgate_path())
            .arg(dir.config())
            .arg(&ext.python)
            .arg(examples_dir().join("mcp/server.py"))
            .env("MCP_TEST_SEEN", dir.seen_file())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let steps = Steps::of(&out, &format!("{scenario} in era {era}: the client"));
        let run = Self {
            dir,
            era: era.to_owned(),
            steps,
        };

        // The handshake: the SDK offered what the era says, the server (through
        // toolgate) settled on it, and the SDK's Client accepted it.
        let init = run.step("initialize");
        assert_eq!(text_at(init, "/sdk_version"), TS_SDK_VERSION);
        assert_eq!(text_at(init, "/sdk_latest"), "2025-11-25");
        assert_eq!(text_at(init, "/offered"), negotiated, "{}", run.context());
        assert_eq!(text_at(init, "/answered"), negotiated, "{}", run.context());
        assert_eq!(
            text_at(init, "/client_set"),
            negotiated,
            "{}",
            run.context()
        );
        assert_eq!(text_at(init, "/server"), "toolgate-test-shop");
        run
    }

    fn context(&self) -> String {
        format!("era {}:\n{}", self.era, self.steps.output())
    }

    fn step(&self, name: &str) -> &Value<'static> {
        assert!(self.steps.has(name), "no step {name}: {}", self.context());
        self.steps.step(name)
    }

    /// A tool result step: (isError, its text, its structuredContent).
    fn result(&self, name: &str) -> (bool, &str, String) {
        let step = self.step(name);
        let is_error = match step.pointer("/is_error") {
            Some(Value::Bool(b)) => *b,
            _ => panic!("step {name} is not a tool result: {}", self.context()),
        };
        let structured = step
            .pointer("/structured")
            .map(Value::to_canonical_string)
            .unwrap_or_default();
        (is_error, text_at(step, "/text"), structured)
    }

    /// The calls the server received, canonical JSON, in order.
    fn seen(&self) -> Vec<String> {
        self.dir.seen_canonical()
    }

    /// `toolgate audit tail` over the run's store, one line a record.
    fn audit_lines(&self) -> Vec<String> {
        self.dir.audit().lines().map(str::to_owned).collect()
    }

    /// The value of `KEY=` in each audit record ("" where it has none).
    /// (Of the calls' records: the tool pins' `pin_*` records left out.)
    fn audit_field(&self, key: &str) -> Vec<String> {
        self.audit_lines()
            .iter()
            .filter(|l| !is_pin_record(l))
            .map(|l| field(l, key))
            .collect()
    }

    /// The audit records of calls as (verdict, tool, reasons); each one
    /// decided as the config's user. The tool pins' records (`pin_*`: the
    /// first catalog trusted on first use) are not calls and are left out.
    fn audit(&self) -> Vec<AuditRow> {
        self.audit_lines()
            .iter()
            .filter(|l| !is_pin_record(l))
            .map(|l| {
                assert_eq!(field(l, "user"), "desk", "{l}");
                let verdict = l.split("  ").nth(2).unwrap_or("").to_owned();
                (verdict, field(l, "tool"), field(l, "reasons"))
            })
            .collect()
    }
}

/// Whether an audit line records the tool pins (`pin_approved`, …).
fn is_pin_record(line: &str) -> bool {
    line.split("  ").nth(2).unwrap_or("").starts_with("pin_")
}

/// The value of `key=` in an audit line, "" where it has none.
fn field(line: &str, key: &str) -> String {
    let prefix = format!("{key}=");
    line.split("  ")
        .find_map(|f| f.strip_prefix(prefix.as_str()))
        .unwrap_or("")
        .to_owned()
}

fn rows(expected: &[(&str, &str, &str)]) -> Vec<AuditRow> {
    expected
        .iter()
        .map(|(v, t, r)| ((*v).to_owned(), (*t).to_owned(), (*r).to_owned()))
        .collect()
}

/// Plays `scenario` in every era and hands each run to `check`.
fn in_every_era(scenario: &str, check: impl Fn(&Run)) {
    let ext = match external() {
        Ok(e) => e,
        Err(why) => return toolgate_testkit::skip(&why),
    };
    for (era, negotiated) in ERAS {
        check(&Run::play(&ext, era, negotiated, scenario));
    }
}

#[test]
fn tools_list_shows_only_the_registered_tools_with_the_configs_schemas() {
    in_every_era("list", |run| {
        let list = run.step("list");
        assert_eq!(
            list.pointer("/tools").unwrap(),
            &json(r#"["add","crash","hang","refund","weather"]"#),
            "{}",
            run.context()
        );
        // The schema the gate enforces, not FastMCP's (which has titles and
        // no additionalProperties).
        assert_eq!(
            list.pointer("/schemas/add").unwrap().to_canonical_string(),
            r#"{"additionalProperties":false,"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}"#
        );
        assert_eq!(
            list.pointer("/schemas/refund/properties/order_id")
                .unwrap()
                .to_canonical_string(),
            r#"{"pattern":"^ord_[0-9]+$","type":"string"}"#
        );
        assert!(
            run.steps.stderr().contains(
                "toolgate: mcp: tools/list: `secret_admin` hidden: not registered in the config"
            ),
            "{}",
            run.context()
        );
        assert_eq!(run.seen(), Vec::<String>::new());
        assert_eq!(run.audit(), rows(&[]));
    });
}

#[test]
fn an_allowed_call_reaches_the_server_and_its_result_comes_back() {
    in_every_era("allowed", |run| {
        assert_eq!(
            run.result("add_allowed"),
            (false, "5", r#"{"result":5}"#.to_owned()),
            "{}",
            run.context()
        );
        // The SDK checks structuredContent against the listed outputSchema
        // itself; it got through that check too.
        let (is_error, _, structured) = run.result("weather");
        assert!(!is_error, "{}", run.context());
        assert_eq!(structured, r#"{"conditions":"sunny","temperature":22.5}"#);
        assert_eq!(
            run.seen(),
            [
                r#"{"arguments":{"a":2,"b":3},"tool":"add"}"#,
                r#"{"arguments":{"city":"Kyoto"},"tool":"weather"}"#,
            ]
        );
        assert_eq!(
            run.audit(),
            rows(&[
                ("allow", "add", ""),
                ("tool_result", "add", ""),
                ("allow", "weather", ""),
                ("tool_result", "weather", ""),
            ])
        );
        // Each result is audited under its call's JSON-RPC id (0 was
        // initialize, 1 tools/list).
        assert_eq!(run.audit_field("call"), ["2", "2", "3", "3"]);
    });
}

#[test]
fn a_denied_call_is_answered_by_toolgate_and_never_reaches_the_server() {
    in_every_era("denied", |run| {
        assert_eq!(
            run.result("unregistered"),
            (true, "denied by toolgate: unknown_tool", "null".to_owned()),
            "{}",
            run.context()
        );
        let (is_error, text, _) = run.result("add_extra");
        assert!(is_error);
        assert!(
            text.starts_with("denied by toolgate: unknown_property")
                && text.contains("the declared members are `a`, `b`"),
            "{text}"
        );
        assert_eq!(
            run.result("refund_bad_order"),
            (
                true,
                "denied by toolgate: pattern at /order_id: expected to match `^ord_[0-9]+$`",
                "null".to_owned()
            )
        );
        assert_eq!(run.seen(), Vec::<String>::new(), "{}", run.context());
        assert_eq!(
            run.audit(),
            rows(&[
                ("deny", "secret_admin", "unknown_tool"),
                ("deny", "add", "unknown_property"),
                ("deny", "refund", "pattern"),
            ])
        );
    });
}

#[test]
fn a_held_call_runs_once_after_a_human_approves_it() {
    in_every_era("approval", |run| {
        let (is_error, held, _) = run.result("refund_held");
        assert!(is_error, "a held call did not run: {}", run.context());
        assert_eq!(
            held,
            "held by toolgate for human approval: approval 1; the call did not run. Ask a human to approve it, then retry the same call with the same arguments"
        );
        let approve = run.step("approve");
        assert_eq!(text_at(approve, "/id"), "1");
        assert_eq!(
            approve.pointer("/code"),
            Some(&json("0")),
            "{}",
            run.context()
        );
        assert_eq!(
            run.result("refund_retry"),
            (
                false,
                "refunded 500 cents on ord_1",
                r#"{"result":"refunded 500 cents on ord_1"}"#.to_owned()
            ),
            "{}",
            run.context()
        );
        // The approval was used up: the same call again is held anew.
        let (is_error, again, _) = run.result("refund_again");
        assert!(is_error);
        assert!(
            again.starts_with("held by toolgate for human approval: approval 2;"),
            "{again}"
        );
        // The server ran the refund exactly once, with the checked values.
        assert_eq!(
            run.seen(),
            [r#"{"arguments":{"amount_cents":500,"order_id":"ord_1"},"tool":"refund"}"#]
        );
        assert_eq!(
            run.audit(),
            rows(&[
                ("needs_approval", "refund", "approval_required"),
                ("approval_granted", "refund", ""),
                ("approval_used", "refund", ""),
                ("allow", "refund", ""),
                ("tool_result", "refund", ""),
                ("needs_approval", "refund", "approval_required"),
            ])
        );
        assert_eq!(run.audit_field("approval"), ["1", "1", "1", "1", "", "2"]);
        assert_eq!(run.audit_field("call"), ["1", "", "", "2", "2", "3"]);
        assert_eq!(run.audit_field("actor"), ["", "cli", "", "", "", ""]);
    });
}

#[test]
fn strings_fastmcp_would_coerce_are_refused_before_the_server_sees_them() {
    in_every_era("coercion", |run| {
        assert_eq!(
            run.result("add_strings"),
            (
                true,
                "denied by toolgate: type_mismatch at /a: expected integer; type_mismatch at /b: expected integer",
                "null".to_owned()
            ),
            "{}",
            run.context()
        );
        assert_eq!(
            run.result("add_ints"),
            (false, "5", r#"{"result":5}"#.to_owned())
        );
        // One add reached FastMCP: the integers. Had the strings got
        // through, its coercion would have logged the same call twice.
        assert_eq!(run.seen(), [r#"{"arguments":{"a":2,"b":3},"tool":"add"}"#]);
        assert_eq!(
            run.audit(),
            rows(&[
                ("deny", "add", "type_mismatch,type_mismatch"),
                ("allow", "add", ""),
                ("tool_result", "add", ""),
            ])
        );
    });
}
