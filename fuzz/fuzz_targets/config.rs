//! Any text as a config file: `Config::parse` and then the front ends'
//! table checks (`toolgate_edge::config::check`, what every front end's load
//! runs) return a config or an error that names the file, and never panic. Relative paths in the text resolve
//! against an empty folder, so every file it names is missing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = std::env::temp_dir().join("toolgate-fuzz-config-empty/toolgate.toml");
    match Config::parse(text, &path) {
        Ok(config) => {
            let _ = config.registry().len();
            let _ = config.store().url();
            if let Err(e) = toolgate_edge::config::check(&config) {
                let shown = e.to_string();
                assert!(shown.contains("toolgate.toml"), "{shown}");
            }
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(shown.contains("toolgate.toml"), "{shown}");
        }
    }
});
