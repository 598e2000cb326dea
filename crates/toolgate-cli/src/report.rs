//! How the command reports an error: one line, `toolgate: error: …`, each
//! cause said once.
//!
//! An error's chain often repeats itself: a context names the file and then
//! the I/O error, whose own text the next cause prints again; a config error
//! already summarizes the TOML error beneath it. [`render`] writes every
//! cause whose text the line does not hold yet, and stops below an error
//! that already says all of it.

/// The prefix of every error line the command prints.
pub const PREFIX: &str = "toolgate: error: ";

/// The error's chain as one line, each cause once.
pub fn render(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        let text = text.trim();
        if text.is_empty() || line.contains(text) {
            continue;
        }
        if !line.is_empty() && text.starts_with(line.as_str()) {
            // The cause repeats the whole line and adds to it.
            line = text.to_owned();
        } else {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(text);
        }
        if says_it_all(cause) {
            break;
        }
    }
    line
}

/// Errors whose one-line rendering already summarizes their sources.
fn says_it_all(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<toolgate::config::Error>().is_some()
}

/// Prints the error on standard error with the command's prefix.
pub fn error(e: &anyhow::Error) {
    eprintln!("{PREFIX}{}", render(e));
}

/// Prints a message of the command's own on standard error, with the prefix.
pub fn message(text: &str) {
    eprintln!("{PREFIX}{text}");
}

/// Writes `bytes` to `path` whole or not at all: into a temporary file in
/// the same folder, then renamed over `path`.
pub fn write_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path.file_name().map_or_else(
        || std::ffi::OsString::from("out"),
        std::ffi::OsStr::to_os_string,
    );
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(&name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(io)
            .context("cannot read `x`: No such file")
            .context("cannot start");
        assert_eq!(render(&e), "cannot start: cannot read `x`: No such file");
    }

    #[test]
    fn a_cause_that_repeats_the_line_replaces_it() {
        let e = anyhow::anyhow!("a: b").context("a");
        assert_eq!(render(&e), "a: b");
    }
}
