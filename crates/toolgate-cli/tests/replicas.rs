//! Several `toolgate serve` replicas on one PostgreSQL database, driven
//! from outside over HTTP against the real binary on copies of the shop
//! example: one audit chain under a concurrent load across three replicas,
//! a single-use approval raced on two replicas, an approval granted on one
//! replica seen by a waiter on another, the kill switch and the turn limit
//! shared, and the database's connections killed and refused mid-load.
//!
//! The database is a fresh one on the server `TOOLGATE_TEST_POSTGRES_URL`
//! names (default `postgres://postgres@127.0.0.1:5432/test`), dropped
//! afterwards. Without a reachable PostgreSQL the tests say so and pass,
//! unless `TOOLGATE_REQUIRE_EXTERNAL=1` (CI), when they fail.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod cli_support;

mod serve_support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use cli_support::toolgate_cli;
use serve_support::{
    decide_body, first_decision, json_string, search_response, Server, Shop, Signal, ADMIN,
    APPROVER,
};
use toolgate_json::Value;
use toolgate_testkit::PgDatabase;

/// The shop with its store on `db`.
fn shop_on(db: &PgDatabase) -> Shop {
    shop_at(db.url())
}

/// The shop with its store at the PostgreSQL `url`.
fn shop_at(url: &str) -> Shop {
    let shop = Shop::new("");
    let text = std::fs::read_to_string(&shop.config).unwrap();
    let line = "url = \"sqlite://toolgate.db\"";
    assert!(text.contains(line), "the shop config names its store");
    let text = text.replacen(line, &format!("url = {}", json_string(url)), 1);
    std::fs::write(&shop.config, text).unwrap();
    shop
}

/// `n` replicas of `shop`, started together.
fn replicas(shop: &Shop, n: usize) -> Vec<Server> {
    std::thread::scope(|s| {
        let started: Vec<_> = (0..n)
            .map(|_| s.spawn(|| Server::start(&shop.config)))
            .collect();
        started.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

// ---- requests ----

fn refund_response() -> String {
    std::fs::read_to_string(
        toolgate_testkit::examples_dir().join("shop/responses/openai-refund-needs-approval.json"),
    )
    .unwrap()
}

/// A decide body for `response` as alice in `session` at `turn`.
fn decide_at(response: &str, session: &str, turn: u64) -> String {
    decide_body(response, session).replacen("\"turn\":1", &format!("\"turn\":{turn}"), 1)
}

fn s(v: &Value<'_>, p: &str) -> String {
    v.pointer(p)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {p} in {v:?}"))
        .to_owned()
}

fn decide(server: &Server, body: &str) -> Value<'static> {
    let r = server.decide(body).unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

fn post(server: &Server, path: &str, token: &str, body: &str) -> Value<'static> {
    let r = server
        .call(
            "POST",
            path,
            Some(token),
            Some("application/json"),
            body.as_bytes(),
        )
        .unwrap();
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    r.json()
}

// ---- tests ----

#[test]
fn three_replicas_under_load_keep_one_chain_with_a_record_per_decision() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    let servers = replicas(&shop, 3);
    const TOTAL: usize = 900;
    let next = AtomicUsize::new(0);
    let allowed = AtomicUsize::new(0);
    let other = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..12 {
            let (servers, next, allowed, other) = (&servers, &next, &allowed, &other);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= TOTAL {
                    return;
                }
                let call = format!("call-{i}");
                // A session per call: the store counts each session's turns.
                let body = decide_body(&search_response(&call), &format!("load-{i}"));
                let r = servers[(i + t) % 3].decide(&body).unwrap();
                let (id, verdict, reasons) = first_decision(&r);
                assert_eq!(id, call);
                if verdict == "allow" {
                    allowed.fetch_add(1, Ordering::SeqCst);
                } else {
                    other
                        .lock()
                        .unwrap()
                        .push(format!("{call}: {verdict} {reasons:?}"));
                }
            });
        }
    });
    let other = other.into_inner().unwrap();
    assert!(other.is_empty(), "not allowed: {other:?}");
    assert_eq!(allowed.load(Ordering::SeqCst), TOTAL);
    // One chain, one record per decision returned: no fork, gap or duplicate.
    assert_eq!(shop.verify(), TOTAL as u64);
    let records = shop.export();
    let mut calls: Vec<String> = records
        .iter()
        .filter_map(|r| r.pointer("/call_id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    calls.sort_unstable();
    calls.dedup();
    assert_eq!(calls.len(), TOTAL);
}

#[test]
fn a_single_use_approval_raced_on_two_replicas_passes_once() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    let servers = replicas(&shop, 2);
    let refund = refund_response();
    for round in 0..5 {
        let session = format!("race-{round}");
        let body = decide_body(&refund, &session);
        // Requested on replica A, approved on replica B.
        let v = decide(&servers[0], &body);
        assert_eq!(s(&v, "/decisions/1/verdict"), "needs_approval");
        let id = s(&v, "/decisions/1/approval");
        post(
            &servers[1],
            &format!("/v1/approvals/{id}/approve"),
            APPROVER,
            r#"{"note":"checked"}"#,
        );
        // The same call sent to both replicas at once: one passes.
        let barrier = Barrier::new(2);
        let verdicts: Vec<String> = std::thread::scope(|sc| {
            let hs: Vec<_> = servers
                .iter()
                .map(|server| {
                    let (barrier, body) = (&barrier, &body);
                    sc.spawn(move || {
                        barrier.wait();
                        s(&decide(server, body), "/decisions/1/verdict")
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let passed = verdicts.iter().filter(|v| *v == "allow").count();
        assert_eq!(passed, 1, "round {round}: {verdicts:?}");
        // The other finds the approval used (a human again), or, if the
        // winner's call id was claimed first, a replay (denied).
        assert!(
            verdicts
                .iter()
                .any(|v| v == "needs_approval" || v == "deny"),
            "{verdicts:?}"
        );
    }
    let used = shop
        .export()
        .iter()
        .filter(|r| r.pointer("/verdict").and_then(Value::as_str) == Some("approval_used"))
        .count();
    assert_eq!(used, 5);
    shop.verify();
}

/// `shop` with `[server] store_poll_ms = ms`: how often a replica's waits
/// re-read the store for what nobody pushed.
fn polling_every(shop: &Shop, ms: u64) {
    let text = std::fs::read_to_string(&shop.config).unwrap();
    let (head, tail) = text.split_once("[server]").expect("the shop has [server]");
    let (line, rest) = tail.split_once('\n').unwrap();
    let text = format!("{head}[server]{line}\nstore_poll_ms = {ms}\n{rest}");
    std::fs::write(&shop.config, text).unwrap();
}

/// The kill switch's mode in `server`'s `/metrics`.
fn kill_gauge(server: &Server) -> String {
    let r = server.call("GET", "/metrics", None, None, b"").unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
        .lines()
        .find_map(|l| {
            l.strip_prefix("toolgate_kill_switch{mode=\"")
                .and_then(|l| l.strip_suffix("\"} 1"))
        })
        .unwrap_or_else(|| panic!("no kill switch gauge in {}", r.body))
        .to_owned()
}

/// With the replicas' poll set to 30 s, only the push (`LISTEN`/`NOTIFY`)
/// can wake the waiter on B within a second of the approval on A; the
/// waiter asks for 25 s, so a missed push shows as a late answer.
#[test]
fn an_approval_granted_on_one_replica_wakes_a_waiter_on_another() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    polling_every(&shop, 30_000);
    let servers = replicas(&shop, 2);
    // The replicas' listening connections come up in the background.
    std::thread::sleep(Duration::from_millis(1500));
    let v = decide(&servers[0], &decide_body(&refund_response(), "wait-1"));
    let id = s(&v, "/decisions/1/approval");
    std::thread::scope(|sc| {
        let waiter = sc.spawn(|| {
            let started = Instant::now();
            let r = servers[1]
                .call(
                    "GET",
                    &format!("/v1/approvals/{id}/wait?timeout=25"),
                    Some(serve_support::AGENT),
                    None,
                    b"",
                )
                .unwrap();
            (r, started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        let approved_at = Instant::now();
        post(
            &servers[0],
            &format!("/v1/approvals/{id}/approve"),
            APPROVER,
            "{}",
        );
        let (r, waited) = waiter.join().unwrap();
        assert_eq!(r.status, 200, "{}", r.body);
        let v = r.json();
        assert_eq!(s(&v, "/state"), "approved");
        assert_eq!(v.pointer("/timed_out"), Some(&Value::Bool(false)), "{v:?}");
        let late = approved_at.elapsed();
        assert!(
            late < Duration::from_secs(2),
            "the waiter saw the approval {late:?} after it was granted (waited {waited:?})"
        );
    });
    let v = decide(&servers[1], &decide_body(&refund_response(), "wait-1"));
    assert_eq!(s(&v, "/verdict"), "allow");

    // A flip on A reaches B's gauges while B's cached reading (kept for a
    // second, `GAUGE_TTL`) would still say `off`: only the push makes
    // them stale. Tried a few times, since a flip slower than the cache's
    // second proves nothing.
    let mut proved = false;
    for (i, mode) in ["deny_writes", "off", "deny_all", "off", "deny_writes"]
        .iter()
        .enumerate()
    {
        let before = kill_gauge(&servers[1]);
        let cached_at = Instant::now();
        post(
            &servers[0],
            "/v1/kill",
            ADMIN,
            &format!(r#"{{"mode":"{mode}","reason":"drill {i}"}}"#),
        );
        assert_ne!(&before, mode);
        while cached_at.elapsed() < Duration::from_millis(900) {
            if kill_gauge(&servers[1]) == *mode {
                proved = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if proved {
            break;
        }
        // Let the cache expire before the next try.
        std::thread::sleep(Duration::from_millis(1100));
    }
    assert!(
        proved,
        "no kill switch flip reached the other replica before its cache expired"
    );
}

#[test]
fn the_kill_switch_and_the_turn_limit_are_shared_by_every_replica() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    let servers = replicas(&shop, 3);
    let refund = refund_response();
    // Flipped through replica A's API: B and C stop writes at once.
    let v = post(
        &servers[0],
        "/v1/kill",
        ADMIN,
        r#"{"mode":"deny_writes","reason":"incident 9"}"#,
    );
    assert_eq!(s(&v, "/mode"), "deny_writes");
    for server in &servers[1..] {
        let v = decide(server, &decide_body(&refund, "kill-1"));
        assert_eq!(s(&v, "/decisions/1/verdict"), "deny");
        assert_eq!(s(&v, "/decisions/1/reasons/0/code"), "kill_switch");
        assert_eq!(s(&v, "/decisions/0/verdict"), "allow", "reads still run");
    }
    post(
        &servers[2],
        "/v1/kill",
        ADMIN,
        r#"{"mode":"off","reason":"over"}"#,
    );
    let v = decide(&servers[0], &decide_body(&refund, "kill-2"));
    assert_eq!(s(&v, "/decisions/1/verdict"), "needs_approval");

    // The shop's max_turns is 20: turns spread over the replicas count as
    // one session's turns.
    for turn in 1..=20u64 {
        let body = decide_at(&search_response(&format!("t-{turn}")), "turns-1", turn);
        let v = decide(&servers[(turn % 3) as usize], &body);
        assert_eq!(s(&v, "/verdict"), "allow", "turn {turn}: {v:?}");
    }
    let body = decide_at(&search_response("t-21"), "turns-1", 21);
    let v = decide(&servers[0], &body);
    assert_eq!(s(&v, "/verdict"), "deny");
    assert_eq!(s(&v, "/decisions/0/reasons/0/code"), "loop_limit");
    // A caller that says turn 1 every time is counted by the shared store:
    // its 21st response, on whichever replica, is past the cap.
    for n in 1..=20u64 {
        let body = decide_at(&search_response(&format!("u-{n}")), "turns-2", 1);
        let v = decide(&servers[(n % 3) as usize], &body);
        assert_eq!(s(&v, "/verdict"), "allow", "response {n}: {v:?}");
    }
    for server in &servers {
        let body = decide_at(&search_response("u-21"), "turns-2", 1);
        let v = decide(server, &body);
        assert_eq!(s(&v, "/decisions/0/reasons/0/code"), "loop_limit");
    }
    shop.verify();
}

/// Issue 29, item 1: every backend of two replicas ended (a failover,
/// `pg_terminate_backend`) while they serve decisions and the approval,
/// audit, kill switch, results and readiness routes. The database stays
/// up, so no call may fail: no `store_unavailable` deny, no 503; and every
/// allow a client received has its record.
#[test]
fn issue_29_ended_backends_cost_no_call_on_any_route_of_two_replicas() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    let servers = replicas(&shop, 2);
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let allowed = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let progress = Signal::default();
    std::thread::scope(|sc| {
        for t in 0..4 {
            let (servers, stop, next, allowed, failures, progress) =
                (&servers, &stop, &next, &allowed, &failures, &progress);
            sc.spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let server = &servers[(i + t) % 2];
                    let call = format!("call-{i}");
                    let body = decide_body(&search_response(&call), &format!("cut-{i}"));
                    let r = server.decide(&body).unwrap();
                    let (_, verdict, reasons) = first_decision(&r);
                    if verdict == "allow" {
                        allowed.lock().unwrap().push(call);
                        progress.raise();
                    } else {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("decide: {verdict} {reasons:?}"));
                    }
                    let result =
                        format!(r#"{{"tool":"search","result":"ok","session":"cut-{i}"}}"#);
                    let others: [(&str, &str, Option<&str>, &[u8]); 5] = [
                        ("GET", "/v1/approvals", Some(APPROVER), b""),
                        ("GET", "/v1/audit?limit=5", Some(ADMIN), b""),
                        ("GET", "/v1/kill", Some(ADMIN), b""),
                        ("GET", "/readyz", None, b""),
                        (
                            "POST",
                            "/v1/results",
                            Some(serve_support::AGENT),
                            result.as_bytes(),
                        ),
                    ];
                    let (method, path, token, body) = others[i % others.len()];
                    let ct = (method == "POST").then_some("application/json");
                    let r = server.call(method, path, token, ct, body).unwrap();
                    if r.status != 200 {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{method} {path}: {} {}", r.status, r.body));
                    }
                }
            });
        }
        let wait_for = |what: &str, n: usize| {
            progress.wait_until(what, Duration::from_secs(60), || {
                allowed.lock().unwrap().len() >= n
            });
        };
        wait_for("a first load", 50);
        for round in 0..3 {
            assert!(db.terminate_connections() > 0);
            let now = allowed.lock().unwrap().len();
            wait_for(&format!("decisions after cut {round}"), now + 50);
        }
        stop.store(true, Ordering::SeqCst);
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failed: {failures:?}",
        failures.len()
    );
    let records = shop.export();
    let recorded: std::collections::HashSet<&str> = records
        .iter()
        .filter(|r| r.pointer("/verdict").and_then(Value::as_str) == Some("allow"))
        .filter_map(|r| r.pointer("/call_id").and_then(Value::as_str))
        .collect();
    let allowed = allowed.into_inner().unwrap();
    assert!(allowed.iter().all(|c| recorded.contains(c.as_str())));
    shop.verify();
}

#[test]
fn the_database_going_away_mid_load_denies_then_every_replica_recovers() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    let servers = replicas(&shop, 2);
    let stop = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let allowed = Mutex::new(Vec::new());
    let unavailable = AtomicUsize::new(0);
    let progress = Signal::default();
    std::thread::scope(|sc| {
        for t in 0..6 {
            let (servers, stop, next, allowed, unavailable, progress) =
                (&servers, &stop, &next, &allowed, &unavailable, &progress);
            sc.spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let call = format!("call-{i}");
                    let body = decide_body(&search_response(&call), &format!("away-{i}"));
                    let r = servers[(i + t) % 2].decide(&body).unwrap();
                    let (id, verdict, reasons) = first_decision(&r);
                    assert_eq!(id, call);
                    match verdict.as_str() {
                        "allow" => allowed.lock().unwrap().push(call),
                        "deny" => {
                            assert_eq!(reasons, ["store_unavailable"], "{call}");
                            unavailable.fetch_add(1, Ordering::SeqCst);
                        }
                        other => panic!("{call}: {other} {reasons:?}"),
                    }
                    progress.raise();
                }
            });
        }
        let wait_for = |what: &str, f: &dyn Fn() -> bool| {
            progress.wait_until(what, Duration::from_secs(30), f);
        };
        wait_for("a first load", &|| allowed.lock().unwrap().len() >= 100);
        // Connections killed while the database accepts new ones.
        assert!(db.terminate_connections() > 0);
        let after_kill = allowed.lock().unwrap().len();
        wait_for("decisions after the kill", &|| {
            allowed.lock().unwrap().len() >= after_kill + 100
        });
        // The database away: nothing connects, every decision denies.
        db.set_allow_connections(false);
        db.terminate_connections();
        let before = unavailable.load(Ordering::SeqCst);
        wait_for("denials while away", &|| {
            unavailable.load(Ordering::SeqCst) >= before + 50
        });
        for server in &servers {
            let r = server.call("GET", "/readyz", None, None, b"").unwrap();
            assert_eq!(
                r.status, 503,
                "readyz while the database is away: {}",
                r.body
            );
        }
        db.set_allow_connections(true);
        // Back, without a restart of either replica.
        let back = allowed.lock().unwrap().len();
        wait_for("recovery", &|| allowed.lock().unwrap().len() >= back + 200);
        stop.store(true, Ordering::SeqCst);
    });
    for server in &servers {
        let v = decide(server, &decide_body(&search_response("last"), "away-last"));
        assert_eq!(s(&v, "/verdict"), "allow");
        let r = server.call("GET", "/readyz", None, None, b"").unwrap();
        assert_eq!(r.status, 200, "{}", r.body);
    }
    // Every allow a client received has its committed record; the chain is
    // one and intact.
    let records = shop.export();
    let recorded: std::collections::HashSet<&str> = records
        .iter()
        .filter(|r| r.pointer("/verdict").and_then(Value::as_str) == Some("allow"))
        .filter_map(|r| r.pointer("/call_id").and_then(Value::as_str))
        .collect();
    let allowed = allowed.into_inner().unwrap();
    let missing: Vec<&String> = allowed
        .iter()
        .filter(|c| !recorded.contains(c.as_str()))
        .collect();
    assert!(missing.is_empty(), "allowed without a record: {missing:?}");
    assert!(unavailable.load(Ordering::SeqCst) >= 50);
    shop.verify();
}

#[test]
fn toolgate_migrate_prepares_the_database_and_audit_commands_read_it() {
    let Some(db) = PgDatabase::create() else {
        return;
    };
    let shop = shop_on(&db);
    // Read-only commands never create or migrate: they say what to run.
    let (status, out, err) = shop.toolgate(&["audit", "verify"]);
    assert_eq!(status.code(), Some(2), "{out}{err}");
    assert!(err.contains("toolgate migrate"), "{err}");
    let (status, out, err) = shop.toolgate(&["migrate"]);
    assert!(status.success(), "{out}{err}");
    assert_eq!(
        out,
        format!(
            "store schema created: PostgreSQL version {}\n",
            toolgate_store::PG_SCHEMA_VERSION
        )
    );
    // Twice is fine, and says there was nothing to do.
    let (status, out, _) = shop.toolgate(&["migrate"]);
    assert!(status.success(), "{out}");
    assert_eq!(
        out,
        format!(
            "store schema is current: PostgreSQL version {}\n",
            toolgate_store::PG_SCHEMA_VERSION
        )
    );
    assert_eq!(shop.verify(), 0);
    // A wrong password or host is named by kind, never echoed.
    let bad = db.url().replacen("://", "://nobody:s3cret-pw@", 1);
    let bad = bad.replacen("postgres@", "", 1);
    let out = toolgate_cli()
        .args(["kill", "status", "--store", &bad.replacen("5432", "9", 1)])
        .run();
    assert_eq!(out.status.code(), Some(2));
    let err = toolgate_testkit::text(&out.stderr);
    assert!(err.contains("cannot open the store"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
}

/// Durable decisions/s through 1, 2 and 3 replicas on one PostgreSQL
/// database, beside one replica on SQLite, from one load of `search`
/// decisions over HTTP (32 clients, one connection per request), with the
/// CPU time each decision cost the replicas and the database's backends
/// (`/proc/PID/stat`); then the same with the database made "far": every
/// packet between the replicas and PostgreSQL delayed by 1 ms (a relay in
/// the test). A measurement, not a check; run it on a release build:
///
/// ```text
/// cargo test --release -p toolgate-cli --test replicas -- --ignored --nocapture
/// ```
#[test]
#[ignore = "a measurement (BENCHMARKS.md), not a check"]
fn measure_durable_decisions_per_second() {
    const TOTAL: usize = 6_000;
    const CLIENTS: usize = 32;
    let run = |servers: &[Server], label: &str, db: Option<&PgDatabase>, total: usize| {
        let next = AtomicUsize::new(0);
        let replica_cpu = |servers: &[Server]| -> f64 {
            servers
                .iter()
                .filter_map(|s| cpu_seconds(s.child.id()))
                .sum()
        };
        let cpu_before = replica_cpu(servers);
        let backends_before = db.map_or(0.0, backends_cpu);
        let started = Instant::now();
        std::thread::scope(|s| {
            for t in 0..CLIENTS {
                let next = &next;
                s.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= total {
                        return;
                    }
                    let body = decide_body(
                        &search_response(&format!("{label}-{i}")),
                        // Eight calls a session: below the shop's loop limit.
                        &format!("bench-{}", i / 8),
                    );
                    let r = servers[(i + t) % servers.len()].decide(&body).unwrap();
                    assert_eq!(first_decision(&r).1, "allow", "{}", r.body);
                });
            }
        });
        let rate = total as f64 / started.elapsed().as_secs_f64();
        let per = |cpu: f64| cpu / total as f64 * 1e6;
        let replicas = per(replica_cpu(servers) - cpu_before);
        let database = db.map_or(String::new(), |db| {
            format!(
                ", database backends {:.0} µs",
                per(backends_cpu(db) - backends_before)
            )
        });
        println!(
            "{label}: {rate:.0} durable decisions/s ({total} decisions, {CLIENTS} clients); \
             CPU per decision: replicas {replicas:.0} µs{database}"
        );
    };
    {
        let shop = Shop::new("");
        let servers = replicas(&shop, 1);
        run(&servers, "sqlite, 1 replica", None, TOTAL);
        assert_eq!(shop.verify(), TOTAL as u64);
    }
    for n in 1..=3 {
        let Some(db) = PgDatabase::create() else {
            return;
        };
        let shop = shop_on(&db);
        let servers = replicas(&shop, n);
        run(
            &servers,
            &format!("postgres, {n} replica(s)"),
            Some(&db),
            TOTAL,
        );
        assert_eq!(shop.verify(), TOTAL as u64);
    }
    for n in 1..=3 {
        let Some(db) = PgDatabase::create() else {
            return;
        };
        let relay = Relay::start(db.url(), Duration::from_millis(1));
        let shop = shop_at(&relay.url);
        let servers = replicas(&shop, n);
        run(
            &servers,
            &format!("postgres 1 ms away, {n} replica(s)"),
            Some(&db),
            TOTAL / 2,
        );
        drop(servers);
        assert_eq!(shop_on(&db).verify(), (TOTAL / 2) as u64);
    }
}

/// The CPU time (user and system) process `pid` has used, in seconds;
/// `None` where `/proc` has no such process.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is field 3,
    // utime and stime fields 14 and 15, in clock ticks.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / clock_ticks())
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 when it cannot say).
fn clock_ticks() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The CPU time of the PostgreSQL backends serving `db` now, in seconds
/// (the server must run on this machine).
fn backends_cpu(db: &PgDatabase) -> f64 {
    let Some(mut admin) = toolgate_testkit::pg_admin() else {
        return 0.0;
    };
    let rows = admin
        .query(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1",
            &[&db.name()],
        )
        .unwrap();
    rows.iter()
        .filter_map(|r| cpu_seconds(u32::try_from(r.get::<_, i32>(0)).ok()?))
        .sum()
}

/// A TCP relay in front of PostgreSQL that holds every chunk of bytes,
/// each way, for `delay` before passing it on: a database on another
/// machine.
struct Relay {
    url: String,
}

impl Relay {
    fn start(url: &str, delay: Duration) -> Self {
        use std::io::{Read, Write};
        use std::net::{TcpListener, TcpStream};
        let host = url
            .split_once('@')
            .and_then(|(_, rest)| rest.split_once('/'))
            .map(|(host, _)| host.to_owned())
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let relayed = url.replacen(&host, &addr.to_string(), 1);
        let pass = move |mut from: TcpStream, mut to: TcpStream| {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 {
                    break;
                }
                std::thread::sleep(delay);
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(std::net::Shutdown::Both);
        };
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(&host) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || pass(client, server));
                std::thread::spawn(move || pass(s2, c2));
            }
        });
        Self { url: relayed }
    }
}
