//! A record's canonical JSON text, as it is hashed and exported.

use super::*;

/// Writes the canonical JSON object of a record in the format of `version`;
/// with `chain`, also `prev` and `hash`. Members are written in RFC 8785
/// order (all names are ASCII, so byte order is UTF-16 order).
pub(super) fn write_record(
    out: &mut String,
    at: Place,
    version: u32,
    e: &AuditEntry,
    chain: Option<(&Digest, &Digest)>,
) {
    out.push_str("{\"actor\":");
    opt_str(out, e.actor.as_deref());
    out.push_str(",\"approval\":");
    match e.approval {
        // Version 1 wrote the id as a number; later versions as the string
        // every other surface gives.
        Some(id) if version == 1 => out.push_str(&id.get().to_string()),
        Some(id) => json_str(out, &id.get().to_string()),
        None => out.push_str("null"),
    }
    out.push_str(",\"arguments\":");
    // INVARIANT: `arguments` is canonical JSON text (made by
    // `canonical::to_string`, or checked when read back from storage).
    out.push_str(e.arguments.as_deref().unwrap_or("null"));
    out.push_str(",\"call_id\":");
    opt_str(out, e.call_id.as_deref());
    out.push_str(",\"digest\":");
    opt_digest(out, e.digest.as_ref());
    if let Some((_, hash)) = chain {
        out.push_str(",\"hash\":");
        opt_digest(out, Some(hash));
    }
    out.push_str(",\"note\":");
    opt_str(out, e.note.as_deref());
    out.push_str(",\"policies\":");
    str_array(out, &e.policies);
    if let Some((prev, _)) = chain {
        out.push_str(",\"prev\":");
        opt_digest(out, Some(prev));
    }
    out.push_str(",\"reasons\":");
    str_array(out, &e.reasons);
    // Written only when present: older records keep their bodies.
    if let Some(refused) = &e.refused_arguments {
        // INVARIANT: canonical JSON text, like `arguments`.
        out.push_str(",\"refused_arguments\":");
        out.push_str(refused);
    }
    if let Some(risk) = &e.risk {
        out.push_str(",\"risk\":");
        json_str(out, risk);
    }
    // Version 3 (a segmented log): the segment and the place in it.
    let segmented = version >= SEGMENT_RECORD_VERSION;
    if segmented {
        out.push_str(",\"segment\":");
        out.push_str(&at.segment.to_string());
    }
    out.push_str(",\"seq\":");
    out.push_str(&at.seq.to_string());
    out.push_str(",\"session\":");
    opt_str(out, e.session.as_deref());
    if segmented {
        out.push_str(",\"sseq\":");
        out.push_str(&at.sseq.to_string());
    }
    out.push_str(",\"time\":");
    out.push_str(&e.time.unix_millis().to_string());
    out.push_str(",\"tool\":");
    opt_str(out, e.tool.as_deref());
    out.push_str(",\"user\":");
    opt_str(out, e.user.as_deref());
    out.push_str(",\"v\":");
    out.push_str(&version.to_string());
    out.push_str(",\"verdict\":");
    json_str(out, e.verdict.as_str());
    out.push('}');
}

pub(super) fn json_str(out: &mut String, s: &str) {
    out.push_str(&canonical::to_string(&Value::String(Cow::Borrowed(s))));
}

fn opt_str(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => json_str(out, s),
        None => out.push_str("null"),
    }
}

pub(super) fn opt_digest(out: &mut String, d: Option<&Digest>) {
    match d {
        Some(d) => {
            out.push_str("\"sha256:");
            push_hex(out, d.as_bytes());
            out.push('"');
        }
        None => out.push_str("null"),
    }
}

/// Appends `bytes` as lower-case hex digits, as a digest's text spells
/// them (without the formatting machinery: this runs for every record
/// hashed).
fn push_hex(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 0x0f] {
            // INVARIANT: a nibble is below 16, always a hex digit.
            out.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
}

pub(crate) fn str_array(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_str(out, s);
    }
    out.push(']');
}
