//! [`ToolResultRecord`]: the one builder of `tool_result` audit records,
//! timed by the store gate's clock ([`StoreGate::tool_result`]). The
//! service's `/v1/results`, the API proxy and the MCP proxy record a
//! tool result's findings with it, so the three records have one shape
//! and one clock (a test's manual clock, not the system's).

use toolgate_json::Digest;

use crate::audit::{AuditEntry, AuditVerdict};
use crate::persist::StoreGate;
use crate::time::Timestamp;

/// What a `tool_result` record says: the result's tool, call, digest and
/// findings, who it was for, and where it was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResultRecord {
    note: String,
    user: Option<String>,
    session: Option<String>,
    actor: Option<String>,
    tool: Option<String>,
    call_id: Option<String>,
    digest: Option<Digest>,
    findings: Vec<String>,
}

impl ToolResultRecord {
    /// A record of a result seen at `note` (a route, `mcp …`).
    pub fn new(note: impl Into<String>) -> Self {
        Self {
            note: note.into(),
            user: None,
            session: None,
            actor: None,
            tool: None,
            call_id: None,
            digest: None,
            findings: Vec::new(),
        }
    }

    /// The user the result was for.
    #[must_use]
    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// The session the result was for.
    #[must_use]
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// The caller that handed the result in (a service token's name).
    #[must_use]
    pub fn actor(mut self, actor: impl Into<String>) -> Self {
        self.actor = Some(actor.into());
        self
    }

    /// The tool that produced it.
    #[must_use]
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// The call it answers.
    #[must_use]
    pub fn call_id(mut self, call_id: impl Into<String>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }

    /// The digest of the result's text (never the text).
    #[must_use]
    pub fn digest(mut self, digest: Digest) -> Self {
        self.digest = Some(digest);
        self
    }

    /// A finding's code; a code already given is not repeated.
    #[must_use]
    pub fn finding(mut self, code: impl Into<String>) -> Self {
        let code = code.into();
        if !self.findings.contains(&code) {
            self.findings.push(code);
        }
        self
    }

    /// The audit entry at `now`.
    pub fn entry(self, now: Timestamp) -> AuditEntry {
        let mut e = AuditEntry::new(now, AuditVerdict::ToolResult).note(self.note);
        if let Some(u) = self.user {
            e = e.user(u);
        }
        if let Some(s) = self.session {
            e = e.session(s);
        }
        if let Some(a) = self.actor {
            e = e.actor(a);
        }
        if let Some(t) = self.tool {
            e = e.tool(t);
        }
        if let Some(c) = self.call_id {
            e = e.call_id(c);
        }
        if let Some(d) = self.digest {
            e = e.digest(d);
        }
        for f in self.findings {
            e = e.reason(f);
        }
        e
    }
}

impl StoreGate {
    /// The `tool_result` audit entry of `record`, timed by this gate's
    /// clock.
    pub fn tool_result(&self, record: ToolResultRecord) -> AuditEntry {
        record.entry(self.now())
    }
}
