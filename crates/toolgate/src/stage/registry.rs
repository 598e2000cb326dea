//! Stage 2: the tool must be registered under exactly this name (byte for
//! byte, after JSON unescaping; nothing resolved dynamically), in exactly
//! the namespace the call names (or in none).

use crate::reason::{Code, Reason};
use crate::registry::{Registry, Tool};

/// The registered tool named exactly `name` in `namespace`, or
/// `unknown_tool`.
pub(crate) fn check<'r>(
    registry: &'r Registry,
    namespace: Option<&str>,
    name: &str,
) -> Result<&'r Tool, Reason> {
    let key = match namespace {
        Some(ns) => format!("{ns}.{name}"),
        None => name.to_owned(),
    };
    registry
        .get(&key)
        .filter(|t| t.is_called_by(namespace, name))
        .ok_or_else(|| Reason::whole(Code::UnknownTool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_registry_knows_nothing() {
        let registry = Registry::new();
        assert_eq!(
            check(&registry, None, "search").unwrap_err(),
            Reason::whole(Code::UnknownTool)
        );
    }
}
