//! Stage 5: argument policies. For now the URL guard on the configured
//! argument pointers (threat 3, SSRF): every URL argument must pass its
//! tool's [`UrlPolicy`]; a denial is `url_policy` with the guard's code as
//! detail. An absent optional argument has nothing to check; a present one
//! that is not a string is denied (`url_not_a_string`). A `*` token in a
//! pointer names every item of an array or value of an object there
//! (`/links/*/href`): each is checked, and reported at its own pointer.
//!
//! Under a resolve-mode policy (`resolve = true`) the host is resolved with
//! the gate's resolver; any forbidden address denies the URL (DNS rebinding
//! defense), and the checked addresses are returned as [`PinnedUrl`]s for
//! the decision, so the tool connects only there.

use toolgate_json::Value;

use crate::decision::PinnedUrl;
use crate::reason::{Code, Reason};
use crate::registry;
use crate::url_guard::{Resolve, UrlPolicy, UrlPolicyConfig, UrlPolicyError};

/// The detail of a URL argument that is not a string.
pub(crate) const NOT_A_STRING: &str = "url_not_a_string";

/// One compiled URL policy and the argument it guards.
#[derive(Debug, Clone)]
pub(crate) struct UrlArg {
    pub(crate) pointer: String,
    pub(crate) policy: UrlPolicy,
    /// Resolve mode: resolve, check every address, pin them.
    pub(crate) resolve: bool,
}

impl UrlArg {
    /// Compiles a tool's configured URL policy.
    pub(crate) fn compile(config: &registry::UrlPolicyConfig) -> Result<Self, UrlPolicyError> {
        let mut guard = UrlPolicyConfig::new()
            .with_schemes(config.schemes().iter().cloned())
            .with_hosts(config.hosts().iter().cloned())
            .with_ports(config.ports().iter().copied());
        if config.allow_private() {
            guard.dangerous().allow_private_addresses(true);
        }
        Ok(Self {
            pointer: config.arg().to_owned(),
            policy: guard.compile()?,
            resolve: config.resolve(),
        })
    }
}

/// `Ok` with the pinned addresses of the resolve-mode arguments if every URL
/// argument passes, else one reason per failing argument.
pub(crate) fn check(
    urls: &[UrlArg],
    arguments: &Value<'_>,
    resolver: &dyn Resolve,
) -> Result<Vec<PinnedUrl>, Vec<Reason>> {
    let mut reasons = Vec::new();
    let mut pinned = Vec::new();
    for url in urls {
        let mut found = Vec::new();
        expand(arguments, &url.pointer, String::new(), &mut found);
        for (pointer, value) in found {
            let denial = match value {
                Value::String(s) if url.resolve => match url.policy.check_resolved(s, resolver) {
                    Ok(checked) => {
                        pinned.push(PinnedUrl {
                            pointer: pointer.clone(),
                            addresses: checked.socket_addrs(),
                        });
                        None
                    }
                    Err(d) => Some(d.code().as_str()),
                },
                Value::String(s) => url.policy.check(s).err().map(|d| d.code().as_str()),
                _ => Some(NOT_A_STRING),
            };
            if let Some(detail) = denial {
                reasons.push(Reason::new(Code::UrlPolicy, pointer).with_detail(detail));
            }
        }
    }
    if reasons.is_empty() {
        Ok(pinned)
    } else {
        Err(reasons)
    }
}

/// Every value the pointer `pattern` (relative to `value`, whose own
/// pointer is `at`) names, with its concrete pointer; a `*` token names
/// every array item or object member value.
fn expand<'v, 'a>(
    value: &'v Value<'a>,
    pattern: &str,
    at: String,
    out: &mut Vec<(String, &'v Value<'a>)>,
) {
    let Some(rest) = pattern.strip_prefix('/') else {
        out.push((at, value));
        return;
    };
    let (token, tail) = rest.find('/').map_or((rest, ""), |i| {
        (rest.get(..i).unwrap_or(rest), rest.get(i..).unwrap_or(""))
    });
    if token == "*" {
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mut p = at.clone();
                    toolgate_json::pointer::push_index(&mut p, i);
                    expand(item, tail, p, out);
                }
            }
            Value::Object(members) => {
                for (name, member) in members.iter() {
                    let mut p = at.clone();
                    toolgate_json::pointer::push_token(&mut p, name);
                    expand(member, tail, p, out);
                }
            }
            _ => {}
        }
        return;
    }
    let name = toolgate_json::pointer::unescape_token(token);
    let next = match value {
        Value::Object(members) => members.get(&name),
        _ => None,
    };
    if let Some(next) = next {
        let mut p = at;
        toolgate_json::pointer::push_token(&mut p, &name);
        expand(next, tail, p, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::net::{IpAddr, SocketAddr};
    use toolgate_json::from_str;

    fn arg(pointer: &str) -> UrlArg {
        UrlArg {
            pointer: pointer.into(),
            policy: UrlPolicyConfig::new()
                .with_hosts(["*.example.com"])
                .compile()
                .unwrap(),
            resolve: false,
        }
    }

    /// Resolves every host to fixed addresses; `None` fails the lookup.
    struct Fixed(Option<Vec<&'static str>>);

    impl Resolve for Fixed {
        fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
            match &self.0 {
                Some(addrs) => Ok(addrs.iter().map(|a| a.parse().unwrap()).collect()),
                None => Err(io::Error::new(io::ErrorKind::NotFound, "no such host")),
            }
        }
    }

    const NO_LOOKUP: Fixed = Fixed(None);

    #[test]
    fn resolve_mode_checks_and_pins_every_address() {
        let mut url = arg("/url");
        url.resolve = true;
        let urls = [url];
        let args = from_str(r#"{"url":"https://api.example.com/x"}"#).unwrap();
        let detail = |addrs: Option<Vec<&'static str>>| {
            check(&urls, &args, &Fixed(addrs)).unwrap_err()[0].detail
        };
        assert_eq!(
            detail(Some(vec!["169.254.169.254"])),
            Some("url_forbidden_address")
        );
        assert_eq!(
            detail(Some(vec!["93.184.216.34", "10.0.0.7"])),
            Some("url_forbidden_address")
        );
        assert_eq!(detail(None), Some("url_resolve_failed"));
        let pinned = check(
            &urls,
            &args,
            &Fixed(Some(vec!["93.184.216.34", "2606:2800:220:1::"])),
        )
        .unwrap();
        assert_eq!(pinned.len(), 1);
        assert_eq!(pinned[0].pointer, "/url");
        assert_eq!(
            pinned[0].addresses,
            [
                "93.184.216.34:443".parse::<SocketAddr>().unwrap(),
                "[2606:2800:220:1::]:443".parse().unwrap()
            ]
        );
    }

    #[test]
    fn guards_each_configured_pointer() {
        let urls = [arg("/url"), arg("/next")];
        assert_eq!(
            check(
                &urls,
                &from_str(r#"{"url":"https://docs.example.com/a"}"#).unwrap(),
                &NO_LOOKUP
            ),
            Ok(Vec::new())
        );
        let r = check(
            &urls,
            &from_str(
                r#"{"url":"http://169.254.169.254/latest/meta-data","next":"https://0x7f.1/"}"#,
            )
            .unwrap(),
            &NO_LOOKUP,
        )
        .unwrap_err();
        let got: Vec<_> = r
            .iter()
            .map(|r| (r.code.as_str(), r.pointer.as_str(), r.detail))
            .collect();
        assert_eq!(
            got,
            [
                ("url_policy", "/url", Some("url_scheme")),
                ("url_policy", "/next", Some("url_forbidden_address")),
            ]
        );
        let r = check(&urls, &from_str(r#"{"url":7}"#).unwrap(), &NO_LOOKUP).unwrap_err();
        assert_eq!(r[0].detail, Some(NOT_A_STRING));
        // `*`: every item (or member value), each at its own pointer.
        let urls = [arg("/links/*/href")];
        let args = from_str(
            r#"{"links":[{"href":"https://a.example.com/"},{"href":"http://127.0.0.1/"},{"x":1},{"href":5}]}"#,
        )
        .unwrap();
        let r = check(&urls, &args, &NO_LOOKUP).unwrap_err();
        let got: Vec<_> = r.iter().map(|r| (r.pointer.as_str(), r.detail)).collect();
        assert_eq!(
            got,
            [
                ("/links/1/href", Some("url_scheme")),
                ("/links/3/href", Some(NOT_A_STRING))
            ]
        );
        let urls = [arg("/hooks/*")];
        let args = from_str(r#"{"hooks":{"a/b":"https://0x7f.1/","ok":"https://x.example.com/"}}"#)
            .unwrap();
        let r = check(&urls, &args, &NO_LOOKUP).unwrap_err();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].pointer, "/hooks/a~1b");
        assert!(check(&urls, &from_str(r#"{"hooks":{}}"#).unwrap(), &NO_LOOKUP).is_ok());
    }
}
