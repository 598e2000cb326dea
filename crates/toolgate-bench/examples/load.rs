//! A fixed-rate load generator for `toolgate serve`: `POST /v1/decide` at a
//! given rate over keep-alive connections, latency measured from each
//! request's *scheduled* send time (so a stalled server is not hidden by a
//! client that waits for it: no coordinated omission), like wrk2's `-R`,
//! which Debian does not ship.
//!
//! ```text
//! cargo run --release -p toolgate-bench --example load -- \
//!     --addr 127.0.0.1:8080 --rate 5000 --seconds 20 [--connections 32] [--token T]
//! ```
//!
//! Each request is the shop's `search` call as alice with its own call id,
//! in a session of 8 requests (the shop allows 20 turns per session).
//! Prints the achieved rate, latency percentiles, and the count of answers
//! that were not `200` with verdict `allow` (exit code 1 if any).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a measurement tool: a failure should stop it loudly"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

struct Args {
    addr: SocketAddr,
    rate: f64,
    seconds: f64,
    connections: usize,
    token: String,
}

fn args() -> Args {
    let mut a = Args {
        addr: "127.0.0.1:8080".parse().unwrap(),
        rate: 1000.0,
        seconds: 10.0,
        connections: 32,
        token: "agent-demo-token".to_owned(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .unwrap_or_else(|| panic!("`{flag}` needs a value"));
        let bad = |what: &str| -> ! { panic!("`{flag} {value}`: {what}") };
        match flag.as_str() {
            "--addr" => a.addr = value.parse().unwrap_or_else(|_| bad("not ADDR:PORT")),
            "--rate" => a.rate = value.parse().unwrap_or_else(|_| bad("not a number")),
            "--seconds" => a.seconds = value.parse().unwrap_or_else(|_| bad("not a number")),
            "--connections" => {
                a.connections = value.parse().unwrap_or_else(|_| bad("not a count"));
            }
            "--token" => a.token = value,
            _ => bad("unknown flag (--addr, --rate, --seconds, --connections, --token)"),
        }
    }
    assert!(a.rate > 0.0 && a.seconds > 0.0 && a.connections > 0);
    a
}

fn body(conn: usize, n: u64) -> String {
    let response = format!(
        "{{\"id\":\"chatcmpl-load\",\"object\":\"chat.completion\",\"created\":1767225600,\"model\":\"gpt-4.1\",\
         \"choices\":[{{\"index\":0,\"finish_reason\":\"tool_calls\",\"message\":{{\"role\":\"assistant\",\"content\":null,\
         \"tool_calls\":[{{\"id\":\"rate-{conn}-{n}\",\"type\":\"function\",\"function\":{{\"name\":\"search\",\
         \"arguments\":\"{{\\\"query\\\":\\\"boots\\\",\\\"limit\\\":5}}\"}}}}]}}}}]}}"
    );
    let escaped = response.replace('\\', "\\\\").replace('"', "\\\"");
    // A new session every 8 requests: the store counts a session's
    // responses, and the shop's `max_turns = 20` denies the 21st. The
    // sessions are this run's own (the process id), so that runs against
    // one server (a warm-up, then several counted runs) never add up to a
    // session past its turns.
    let session = n / 8;
    let run = std::process::id();
    format!(
        "{{\"body\":\"{escaped}\",\"format\":\"openai\",\"context\":{{\"user\":\"alice\",\"session\":\"rate-{run}-{conn}-{session}\",\"roles\":[\"customer\"],\"turn\":1}}}}"
    )
}

/// Reads one response on a keep-alive connection: (status, body).
fn read_response(r: &mut BufReader<TcpStream>) -> std::io::Result<(u16, Vec<u8>)> {
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut length = 0;
    loop {
        line.clear();
        r.read_line(&mut line)?;
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body)?;
    Ok((status, body))
}

struct Outcome {
    latencies: Vec<Duration>,
    failures: u64,
    first_failure: Option<String>,
}

fn connection(a: &Args, conn: usize, start: Instant) -> Outcome {
    let interval = Duration::from_secs_f64(a.connections as f64 / a.rate);
    let offset = interval.mul_f64(conn as f64 / a.connections as f64);
    let end = start + Duration::from_secs_f64(a.seconds);
    let mut out = Outcome {
        latencies: Vec::new(),
        failures: 0,
        first_failure: None,
    };
    let mut stream: Option<(TcpStream, BufReader<TcpStream>)> = None;
    for n in 0u64.. {
        let scheduled = start + offset + interval.mul_f64(n as f64);
        if scheduled >= end {
            break;
        }
        if let Some(wait) = scheduled.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let b = body(conn, n);
        let request = format!(
            "POST /v1/decide HTTP/1.1\r\nHost: load\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
            a.token,
            b.len()
        );
        let result = (|| -> std::io::Result<(u16, Vec<u8>)> {
            if stream.is_none() {
                let s = TcpStream::connect(a.addr)?;
                s.set_nodelay(true)?;
                let r = BufReader::new(s.try_clone()?);
                stream = Some((s, r));
            }
            let (s, r) = stream.as_mut().unwrap();
            s.write_all(request.as_bytes())?;
            read_response(r)
        })();
        out.latencies.push(scheduled.elapsed());
        let failure = match result {
            Ok((200, body)) if contains(&body, b"\"verdict\":\"allow\"") => None,
            Ok((status, body)) => Some(format!("{status} {}", String::from_utf8_lossy(&body))),
            Err(e) => {
                stream = None;
                Some(e.to_string())
            }
        };
        if let Some(f) = failure {
            out.failures += 1;
            out.first_failure.get_or_insert(f);
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn main() -> std::process::ExitCode {
    let a = args();
    let start = Instant::now() + Duration::from_millis(100);
    let outcomes: Vec<Outcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..a.connections)
            .map(|c| {
                let a = &a;
                s.spawn(move || connection(a, c, start))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = start.elapsed();
    let mut all: Vec<Duration> = outcomes
        .iter()
        .flat_map(|o| o.latencies.iter().copied())
        .collect();
    all.sort_unstable();
    let failures: u64 = outcomes.iter().map(|o| o.failures).sum();
    let pct = |p: f64| {
        let i = ((all.len() as f64 * p).ceil() as usize).clamp(1, all.len().max(1)) - 1;
        all.get(i).copied().unwrap_or_default().as_secs_f64() * 1000.0
    };
    println!(
        "target {:.0}/s over {} connections: {} requests in {:.1} s = {:.0}/s",
        a.rate,
        a.connections,
        all.len(),
        elapsed.as_secs_f64(),
        all.len() as f64 / elapsed.as_secs_f64()
    );
    println!(
        "latency from the scheduled send: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(0.999),
        all.last().copied().unwrap_or_default().as_secs_f64() * 1000.0
    );
    println!("answers other than 200 allow: {failures}");
    if let Some(f) = outcomes.iter().find_map(|o| o.first_failure.as_ref()) {
        println!("first: {f}");
    }
    if failures == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    }
}
