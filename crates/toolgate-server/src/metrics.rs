//! Prometheus metrics, written by hand in the text exposition format.
//!
//! Label values come from bounded sets only: the verdicts, and the tool
//! names the config declares (a tool name the model invented counts under
//! [`OTHER_TOOL`], a response without calls under `""`), so a scrape's size
//! does not depend on what models send. The gauges (pending approvals, kill
//! switch) are read with one aggregate query at most once per
//! [`GAUGE_TTL`], however often the page is scraped. The `[[limit]]`
//! gauges ([`render_limits`]) are labelled by the configured limits' names
//! only: never a user, session or token, whose values the callers choose.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// The `tool` label of every call whose tool is not configured.
pub const OTHER_TOOL: &str = "(other)";

/// How long the gauges read from the store are served before they are
/// read again.
pub const GAUGE_TTL: Duration = Duration::from_secs(1);

/// The most `(verdict, tool)` series kept: configured tools only ever reach
/// it when reloads keep renaming them; past it, new tools count as
/// [`OTHER_TOOL`].
const MAX_SERIES: usize = 4096;

/// The gauges read from the store for a scrape (`None`: the store did
/// not answer; the gauge is left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Unexpired pending approvals.
    pub pending: Option<u64>,
    /// The age of the oldest pending approval, in seconds (`Some(0)` when
    /// none is pending).
    pub oldest_pending_seconds: Option<u64>,
    /// The kill switch's mode.
    pub kill_mode: Option<String>,
}

/// A latency histogram over [`BUCKETS`].
#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; 12],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn record(&self, d: Duration) {
        let secs = d.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} histogram");
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "{name}_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = Duration::from_micros(self.sum_micros.load(Ordering::Relaxed)).as_secs_f64();
        let _ = writeln!(out, "{name}_sum {sum}");
        let _ = writeln!(out, "{name}_count {count}");
    }
}

/// The service's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    /// (verdict, tool) → decisions.
    decisions: Mutex<BTreeMap<(String, String), u64>>,
    /// Stable code → decisions it decided (a fixed vocabulary).
    codes: Mutex<BTreeMap<&'static str, u64>>,
    latency: Histogram,
    store: Histogram,
    unauthorized: AtomicU64,
    forbidden: AtomicU64,
}

impl Metrics {
    /// Counts one decision with `verdict` of `tool`: a configured tool's
    /// name, `""` (no call), or anything else, counted as [`OTHER_TOOL`]
    /// unless `configured` says it is a configured tool.
    pub fn decision(&self, verdict: &str, tool: &str, configured: bool) {
        let tool = if configured || tool.is_empty() {
            tool
        } else {
            OTHER_TOOL
        };
        if let Ok(mut map) = self.decisions.lock() {
            let key = (verdict.to_owned(), tool.to_owned());
            if let Some(n) = map.get_mut(&key) {
                *n += 1;
            } else if map.len() < MAX_SERIES {
                map.insert(key, 1);
            } else {
                *map.entry((verdict.to_owned(), OTHER_TOOL.to_owned()))
                    .or_insert(0) += 1;
            }
        }
    }

    /// Counts one decision that was not an allow, by its first reason's
    /// stable code.
    pub fn code(&self, code: &'static str) {
        if let Ok(mut map) = self.codes.lock() {
            *map.entry(code).or_insert(0) += 1;
        }
    }

    /// Records how long one of the service's store calls took.
    pub fn store_call(&self, d: Duration) {
        self.store.record(d);
    }

    /// Counts one request refused with 401 or 403.
    pub fn refusal(&self, status: axum::http::StatusCode) {
        if status == axum::http::StatusCode::FORBIDDEN {
            self.forbidden.fetch_add(1, Ordering::Relaxed);
        } else {
            self.unauthorized.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Records how long one decide request took.
    pub fn latency(&self, d: Duration) {
        self.latency.record(d);
    }

    /// The exposition text, with the gauges read from the store.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        out.push_str("# HELP toolgate_decisions_total Decisions by verdict and tool.\n");
        out.push_str("# TYPE toolgate_decisions_total counter\n");
        if let Ok(map) = self.decisions.lock() {
            for ((verdict, tool), n) in map.iter() {
                let _ = writeln!(
                    out,
                    "toolgate_decisions_total{{verdict=\"{}\",tool=\"{}\"}} {n}",
                    escape(verdict),
                    escape(tool)
                );
            }
        }
        out.push_str(
            "# HELP toolgate_decision_codes_total Decisions other than allow by their first reason's stable code.\n",
        );
        out.push_str("# TYPE toolgate_decision_codes_total counter\n");
        if let Ok(map) = self.codes.lock() {
            for (code, n) in map.iter() {
                let _ = writeln!(out, "toolgate_decision_codes_total{{code=\"{code}\"}} {n}");
            }
        }
        self.latency.render(
            &mut out,
            "toolgate_decision_seconds",
            "Latency of decide requests.",
        );
        self.store.render(
            &mut out,
            "toolgate_store_seconds",
            "Latency of the service's own store calls (approvals, kill switch, audit reads, gauges).",
        );
        out.push_str(
            "# HELP toolgate_refused_requests_total Requests refused for their token (401) or role (403).\n",
        );
        out.push_str("# TYPE toolgate_refused_requests_total counter\n");
        let _ = writeln!(
            out,
            "toolgate_refused_requests_total{{status=\"401\"}} {}",
            self.unauthorized.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "toolgate_refused_requests_total{{status=\"403\"}} {}",
            self.forbidden.load(Ordering::Relaxed)
        );
        if let Some(p) = gauges.pending {
            out.push_str("# HELP toolgate_pending_approvals Approvals waiting for a human.\n");
            out.push_str("# TYPE toolgate_pending_approvals gauge\n");
            let _ = writeln!(out, "toolgate_pending_approvals {p}");
        }
        if let Some(age) = gauges.oldest_pending_seconds {
            out.push_str("# HELP toolgate_oldest_pending_approval_seconds Age of the oldest approval waiting for a human (0: none).\n");
            out.push_str("# TYPE toolgate_oldest_pending_approval_seconds gauge\n");
            let _ = writeln!(out, "toolgate_oldest_pending_approval_seconds {age}");
        }
        if let Some(mode) = gauges.kill_mode.as_deref() {
            out.push_str("# HELP toolgate_kill_switch The kill switch: 1 for the current mode.\n");
            out.push_str("# TYPE toolgate_kill_switch gauge\n");
            for m in ["off", "deny_writes", "deny_all"] {
                let on = u8::from(m == mode);
                let _ = writeln!(out, "toolgate_kill_switch{{mode=\"{m}\"}} {on}");
            }
        }
        out
    }
}

/// The notices of held calls, when sinks are configured: those dropped
/// because the queue was full (a counter) and those this process claimed
/// and has not finished delivering (a gauge).
pub fn render_notices(out: &mut String, dropped: u64, pending: u64) {
    out.push_str(
        "# HELP toolgate_notices_dropped_total Notices of held calls dropped because the queue was full.\n",
    );
    out.push_str("# TYPE toolgate_notices_dropped_total counter\n");
    let _ = writeln!(out, "toolgate_notices_dropped_total {dropped}");
    out.push_str(
        "# HELP toolgate_notices_pending Notices of held calls claimed by this process and not yet delivered or failed.\n",
    );
    out.push_str("# TYPE toolgate_notices_pending gauge\n");
    let _ = writeln!(out, "toolgate_notices_pending {pending}");
}

/// The spans of the OTLP export by outcome, when telemetry is on:
/// exported, failed (the receiver did not take them), dropped (the queue
/// was full; a decision never waits for the export).
pub fn render_telemetry(out: &mut String, telemetry: &toolgate_telemetry::Telemetry) {
    if !telemetry.is_on() {
        return;
    }
    out.push_str("# HELP toolgate_telemetry_spans_total Spans of the OTLP export by outcome.\n");
    out.push_str("# TYPE toolgate_telemetry_spans_total counter\n");
    for (outcome, n) in [
        ("exported", telemetry.exported_spans()),
        ("failed", telemetry.failed_spans()),
        ("dropped", telemetry.dropped_spans()),
    ] {
        let _ = writeln!(
            out,
            "toolgate_telemetry_spans_total{{outcome=\"{outcome}\"}} {n}"
        );
    }
}

/// One configured `[[limit]]`'s gauges.
#[derive(Debug, Clone)]
pub struct LimitGauge {
    /// Its name (a configured one: `[a-z0-9_]`).
    pub name: String,
    /// Whose calls it counts: `user`, `session`, `token` or `global`.
    pub per: &'static str,
    /// Its cap (calls, or the budget's sum).
    pub cap: String,
    /// The window, in seconds.
    pub window_seconds: u64,
    /// For a `global` limit, what counts in its window now (`None`: not
    /// global, or the store did not answer).
    pub used: Option<String>,
}

/// The exposition text of the `[[limit]]` gauges: each configured limit's
/// cap and window, and the usage of the `global` ones (the only keys that
/// are not a caller's).
pub fn render_limits(limits: &[LimitGauge]) -> String {
    let mut out = String::new();
    if limits.is_empty() {
        return out;
    }
    out.push_str("# HELP toolgate_limit_cap A configured limit's cap: calls, or a budget's sum.\n");
    out.push_str("# TYPE toolgate_limit_cap gauge\n");
    for l in limits {
        let _ = writeln!(
            out,
            "toolgate_limit_cap{{limit=\"{}\",per=\"{}\"}} {}",
            escape(&l.name),
            l.per,
            l.cap
        );
    }
    out.push_str("# HELP toolgate_limit_window_seconds A configured limit's sliding window.\n");
    out.push_str("# TYPE toolgate_limit_window_seconds gauge\n");
    for l in limits {
        let _ = writeln!(
            out,
            "toolgate_limit_window_seconds{{limit=\"{}\"}} {}",
            escape(&l.name),
            l.window_seconds
        );
    }
    if limits.iter().any(|l| l.used.is_some()) {
        out.push_str(
            "# HELP toolgate_limit_global_used What counts now in a global limit's window.\n",
        );
        out.push_str("# TYPE toolgate_limit_global_used gauge\n");
        for l in limits {
            if let Some(used) = &l.used {
                let _ = writeln!(
                    out,
                    "toolgate_limit_global_used{{limit=\"{}\"}} {used}",
                    escape(&l.name)
                );
            }
        }
    }
    out
}

/// A label value escaped as the exposition format requires.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
