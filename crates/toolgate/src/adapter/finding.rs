//! Response-level findings: things the gate should know about a response
//! that are not calls and not errors.

use std::fmt;

/// What was noticed, as a stable machine-readable code.
///
/// The string returned by [`FindingCode::as_str`] is a wire contract. New
/// codes may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FindingCode {
    /// DeepSeek DSML tool-call markup (`<｜DSML｜invoke …>`, and its variant
    /// delimiters `‖`, `｜｜`, `|`) in text: a tool call that leaked into
    /// prose. It is never executed.
    DsmlMarkup,
    /// XML-like tool-call tags in text: `<tool_call>`, `<function_call>`,
    /// `<function=…>`, `<tool_use>`, `<invoke …>`, `<function_calls>`, …
    ToolCallMarkup,
    /// Chat-template special tokens for tool calls in text:
    /// `<｜tool▁calls▁begin｜>`, `<|tool_call|>`, `<|python_tag|>`,
    /// `[TOOL_CALLS]`, …
    SpecialToken,
    /// A JSON object shaped like a call (`{"name": …, "arguments": …}`) in
    /// text.
    JsonCallInText,
    /// The finish signal says the turn ended to call tools (`tool_calls`,
    /// `tool_use`), but the response carries no structured call.
    CallsExpected,
    /// Two calls of the response share one call id.
    DuplicateCallId,
    /// A tool the provider runs itself (hosted MCP, web search, code
    /// execution, Anthropic `server_tool_use`): it cannot be gated here.
    ServerSideCall,
    /// A client-side call item toolgate does not read (Responses
    /// `local_shell_call`, `computer_call`, `mcp_approval_request`, a chat
    /// tool call of an unknown `type`, …): it yields no call and must not run.
    UnsupportedCallItem,
    /// An output item or content block of a type toolgate does not know.
    UnrecognizedItem,
}

impl FindingCode {
    /// The stable wire name of the code, such as `dsml_markup`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DsmlMarkup => "dsml_markup",
            Self::ToolCallMarkup => "tool_call_markup",
            Self::SpecialToken => "special_token",
            Self::JsonCallInText => "json_call_in_text",
            Self::CallsExpected => "calls_expected",
            Self::DuplicateCallId => "duplicate_call_id",
            Self::ServerSideCall => "server_side_call",
            Self::UnsupportedCallItem => "unsupported_call_item",
            Self::UnrecognizedItem => "unrecognized_item",
        }
    }

    /// Every code, in a stable order.
    pub const ALL: [FindingCode; 9] = [
        Self::DsmlMarkup,
        Self::ToolCallMarkup,
        Self::SpecialToken,
        Self::JsonCallInText,
        Self::CallsExpected,
        Self::DuplicateCallId,
        Self::ServerSideCall,
        Self::UnsupportedCallItem,
        Self::UnrecognizedItem,
    ];

    /// Whether the finding is tool-call markup in text (a leak: the model
    /// tried to call a tool outside the structured fields).
    pub const fn is_text_leak(self) -> bool {
        matches!(
            self,
            Self::DsmlMarkup | Self::ToolCallMarkup | Self::SpecialToken | Self::JsonCallInText
        )
    }
}

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding: its code and the JSON Pointer of the place (for a stream,
/// of the event where the text or item begins).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// What was noticed.
    pub code: FindingCode,
    /// Where.
    pub pointer: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at `{}`", self.code, self.pointer)
    }
}

/// Collects findings without duplicates, up to a bound.
pub(crate) struct Findings {
    list: Vec<Finding>,
    max: usize,
}

impl Findings {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            list: Vec::new(),
            max,
        }
    }

    pub(crate) fn push(&mut self, code: FindingCode, pointer: impl Into<String>) {
        if self.list.len() >= self.max {
            return;
        }
        let pointer = pointer.into();
        if self
            .list
            .iter()
            .any(|f| f.code == code && f.pointer == pointer)
        {
            return;
        }
        self.list.push(Finding { code, pointer });
    }

    pub(crate) fn into_vec(self) -> Vec<Finding> {
        self.list
    }
}
