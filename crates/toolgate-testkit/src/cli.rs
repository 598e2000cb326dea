//! Running a command-line binary under test and collecting what it did.

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// One run of a binary under test: arguments, environment, working folder
/// and standard input, then [`Cli::run`] for its exit status and output.
///
/// The binary's path is the caller's: only the tests of the crate that
/// builds it see `env!("CARGO_BIN_EXE_toolgate")`.
///
/// ```no_run
/// let out = toolgate_testkit::Cli::new("toolgate")
///     .args(["json", "check", "-"])
///     .stdin(b"[1]".as_slice())
///     .run();
/// assert_eq!(out.status.code(), Some(0));
/// ```
#[derive(Debug)]
pub struct Cli {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Cli {
    /// A run of `program`, with no arguments and standard input closed.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            command: Command::new(program),
            stdin: None,
        }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Sets an environment variable for the run.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Runs in `dir` instead of the test's working folder.
    #[must_use]
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Feeds `input` to standard input through a pipe, closed after it.
    /// Without it, standard input is closed from the start.
    #[must_use]
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    /// The command as set up so far (arguments, environment, folder), for a
    /// process the test keeps running; standard input given with
    /// [`Cli::stdin`] is not part of it.
    pub fn command(self) -> Command {
        self.command
    }

    /// Runs the binary to its end: its status, standard output and
    /// standard error.
    ///
    /// Standard input is written from its own thread while the output is
    /// read, and a binary that exits before reading all of it (a usage
    /// error) is not a failure of the run.
    ///
    /// # Panics
    ///
    /// When the binary cannot be started or waited for.
    #[expect(clippy::panic, reason = "a binary that cannot run fails the test")]
    pub fn run(self) -> Output {
        let Self { mut command, stdin } = self;
        let program = command.get_program().to_string_lossy().into_owned();
        command
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{program}`: {e}"));
        let writer = match (child.stdin.take(), stdin) {
            (Some(mut pipe), Some(input)) => Some(std::thread::spawn(move || {
                // A closed pipe means the binary stopped reading: its
                // output says why.
                let _ = pipe.write_all(&input);
            })),
            _ => None,
        };
        let output = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("cannot wait for `{program}`: {e}"));
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        output
    }
}

/// `bytes` (a binary's output) as text.
///
/// # Panics
///
/// When `bytes` are not UTF-8.
#[expect(clippy::panic, reason = "output that is not UTF-8 fails the test")]
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap_or_else(|e| panic!("output is not UTF-8: {e}"))
}
