//! Stage 4: the arguments must be valid against the tool's compiled schema,
//! strictly (no coercion: `"1200"` is not an integer, `3.0` is not an
//! integer, unknown members are errors). Every violation is reported with its
//! code and instance pointer, and with what the schema expects there (the
//! validator's message, built from the schema alone: the missing member's
//! name, the expected type, the bound, the allowed values, the declared
//! members), which the feedback to the model carries.

use toolgate_json::Value;
use toolgate_schema::Schema;

use crate::reason::{Code, Reason};

/// Every violation: its reasons, and what the schema expects at each (one
/// text per reason, from the schema alone, never from the value).
pub(crate) type Violations = (Vec<Reason>, Vec<String>);

/// `Ok` if valid, else every violation.
pub(crate) fn check(schema: &Schema, arguments: &Value<'_>) -> Result<(), Violations> {
    if schema.is_valid(arguments) {
        return Ok(());
    }
    match schema.validate(arguments) {
        Ok(()) => Ok(()),
        Err(errors) => Err(errors
            .iter()
            .map(|e| {
                (
                    Reason::new(Code::Schema(e.code()), e.instance_pointer()),
                    e.message().to_owned(),
                )
            })
            .unzip()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_json::from_str;
    use toolgate_schema::Options;

    #[test]
    fn no_coercion_and_every_violation() {
        let schema = from_str(
            r#"{"type":"object","properties":{"amount":{"type":"integer"},"ok":{"type":"boolean"}},"required":["amount"]}"#,
        )
        .unwrap();
        let schema = Schema::compile(&schema, &Options::new()).unwrap();
        assert!(check(&schema, &from_str(r#"{"amount":3}"#).unwrap()).is_ok());
        let (reasons, expected) = check(
            &schema,
            &from_str(r#"{"amount":"3","ok":"yes","x":1}"#).unwrap(),
        )
        .unwrap_err();
        assert_eq!(expected[0], "expected integer");
        let got: Vec<_> = reasons
            .iter()
            .map(|r| (r.code.as_str(), r.pointer.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("type_mismatch", "/amount"),
                ("type_mismatch", "/ok"),
                ("unknown_property", "/x")
            ]
        );
        let (reasons, _) = check(&schema, &from_str(r#"{"amount":3.0}"#).unwrap()).unwrap_err();
        assert_eq!(reasons[0].code.as_str(), "type_mismatch");
    }
}
