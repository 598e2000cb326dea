//! A (schema, instance) pair, separated by the first NUL byte: validation
//! never panics, and the fast path agrees with the full error list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_schema::{Mode, Options, Schema};

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let (schema_bytes, rest) = data.split_at(split);
    let Ok(document) = toolgate_json::from_slice(schema_bytes) else { return };
    let Ok(instance) = toolgate_json::from_slice(&rest[1..]) else { return };
    for mode in [Mode::Strict, Mode::Standard] {
        let options = Options::new().mode(mode).max_errors(16);
        let Ok(schema) = Schema::compile(&document, &options) else { continue };
        let fast = schema.is_valid(&instance);
        match schema.validate(&instance) {
            Ok(()) => assert!(fast, "is_valid rejects what validate accepts"),
            Err(errors) => {
                assert!(!fast, "is_valid accepts what validate rejects");
                assert!(!errors.is_empty() && errors.len() <= 16);
                for e in errors.iter() {
                    let _ = e.masked();
                }
            }
        }
    }
});
