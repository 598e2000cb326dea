//! Approvals for 2026-07-28 clients: multi round-trip requests (MRTR).
//!
//! A client of the 2026-07-28 era (its request's `_meta` names
//! `io.modelcontextprotocol/protocolVersion` 2026-07-28 or later) that
//! declares URL-mode elicitation gets, for a call that needs a human, the
//! result `{"resultType":"input_required","inputRequests":{"toolgate_approval":
//! ELICITATION},"requestState":STATE}`: the elicitation asks the user to open
//! the approvals page (`[mcp] approvals_url`) for this approval, and
//! `STATE` names the approval, its expiry and an HMAC-SHA256 under a secret
//! of this process over the approval id, the expiry, the proxy's user and
//! session, the tool, the digest of the canonical arguments and the tool's
//! pinned definition.
//!
//! The client retries with a new JSON-RPC id, `inputResponses` and
//! `requestState`. The client's answer proves nothing: the retry is checked
//! against the state (its MAC, its expiry, the approval in the store bound
//! to the same user, session, tool and argument digest as the retried call)
//! and then against the store. Approved there, the retry is decided by the
//! gate as any call (which consumes the approval: once), with
//! `inputResponses` and `requestState` removed before it is forwarded.
//! Still pending, the answer is `input_required` again (or an error result
//! when the user declined the elicitation). Denied, expired or used, and
//! any state that does not verify or does not match the call, is an error
//! result, audited; the call does not run.

use std::borrow::Cow;
use std::io::Read as _;
use std::sync::Arc;

use toolgate::Decision;
use toolgate_json::{canonical, Digest, Object, Value};
use toolgate_store::{Approval, ApprovalId, ApprovalKind, ApprovalState, RedactionKey, Timestamp};

use super::{finding, Shared, Sides};
use crate::frame::{self, RequestId};
use crate::results;

/// The first protocol version whose clients get `input_required`.
const MODERN: &str = "2026-07-28";
/// `_meta` member naming the client's protocol version.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` member holding the client's capabilities.
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// What every `requestState` of toolgate's starts with.
const STATE_PREFIX: &str = "toolgate.approval.v1.";
/// The key of the elicitation in `inputRequests` and `inputResponses`.
const INPUT_KEY: &str = "toolgate_approval";
/// The MAC's domain: no other HMAC under the key has this preimage.
const MAC_DOMAIN: &str = "toolgate mcp requestState v1";
/// The longest `requestState` read.
const MAX_STATE_BYTES: usize = 512;

/// What the proxy needs to answer `input_required`: the approvals page and
/// the secret the states are MACed with (random, per process).
pub(super) struct Mrtr {
    approvals_url: String,
    key: RedactionKey,
}

impl Mrtr {
    /// With the approvals page at `approvals_url` and a secret from the
    /// system's random source.
    pub(super) fn new(approvals_url: String) -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Self::with_key(approvals_url, bytes))
    }

    fn with_key(approvals_url: String, key: [u8; 32]) -> Self {
        Self {
            approvals_url,
            key: RedactionKey::from_bytes(key),
        }
    }

    /// The page a human approves `approval` on.
    fn url_for(&self, approval: ApprovalId) -> String {
        let base = self
            .approvals_url
            .split_once('#')
            .map_or(self.approvals_url.as_str(), |(b, _)| b);
        format!("{base}#approval-{approval}")
    }

    /// The MAC of a state's fields, hex.
    fn mac(&self, fields: &StateFields<'_>) -> String {
        let mut text = String::from(MAC_DOMAIN);
        let pin = fields.pin.map(|d| d.to_hex()).unwrap_or_default();
        let digest = fields.digest.to_hex();
        for part in [
            fields.approval.to_string().as_str(),
            fields.expires_ms.to_string().as_str(),
            fields.user,
            fields.session,
            fields.tool,
            digest.as_str(),
            pin.as_str(),
        ] {
            // Each field length-prefixed: no two field lists share a text.
            text.push('\n');
            text.push_str(&part.len().to_string());
            text.push(':');
            text.push_str(part);
        }
        self.key.digest(text.as_bytes())
    }

    /// The `requestState` for `fields`.
    fn state(&self, fields: &StateFields<'_>) -> String {
        let mac = self.mac(fields);
        let hex = mac.strip_prefix("hmac-sha256:").unwrap_or(&mac);
        format!(
            "{STATE_PREFIX}{}.{}.{hex}",
            fields.approval, fields.expires_ms
        )
    }

    /// The `input_required` result for `fields`.
    fn input_required(&self, fields: &StateFields<'_>) -> Value<'static> {
        let message = format!(
            "toolgate holds this call of `{}` for a human: open the approvals page, approve \
             approval {} there, then continue. Accepting here approves nothing.",
            fields.tool, fields.approval
        );
        let mut params = Object::new();
        params.insert("mode", text("url"));
        params.insert("message", Value::String(Cow::Owned(message)));
        params.insert(
            "url",
            Value::String(Cow::Owned(self.url_for(fields.approval))),
        );
        let mut request = Object::new();
        request.insert("method", text("elicitation/create"));
        request.insert("params", Value::Object(params));
        let mut requests = Object::new();
        requests.insert(INPUT_KEY, Value::Object(request));
        let mut o = Object::new();
        o.insert("resultType", text("input_required"));
        o.insert("inputRequests", Value::Object(requests));
        o.insert(
            "requestState",
            Value::String(Cow::Owned(self.state(fields))),
        );
        Value::Object(o)
    }
}

/// What a `requestState` binds.
struct StateFields<'a> {
    approval: ApprovalId,
    expires_ms: i64,
    user: &'a str,
    session: &'a str,
    tool: &'a str,
    digest: Digest,
    pin: Option<Digest>,
}

/// A `requestState` of toolgate's, split (not verified).
#[derive(Debug, PartialEq, Eq)]
struct ParsedState<'a> {
    approval: ApprovalId,
    expires_ms: i64,
    mac_hex: &'a str,
}

/// Splits `STATE_PREFIX ID . EXPIRES . HEX`; `None` for anything else.
fn parse_state(state: &str) -> Option<ParsedState<'_>> {
    if state.len() > MAX_STATE_BYTES {
        return None;
    }
    let rest = state.strip_prefix(STATE_PREFIX)?;
    let mut parts = rest.split('.');
    let id = parts.next()?;
    let expires = parts.next()?;
    let mac_hex = parts.next()?;
    if parts.next().is_some()
        || !id.bytes().all(|b| b.is_ascii_digit())
        || !expires.bytes().all(|b| b.is_ascii_digit())
        || mac_hex.len() != 64
        || !mac_hex
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    Some(ParsedState {
        approval: id.parse().ok()?,
        expires_ms: expires.parse().ok()?,
        mac_hex,
    })
}

/// Equality that takes as long whatever the first difference.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn text(s: &'static str) -> Value<'static> {
    Value::String(Cow::Borrowed(s))
}

/// A request's `params._meta` member `name`.
fn meta<'v>(value: &'v Value<'static>, name: &str) -> Option<&'v Value<'static>> {
    value
        .as_object()?
        .get("params")?
        .as_object()?
        .get("_meta")?
        .as_object()?
        .get(name)
}

/// Whether the request comes from a client of the 2026-07-28 era or later
/// that declares URL-mode elicitation.
fn modern_with_url_elicitation(value: &Value<'static>) -> bool {
    let version = meta(value, META_VERSION).and_then(Value::as_str);
    let modern = version.is_some_and(|v| {
        v.len() == MODERN.len() && v.bytes().all(|b| b.is_ascii_digit() || b == b'-') && v >= MODERN
    });
    modern
        && meta(value, META_CAPABILITIES)
            .and_then(|c| c.pointer("/elicitation/url"))
            .is_some_and(|u| u.as_object().is_some())
}

/// The request's `params.requestState` when it is one of toolgate's.
pub(super) fn carried_state<'v>(value: &'v Value<'static>) -> Option<&'v str> {
    value
        .pointer("/params/requestState")
        .and_then(Value::as_str)
        .filter(|s| s.starts_with(STATE_PREFIX))
}

/// The user's answer to toolgate's elicitation in the retry, when any.
fn elicitation_action<'v>(value: &'v Value<'static>) -> Option<&'v str> {
    value
        .as_object()?
        .get("params")?
        .as_object()?
        .get("inputResponses")?
        .as_object()?
        .get(INPUT_KEY)?
        .as_object()?
        .get("action")?
        .as_str()
}

/// The digest of a call's arguments as the gate computes it (absent
/// arguments are `{}`).
fn arguments_digest(value: &Value<'static>) -> Digest {
    match value.pointer("/params/arguments") {
        Some(args) => canonical::digest(args),
        None => canonical::digest(&Value::Object(Object::new())),
    }
}

/// The request without `params.inputResponses` and `params.requestState`
/// (they were for toolgate, not the server).
fn without_mrtr_members(value: &Value<'static>) -> Option<Value<'static>> {
    let mut o = value.as_object()?.clone();
    let mut params = o.get("params")?.as_object()?.clone();
    params.remove("inputResponses");
    params.remove("requestState");
    o.insert("params", Value::Object(params));
    Some(Value::Object(o))
}

/// How a retry carrying toolgate's state is answered.
enum Retry {
    /// Verified, and approved in the store: decided by the gate.
    Approved(Value<'static>),
    /// Verified, still pending: `input_required` again.
    Pending(Value<'static>),
    /// Verified, still pending, and the user declined or cancelled.
    Declined(ApprovalId),
    /// Refused: the audit code and the model's text.
    Refused(&'static str, String),
}

impl Shared {
    /// For a call that needs `d`'s approval from a client that takes
    /// `input_required`: the answer, with a state bound to the approval.
    /// `None` when the client is of the older era, declared no URL
    /// elicitation, or no approvals page is configured.
    pub(super) async fn input_required(
        &self,
        id: &RequestId,
        value: &Value<'static>,
        d: &Decision,
    ) -> Option<String> {
        let mrtr = self.mrtr.get()?;
        if !modern_with_url_elicitation(value) {
            return None;
        }
        let approval: ApprovalId = d.approval()?.as_str().parse().ok()?;
        // The store keeps the approval bound to the arguments, the tool's
        // current definition and its upstream (`bound_digest`).
        let (pin, upstream) = {
            let shared = self.lock();
            (
                shared.catalog.current(d.tool()),
                shared.catalog.upstream_of(d.tool()),
            )
        };
        let digest = toolgate_store::bound_digest(&d.digest()?, pin.as_ref(), Some(&upstream));
        let stored = self.approval(approval).await;
        let Some(stored) = stored.filter(|a| {
            a.kind == ApprovalKind::Single
                && a.user == self.user
                && a.session.as_deref() == Some(self.session.as_str())
                && a.tool == d.tool()
                && a.digest == Some(digest)
        }) else {
            finding(&format!(
                "tools/call {id}: approval {approval} not found as decided; answered as pending"
            ));
            return None;
        };
        let fields = StateFields {
            approval,
            expires_ms: stored.expires_at.unix_millis(),
            user: &self.user,
            session: &self.session,
            tool: d.tool(),
            digest,
            pin,
        };
        Some(frame::result_answer(id, mrtr.input_required(&fields)))
    }

    /// A `tools/call` carrying toolgate's `requestState` (see the module).
    pub(super) async fn retry_with_state(
        self: Arc<Self>,
        id: RequestId,
        value: Value<'static>,
        frame_bytes: Vec<u8>,
        sides: Sides,
        ctl: Arc<super::hold::CallCtl>,
    ) {
        let tool = value
            .pointer("/params/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let retry = self.check_retry(&value, &tool).await;
        let answer = match retry {
            Retry::Approved(cleaned) => {
                self.decide_call(id, cleaned, frame_bytes, sides, true, ctl)
                    .await;
                return;
            }
            Retry::Pending(result) => result,
            Retry::Declined(approval) => results::text_result(
                &format!(
                    "not approved: the user declined; approval {approval} is still pending and \
                     the call did not run"
                ),
                true,
            ),
            Retry::Refused(code, text) => {
                finding(&format!("tools/call {id}: requestState refused: {code}"));
                let me = Arc::clone(&self);
                let call_id = id.to_string();
                let tool = tool.clone();
                let recorded = tokio::task::spawn_blocking(move || {
                    me.audit(&tool, &call_id, code, Some("mcp requestState"))
                })
                .await;
                if !matches!(recorded, Ok(true)) {
                    finding("the audit record of a refused requestState could not be written");
                }
                results::text_result(&text, true)
            }
        };
        sides.to_client(frame::result_answer(&id, answer)).await;
    }

    /// Checks a retry's state against the call, the MAC and the store.
    async fn check_retry(&self, value: &Value<'static>, tool: &str) -> Retry {
        let refused = |code: &'static str, why: &str| {
            Retry::Refused(
                code,
                format!("refused by toolgate: {code}: {why}; the call did not run"),
            )
        };
        let Some(mrtr) = self.mrtr.get() else {
            return refused("request_state_invalid", "this proxy issues no requestState");
        };
        let Some(state) = carried_state(value).and_then(parse_state) else {
            return refused("request_state_invalid", "the requestState is malformed");
        };
        let now = self.gate.now();
        if now >= Timestamp::from_unix_millis(state.expires_ms) {
            return refused("request_state_expired", "the approval expired");
        }
        let Some(stored) = self.approval(state.approval).await else {
            return refused("request_state_invalid", "no such approval");
        };
        let (Some(digest), Some(session)) = (stored.digest, stored.session.as_deref()) else {
            return refused("request_state_invalid", "not a single approval");
        };
        let (pin, upstream) = {
            let shared = self.lock();
            (
                shared.catalog.current(&stored.tool),
                shared.catalog.upstream_of(&stored.tool),
            )
        };
        let fields = StateFields {
            approval: state.approval,
            expires_ms: state.expires_ms,
            user: &self.user,
            session: &self.session,
            tool: &stored.tool,
            digest,
            pin,
        };
        let mac = mrtr.mac(&fields);
        let expected = mac.strip_prefix("hmac-sha256:").unwrap_or(&mac);
        if !same_bytes(expected.as_bytes(), state.mac_hex.as_bytes())
            || stored.user != self.user
            || session != self.session
            || stored.expires_at.unix_millis() != state.expires_ms
        {
            return refused(
                "request_state_invalid",
                "the requestState does not verify for this user and session",
            );
        }
        if stored.tool != tool
            || toolgate_store::bound_digest(&arguments_digest(value), pin.as_ref(), Some(&upstream))
                != digest
        {
            return refused(
                "request_state_mismatch",
                "the retry's tool or arguments are not the ones held for approval",
            );
        }
        let (state_now, used) = {
            let a = stored.clone().as_of(now);
            (a.state, a.used_at.is_some())
        };
        match state_now {
            ApprovalState::Approved if !used => match without_mrtr_members(value) {
                Some(cleaned) => Retry::Approved(cleaned),
                None => refused("request_state_invalid", "the request is malformed"),
            },
            ApprovalState::Pending => {
                if matches!(elicitation_action(value), Some("decline" | "cancel")) {
                    Retry::Declined(state.approval)
                } else {
                    Retry::Pending(mrtr.input_required(&fields))
                }
            }
            ApprovalState::Approved => refused("approval_used", "the approval was used already"),
            _ => refused(
                "approval_denied",
                &format!("approval {} was not granted by a human", state.approval),
            ),
        }
    }

    /// An approval from the store (`None` when absent or unreadable).
    async fn approval(&self, approval: ApprovalId) -> Option<Approval> {
        let gate = Arc::clone(&self.gate);
        tokio::task::spawn_blocking(move || gate.store().get_approval(approval))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

    use super::*;

    fn fields(tool: &str) -> StateFields<'_> {
        StateFields {
            approval: ApprovalId::new(7),
            expires_ms: 1_800_000_000_000,
            user: "desk",
            session: "s-1",
            tool,
            digest: canonical::digest(&toolgate_json::from_str(r#"{"a":1}"#).unwrap()),
            pin: None,
        }
    }

    #[test]
    fn a_state_parses_back_and_its_mac_depends_on_every_field() {
        let m = Mrtr::with_key("http://127.0.0.1:8080/ui/".into(), [7; 32]);
        let state = m.state(&fields("refund"));
        let parsed = parse_state(&state).unwrap();
        assert_eq!(parsed.approval, ApprovalId::new(7));
        assert_eq!(parsed.expires_ms, 1_800_000_000_000);
        assert_ne!(m.mac(&fields("refund")), m.mac(&fields("refunds")));
        let mut other = fields("refund");
        other.user = "desk2";
        assert_ne!(m.mac(&fields("refund")), m.mac(&other));
        let other_key = Mrtr::with_key(String::new(), [8; 32]);
        assert_ne!(m.mac(&fields("refund")), other_key.mac(&fields("refund")));
    }

    #[test]
    fn malformed_states_do_not_parse() {
        let hex = "a".repeat(64);
        for bad in [
            String::new(),
            format!("toolgate.approval.v1.7.1.{}", "A".repeat(64)),
            format!("toolgate.approval.v1.7.1.{hex}.x"),
            format!("toolgate.approval.v1.-7.1.{hex}"),
            format!("toolgate.approval.v2.7.1.{hex}"),
            format!("toolgate.approval.v1.7.1.{}", "a".repeat(63)),
            format!("toolgate.approval.v1.99999999999999999999999.1.{hex}"),
        ] {
            assert_eq!(parse_state(&bad), None, "{bad}");
        }
        assert!(parse_state(&format!("toolgate.approval.v1.7.1.{hex}")).is_some());
    }

    #[test]
    fn the_era_and_the_capability_are_both_needed() {
        let frame = |version: &str, caps: &str| {
            toolgate_json::from_str(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","_meta":{{"io.modelcontextprotocol/protocolVersion":"{version}","io.modelcontextprotocol/clientCapabilities":{caps}}}}}}}"#
            ))
            .unwrap()
            .into_owned()
        };
        assert!(modern_with_url_elicitation(&frame(
            "2026-07-28",
            r#"{"elicitation":{"url":{}}}"#
        )));
        assert!(!modern_with_url_elicitation(&frame(
            "2025-11-25",
            r#"{"elicitation":{"url":{}}}"#
        )));
        assert!(!modern_with_url_elicitation(&frame(
            "2026-07-28",
            r#"{"elicitation":{"form":{}}}"#
        )));
        assert!(!modern_with_url_elicitation(&frame(
            "2026-07-28x",
            r#"{"elicitation":{"url":{}}}"#
        )));
    }

    #[test]
    fn the_url_names_the_approval() {
        let m = Mrtr::with_key("https://gate.example/ui/#old".into(), [1; 32]);
        assert_eq!(
            m.url_for(ApprovalId::new(42)),
            "https://gate.example/ui/#approval-42"
        );
    }
}
