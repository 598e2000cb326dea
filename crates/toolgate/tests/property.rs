//! Property: whatever bytes arrive, in any format, the gate returns a
//! decision set; it never panics, and it never allows on error.
//!
//! Inputs: purely random bytes, and mutations (byte flips, insertions,
//! deletions, truncations, splices) of every sample body of the adapters'
//! tests and of the shop example, read as every format. A deterministic
//! generator keeps failures reproducible (the seed is in the message).
//!
//! "Never allows on error" is checked as: an allowed call has no reasons,
//! names a registered tool, comes from a response that was read and whose
//! turn completed with no denying finding, and its canonical arguments
//! re-parse and validate against the tool's schema.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::path::{Path, PathBuf};

use toolgate::config::Config;
use toolgate::{Code, Context, Decisions, Format, Gate, Verdict};
use toolgate_testkit::Rng;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("json" | "sse")
        ) {
            out.push(path);
        }
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    files(&root.join("tests/bodies"), &mut paths);
    files(&root.join("../../examples/shop/responses"), &mut paths);
    paths.sort();
    assert!(paths.len() > 20, "sample bodies are missing");
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// Tokens worth splicing in: they steer mutations into interesting places.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"null",
    b"1e400",
    b"NaN",
    b"\\u0000",
    b"\\ud800",
    b"\"search\"",
    b"\"refund\"",
    b"\"arguments\"",
    b"\"length\"",
    b"data: ",
    b"\n\n",
    b"[DONE]",
    b"\xff",
    b"\xc0\x80",
    b"\"tool_calls\"",
    b"\"query\":\"a\"",
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    for _ in 0..=rng.index(4) {
        let at = rng.index(b.len() + 1);
        match rng.index(6) {
            0 if !b.is_empty() => {
                let i = rng.index(b.len());
                b[i] ^= 1 << rng.index(8);
            }
            1 => {
                let t = TOKENS[rng.index(TOKENS.len())];
                b.splice(at..at, t.iter().copied());
            }
            2 if at < b.len() => {
                let end = (at + 1 + rng.index(16)).min(b.len());
                b.drain(at..end);
            }
            3 => b.truncate(at),
            4 => {
                let byte = rng.next_u64() as u8;
                b.insert(at, byte);
            }
            _ => {
                // Duplicate a slice (duplicate keys, repeated calls).
                if at < b.len() {
                    let end = (at + 1 + rng.index(64)).min(b.len());
                    let slice = b[at..end].to_vec();
                    b.splice(end..end, slice);
                }
            }
        }
    }
    b
}

fn check(gate: &Gate, config: &Config, body: &[u8], format: Format, seed: u64) -> Decisions {
    let c = Context::new("alice", "s", 1);
    let d = gate.decide(body, format, &c, &c);
    let fail = |what: &str| -> ! {
        panic!(
            "seed {seed}, format {format}: {what}\nbody: {:?}\n{d:?}",
            String::from_utf8_lossy(body)
        )
    };
    let all_codes = d
        .rejected()
        .into_iter()
        .chain(d.findings())
        .chain(d.decisions().iter().flat_map(|c| c.reasons()));
    for r in all_codes {
        if r.code == Code::InternalError {
            fail("the gate caught a panic");
        }
    }
    // The answer's text written directly is the canonical text of its tree.
    let tree = toolgate_json::Value::Object(toolgate::wire::decisions_object(&d));
    if toolgate::wire::decisions_text(&d) != toolgate_json::canonical::to_string(&tree) {
        fail("the answer's text differs from its tree's canonical text");
    }
    if d.rejected().is_some() && !d.decisions().is_empty() {
        fail("a refused body has decisions");
    }
    let response_denied = d.findings().iter().any(|r| r.code.finding_denies());
    for call in d.decisions() {
        if call.verdict() != Verdict::Allow {
            if call.reasons().is_empty() {
                fail("a denial without a reason");
            }
            continue;
        }
        if !call.reasons().is_empty() || response_denied || d.rejected().is_some() {
            fail("an allow despite an error");
        }
        if !d.finish().as_ref().is_some_and(|f| f.is_complete()) {
            fail("an allow from an incomplete turn");
        }
        let Some(tool) = config.registry().get(call.tool()) else {
            fail("an allow for an unregistered tool");
        };
        let args = call
            .executable_args()
            .unwrap_or_else(|| fail("no arguments"));
        let value = toolgate_json::from_str(args).unwrap_or_else(|_| fail("arguments re-parse"));
        if !tool.schema().is_valid(&value) {
            fail("allowed arguments are invalid");
        }
    }
    d
}

#[test]
fn arbitrary_bytes_never_panic_and_never_allow_on_error() {
    let config = Config::load(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml"),
    )
    .unwrap();
    let gate = Gate::builder(config.registry().clone())
        .authorizer(toolgate::danger::NoAuthorization)
        .build()
        .unwrap();
    let seeds = seeds();
    let iterations: u64 = std::env::var("TOOLGATE_PROPERTY_ITERATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut allowed = 0usize;
    let mut denied = 0usize;
    for seed in 1..=iterations {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let body = if seed % 10 == 0 {
            (0..rng.index(256)).map(|_| rng.next_u64() as u8).collect()
        } else {
            let base = &seeds[rng.index(seeds.len())];
            mutate(&mut rng, base)
        };
        let format = Format::ALL[rng.index(Format::ALL.len())];
        let d = check(&gate, &config, &body, format, seed);
        allowed += d
            .decisions()
            .iter()
            .filter(|c| c.verdict() == Verdict::Allow)
            .count();
        denied += d
            .decisions()
            .iter()
            .filter(|c| c.verdict() == Verdict::Deny)
            .count();
    }
    // The generator must reach both outcomes, or it proves little.
    assert!(
        allowed > 0 && denied > 0,
        "allowed {allowed}, denied {denied}"
    );
    // Every seed, unmutated, in every format.
    for (i, body) in seeds.iter().enumerate() {
        for format in Format::ALL {
            check(&gate, &config, body, format, i as u64);
        }
    }
}
