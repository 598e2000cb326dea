//! What a notice says: the held call's tool, user, session, risk, why it
//! was held (with the values the holding policies read, as approvers see
//! them on the page), a bounded and escaped rendering of its arguments (as the audit
//! log keeps them: canonical, secret fields replaced by their keyed
//! digest) and a link to its card. Everything in it comes from callers and
//! models, so each format escapes it for where it is read.

use toolgate_json::{canonical, Object, Value};
use toolgate_store::{Approval, ApprovalContext};

/// The most characters of a call's arguments a notice carries.
pub const MAX_ARGUMENT_CHARS: usize = 1000;
/// The most characters of a user, session or tool name a notice carries.
const MAX_NAME_CHARS: usize = 128;
/// The most characters of one value a holding policy read (a fact).
const MAX_FACT_CHARS: usize = 200;

/// What a notice is about, read from the store once per notice.
pub(crate) struct Held<'a> {
    pub(crate) approval: &'a Approval,
    pub(crate) why: &'a ApprovalContext,
    pub(crate) risk: Option<&'a str>,
    /// The card's address: the configured page URL and `#approval-ID`.
    pub(crate) link: Option<String>,
}

/// `text` cut to `max` characters (with `…`), and each character that
/// changes how the text around it reads or does not show (the page's and
/// the terminal's one table, [`toolgate::hidden`]) written `\u{…}`.
pub(crate) fn visible(text: &str, max: usize) -> (String, bool) {
    let mut out = String::with_capacity(text.len().min(max + 8));
    let mut cut = false;
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            cut = true;
            break;
        }
        if (c.is_control() && c != '\n') || toolgate::hidden::is_hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    (out, cut)
}

fn name(text: &str) -> Value<'static> {
    Value::String(visible(text, MAX_NAME_CHARS).0.into())
}

fn names(list: &[String]) -> Value<'static> {
    Value::Array(list.iter().map(|n| name(n)).collect())
}

/// The arguments as the audit log keeps them, bounded: the text and
/// whether it was cut.
fn arguments(held: &Held<'_>) -> Option<(String, bool)> {
    let text = held.why.asked.as_ref()?.arguments.as_deref()?;
    Some(visible(text, MAX_ARGUMENT_CHARS))
}

/// The webhook's JSON body (canonical: sorted members, escaped strings):
/// `{"type": "approval.pending", "approval": {…}}`.
pub(crate) fn webhook(held: &Held<'_>) -> String {
    let a = held.approval;
    let asked = held.why.asked.as_ref();
    let mut o = Object::new();
    o.insert("id", Value::String(a.id.to_string().into()));
    o.insert("tool", name(&a.tool));
    o.insert("user", name(&a.user));
    o.insert("session", a.session.as_deref().map_or(Value::Null, name));
    o.insert(
        "risk",
        held.risk
            .map_or(Value::Null, |r| Value::String(r.to_owned().into())),
    );
    o.insert(
        "reasons",
        asked.map_or(Value::Array(Vec::new()), |e| names(&e.reasons)),
    );
    o.insert(
        "policies",
        asked.map_or(Value::Array(Vec::new()), |e| names(&e.policies)),
    );
    let (args, cut) = arguments(held).map_or((Value::Null, false), |(t, cut)| {
        (Value::String(t.into()), cut)
    });
    o.insert("arguments", args);
    o.insert("arguments_truncated", Value::Bool(cut));
    o.insert(
        "facts",
        Value::Array(
            held.why
                .facts
                .iter()
                .map(|f| {
                    let mut fact = Object::new();
                    fact.insert("path", name(&f.path));
                    fact.insert(
                        "value",
                        Value::String(visible(&f.value, MAX_FACT_CHARS).0.into()),
                    );
                    Value::Object(fact)
                })
                .collect(),
        ),
    );
    o.insert(
        "approvers_needed",
        Value::Number(u64::from(a.quorum.approvers).into()),
    );
    o.insert(
        "created_at",
        Value::Number(a.created_at.unix_millis().into()),
    );
    o.insert(
        "expires_at",
        Value::Number(a.expires_at.unix_millis().into()),
    );
    o.insert(
        "link",
        held.link
            .clone()
            .map_or(Value::Null, |l| Value::String(l.into())),
    );
    let mut body = Object::new();
    body.insert("type", Value::String("approval.pending".into()));
    body.insert("approval", Value::Object(o));
    canonical::to_string(&Value::Object(body))
}

/// Text escaped for Slack's `mrkdwn`: `&`, `<` and `>` as entities (so no
/// text becomes a link, a mention such as `<!channel>`, or markup), and
/// backticks as `ˋ` so that a value cannot close its code span.
fn mrkdwn(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push('ˋ'),
            c => out.push(c),
        }
    }
    out
}

/// A Slack-compatible incoming-webhook message: `{"text"}` with the
/// held call in `mrkdwn`, every value from outside escaped.
pub(crate) fn slack(held: &Held<'_>) -> String {
    let a = held.approval;
    let asked = held.why.asked.as_ref();
    let field = |t: &str| mrkdwn(&visible(t, MAX_NAME_CHARS).0);
    let mut text = format!(
        "Approval #{} waits: `{}` for user `{}`",
        a.id,
        field(&a.tool),
        field(&a.user)
    );
    if let Some(s) = &a.session {
        text.push_str(&format!(" in session `{}`", field(s)));
    }
    if let Some(r) = held.risk {
        text.push_str(&format!(" ({r})"));
    }
    if let Some(e) = asked {
        let list = |l: &[String]| l.iter().map(|x| field(x)).collect::<Vec<_>>().join(", ");
        if !e.reasons.is_empty() {
            text.push_str(&format!("\nHeld for: {}", list(&e.reasons)));
        }
        if !e.policies.is_empty() {
            text.push_str(&format!("\nPolicies: {}", list(&e.policies)));
        }
    }
    for f in &held.why.facts {
        text.push_str(&format!(
            "\nPolicy read: `{}` = `{}`",
            field(&f.path),
            mrkdwn(&visible(&f.value, MAX_FACT_CHARS).0)
        ));
    }
    if a.quorum.approvers > 1 {
        text.push_str(&format!(
            "\nNeeds {} distinct approvers",
            a.quorum.approvers
        ));
    }
    if let Some((args, cut)) = arguments(held) {
        text.push_str(&format!(
            "\nArguments{}:\n```{}```",
            if cut { " (cut short)" } else { "" },
            mrkdwn(&args)
        ));
    }
    if let Some(link) = &held.link {
        // The configured page URL (the operator's), with the id: a link.
        text.push_str(&format!("\n<{}|Open the approval>", mrkdwn(link)));
    }
    let mut o = Object::new();
    o.insert("text", Value::String(text.into()));
    canonical::to_string(&Value::Object(o))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn values_are_escaped_and_bounded_for_each_reader() {
        let (v, cut) = visible("a\u{202e}b\u{0007}c\nd", 100);
        assert_eq!(v, "a\\u{202e}b\\u{7}c\nd");
        assert!(!cut);
        let (v, cut) = visible(&"x".repeat(2000), MAX_ARGUMENT_CHARS);
        assert_eq!(v.chars().count(), MAX_ARGUMENT_CHARS + 1);
        assert!(cut);
        assert_eq!(
            mrkdwn("<!channel> & `code` <https://evil|click>"),
            "&lt;!channel&gt; &amp; ˋcodeˋ &lt;https://evil|click&gt;"
        );
    }
}
