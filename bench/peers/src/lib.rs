//! The benchmark corpus of `../shared/perf` (beside the checkout), loaded
//! once for every pipeline of this workspace's benchmarks.
//!
//! Each corpus is a list of raw tool-call argument strings, as a provider
//! would send them; see `../shared/perf/README.md`. The folder can be
//! named with `TOOLGATE_PERF` instead.

use std::path::{Path, PathBuf};

/// One corpus: the raw argument texts of one or more tools.
#[derive(Debug)]
pub struct Corpus {
    /// `small`, `medium` or `large`.
    pub name: &'static str,
    /// `(tool name, raw argument text)`, every one valid for its tool's schema.
    pub valid: Vec<(String, Vec<u8>)>,
    /// `(tool name, mutation kind, raw argument text)`: each has one defect.
    pub bad: Vec<(String, String, Vec<u8>)>,
}

impl Corpus {
    /// Total bytes of the valid texts.
    pub fn valid_bytes(&self) -> u64 {
        self.valid.iter().map(|(_, b)| b.len() as u64).sum()
    }
}

/// The corpus folder: `TOOLGATE_PERF`, or `../shared/perf` beside the checkout.
pub fn perf_dir() -> Result<PathBuf, String> {
    let dir = match std::env::var_os("TOOLGATE_PERF") {
        Some(dir) => PathBuf::from(dir),
        // bench/peers -> the checkout -> the folder beside it.
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/perf"),
    };
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "missing benchmark corpus `{}`: put `../shared/perf` beside the checkout or set TOOLGATE_PERF",
            dir.display()
        ))
    }
}

/// The three corpora, in order: small (`search`, `refund`), medium
/// (`create_ticket`), large (`bulk_upsert`).
pub fn corpora() -> Result<Vec<Corpus>, String> {
    let perf = perf_dir()?;
    let sets: [(&'static str, &[&str]); 3] = [
        ("small", &["search", "refund"]),
        ("medium", &["create_ticket"]),
        ("large", &["bulk_upsert"]),
    ];
    let mut out = Vec::new();
    for (name, tools) in sets {
        let mut corpus = Corpus {
            name,
            valid: Vec::new(),
            bad: Vec::new(),
        };
        for tool in tools {
            let valid = read(&perf.join(format!("valid/{name}.{tool}.jsonl")))?;
            for line in valid.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                corpus.valid.push(((*tool).to_owned(), line.to_vec()));
            }
            let bad = read(&perf.join(format!("bad/{name}.{tool}.tsv")))?;
            for line in bad.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let tab = line
                    .iter()
                    .position(|&b| b == b'\t')
                    .ok_or_else(|| format!("bad/{name}.{tool}.tsv: a line without a tab"))?;
                let (kind, raw) = line.split_at(tab);
                corpus.bad.push((
                    (*tool).to_owned(),
                    String::from_utf8_lossy(kind).into_owned(),
                    raw.get(1..).unwrap_or_default().to_vec(),
                ));
            }
        }
        out.push(corpus);
    }
    Ok(out)
}

/// A tool's JSON Schema text from the corpus' `schemas` folder.
pub fn schema_text(tool: &str) -> Result<Vec<u8>, String> {
    read(&perf_dir()?.join(format!("schemas/{tool}.json")))
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}
