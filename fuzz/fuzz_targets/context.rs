//! Any bytes as a decision context (the caller's user, session, roles and
//! entities, as the service and `toolgate check` read it): a context or an
//! error with a JSON Pointer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::Context;

fuzz_target!(|data: &[u8]| {
    match Context::from_json(data) {
        Ok(_) => {}
        Err(e) => {
            assert!(e.pointer().is_empty() || e.pointer().starts_with('/'));
            let _ = e.to_string();
        }
    }
});
