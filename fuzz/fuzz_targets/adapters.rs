//! Any bytes, in every format: the adapters return an envelope or an error,
//! never panic, hang or grow without bound; what they return is consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate::adapter::{AdapterOptions, Format};
use toolgate_json::ParseOptions;

fuzz_target!(|data: &[u8]| {
    let tight = AdapterOptions::new()
        .with_max_calls(4)
        .with_max_events(16)
        .with_max_stream_bytes(4096)
        .with_max_findings(4);
    for options in [AdapterOptions::new(), tight] {
        for format in Format::ALL {
            match options.read(data, format) {
                Ok(envelope) => {
                    assert_ne!(envelope.format, Format::Auto);
                    if format != Format::Auto {
                        assert_eq!(envelope.format, format);
                    }
                    for (i, call) in envelope.calls.iter().enumerate() {
                        assert_eq!(call.index, i);
                        assert!(call.arguments_pointer.is_empty() || call.arguments_pointer.starts_with('/'));
                        let _ = call.arguments.resolve(&ParseOptions::new());
                    }
                    let _ = envelope.finish.to_string();
                    assert!(envelope.finish.reason().len() <= 64);
                }
                Err(e) => {
                    assert!(e.pointer().is_empty() || e.pointer().starts_with('/'));
                    let _ = e.to_string();
                }
            }
        }
    }
});
