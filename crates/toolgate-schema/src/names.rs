//! A compiled set of member names with a fast exact lookup, shared by the
//! keywords that look instance members up by name (`properties`,
//! `additionalProperties`, `required`, the strict closure).
//!
//! Names compare byte for byte. Each entry keeps its length and its first
//! eight bytes as a word, so most mismatches cost two integer comparisons;
//! large sets use a hash index.

use std::collections::HashMap;

/// Sets up to this size are scanned; larger ones are indexed.
const SCAN_LIMIT: usize = 16;

#[derive(Debug, Clone)]
struct Entry {
    len: usize,
    head: u64,
    /// Bytes 8..16.
    tail: u64,
    name: Box<str>,
}

/// An ordered set of names; [`NameSet::find`] returns a name's position.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameSet {
    entries: Vec<Entry>,
    index: Option<HashMap<Box<str>, usize>>,
}

fn head(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    match bytes.get(..8) {
        Some(first) => word.copy_from_slice(first),
        None => {
            for (slot, b) in word.iter_mut().zip(bytes) {
                *slot = *b;
            }
        }
    }
    u64::from_le_bytes(word)
}

impl NameSet {
    /// The set of `names`, in the given order (duplicates keep their first position).
    pub(crate) fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut set = Self::default();
        for name in names {
            if set.find(name).is_some() {
                continue;
            }
            let bytes = name.as_bytes();
            set.entries.push(Entry {
                len: bytes.len(),
                head: head(bytes),
                tail: head(bytes.get(8..).unwrap_or_default()),
                name: name.into(),
            });
        }
        if set.entries.len() > SCAN_LIMIT {
            set.index = Some(
                set.entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (e.name.clone(), i))
                    .collect(),
            );
        }
        set
    }

    /// The position of `name` in the set.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        if let Some(index) = &self.index {
            return index.get(name).copied();
        }
        let bytes = name.as_bytes();
        let (len, h) = (bytes.len(), head(bytes));
        let t = if len > 8 {
            head(bytes.get(8..).unwrap_or_default())
        } else {
            0
        };
        self.entries.iter().position(|e| {
            e.len == len && e.head == h && e.tail == t && (len <= 16 || e.name.as_bytes() == bytes)
        })
    }

    /// Whether `name` is in the set.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The number of names.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::NameSet;

    #[test]
    fn finds_exact_names_only() {
        for n in [3usize, 40] {
            let names: Vec<String> = (0..n).map(|i| format!("name_{i}_long_enough")).collect();
            let mut all: Vec<&str> = names.iter().map(String::as_str).collect();
            all.extend(["", "a", "ab", "abcdefgh", "abcdefghi"]);
            let set = NameSet::new(all.iter().copied());
            for (i, name) in all.iter().enumerate() {
                assert_eq!(set.find(name), Some(i), "{name}");
            }
            for miss in [
                "A",
                "abcdefgH",
                "abcdefghj",
                "name_0_long_enougH",
                "name_0",
                "a\0",
            ] {
                assert_eq!(set.find(miss), None, "{miss}");
            }
        }
    }
}
