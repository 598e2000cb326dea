//! Redaction: the values at the configured pointers replaced by their
//! keyed digests before a record is written.

use super::*;

/// The value with the value at each pointer replaced by its digest string.
pub(crate) fn redact(
    value: &Value<'_>,
    secrets: &[&str],
    key: &RedactionKey,
) -> Result<Value<'static>, Error> {
    let mut out = value.clone().into_owned();
    for pointer in secrets {
        if pointer.is_empty() {
            out = digest_value(&out, key);
            continue;
        }
        let Some(rest) = pointer.strip_prefix('/') else {
            return Err(Error::new(
                ErrorCode::InvalidInput,
                format!("secret field `{pointer}` is not a JSON Pointer"),
            ));
        };
        let tokens: Vec<String> = rest
            .split('/')
            .map(|t| toolgate_json::pointer::unescape_token(t).into_owned())
            .collect();
        out = replace_at(out, &tokens, key);
    }
    Ok(out)
}

fn digest_value(v: &Value<'_>, key: &RedactionKey) -> Value<'static> {
    Value::String(Cow::Owned(key.digest(canonical::to_string(v).as_bytes())))
}

fn replace_at(value: Value<'static>, tokens: &[String], key: &RedactionKey) -> Value<'static> {
    let Some((first, rest)) = tokens.split_first() else {
        return digest_value(&value, key);
    };
    match value {
        Value::Object(object) => {
            let mut rebuilt = Object::new();
            for (k, v) in object.iter() {
                let v = if k == first {
                    replace_at(v.clone(), rest, key)
                } else {
                    v.clone()
                };
                rebuilt.insert(k.to_owned(), v);
            }
            Value::Object(rebuilt)
        }
        Value::Array(items) => {
            let index = if first.len() > 1 && first.starts_with('0') {
                None
            } else {
                first.parse::<usize>().ok()
            };
            Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if Some(i) == index {
                            replace_at(v, rest, key)
                        } else {
                            v
                        }
                    })
                    .collect(),
            )
        }
        other => other,
    }
}
