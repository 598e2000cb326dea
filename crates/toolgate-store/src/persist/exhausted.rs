//! The tools whose limits are used up: what narrowing hides.

use toolgate::limit::{Amount, Limit, Scope};

use crate::{Error, Store, StoreGate, Timestamp};

/// Whose usage a narrowing reads: the user, and the session and the
/// front end's token when known.
#[derive(Debug, Clone, Copy)]
pub struct UsageOf<'a> {
    /// The user.
    pub user: &'a str,
    /// The session (`per = "session"` limits are read only with one).
    pub session: Option<&'a str>,
    /// The authenticated caller (`per = "token"` limits are read only
    /// with one).
    pub token: Option<&'a str>,
}

/// The names of the tools among `limits`' that a limit counting `of` (its
/// user, session, token, or everyone) has used up at `now`: what counts in
/// its window reaches the cap, so no call fits
/// ([`toolgate::limit::exhausted`]). Sorted, without repeats. A store that
/// cannot be read is an error: the caller decides whether to fail closed.
pub fn exhausted_tools<'l>(
    store: &dyn Store,
    limits: impl IntoIterator<Item = &'l Limit>,
    of: UsageOf<'_>,
    now: Timestamp,
) -> Result<Vec<String>, Error> {
    let now_ms = u64::try_from(now.unix_millis()).unwrap_or(0);
    let mut hidden = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for limit in limits {
        if seen.contains(&limit.name.as_str()) {
            continue;
        }
        seen.push(&limit.name);
        let key = match (limit.scope, of.session, of.token) {
            (Scope::User, ..) => limit.key(of.user, "", None),
            (Scope::Session, Some(s), _) => limit.key(of.user, s, None),
            (Scope::Token, _, Some(t)) => limit.key(of.user, "", Some(t)),
            (Scope::Global, ..) => limit.key("", "", None),
            _ => continue,
        };
        let window = i64::try_from(limit.window_ms()).unwrap_or(i64::MAX);
        let since = Timestamp::from_unix_millis(now.unix_millis().saturating_sub(window));
        let used_up = match store.limit_used(&key, since)? {
            Some(used) => toolgate::limit::exhausted_at(limit, used),
            None => {
                let events: Vec<(u64, Amount)> = store
                    .limit_events(&key, since)?
                    .into_iter()
                    .map(|(at, a)| (u64::try_from(at.unix_millis()).unwrap_or(0), a))
                    .collect();
                toolgate::limit::exhausted(limit, &events, now_ms)
            }
        };
        if used_up {
            hidden.extend(limit.tools.iter().cloned());
        }
    }
    hidden.sort_unstable();
    hidden.dedup();
    Ok(hidden)
}

impl StoreGate {
    /// The registered tools a `[[limit]]` counting `of` has used up now, by
    /// this gate's clock ([`exhausted_tools`] over the gate's limits): what
    /// the proxies' narrowing and `toolgate narrow --usage` leave out.
    pub fn exhausted_tools(&self, of: UsageOf<'_>) -> Result<Vec<String>, Error> {
        let gate = self.gate();
        let limits = gate
            .registry()
            .iter()
            .flat_map(|t| gate.tool_limits(t.name()).iter());
        exhausted_tools(self.store().as_ref(), limits, of, self.now())
    }
}
