//! The running totals a store keeps per limit key (so that a decision
//! reads one row, not the window's events) agree with the events it holds:
//! under concurrent writers on two stores on one database, across window
//! edges on the manual clock, and for keys whose totals are missing (counted
//! before the totals were kept). Every body runs on SQLite and PostgreSQL.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::Db;
use toolgate::config::Config;
use toolgate::limit::Amount;
use toolgate::{Context, Decisions, Format, Verdict};
use toolgate_store::{Clock, ManualClock, Store, StoreGate, Timestamp};

const CONFIG: &str = r#"
[authorization]
mode = "none"

[[tool]]
name = "refund"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"amount":{"type":"number","minimum":0}},"required":["amount"],"additionalProperties":false}'

[[limit]]
name = "day_total"
tools = ["refund"]
per = "user"
sum = "/amount"
max = "1000000"
window_seconds = 3600

[[limit]]
name = "minute_total"
tools = ["refund"]
per = "user"
sum = "/amount"
max = "100.00"
window_seconds = 60

[[limit]]
name = "refunds"
tools = ["refund"]
per = "session"
calls = 5
window_seconds = 60
"#;

const T0: i64 = 1_767_225_600;

fn store_gate(store: Box<dyn Store>, clock: &ManualClock) -> StoreGate {
    let config = Config::parse(CONFIG, "/nonexistent/toolgate.toml").unwrap();
    StoreGate::from_config(&config, Arc::from(store))
        .unwrap()
        .with_clock(Arc::new(clock.clone()))
}

fn refund(g: &StoreGate, user: &str, session: &str, amount: &str) -> Decisions {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let body = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{i}","type":"function","function":{{"name":"refund","arguments":"{{\"amount\":{amount}}}"}}}}]}}}}]}}"#
    );
    g.decide_and_record(
        body.as_bytes(),
        Format::Auto,
        &Context::new(user, session, 1),
    )
}

fn refund_id(g: &StoreGate, session: &str, id: &str, amount: &str) -> Decisions {
    let body = format!(
        r#"{{"choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"{id}","type":"function","function":{{"name":"refund","arguments":"{{\"amount\":{amount}}}"}}}}]}}}}]}}"#
    );
    g.decide_and_record(
        body.as_bytes(),
        Format::Auto,
        &Context::new("alice", session, 1),
    )
}

fn verdict(d: &Decisions) -> (Verdict, Vec<String>) {
    let d = &d.decisions()[0];
    (
        d.verdict(),
        d.reasons()
            .iter()
            .map(|r| r.code.as_str().to_owned())
            .collect(),
    )
}

fn a(s: &str) -> Amount {
    Amount::parse(s).unwrap()
}

fn sum(events: &[(Timestamp, Amount)]) -> Amount {
    events
        .iter()
        .fold(Amount::ZERO, |s, (_, a)| s.checked_add(*a).unwrap())
}

/// The key's running total agrees with its events: for every window start
/// around each event it holds (before, at, after: whole, and with events
/// that have left the window but are not forgotten yet), the store's
/// `limit_used` is the exact sum of `limit_events`; its count of events is
/// theirs. Returns the sum of the events after `since`.
fn agree(db: &Db, store: &dyn Store, key: &str, since: Timestamp) -> Amount {
    let all = store
        .limit_events(key, Timestamp::from_unix_millis(i64::MIN))
        .unwrap();
    let mut starts: Vec<i64> = all
        .iter()
        .flat_map(|(at, _)| {
            let ms = at.unix_millis();
            [ms - 1, ms, ms + 1]
        })
        .collect();
    starts.push(since.unix_millis());
    starts.push(i64::MIN);
    for start in starts {
        let start = Timestamp::from_unix_millis(start);
        let events = store.limit_events(key, start).unwrap();
        let used = store.limit_used(key, start).unwrap();
        assert_eq!(
            used,
            Some(sum(&events)),
            "{key} after {start:?}: {events:?}"
        );
    }
    let calls = db.query_i64(&format!("SELECT calls FROM limit_keys WHERE key = '{key}'"));
    assert_eq!(calls, Some(i64::try_from(all.len()).unwrap()), "{key}");
    sum(&store.limit_events(key, since).unwrap())
}

fn minus(now: Timestamp, seconds: i64) -> Timestamp {
    Timestamp::from_unix_millis(now.unix_millis() - seconds * 1000)
}

/// Two stores on one database (two replicas, or two processes on one
/// SQLite file), 16 refunds at once per round of decimal amounts of mixed
/// precision, for two users, the clock 25 s on between rounds so that the
/// minute's window slides and its oldest events are forgotten while others
/// are written. After every round each key's running total agrees with its
/// events, the minute's budget was never crossed, and every allowed call
/// (and no other) is counted.
fn running_totals_agree_with_the_events_under_concurrent_writers(db: &Db) {
    let clock = ManualClock::new(Timestamp::from_unix_seconds(T0));
    let a_gate = store_gate(db.open(&clock), &clock);
    let b_gate = store_gate(db.open(&clock), &clock);
    const CALLS: usize = 16;
    const AMOUNTS: [&str; 6] = ["0.01", "9.99", "3", "12.5", "0.333", "7.125"];
    let mut allowed = [0usize; 2];
    for round in 0..6 {
        let barrier = Barrier::new(CALLS);
        let verdicts: Vec<(usize, Verdict, Vec<String>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..CALLS)
                .map(|i| {
                    let g = if i % 2 == 0 { &a_gate } else { &b_gate };
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        let user = i % 4 / 2;
                        let d = refund(
                            g,
                            ["alice", "bob"][user],
                            &format!("r{round}-{i}"),
                            AMOUNTS[(i + round) % AMOUNTS.len()],
                        );
                        let (v, reasons) = verdict(&d);
                        (user, v, reasons)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (user, v, reasons) in &verdicts {
            match v {
                Verdict::Allow => allowed[*user] += 1,
                _ => assert_eq!(reasons, &["budget_exceeded"], "{verdicts:?}"),
            }
        }
        let now = clock.now();
        for store in [a_gate.store(), b_gate.store()] {
            for user in ["alice", "bob"] {
                let minute = agree(
                    db,
                    store.as_ref(),
                    &format!("minute_total/user/{user}"),
                    minus(now, 60),
                );
                assert!(minute <= a("100.00"), "{user}: {minute}");
                agree(
                    db,
                    store.as_ref(),
                    &format!("day_total/user/{user}"),
                    minus(now, 3600),
                );
            }
        }
        clock.advance(Duration::from_secs(25));
    }
    // The day's window holds every allowed call; each was counted once.
    for (user, n) in ["alice", "bob"].iter().zip(allowed) {
        let day = a_gate
            .store()
            .limit_events(
                &format!("day_total/user/{user}"),
                Timestamp::from_unix_seconds(0),
            )
            .unwrap();
        assert_eq!(day.len(), n, "{user}");
    }
    // Some calls were refused (the minute's cap is 100.00), some allowed.
    assert!(allowed.iter().all(|n| *n > 0 && *n < 48), "{allowed:?}");
}

/// Across a window's edge on the manual clock: one millisecond before it
/// the oldest refund still counts; at the edge it has left the window (the
/// total less its amount, before the store forgets it) and the next call
/// fits exactly; a charge then forgets it. Decisions are those the events
/// give, and the totals agree with the events at every step.
fn running_totals_follow_the_window_edge(db: &Db) {
    let clock = ManualClock::new(Timestamp::from_unix_seconds(T0));
    let g = store_gate(db.open(&clock), &clock);
    let store = Arc::clone(g.store());
    let key = "minute_total/user/alice";
    let step = |amount: &str, want: Verdict| {
        let d = refund(&g, "alice", "s", amount);
        assert_eq!(verdict(&d).0, want, "{amount} at {:?}", clock.now());
        let used = agree(db, store.as_ref(), key, minus(clock.now(), 60));
        (d, used)
    };
    step("60.10", Verdict::Allow);
    clock.advance(Duration::from_secs(30));
    let (_, used) = step("39.9", Verdict::Allow);
    assert_eq!(used, a("100"));
    // 1 ms before the first refund leaves: still full, retry in 1 s.
    clock.set(Timestamp::from_unix_millis(T0 * 1000 + 59_999));
    let (d, _) = step("0.01", Verdict::Deny);
    assert_eq!(d.decisions()[0].retry_after(), Some(1));
    // At the edge: 39.9 counts; the first is still stored until a charge.
    clock.set(Timestamp::from_unix_seconds(T0 + 60));
    assert_eq!(
        store.limit_used(key, minus(clock.now(), 60)).unwrap(),
        Some(a("39.9"))
    );
    assert_eq!(
        store
            .limit_events(key, Timestamp::from_unix_seconds(0))
            .unwrap()
            .len(),
        2
    );
    let (_, used) = step("60.1", Verdict::Allow);
    assert_eq!(used, a("100"));
    // The charge forgot the refund that left the window.
    let held = store
        .limit_events(key, Timestamp::from_unix_seconds(0))
        .unwrap();
    assert_eq!(held.len(), 2, "{held:?}");
    step("0.01", Verdict::Deny);
    // Both left (t0+30 and t0+60): the whole cap is free again.
    clock.set(Timestamp::from_unix_seconds(T0 + 120));
    assert_eq!(
        store.limit_used(key, minus(clock.now(), 60)).unwrap(),
        Some(Amount::ZERO)
    );
    let (_, used) = step("100.00", Verdict::Allow);
    assert_eq!(used, a("100"));
    // The rate limit per session: 5 calls a minute, the sixth refused.
    clock.advance(Duration::from_secs(61));
    for i in 0..5 {
        let d = refund(&g, "carol", "q", "1");
        assert_eq!(verdict(&d).0, Verdict::Allow, "call {i}");
    }
    let d = refund(&g, "carol", "q", "1");
    assert_eq!(
        verdict(&d),
        (Verdict::Deny, vec!["rate_limited".to_owned()])
    );
    assert_eq!(
        agree(
            db,
            store.as_ref(),
            "refunds/session/q",
            minus(clock.now(), 60)
        ),
        a("5")
    );
}

/// Keys whose totals are missing or not known (counted before the totals
/// were kept, as the migration leaves them): the store reads the events
/// instead, decisions are the same, and the next charge counts the totals
/// afresh from the events.
fn keys_without_totals_are_read_from_their_events_and_counted_afresh(db: &Db) {
    let clock = ManualClock::new(Timestamp::from_unix_seconds(T0));
    let g = store_gate(db.open(&clock), &clock);
    let store = Arc::clone(g.store());
    let key = "minute_total/user/alice";
    for amount in ["40", "40.5"] {
        assert_eq!(verdict(&refund(&g, "alice", "s", amount)).0, Verdict::Allow);
        clock.advance(Duration::from_secs(1));
    }
    for (bobs, forget) in [
        (1, "UPDATE limit_keys SET total = NULL"),
        (2, "DELETE FROM limit_keys"),
    ] {
        db.execute(forget);
        let since = minus(clock.now(), 60);
        assert_eq!(store.limit_used(key, since).unwrap(), None, "{forget}");
        // The events decide: 80.5 + 19.51 is over, 19.5 fits.
        let d = refund(&g, "alice", "s2", "19.51");
        assert_eq!(
            verdict(&d),
            (Verdict::Deny, vec!["budget_exceeded".to_owned()]),
            "{forget}"
        );
        assert_eq!(store.limit_used(key, since).unwrap(), None, "{forget}");
        // Bob's key, new or known again, keeps totals from his next call.
        assert_eq!(verdict(&refund(&g, "bob", "s3", "1")).0, Verdict::Allow);
        assert_eq!(
            agree(db, store.as_ref(), "minute_total/user/bob", since),
            Amount::from_u64(bobs)
        );
        clock.advance(Duration::from_secs(1));
    }
    assert_eq!(
        verdict(&refund(&g, "alice", "s4", "19.5")).0,
        Verdict::Allow
    );
    assert_eq!(
        agree(db, store.as_ref(), key, minus(clock.now(), 60)),
        a("100")
    );
    // A reset forgets the events and the totals together.
    store.reset_limit(key, "ops", "test").unwrap();
    assert!(store
        .limit_used(key, minus(clock.now(), 60))
        .unwrap()
        .is_none_or(|used| used == Amount::ZERO));
    assert_eq!(verdict(&refund(&g, "alice", "s5", "100")).0, Verdict::Allow);
    agree(db, store.as_ref(), key, minus(clock.now(), 60));
}

on_both_backends!(
    running_totals_agree_with_the_events_under_concurrent_writers,
    running_totals_follow_the_window_edge,
    keys_without_totals_are_read_from_their_events_and_counted_afresh,
);

/// A SQLite database whose counted calls were stored before version 14 (a
/// rowid table and two indexes) moves them to the table keyed by key, time
/// and record: they still count, in the totals and in the windows, and a
/// call id counted before is not counted again.
#[test]
fn sqlite_calls_counted_before_the_keyed_table_still_count() {
    let db = Db::sqlite();
    let clock = ManualClock::new(Timestamp::from_unix_seconds(T0));
    let key = "minute_total/user/alice";
    {
        let g = store_gate(db.open(&clock), &clock);
        for (id, amount) in [("m1", "40"), ("m2", "40.5")] {
            assert_eq!(verdict(&refund_id(&g, "s", id, amount)).0, Verdict::Allow);
            clock.advance(Duration::from_secs(1));
        }
    }
    // Back to version 13's layout, with its rows.
    db.execute(
        "CREATE TABLE v13 (key TEXT NOT NULL, at INTEGER NOT NULL, amount TEXT NOT NULL, \
         call_id TEXT);
         INSERT INTO v13 SELECT key, at, amount, call_id FROM limit_events ORDER BY at;
         DROP TABLE limit_events;
         ALTER TABLE v13 RENAME TO limit_events;
         CREATE INDEX limit_events_key_at ON limit_events (key, at);
         CREATE UNIQUE INDEX limit_events_call ON limit_events (key, call_id) \
         WHERE call_id IS NOT NULL;
         DELETE FROM schema_version WHERE version >= 14;",
    );
    let version = "SELECT max(version) FROM schema_version";
    assert_eq!(db.query_i64(version), Some(13));
    let g = store_gate(db.open(&clock), &clock);
    let store = Arc::clone(g.store());
    assert_eq!(
        db.query_i64(version),
        Some(i64::from(toolgate_store::SCHEMA_VERSION))
    );
    // Two calls under three limits, none with a record's number.
    let old = "SELECT count(*) FROM limit_events WHERE record < 0";
    assert_eq!(db.query_i64(old), Some(6));
    assert_eq!(
        agree(&db, store.as_ref(), key, minus(clock.now(), 60)),
        a("80.5")
    );
    // m1 again in another session: it runs, its user's keys counted it
    // already.
    assert_eq!(verdict(&refund_id(&g, "s2", "m1", "1")).0, Verdict::Allow);
    assert_eq!(
        agree(&db, store.as_ref(), key, minus(clock.now(), 60)),
        a("80.5")
    );
    assert_eq!(
        verdict(&refund_id(&g, "s2", "m3", "19.5")).0,
        Verdict::Allow
    );
    assert_eq!(
        verdict(&refund_id(&g, "s2", "m4", "0.01")),
        (Verdict::Deny, vec!["budget_exceeded".to_owned()])
    );
    assert_eq!(
        agree(&db, store.as_ref(), key, minus(clock.now(), 60)),
        a("100")
    );
    // The minute passes: the calls counted before leave the window and
    // are forgotten with the next charge.
    clock.advance(Duration::from_secs(61));
    assert_eq!(verdict(&refund_id(&g, "s2", "m5", "100")).0, Verdict::Allow);
    assert_eq!(
        agree(&db, store.as_ref(), key, minus(clock.now(), 60)),
        a("100")
    );
    assert_eq!(
        db.query_i64("SELECT count(*) FROM limit_events WHERE record < 0 AND key = 'minute_total/user/alice'"),
        Some(0)
    );
}
