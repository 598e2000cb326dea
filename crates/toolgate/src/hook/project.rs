//! The project boundary: file paths in a tool's input must lie inside the
//! agent's working directory.

use std::path::{Component, Path, PathBuf};

use toolgate_json::Value;

use super::HookEvent;

/// The input members read as file paths, wherever a tool has them: Claude
/// Code's `file_path` and `notebook_path`, Gemini CLI's `file_path`,
/// `absolute_path`, `dir_path` and `path`.
const PATH_MEMBERS: [&str; 5] = [
    "file_path",
    "notebook_path",
    "absolute_path",
    "dir_path",
    "path",
];

/// The members that may carry an `apply_patch` patch (Codex), whose
/// `*** Add File:`, `*** Update File:`, `*** Delete File:` and
/// `*** Move to:` lines name paths.
const PATCH_MEMBERS: [&str; 3] = ["input", "patch", "command"];

const PATCH_PATH_PREFIXES: [&str; 4] = [
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
];

/// The JSON Pointer of the first path in the event's input that is not
/// inside the agent's working directory (`cwd`), or `None` when every path
/// is inside. Paths are resolved lexically (`.` and `..` folded, a relative
/// path joined to `cwd`); symbolic links are not followed. A path starting
/// with `~`, or a relative path without a `cwd`, is outside.
pub fn outside_project(event: &HookEvent) -> Option<&'static str> {
    let root = event.cwd().and_then(|c| normalize(Path::new(c), None));
    let Value::Object(input) = event.tool_input() else {
        return None;
    };
    for (name, pointer) in PATH_MEMBERS.iter().zip([
        "/file_path",
        "/notebook_path",
        "/absolute_path",
        "/dir_path",
        "/path",
    ]) {
        if let Some(Value::String(p)) = input.get(name) {
            if !inside(p, root.as_deref()) {
                return Some(pointer);
            }
        }
    }
    for (name, pointer) in PATCH_MEMBERS.iter().zip(["/input", "/patch", "/command"]) {
        let Some(Value::String(text)) = input.get(name) else {
            continue;
        };
        if !text.contains("*** Begin Patch") {
            continue;
        }
        for line in text.lines() {
            for prefix in PATCH_PATH_PREFIXES {
                if let Some(p) = line.strip_prefix(prefix) {
                    if !inside(p.trim_end(), root.as_deref()) {
                        return Some(pointer);
                    }
                }
            }
        }
    }
    None
}

fn inside(path: &str, root: Option<&Path>) -> bool {
    let Some(root) = root else {
        return false;
    };
    if path.is_empty() || path.starts_with('~') || path.contains('\0') {
        return false;
    }
    normalize(Path::new(path), Some(root)).is_some_and(|p| p.starts_with(root))
}

/// `path` made absolute against `base` with `.` and `..` folded; `None`
/// for a relative path without a base, or a `..` above the root.
fn normalize(path: &Path, base: Option<&Path>) -> Option<PathBuf> {
    let mut out = if path.is_absolute() {
        PathBuf::new()
    } else {
        base?.to_path_buf()
    };
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out.is_absolute().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::Agent;

    fn event(cwd: Option<&str>, input: &str) -> HookEvent {
        let cwd = cwd.map_or("null".to_owned(), |c| format!("\"{c}\""));
        let body = format!(
            r#"{{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Write","cwd":{cwd},"tool_input":{input}}}"#
        );
        HookEvent::parse(Agent::Claude, body.as_bytes()).unwrap()
    }

    #[test]
    fn a_path_inside_the_project_passes() {
        assert_eq!(
            outside_project(&event(Some("/p"), r#"{"file_path":"/p/src/a.rs"}"#)),
            None
        );
        assert_eq!(
            outside_project(&event(Some("/p"), r#"{"file_path":"src/./a.rs"}"#)),
            None
        );
    }

    #[test]
    fn a_path_outside_the_project_is_named() {
        for input in [
            r#"{"file_path":"/etc/passwd"}"#,
            r#"{"file_path":"/p/../etc/passwd"}"#,
            r#"{"file_path":"../secrets"}"#,
            r#"{"file_path":"/pp/a"}"#,
            r#"{"file_path":"~/.ssh/id_rsa"}"#,
            r#"{"file_path":""}"#,
        ] {
            assert_eq!(
                outside_project(&event(Some("/p"), input)),
                Some("/file_path"),
                "{input}"
            );
        }
        assert_eq!(
            outside_project(&event(Some("/p"), r#"{"dir_path":"/"}"#)),
            Some("/dir_path")
        );
    }

    #[test]
    fn a_relative_path_without_a_working_directory_is_outside() {
        assert_eq!(
            outside_project(&event(None, r#"{"file_path":"a.rs"}"#)),
            Some("/file_path")
        );
    }

    #[test]
    fn every_path_of_a_patch_is_checked() {
        let ok = r#"{"command":"*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** End Patch"}"#;
        assert_eq!(outside_project(&event(Some("/p"), ok)), None);
        let bad = r#"{"command":"*** Begin Patch\n*** Add File: src/b.rs\n+x\n*** Move to: ../../etc/cron.d/x\n*** End Patch"}"#;
        assert_eq!(outside_project(&event(Some("/p"), bad)), Some("/command"));
    }
}
