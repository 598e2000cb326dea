//! `[[limit]]` tables (rate limits and budgets) and the tools' `labels`.

use std::collections::HashSet;

use toml::Spanned;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::pointer;
use super::raw::{RawConfig, RawTool};
use crate::limit::{
    Amount, Limit, Measure, Over, Scope, MAX_LIMITS, MAX_LIMIT_NAME_BYTES, MAX_WINDOW_SECONDS,
};
use crate::registry::Registry;

/// The most labels one tool declares.
pub const MAX_TOOL_LABELS: usize = 16;
/// The longest label.
pub const MAX_LABEL_BYTES: usize = 64;

/// One `[[limit]]` table as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimit {
    pub(crate) name: Spanned<String>,
    pub(crate) tools: Spanned<Vec<Spanned<String>>>,
    pub(crate) per: Spanned<String>,
    pub(crate) calls: Option<Spanned<u64>>,
    pub(crate) sum: Option<Spanned<String>>,
    pub(crate) max: Option<Spanned<toml::Value>>,
    pub(crate) over: Option<Spanned<String>>,
    pub(crate) window_seconds: Spanned<u64>,
}

/// Whether `s` is a limit name or a label: `[a-z0-9_]`, 1 to `max` bytes.
fn is_word(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

impl Loader<'_> {
    /// The `[[limit]]` tables, checked against the registry: each name
    /// unique, each tool registered, `calls` or `sum` with `max`, a window
    /// of 1 s to 31 days.
    pub(super) fn limits(&self, raw: &RawConfig, registry: &Registry) -> Result<Vec<Limit>, Error> {
        if raw.limit.len() > MAX_LIMITS {
            let at = raw.limit.get(MAX_LIMITS).map_or(0, |l| l.span().start);
            return Err(self.at_value(
                ErrorCode::InvalidValue,
                at,
                "limit",
                format!("at most {MAX_LIMITS} `[[limit]]` tables"),
            ));
        }
        let mut names = HashSet::new();
        let mut out = Vec::with_capacity(raw.limit.len());
        for spanned in &raw.limit {
            out.push(self.limit(spanned.get_ref(), registry, &mut names)?);
        }
        Ok(out)
    }

    fn limit(
        &self,
        raw: &RawLimit,
        registry: &Registry,
        names: &mut HashSet<String>,
    ) -> Result<Limit, Error> {
        let invalid = |at: usize, key: &str, message: String| {
            self.at_key(ErrorCode::InvalidValue, at, key, message)
        };
        let name = raw.name.get_ref();
        if !is_word(name, MAX_LIMIT_NAME_BYTES) {
            return Err(self.at_key(
                ErrorCode::InvalidName,
                raw.name.span().start,
                "name",
                format!(
                    "a limit name is 1 to {MAX_LIMIT_NAME_BYTES} lower-case letters, digits or `_`"
                ),
            ));
        }
        if !names.insert(name.clone()) {
            return Err(self.at_key(
                ErrorCode::InvalidName,
                raw.name.span().start,
                "name",
                format!("a second `[[limit]]` named `{name}`"),
            ));
        }
        if raw.tools.get_ref().is_empty() {
            return Err(invalid(
                raw.tools.span().start,
                "tools",
                format!("limit `{name}`: `tools` names no tool"),
            ));
        }
        let mut tools = Vec::with_capacity(raw.tools.get_ref().len());
        for t in raw.tools.get_ref() {
            let Some(tool) = registry.get(t.get_ref()) else {
                return Err(self.at_value(
                    ErrorCode::InvalidValue,
                    t.span().start,
                    "tools",
                    format!("limit `{name}`: `{}` is not a registered tool", t.get_ref()),
                ));
            };
            tools.push((t, tool));
        }
        let scope = Scope::parse(raw.per.get_ref()).ok_or_else(|| {
            invalid(
                raw.per.span().start,
                "per",
                format!("limit `{name}`: `per` is \"user\", \"session\", \"token\" or \"global\""),
            )
        })?;
        let window = *raw.window_seconds.get_ref();
        if window == 0 || window > MAX_WINDOW_SECONDS {
            return Err(invalid(
                raw.window_seconds.span().start,
                "window_seconds",
                format!("limit `{name}`: `window_seconds` is 1 to {MAX_WINDOW_SECONDS}"),
            ));
        }
        let measure = match (&raw.calls, &raw.sum) {
            (Some(_), Some(sum)) => {
                return Err(self.at_key(
                    ErrorCode::ConflictingKeys,
                    sum.span().start,
                    "sum",
                    format!("limit `{name}`: `calls` and `sum` together; a limit counts one"),
                ))
            }
            (Some(calls), None) => {
                if let Some(k) = [
                    raw.max.as_ref().map(|m| ("max", m.span().start)),
                    raw.over.as_ref().map(|o| ("over", o.span().start)),
                ]
                .into_iter()
                .flatten()
                .next()
                {
                    return Err(self.at_key(
                        ErrorCode::ConflictingKeys,
                        k.1,
                        k.0,
                        format!("limit `{name}`: `{}` belongs to a `sum` limit", k.0),
                    ));
                }
                let max = *calls.get_ref();
                if max == 0 || max > 1_000_000_000 {
                    return Err(invalid(
                        calls.span().start,
                        "calls",
                        format!("limit `{name}`: `calls` is 1 to 1000000000"),
                    ));
                }
                Measure::Calls { max }
            }
            (None, Some(sum)) => self.sum(raw, name, sum, &tools)?,
            (None, None) => {
                return Err(self.at_key(
                    ErrorCode::MissingKey,
                    raw.name.span().start,
                    "calls",
                    format!("limit `{name}` needs `calls = N` or `sum = \"/pointer\"` with `max`"),
                ))
            }
        };
        Ok(Limit {
            name: name.clone(),
            tools: tools.iter().map(|(_, t)| t.name().to_owned()).collect(),
            scope,
            measure,
            window_seconds: window,
        })
    }

    /// A budget's pointer (declared in every tool's schema), cap and `over`.
    fn sum(
        &self,
        raw: &RawLimit,
        name: &str,
        sum: &Spanned<String>,
        tools: &[(&Spanned<String>, &crate::registry::Tool)],
    ) -> Result<Measure, Error> {
        let p = sum.get_ref();
        for (_, tool) in tools {
            pointer::check_declared(tool.raw_schema(), p).map_err(|_| {
                self.at_key(
                    ErrorCode::InvalidPointer,
                    sum.span().start,
                    "sum",
                    format!(
                        "limit `{name}`: `sum` must be a JSON Pointer to a property the schema of `{}` declares",
                        tool.name()
                    ),
                )
            })?;
        }
        let Some(max) = &raw.max else {
            return Err(self.at_key(
                ErrorCode::MissingKey,
                sum.span().start,
                "max",
                format!("limit `{name}`: a `sum` limit needs `max` (a decimal string, \"500.00\")"),
            ));
        };
        let amount = match max.get_ref() {
            toml::Value::String(s) => Amount::parse(s),
            toml::Value::Integer(i) => u64::try_from(*i).ok().map(Amount::from_u64),
            _ => None,
        };
        let amount = amount.filter(|a| !a.is_negative()).ok_or_else(|| {
            self.at_key(
                ErrorCode::InvalidValue,
                max.span().start,
                "max",
                format!(
                    "limit `{name}`: `max` is a non-negative integer or a decimal string (\"500.00\"; a TOML float is not exact), at most {} digits, {} after the point",
                    Amount::MAX_DIGITS,
                    Amount::MAX_SCALE
                ),
            )
        })?;
        let over = match raw.over.as_ref().map(|o| (o.get_ref().as_str(), o)) {
            None | Some(("deny", _)) => Over::Deny,
            Some(("approval", _)) => Over::Approval,
            Some((_, o)) => {
                return Err(self.at_key(
                    ErrorCode::InvalidValue,
                    o.span().start,
                    "over",
                    format!("limit `{name}`: `over` is \"deny\" or \"approval\""),
                ))
            }
        };
        Ok(Measure::Sum {
            pointer: p.clone(),
            max: amount,
            over,
        })
    }

    /// A tool's `labels`: words of `[a-z0-9_]`, at most [`MAX_TOOL_LABELS`].
    pub(super) fn tool_labels(&self, raw: &RawTool) -> Result<Vec<String>, Error> {
        let Some(labels) = &raw.labels else {
            return Ok(Vec::new());
        };
        let name = raw.name.get_ref();
        if labels.get_ref().len() > MAX_TOOL_LABELS {
            return Err(self
                .at_key(
                    ErrorCode::InvalidValue,
                    labels.span().start,
                    "labels",
                    format!("at most {MAX_TOOL_LABELS} labels"),
                )
                .tool(name));
        }
        let mut out: Vec<String> = Vec::with_capacity(labels.get_ref().len());
        for l in labels.get_ref() {
            if !is_word(l.get_ref(), MAX_LABEL_BYTES) {
                return Err(self
                    .at_value(
                        ErrorCode::InvalidValue,
                        l.span().start,
                        "labels",
                        format!(
                            "a label is 1 to {MAX_LABEL_BYTES} lower-case letters, digits or `_`"
                        ),
                    )
                    .tool(name));
            }
            if !out.contains(l.get_ref()) {
                out.push(l.get_ref().clone());
            }
        }
        Ok(out)
    }
}
