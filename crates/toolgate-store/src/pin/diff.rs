//! What changed between two tool definitions, for the human approving the
//! new one: which members changed, and a line diff of both in canonical
//! pretty form, hidden characters spelled out as `\uXXXX` escapes.

use toolgate_json::{Object, Value};

/// How one member of a definition changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberChange {
    /// Only in the new definition.
    Added,
    /// Only in the approved one.
    Removed,
    /// In both, with other values.
    Changed,
}

impl MemberChange {
    /// `added`, `removed` or `changed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Removed => "removed",
            Self::Changed => "changed",
        }
    }
}

/// One line of a diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiffOp {
    /// In both.
    Same,
    /// Only in the approved definition (`-`).
    Removed,
    /// Only in the new one (`+`).
    Added,
}

impl DiffOp {
    /// The line's mark: ` `, `-` or `+`.
    pub const fn mark(self) -> char {
        match self {
            Self::Same => ' ',
            Self::Removed => '-',
            Self::Added => '+',
        }
    }
}

/// What changed from an approved definition to a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DefinitionDiff {
    /// The members that differ, in the order of the pinned members (`name`,
    /// `title`, `description`, `inputSchema`, `outputSchema`,
    /// `annotations`), then any other.
    pub members: Vec<(String, MemberChange)>,
    /// The line diff of both in canonical pretty form (every line of the
    /// new one marked added when there is no approved one).
    pub lines: Vec<(DiffOp, String)>,
}

impl DefinitionDiff {
    /// The diff as text: a `changed:` line naming the members, then the
    /// lines, each with its mark.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.members.is_empty() {
            let names: Vec<String> = self
                .members
                .iter()
                .map(|(m, c)| format!("{m} ({})", c.as_str()))
                .collect();
            out.push_str("changed: ");
            out.push_str(&names.join(", "));
            out.push('\n');
        }
        for (op, line) in &self.lines {
            out.push(op.mark());
            out.push(' ');
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// The most lines diffed line by line (each side); a longer definition is
/// shown as all removed, then all added.
const MAX_DIFF_LINES: usize = 4000;

/// What changed from `approved` (`None`: no definition of the tool was
/// approved yet, e.g. a new or renamed tool) to `new`, both the canonical
/// JSON text a pin keeps. Text that is not JSON is diffed as it is.
pub fn diff_definitions(approved: Option<&str>, new: &str) -> DefinitionDiff {
    let new_value = toolgate_json::from_str(new).ok();
    let old_value = approved.and_then(|a| toolgate_json::from_str(a).ok());
    let mut members = Vec::new();
    if let (Some(Value::Object(o)), Some(Value::Object(n))) = (&old_value, &new_value) {
        members = member_changes(o, n);
    } else if let (None, Some(Value::Object(n))) = (approved, &new_value) {
        members = n
            .iter()
            .map(|(k, _)| (k.to_owned(), MemberChange::Added))
            .collect();
    }
    let old_text = match (&old_value, approved) {
        (Some(v), _) => pretty(v),
        (None, Some(a)) => a.to_owned(),
        (None, None) => String::new(),
    };
    let new_text = new_value.as_ref().map_or_else(|| new.to_owned(), pretty);
    let old_lines: Vec<&str> = if old_text.is_empty() {
        Vec::new()
    } else {
        old_text.lines().collect()
    };
    let new_lines: Vec<&str> = new_text.lines().collect();
    DefinitionDiff {
        members,
        lines: line_diff(&old_lines, &new_lines),
    }
}

fn member_changes(old: &Object<'_>, new: &Object<'_>) -> Vec<(String, MemberChange)> {
    const ORDER: [&str; 6] = [
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
    ];
    let mut names: Vec<&str> = ORDER.to_vec();
    for (k, _) in old.iter().chain(new.iter()) {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    let mut out = Vec::new();
    for name in names {
        let change = match (old.get(name), new.get(name)) {
            (None, Some(_)) => MemberChange::Added,
            (Some(_), None) => MemberChange::Removed,
            (Some(a), Some(b))
                if toolgate_json::canonical::digest(a) != toolgate_json::canonical::digest(b) =>
            {
                MemberChange::Changed
            }
            _ => continue,
        };
        out.push((name.to_owned(), change));
    }
    out
}

/// A longest-common-subsequence line diff.
fn line_diff(old: &[&str], new: &[&str]) -> Vec<(DiffOp, String)> {
    if old.len() > MAX_DIFF_LINES || new.len() > MAX_DIFF_LINES {
        return old
            .iter()
            .map(|l| (DiffOp::Removed, (*l).to_owned()))
            .chain(new.iter().map(|l| (DiffOp::Added, (*l).to_owned())))
            .collect();
    }
    let (n, m) = (old.len(), new.len());
    // lcs[i][j]: the longest common subsequence of old[i..] and new[j..].
    let width = m + 1;
    let mut lcs = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let v = if old.get(i) == new.get(j) {
                lcs.get((i + 1) * width + j + 1).copied().unwrap_or(0) + 1
            } else {
                let down = lcs.get((i + 1) * width + j).copied().unwrap_or(0);
                let right = lcs.get(i * width + j + 1).copied().unwrap_or(0);
                down.max(right)
            };
            if let Some(cell) = lcs.get_mut(i * width + j) {
                *cell = v;
            }
        }
    }
    let mut out = Vec::with_capacity(n + m);
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a == b => {
                out.push((DiffOp::Same, (*a).to_owned()));
                i += 1;
                j += 1;
            }
            (Some(a), Some(_))
                if lcs.get((i + 1) * width + j).copied().unwrap_or(0)
                    >= lcs.get(i * width + j + 1).copied().unwrap_or(0) =>
            {
                out.push((DiffOp::Removed, (*a).to_owned()));
                i += 1;
            }
            (Some(_), Some(b)) | (None, Some(b)) => {
                out.push((DiffOp::Added, (*b).to_owned()));
                j += 1;
            }
            (Some(a), None) => {
                out.push((DiffOp::Removed, (*a).to_owned()));
                i += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// `value` as pretty JSON (two-space indent, members in the order given:
/// the canonical order for a pin's text), with control and hidden
/// characters (zero-width, bidirectional controls, tag characters) written
/// as `\uXXXX` escapes so a human sees them.
pub fn pretty(value: &Value<'_>) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

fn write_pretty(v: &Value<'_>, indent: usize, out: &mut String) {
    let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n(' ', n * 2));
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(indent + 1, out);
                write_pretty(item, indent + 1, out);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            pad(indent, out);
            out.push(']');
        }
        Value::Object(o) if o.iter().len() > 0 => {
            out.push_str("{\n");
            let n = o.iter().len();
            for (i, (k, item)) in o.iter().enumerate() {
                pad(indent + 1, out);
                write_str(k, out);
                out.push_str(": ");
                write_pretty(item, indent + 1, out);
                if i + 1 < n {
                    out.push(',');
                }
                out.push('\n');
            }
            pad(indent, out);
            out.push('}');
        }
        Value::String(s) => write_str(s, out),
        other => out.push_str(&toolgate_json::canonical::to_string(other)),
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || hidden(c) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Characters a reader does not see: the one table of hidden characters
/// ([`toolgate::hidden`]).
fn hidden(c: char) -> bool {
    toolgate::hidden::is_hidden(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_description_and_annotation_are_named_and_diffed() {
        let old = r#"{"annotations":{"readOnlyHint":true},"description":"Add two integers.","inputSchema":{"type":"object"},"name":"add"}"#;
        let new = "{\"annotations\":{\"readOnlyHint\":false},\"description\":\"Add two integers.\u{200b}\",\"inputSchema\":{\"type\":\"object\"},\"name\":\"add\"}";
        let d = diff_definitions(Some(old), new);
        assert_eq!(
            d.members,
            [
                ("description".to_owned(), MemberChange::Changed),
                ("annotations".to_owned(), MemberChange::Changed)
            ]
        );
        let text = d.render();
        assert!(
            text.starts_with("changed: description (changed), annotations (changed)\n"),
            "{text}"
        );
        assert!(text.contains("-     \"readOnlyHint\": true\n"), "{text}");
        assert!(text.contains("+     \"readOnlyHint\": false\n"), "{text}");
        assert!(
            text.contains("+   \"description\": \"Add two integers.\\u200b\",\n"),
            "{text}"
        );
        assert!(text.contains("    \"name\": \"add\"\n"), "{text}");
    }

    #[test]
    fn a_new_tool_is_all_added() {
        let d = diff_definitions(None, r#"{"description":"x","name":"t"}"#);
        assert_eq!(
            d.members,
            [
                ("description".to_owned(), MemberChange::Added),
                ("name".to_owned(), MemberChange::Added)
            ]
        );
        assert!(d.lines.iter().all(|(op, _)| *op == DiffOp::Added));
        assert_eq!(d.lines.len(), 4);
    }
}
