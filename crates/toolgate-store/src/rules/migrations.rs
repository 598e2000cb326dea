//! Which schema migrations a database needs, and which databases a build
//! refuses: the same in every backend, whose migrations differ only in SQL.
//!
//! Migration `i` (from 0) takes the schema from version `i` to `i + 1`; a
//! build writes the version that is the number of its migrations. A
//! database at a higher version was written by a newer build and is
//! refused (`schema_too_new`), whether opened to migrate or only to read.

use crate::error::{Error, ErrorCode};

/// The version a build with `migrations` writes.
pub(crate) fn target(migrations: &[&str]) -> u32 {
    u32::try_from(migrations.len()).unwrap_or(u32::MAX)
}

/// The migrations a database at `current` needs, each with the version it
/// moves the schema to; refuses a newer database.
pub(crate) fn pending<'a>(
    current: u32,
    migrations: &'a [&'a str],
) -> Result<impl Iterator<Item = (u32, &'a str)> + 'a, Error> {
    let target = target(migrations);
    if current > target {
        return Err(too_new(current, target));
    }
    Ok((1..=target)
        .zip(migrations.iter().copied())
        .skip(usize::try_from(current).unwrap_or(usize::MAX)))
}

/// Checks that a database opened without migrating is at `target`; `how`
/// tells the operator how to migrate an older one.
pub(crate) fn check(current: u32, target: u32, how: &str) -> Result<(), Error> {
    if current > target {
        return Err(too_new(current, target));
    }
    if current < target {
        return Err(Error::new(
            ErrorCode::Unavailable,
            format!("database schema is version {current}, expected {target}: {how}"),
        ));
    }
    Ok(())
}

/// A schema version as stored, checked.
pub(crate) fn stored_version(v: i64) -> Result<u32, Error> {
    u32::try_from(v).map_err(|_| {
        Error::new(
            ErrorCode::Corrupt,
            format!("schema version `{v}` is invalid"),
        )
    })
}

fn too_new(version: u32, target: u32) -> Error {
    Error::new(
        ErrorCode::SchemaTooNew,
        format!(
            "database schema is version {version}, newer than {target}: upgrade toolgate to open it"
        ),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    const MIGRATIONS: [&str; 3] = ["a", "b", "c"];

    fn plan(current: u32) -> Result<Vec<(u32, &'static str)>, ErrorCode> {
        pending(current, &MIGRATIONS)
            .map(Iterator::collect)
            .map_err(|e| e.code())
    }

    #[test]
    fn a_database_gets_the_migrations_after_its_version() {
        assert_eq!(target(&MIGRATIONS), 3);
        assert_eq!(plan(0), Ok(vec![(1, "a"), (2, "b"), (3, "c")]));
        assert_eq!(plan(2), Ok(vec![(3, "c")]));
        assert_eq!(plan(3), Ok(vec![]));
        assert_eq!(plan(4), Err(ErrorCode::SchemaTooNew));
    }

    #[test]
    fn a_database_opened_without_migrating_must_be_current() {
        assert!(check(3, 3, "x").is_ok());
        let old = check(2, 3, "migrate it").unwrap_err();
        assert_eq!(old.code(), ErrorCode::Unavailable);
        assert_eq!(
            old.message(),
            "database schema is version 2, expected 3: migrate it"
        );
        let new = check(4, 3, "x").unwrap_err();
        assert_eq!(new.code(), ErrorCode::SchemaTooNew);
        assert_eq!(
            new.message(),
            "database schema is version 4, newer than 3: upgrade toolgate to open it"
        );
    }

    #[test]
    fn a_stored_version_is_checked() {
        assert_eq!(stored_version(5).unwrap(), 5);
        assert_eq!(stored_version(-1).unwrap_err().code(), ErrorCode::Corrupt);
        assert_eq!(
            stored_version(i64::from(u32::MAX) + 1).unwrap_err().code(),
            ErrorCode::Corrupt
        );
    }
}
