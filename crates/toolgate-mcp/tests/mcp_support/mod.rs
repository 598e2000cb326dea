//! What the MCP proxy's black-box tests share: the Python with the official
//! SDK, a folder with a config and its store, the client scripts' step
//! output, and small JSON helpers.
#![allow(dead_code, reason = "each test file uses a part of it")]

use std::collections::HashMap;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use toolgate_json::Value;
use toolgate_testkit::examples_dir;

use toolgate_testkit::run_toolgate as toolgate;

pub mod endpoint;
pub mod raw;

/// A Python with the official SDK (`mcp==2.3.0`, its server and both client
/// transports importable), or why there is none: env `TOOLGATE_MCP_PYTHON`,
/// else the workspace's `target/py/venv/bin/python` (as `.ci/run` makes it).
pub fn sdk_python() -> Result<PathBuf, String> {
    let python = match std::env::var_os("TOOLGATE_MCP_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/py/venv/bin/python"),
    };
    let check = "import importlib.metadata as m, mcp.server.mcpserver, mcp.client.stdio, \
                 mcp.client.streamable_http; \
                 assert m.version('mcp') == '2.3.0', m.version('mcp')";
    let ok = Command::new(&python)
        .args(["-c", check])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(python)
    } else {
        Err(format!(
            "no Python with mcp==2.3.0 at `{}` (set TOOLGATE_MCP_PYTHON, or: python3 -m venv target/py/venv && target/py/venv/bin/pip install mcp==2.3.0)",
            python.display()
        ))
    }
}

/// The lowercase hex SHA-256 of `text` (as `[[mcp.token]] sha256` wants it).
pub fn sha256_hex(text: &str) -> String {
    let out = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Reads `child`'s standard error (piped) until a line holds `needle` (a
/// server's "listening" line: a readiness signal, no polling), at most 60 s;
/// the rest goes on to this process's standard error from a thread.
pub fn wait_for_line(child: &mut std::process::Child, needle: &str, what: &str) {
    use std::io::BufRead as _;
    let stderr = child.stderr.take().expect("a piped standard error");
    let (tx, rx) = std::sync::mpsc::channel();
    let needle = needle.to_owned();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            match &tx {
                Some(t) if line.contains(&needle) => {
                    let _ = t.send(Ok(()));
                    tx = None;
                }
                Some(_) => seen.push(line),
                None => eprintln!("{line}"),
            }
        }
        if let Some(t) = tx {
            let _ = t.send(Err(seen.join("\n")));
        }
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Ok(())) => {}
        Ok(Err(seen)) => panic!("{what} ended before it listened:\n{seen}"),
        Err(_) => panic!("{what} is not listening after 60 s"),
    }
}

/// `text` parsed, panicking with the text if it is not JSON.
pub fn json(text: &str) -> Value<'static> {
    toolgate_json::from_str(text)
        .unwrap_or_else(|e| panic!("{e}: {text}"))
        .into_owned()
}

/// The string at `pointer` in `v`, panicking if there is none.
pub fn text_at<'v>(v: &'v Value<'_>, pointer: &str) -> &'v str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {}", v.to_canonical_string()))
}

/// What a client script printed: one JSON line a step, each with its name
/// in `step`, the last one `done`.
pub struct Steps {
    by_name: HashMap<String, Value<'static>>,
    stdout: String,
    stderr: String,
}

impl Steps {
    /// The steps of a client that ran to its end (`what` names it in the
    /// failure message).
    pub fn of(out: &Output, what: &str) -> Self {
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{what} failed:\n{stdout}\n{stderr}");
        let by_name: HashMap<String, Value<'static>> = stdout
            .lines()
            .map(|l| {
                let v = json(l);
                (text_at(&v, "/step").to_owned(), v)
            })
            .collect();
        assert!(by_name.contains_key("done"), "{stdout}\n{stderr}");
        Self {
            by_name,
            stdout,
            stderr,
        }
    }

    /// The step `name`, panicking with the client's output if it has none.
    pub fn step(&self, name: &str) -> &Value<'static> {
        self.by_name
            .get(name)
            .unwrap_or_else(|| panic!("no step {name}:\n{}\n{}", self.stdout, self.stderr))
    }

    /// Whether the client printed the step `name`.
    pub fn has(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The step's `is_error` member, if it has one.
    pub fn is_error(&self, name: &str) -> Option<Value<'static>> {
        self.step(name).pointer("/is_error").cloned()
    }

    /// What the client wrote, both streams (for failure messages).
    pub fn output(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// What the client wrote to standard error.
    pub fn stderr(&self) -> &str {
        &self.stderr
    }
}

impl std::ops::Index<&str> for Steps {
    type Output = Value<'static>;

    fn index(&self, name: &str) -> &Value<'static> {
        self.step(name)
    }
}

/// A folder with a config (`toolgate.toml`, its store beside it) and the
/// file the test servers log the calls they receive to (`seen.jsonl`, env
/// `MCP_TEST_SEEN`).
pub struct Folder {
    dir: tempfile::TempDir,
}

impl Folder {
    /// A folder whose config is `text`.
    pub fn with_text(text: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("toolgate.toml"), text).unwrap();
        Self { dir }
    }

    /// A folder with a copy of `config`.
    pub fn with_config(config: &Path) -> Self {
        Self::with_text(&std::fs::read_to_string(config).unwrap())
    }

    /// A folder with the shop example (`examples/shop`: its config, then
    /// `extra`; its Cedar policies, entities and schemas beside it).
    pub fn shop(extra: &str) -> Self {
        let shop = examples_dir().join("shop");
        let mut toml = std::fs::read_to_string(shop.join("toolgate.toml")).unwrap();
        toml.push_str(extra);
        let folder = Self::with_text(&toml);
        for f in ["policies.cedar", "shop.cedarschema", "entities.json"] {
            std::fs::copy(shop.join(f), folder.path().join(f)).unwrap();
        }
        std::fs::create_dir(folder.path().join("schemas")).unwrap();
        for e in std::fs::read_dir(shop.join("schemas")).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), folder.path().join("schemas").join(e.file_name())).unwrap();
        }
        folder
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn config(&self) -> PathBuf {
        self.path().join("toolgate.toml")
    }

    pub fn seen_file(&self) -> PathBuf {
        self.path().join("seen.jsonl")
    }

    /// The calls the servers received, in order.
    pub fn seen(&self) -> Vec<Value<'static>> {
        std::fs::read_to_string(self.seen_file())
            .unwrap_or_default()
            .lines()
            .map(json)
            .collect()
    }

    /// The calls the servers received, canonical JSON, in order.
    pub fn seen_canonical(&self) -> Vec<String> {
        self.seen().iter().map(Value::to_canonical_string).collect()
    }

    /// `toolgate audit tail` over the folder's store (its last 200 records).
    pub fn audit(&self) -> String {
        let config = self.config();
        let out = toolgate(&[
            "audit",
            "tail",
            "--config",
            config.to_str().unwrap(),
            "-n",
            "200",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// `toolgate pins ARGS… --config` over the folder's store: the exit
    /// code, standard output and standard error.
    pub fn pins(&self, args: &[&str]) -> (i32, String, String) {
        let config = self.config();
        let mut all = vec!["pins"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--config", config.to_str().unwrap()]);
        let out = toolgate(&all);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// What every run of `tests/mcp/cancel_client.py` must show: the held
/// call withdrawn, a later approval refused, the server never called.
pub fn assert_cancelled_and_withdrawn(steps: &Steps, dir: &Folder) {
    assert!(!steps.has("cancel_ignored"), "{}", steps.output());
    assert_eq!(
        text_at(&steps["withdrawn"], "/state"),
        "withdrawn",
        "{}",
        steps.output()
    );
    let after = &steps["approve_after"];
    assert_eq!(
        after.pointer("/code"),
        Some(&json("1")),
        "{}",
        steps.output()
    );
    assert!(
        text_at(after, "/stderr").contains("withdrawn"),
        "{}",
        steps.output()
    );
    assert_eq!(text_at(&steps["add_after"], "/text"), "5");
    // The server saw the add, never the refund.
    let seen = dir.seen_canonical();
    assert_eq!(
        seen,
        [r#"{"arguments":{"a":2,"b":3},"tool":"add"}"#],
        "{}",
        steps.output()
    );
    let audit = dir.audit();
    assert!(audit.contains("approval_withdrawn"), "{audit}");
    assert!(!audit.contains("approval_used"), "{audit}");
    assert!(!audit.contains("approval_granted"), "{audit}");
}
