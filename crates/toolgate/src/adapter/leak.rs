//! Tool-call markup in text: never a call, always a finding.
//!
//! The scan looks at one whole text field (for streams, the fragments of one
//! field joined, so markup split across chunks is found). It reports the first
//! place of each kind of markup. Matching is ASCII-case-insensitive and
//! knows the delimiter variants seen in leaks (`｜`, `‖`, `｜｜`, `|`).

use super::finding::{FindingCode, Findings};

/// Characters that delimit DSML and special tokens in the leaks seen so far.
const DELIMITERS: [char; 8] = ['|', '｜', '‖', '¦', '∣', '│', '︱', '▁'];

/// Tags of XML-like tool-call formats (lower case).
const TAGS: [&str; 13] = [
    "<tool_call",
    "</tool_call",
    "<function_call",
    "</function_call",
    "<function=",
    "<tool_use",
    "<invoke ",
    "<invoke>",
    "</invoke>",
    "<tool_code",
    "<start_function_call>",
    "<toolcall",
    "<use_mcp_tool",
];

/// Chat-template special tokens for tool calls (lower case).
const TOKENS: [&str; 11] = [
    "tool▁call",
    "tool▁output",
    "<|tool",
    "<｜tool",
    "<|python_tag|>",
    "[tool_calls]",
    "<|action_start|>",
    "<|plugin|>",
    "<|recipient|>",
    "<|channel|>commentary to=",
    "<|start|>assistant to=",
];

/// Member names that name the tool, and that carry its arguments.
const NAME_KEYS: [&str; 4] = ["\"name\"", "\"tool\"", "\"function\"", "\"tool_name\""];
const ARG_KEYS: [&str; 5] = [
    "\"arguments\"",
    "\"parameters\"",
    "\"args\"",
    "\"input\"",
    "\"tool_input\"",
];

/// How far before an arguments key a name key may be.
const WINDOW: usize = 512;
/// At most this many arguments keys are examined per text.
const MAX_ARG_KEYS: usize = 1000;

/// The first byte offset of each kind of markup in `text`.
pub(crate) fn scan(text: &str) -> Vec<(FindingCode, usize)> {
    let mut out = Vec::new();
    let lower = text.to_ascii_lowercase();
    if let Some(at) = dsml(&lower) {
        out.push((FindingCode::DsmlMarkup, at));
    }
    if let Some(at) = TAGS.iter().filter_map(|t| lower.find(t)).min() {
        out.push((FindingCode::ToolCallMarkup, at));
    }
    if let Some(at) = TOKENS.iter().filter_map(|t| lower.find(t)).min() {
        out.push((FindingCode::SpecialToken, at));
    }
    if let Some(at) = json_call(&lower) {
        out.push((FindingCode::JsonCallInText, at));
    }
    out
}

/// Scans one text field whose place is `pointer`.
pub(crate) fn scan_field(text: &str, pointer: &str, findings: &mut Findings) {
    for (code, _) in scan(text) {
        findings.push(code, pointer);
    }
}

/// `dsml` with a delimiter on both sides (`｜dsml｜`, `‖dsml‖`, `|dsml|`).
fn dsml(lower: &str) -> Option<usize> {
    lower.match_indices("dsml").map(|(i, _)| i).find(|&i| {
        let before = lower.get(..i).and_then(|s| s.chars().next_back());
        let after = lower.get(i + 4..).and_then(|s| s.chars().next());
        before.is_some_and(|c| DELIMITERS.contains(&c))
            && after.is_some_and(|c| DELIMITERS.contains(&c))
    })
}

/// A member name followed by optional whitespace and a colon.
fn keys_at<'a>(hay: &'a str, keys: &'a [&'a str]) -> impl Iterator<Item = usize> + 'a {
    keys.iter().flat_map(move |k| {
        hay.match_indices(k).filter_map(move |(i, _)| {
            let rest = hay.get(i + k.len()..)?;
            rest.trim_start().starts_with(':').then_some(i)
        })
    })
}

/// An object that names a tool and carries arguments: `{` … `"name":` …
/// `"arguments":`, the name key at most [`WINDOW`] bytes before.
fn json_call(lower: &str) -> Option<usize> {
    let mut best: Option<usize> = None;
    for arg in keys_at(lower, &ARG_KEYS).take(MAX_ARG_KEYS) {
        let mut start = arg.saturating_sub(WINDOW);
        while !lower.is_char_boundary(start) {
            start += 1;
        }
        let Some(window) = lower.get(start..arg) else {
            continue;
        };
        let Some(name) = keys_at(window, &NAME_KEYS).min() else {
            continue;
        };
        let Some(open) = window.get(..name).and_then(|w| w.rfind('{')) else {
            continue;
        };
        let at = start + open;
        best = Some(best.map_or(at, |b| b.min(at)));
    }
    best
}

/// The fragments of one text field of a stream, with the pointer of each.
#[derive(Default)]
pub(crate) struct TextBuf {
    text: String,
    spans: Vec<(usize, String)>,
}

impl TextBuf {
    pub(crate) fn push(&mut self, fragment: &str, pointer: String) {
        if fragment.is_empty() {
            return;
        }
        self.spans.push((self.text.len(), pointer));
        self.text.push_str(fragment);
    }

    /// Scans the joined text; a finding points at the fragment where the
    /// markup begins.
    pub(crate) fn scan_into(&self, findings: &mut Findings) {
        for (code, at) in scan(&self.text) {
            let pointer = self
                .spans
                .iter()
                .rev()
                .find(|(start, _)| *start <= at)
                .map(|(_, p)| p.as_str())
                .unwrap_or_default();
            findings.push(code, pointer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> Vec<&'static str> {
        scan(text).into_iter().map(|(c, _)| c.as_str()).collect()
    }

    #[test]
    fn dsml_variants() {
        for t in [
            "<｜DSML｜tool_calls>",
            "<｜DSML｜function_calls>",
            "ok<‖DSML‖invoke name=\"x\">",
            "<｜｜DSML｜｜invoke>",
            "<|DSML|invoke name=\"x\">",
            "</｜DSML｜parameter>",
        ] {
            assert!(codes(t).contains(&"dsml_markup"), "{t}");
        }
        assert!(codes("the DSML format is documented").is_empty());
    }

    #[test]
    fn tags_tokens_and_json() {
        assert_eq!(codes("<tool_call>{}</tool_call>"), ["tool_call_markup"]);
        assert_eq!(codes("<Function_Call>x"), ["tool_call_markup"]);
        assert_eq!(codes("<function=rm>{}</function>"), ["tool_call_markup"]);
        assert_eq!(codes("<｜tool▁calls▁begin｜>"), ["special_token"]);
        assert_eq!(codes("<|python_tag|>x"), ["special_token"]);
        assert_eq!(codes("[TOOL_CALLS][]"), ["special_token"]);
        assert_eq!(
            codes(r#"I will call {"name": "refund", "arguments": {"amount": 5}}"#),
            ["json_call_in_text"]
        );
        assert_eq!(
            codes(r#"{"tool" :"x","parameters" : {}}"#),
            ["json_call_in_text"]
        );
        assert!(codes(r#"the "name" is "arguments""#).is_empty());
        assert!(codes("Plain prose about tools and functions.").is_empty());
        assert!(codes("").is_empty());
    }

    #[test]
    fn stream_fragments_join() {
        let mut buf = TextBuf::default();
        buf.push("ok<‖DS", "/0/a".into());
        buf.push("", "/1/a".into());
        buf.push("ML‖invoke name=\"x\">", "/2/a".into());
        let mut f = Findings::new(10);
        buf.scan_into(&mut f);
        let f = f.into_vec();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, FindingCode::DsmlMarkup);
        assert_eq!(f[0].pointer, "/0/a");
    }

    #[test]
    fn multibyte_windows_do_not_panic() {
        let text = format!("{{\"name\":1,{}\"args\":2", "é".repeat(600));
        let _ = scan(&text);
        let text = format!("{}\"args\":", "é".repeat(300));
        assert!(scan(&text).is_empty());
    }
}
