//! parse → canonical → parse gives back an equal value, and the canonical
//! text is a fixed point of the round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_json::{canonical, from_slice};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = from_slice(data) else { return };
    let text = canonical::to_string(&value);
    let again = from_slice(text.as_bytes()).expect("canonical text must parse");
    assert_eq!(again, value, "round trip changed the value");
    assert_eq!(canonical::to_string(&again), text, "canonical text is not a fixed point");
});
