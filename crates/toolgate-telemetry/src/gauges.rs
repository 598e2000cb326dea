//! The store's gauges over OTLP: the approvals waiting for a human and
//! the age of the oldest, the kill switch's mode, and how long reading
//! them from the store took. Read with one pass over the store at most
//! once per [`GAUGE_TTL`] (each export's callbacks share it), on the
//! metric reader's own thread: never on a decision's path. Their
//! attributes are bounded: the kill switch's three modes, nothing else.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use opentelemetry::metrics::Meter;
use opentelemetry::KeyValue;
use toolgate_store::{ApprovalFilter, ApprovalState, KillMode, Store};

/// How long one reading of the store is served to the callbacks.
const GAUGE_TTL: Duration = Duration::from_secs(1);

/// The kill switch's modes (the `mode` attribute's only values).
const MODES: [KillMode; 3] = [KillMode::Off, KillMode::DenyWrites, KillMode::DenyAll];

/// One reading (`None`: the store did not answer; the gauge is left out).
#[derive(Debug, Clone, Copy, Default)]
struct Reading {
    pending: Option<u64>,
    oldest_pending_seconds: Option<u64>,
    kill: Option<KillMode>,
    took: Duration,
}

/// The store the gauges read, and the last reading.
struct Source {
    store: Arc<dyn Store>,
    last: Mutex<Option<(Instant, Reading)>>,
}

impl Source {
    fn reading(&self) -> Reading {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, r)) = *last {
            if at.elapsed() < GAUGE_TTL {
                return r;
            }
        }
        let started = Instant::now();
        let pending_filter = ApprovalFilter::new().state(ApprovalState::Pending);
        let pending = self.store.count_approvals(&pending_filter).ok();
        let oldest_pending_seconds = self
            .store
            .list_approvals(&ApprovalFilter::new().state(ApprovalState::Pending).limit(1))
            .ok()
            .map(|a| {
                a.first().map_or(0, |a| {
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
                    u64::try_from(now.saturating_sub(a.created_at.unix_seconds())).unwrap_or(0)
                })
            });
        let kill = self.store.kill_switch().ok().map(|k| k.mode);
        let r = Reading {
            pending,
            oldest_pending_seconds,
            kill,
            took: started.elapsed(),
        };
        *last = Some((Instant::now(), r));
        r
    }
}

/// Registers the gauges on `meter`, read from `store`.
pub(crate) fn observe(meter: &Meter, store: Arc<dyn Store>) {
    let source = Arc::new(Source {
        store,
        last: Mutex::new(None),
    });
    let s = Arc::clone(&source);
    meter
        .u64_observable_gauge("toolgate.approvals.pending")
        .with_description("Approvals waiting for a human")
        .with_callback(move |o| {
            if let Some(n) = s.reading().pending {
                o.observe(n, &[]);
            }
        })
        .build();
    let s = Arc::clone(&source);
    meter
        .u64_observable_gauge("toolgate.approvals.oldest_pending.age")
        .with_description("Age of the oldest approval waiting for a human (0: none)")
        .with_unit("s")
        .with_callback(move |o| {
            if let Some(n) = s.reading().oldest_pending_seconds {
                o.observe(n, &[]);
            }
        })
        .build();
    let s = Arc::clone(&source);
    meter
        .u64_observable_gauge("toolgate.kill_switch")
        .with_description("The kill switch: 1 for the current mode, 0 for the others")
        .with_callback(move |o| {
            if let Some(mode) = s.reading().kill {
                for m in MODES {
                    o.observe(u64::from(m == mode), &[KeyValue::new("mode", m.as_str())]);
                }
            }
        })
        .build();
    let s = source;
    meter
        .f64_observable_gauge("toolgate.store.read.duration")
        .with_description("How long the last reading of these gauges took the store")
        .with_unit("s")
        .with_callback(move |o| {
            o.observe(s.reading().took.as_secs_f64(), &[]);
        })
        .build();
}
