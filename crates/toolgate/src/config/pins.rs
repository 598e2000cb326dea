//! An MCP upstream's name and what its first catalog gets: the store keeps
//! tool pins by them (`toolgate pins`, the approvals page), and `[mcp]`
//! names them (`upstream_name`, `pin_first`), so they live here, below both.

/// The name the stdio server's pins are kept under when `[mcp]` sets no
/// `upstream_name`.
pub const DEFAULT_UPSTREAM_NAME: &str = "default";
/// The longest `upstream_name` accepted, in bytes.
pub const MAX_UPSTREAM_NAME_BYTES: usize = 128;

/// What the proxy does with the very first catalog (`tools/list`) an
/// upstream shows, when the store holds no pin of that upstream yet
/// (`[mcp] pin_first`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PinFirst {
    /// `trust` (the default): trust on first use. Every tool of the first
    /// catalog is pinned and approved at once (audited `pin_approved`,
    /// reason `trust_on_first_use`); whatever the server changes, renames
    /// or adds later waits for a human.
    Trust,
    /// `approve`: every tool waits for a human, the first catalog's too:
    /// nothing is shown or called until `toolgate pins approve` (or the
    /// approvals page) approves its definition.
    Approve,
}

impl PinFirst {
    /// The config's name: `trust` or `approve`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Trust => "trust",
            Self::Approve => "approve",
        }
    }
}

/// Whether `name` is a valid upstream name: 1 to
/// [`MAX_UPSTREAM_NAME_BYTES`] bytes of ASCII letters, digits, `.`, `_`
/// and `-`.
pub fn valid_upstream_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_UPSTREAM_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upstream_name_is_plain_and_bounded() {
        assert!(valid_upstream_name(DEFAULT_UPSTREAM_NAME));
        assert!(valid_upstream_name("files-1.v2_x"));
        assert!(valid_upstream_name(&"a".repeat(MAX_UPSTREAM_NAME_BYTES)));
        for bad in ["", "a b", "a/b", "é", "a\n"] {
            assert!(!valid_upstream_name(bad), "{bad:?}");
        }
        assert!(!valid_upstream_name(
            &"a".repeat(MAX_UPSTREAM_NAME_BYTES + 1)
        ));
        assert_eq!(PinFirst::Trust.as_str(), "trust");
        assert_eq!(PinFirst::Approve.as_str(), "approve");
    }
}
