//! Stage 5: argument policies. For now the URL guard on the configured
//! argument pointers (threat 3, SSRF): every URL argument must pass its
//! tool's [`UrlPolicy`]; a denial is `url_policy` with the guard's code as
//! detail. An absent optional argument has nothing to check; a present one
//! that is not a string is denied (`url_not_a_string`).
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
        let denial = match arguments.pointer(&url.pointer) {
            None => None,
            Some(Value::String(s)) if url.resolve => match url.policy.check_resolved(s, resolver) {
                Ok(checked) => {
                    pinned.push(PinnedUrl {
                        pointer: url.pointer.clone(),
                        addresses: checked.socket_addrs(),
                    });
                    None
                }
                Err(d) => Some(d.code().as_str()),
            },
            Some(Value::String(s)) => url.policy.check(s).err().map(|d| d.code().as_str()),
            Some(_) => Some(NOT_A_STRING),
        };
        if let Some(detail) = denial {
            reasons.push(Reason::new(Code::UrlPolicy, url.pointer.clone()).with_detail(detail));
        }
    }
    if reasons.is_empty() {
        Ok(pinned)
    } else {
        Err(reasons)
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
    }
}
