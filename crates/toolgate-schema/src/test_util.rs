//! Helpers for the unit tests at the bottom of each keyword file.

use crate::{Mode, Options, Schema};

fn run(schema: &str, instance: &str, mode: Mode) -> bool {
    let s = toolgate_json::from_str(schema).unwrap();
    // Rounding admitted: the keywords' rules for a rounded value (what a
    // tool that opts into rounding receives) stay pinned.
    let i = toolgate_json::ParseOptions::new()
        .allow_rounding(true)
        .parse(instance.as_bytes())
        .unwrap();
    let compiled = Schema::compile(&s, &Options::new().mode(mode)).unwrap();
    let fast = compiled.is_valid(&i);
    let full = compiled.validate(&i);
    assert_eq!(fast, full.is_ok(), "is_valid and validate disagree");
    fast
}

/// Validates in strict mode; both entry points must agree.
pub(crate) fn check(schema: &str, instance: &str) -> bool {
    run(schema, instance, Mode::Strict)
}

/// Validates in standard mode; both entry points must agree.
pub(crate) fn check_standard(schema: &str, instance: &str) -> bool {
    run(schema, instance, Mode::Standard)
}
