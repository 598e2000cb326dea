//! One hook event, strictly read.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use toolgate_json::{canonical, Object, Value};

/// The longest session id, tool name, tool use id or working directory an
/// event may carry, in bytes (DESIGN.md contract 10); a longer one makes
/// the event unreadable.
pub const MAX_ID_BYTES: usize = 4096;

/// The coding agent whose protocol is spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code (`PreToolUse`, `PostToolUse`).
    Claude,
    /// OpenAI Codex CLI (`PreToolUse`, `PostToolUse`).
    Codex,
    /// Gemini CLI (`BeforeTool`, `AfterTool`).
    Gemini,
}

impl Agent {
    /// The stable name: `claude`, `codex`, `gemini`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
        }
    }

    /// The event names before and after a tool runs.
    pub const fn event_names(self) -> (&'static str, &'static str) {
        match self {
            Self::Claude | Self::Codex => ("PreToolUse", "PostToolUse"),
            Self::Gemini => ("BeforeTool", "AfterTool"),
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Agent {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "claude" => Ok(Self::Claude),
            "codex" => Ok(Self::Codex),
            "gemini" => Ok(Self::Gemini),
            _ => Err(HookError::new("unknown_agent", "")),
        }
    }
}

/// Before or after the tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `PreToolUse` / `BeforeTool`: decide the call.
    Before,
    /// `PostToolUse` / `AfterTool`: check the result.
    After,
}

/// Why an event could not be read: a stable code and the JSON Pointer of
/// the member at fault. Never carries the event's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookError {
    code: &'static str,
    pointer: &'static str,
}

impl HookError {
    pub(crate) const fn new(code: &'static str, pointer: &'static str) -> Self {
        Self { code, pointer }
    }

    /// The stable code: `not_json`, `not_object`, `missing_member`,
    /// `wrong_type`, `too_long`, `empty`, `unsupported_event`,
    /// `unknown_agent`.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The JSON Pointer of the member at fault (`""` for the event).
    pub fn pointer(&self) -> &'static str {
        self.pointer
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "unreadable hook event: {}", self.code)
        } else {
            write!(
                f,
                "unreadable hook event: {} at {}",
                self.code, self.pointer
            )
        }
    }
}

impl std::error::Error for HookError {}

/// One event, as the agent sent it; members not listed here are ignored
/// (they are trusted for nothing).
#[derive(Debug, Clone)]
pub struct HookEvent {
    agent: Agent,
    phase: Phase,
    session_id: String,
    tool_name: String,
    tool_input: Value<'static>,
    tool_use_id: Option<String>,
    cwd: Option<String>,
    tool_response: Option<Value<'static>>,
}

impl HookEvent {
    /// Reads one event of `agent`'s protocol: strict JSON (duplicate keys,
    /// lone surrogates and the like refused), an object with
    /// `hook_event_name` (the agent's before or after event), a non-empty
    /// `session_id`, a non-empty `tool_name`, an object `tool_input`, an
    /// optional `tool_use_id` and `cwd` (strings), and after the tool a
    /// `tool_response` (any JSON).
    pub fn parse(agent: Agent, bytes: &[u8]) -> Result<Self, HookError> {
        let value = toolgate_json::from_slice(bytes).map_err(|_| HookError::new("not_json", ""))?;
        let Value::Object(o) = value else {
            return Err(HookError::new("not_object", ""));
        };
        let (before, after) = agent.event_names();
        let name = string(&o, "hook_event_name", "/hook_event_name")?;
        let phase = if name == before {
            Phase::Before
        } else if name == after {
            Phase::After
        } else {
            return Err(HookError::new("unsupported_event", "/hook_event_name"));
        };
        let session_id = non_empty(string(&o, "session_id", "/session_id")?, "/session_id")?;
        let tool_name = non_empty(string(&o, "tool_name", "/tool_name")?, "/tool_name")?;
        let tool_input = match o.get("tool_input") {
            None => return Err(HookError::new("missing_member", "/tool_input")),
            Some(v @ Value::Object(_)) => v.clone().into_owned(),
            Some(_) => return Err(HookError::new("wrong_type", "/tool_input")),
        };
        let tool_use_id = optional(&o, "tool_use_id", "/tool_use_id")?;
        let cwd = optional(&o, "cwd", "/cwd")?;
        let tool_response = match phase {
            Phase::Before => None,
            Phase::After => match o.get("tool_response") {
                None => return Err(HookError::new("missing_member", "/tool_response")),
                Some(v) => Some(v.clone().into_owned()),
            },
        };
        Ok(Self {
            agent,
            phase,
            session_id,
            tool_name,
            tool_input,
            tool_use_id,
            cwd,
            tool_response,
        })
    }

    /// The agent.
    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// Before or after the tool.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The agent's session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The toolgate session: `AGENT:SESSION_ID`, so sessions of two agents
    /// never share counters.
    pub fn session(&self) -> String {
        format!("{}:{}", self.agent, self.session_id)
    }

    /// The tool's name, exactly as the agent sent it.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The tool's input.
    pub fn tool_input(&self) -> &Value<'static> {
        &self.tool_input
    }

    /// The agent's id of this tool call (Claude Code and Codex).
    pub fn tool_use_id(&self) -> Option<&str> {
        self.tool_use_id.as_deref()
    }

    /// The agent's working directory (the project).
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// After the tool: its result as text (a string as is, any other value
    /// as its canonical JSON text).
    pub fn result_text(&self) -> Option<String> {
        self.tool_response.as_ref().map(|v| match v {
            Value::String(s) => s.to_string(),
            other => canonical::to_string(other),
        })
    }

    /// The call as an MCP `tools/call` request, the body the gate decides
    /// (`Format::Mcp`): the tool use id (or `"hook"`) as the request id,
    /// the tool name and input as `params`.
    pub fn call_body(&self) -> Vec<u8> {
        let mut params = Object::new();
        params.insert("name", Value::String(Cow::Owned(self.tool_name.clone())));
        params.insert("arguments", self.tool_input.clone());
        let mut o = Object::new();
        o.insert("jsonrpc", Value::String(Cow::Borrowed("2.0")));
        o.insert(
            "id",
            Value::String(Cow::Owned(
                self.tool_use_id
                    .clone()
                    .unwrap_or_else(|| "hook".to_owned()),
            )),
        );
        o.insert("method", Value::String(Cow::Borrowed("tools/call")));
        o.insert("params", Value::Object(params));
        canonical::to_string(&Value::Object(o)).into_bytes()
    }
}

fn string(o: &Object<'_>, name: &str, pointer: &'static str) -> Result<String, HookError> {
    match o.get(name) {
        None => Err(HookError::new("missing_member", pointer)),
        Some(Value::String(s)) if s.len() > MAX_ID_BYTES => {
            Err(HookError::new("too_long", pointer))
        }
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(_) => Err(HookError::new("wrong_type", pointer)),
    }
}

fn optional(
    o: &Object<'_>,
    name: &str,
    pointer: &'static str,
) -> Result<Option<String>, HookError> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string(o, name, pointer).map(Some),
    }
}

fn non_empty(s: String, pointer: &'static str) -> Result<String, HookError> {
    if s.is_empty() {
        Err(HookError::new("empty", pointer))
    } else {
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: &str = r#"{"session_id":"s1","transcript_path":"/t","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}"#;

    #[test]
    fn a_claude_event_is_read() {
        let e = HookEvent::parse(Agent::Claude, CLAUDE.as_bytes()).unwrap();
        assert_eq!(e.phase(), Phase::Before);
        assert_eq!(e.session(), "claude:s1");
        assert_eq!(e.tool_name(), "Bash");
        assert_eq!(e.tool_use_id(), Some("toolu_1"));
        assert_eq!(e.cwd(), Some("/p"));
        assert_eq!(
            String::from_utf8(e.call_body()).unwrap(),
            r#"{"id":"toolu_1","jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"command":"ls"},"name":"Bash"}}"#
        );
    }

    #[test]
    fn the_event_name_must_be_the_agents() {
        assert_eq!(
            HookEvent::parse(Agent::Gemini, CLAUDE.as_bytes()).unwrap_err(),
            HookError::new("unsupported_event", "/hook_event_name")
        );
        let before = CLAUDE.replace("PreToolUse", "BeforeTool");
        assert_eq!(
            HookEvent::parse(Agent::Gemini, before.as_bytes())
                .unwrap()
                .session(),
            "gemini:s1"
        );
        let other = CLAUDE.replace("PreToolUse", "UserPromptSubmit");
        assert!(HookEvent::parse(Agent::Claude, other.as_bytes()).is_err());
    }

    #[test]
    fn unreadable_events_name_their_member_and_never_their_text() {
        for (text, code, pointer) in [
            ("{", "not_json", ""),
            (r#"{"a":1,"a":2}"#, "not_json", ""),
            ("[]", "not_object", ""),
            (
                r#"{"session_id":"s"}"#,
                "missing_member",
                "/hook_event_name",
            ),
        ] {
            assert_eq!(
                HookEvent::parse(Agent::Claude, text.as_bytes()).unwrap_err(),
                HookError::new(code, pointer),
                "{text}"
            );
        }
        for (from, to, code, pointer) in [
            (
                r#""session_id":"s1""#,
                r#""session_id":"""#,
                "empty",
                "/session_id",
            ),
            (
                r#""session_id":"s1""#,
                r#""session_id":1"#,
                "wrong_type",
                "/session_id",
            ),
            (
                r#""tool_name":"Bash""#,
                r#""tool_name":"""#,
                "empty",
                "/tool_name",
            ),
            (
                r#""tool_input":{"command":"ls"}"#,
                r#""tool_input":["ls"]"#,
                "wrong_type",
                "/tool_input",
            ),
            (
                r#","tool_use_id":"toolu_1""#,
                r#","tool_use_id":7"#,
                "wrong_type",
                "/tool_use_id",
            ),
        ] {
            let text = CLAUDE.replace(from, to);
            let e = HookEvent::parse(Agent::Claude, text.as_bytes()).unwrap_err();
            assert_eq!(e, HookError::new(code, pointer), "{text}");
            assert!(!e.to_string().contains("ls"));
        }
        let long = CLAUDE.replace("s1", &"x".repeat(MAX_ID_BYTES + 1));
        assert_eq!(
            HookEvent::parse(Agent::Claude, long.as_bytes()).unwrap_err(),
            HookError::new("too_long", "/session_id")
        );
    }

    #[test]
    fn an_after_event_needs_its_result() {
        let after = CLAUDE.replace("PreToolUse", "PostToolUse");
        assert_eq!(
            HookEvent::parse(Agent::Claude, after.as_bytes()).unwrap_err(),
            HookError::new("missing_member", "/tool_response")
        );
        let with = after.replace(
            r#""tool_use_id""#,
            r#""tool_response":{"stdout":"a"},"tool_use_id""#,
        );
        let e = HookEvent::parse(Agent::Claude, with.as_bytes()).unwrap();
        assert_eq!(e.phase(), Phase::After);
        assert_eq!(e.result_text().unwrap(), r#"{"stdout":"a"}"#);
    }
}
