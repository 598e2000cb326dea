//! What `toolgate approvals show` prints after an approval's binding: the
//! arguments of the call that asked, why it was held, the approvers so
//! far, and what else the session did (its labels, the limits counting the
//! tool, its latest decisions). Every text from the store is escaped for
//! the terminal.

use std::io::Write;

use toolgate_store::ApprovalContext;

use crate::check::terminal_safe;
use crate::store_cmds::{display, time};

/// The most characters of the asking call's arguments printed.
const ARGUMENTS_CHARS: usize = 4096;

/// A list of names, escaped, or `-`.
fn names(list: &[String]) -> String {
    if list.is_empty() {
        "-".to_owned()
    } else {
        list.iter()
            .map(|n| display(n))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Writes `why` as `key: value` lines, then the session's recent
/// decisions one per line, newest first.
pub(crate) fn write(out: &mut impl Write, why: &ApprovalContext) -> std::io::Result<()> {
    let asked = why.asked.as_ref();
    writeln!(
        out,
        "arguments:  {}",
        asked
            .and_then(|e| e.arguments.as_deref())
            .map_or_else(|| "-".to_owned(), |t| terminal_safe(t, ARGUMENTS_CHARS))
    )?;
    writeln!(
        out,
        "call id:    {}",
        asked
            .and_then(|e| e.call_id.as_deref())
            .map_or_else(|| "-".to_owned(), display)
    )?;
    writeln!(
        out,
        "held for:   {}",
        asked.map_or_else(|| "-".to_owned(), |e| names(&e.reasons))
    )?;
    writeln!(
        out,
        "policies:   {}",
        asked.map_or_else(|| "-".to_owned(), |e| names(&e.policies))
    )?;
    for f in &why.facts {
        writeln!(
            out,
            "policy read: {} = {}",
            display(&f.path),
            terminal_safe(&f.value, ARGUMENTS_CHARS)
        )?;
    }
    let approvers: Vec<String> = why
        .votes
        .iter()
        .map(|v| format!("{} at {}", display(&v.approver), time(v.at)))
        .collect();
    writeln!(out, "approved by: {}", names(&approvers))?;
    writeln!(out, "labels:     {}", names(&why.labels))?;
    for u in &why.usage {
        writeln!(
            out,
            "usage:      {} (per {}): {} of {} in the last {} s",
            display(&u.name),
            u.scope,
            u.used,
            u.cap,
            u.window_seconds
        )?;
    }
    if why.recent.is_empty() {
        return writeln!(out, "recent:     -");
    }
    writeln!(out, "recent:")?;
    for r in &why.recent {
        let e = &r.entry;
        let mut line = format!(
            "  {}  {}  {}  {}",
            r.seq,
            time(e.time),
            e.verdict.as_str(),
            e.tool.as_deref().map_or_else(|| "-".to_owned(), display)
        );
        if let Some(call) = &e.call_id {
            line.push_str(&format!("  call={}", display(call)));
        }
        if !e.reasons.is_empty() {
            line.push_str(&format!("  reasons={}", names(&e.reasons)));
        }
        if !e.policies.is_empty() {
            line.push_str(&format!("  policies={}", names(&e.policies)));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
