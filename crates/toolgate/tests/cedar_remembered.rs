//! Validations remembered across processes (`authz::remember_validations`,
//! used by the per-call `toolgate hook`): only a byte-identical schema and
//! policies text skips type-checking; any other text is type-checked, and
//! a folder others can write to is never used. A test binary of its own:
//! the folder is set once per process.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::path::{Path, PathBuf};

use toolgate::authz::{self, CedarAuthorizer, LoadErrorCode, Source};

fn shop_text(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn load(policies: &str) -> Result<CedarAuthorizer, authz::LoadError> {
    let schema = shop_text("shop.cedarschema");
    let entities = shop_text("entities.json");
    CedarAuthorizer::from_sources(
        Source::new(Path::new("policies.cedar"), policies),
        Source::new(Path::new("shop.cedarschema"), &schema),
        Some(Source::new(Path::new("entities.json"), &entities)),
    )
}

fn remembered(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("cedar-"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn only_the_very_text_that_type_checked_skips_the_check() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("cache");
    authz::remember_validations(&dir);

    let good = shop_text("policies.cedar");
    let first = load(&good).unwrap();
    assert_eq!(remembered(&dir), 1, "the validated text is remembered");
    let again = load(&good).unwrap();
    assert_eq!(again.policy_count(), first.policy_count());
    assert_eq!(remembered(&dir), 1);

    // The same policies with one that does not type-check added: another
    // text, so it is checked, refused, and nothing more is remembered.
    let bad = format!(
        "{good}\n@id(\"typo\")\npermit(principal, action == Action::\"refund\", resource)\nwhen {{ resource.ownr == principal }};\n"
    );
    let e = load(&bad).unwrap_err();
    assert_eq!(e.code(), LoadErrorCode::PolicyValidation);
    assert_eq!(remembered(&dir), 1);
    // Refused every time, not only the first.
    assert_eq!(
        load(&bad).unwrap_err().code(),
        LoadErrorCode::PolicyValidation
    );

    // A file planted under another text's name does not cover this one:
    // names are digests of the texts.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::rename(&path, dir.join("cedar-0000")).unwrap();
    }
    assert_eq!(
        load(&bad).unwrap_err().code(),
        LoadErrorCode::PolicyValidation
    );

    // A folder others may write to is not trusted: not read, not written.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::remove_file(dir.join("cedar-0000")).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        load(&good).unwrap();
        assert_eq!(remembered(&dir), 0);
        assert_eq!(
            load(&bad).unwrap_err().code(),
            LoadErrorCode::PolicyValidation
        );
    }
}
