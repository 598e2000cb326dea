//! Loading a folder of recordings: `replay.toml`, each body read within its
//! bound and checked, and recordings that could never be served refused.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::Api;

/// The manifest's file name inside the folder.
pub const MANIFEST: &str = "replay.toml";
/// The largest manifest read, in bytes.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The most recordings one folder holds.
pub const MAX_RECORDINGS: usize = 1024;
/// The largest body of one recording, in bytes.
pub const MAX_RECORDING_BYTES: u64 = 16 << 20;
/// The largest sum of all bodies, in bytes.
pub const MAX_TOTAL_BYTES: u64 = 256 << 20;

/// One recorded answer and what it answers.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The body's file name (also the recording's name in logs).
    pub body_file: String,
    /// The route it answers.
    pub api: Api,
    /// Whether it answers streamed requests (an `.sse` body).
    pub stream: bool,
    /// The last user message it answers, if it names one.
    pub user: Option<String>,
    /// The `model` it answers, if it names one.
    pub model: Option<String>,
    /// The status it is served with.
    pub status: u16,
    /// The body, as recorded.
    pub body: Vec<u8>,
}

impl Recording {
    /// Whether every request this one matches is matched by `earlier`, so
    /// that this one would never be served.
    fn shadowed_by(&self, earlier: &Recording) -> bool {
        let covers = |e: &Option<String>, s: &Option<String>| match (e, s) {
            (None, _) => true,
            (Some(e), Some(s)) => e == s,
            (Some(_), None) => false,
        };
        earlier.api == self.api
            && earlier.stream == self.stream
            && covers(&earlier.user, &self.user)
            && covers(&earlier.model, &self.model)
    }
}

/// A loaded folder of recordings.
#[derive(Debug, Clone)]
pub struct Recordings {
    pub(crate) manifest: PathBuf,
    pub(crate) list: Vec<Recording>,
}

impl Recordings {
    /// The recordings, in the manifest's order.
    pub fn list(&self) -> &[Recording] {
        &self.list
    }

    /// The manifest's path.
    pub fn manifest(&self) -> &Path {
        &self.manifest
    }
}

/// Why a folder of recordings does not load: the file, where in it, and
/// what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    file: PathBuf,
    what: String,
}

impl LoadError {
    fn new(file: &Path, what: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            what: what.into(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.what)
    }
}

impl std::error::Error for LoadError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    recording: Vec<RawRecording>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecording {
    route: String,
    body: String,
    user: Option<String>,
    model: Option<String>,
    status: Option<u16>,
}

/// Reads `path` whole, refusing a file over `max` bytes before reading
/// more than one byte past the bound.
fn read_bounded(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, LoadError> {
    let file = std::fs::File::open(path).map_err(|e| LoadError::new(path, format!("{e}")))?;
    let mut out = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| LoadError::new(path, format!("{e}")))?;
    if u64::try_from(out.len()).unwrap_or(u64::MAX) > max {
        return Err(LoadError::new(
            path,
            format!("{what} is larger than {max} bytes"),
        ));
    }
    Ok(out)
}

fn route(text: &str) -> Option<Api> {
    [Api::ChatCompletions, Api::Responses, Api::Messages]
        .into_iter()
        .find(|api| text.strip_prefix("POST ") == Some(api.path()))
}

/// A body's file name: letters, digits, `.`, `_` and `-`, not starting with
/// `.`, ending in `.json` or `.sse`; `Some(true)` for an event stream.
fn body_kind(name: &str) -> Option<bool> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if !plain {
        return None;
    }
    if name.ends_with(".sse") {
        Some(true)
    } else if name.ends_with(".json") {
        Some(false)
    } else {
        None
    }
}

/// Checks an event stream: UTF-8, lines of `data`, `event`, `id`, `retry`
/// or comments, whole events (ending with a blank line), each event's data
/// strict JSON or `[DONE]`, at least one event.
fn check_stream(body: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(body).map_err(|_| "the event stream is not UTF-8".to_owned())?;
    for (i, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let field = line.split_once(':').map_or(line, |(f, _)| f);
        if !line.is_empty() && !matches!(field, "" | "data" | "event" | "id" | "retry") {
            return Err(format!(
                "line {}: an event stream line must be `data:`, `event:`, `id:`, `retry:` or a `:` comment",
                i + 1
            ));
        }
    }
    let mut reader = crate::SseReader::new(usize::MAX);
    let events = reader
        .push(body)
        .map_err(|_| "the event stream cannot be read".to_owned())?;
    if reader.has_partial() {
        return Err("the event stream's last event does not end with a blank line".to_owned());
    }
    if events.is_empty() {
        return Err("the event stream holds no event".to_owned());
    }
    for (i, e) in events.iter().enumerate() {
        if e.data != "[DONE]" {
            toolgate_json::from_str(&e.data)
                .map_err(|err| format!("event {}: its data is not strict JSON: {err}", i + 1))?;
        }
    }
    Ok(())
}

impl Recordings {
    /// Loads the folder `dir`: its `replay.toml` and every body it names.
    pub fn load(dir: &Path) -> Result<Self, LoadError> {
        let manifest = dir.join(MANIFEST);
        let bytes = read_bounded(&manifest, MAX_MANIFEST_BYTES, "the manifest")?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| LoadError::new(&manifest, "the manifest is not UTF-8"))?;
        let raw: RawManifest =
            toml::from_str(text).map_err(|e| LoadError::new(&manifest, e.to_string()))?;
        if raw.recording.is_empty() {
            return Err(LoadError::new(
                &manifest,
                "no [[recording]]: each names a `route` and a `body`",
            ));
        }
        if raw.recording.len() > MAX_RECORDINGS {
            return Err(LoadError::new(
                &manifest,
                format!("more than {MAX_RECORDINGS} recordings"),
            ));
        }
        let mut list: Vec<Recording> = Vec::with_capacity(raw.recording.len());
        let mut total: u64 = 0;
        for (i, r) in raw.recording.into_iter().enumerate() {
            let n = i + 1;
            let at = |what: String| LoadError::new(&manifest, format!("recording {n}: {what}"));
            let api = route(&r.route).ok_or_else(|| {
                at(format!(
                    "`route` is {:?}; it must be \"POST /v1/chat/completions\", \"POST /v1/responses\" or \"POST /v1/messages\"",
                    r.route
                ))
            })?;
            let stream = body_kind(&r.body).ok_or_else(|| {
                at(format!(
                    "`body` is {:?}; it must be a file name in the folder (letters, digits, `.`, `_`, `-`) ending in `.json` or `.sse`",
                    r.body
                ))
            })?;
            let status = r.status.unwrap_or(200);
            if !(200..=599).contains(&status) || (stream && status != 200) {
                return Err(at(format!(
                    "`status` is {status}; it must be 200 to 599 (200 for an event stream)"
                )));
            }
            let path = dir.join(&r.body);
            let body = read_bounded(&path, MAX_RECORDING_BYTES, "the recording")?;
            total = total.saturating_add(u64::try_from(body.len()).unwrap_or(u64::MAX));
            if total > MAX_TOTAL_BYTES {
                return Err(at(format!(
                    "the recordings together are larger than {MAX_TOTAL_BYTES} bytes"
                )));
            }
            if stream {
                check_stream(&body).map_err(|e| LoadError::new(&path, e))?;
            } else {
                toolgate_json::from_slice(&body)
                    .map_err(|e| LoadError::new(&path, format!("not strict JSON: {e}")))?;
            }
            let recording = Recording {
                body_file: r.body,
                api,
                stream,
                user: r.user,
                model: r.model,
                status,
                body,
            };
            if let Some(j) = list.iter().position(|e| recording.shadowed_by(e)) {
                return Err(at(format!(
                    "it is never served: recording {} matches every request it matches (give it another `user` or `model`, or put it first)",
                    j + 1
                )));
            }
            list.push(recording);
        }
        Ok(Self { manifest, list })
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        reason = "test code: a failed assumption should fail the test loudly"
    )]

    use super::*;

    fn folder(manifest: &str, files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST), manifest).unwrap();
        for (name, body) in files {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        dir
    }

    fn error(manifest: &str, files: &[(&str, &[u8])]) -> String {
        let dir = folder(manifest, files);
        Recordings::load(dir.path()).unwrap_err().to_string()
    }

    const CHAT: &str = "[[recording]]\nroute = \"POST /v1/chat/completions\"\n";

    #[test]
    fn a_folder_loads_in_order_with_its_defaults() {
        let manifest = format!(
            "{CHAT}user = \"hi\"\nbody = \"a.json\"\n\n{CHAT}body = \"b.sse\"\n\n\
             [[recording]]\nroute = \"POST /v1/messages\"\nbody = \"a.json\"\nstatus = 529\n"
        );
        let dir = folder(
            &manifest,
            &[
                ("a.json", b"{\"x\":1}"),
                ("b.sse", b"data: {}\n\ndata: [DONE]\n\n"),
            ],
        );
        let r = Recordings::load(dir.path()).unwrap();
        let list = r.list();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].user.as_deref(), Some("hi"));
        assert!(!list[0].stream && list[1].stream);
        assert_eq!((list[0].status, list[2].status), (200, 529));
        assert_eq!(list[2].api, Api::Messages);
    }

    #[test]
    fn a_body_outside_the_folder_or_of_another_kind_is_refused() {
        for name in [
            "../a.json",
            "/etc/passwd",
            ".hidden.json",
            "a.txt",
            "sub/a.json",
            "",
        ] {
            let e = error(&format!("{CHAT}body = {name:?}\n"), &[]);
            assert!(e.contains("recording 1: `body` is"), "{name}: {e}");
        }
    }

    #[test]
    fn unknown_routes_keys_and_statuses_are_refused() {
        let e = error(
            "[[recording]]\nroute = \"GET /v1/models\"\nbody = \"a.json\"\n",
            &[],
        );
        assert!(e.contains("`route` is \"GET /v1/models\""), "{e}");
        let e = error(&format!("{CHAT}body = \"a.json\"\nheaders = 1\n"), &[]);
        assert!(e.contains("unknown field `headers`"), "{e}");
        let e = error(&format!("{CHAT}body = \"a.sse\"\nstatus = 500\n"), &[]);
        assert!(e.contains("200 for an event stream"), "{e}");
        let e = error(&format!("{CHAT}body = \"a.json\"\nstatus = 700\n"), &[]);
        assert!(e.contains("`status` is 700"), "{e}");
        let e = error("", &[]);
        assert!(e.contains("no [[recording]]"), "{e}");
    }

    #[test]
    fn bodies_are_checked_when_the_folder_loads() {
        let e = error(
            &format!("{CHAT}body = \"a.json\"\n"),
            &[("a.json", b"{\"a\":1,\"a\":2}")],
        );
        assert!(e.contains("a.json: not strict JSON"), "{e}");
        for (body, why) in [
            (&b"data: {}\n"[..], "does not end with a blank line"),
            (b"data: {\n\n", "event 1: its data is not strict JSON"),
            (b"bogus: 1\n\n", "line 1: an event stream line"),
            (b": only a comment\n\n", "holds no event"),
            (b"data: \xff\n\n", "not UTF-8"),
        ] {
            let e = error(&format!("{CHAT}body = \"a.sse\"\n"), &[("a.sse", body)]);
            assert!(e.contains(why), "{why}: {e}");
        }
        let e = error(&format!("{CHAT}body = \"gone.json\"\n"), &[]);
        assert!(e.contains("gone.json"), "{e}");
    }

    #[test]
    fn sizes_are_bounded_before_reading_on() {
        let big = vec![b' '; usize::try_from(MAX_RECORDING_BYTES).unwrap() + 1];
        let e = error(&format!("{CHAT}body = \"a.json\"\n"), &[("a.json", &big)]);
        assert!(e.contains("larger than 16777216 bytes"), "{e}");
        let many = format!("{CHAT}body = \"a.json\"\n").repeat(MAX_RECORDINGS + 1);
        let e = error(&many, &[("a.json", b"{}")]);
        assert!(e.contains("more than 1024 recordings"), "{e}");
    }

    #[test]
    fn a_recording_that_is_never_served_is_refused() {
        let e = error(
            &format!("{CHAT}body = \"a.json\"\n{CHAT}user = \"hi\"\nbody = \"a.json\"\n"),
            &[("a.json", b"{}")],
        );
        assert!(
            e.contains("recording 2: it is never served: recording 1 matches"),
            "{e}"
        );
        // Another user, or another kind of body, is another request.
        let dir = folder(
            &format!(
                "{CHAT}user = \"a\"\nbody = \"a.json\"\n{CHAT}user = \"b\"\nbody = \"a.json\"\n\
                 {CHAT}body = \"a.json\"\n"
            ),
            &[("a.json", b"{}")],
        );
        assert_eq!(Recordings::load(dir.path()).unwrap().list().len(), 3);
    }
}
