//! Several processes on one database: one unbroken chain, single-use
//! approvals used once, the kill switch honoured across processes. Each test
//! body runs on a SQLite file and on a PostgreSQL database (see `common`).
//!
//! The test binary spawns itself: `child` below does nothing unless
//! `TOOLGATE_STORE_CHILD` names a mode, so it passes in a normal run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

mod common;

use std::io::Write as _;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::Db;
use toolgate_json::{canonical, Digest};
use toolgate_store::{
    AuditEntry, AuditFilter, AuditVerdict, KillMode, ManualClock, PgOptions, SqliteOptions, Store,
    Timestamp,
};

const MODE: &str = "TOOLGATE_STORE_CHILD";
const DB: &str = "TOOLGATE_STORE_DB";
const NAME: &str = "TOOLGATE_STORE_NAME";
const WRITES: u64 = 10_000;
const THREADS: u64 = 40;
const ROUNDS: u32 = 30;
const T0: Timestamp = Timestamp::from_unix_seconds(1_767_225_600);

/// The database a child opens: a PostgreSQL URL, or an SQLite file.
fn spec(db: &Db) -> String {
    match db {
        Db::Sqlite(dir) => dir.path().join("state.db").display().to_string(),
        Db::Postgres(pg) => pg.url().to_owned(),
    }
}

fn open(spec: &str) -> Box<dyn Store> {
    let clock = Arc::new(ManualClock::new(T0));
    if spec.starts_with("postgres://") {
        Box::new(
            PgOptions::new()
                .clock(clock)
                .lock_timeout(Duration::from_secs(30))
                .open(spec)
                .unwrap(),
        )
    } else {
        Box::new(
            SqliteOptions::new()
                .clock(clock)
                .busy_timeout(Duration::from_secs(30))
                .open(spec)
                .unwrap(),
        )
    }
}

fn spawn(mode: &str, db: &str, name: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(MODE, mode)
        .env(DB, db)
        .env(NAME, name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "child failed: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn round_digest(round: u32) -> Digest {
    canonical::digest(&toolgate_json::from_str(&format!(r#"{{"round":{round}}}"#)).unwrap())
}

/// The start signal: a line on each child's standard input, written to
/// all of them at once.
fn go(children: &mut [&mut Child]) {
    for c in children.iter_mut() {
        c.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    }
}

/// Waits (blocked on its standard input, no polling) for the parent's
/// start signal.
fn wait_for_go() {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    assert_eq!(line, "go\n", "no start signal");
}

#[test]
fn child() {
    let Ok(mode) = std::env::var(MODE) else {
        return;
    };
    let db = std::env::var(DB).unwrap();
    let name = std::env::var(NAME).unwrap();
    let store: Arc<dyn Store> = Arc::from(open(&db));
    match mode.as_str() {
        "writer" => {
            wait_for_go();
            let per_thread = WRITES / THREADS;
            let threads: Vec<_> = (0..THREADS)
                .map(|t| {
                    let store = Arc::clone(&store);
                    let name = name.clone();
                    std::thread::spawn(move || {
                        for i in 0..per_thread {
                            let e = AuditEntry::new(T0, AuditVerdict::Allow)
                                .user(name.as_str())
                                .session(format!("{name}-{t}"))
                                .tool("refund")
                                .call_id(format!("{t}-{i}"));
                            store.append(e).unwrap();
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
        }
        "consume" => {
            wait_for_go();
            for round in 0..ROUNDS {
                let used = store
                    .consume("alice", "s-1", "refund", &round_digest(round), T0)
                    .unwrap();
                if used.is_some() {
                    println!("won {round}");
                }
            }
        }
        "kill" => {
            store
                .set_kill_switch(KillMode::DenyAll, "incident", &name)
                .unwrap();
        }
        "read-kill" => {
            println!("mode {}", store.kill_switch().unwrap().mode);
        }
        other => panic!("unknown mode {other}"),
    }
}

fn two_processes_writing_10000_decisions_each_keep_one_chain(db: &Db) {
    let db = spec(db);
    drop(open(&db)); // create and migrate once
    let mut a = spawn("writer", &db, "p1");
    let mut b = spawn("writer", &db, "p2");
    go(&mut [&mut a, &mut b]);
    finish(a);
    finish(b);
    let store = open(&db);
    let v = store.verify().unwrap();
    assert!(v.is_intact(), "{v:?}");
    assert_eq!(v.records, 2 * WRITES);
    for p in ["p1", "p2"] {
        let mut n = 0;
        let mut after = 0;
        loop {
            let page = store
                .list(&AuditFilter::new().user(p).after(after).limit(5000))
                .unwrap();
            let Some(last) = page.last() else { break };
            after = last.seq;
            n += page.len() as u64;
        }
        assert_eq!(n, WRITES, "records of {p}");
    }
}

fn double_consume_racing_in_two_processes_passes_once(db: &Db) {
    let db = spec(db);
    let store = open(&db);
    for round in 0..ROUNDS {
        let id = store
            .request_approval(
                "alice",
                "s-1",
                "refund",
                &round_digest(round),
                T0.saturating_add(Duration::from_secs(3600)),
            )
            .unwrap();
        store.approve(id, "bob", "").unwrap();
    }
    let mut a = spawn("consume", &db, "p1");
    let mut b = spawn("consume", &db, "p2");
    go(&mut [&mut a, &mut b]);
    let mut wins: Vec<u32> = [finish(a), finish(b)]
        .iter()
        .flat_map(|out| {
            out.lines()
                // libtest may print `test child ... ` on the same line.
                .filter_map(|l| l.split("won ").nth(1))
                .map(|n| n.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    wins.sort_unstable();
    assert_eq!(wins, (0..ROUNDS).collect::<Vec<_>>());
    let used = store
        .list(
            &AuditFilter::new()
                .verdict(AuditVerdict::ApprovalUsed)
                .limit(1000),
        )
        .unwrap();
    assert_eq!(used.len(), ROUNDS as usize);
    assert!(store.verify().unwrap().is_intact());
}

fn kill_switch_flipped_by_one_process_is_honoured_by_another(db: &Db) {
    let db = spec(db);
    let store = open(&db);
    assert_eq!(store.kill_switch().unwrap().mode, KillMode::Off);
    finish(spawn("kill", &db, "oncall"));
    // The same open store sees the flip on its next read.
    let s = store.kill_switch().unwrap();
    assert_eq!(s.mode, KillMode::DenyAll);
    assert_eq!(s.actor.as_deref(), Some("oncall"));
    // And the other way round.
    store
        .set_kill_switch(KillMode::DenyWrites, "", "me")
        .unwrap();
    let out = finish(spawn("read-kill", &db, "reader"));
    assert!(out.contains("mode deny_writes"), "{out}");
}

on_both_backends!(
    two_processes_writing_10000_decisions_each_keep_one_chain,
    double_consume_racing_in_two_processes_passes_once,
    kill_switch_flipped_by_one_process_is_honoured_by_another,
);
