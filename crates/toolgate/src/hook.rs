//! Coding agents' hook protocols: Claude Code, OpenAI Codex CLI and Gemini
//! CLI call a command before and after each tool runs, with one JSON event
//! on standard input, and read a decision from standard output and the exit
//! code. This module reads those events and writes the answers; it decides
//! nothing itself (`toolgate hook` decides each call with the gate, over the
//! store, as `toolgate check --format mcp` decides a `tools/call`).
//!
//! # The protocols read (versions in the book's "Coding agents", docs/src/agents.md)
//!
//! | agent | before | after | allow | deny | ask | replaced input |
//! |---|---|---|---|---|---|---|
//! | Claude Code | `PreToolUse` | `PostToolUse` | `permissionDecision: "allow"` | `"deny"` + reason | `"ask"` | `updatedInput` |
//! | Codex CLI | `PreToolUse` | `PostToolUse` | exit 0, no output | `permissionDecision: "deny"` + reason | none | none (rejected, and Codex then runs the call) |
//! | Gemini CLI | `BeforeTool` | `AfterTool` | `decision: "allow"` | `decision: "deny"` + reason | none documented | `hookSpecificOutput.tool_input` (merged over the model's) |
//!
//! All three block a call when the hook exits with code 2 and a reason on
//! standard error: that is the answer to every event this module cannot
//! read ([`HookError`]), so an error never lets a call through. Codex treats
//! the fields it does not support (`allow`, `ask`, `updatedInput`) as a
//! failed hook and runs the call: they are never written for Codex.
//!
//! # The executed value is the checked value
//!
//! The call is decided as an MCP `tools/call` made of the event's tool name
//! and input ([`HookEvent::call_body`]). Where the agent takes a replaced
//! input (Claude Code's `updatedInput`, Gemini's `tool_input`), an allowed
//! call is answered with the canonical arguments the gate checked. Codex
//! takes none: a call is allowed only if its input already is its canonical
//! value in meaning (the same canonical text), otherwise it is denied
//! `not_canonical`.

mod answer;
mod event;
mod project;

pub use self::answer::{Answer, OnHold, HELD_RETRY_FEEDBACK};
pub use self::event::{Agent, HookError, HookEvent, Phase, MAX_ID_BYTES};
pub use self::project::outside_project;
