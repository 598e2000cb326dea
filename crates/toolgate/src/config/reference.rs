//! The configuration reference, made from the types the loader reads the
//! file with (so that it cannot drift from them): every table, its keys,
//! each key's type, whether it is required, and the values an enumerated
//! key takes. Each table registers its own description ([`TableDoc`])
//! beside its type; [`markdown`] assembles the chapter the book carries
//! (`docs/src/configuration.md`, checked by a test).

mod probe;

use std::fmt::Write as _;

pub(crate) use self::probe::ProbeError;
use self::probe::{shape_of, Key, Shape};

/// A table's description, registered by the module that declares it.
#[derive(Debug, Clone, Copy)]
pub struct TableDoc {
    /// The serde name of the table's type (`RawGate`).
    pub type_name: &'static str,
    /// What the table is for (Markdown).
    pub about: &'static str,
    /// Descriptions of some of its keys (key, Markdown).
    pub keys: &'static [(&'static str, &'static str)],
}

/// The shape of the whole config file.
fn config_shape() -> Result<Shape, ProbeError> {
    shape_of::<super::raw::RawConfig>()
}

/// The values an enumerated key takes, or its type in words, for the
/// message of a missing key: `key`'s first declaration anywhere in the
/// file's tables.
pub(crate) fn expected_of(key: &str) -> Option<String> {
    fn find<'a>(shape: &'a Shape, key: &str) -> Option<&'a Shape> {
        match shape {
            Shape::Table(_, keys) => keys.iter().find_map(|k| {
                if k.name == key {
                    Some(&k.shape)
                } else {
                    find(&k.shape, key)
                }
            }),
            Shape::Array(item) | Shape::Map(item) => find(item, key),
            Shape::Scalar(_) | Shape::Enum(_) | Shape::Other(_) => None,
        }
    }
    let shape = config_shape().ok()?;
    find(&shape, key).map(|s| match s {
        Shape::Enum(values) => format!("one of {}", quoted(values)),
        other => type_words(other),
    })
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| format!("\"{v}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A shape in the reference's words.
fn type_words(shape: &Shape) -> String {
    match shape {
        Shape::Scalar(name) => (*name).to_owned(),
        Shape::Enum(values) => format!("one of {}", quoted(values)),
        Shape::Table(..) => "a table".to_owned(),
        Shape::Array(item) => match &**item {
            Shape::Table(..) => "an array of tables".to_owned(),
            other => format!("an array of {}", type_words(other)),
        },
        Shape::Map(item) => format!("a table of names to {}", type_words(item)),
        Shape::Other(expecting) => expecting.clone(),
    }
}

/// Each table's description, from the modules that declare them.
fn docs() -> Vec<TableDoc> {
    super::raw::TABLE_DOCS.to_vec()
}

/// The configuration reference, as Markdown.
///
/// # Errors
///
/// When a config type cannot be walked (a reader of a new kind).
pub fn markdown() -> Result<String, String> {
    let shape = config_shape().map_err(|e| e.to_string())?;
    let docs = docs();
    let mut out = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from the config's types by `toolgate::config::reference::markdown`; \
         do not edit. Regenerate with \
         `TOOLGATE_BLESS=1 cargo test -p toolgate --test config_reference`. -->\n\n\
         Every table and key the config file (TOML) takes, made from the types \
         the loader reads it with. A key not listed here is refused \
         (`unknown_key`), and so is a value of another type or outside its \
         list. Paths in values are relative to the config file's folder.\n",
    );
    let mut missing = Vec::new();
    if let Shape::Table(_, keys) = &shape {
        // Top-level scalars first would be none: every top-level key is a table.
        for key in keys {
            section(&mut out, &mut missing, &docs, key.name, key);
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(format!("tables without a TableDoc: {}", missing.join(", ")))
    }
}

/// The heading, description and key table of the table at `path`, then
/// those of its sub-tables.
fn section(out: &mut String, missing: &mut Vec<String>, docs: &[TableDoc], path: &str, key: &Key) {
    let (heading, table) = match &key.shape {
        Shape::Table(name, keys) => (format!("[{path}]"), Some((*name, keys))),
        Shape::Array(item) => match &**item {
            Shape::Table(name, keys) => (format!("[[{path}]]"), Some((*name, keys))),
            _ => (String::new(), None),
        },
        _ => (String::new(), None),
    };
    let Some((type_name, keys)) = table else {
        return;
    };
    let doc = docs.iter().find(|d| d.type_name == type_name);
    let _ = write!(out, "\n## `{heading}`\n\n");
    match doc {
        Some(d) => {
            let _ = writeln!(out, "{}\n", d.about.trim());
        }
        None => missing.push(type_name.to_owned()),
    }
    out.push_str("| key | type | required | description |\n|---|---|---|---|\n");
    for k in keys.iter() {
        let about = doc
            .and_then(|d| d.keys.iter().find(|(name, _)| *name == k.name))
            .map_or("", |(_, text)| *text);
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            k.name,
            type_words(&k.shape).replace('|', "\\|"),
            if k.required { "yes" } else { "no" },
            about.replace('|', "\\|")
        );
    }
    for k in keys.iter() {
        section(out, missing, docs, &format!("{path}.{}", k.name), k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tools_risk_is_required_and_lists_its_values() {
        if let Err(e) = config_shape() {
            panic!("{e}");
        }
        assert_eq!(
            expected_of("risk").as_deref(),
            Some("one of \"read\", \"write\", \"destructive\"")
        );
        let text = markdown().unwrap();
        assert!(
            text.contains("| `risk` | one of \"read\", \"write\", \"destructive\" | yes |"),
            "{text}"
        );
        assert!(text.contains("| `max_turns` | integer (0 or more) | no |"));
        assert!(text.contains("## `[[tool]]`"));
        assert!(text.contains("## `[[server.token]]`"));
    }
}
