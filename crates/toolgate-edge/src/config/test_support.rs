//! What every table's tests share: a config the core loader accepts, and
//! the parts of a refusal a test compares.

use toolgate::config::{Config, Error, ErrorCode};

/// The parts of a refusal: its code, line, column, key and message.
pub(super) type Refusal = (ErrorCode, Option<usize>, Option<usize>, String, String);

/// `text`, read by the core loader as if from `toolgate.toml`: it must
/// accept the file (its keys and types), so that a refusal a test then
/// sees is the table's own.
pub(super) fn config(text: &str) -> Config {
    Config::parse(text, "toolgate.toml").unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// `table` of `text`, checked.
pub(super) fn table<T>(
    text: &str,
    table: impl FnOnce(&Config) -> Result<T, Error>,
) -> Result<T, Error> {
    table(&config(text))
}

/// The refusal of `table` for `text`, placed in `toolgate.toml`.
pub(super) fn refused<T: std::fmt::Debug>(
    text: &str,
    table: impl FnOnce(&Config) -> Result<T, Error>,
) -> Refusal {
    let e = match self::table(text, table) {
        Ok(t) => panic!("accepted {text}: {t:?}"),
        Err(e) => e,
    };
    assert!(e.to_string().starts_with("toolgate.toml"), "{e}");
    (
        e.code(),
        e.line(),
        e.column(),
        e.config_key().unwrap_or_default().to_owned(),
        e.message().to_owned(),
    )
}

/// The core loader's refusal of `text` (an unknown key, a value of the
/// wrong type): its code, line and key.
pub(super) fn refused_by_core(text: &str) -> (ErrorCode, Option<usize>, String) {
    let e = match Config::parse(text, "toolgate.toml") {
        Ok(_) => panic!("the core loader accepted {text}"),
        Err(e) => e,
    };
    (
        e.code(),
        e.line(),
        e.config_key().unwrap_or_default().to_owned(),
    )
}
