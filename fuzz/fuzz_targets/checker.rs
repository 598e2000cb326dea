//! The strict path with no tree against the tree path: a (schema, instance)
//! pair separated by the first NUL byte (no NUL: the whole input against
//! `true`). `Checker::check` must give the tree path's verdict, the same
//! parse error code and, on success, the same canonical text; and the
//! tree-free reader must accept exactly what the tree parser accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_json::{canonical, ParseOptions, Read, Reader};
use toolgate_schema::{Checked, Checker, Mode, Options, Schema};

fn agree(schema: &Schema, instance: &[u8]) {
    let mut checker = Checker::new(ParseOptions::new());
    let tree = toolgate_json::from_slice(instance);
    match (checker.check(schema, instance), &tree) {
        (Checked::Valid(ok), Ok(v)) => {
            assert!(schema.is_valid(v), "the checker accepts what the tree rejects");
            assert_eq!(ok.canonical(), canonical::to_string(v), "canonical texts differ");
        }
        (Checked::Invalid(errors), Ok(v)) => {
            assert!(!schema.is_valid(v), "the checker rejects what the tree accepts");
            assert!(!errors.is_empty());
        }
        (Checked::Malformed(e), Err(t)) => assert_eq!(e.code(), t.code()),
        (got, _) => panic!("the checker says {got:?}, the tree parser {tree:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let (schema_bytes, instance) = match data.iter().position(|&b| b == 0) {
        Some(split) => (&data[..split], &data[split + 1..]),
        None => (&b"true"[..], data),
    };
    let mut reader = Reader::new(ParseOptions::new());
    let read = reader.read(instance, &mut ());
    match toolgate_json::from_slice(instance) {
        Ok(v) => {
            assert_eq!(read, Read::Accepted, "the reader refuses what the parser accepts");
            assert_eq!(reader.canonical(), canonical::to_string(&v));
        }
        Err(_) => assert_eq!(read, Read::Refused, "the reader accepts what the parser refuses"),
    }
    let Ok(document) = toolgate_json::from_slice(schema_bytes) else { return };
    for mode in [Mode::Strict, Mode::Standard] {
        let Ok(schema) = Schema::compile(&document, &Options::new().mode(mode)) else { continue };
        agree(&schema, instance);
    }
});
