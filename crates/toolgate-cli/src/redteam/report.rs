//! The red team's report: per tool and class, how many attacks were tried
//! and let through, how many valid calls were tried and denied; then every
//! failing case. As text, as one JSON document, or as JUnit XML (one test
//! suite per tool, one test case per class and format).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolgate::{Decisions, Verdict};

use super::attacks::Class;
use super::wire::{quote, Wire};
use super::Expect;

/// How many failures the text report lists one by one (all are written
/// to the cases folder, and listed in the JSON and JUnit reports).
const MAX_LISTED: usize = 40;

/// One decided case.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The configured tool it was made for.
    pub tool: String,
    /// Its class.
    pub class: Class,
    /// What it tried.
    pub label: String,
    /// The format (`None`: a step of a sequence, OpenAI JSON).
    pub wire: Option<Wire>,
    /// What it had to come to.
    pub expect: Expect,
    /// What it came to: the verdicts of its calls, or the body's refusal.
    pub got: String,
    /// Whether it came to what it had to.
    pub pass: bool,
    /// The body decided.
    pub body: String,
    /// The user it was decided as.
    pub user: String,
    /// Its session.
    pub session: String,
    /// Its number in the run, from 1.
    pub seq: usize,
}

impl Outcome {
    /// The outcome of `d` for a case.
    #[allow(
        clippy::too_many_arguments,
        reason = "one outcome's fields, named at each call"
    )]
    pub fn new(
        tool: &str,
        class: Class,
        label: &str,
        wire: Option<Wire>,
        expect: Expect,
        d: &Decisions,
        body: String,
        user: &str,
        session: &str,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            class,
            label: label.to_owned(),
            wire,
            expect,
            got: summary(d),
            pass: expect.holds(d),
            body,
            user: user.to_owned(),
            session: session.to_owned(),
            seq: 0,
        }
    }

    /// Whether it is an attack (not a valid call).
    pub fn is_attack(&self) -> bool {
        self.class != Class::Valid
    }

    fn wire_name(&self) -> &'static str {
        self.wire.map_or("openai (sequence)", Wire::as_str)
    }

    /// The body's and the context's file names in `dir`.
    pub fn case_files(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let tool: String = self
            .tool
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
        let stem = format!(
            "{:04}-{tool}-{}-{}",
            self.seq,
            self.class.as_str(),
            self.wire.map_or("openai", Wire::as_str)
        );
        let ext = if self.wire.is_some_and(Wire::streamed) {
            "sse"
        } else {
            "json"
        };
        (
            dir.join(format!("{stem}.{ext}")),
            dir.join(format!("{stem}.context.json")),
        )
    }
}

/// `allow`, `deny (code@pointer …)`, `no calls`, `refused (code)`, one per call.
fn summary(d: &Decisions) -> String {
    if let Some(r) = d.rejected() {
        return format!("body refused ({})", r.code);
    }
    if d.decisions().is_empty() {
        return "no calls".to_owned();
    }
    d.decisions()
        .iter()
        .map(|c| {
            let reasons: Vec<String> = c
                .reasons()
                .iter()
                .map(|r| {
                    format!(
                        "{}@{}",
                        r.code,
                        super::super::check::terminal_safe(&r.pointer, 40)
                    )
                })
                .collect();
            if reasons.is_empty() || c.verdict() == Verdict::Allow {
                c.verdict().to_string()
            } else {
                format!("{} ({})", c.verdict(), reasons.join(" "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    attacks: usize,
    attacks_through: usize,
    valid: usize,
    valid_denied: usize,
}

/// Every outcome of a run.
pub struct Report {
    seed: u64,
    user: String,
    outcomes: Vec<Outcome>,
    untested: Vec<(String, String)>,
}

impl Report {
    /// An empty report.
    pub fn new(seed: u64, user: &str) -> Self {
        Self {
            seed,
            user: user.to_owned(),
            outcomes: Vec::new(),
            untested: Vec::new(),
        }
    }

    /// Adds an outcome.
    pub fn push(&mut self, mut o: Outcome) {
        o.seq = self.outcomes.len() + 1;
        self.outcomes.push(o);
    }

    /// Notes what could not be tried for a tool (`""`: the whole config).
    pub fn untested(&mut self, tool: &str, why: &str) {
        self.untested.push((tool.to_owned(), why.to_owned()));
    }

    /// The failing outcomes.
    pub fn failures(&self) -> Vec<&Outcome> {
        self.outcomes.iter().filter(|o| !o.pass).collect()
    }

    fn tallies(&self) -> BTreeMap<(&str, Class), Tally> {
        let mut t: BTreeMap<(&str, Class), Tally> = BTreeMap::new();
        for o in &self.outcomes {
            let e = t.entry((o.tool.as_str(), o.class)).or_default();
            if o.is_attack() {
                e.attacks += 1;
                e.attacks_through += usize::from(!o.pass);
            } else {
                e.valid += 1;
                e.valid_denied += usize::from(!o.pass);
            }
        }
        t
    }

    fn totals(&self) -> Tally {
        self.tallies()
            .values()
            .fold(Tally::default(), |a, t| Tally {
                attacks: a.attacks + t.attacks,
                attacks_through: a.attacks_through + t.attacks_through,
                valid: a.valid + t.valid,
                valid_denied: a.valid_denied + t.valid_denied,
            })
    }

    /// The text report.
    pub fn to_text(&self, cases: &Path, config: &Path) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "toolgate redteam: seed {}, attacking as user `{}`",
            self.seed, self.user
        );
        let mut tool = "";
        for ((t, class), tally) in self.tallies() {
            if t != tool {
                let _ = writeln!(out, "\ntool `{t}`:");
                tool = t;
            }
            if class == Class::Valid {
                let _ = writeln!(
                    out,
                    "  {:<16} {:>5} valid calls, {} denied",
                    class.as_str(),
                    tally.valid,
                    tally.valid_denied
                );
            } else {
                let _ = writeln!(
                    out,
                    "  {:<16} {:>5} attacks, {} allowed",
                    class.as_str(),
                    tally.attacks,
                    tally.attacks_through
                );
            }
        }
        if !self.untested.is_empty() {
            let _ = writeln!(out, "\nnot tried:");
            for (tool, why) in &self.untested {
                let who = if tool.is_empty() {
                    String::new()
                } else {
                    format!("tool `{tool}`: ")
                };
                let _ = writeln!(out, "  {who}{why}");
            }
        }
        let failures = self.failures();
        if !failures.is_empty() {
            let _ = writeln!(out, "\nfailures:");
            for f in failures.iter().take(MAX_LISTED) {
                let what = if f.is_attack() {
                    "attack let through"
                } else {
                    "valid call denied"
                };
                let (body, context) = f.case_files(cases);
                let _ = writeln!(
                    out,
                    "  FAIL {what}: tool `{}` {} [{}] {}: expected {}, got {}\n       replay: toolgate check --config {} --store sqlite::memory: --context {} {}",
                    f.tool,
                    f.class.as_str(),
                    f.wire_name(),
                    super::super::check::terminal_safe(&f.label, 80),
                    f.expect.as_str(),
                    f.got,
                    config.display(),
                    context.display(),
                    body.display()
                );
                if f.wire.is_none() {
                    let _ = writeln!(out, "       (a step of a sequence: it depends on the steps before it in its session)");
                }
            }
        }
        if failures.len() > MAX_LISTED {
            let _ = writeln!(
                out,
                "  … and {} more failures, each written to `{}`",
                failures.len() - MAX_LISTED,
                cases.display()
            );
        }
        let t = self.totals();
        let _ = writeln!(
            out,
            "\nredteam: {} attacks, {} allowed; {} valid calls, {} denied",
            t.attacks, t.attacks_through, t.valid, t.valid_denied
        );
        out
    }

    /// The JSON report: `{"seed", "user", "totals", "tools": [{"tool",
    /// "classes": [{"class", "attacks", "allowed", "valid", "denied"}]}],
    /// "untested": [{"tool", "reason"}], "failures": [{"tool", "class",
    /// "format", "label", "expected", "got", "body", "context"}]}`.
    pub fn to_json(&self, cases: &Path) -> String {
        let mut tools: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for ((t, class), tally) in self.tallies() {
            tools.entry(t).or_default().push(format!(
                r#"{{"allowed":{},"attacks":{},"class":{},"denied":{},"valid":{}}}"#,
                tally.attacks_through,
                tally.attacks,
                quote(class.as_str()),
                tally.valid_denied,
                tally.valid
            ));
        }
        let tools: Vec<String> = tools
            .into_iter()
            .map(|(t, classes)| {
                format!(
                    r#"{{"classes":[{}],"tool":{}}}"#,
                    classes.join(","),
                    quote(t)
                )
            })
            .collect();
        let untested: Vec<String> = self
            .untested
            .iter()
            .map(|(t, why)| format!(r#"{{"reason":{},"tool":{}}}"#, quote(why), quote(t)))
            .collect();
        let failures: Vec<String> = self
            .failures()
            .iter()
            .map(|f| {
                let (body, context) = f.case_files(cases);
                format!(
                    r#"{{"body":{},"class":{},"context":{},"expected":{},"format":{},"got":{},"label":{},"tool":{}}}"#,
                    quote(&body.display().to_string()),
                    quote(f.class.as_str()),
                    quote(&context.display().to_string()),
                    quote(f.expect.as_str()),
                    quote(f.wire_name()),
                    quote(&f.got),
                    quote(&f.label),
                    quote(&f.tool)
                )
            })
            .collect();
        let t = self.totals();
        format!(
            "{{\"failures\":[{}],\"seed\":{},\"tools\":[{}],\"totals\":{{\"allowed\":{},\"attacks\":{},\"denied\":{},\"valid\":{}}},\"untested\":[{}],\"user\":{}}}\n",
            failures.join(","),
            self.seed,
            tools.join(","),
            t.attacks_through,
            t.attacks,
            t.valid_denied,
            t.valid,
            untested.join(","),
            quote(&self.user)
        )
    }

    /// JUnit XML: a suite per tool, a test case per outcome.
    pub fn to_junit(&self) -> String {
        let mut by_tool: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
        for o in &self.outcomes {
            by_tool.entry(&o.tool).or_default().push(o);
        }
        let t = self.totals();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"toolgate redteam\" tests=\"{}\" failures=\"{}\">",
            self.outcomes.len(),
            t.attacks_through + t.valid_denied
        );
        for (tool, outcomes) in by_tool {
            let failures = outcomes.iter().filter(|o| !o.pass).count();
            let _ = writeln!(
                out,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">",
                xml(&format!("redteam.{tool}")),
                outcomes.len()
            );
            for o in outcomes {
                let _ = write!(
                    out,
                    "    <testcase classname=\"{}\" name=\"{}\"",
                    xml(&format!("redteam.{tool}.{}", o.class.as_str())),
                    xml(&format!("{} [{}] #{}", o.label, o.wire_name(), o.seq))
                );
                if o.pass {
                    let _ = writeln!(
                        out,
                        ">\n      <system-out>{}</system-out>\n    </testcase>",
                        xml(&format!("got {}", o.got))
                    );
                } else {
                    let _ = writeln!(
                        out,
                        ">\n      <failure message=\"{}\"/>\n    </testcase>",
                        xml(&format!("expected {}, got {}", o.expect.as_str(), o.got))
                    );
                }
            }
            out.push_str("  </testsuite>\n");
        }
        out.push_str("</testsuites>\n");
        out
    }
}

/// Text for an XML attribute: markup escaped, characters XML 1.0 cannot
/// hold written as `\u{…}`.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c.is_control() && !matches!(c, '\t')) || super::super::check::hidden(c) => {
                out.extend(c.escape_unicode());
            }
            c => out.push(c),
        }
    }
    out
}
