//! The little of Markdown the book's tests read: fenced blocks with the
//! HTML comment before them, inline links, and heading ids as mdBook makes
//! them.

/// A fenced code block and the marker comment right above it.
#[derive(Debug, Clone)]
pub struct Block {
    /// 1-based line of the opening fence.
    pub line: usize,
    /// The info string (`sh`, `text`, …).
    pub info: String,
    /// The words of `<!-- book-… -->` on the line above the fence, if any
    /// (`["book-run", "exit=1"]`).
    pub marker: Vec<String>,
    /// The block's text, each line ending in `\n`.
    pub text: String,
}

/// Whether `line` opens or closes a fence; returns the fence's characters.
fn fence(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    for tick in ["```", "~~~"] {
        if trimmed.starts_with(tick) {
            let ch = tick.chars().next().unwrap_or('`');
            let n = trimmed.chars().take_while(|c| *c == ch).count();
            return Some(&trimmed[..n]);
        }
    }
    None
}

/// The marker words of an HTML comment line `<!-- book-… -->`.
fn marker(line: &str) -> Option<Vec<String>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    inner
        .starts_with("book-")
        .then(|| inner.split_whitespace().map(str::to_owned).collect())
}

/// Every fenced block of `text`, in order.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, Block)> = None;
    let mut previous = "";
    for (i, line) in text.lines().enumerate() {
        match (&mut open, fence(line)) {
            (Some((ticks, _)), Some(f)) if f.starts_with(ticks.as_str()) => {
                if let Some((_, block)) = open.take() {
                    out.push(block);
                }
            }
            (Some((_, block)), _) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, Some(f)) => {
                let info = line.trim_start()[f.len()..].trim().to_owned();
                open = Some((
                    f.to_owned(),
                    Block {
                        line: i + 1,
                        info,
                        marker: marker(previous).unwrap_or_default(),
                        text: String::new(),
                    },
                ));
            }
            (None, None) => {}
        }
        previous = line;
    }
    out
}

/// The lines of `text` outside fenced blocks, with their 1-based numbers.
pub fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut open: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        match (open, fence(line)) {
            (Some(ticks), Some(f)) if f.starts_with(ticks) => open = None,
            (Some(_), _) => {}
            (None, Some(f)) => open = Some(f),
            (None, None) => out.push((i + 1, line)),
        }
    }
    out
}

/// `line` without its inline code spans.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + ticks..];
        match after.find(&"`".repeat(ticks)) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links and images of `text` (outside code),
/// with their lines.
pub fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose(text) {
        // An HTML comment is not rendered: its links are not links.
        if line.trim_start().starts_with("<!--") {
            continue;
        }
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].trim();
            // `[text](url "title")`: the title is not part of the target.
            let target = target.split_whitespace().next().unwrap_or("");
            if !target.is_empty() {
                out.push((n, target.to_owned()));
            }
            rest = &after[end..];
        }
    }
    out
}

/// A heading's id as mdBook makes it: letters, digits, `_` and `-` kept
/// (lower-cased), whitespace turned into `-`, everything else dropped.
pub fn heading_id(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The text of a heading as rendered: links keep their text, code and
/// emphasis marks go.
fn rendered(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        rest = after.find(')').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out.chars()
        .filter(|c| !matches!(c, '[' | '`' | '*'))
        .collect()
}

/// The ids of every heading of a chapter, duplicates numbered as mdBook
/// numbers them (`name`, `name-1`, `name-2`).
pub fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let id = heading_id(rendered(line[hashes..].trim()).trim());
        let mut unique = id.clone();
        let mut n = 0;
        while out.contains(&unique) {
            n += 1;
            unique = format!("{id}-{n}");
        }
        out.push(unique);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_mdbook() {
        assert_eq!(
            heading_id("HTTP mode (toolgate mcp --listen)"),
            "http-mode-toolgate-mcp---listen"
        );
        let text = "# `toolgate check`\n## Tests\n```sh\n# not a heading\n```\n## Tests\n";
        assert_eq!(anchors(text), ["toolgate-check", "tests", "tests-1"]);
    }

    #[test]
    fn links_outside_code_only() {
        let text = "see [a](a.md#x) and `[b](b.md)`\n```md\n[c](c.md)\n```\n![i](i.png \"t\")\n";
        let found: Vec<_> = links(text).into_iter().map(|(_, t)| t).collect();
        assert_eq!(found, ["a.md#x", "i.png"]);
    }

    #[test]
    fn blocks_carry_their_marker() {
        let text = "<!-- book-run exit=1 -->\n```sh\necho hi\n```\n\n```text\nhi\n```\n";
        let found = blocks(text);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].marker, ["book-run", "exit=1"]);
        assert_eq!(found[0].text, "echo hi\n");
        assert_eq!(found[0].line, 2);
        assert!(found[1].marker.is_empty());
    }
}
