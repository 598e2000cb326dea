//! Stage 2: the tool must be registered under exactly this name (byte for
//! byte, after JSON unescaping; nothing resolved dynamically).

use crate::reason::{Code, Reason};
use crate::registry::{Registry, Tool};

/// The registered tool named exactly `name`, or `unknown_tool`.
pub(crate) fn check<'r>(registry: &'r Registry, name: &str) -> Result<&'r Tool, Reason> {
    registry
        .get(name)
        .ok_or_else(|| Reason::whole(Code::UnknownTool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_registry_knows_nothing() {
        let registry = Registry::new();
        assert_eq!(
            check(&registry, "search").unwrap_err(),
            Reason::whole(Code::UnknownTool)
        );
    }
}
