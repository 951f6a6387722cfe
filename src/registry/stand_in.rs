//! Probing a type's `Deserialize` without a document, for `agreement.rs`: what it asked for
//! ([`Traced`], its error type), and objects to decode a struct from: some of its fields,
//! each filled with a plain value (an empty string, zero, `false`, `null`, an empty list, the
//! first variant) and maybe one taken from an example. What the type's `Deserialize` then
//! says shows which fields it needs and whether the example fits.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::Value;

/// What a type's `Deserialize` asked the tracer for.
#[derive(Debug)]
pub(crate) enum Traced {
    /// A struct with these field names (aliases included), as `deserialize_struct` gives them.
    Struct(&'static [&'static str]),
    /// An enum with these variant names.
    Enum(&'static [&'static str]),
    /// A struct decoded from an object without this field failed for want of it.
    Missing(&'static str),
    /// A field's example did not decode, for this reason.
    Example(String),
    /// Anything else, said as "a map" or "any value".
    Other(String),
}

impl fmt::Display for Traced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Traced {}

impl de::Error for Traced {
    fn custom<T: fmt::Display>(why: T) -> Traced {
        Traced::Other(why.to_string())
    }

    fn missing_field(field: &'static str) -> Traced {
        Traced::Missing(field)
    }
}

/// Values nest at most this deep: a plain value is small, whatever the type.
const MAX_DEPTH: usize = 16;

/// A struct's object: `example` (a field and its value) first, then the fields of `filled`.
pub(crate) struct Instance<'a> {
    example: Option<(&'a str, &'a Value)>,
    filled: &'a [&'static str],
}

impl<'a> Instance<'a> {
    /// An object with these fields, each filled with a plain value.
    pub fn filled(filled: &'a [&'static str]) -> Instance<'a> {
        Instance { example: None, filled }
    }

    /// An object with field `name` set to `example`, and the fields of `filled`.
    pub fn with(name: &'a str, example: &'a Value, filled: &'a [&'static str]) -> Instance<'a> {
        Instance { example: Some((name, example)), filled }
    }
}

impl<'de> de::Deserializer<'de> for Instance<'_> {
    type Error = Traced;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Traced> {
        Err(Traced::Other("any value".into()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Traced> {
        let example = self.example;
        let filled = self.filled.iter().copied().filter(|f| example.is_none_or(|(e, _)| e != *f));
        let keys = example.map(|(name, _)| name).into_iter().chain(filled).collect();
        visitor.visit_map(Entries { keys, next: 0, example: example.map(|(_, v)| v), depth: 0 })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// An object's members, in order: the example's first (when there is one), the others'
/// values plain.
struct Entries<'a> {
    keys: Vec<&'a str>,
    next: usize,
    example: Option<&'a Value>,
    depth: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_> {
    type Error = Traced;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Traced> {
        let Some(key) = self.keys.get(self.next) else { return Ok(None) };
        self.next += 1;
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Traced> {
        if self.next == 1
            && let Some(example) = self.example
        {
            return seed.deserialize(example.clone()).map_err(|e| Traced::Example(e.to_string()));
        }
        // A nested struct that misses a field is a plain value that does not fit, not a field
        // this object lacks.
        seed.deserialize(Plain(self.depth + 1)).map_err(|e| match e {
            Traced::Missing(name) => Traced::Other(format!("a nested {name:?}")),
            other => other,
        })
    }
}

/// A plain value of whatever type is asked for, this deep.
#[derive(Clone, Copy)]
struct Plain(usize);

impl Plain {
    /// A value inside this one, unless too deep.
    fn inner(self) -> Result<Plain, Traced> {
        if self.0 >= MAX_DEPTH {
            return Err(Traced::Other("a value nested too deep".into()));
        }
        Ok(Plain(self.0 + 1))
    }
}

/// The integer deserializers: zero.
macro_rules! zero {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
            visitor.visit_u8(0)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Plain {
    type Error = Traced;

    /// What any value will do for (a `serde_json::Value`): `null`.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_unit()
    }

    zero! { deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
    deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128 }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_bool(false)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_f64(0.0)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_f64(0.0)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_char('a')
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_str("")
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_str("")
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_bytes(&[])
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_bytes(&[])
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_none()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Traced> {
        visitor.visit_newtype_struct(self.inner()?)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        visitor.visit_seq(Items { left: 0, value: self.inner()? })
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Traced> {
        visitor.visit_seq(Items { left: len, value: self.inner()? })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Traced> {
        visitor.visit_seq(Items { left: len, value: self.inner()? })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Traced> {
        let depth = self.inner()?.0;
        visitor.visit_map(Entries { keys: Vec::new(), next: 0, example: None, depth })
    }

    /// Every field a nested struct reads, each plain.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Traced> {
        let depth = self.inner()?.0;
        visitor.visit_map(Entries { keys: fields.to_vec(), next: 0, example: None, depth })
    }

    /// The first variant.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Traced> {
        let Some(first) = variants.first() else {
            return Err(Traced::Other("an enum without variants".into()));
        };
        visitor.visit_enum(Variant { name: first, value: self.inner()? })
    }

    serde::forward_to_deserialize_any! { unit unit_struct identifier ignored_any }
}

/// A sequence of `left` plain values.
struct Items {
    left: usize,
    value: Plain,
}

impl<'de> de::SeqAccess<'de> for Items {
    type Error = Traced;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Traced> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(self.value).map(Some)
    }
}

/// An enum's variant, by its name, with plain contents.
struct Variant {
    name: &'static str,
    value: Plain,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = Traced;
    type Variant = Plain;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Plain), Traced> {
        Ok((seed.deserialize(self.name.into_deserializer())?, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for Plain {
    type Error = Traced;

    fn unit_variant(self) -> Result<(), Traced> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Traced> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Traced> {
        de::Deserializer::deserialize_tuple(self, len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Traced> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}
