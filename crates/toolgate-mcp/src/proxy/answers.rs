//! The answers the proxy builds from what the server said: the checked
//! result of a forwarded call, the filtered `tools/list`, the error results
//! of calls that never got one, and their audit records.

use std::sync::Arc;

use toolgate::registry::Registry;
use toolgate_json::{canonical, Value};
use toolgate_store::{AuditEntry, AuditVerdict, ToolResultRecord};

use super::{finding, pinning, printable, Pending, Shared, Sides};
use crate::frame::{self, RequestId};
use crate::pins;
use crate::results::{self, OutputSchema};

impl Shared {
    /// Answers every pending request: calls with an error result, other
    /// requests with a JSON-RPC error.
    pub(super) async fn fail_pending(&self, sides: &Sides, code: &'static str) {
        let pending: Vec<(RequestId, Pending)> = self.lock().pending.drain().collect();
        for (id, p) in pending {
            let line = match p {
                Pending::Call { tool, call_id, .. } => {
                    self.record_result_failure(tool, call_id, code).await;
                    frame::result_answer(
                        &id,
                        results::text_result(&format!("refused by toolgate: {code}"), true),
                    )
                }
                Pending::OwnList => {
                    self.own_list_failed();
                    continue;
                }
                Pending::List { .. } | Pending::Other | Pending::Read(_) => frame::error_answer(
                    Some(&id),
                    frame::INTERNAL_ERROR,
                    &format!("refused by toolgate: {code}"),
                ),
            };
            sides.to_client(line).await;
        }
    }

    /// The audit record of a forwarded call whose result was refused or
    /// never came (`tool_result`, the code as its reason).
    pub(super) async fn record_result_failure(
        &self,
        tool: String,
        call_id: String,
        code: &'static str,
    ) {
        if !self
            .record_result(tool, call_id, vec![code.to_owned()], None)
            .await
        {
            finding("the audit record of a refused result could not be written");
        }
    }

    /// Writes the `tool_result` audit record of a forwarded call's result
    /// (what was found in it as its reasons, the digest of what the client
    /// gets); whether it is committed.
    pub(super) async fn record_result(
        &self,
        tool: String,
        call_id: String,
        reasons: Vec<String>,
        digest: Option<toolgate_json::canonical::Digest>,
    ) -> bool {
        self.record_note(tool, call_id, reasons, digest, "mcp result")
            .await
    }

    /// Writes a `tool_result` audit record with `note` saying where it
    /// passed; whether it is committed.
    pub(super) async fn record_note(
        &self,
        tool: String,
        call_id: String,
        reasons: Vec<String>,
        digest: Option<toolgate_json::canonical::Digest>,
        note: &'static str,
    ) -> bool {
        let gate = Arc::clone(&self.gate);
        let user = self.user.clone();
        let session = self.session.clone();
        let done = tokio::task::spawn_blocking(move || {
            let mut record = ToolResultRecord::new(note)
                .user(user)
                .session(session)
                .tool(tool)
                .call_id(call_id);
            for r in reasons {
                record = record.finding(r);
            }
            if let Some(d) = digest {
                record = record.digest(d);
            }
            gate.store().append(gate.tool_result(record)).is_ok()
        })
        .await;
        matches!(done, Ok(true))
    }

    /// An audit record of a denial the proxy made itself.
    pub(super) fn audit(&self, tool: &str, call_id: &str, code: &str, note: Option<&str>) -> bool {
        let mut entry = AuditEntry::new(self.gate.now(), AuditVerdict::Deny)
            .user(self.user.as_str())
            .session(self.session.as_str())
            .tool(tool)
            .call_id(call_id)
            .reason(code);
        if let Some(n) = note {
            entry = entry.note(n);
        }
        self.gate.store().append(entry).is_ok()
    }

    /// The server's answer to a forwarded call, checked (`approved`: the
    /// call was let through by a human's approval, with its arguments'
    /// digest).
    pub(super) async fn call_result(
        &self,
        id: &RequestId,
        value: &Value<'static>,
        tool: &str,
        call_id: &str,
        approved: Option<toolgate_json::canonical::Digest>,
    ) -> String {
        let Some(result) = value.as_object().and_then(|o| o.get("result")) else {
            // A JSON-RPC error from the server: its message may carry the
            // server's internals; the model gets the code alone.
            let code = value
                .pointer("/error/code")
                .and_then(Value::as_number)
                .and_then(toolgate_json::Number::as_i64)
                .unwrap_or(0);
            let text = format!("the tool server refused the call (error {code})");
            let answer = results::text_result(&text, true);
            let reasons = vec![format!("server_error:{code}")];
            let digest = canonical::digest(&answer);
            if !self
                .record_result(tool.to_owned(), call_id.to_owned(), reasons, Some(digest))
                .await
            {
                return store_unavailable(id);
            }
            return frame::result_answer(id, answer);
        };
        if result.pointer("/resultType").and_then(Value::as_str) == Some("input_required") {
            // The server asks the client for input (2026-07-28): relayed,
            // read first ([`super::reads`]).
            return self
                .input_required_answer(id, result, tool, call_id, approved)
                .await;
        }
        let output = self.lock().outputs.get(tool).cloned();
        let (checked, report) =
            results::check_result(result, output.as_deref(), self.options.max_result_bytes);
        let mut reasons: Vec<String> = Vec::new();
        if let Some(code) = report.refused {
            finding(&format!("result of `{}` refused: {code}", printable(tool)));
            reasons.push(code.to_owned());
        }
        if report.truncated {
            finding(&format!(
                "result of `{}` cut at {} bytes",
                printable(tool),
                self.options.max_result_bytes
            ));
        }
        if !report.findings.is_empty() {
            let codes: Vec<&str> = report.findings.iter().map(|c| c.as_str()).collect();
            finding(&format!(
                "result of `{}`: {}",
                printable(tool),
                codes.join(", ")
            ));
            reasons.extend(codes.iter().map(|c| (*c).to_owned()));
        }
        if report.truncated && !reasons.iter().any(|r| r == "truncated") {
            reasons.push("truncated".to_owned());
        }
        // The result is audited before the client sees it; a result that
        // cannot be recorded does not pass.
        let digest = canonical::digest(&checked);
        if !self
            .record_result(tool.to_owned(), call_id.to_owned(), reasons, Some(digest))
            .await
        {
            finding("the audit record of a result could not be written");
            return store_unavailable(id);
        }
        frame::result_answer(id, checked)
    }

    /// A `tools/list` result: only the config's tools, each pinned; the
    /// changed ones hidden; hidden characters in descriptions reported.
    /// `paged` (the sides to list every page on): the answer is one page of
    /// several, checked against the whole catalog rather than taken for it.
    pub(super) async fn filter_list(
        &self,
        id: &RequestId,
        value: &Value<'static>,
        paged: Option<&Sides>,
    ) -> String {
        let Some(result) = value.as_object().and_then(|o| o.get("result")) else {
            // An error answer: forwarded as it is (it lists no tool).
            return canonical::to_string(value);
        };
        let Some(tools) = result.pointer("/tools").and_then(Value::as_array) else {
            return frame::error_answer(
                Some(id),
                frame::INTERNAL_ERROR,
                "refused by toolgate: invalid_result",
            );
        };
        let pinned = match paged {
            Some(sides) => self.page_states(tools, sides).await,
            None => self.check_catalog(tools).await,
        };
        let narrowing = self.lock().narrowed.is_some();
        let exhausted = if narrowing {
            self.exhausted_tools().await
        } else {
            Vec::new()
        };
        let registry: &Registry = self.gate.gate().registry();
        let mut kept = Vec::new();
        let mut state = self.lock();
        for tool in tools {
            let Some(o) = tool.as_object() else { continue };
            let Some(name) = o.get("name").and_then(Value::as_str) else {
                continue;
            };
            let Some(registered) = registry.get(name) else {
                finding(&format!(
                    "tools/list: `{}` hidden: not registered in the config",
                    printable(name)
                ));
                continue;
            };
            for member in ["title", "description"] {
                if let Some(text) = o.get(member).and_then(Value::as_str) {
                    report_hidden(name, member, text);
                }
            }
            if let Some(text) = tool.pointer("/annotations/title").and_then(Value::as_str) {
                report_hidden(name, "annotations.title", text);
            }
            // Only a definition a human (or trust on first use) approved.
            let pin = pinned.get(name).copied().flatten();
            if pin != Some(toolgate_store::PinState::Approved) {
                pinning::report_unapproved(&state.catalog, name, o, pin);
                continue;
            }
            match o.get("outputSchema") {
                Some(schema) => {
                    state
                        .outputs
                        .insert(name.to_owned(), Arc::new(OutputSchema::compile(schema)));
                }
                None => {
                    state.outputs.remove(name);
                }
            }
            // Narrowed for the user: a tool the user may not call at all
            // is not shown; a resource argument lists the user's ids.
            let narrowed = match &state.narrowed {
                None => None,
                Some(n) => match n.tools.iter().find(|t| t.name == name) {
                    Some(t) => t.ids.as_ref().map(|_| &t.schema),
                    None => {
                        finding(&format!(
                            "tools/list: `{}` hidden: the policies let this user call it with nothing",
                            printable(name)
                        ));
                        continue;
                    }
                },
            };
            // Narrowed by the limits: a tool the user or session has
            // used up is not shown until its window frees a call.
            if exhausted.iter().any(|t| t == name) {
                finding(&format!(
                    "tools/list: `{}` hidden: a limit counting this user or session is used up",
                    printable(name)
                ));
                continue;
            }
            // Built from the pass list (`pins::shown_definition`): the
            // schema the gate enforces, the config's description when it
            // has one, every shown text without hidden characters.
            let shown = pins::shown_definition(
                o,
                narrowed.unwrap_or(registered.raw_schema()),
                registered.description(),
            );
            kept.push(Value::Object(shown));
        }
        drop(state);
        let mut out = result.as_object().cloned().unwrap_or_default();
        out.insert("tools", Value::Array(kept));
        frame::result_answer(id, Value::Object(out))
    }
}

impl Shared {
    /// The tools a `[[limit]]` counting the proxy's user or session (or
    /// everyone) has used up now; when the store cannot be read, every
    /// tool a limit counts (the narrowing fails closed; the gate still
    /// decides each call).
    async fn exhausted_tools(&self) -> Vec<String> {
        let g = self.gate.gate();
        let limited: Vec<String> = g
            .registry()
            .iter()
            .filter(|t| !g.tool_limits(t.name()).is_empty())
            .map(|t| t.name().to_owned())
            .collect();
        if limited.is_empty() {
            return limited;
        }
        let gate = Arc::clone(&self.gate);
        let (user, session) = (self.user.clone(), self.session.clone());
        let read = tokio::task::spawn_blocking(move || {
            gate.exhausted_tools(toolgate_store::UsageOf {
                user: &user,
                session: Some(&session),
                token: None,
            })
        })
        .await;
        match read {
            Ok(Ok(hidden)) => hidden,
            _ => {
                finding(
                    "tools/list: the limits' usage could not be read: every limited tool hidden",
                );
                limited
            }
        }
    }
}

fn report_hidden(tool: &str, member: &str, text: &str) {
    for (kind, count, first) in pins::hidden_characters(text) {
        finding(&format!(
            "tools/list: `{}` {member} has hidden characters: {} ({count}, the first at character {first})",
            printable(tool),
            kind.as_str()
        ));
    }
    let cues = pins::instruction_like(text);
    if !cues.is_empty() {
        finding(&format!(
            "tools/list: `{}` {member} has instruction-like text: {}",
            printable(tool),
            cues.join(", ")
        ));
    }
}

/// The answer to a call whose result could not be recorded.
pub(super) fn store_unavailable(id: &RequestId) -> String {
    frame::result_answer(
        id,
        results::text_result("refused by toolgate: store_unavailable", true),
    )
}
