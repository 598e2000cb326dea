//! End to end with the real coding agents (issue 34), offline, each against
//! a canned model API of the tests' own, with `toolgate hook` as its hook:
//! Claude Code (`@anthropic-ai/claude-code`) in headless mode (`claude -p`)
//! through `ANTHROPIC_BASE_URL` (`tests/agents/anthropic_server.py`), Codex
//! CLI (`@openai/codex`, `codex exec`, `agents/codex.rs`) through a model
//! provider of its own `config.toml` (`tests/agents/responses_server.py`),
//! Gemini CLI (`@google/gemini-cli`, `gemini -p`, `agents/gemini.rs`)
//! through `GOOGLE_GEMINI_BASE_URL` (`tests/agents/gemini_server.py`); no
//! vendor login. The agents are pinned in `tests/agents/package.json`. The
//! canned model asks for one shell command that creates a marker file: an
//! allowed one runs with the checked input, a denied one never does (and
//! the model is told why), a held one is blocked at once and runs after a
//! toolgate approval when the session is resumed.
//!
//! Needs `node`, `python3` and `(cd crates/toolgate-cli/tests/agents && npm
//! ci)`; skipped with a message without them, unless
//! `TOOLGATE_REQUIRE_EXTERNAL=1` (CI), where their absence fails.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;
#[path = "agents/codex.rs"]
mod codex;
#[path = "agents/gemini.rs"]
mod gemini;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use cli_support::toolgate_cli;
use toolgate_json::Value;

fn agents_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agents")
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/agents")
}

/// The launcher `node_modules/.bin/BIN` of the agent NAME, or `None` (with a
/// message) when it is not installed and the environment does not require it.
fn installed(bin: &str, name: &str) -> Option<PathBuf> {
    let path = agents_dir().join("node_modules/.bin").join(bin);
    let python = Command::new("python3").arg("--version").output().is_ok();
    if path.exists() && python {
        return Some(path);
    }
    assert!(
        std::env::var("TOOLGATE_REQUIRE_EXTERNAL").as_deref() != Ok("1"),
        "TOOLGATE_REQUIRE_EXTERNAL=1 but {name} or python3 is missing: run \
         (cd crates/toolgate-cli/tests/agents && npm ci)"
    );
    eprintln!("skipped: {name} is not installed (cd crates/toolgate-cli/tests/agents && npm ci)");
    None
}

fn claude() -> Option<PathBuf> {
    installed("claude", "Claude Code")
}

/// The canned model, killed when dropped.
struct Model {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The canned model API of `tests/agents/SERVER` proposing COMMAND, logging
/// into DIR.
fn model_of(server: &str, dir: &Path, command: &str) -> Model {
    let log = dir.join("model.jsonl");
    let mut child = Command::new("python3")
        .arg(agents_dir().join(server))
        .arg(command)
        .arg(&log)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap();
    Model { child, port, log }
}

fn model(dir: &Path, command: &str) -> Model {
    model_of("anthropic_server.py", dir, command)
}

/// The tool results the agent sent the model.
fn tool_results(model: &Model) -> Vec<String> {
    std::fs::read_to_string(&model.log)
        .unwrap_or_default()
        .lines()
        .flat_map(|l| {
            let v = toolgate_json::from_str(l).unwrap().into_owned();
            v.pointer("/tool_results")
                .and_then(Value::as_array)
                .unwrap()
                .iter()
                .map(Value::to_canonical_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A project folder with the hook configured, and its store.
struct Project {
    dir: tempfile::TempDir,
    store: String,
}

impl Project {
    fn new(config: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        let store = format!("sqlite://{}", dir.path().join("toolgate.db").display());
        let command = hook_command("claude", config, &store);
        let settings = format!(
            r#"{{"hooks":{{"PreToolUse":[{{"matcher":"*","hooks":[{{"type":"command","timeout":30,"command":{}}}]}}]}}}}"#,
            toolgate_json::canonical::to_string(&Value::String(command.into()))
        );
        std::fs::write(dir.path().join("settings.json"), settings).unwrap();
        Self { dir, store }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn marker(&self) -> PathBuf {
        self.root().join("project/marker")
    }

    /// `claude -p PROMPT [--resume SESSION]` in the project; its JSON result.
    fn run(&self, claude: &Path, model: &Model, resume: Option<&str>) -> Value<'static> {
        let mut cmd = Command::new(claude);
        cmd.current_dir(self.root().join("project"))
            .env("HOME", self.root().join("home"))
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", model.port),
            )
            .env("ANTHROPIC_API_KEY", "sk-test-offline")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .args([
                "-p",
                "create the marker",
                "--output-format",
                "json",
                "--settings",
            ])
            .arg(self.root().join("settings.json"));
        if let Some(session) = resume {
            cmd.args(["--resume", session]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "claude: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        toolgate_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
            .into_owned()
    }

    fn audit(&self) -> String {
        audit(&self.store)
    }
}

/// The audit log of STORE as JSON lines.
fn audit(store: &str) -> String {
    let out = toolgate_cli()
        .args(["audit", "export", "--jsonl", "--store", store])
        .run();
    String::from_utf8(out.stdout).unwrap()
}

/// The command hook `toolgate hook --agent AGENT` over CONFIG and STORE.
fn hook_command(agent: &str, config: &Path, store: &str) -> String {
    format!(
        "{} hook --agent {agent} --config {} --store {store}",
        env!("CARGO_BIN_EXE_toolgate"),
        config.display()
    )
}

/// The ready config with the shell tools needing a human's approval,
/// written into DIR.
fn held_config(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(examples().join("toolgate.toml")).unwrap();
    let base = examples().canonicalize().unwrap();
    let text = text
        .replace(
            "approval = \"none\"             # the policies decide; what they forbid is denied\n",
            "",
        )
        .replacen(
            "approval = \"none\"\nschema = \"schemas/run_shell_command.json\"",
            "schema = \"schemas/run_shell_command.json\"",
            1,
        )
        .replace("\"schemas/", &format!("\"{}/schemas/", base.display()))
        .replace(
            "\"policies.cedar\"",
            &format!("\"{}/policies.cedar\"", base.display()),
        )
        .replace(
            "\"agents.cedarschema\"",
            &format!("\"{}/agents.cedarschema\"", base.display()),
        );
    let config = dir.join("toolgate.toml");
    std::fs::write(&config, text).unwrap();
    config
}

/// Approves the one call held in STORE; its approval id.
fn approve_the_held_call(store: &str) -> String {
    let audit = audit(store);
    let held = audit
        .lines()
        .find(|l| l.contains("\"verdict\":\"needs_approval\""))
        .unwrap_or_else(|| panic!("{audit}"));
    let held = toolgate_json::from_str(held).unwrap().into_owned();
    let id = held
        .pointer("/approval")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    let approved = toolgate_cli()
        .args(["approvals", "approve", &id, "--store", store])
        .run();
    assert_eq!(approved.status.code(), Some(0));
    id
}

#[test]
fn claude_code_runs_an_allowed_command_with_the_checked_input() {
    let Some(claude) = claude() else { return };
    let project = Project::new(&examples().join("toolgate.toml"));
    let model = model(project.root(), "touch marker");
    project.run(&claude, &model, None);
    assert!(project.marker().exists(), "the allowed command ran");
    let audit = project.audit();
    assert!(
        audit.lines().any(|l| l.contains("\"verdict\":\"allow\"")
            && l.contains(r#""arguments":{"command":"touch marker","description":"Run it"}"#)),
        "{audit}"
    );
}

#[test]
fn claude_code_never_runs_a_denied_command() {
    let Some(claude) = claude() else { return };
    let project = Project::new(&examples().join("toolgate.toml"));
    // `&&` makes it a compound command: the schema refuses it.
    let model = model(project.root(), "touch marker && true");
    project.run(&claude, &model, None);
    assert!(!project.marker().exists(), "the denied command never ran");
    let results = tool_results(&model);
    assert!(
        results.iter().any(|r| r.contains("denied by toolgate")),
        "the model is told why: {results:?}"
    );
}

#[test]
fn claude_code_runs_a_held_command_after_a_toolgate_approval() {
    let Some(claude) = claude() else { return };
    // The ready config with `Bash` needing a human's approval.
    let dir = tempfile::tempdir().unwrap();
    let config = held_config(dir.path());
    let project = Project::new(&config);
    let model = model(project.root(), "touch marker");
    // Headless: the held call is blocked at once, the run ends.
    let first = project.run(&claude, &model, None);
    assert!(!project.marker().exists(), "held, not run");
    let session = first
        .pointer("/session_id")
        .and_then(Value::as_str)
        .unwrap()
        .to_owned();
    approve_the_held_call(&project.store);
    // The same session resumed: the model makes the same call again.
    project.run(&claude, &model, Some(&session));
    assert!(project.marker().exists(), "the approved call ran");
}
