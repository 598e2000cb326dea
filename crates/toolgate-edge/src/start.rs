//! [`StartError`]: why a front end cannot start.

/// Why a front end cannot start from its config (a missing table, a
/// policy it needs that does not load): one sentence saying what to add or
/// fix. Every front end on the edge refuses to start with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartError(String);

impl StartError {
    /// The error saying `why`.
    pub fn new(why: impl Into<String>) -> Self {
        Self(why.into())
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

#[cfg(test)]
mod tests {
    use super::StartError;

    #[test]
    fn it_says_why() {
        let e = StartError::new("[proxy] names no upstream");
        assert_eq!(e.to_string(), "[proxy] names no upstream");
        let boxed: Box<dyn std::error::Error> = Box::new(e.clone());
        assert_eq!(boxed.to_string(), e.to_string());
    }
}
