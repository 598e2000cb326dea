//! Stage 5: argument policies. For now the URL guard on the configured
//! argument pointers (threat 3, SSRF): every URL argument must pass its
//! tool's [`UrlPolicy`]; a denial is `url_policy` with the guard's code as
//! detail. An absent optional argument has nothing to check; a present one
//! that is not a string is denied (`url_not_a_string`).

use toolgate_json::Value;

use crate::reason::{Code, Reason};
use crate::registry;
use crate::url_guard::{UrlPolicy, UrlPolicyConfig, UrlPolicyError};

/// The detail of a URL argument that is not a string.
pub(crate) const NOT_A_STRING: &str = "url_not_a_string";

/// One compiled URL policy and the argument it guards.
#[derive(Debug, Clone)]
pub(crate) struct UrlArg {
    pub(crate) pointer: String,
    pub(crate) policy: UrlPolicy,
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
        })
    }
}

/// `Ok` if every URL argument passes, else one reason per failing argument.
pub(crate) fn check(urls: &[UrlArg], arguments: &Value<'_>) -> Result<(), Vec<Reason>> {
    let mut reasons = Vec::new();
    for url in urls {
        let denial = match arguments.pointer(&url.pointer) {
            None => None,
            Some(Value::String(s)) => url.policy.check(s).err().map(|d| d.code().as_str()),
            Some(_) => Some(NOT_A_STRING),
        };
        if let Some(detail) = denial {
            reasons.push(Reason::new(Code::UrlPolicy, url.pointer.clone()).with_detail(detail));
        }
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(reasons)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_json::from_str;

    fn arg(pointer: &str) -> UrlArg {
        UrlArg {
            pointer: pointer.into(),
            policy: UrlPolicyConfig::new()
                .with_hosts(["*.example.com"])
                .compile()
                .unwrap(),
        }
    }

    #[test]
    fn guards_each_configured_pointer() {
        let urls = [arg("/url"), arg("/next")];
        assert!(check(
            &urls,
            &from_str(r#"{"url":"https://docs.example.com/a"}"#).unwrap()
        )
        .is_ok());
        let r = check(
            &urls,
            &from_str(
                r#"{"url":"http://169.254.169.254/latest/meta-data","next":"https://0x7f.1/"}"#,
            )
            .unwrap(),
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
        let r = check(&urls, &from_str(r#"{"url":7}"#).unwrap()).unwrap_err();
        assert_eq!(r[0].detail, Some(NOT_A_STRING));
    }
}
