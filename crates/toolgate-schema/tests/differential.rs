//! Differential test against the `jsonschema` crate (placeholder until the generator lands).

fn main() {}
