//! Schemas kept in Cedar's JSON form across processes
//! (`authz::remember_validations`, used by the per-call `toolgate hook`):
//! the JSON form of a schema text is read instead of the text only for the
//! very same text, only from the user's own folder, and only from a
//! regular file others cannot write; anything else is parsed from the
//! text. A test binary of its own: the folder is set once per process.
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

fn load(schema: &str) -> Result<CedarAuthorizer, authz::LoadError> {
    let policies = shop_text("policies.cedar");
    let entities = shop_text("entities.json");
    CedarAuthorizer::from_sources(
        Source::new(Path::new("policies.cedar"), &policies),
        Source::new(Path::new("shop.cedarschema"), schema),
        Some(Source::new(Path::new("entities.json"), &entities)),
    )
}

/// The kept schema forms in `dir`.
fn kept(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("schema-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the schema `load` used declares the entity type `Planted`,
/// which only a planted JSON form does.
fn declares_planted(authorizer: CedarAuthorizer) -> bool {
    authorizer
        .with_context_entities(["Planted"], Path::new("toolgate.toml"))
        .is_ok()
}

/// `json` (Cedar's JSON form of the shop's schema) with an entity type
/// `Planted` added to its one namespace.
fn planted(json: &str) -> String {
    let at = json
        .find("\"entityTypes\":{")
        .expect("an entityTypes object")
        + 15;
    format!("{}\"Planted\":{{}},{}", &json[..at], &json[at..])
}

#[test]
fn a_kept_schema_form_stands_in_only_for_its_very_text_in_a_private_folder() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("cache");
    authz::remember_validations(&dir);
    let schema = shop_text("shop.cedarschema");

    // The first load parses the text and keeps Cedar's JSON form of it,
    // owner-only; the next load reads it and decides the same.
    let first = load(&schema).unwrap();
    let files = kept(&dir);
    assert_eq!(files.len(), 1, "the schema's JSON form is kept");
    let file = files[0].clone();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "kept owner-only: {mode:o}");
    }
    let json = std::fs::read_to_string(&file).unwrap();
    toolgate_json::from_str(&json).expect("the kept form is JSON");
    let again = load(&schema).unwrap();
    assert_eq!(again.policy_count(), first.policy_count());
    assert_eq!(again.policies_for("refund"), first.policies_for("refund"));
    assert_eq!(again.entity_count("User"), first.entity_count("User"));
    assert!(!declares_planted(again));
    assert_eq!(kept(&dir).len(), 1);

    // The kept form is what the next load reads: a form planted in the
    // user's own folder is used (the folder is trusted as the user's own,
    // like the remembered validations beside it)...
    std::fs::write(&file, planted(&json)).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    assert!(declares_planted(load(&schema).unwrap()));

    // ...but only for the very same text: an edited schema is parsed from
    // its text (and its own form kept), a broken one is refused.
    let edited = format!("{schema}\nentity Edited;\n");
    let loaded = load(&edited).unwrap();
    assert!(!declares_planted(loaded));
    assert_eq!(kept(&dir).len(), 2);
    let broken = format!("{schema}\nentity ;\n");
    assert_eq!(load(&broken).unwrap_err().code(), LoadErrorCode::Schema);
    assert_eq!(load(&broken).unwrap_err().code(), LoadErrorCode::Schema);

    // A kept form that does not read is ignored: the text is parsed.
    std::fs::write(&file, "{\"not a schema\": ").unwrap();
    assert!(!declares_planted(load(&schema).unwrap()));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // A kept form others can write is not read.
        std::fs::write(&file, planted(&json)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o622)).unwrap();
        assert!(!declares_planted(load(&schema).unwrap()));

        // Nor one reached through a symbolic link.
        let elsewhere = base.path().join("elsewhere.json");
        std::fs::write(&elsewhere, planted(&json)).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert!(!declares_planted(load(&schema).unwrap()));

        // Nor anything in a folder others may write to.
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, planted(&json)).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(declares_planted(load(&schema).unwrap()), "trusted again");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!declares_planted(load(&schema).unwrap()));
    }
}

/// The JSON form stands in for the text only if nothing is lost on the way:
/// each shipped schema, written to Cedar's JSON form and read back, writes
/// the very same JSON form again.
#[test]
fn the_shipped_schemas_read_back_the_same_from_their_json_form() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for file in ["shop/shop.cedarschema", "agents/agents.cedarschema"] {
        let text = std::fs::read_to_string(examples.join(file)).unwrap();
        let (fragment, _) = cedar_policy::SchemaFragment::from_cedarschema_str(&text).unwrap();
        let json = fragment.to_json_string().unwrap();
        let back = cedar_policy::SchemaFragment::from_json_str(&json).unwrap();
        assert_eq!(back.to_json_string().unwrap(), json, "{file}");
        assert_eq!(
            back.to_cedarschema().unwrap(),
            fragment.to_cedarschema().unwrap(),
            "{file}"
        );
        cedar_policy::Schema::from_schema_fragments([back]).unwrap();
    }
}
