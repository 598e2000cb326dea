//! Gemini CLI (`@google/gemini-cli`) end to end: `gemini -p`, offline,
//! against the canned Gemini API (`gemini_server.py`) through
//! `GOOGLE_GEMINI_BASE_URL` with a dummy `GEMINI_API_KEY`, with `toolgate
//! hook --agent gemini` as its BeforeTool hook in the project's
//! `.gemini/settings.json`, as the README's setup has it.
//!
//! Gemini CLI reads a project's settings, and so its hooks, only in a
//! trusted folder; headless, it exits in an untrusted one. The tests trust
//! the project with `GEMINI_CLI_TRUST_WORKSPACE=true`; one shows that
//! `--skip-trust` lets the run go on without the project's hooks. Headless,
//! `run_shell_command` runs in the `yolo` approval mode: the hook is then
//! the only check. The model is named (`-m`), so no routing request is sent
//! before the turn.

use std::path::{Path, PathBuf};
use std::process::Command;

use toolgate_json::Value;

use super::{
    approve_the_held_call, audit, examples, held_config, hook_command, installed, model_of,
    tool_results, Model,
};

fn gemini() -> Option<PathBuf> {
    installed("gemini", "Gemini CLI")
}

fn model(dir: &Path, command: &str) -> Model {
    model_of("gemini_server.py", dir, command)
}

/// A project, a home whose settings name the hook, and the hook's store.
struct Gemini {
    dir: tempfile::TempDir,
    store: String,
}

impl Gemini {
    fn new(config: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["project/.gemini", "home/.gemini"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let store = format!("sqlite://{}", dir.path().join("toolgate.db").display());
        let command = hook_command("gemini", config, &store);
        let settings = format!(
            r#"{{"hooks":{{"BeforeTool":[{{"matcher":".*","hooks":[{{"type":"command","timeout":30000,"command":{}}}]}}]}}}}"#,
            toolgate_json::canonical::to_string(&Value::String(command.into()))
        );
        std::fs::write(
            dir.path().join("home/.gemini/settings.json"),
            r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},
"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},
"privacy":{"usageStatisticsEnabled":false}}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("project/.gemini/settings.json"), settings).unwrap();
        Self { dir, store }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn marker(&self) -> PathBuf {
        self.root().join("project/marker")
    }

    /// `gemini -p` in the project against MODEL (resuming SESSION), the
    /// folder trusted by `GEMINI_CLI_TRUST_WORKSPACE`; the session id.
    fn run(&self, gemini: &Path, model: &Model, resume: Option<&str>) -> String {
        self.run_with(gemini, model, resume, &[])
    }

    fn run_with(
        &self,
        gemini: &Path,
        model: &Model,
        resume: Option<&str>,
        trust: &[&str],
    ) -> String {
        let mut cmd = Command::new(gemini);
        cmd.current_dir(self.root().join("project"))
            .env("HOME", self.root().join("home"))
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", model.port),
            )
            .env("GEMINI_API_KEY", "test-offline")
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GOOGLE_GENAI_USE_VERTEXAI")
            .args([
                "-m",
                "gemini-2.5-flash",
                "-p",
                "create the marker",
                "--output-format",
                "json",
                "--approval-mode",
                "yolo",
            ]);
        if trust.is_empty() {
            cmd.env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        } else {
            cmd.args(trust);
        }
        if let Some(session) = resume {
            cmd.args(["--resume", session]);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "gemini: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        toolgate_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{e}: {stdout}"))
            .pointer("/session_id")
            .and_then(Value::as_str)
            .unwrap()
            .to_owned()
    }
}

#[test]
fn gemini_runs_an_allowed_command_with_the_checked_input() {
    let Some(gemini) = gemini() else { return };
    let project = Gemini::new(&examples().join("toolgate.toml"));
    let model = model(project.root(), "touch marker");
    project.run(&gemini, &model, None);
    assert!(project.marker().exists(), "the allowed command ran");
    let audit = audit(&project.store);
    assert!(
        audit.lines().any(|l| l.contains("\"verdict\":\"allow\"")
            && l.contains(r#""tool":"run_shell_command""#)
            && l.contains(r#""arguments":{"command":"touch marker","description":"Run it"}"#)),
        "{audit}"
    );
}

#[test]
fn gemini_never_runs_a_denied_command() {
    let Some(gemini) = gemini() else { return };
    let project = Gemini::new(&examples().join("toolgate.toml"));
    // `&&` makes it a compound command: the schema refuses it.
    let model = model(project.root(), "touch marker && true");
    project.run(&gemini, &model, None);
    assert!(!project.marker().exists(), "the denied command never ran");
    let results = tool_results(&model);
    assert!(
        results
            .iter()
            .any(|r| r.contains("Tool execution blocked: denied by toolgate")),
        "the model is told why: {results:?}"
    );
}

#[test]
fn gemini_runs_a_held_command_after_a_toolgate_approval() {
    let Some(gemini) = gemini() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = Gemini::new(&held_config(dir.path()));
    let model = model(project.root(), "touch marker");
    // Headless: the held call is blocked at once, the run ends.
    let session = project.run(&gemini, &model, None);
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
    project.run(&gemini, &model, Some(&session));
    assert!(project.marker().exists(), "the approved call ran");
}

#[test]
fn gemini_skips_the_project_hooks_under_skip_trust() {
    let Some(gemini) = gemini() else { return };
    let project = Gemini::new(&examples().join("toolgate.toml"));
    // A command the gate denies runs under `--skip-trust`: the run goes on
    // without the project's settings, so without its hook.
    let model = model(project.root(), "touch marker && true");
    project.run_with(&gemini, &model, None, &["--skip-trust"]);
    assert!(
        project.marker().exists(),
        "Gemini CLI ran the command unhooked"
    );
    assert!(
        !project.root().join("toolgate.db").exists(),
        "the hook never ran: it never opened its store"
    );
}
