//! Codex CLI (`@openai/codex`) end to end: `codex exec`, offline, against
//! the canned Responses API (`responses_server.py`) as a model provider of
//! a test-owned `CODEX_HOME/config.toml`, with `toolgate hook --agent codex`
//! as its PreToolUse hook in `CODEX_HOME/hooks.json`.
//!
//! Codex runs a user or project hook only once it is trusted: discovery
//! (`codex-rs/hooks/src/engine/discovery.rs`, `append_matcher_groups`)
//! keeps a handler when it is enabled and either managed (system config,
//! requirements) or its `[hooks.state."KEY"] trusted_hash` in the user's
//! `config.toml` equals the hook's current hash (or the run passes
//! `--dangerously-bypass-hook-trust`). The tests trust the hook as the
//! `/hooks` review does: they ask Codex's app server (`hooks/list`) for the
//! hook's key and current hash and record them. Untrusted, or changed after
//! it was trusted, the hook never runs, and the tests show that too.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use toolgate_json::Value;

use super::{
    approve_the_held_call, audit, examples, held_config, hook_command, installed, model_of,
    tool_results, Model,
};

fn codex() -> Option<PathBuf> {
    installed("codex", "Codex CLI")
}

fn model(dir: &Path, command: &str) -> Model {
    model_of("responses_server.py", dir, command)
}

/// A project, a `CODEX_HOME` configured for the canned model and the hook,
/// and the hook's store.
struct Codex {
    dir: tempfile::TempDir,
    store: String,
    /// The `[hooks.state]` entry trusting the hook, once trusted.
    trust: String,
}

impl Codex {
    fn new(config: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project", "home", "codex"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let store = format!("sqlite://{}", dir.path().join("toolgate.db").display());
        let command = hook_command("codex", config, &store);
        let hooks = format!(
            r#"{{"hooks":{{"PreToolUse":[{{"matcher":"*","hooks":[{{"type":"command","timeout":30,"command":{}}}]}}]}}}}"#,
            toolgate_json::canonical::to_string(&Value::String(command.into()))
        );
        std::fs::write(dir.path().join("codex/hooks.json"), hooks).unwrap();
        Self {
            dir,
            store,
            trust: String::new(),
        }
    }

    fn env<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.current_dir(self.root().join("project"))
            .env("HOME", self.root().join("home"))
            .env("CODEX_HOME", self.root().join("codex"))
            .env("TOOLGATE_E2E_MODEL_KEY", "sk-test-offline")
    }

    /// Trusts the hook as a user's `/hooks` review does: its key and
    /// current hash, as Codex's app server lists them, recorded as
    /// `[hooks.state."KEY"] trusted_hash` in the user's `config.toml`.
    fn trust(&mut self, codex: &Path) {
        let mut server = self
            .env(&mut Command::new(codex))
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = server.stdin.take().unwrap();
        let project = self.root().join("project");
        let list = format!(
            r#"{{"id":1,"method":"initialize","params":{{"clientInfo":{{"name":"toolgate-e2e","version":"1"}}}}}}
{{"method":"initialized"}}
{{"id":2,"method":"hooks/list","params":{{"cwds":[{}]}}}}
"#,
            toolgate_json::canonical::to_string(&Value::String(
                project.display().to_string().into()
            ))
        );
        stdin.write_all(list.as_bytes()).unwrap();
        // Read on a thread, so an app server that never answers fails the
        // test instead of hanging it.
        let stdout = server.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = toolgate_json::from_str(&line) else {
                    continue;
                };
                let v = v.into_owned();
                if v.pointer("/id")
                    .and_then(Value::as_number)
                    .and_then(|n| n.as_u64())
                    == Some(2)
                {
                    let _ = tx.send(v);
                    break;
                }
            }
        });
        let answer = rx.recv_timeout(std::time::Duration::from_secs(60));
        let _ = server.kill();
        let _ = server.wait();
        let answer = answer.expect("Codex's app server answers hooks/list");
        let hook = answer
            .pointer("/result/data/0/hooks/0")
            .unwrap_or_else(|| panic!("no hook listed: {}", answer.to_canonical_string()));
        assert_eq!(
            hook.pointer("/trustStatus").and_then(Value::as_str),
            Some("untrusted")
        );
        let field = |name: &str| toolgate_json::canonical::to_string(hook.pointer(name).unwrap());
        self.trust = format!(
            "\n[hooks.state.{}]\ntrusted_hash = {}\n",
            field("/key"),
            field("/currentHash")
        );
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn marker(&self) -> PathBuf {
        self.root().join("project/marker")
    }

    /// `codex exec` in the project against MODEL (resuming SESSION); the
    /// session (thread) id.
    fn run(&self, codex: &Path, model: &Model, resume: Option<&str>) -> String {
        // No sandbox: the hook decides before any sandbox would apply, and
        // Codex's Linux sandbox needs kernel features CI may not offer.
        let config = format!(
            r#"model = "gpt-5.1-codex"
model_provider = "canned"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.canned]
name = "canned"
base_url = "http://127.0.0.1:{}/v1"
env_key = "TOOLGATE_E2E_MODEL_KEY"
wire_api = "responses"
{}"#,
            model.port, self.trust
        );
        std::fs::write(self.root().join("codex/config.toml"), config).unwrap();
        let mut cmd = Command::new(codex);
        self.env(&mut cmd)
            .args(["exec", "--json", "--skip-git-repo-check"]);
        if let Some(session) = resume {
            cmd.args(["resume", session]);
        }
        let out = cmd.arg("create the marker").output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "codex: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
            .lines()
            .filter_map(|l| toolgate_json::from_str(l).ok())
            .find_map(|v| {
                v.pointer("/thread_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| panic!("no thread id: {stdout}"))
    }
}

#[test]
fn codex_runs_an_allowed_command_with_the_checked_input() {
    let Some(codex) = codex() else { return };
    let mut project = Codex::new(&examples().join("toolgate.toml"));
    project.trust(&codex);
    let model = model(project.root(), "touch marker");
    project.run(&codex, &model, None);
    assert!(project.marker().exists(), "the allowed command ran");
    let audit = audit(&project.store);
    // Codex presents its shell tool (`exec_command`) to hooks as `Bash`.
    assert!(
        audit.lines().any(|l| l.contains("\"verdict\":\"allow\"")
            && l.contains(r#""tool":"Bash""#)
            && l.contains(r#""arguments":{"command":"touch marker"}"#)),
        "{audit}"
    );
}

#[test]
fn codex_never_runs_a_denied_command() {
    let Some(codex) = codex() else { return };
    let mut project = Codex::new(&examples().join("toolgate.toml"));
    project.trust(&codex);
    // `&&` makes it a compound command: the schema refuses it.
    let model = model(project.root(), "touch marker && true");
    project.run(&codex, &model, None);
    assert!(!project.marker().exists(), "the denied command never ran");
    let results = tool_results(&model);
    assert!(
        results
            .iter()
            .any(|r| r.contains("blocked by PreToolUse hook: denied by toolgate")),
        "the model is told why: {results:?}"
    );
}

#[test]
fn codex_runs_a_held_command_after_a_toolgate_approval() {
    let Some(codex) = codex() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut project = Codex::new(&held_config(dir.path()));
    project.trust(&codex);
    let model = model(project.root(), "touch marker");
    // Headless: the held call is blocked at once, the run ends.
    let session = project.run(&codex, &model, None);
    assert!(!project.marker().exists(), "held, not run");
    let results = tool_results(&model);
    assert!(
        results
            .iter()
            .any(|r| r.contains("once a human approves it")),
        "the model is told to retry after approval: {results:?}"
    );
    approve_the_held_call(&project.store);
    // The same session resumed: the model makes the same call again.
    project.run(&codex, &model, Some(&session));
    assert!(project.marker().exists(), "the approved call ran");
}

#[test]
fn codex_never_runs_a_hook_it_has_not_trusted() {
    let Some(codex) = codex() else { return };
    let project = Codex::new(&examples().join("toolgate.toml"));
    // A command the gate denies runs when the hook is not trusted: Codex
    // skipped the hook, and the gate saw nothing.
    let model = model(project.root(), "touch marker && true");
    project.run(&codex, &model, None);
    assert!(project.marker().exists(), "Codex ran the command unhooked");
    assert!(
        !project.root().join("toolgate.db").exists(),
        "the hook never ran: it never opened its store"
    );
}

#[test]
fn codex_never_runs_a_hook_changed_after_it_was_trusted() {
    let Some(codex) = codex() else { return };
    let mut project = Codex::new(&examples().join("toolgate.toml"));
    project.trust(&codex);
    // The hook's command changed (here: another config) after the review.
    let hooks = project.root().join("codex/hooks.json");
    let text = std::fs::read_to_string(&hooks).unwrap();
    std::fs::write(&hooks, text.replace("toolgate.toml", "./toolgate.toml")).unwrap();
    let model = model(project.root(), "touch marker && true");
    project.run(&codex, &model, None);
    assert!(project.marker().exists(), "Codex ran the command unhooked");
    assert!(
        !project.root().join("toolgate.db").exists(),
        "the hook never ran: it never opened its store"
    );
}
