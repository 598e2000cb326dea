//! The walkthrough runner: a chapter's blocks marked `<!-- book-run -->`
//! run in order in one shell, as a reader pasting them would run them, and
//! each block's standard output is compared with the `<!-- book-output -->`
//! block that follows it.
//!
//! Markers (an HTML comment on the line right above the fence; invisible on
//! GitHub and in the rendered book):
//!
//! - `<!-- book-run -->` before a `sh` block: run it; it must end with
//!   status 0. `<!-- book-run exit=1 -->`: it must end with status 1.
//!   `<!-- book-run needs=python-mcp -->`: the block needs a tool from
//!   outside cargo ([`NEEDS`]); the test puts it on the `PATH`, or skips
//!   the chapter where it is missing (fails under
//!   `TOOLGATE_REQUIRE_EXTERNAL=1`).
//! - `<!-- book-output -->` before a `text` block: what the last run block
//!   printed on standard output. Within a line `[..]` stands for any text;
//!   a line `...` stands for any number of lines.
//!
//! One shell per chapter, in a scratch folder holding a copy of
//! `examples/`, with `toolgate` of this build first on the `PATH`; where
//! the machine allows it, in a network namespace of its own, so that the
//! walkthroughs' fixed ports (8080, 8090) are free. Background jobs a block
//! starts (`toolgate serve … &`) live until the chapter ends. A chapter that
//! does not end within its deadline fails, naming the block still running:
//! a `wait` or a blocking request pasted before what releases it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::markdown::{blocks, Block};

/// One block to run, with what the text promises of it.
#[derive(Debug)]
pub struct Step {
    /// Line of the block's opening fence.
    pub line: usize,
    /// The shell text.
    pub script: String,
    /// The exit status it must end with.
    pub exit: i32,
    /// The promised standard output (line of its fence, text).
    pub expected: Option<(usize, String)>,
    /// The outside tools it needs (names from [`NEEDS`]).
    pub needs: Vec<String>,
}

/// What a block may need from outside cargo: `python-mcp`, a `python3`
/// with the official MCP SDK (`mcp`).
pub const NEEDS: &[&str] = &["python-mcp"];

/// The steps of a chapter, or what is wrong with its markers.
pub fn steps(text: &str) -> Result<Vec<Step>, String> {
    let mut out: Vec<Step> = Vec::new();
    for Block {
        line,
        info,
        marker,
        text,
    } in blocks(text)
    {
        let Some((kind, options)) = marker.split_first() else {
            continue;
        };
        match kind.as_str() {
            "book-run" => {
                if !matches!(info.as_str(), "sh" | "bash" | "shell") {
                    return Err(format!(
                        "line {line}: book-run on a `{info}` block, not `sh`"
                    ));
                }
                let mut exit = 0;
                let mut needs = Vec::new();
                for option in options {
                    if let Some(need) = option.strip_prefix("needs=") {
                        if !NEEDS.contains(&need) {
                            return Err(format!("line {line}: unknown book-run need `{need}`"));
                        }
                        needs.push(need.to_owned());
                        continue;
                    }
                    match option.strip_prefix("exit=").map(str::parse) {
                        Some(Ok(n)) => exit = n,
                        _ => {
                            return Err(format!("line {line}: unknown book-run option `{option}`"))
                        }
                    }
                }
                out.push(Step {
                    line,
                    script: text,
                    exit,
                    expected: None,
                    needs,
                });
            }
            "book-output" => {
                if let Some(option) = options.first() {
                    return Err(format!(
                        "line {line}: unknown book-output option `{option}`"
                    ));
                }
                match out.last_mut() {
                    Some(step) if step.expected.is_none() => step.expected = Some((line, text)),
                    Some(_) => {
                        return Err(format!("line {line}: a second book-output for one block"))
                    }
                    None => return Err(format!("line {line}: book-output before any book-run")),
                }
            }
            other => return Err(format!("line {line}: unknown marker `{other}`")),
        }
    }
    Ok(out)
}

/// Whether `actual` is what `expected` promises (`[..]` and `...` as in the
/// module's documentation); trailing spaces and blank lines at the end are
/// not compared.
pub fn promised(expected: &str, actual: &str) -> bool {
    let tidy = |s: &str| -> Vec<String> {
        let mut lines: Vec<String> = s.lines().map(|l| l.trim_end().to_owned()).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    };
    lines_match(&tidy(expected), &tidy(actual))
}

fn lines_match(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, actual.get(skip..).unwrap_or(&[])))
        }
        Some((first, rest)) => match actual.split_first() {
            Some((line, more)) => line_matches(first, line) && lines_match(rest, more),
            None => false,
        },
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether this machine gives an unprivileged process a network namespace
/// with a working loopback.
fn private_network() -> bool {
    Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link set lo up"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `steps` of the chapter `name` in `work` (the folder the blocks run
/// in) with the folders `bins` first on the `PATH`; returns every broken
/// promise, each naming the chapter and the block's line.
pub fn run(
    name: &str,
    steps: &[Step],
    work: &Path,
    bins: &[PathBuf],
    deadline: Duration,
) -> Vec<String> {
    let state = work.join(".book-run");
    if let Err(e) = std::fs::create_dir_all(&state) {
        return vec![format!("{name}: cannot create `{}`: {e}", state.display())];
    }
    let mut driver = String::from(
        "cd \"$1\" || exit 97\nstate=\"$1/.book-run\"\n\
         trap 'kill $(jobs -p) 2>/dev/null' EXIT\n",
    );
    for (i, step) in steps.iter().enumerate() {
        let file = state.join(format!("step{i}.sh"));
        if let Err(e) = std::fs::write(&file, &step.script) {
            return vec![format!("{name}: cannot write `{}`: {e}", file.display())];
        }
        let _ = write!(
            driver,
            "echo {i} > \"$state/current\"\n\
             {{ . \"$state/step{i}.sh\"; }} > \"$state/out{i}\" 2> \"$state/err{i}\" < /dev/null\n\
             echo $? > \"$state/rc{i}\"\n\
             cp \"$state/out{i}\" \"$state/stdout{i}\"; cp \"$state/err{i}\" \"$state/stderr{i}\"\n"
        );
    }
    let driver_file = state.join("driver.sh");
    if let Err(e) = std::fs::write(&driver_file, driver) {
        return vec![format!("{name}: cannot write the driver: {e}")];
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = bins.to_vec();
    dirs.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(dirs).unwrap_or_default();

    let mut command = if private_network() {
        let mut c = Command::new("unshare");
        c.args([
            "-rn",
            "sh",
            "-c",
            "ip link set lo up && exec bash \"$0\" \"$1\"",
        ]);
        c
    } else {
        Command::new("bash")
    };
    command
        .arg(&driver_file)
        .arg(work)
        .env("PATH", path)
        .env("HOME", work)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => return vec![format!("{name}: cannot start bash: {e}")],
    };
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let finished = rx.recv_timeout(deadline).is_ok();
    // Whatever a block left running goes with the chapter.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
    if !finished {
        let _ = rx.recv();
    }

    let read = |file: String| std::fs::read_to_string(state.join(file)).ok();
    let mut failures = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let stderr = read(format!("stderr{i}")).unwrap_or_default();
        let Some(rc) = read(format!("rc{i}")) else {
            let current = read("current".into()).unwrap_or_default();
            if current.trim() == i.to_string() {
                let stderr = read(format!("err{i}")).unwrap_or_default();
                failures.push(format!(
                    "{name}:{}: the block did not end within {} s (a `wait`, or a \
                     request that blocks, before what releases it?); its standard error:\n{stderr}",
                    step.line,
                    deadline.as_secs()
                ));
            } else {
                failures.push(format!("{name}:{}: the block never ran", step.line));
            }
            break;
        };
        let rc: i32 = rc.trim().parse().unwrap_or(-1);
        let stdout = read(format!("stdout{i}")).unwrap_or_default();
        if rc != step.exit {
            failures.push(format!(
                "{name}:{}: the block ended with status {rc}, the text promises {}; \
                 its standard error:\n{stderr}\nits standard output:\n{stdout}",
                step.line, step.exit
            ));
        }
        if let Some((line, expected)) = &step.expected {
            if !promised(expected, &stdout) {
                failures.push(format!(
                    "{name}:{line}: the block at line {} printed\n{stdout}\nbut the text \
                     promises\n{expected}\n(its standard error:\n{stderr})",
                    step.line
                ));
            }
        }
    }
    failures
}

/// A copy of the folder `from` at `to` (files and folders only).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target: PathBuf = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(promised("a [..] c\n...\nend\n", "a b c\nx\ny\nend\n\n"));
        assert!(promised("...\n", ""));
        assert!(!promised("a [..] c\n", "a b d\n"));
        assert!(!promised("a\n", "a\nb\n"));
        assert!(promised("[..]x[..]\n", "yxy\n"));
        assert!(!promised("ab[..]ba\n", "aba\n"));
    }

    #[test]
    fn markers_are_checked() {
        let text =
            "<!-- book-run exit=2 -->\n```sh\nfalse\n```\n<!-- book-output -->\n```text\n```\n";
        let found = steps(text).unwrap();
        assert_eq!(found[0].exit, 2);
        assert_eq!(found[0].expected.as_ref().unwrap().0, 6);
        assert!(steps("<!-- book-output -->\n```text\n```\n").is_err());
        assert!(steps("<!-- book-run soon -->\n```sh\n```\n").is_err());
        assert!(steps("<!-- book-run -->\n```toml\n```\n").is_err());
        assert!(steps("<!-- book-rnu -->\n```sh\n```\n").is_err());
        let needs = steps("<!-- book-run needs=python-mcp -->\n```sh\n```\n").unwrap();
        assert_eq!(needs[0].needs, ["python-mcp"]);
        let e = steps("<!-- book-run needs=perl -->\n```sh\n```\n").unwrap_err();
        assert!(e.contains("unknown book-run need `perl`"), "{e}");
    }
}
