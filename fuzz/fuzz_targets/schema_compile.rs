//! Any bytes as a schema: compiling in either mode returns a schema or a
//! compile error, never panics or hangs; a compiled schema accepts or rejects
//! a few fixed instances consistently; the lint never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_schema::{Mode, Options, Schema};

fuzz_target!(|data: &[u8]| {
    let Ok(document) = toolgate_json::from_slice(data) else { return };
    let _ = toolgate_schema::lint(&document);
    let instances = [
        "null", "0", "-1.5", "\"a\"", "[]", "{}", "[1,\"x\",null]", "{\"a\":1,\"b\":[true]}",
    ]
    .map(|t| toolgate_json::from_str(t).expect("fixed instances parse"));
    for mode in [Mode::Strict, Mode::Standard] {
        let Ok(schema) = Schema::compile(&document, &Options::new().mode(mode)) else { continue };
        for instance in &instances {
            assert_eq!(schema.is_valid(instance), schema.validate(instance).is_ok());
        }
    }
});
