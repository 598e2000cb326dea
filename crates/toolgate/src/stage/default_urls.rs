//! Stage 5, the default URL guard (issue 31): a string argument that looks
//! like a URL and that no `url_policy` of its tool names must pass the
//! default policy ([`UrlPolicyConfig::default_guard`]: `http`/`https`, any
//! public host, the scheme's default port; no loopback, private,
//! link-local, metadata or wildcard-DNS host), resolved when the gate has a
//! configured resolver.
//!
//! A string looks like a URL when the tool's schema declares it a URI
//! (`format` `uri`, `uri-reference`, `iri`, `iri-reference`, anywhere in the
//! schema), when its member name is URL-like
//! ([`is_url_like_name`]: `url`, `image_url`, `webhookUrl`, `callback`,
//! `links`, …; an array item inherits its array's name), or when its value
//! parses as an absolute URL with a network host
//! ([`looks_like_network_url`]). A tool opts an argument out by name
//! (`url_unchecked = [{ arg, reason }]`), or every argument with
//! `url_policy = "none"`. A denial is `url_policy` with the guard's code as
//! detail, at the string's pointer.

use toolgate_json::Value;

use crate::config::uri_args::{self, Step};
use crate::decision::PinnedUrl;
use crate::reason::{Code, Reason};
use crate::registry::Tool;
use crate::url_guard::{
    is_url_like_name, looks_like_network_url, Resolve, UrlPolicy, UrlPolicyConfig, UrlPolicyError,
};

/// The default guard of one tool.
#[derive(Debug, Clone)]
pub(crate) struct DefaultUrls {
    /// Schema places declared URIs.
    formats: Vec<Vec<Step>>,
    /// Pointer patterns (`*`: any item or member) that a tool's own policy
    /// or a `url_unchecked` entry covers.
    covered: Vec<Vec<String>>,
    policy: UrlPolicy,
    resolve: bool,
}

/// One step of a concrete path in the arguments.
#[derive(Clone, Copy)]
enum Seg<'v> {
    Index(usize),
    Member(&'v str),
}

impl DefaultUrls {
    /// The default guard of `tool`, or `None` if it opted out
    /// (`url_policy = "none"`). `resolve`: whether the gate has a
    /// configured resolver.
    pub(crate) fn new(tool: &Tool, resolve: bool) -> Result<Option<Self>, UrlPolicyError> {
        if !tool.url_default_guard() {
            return Ok(None);
        }
        // A schema whose URL arguments cannot be found does not load (the
        // config's `unguarded_url`); a hand-built registry gets the value
        // checks alone.
        let formats = uri_args::find(tool.raw_schema())
            .unwrap_or_default()
            .into_iter()
            .map(|a| a.path)
            .collect();
        let covered = tool
            .url_policies()
            .iter()
            .map(|p| p.arg())
            .chain(tool.url_unchecked().iter().map(|u| u.arg()))
            .map(tokens)
            .collect();
        let policy = UrlPolicyConfig::default_guard().compile()?;
        Ok(Some(Self {
            formats,
            covered,
            policy,
            resolve,
        }))
    }

    /// `Ok` with the pinned addresses of the checked strings (when
    /// resolving), else one reason per failing string.
    pub(crate) fn check(
        &self,
        arguments: &Value<'_>,
        resolver: &dyn Resolve,
    ) -> Result<Vec<PinnedUrl>, Vec<Reason>> {
        let mut reasons = Vec::new();
        let mut pinned = Vec::new();
        let mut stack: Vec<(Vec<Seg<'_>>, &Value<'_>)> = vec![(Vec::new(), arguments)];
        while let Some((path, value)) = stack.pop() {
            match value {
                Value::String(s) => {
                    if !self.looks_like_url(&path, s) || self.is_covered(&path) {
                        continue;
                    }
                    let pointer = pointer_of(&path);
                    let checked = if self.resolve {
                        self.policy.check_resolved(s, resolver)
                    } else {
                        self.policy.check(s)
                    };
                    match checked {
                        Ok(c) if self.resolve => pinned.push(PinnedUrl {
                            pointer,
                            addresses: c.socket_addrs(),
                        }),
                        Ok(_) => {}
                        Err(d) => reasons.push(
                            Reason::new(Code::UrlPolicy, pointer).with_detail(d.code().as_str()),
                        ),
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate().rev() {
                        let mut p = path.clone();
                        p.push(Seg::Index(i));
                        stack.push((p, item));
                    }
                }
                Value::Object(members) => {
                    let members: Vec<_> = members.iter().collect();
                    for (name, member) in members.into_iter().rev() {
                        let mut p = path.clone();
                        p.push(Seg::Member(name));
                        stack.push((p, member));
                    }
                }
                _ => {}
            }
        }
        // Reasons in document order.
        if reasons.is_empty() {
            Ok(pinned)
        } else {
            Err(reasons)
        }
    }

    fn looks_like_url(&self, path: &[Seg<'_>], s: &str) -> bool {
        let named = path.iter().rev().find_map(|seg| match seg {
            Seg::Member(name) => Some(*name),
            Seg::Index(_) => None,
        });
        named.is_some_and(is_url_like_name)
            || self.formats.iter().any(|f| matches_steps(f, path))
            || looks_like_network_url(s)
    }

    fn is_covered(&self, path: &[Seg<'_>]) -> bool {
        self.covered.iter().any(|pattern| {
            pattern.len() == path.len()
                && pattern.iter().zip(path).all(|(t, seg)| {
                    t == "*"
                        || match seg {
                            Seg::Member(name) => t == name,
                            Seg::Index(i) => *t == i.to_string(),
                        }
                })
        })
    }
}

/// Whether a concrete path is one a schema place describes.
fn matches_steps(steps: &[Step], path: &[Seg<'_>]) -> bool {
    steps.len() == path.len()
        && steps.iter().zip(path).all(|(step, seg)| match (step, seg) {
            (Step::Name(n), Seg::Member(m)) => n == m,
            (Step::AnyMember, Seg::Member(_)) | (Step::AnyItem, Seg::Index(_)) => true,
            _ => false,
        })
}

/// The unescaped tokens of a pointer pattern.
fn tokens(pattern: &str) -> Vec<String> {
    pattern
        .split('/')
        .skip(1)
        .map(|t| toolgate_json::pointer::unescape_token(t).into_owned())
        .collect()
}

fn pointer_of(path: &[Seg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Member(name) => toolgate_json::pointer::push_token(&mut out, name),
            Seg::Index(i) => toolgate_json::pointer::push_index(&mut out, *i),
        }
    }
    out
}
