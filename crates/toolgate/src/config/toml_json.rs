//! An inline TOML schema as a JSON value: integers stay integers, floats must
//! be finite, date-times have no JSON form.

use toolgate_json::{pointer, Number, Object, Value};

/// Converts a TOML value; on failure returns the JSON Pointer of the
/// offending value and why.
pub(crate) fn to_json(value: &toml::Value) -> Result<Value<'static>, (String, &'static str)> {
    let mut at = String::new();
    convert(value, &mut at)
}

fn convert(value: &toml::Value, at: &mut String) -> Result<Value<'static>, (String, &'static str)> {
    Ok(match value {
        toml::Value::String(s) => Value::String(s.clone().into()),
        toml::Value::Integer(i) => Value::Number(Number::from(*i)),
        toml::Value::Float(f) => match Number::from_f64(*f) {
            Some(n) => Value::Number(n),
            None => return Err((at.clone(), "a NaN or infinite float has no JSON form")),
        },
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(_) => {
            return Err((at.clone(), "a TOML date-time has no JSON form: quote it"))
        }
        toml::Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = at.len();
                pointer::push_index(at, i);
                out.push(convert(item, at)?);
                at.truncate(len);
            }
            Value::Array(out)
        }
        toml::Value::Table(table) => {
            let mut out = Object::new();
            for (k, v) in table {
                let len = at.len();
                pointer::push_token(at, k);
                let v = convert(v, at)?;
                at.truncate(len);
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn converts() {
        let t: toml::Table =
            toml::from_str("a = 1\nb = [1.5, true, \"x\"]\nc = { d = -0.0 }\n").unwrap();
        let v = to_json(&toml::Value::Table(t)).unwrap();
        assert_eq!(
            v.to_canonical_string(),
            r#"{"a":1,"b":[1.5,true,"x"],"c":{"d":0}}"#
        );
        let t: toml::Table = toml::from_str("a = { b = [1, nan] }\n").unwrap();
        let e = to_json(&toml::Value::Table(t)).unwrap_err();
        assert_eq!(e.0, "/a/b/1");
        let t: toml::Table = toml::from_str("a = 1979-05-27\n").unwrap();
        assert!(to_json(&toml::Value::Table(t)).is_err());
    }
}
