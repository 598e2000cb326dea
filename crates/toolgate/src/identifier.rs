//! The sizes of identifiers: what a model or a caller names a call, a
//! session, a user or a tool, and an approval's note.
//!
//! Each is bounded where it enters (the gate for call ids and tool names,
//! the store's gate entry for sessions and users, the service for ids in a
//! request, the store for everything it writes), so that no record, row
//! or page grows with a length the model or a caller chose. An identifier
//! over its bound is refused with the code `identifier_too_long`; where it
//! must still be named (the record of the refused call), it is written as
//! [`bounded`] spells it.

use std::borrow::Cow;

use toolgate_json::Digest;

/// The most bytes of a call id, a session, a user or a tool name (256).
pub const MAX_IDENTIFIER_BYTES: usize = 256;

/// The most bytes of an approval's or a record's note (4,096).
pub const MAX_NOTE_BYTES: usize = 4096;

/// Whether `s` is within [`MAX_IDENTIFIER_BYTES`].
pub fn within(s: &str) -> bool {
    s.len() <= MAX_IDENTIFIER_BYTES
}

/// `s` itself when within [`MAX_IDENTIFIER_BYTES`], else `oversized:` and
/// the hex SHA-256 of its bytes (74 bytes): a fixed-size name for an
/// identifier that was refused, which tells one apart from another and
/// never repeats its text.
pub fn bounded(s: &str) -> Cow<'_, str> {
    if within(s) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!("oversized:{}", Digest::of(s.as_bytes()).to_hex()))
}

#[cfg(test)]
mod tests {
    use super::{bounded, within, MAX_IDENTIFIER_BYTES};

    #[test]
    fn identifiers_at_the_bound_are_kept_and_past_it_named_by_digest() {
        let at = "a".repeat(MAX_IDENTIFIER_BYTES);
        assert!(within(&at));
        assert_eq!(bounded(&at), at.as_str());
        let past = "a".repeat(MAX_IDENTIFIER_BYTES + 1);
        assert!(!within(&past));
        let b = bounded(&past);
        assert!(b.starts_with("oversized:") && b.len() == 74, "{b}");
        assert_ne!(b, bounded(&"b".repeat(MAX_IDENTIFIER_BYTES + 1)));
    }
}
