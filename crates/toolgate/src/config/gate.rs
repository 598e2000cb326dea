//! The `[gate]` table: loop limits and the parse limits of every tool's
//! arguments.

use toml::Spanned;
use toolgate_json::{Limit, Limits};

use super::error::{Cause, Error, ErrorCode};
use super::load::Loader;
use super::raw::{limit_key, RawConfig};

/// Turns per session when `[gate]` sets no `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 20;
/// Calls per model response when `[gate]` sets no `max_calls_per_response`.
pub const DEFAULT_MAX_CALLS_PER_RESPONSE: u32 = 16;
/// Rejections after which a session is escalated when `[gate]` sets no
/// `escalate_after`.
pub const DEFAULT_ESCALATE_AFTER: u32 = 3;
/// Bytes of one call's arguments when `[gate]` sets no `max_argument_bytes`.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 64 << 10;

/// The `[gate]` table: loop limits and the parse limits of every tool's
/// arguments (each tool may tighten them, never loosen them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateConfig {
    max_turns: u32,
    max_calls_per_response: u32,
    escalate_after: u32,
    max_body_bytes: usize,
    limits: Limits,
}

impl Default for GateConfig {
    fn default() -> Self {
        Self {
            max_turns: DEFAULT_MAX_TURNS,
            max_calls_per_response: DEFAULT_MAX_CALLS_PER_RESPONSE,
            escalate_after: DEFAULT_ESCALATE_AFTER,
            max_body_bytes: Limit::InputBytes.default_value(),
            limits: default_limits(),
        }
    }
}

fn default_limits() -> Limits {
    // The default is below the parser's ceiling, so `set` cannot fail; the
    // parser's own default stands if it ever did.
    Limits::new()
        .set(Limit::InputBytes, DEFAULT_MAX_ARGUMENT_BYTES)
        .unwrap_or_default()
}

impl GateConfig {
    /// Turns a session may take; past it every call is denied.
    pub fn max_turns(&self) -> u32 {
        self.max_turns
    }

    /// Calls one model response may carry.
    pub fn max_calls_per_response(&self) -> u32 {
        self.max_calls_per_response
    }

    /// Rejections in a session after which the store escalates it: its
    /// further non-read calls need a human.
    pub fn escalate_after(&self) -> u32 {
        self.escalate_after
    }

    /// The parse limits: the default of every tool and the ceiling of its own.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The largest provider response body read, JSON or event stream, in
    /// bytes (`max_body_bytes`, default 8 MiB).
    pub fn max_body_bytes(&self) -> usize {
        self.max_body_bytes
    }

    /// How the gate's adapters read bodies under this table: the body's
    /// size limit for a JSON body and for a stream. Give it to
    /// [`GateBuilder::adapter_options`](crate::GateBuilder::adapter_options)
    /// (`toolgate check` and `toolgate serve` do).
    pub fn adapter_options(&self) -> crate::adapter::AdapterOptions {
        // A body's numbers keep their lexemes: each call's arguments are held
        // to exactness under their tool's options in stage 3, so a number
        // elsewhere in the body (a log probability) does not refuse it whole.
        let parse = toolgate_json::ParseOptions::new()
            .with_limits(
                Limits::new()
                    .set(Limit::InputBytes, self.max_body_bytes)
                    .unwrap_or_default(),
            )
            .allow_rounding(true);
        crate::adapter::AdapterOptions::new()
            .with_parse_options(parse)
            .with_max_stream_bytes(self.max_body_bytes)
    }
}

impl Loader<'_> {
    /// `[gate]`: loop limits from 1 to `u32::MAX`, a body cap and parse limits
    /// within the parser's ceilings.
    pub(super) fn gate(&self, raw: &RawConfig) -> Result<GateConfig, Error> {
        let mut gate = GateConfig::default();
        for (slot, value, key) in [
            (&mut gate.max_turns, &raw.gate.max_turns, "max_turns"),
            (
                &mut gate.max_calls_per_response,
                &raw.gate.max_calls_per_response,
                "max_calls_per_response",
            ),
            (
                &mut gate.escalate_after,
                &raw.gate.escalate_after,
                "escalate_after",
            ),
        ] {
            if let Some(v) = value {
                *slot = u32::try_from(*v.get_ref())
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        self.at_key(
                            ErrorCode::InvalidLimit,
                            v.span().start,
                            key,
                            format!("`{key}` must be between 1 and {}", u32::MAX),
                        )
                    })?;
            }
        }
        if let Some(v) = &raw.gate.max_body_bytes {
            let n = *v.get_ref();
            let ceiling = Limit::InputBytes.ceiling();
            gate.max_body_bytes = usize::try_from(n)
                .ok()
                .filter(|&b| b != 0 && b <= ceiling)
                .ok_or_else(|| {
                    self.at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        "max_body_bytes",
                        format!("`max_body_bytes` must be between 1 and {ceiling}"),
                    )
                })?;
        }
        for (limit, value) in raw.gate.limit_fields() {
            if let Some(v) = value {
                gate.limits = self.set_limit(gate.limits, limit, v)?;
            }
        }
        Ok(gate)
    }

    /// `limits` with `limit` set to `value`, or an error at `value` when the
    /// parser refuses it.
    pub(super) fn set_limit(
        &self,
        limits: Limits,
        limit: Limit,
        value: &Spanned<u64>,
    ) -> Result<Limits, Error> {
        let key = limit_key(limit);
        let n = usize::try_from(*value.get_ref()).unwrap_or(usize::MAX);
        limits.set(limit, n).map_err(|e| {
            self.at_key(
                ErrorCode::InvalidLimit,
                value.span().start,
                key,
                format!(
                    "`{key}` must be between 1 and {}, got {}",
                    limit.ceiling(),
                    value.get_ref()
                ),
            )
            .cause(Cause::Limit(e))
        })
    }
}
