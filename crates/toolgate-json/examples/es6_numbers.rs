//! Checks toolgate's number formatting against lines of `hex_bits,expected`
//! read from standard input: the layout of `tests/es6/gen.mjs` and of the JCS
//! reference implementation's `es6testfile100m.txt`, so a stream of any
//! length can be checked without storing it:
//!
//! ```text
//! node crates/toolgate-json/tests/es6/gen.mjs 1000000 | \
//!     cargo run --release -p toolgate-json --example es6_numbers
//! ```
//!
//! Prints the number of lines checked, the mismatches (the first 20 in full)
//! and the SHA-256 of the input, and exits 1 if any line differs or cannot be
//! read.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use sha2::{Digest, Sha256};
use toolgate_json::Number;

fn main() -> ExitCode {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut line = String::new();
    let mut hash = Sha256::new();
    let (mut checked, mut mismatches, mut unreadable) = (0u64, 0u64, 0u64);
    let mut out = std::io::stdout().lock();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("es6_numbers: cannot read standard input: {e}");
                return ExitCode::from(2);
            }
        }
        hash.update(line.as_bytes());
        let text = line.trim_end_matches('\n');
        let parsed = text.split_once(',').and_then(|(hex, expected)| {
            let bits = u64::from_str_radix(hex, 16).ok()?;
            Some((Number::from_f64(f64::from_bits(bits))?, expected))
        });
        let Some((number, expected)) = parsed else {
            unreadable += 1;
            let _ = writeln!(out, "line {}: not `hex,expected`", checked + unreadable);
            continue;
        };
        checked += 1;
        let got = number.canonical();
        if got != expected {
            mismatches += 1;
            if mismatches <= 20 {
                let _ = writeln!(out, "{text}: toolgate writes {got}");
            }
        }
    }
    let _ = writeln!(
        out,
        "checked {checked} numbers: {mismatches} mismatches, {unreadable} unreadable lines; \
         input sha256 {:x}",
        hash.finalize()
    );
    if mismatches == 0 && unreadable == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
