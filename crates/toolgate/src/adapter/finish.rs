//! The normalised finish signal of a response (PROVIDERS.md §9).

use std::fmt;

use super::walk::token;

/// How the model's turn ended, normalised across providers.
///
/// Only [`Finish::Complete`] lets a call run: every other kind means the
/// turn's calls must not execute (the gate denies them `truncated`). The
/// `reason` is the provider's own token (`length`, `max_tokens`,
/// `MAX_TOKENS`, …), or one of toolgate's (`stream_truncated`, `missing`,
/// `refusal`); it is at most 64 printable ASCII bytes.
///
/// Whether calls are present never comes from here: `finish_reason: "stop"`
/// with `tool_calls` is complete with calls.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Finish {
    /// The turn ended normally (`stop`, `tool_calls`, `end_turn`, `tool_use`,
    /// `completed`, `STOP`; an MCP request).
    Complete {
        /// The provider's token.
        reason: String,
    },
    /// The output was cut: `length`, `max_tokens`,
    /// `model_context_window_exceeded`, `insufficient_system_resource`,
    /// `incomplete`/`max_output_tokens`, `MAX_TOKENS`, an incomplete item, or
    /// a stream that ended without its terminal event (`stream_truncated`).
    Truncated {
        /// The provider's token, or `stream_truncated`.
        reason: String,
    },
    /// Content was withheld by a filter: `content_filter`, `SAFETY`,
    /// `RECITATION`, `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII`, `IMAGE_*`,
    /// `LANGUAGE`, a Gemini `promptFeedback.blockReason`.
    ContentFiltered {
        /// The provider's token.
        reason: String,
    },
    /// The model refused: an OpenAI `refusal` message or content part, an
    /// Anthropic `refusal` stop reason.
    Refused {
        /// `refusal`, or the Anthropic `stop_details.category`.
        reason: String,
    },
    /// The provider says the call itself is broken: Gemini
    /// `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`, `TOO_MANY_TOOL_CALLS`.
    MalformedCall {
        /// The provider's token.
        reason: String,
    },
    /// The turn is not over: Anthropic `pause_turn`, Responses `in_progress`
    /// or `queued`.
    Paused {
        /// The provider's token.
        reason: String,
    },
    /// The provider reported an error: Responses `failed` or `cancelled`, a
    /// stream `error` event.
    Error {
        /// The provider's status or error type.
        reason: String,
    },
    /// Anything else, including an absent finish signal (`missing`): fail
    /// closed.
    Unknown {
        /// The provider's token, or `missing`.
        reason: String,
    },
}

impl Finish {
    /// The stable name of the kind: `complete`, `truncated`,
    /// `content_filtered`, `refused`, `malformed_call`, `paused`, `error`,
    /// `unknown`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Complete { .. } => "complete",
            Self::Truncated { .. } => "truncated",
            Self::ContentFiltered { .. } => "content_filtered",
            Self::Refused { .. } => "refused",
            Self::MalformedCall { .. } => "malformed_call",
            Self::Paused { .. } => "paused",
            Self::Error { .. } => "error",
            Self::Unknown { .. } => "unknown",
        }
    }

    /// The provider's (or toolgate's) token behind the kind.
    pub fn reason(&self) -> &str {
        match self {
            Self::Complete { reason }
            | Self::Truncated { reason }
            | Self::ContentFiltered { reason }
            | Self::Refused { reason }
            | Self::MalformedCall { reason }
            | Self::Paused { reason }
            | Self::Error { reason }
            | Self::Unknown { reason } => reason,
        }
    }

    /// Whether the turn ended normally, so that its calls may be considered.
    pub fn is_complete(&self) -> bool {
        matches!(self, Self::Complete { .. })
    }

    /// How bad the finish is, to pick one for a response with several choices.
    fn severity(&self) -> u8 {
        match self {
            Self::Complete { .. } => 0,
            Self::Paused { .. } => 1,
            Self::Refused { .. } => 2,
            Self::ContentFiltered { .. } => 3,
            Self::Truncated { .. } => 4,
            Self::MalformedCall { .. } => 5,
            Self::Unknown { .. } => 6,
            Self::Error { .. } => 7,
        }
    }

    /// The worse of two finishes; the first on a tie.
    pub(crate) fn worst(self, other: Self) -> Self {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    pub(crate) fn complete(reason: &str) -> Self {
        Self::Complete {
            reason: token(reason),
        }
    }

    pub(crate) fn truncated(reason: &str) -> Self {
        Self::Truncated {
            reason: token(reason),
        }
    }

    pub(crate) fn unknown(reason: &str) -> Self {
        Self::Unknown {
            reason: token(reason),
        }
    }

    pub(crate) fn error(reason: &str) -> Self {
        Self::Error {
            reason: token(reason),
        }
    }

    pub(crate) fn refused(reason: &str) -> Self {
        Self::Refused {
            reason: token(reason),
        }
    }

    /// The stream ended before its terminal event.
    pub(crate) fn stream_truncated() -> Self {
        Self::truncated("stream_truncated")
    }
}

impl fmt::Display for Finish {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (`{}`)", self.kind(), self.reason())
    }
}

/// OpenAI Chat Completions and DeepSeek `finish_reason`.
pub(crate) fn openai_chat(reason: Option<&str>) -> Finish {
    let Some(r) = reason else {
        return Finish::unknown("missing");
    };
    let reason = token(r);
    match r {
        "stop" | "tool_calls" | "function_call" => Finish::Complete { reason },
        "length" | "insufficient_system_resource" => Finish::Truncated { reason },
        "content_filter" => Finish::ContentFiltered { reason },
        _ => Finish::Unknown { reason },
    }
}

/// Anthropic `stop_reason`.
pub(crate) fn anthropic(reason: Option<&str>, refusal_category: Option<&str>) -> Finish {
    let Some(r) = reason else {
        return Finish::unknown("missing");
    };
    let reason = token(r);
    match r {
        "end_turn" | "stop_sequence" | "tool_use" => Finish::Complete { reason },
        "max_tokens" | "model_context_window_exceeded" => Finish::Truncated { reason },
        "refusal" => Finish::refused(refusal_category.unwrap_or("refusal")),
        "pause_turn" => Finish::Paused { reason },
        _ => Finish::Unknown { reason },
    }
}

/// Gemini `finishReason`.
pub(crate) fn gemini(reason: Option<&str>) -> Finish {
    let Some(r) = reason else {
        return Finish::unknown("missing");
    };
    let reason = token(r);
    match r {
        "STOP" => Finish::Complete { reason },
        "MAX_TOKENS" => Finish::Truncated { reason },
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "LANGUAGE" => {
            Finish::ContentFiltered { reason }
        }
        _ if r.starts_with("IMAGE_") || r == "NO_IMAGE" => Finish::ContentFiltered { reason },
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => {
            Finish::MalformedCall { reason }
        }
        _ => Finish::Unknown { reason },
    }
}

/// OpenAI Responses `status` with `incomplete_details.reason`.
pub(crate) fn responses(status: Option<&str>, incomplete: Option<&str>) -> Finish {
    let Some(s) = status else {
        return Finish::unknown("missing");
    };
    let reason = token(s);
    match s {
        "completed" => Finish::Complete { reason },
        "incomplete" => match incomplete {
            Some("content_filter") => Finish::ContentFiltered {
                reason: token("content_filter"),
            },
            Some(r) => Finish::truncated(r),
            None => Finish::Truncated { reason },
        },
        "failed" | "cancelled" => Finish::Error { reason },
        "in_progress" | "queued" => Finish::Paused { reason },
        _ => Finish::Unknown { reason },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taxonomy() {
        assert_eq!(openai_chat(Some("stop")).kind(), "complete");
        assert_eq!(openai_chat(Some("length")).kind(), "truncated");
        assert_eq!(
            openai_chat(Some("insufficient_system_resource")).kind(),
            "truncated"
        );
        assert_eq!(
            openai_chat(Some("content_filter")).kind(),
            "content_filtered"
        );
        assert_eq!(openai_chat(None).kind(), "unknown");
        assert_eq!(openai_chat(Some("weird")).kind(), "unknown");
        assert_eq!(anthropic(Some("max_tokens"), None).kind(), "truncated");
        assert_eq!(anthropic(Some("refusal"), Some("cyber")).reason(), "cyber");
        assert_eq!(anthropic(Some("pause_turn"), None).kind(), "paused");
        assert_eq!(gemini(Some("MAX_TOKENS")).kind(), "truncated");
        assert_eq!(
            gemini(Some("MALFORMED_FUNCTION_CALL")).kind(),
            "malformed_call"
        );
        assert_eq!(gemini(Some("IMAGE_SAFETY")).kind(), "content_filtered");
        assert_eq!(gemini(Some("OTHER")).kind(), "unknown");
        assert_eq!(
            responses(Some("incomplete"), Some("max_output_tokens")).reason(),
            "max_output_tokens"
        );
        assert_eq!(
            responses(Some("incomplete"), Some("content_filter")).kind(),
            "content_filtered"
        );
        assert_eq!(responses(Some("failed"), None).kind(), "error");
    }

    #[test]
    fn worst_wins_and_reasons_are_bounded() {
        let f = Finish::complete("stop").worst(Finish::truncated("length"));
        assert_eq!(f.kind(), "truncated");
        let f = Finish::error("x").worst(Finish::truncated("length"));
        assert_eq!(f.kind(), "error");
        let long = "a\u{1}b".repeat(100);
        let f = openai_chat(Some(&long));
        assert_eq!(f.reason().len(), 64);
        assert!(f.reason().bytes().all(|b| b.is_ascii_graphic()));
    }
}
