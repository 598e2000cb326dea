//! Runs every JSONTestSuite parsing case, and the project's extra cases,
//! through the strict parser: one test per file, named after it, with the
//! verdict that `strict-profile-expectations.tsv` and the `y_`/`n_` prefix
//! prescribe. No skip list.
//!
//! It also pins what the canonical form does with each `test_transform` file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::collections::HashMap;
use std::path::Path;

use libtest_mimic::{Arguments, Failed, Trial};
use toolgate_json::{canonical, from_slice, ParseOptions, Read, Reader};

fn main() {
    let args = Arguments::from_args();
    let trials = match trials() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(101);
        }
    };
    libtest_mimic::run(&args, trials).exit();
}

fn trials() -> Result<Vec<Trial>, String> {
    let corpora = toolgate_testkit::corpora_dir(env!("CARGO_MANIFEST_DIR"))?;
    let expectations = read_expectations(&corpora.join("strict-profile-expectations.tsv"))?;
    let mut trials = Vec::new();
    let mut seen_listed = 0;
    for (folder, use_tsv) in [("JSONTestSuite/test_parsing", true), ("extra", false)] {
        let files = toolgate_testkit::files_in(&corpora.join(folder))?;
        if files.is_empty() {
            return Err(format!("no cases in `{folder}`"));
        }
        for path in files {
            let name = file_name(&path);
            let listed = if use_tsv {
                expectations.get(&name).copied()
            } else {
                None
            };
            if listed.is_some() {
                seen_listed += 1;
            }
            let accept = match (listed, name.get(..2)) {
                (Some(verdict), _) => verdict,
                (None, Some("y_")) => true,
                (None, Some("n_")) => false,
                _ => return Err(format!("`{folder}/{name}` has no verdict")),
            };
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let trial_name = format!("{folder}/{name}");
            trials.push(Trial::test(trial_name, move || check(&bytes, accept)));
        }
    }
    if seen_listed != expectations.len() {
        return Err(format!(
            "the TSV lists {} files but {seen_listed} were found",
            expectations.len()
        ));
    }
    for (name, expected) in TRANSFORMS {
        let path = corpora.join("JSONTestSuite/test_transform").join(name);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        trials.push(Trial::test(format!("test_transform/{name}"), move || {
            transform(&bytes, expected)
        }));
    }
    let transform_files =
        toolgate_testkit::files_in(&corpora.join("JSONTestSuite/test_transform"))?;
    if transform_files.len() != TRANSFORMS.len() {
        return Err(format!(
            "test_transform holds {} files, the table {}",
            transform_files.len(),
            TRANSFORMS.len()
        ));
    }
    Ok(trials)
}

fn check(bytes: &[u8], accept: bool) -> Result<(), Failed> {
    // The tree-free reader accepts exactly what the tree parser accepts,
    // with the same canonical text.
    let mut reader = Reader::new(ParseOptions::new());
    match (reader.read(bytes, &mut ()), from_slice(bytes)) {
        (Read::Accepted, Ok(v)) if reader.canonical() == canonical::to_string(&v) => {}
        (Read::Refused, Err(_)) => {}
        (read, tree) => {
            return Err(format!("the reader says {read:?}, the tree parser {tree:?}").into())
        }
    }
    match (from_slice(bytes), accept) {
        (Ok(value), true) => {
            // Every accepted value survives the canonical round trip.
            let text = canonical::to_string(&value);
            let again =
                from_slice(text.as_bytes()).map_err(|e| format!("canonical text rejected: {e}"))?;
            if again != value {
                return Err("canonical round trip changed the value".into());
            }
            Ok(())
        }
        (Err(_), false) => Ok(()),
        (Ok(_), false) => Err("accepted, expected reject".into()),
        (Err(e), true) => Err(format!("rejected ({e}), expected accept").into()),
    }
}

/// What the canonical form does with each `test_transform` file: the
/// canonical text, or `!code` when the strict profile rejects the input.
const TRANSFORMS: [(&str, &str); 22] = [
    ("number_-9223372036854775808.json", "[-9223372036854775808]"),
    ("number_-9223372036854775809.json", "[-9223372036854775809]"),
    ("number_1.0.json", "[1]"),
    // More precision than a double holds: refused, not read as `1`.
    ("number_1.000000000000000005.json", "!number_too_precise"),
    ("number_1000000000000000.json", "[1000000000000000]"),
    // An integer lexeme beyond 2^53 keeps its exact digits.
    ("number_10000000000000000999.json", "[10000000000000000999]"),
    ("number_1e-999.json", "!number_out_of_range"),
    ("number_1e6.json", "[1000000]"),
    ("number_9223372036854775807.json", "[9223372036854775807]"),
    ("number_9223372036854775808.json", "[9223372036854775808]"),
    // NFC and NFD spellings are different names; sorted by UTF-16 units.
    (
        "object_key_nfc_nfd.json",
        "{\"e\u{301}\":\"NFD\",\"\u{e9}\":\"NFC\"}",
    ),
    (
        "object_key_nfd_nfc.json",
        "{\"e\u{301}\":\"NFD\",\"\u{e9}\":\"NFC\"}",
    ),
    ("object_same_key_different_values.json", "!duplicate_key"),
    ("object_same_key_same_value.json", "!duplicate_key"),
    ("object_same_key_unclear_values.json", "!duplicate_key"),
    ("string_1_escaped_invalid_codepoint.json", "!lone_surrogate"),
    ("string_1_invalid_codepoint.json", "!invalid_utf8"),
    (
        "string_2_escaped_invalid_codepoints.json",
        "!lone_surrogate",
    ),
    ("string_2_invalid_codepoints.json", "!invalid_utf8"),
    (
        "string_3_escaped_invalid_codepoints.json",
        "!lone_surrogate",
    ),
    ("string_3_invalid_codepoints.json", "!invalid_utf8"),
    // U+0000 is kept and written back with the minimal escape.
    ("string_with_escaped_NULL.json", "[\"A\\u0000B\"]"),
];

fn transform(bytes: &[u8], expected: &str) -> Result<(), Failed> {
    let got = match from_slice(bytes) {
        Ok(v) => canonical::to_string(&v),
        Err(e) => format!("!{}", e.code()),
    };
    if got == expected {
        Ok(())
    } else {
        Err(format!("got `{got}`, expected `{expected}`").into())
    }
}

fn read_expectations(path: &Path) -> Result<HashMap<String, bool>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut map = HashMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let mut fields = line.split('\t');
        let (Some(file), Some(expect)) = (fields.next(), fields.next()) else {
            return Err(format!(
                "{}:{}: expected file<TAB>expect",
                path.display(),
                n + 1
            ));
        };
        let accept = match expect {
            "accept" => true,
            "reject" => false,
            other => {
                return Err(format!(
                    "{}:{}: bad verdict `{other}`",
                    path.display(),
                    n + 1
                ))
            }
        };
        map.insert(file.to_owned(), accept);
    }
    Ok(map)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
