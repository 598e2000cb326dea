//! Any bytes: the strict parser returns a value or an error, never panics,
//! hangs or overflows the stack; an error's position lies inside the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_json::{Limit, Limits, ParseOptions};

fuzz_target!(|data: &[u8]| {
    // Default limits, and tight ones so every limit's path is reached.
    let tight = Limits::new()
        .set(Limit::Depth, 4)
        .and_then(|l| l.set(Limit::StringBytes, 8))
        .and_then(|l| l.set(Limit::ObjectMembers, 3))
        .and_then(|l| l.set(Limit::ArrayItems, 3))
        .and_then(|l| l.set(Limit::Values, 12))
        .expect("limits within their ceilings");
    for options in [ParseOptions::new(), ParseOptions::new().with_limits(tight)] {
        match options.parse(data) {
            Ok(value) => {
                let _ = toolgate_json::canonical::digest(&value);
            }
            Err(e) => {
                assert!(e.offset() <= data.len());
                assert!(e.line() >= 1 && e.column() >= 1);
                let _ = e.to_string();
            }
        }
    }
});
