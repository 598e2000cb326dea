//! A serde deserializer that reads no text: it walks a config type's
//! `Deserialize` implementation and records what it asks for (tables and
//! their keys, scalars, arrays, the values of an enum), so that the
//! reference is made from the types the loader reads with.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The shape of a value, as the loader's types ask for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A scalar, named in the reference's words (`string`, `boolean`, …).
    Scalar(&'static str),
    /// One of these strings.
    Enum(Vec<&'static str>),
    /// A table: its type's name and its keys in declaration order.
    Table(&'static str, Vec<Key>),
    /// An array of the shape.
    Array(Box<Shape>),
    /// A table of names to the shape.
    Map(Box<Shape>),
    /// Read by hand: what its reader says it expects.
    Other(String),
}

/// A key of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) shape: Shape,
    /// Whether the table is refused without it.
    pub(crate) required: bool,
}

/// The probe's error: the one a missing key causes is told apart.
#[derive(Debug)]
pub(crate) struct ProbeError {
    pub(crate) missing: Option<&'static str>,
    message: String,
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProbeError {}

impl de::Error for ProbeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self {
            missing: None,
            message: msg.to_string(),
        }
    }
    fn missing_field(field: &'static str) -> Self {
        Self {
            missing: Some(field),
            message: format!("missing field `{field}`"),
        }
    }
}

/// toml's `Spanned<T>` reads itself as this struct: the probe looks through
/// it to `T`.
const SPANNED: &str = "$__serde_spanned_private_Spanned";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";

/// What a visitor says it expects.
struct Expecting<'a, V>(&'a V);

impl<'de, V: Visitor<'de>> fmt::Display for Expecting<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }
}

/// The probe at one place of the type: it records the shape it is asked
/// for into `out`; a table's key named by `omit` (a path of key names from
/// here) is left out, to learn whether the table requires it.
pub(crate) struct Probe<'a> {
    pub(crate) out: &'a mut Option<Shape>,
    pub(crate) omit: &'a [&'static str],
}

impl<'a> Probe<'a> {
    fn scalar(self, name: &'static str) {
        *self.out = Some(Shape::Scalar(name));
    }
}

macro_rules! scalar {
    ($method:ident, $name:expr, $visit:ident, $value:expr) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
            self.scalar($name);
            visitor.$visit($value)
        }
    };
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = ProbeError;

    scalar!(deserialize_bool, "boolean", visit_bool, false);
    scalar!(deserialize_i8, "integer", visit_i8, 0);
    scalar!(deserialize_i16, "integer", visit_i16, 0);
    scalar!(deserialize_i32, "integer", visit_i32, 0);
    scalar!(deserialize_i64, "integer", visit_i64, 0);
    scalar!(deserialize_u8, "integer (0 to 255)", visit_u8, 0);
    scalar!(deserialize_u16, "integer (0 to 65535)", visit_u16, 0);
    scalar!(deserialize_u32, "integer (0 or more)", visit_u32, 0);
    scalar!(deserialize_u64, "integer (0 or more)", visit_u64, 0);
    scalar!(deserialize_f32, "number", visit_f32, 0.0);
    scalar!(deserialize_f64, "number", visit_f64, 0.0);
    scalar!(deserialize_char, "string", visit_char, 'x');
    scalar!(deserialize_str, "string", visit_str, "x");
    scalar!(deserialize_string, "string", visit_str, "x");
    scalar!(deserialize_bytes, "string", visit_str, "x");
    scalar!(deserialize_byte_buf, "string", visit_str, "x");
    scalar!(deserialize_identifier, "string", visit_str, "x");

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        // Read by hand (a value of several forms): say what it expects,
        // and give it the one string every such reader here takes.
        *self.out = Some(Shape::Other(Expecting(&visitor).to_string()));
        visitor.visit_str("none")
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        let mut item = None;
        let value = visitor.visit_seq(One {
            out: &mut item,
            omit: self.omit,
            done: false,
        })?;
        *self.out = Some(Shape::Array(Box::new(
            item.unwrap_or(Shape::Scalar("value")),
        )));
        Ok(value)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ProbeError> {
        let mut value_shape = None;
        let value = visitor.visit_map(Entries {
            keys: &["x"],
            at: 0,
            shapes: Vec::new(),
            out: MapOut::Map(&mut value_shape),
            omit: &[],
        })?;
        *self.out = Some(Shape::Map(Box::new(
            value_shape.unwrap_or(Shape::Scalar("value")),
        )));
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        if name == SPANNED {
            return visitor.visit_map(Spanned {
                at: 0,
                probe: Some(self),
            });
        }
        let mut keys = Vec::new();
        let value = visitor.visit_map(Entries {
            keys: fields,
            at: 0,
            shapes: Vec::new(),
            out: MapOut::Table(&mut keys),
            omit: self.omit,
        })?;
        *self.out = Some(Shape::Table(name, keys));
        Ok(value)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ProbeError> {
        *self.out = Some(Shape::Enum(variants.to_vec()));
        let first = variants.first().copied().unwrap_or("x");
        visitor.visit_enum(de::value::StrDeserializer::<ProbeError>::new(first))
    }
}

/// A sequence of one probed item.
struct One<'a> {
    out: &'a mut Option<Shape>,
    omit: &'a [&'static str],
    done: bool,
}

impl<'de> SeqAccess<'de> for One<'_> {
    type Error = ProbeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ProbeError> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        seed.deserialize(Probe {
            out: self.out,
            omit: self.omit,
        })
        .map(Some)
    }
}

enum MapOut<'a> {
    Table(&'a mut Vec<Key>),
    Map(&'a mut Option<Shape>),
}

/// A table's keys, each with a probe for its value.
struct Entries<'a> {
    keys: &'static [&'static str],
    at: usize,
    shapes: Vec<(&'static str, Option<Shape>)>,
    out: MapOut<'a>,
    omit: &'a [&'static str],
}

impl Entries<'_> {
    /// The next key to give, past the one the probe omits.
    fn next_key(&mut self) -> Option<&'static str> {
        loop {
            let key = *self.keys.get(self.at)?;
            self.at += 1;
            if self.omit.len() == 1 && self.omit.first() == Some(&key) {
                continue;
            }
            return Some(key);
        }
    }
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = ProbeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ProbeError> {
        match self.next_key() {
            Some(key) => {
                self.shapes.push((key, None));
                seed.deserialize(de::value::BorrowedStrDeserializer::<ProbeError>::new(key))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ProbeError> {
        let Some((key, slot)) = self.shapes.last_mut() else {
            return Err(de::Error::custom("a value before its key"));
        };
        let omit = match self.omit.split_first() {
            Some((first, rest)) if first == key => rest,
            _ => &[],
        };
        let value = seed.deserialize(Probe { out: slot, omit })?;
        let shape = slot.take().unwrap_or(Shape::Scalar("value"));
        match &mut self.out {
            MapOut::Table(keys) => keys.push(Key {
                name: key,
                shape,
                required: false,
            }),
            MapOut::Map(out) => **out = Some(shape),
        }
        Ok(value)
    }
}

/// toml's `Spanned`: a start, an end, and the value, probed.
struct Spanned<'a> {
    at: usize,
    probe: Option<Probe<'a>>,
}

impl<'de> MapAccess<'de> for Spanned<'_> {
    type Error = ProbeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ProbeError> {
        let key = match self.at {
            0 => "$__serde_spanned_private_start",
            1 => "$__serde_spanned_private_end",
            2 => SPANNED_VALUE,
            _ => return Ok(None),
        };
        self.at += 1;
        seed.deserialize(de::value::BorrowedStrDeserializer::<ProbeError>::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ProbeError> {
        if self.at == 3 {
            if let Some(probe) = self.probe.take() {
                return seed.deserialize(probe);
            }
        }
        seed.deserialize(de::value::U64Deserializer::<ProbeError>::new(0))
    }
}

/// `T`'s shape, with each key's `required` found by probing again without
/// it.
pub(crate) fn shape_of<T: for<'de> serde::Deserialize<'de>>() -> Result<Shape, ProbeError> {
    let mut out = None;
    T::deserialize(Probe {
        out: &mut out,
        omit: &[],
    })?;
    let mut shape = out.unwrap_or(Shape::Scalar("value"));
    mark_required::<T>(&mut shape, &mut Vec::new());
    Ok(shape)
}

fn mark_required<T: for<'de> serde::Deserialize<'de>>(
    shape: &mut Shape,
    path: &mut Vec<&'static str>,
) {
    match shape {
        Shape::Table(_, keys) => {
            for key in keys {
                path.push(key.name);
                let mut out = None;
                let probed = T::deserialize(Probe {
                    out: &mut out,
                    omit: path,
                });
                key.required =
                    matches!(probed, Err(ProbeError { missing: Some(m), .. }) if m == key.name);
                mark_required::<T>(&mut key.shape, path);
                path.pop();
            }
        }
        Shape::Array(item) | Shape::Map(item) => mark_required::<T>(item, path),
        Shape::Scalar(_) | Shape::Enum(_) | Shape::Other(_) => {}
    }
}
