//! Decodes a typed tool's arguments (or a schema example) into the handler's type, naming the
//! JSON Pointer of the value that did not fit.
//!
//! serde_json's own `Value` deserializer says what was wrong but not where, and a model can
//! only correct an argument it can find. This one walks the `Value` the same way and, when a
//! part fails, prefixes the error with the key or index it was decoding on the way out, so
//! the error path costs nothing until something fails.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::Value;

use crate::schema::{shown_pointer, shown_text};

/// What did not decode: where (a JSON Pointer into the decoded value) and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecodeError {
    pub pointer: String,
    pub why: String,
}

impl DecodeError {
    /// The same error seen from one level up: `segment` is the key or index it was under.
    fn under(mut self, segment: &str) -> DecodeError {
        let escaped = segment.replace('~', "~0").replace('/', "~1");
        self.pointer.insert_str(0, &format!("/{escaped}"));
        self
    }
}

/// Shown as a validation error is (`schema::shown_pointer`): one line, no raw control
/// characters, whatever the arguments' keys hold.
impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{}: {}", shown_pointer(pointer), shown_text(&self.why))
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(why: T) -> DecodeError {
        DecodeError { pointer: String::new(), why: why.to_string() }
    }
}

/// Decodes `value` into `T`.
pub(crate) fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, DecodeError> {
    T::deserialize(At(value))
}

/// A deserializer over one borrowed value.
struct At<'a>(&'a Value);

impl<'de> de::Deserializer<'de> for At<'de> {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                (None, None) => visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => {
                let mut seq = Seq { items: items.iter(), index: 0 };
                let value = visitor.visit_seq(&mut seq)?;
                match seq.items.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(items.len(), &"fewer elements in array")),
                }
            }
            Value::Object(map) => {
                let mut entries = Entries { entries: map.iter(), value: None };
                let value = visitor.visit_map(&mut entries)?;
                match entries.entries.len() {
                    0 => Ok(value),
                    _ => Err(de::Error::invalid_length(map.len(), &"fewer elements in map")),
                }
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_newtype_struct(self)
    }

    /// As serde_json writes enums: a unit variant is its name, any other is an object with the
    /// variant's name as its one key.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        match self.0 {
            Value::String(name) => visitor.visit_enum(name.as_str().into_deserializer()),
            Value::Object(map) if map.len() == 1 => {
                let (name, value) = map.iter().next().expect("one entry");
                visitor.visit_enum(Variant { name, value }).map_err(|e| e.under(name))
            }
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"a string or an object with one key",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// How serde names a value in "invalid type" messages.
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => de::Unexpected::Unsigned(u),
            (None, Some(i)) => de::Unexpected::Signed(i),
            (None, None) => de::Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// An array's items, each decoded under its index.
struct Seq<'a> {
    items: std::slice::Iter<'a, Value>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for Seq<'de> {
    type Error = DecodeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DecodeError> {
        let Some(item) = self.items.next() else { return Ok(None) };
        let index = self.index;
        self.index += 1;
        seed.deserialize(At(item)).map(Some).map_err(|e| e.under(&index.to_string()))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An object's members, each key and value decoded under the key.
struct Entries<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<(&'a str, &'a Value)>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = DecodeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DecodeError> {
        let Some((key, value)) = self.entries.next() else { return Ok(None) };
        self.value = Some((key, value));
        seed.deserialize(Key(key)).map(Some).map_err(|e| e.under(key))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DecodeError> {
        let (key, value) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value was asked for before its key"))?;
        seed.deserialize(At(value)).map_err(|e| e.under(key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An object key: a string, or a number written as one (as serde_json reads map keys).
struct Key<'a>(&'a str);

impl Key<'_> {
    fn parse<T: std::str::FromStr>(&self) -> Result<T, DecodeError> {
        self.0
            .parse()
            .map_err(|_| de::Error::invalid_value(de::Unexpected::Str(self.0), &"a number"))
    }
}

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_borrowed_str(self.0)
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_i64(self.parse()?)
    }

    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_i64(self.parse()?)
    }

    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_i64(self.parse()?)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_i64(self.parse()?)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_u64(self.parse()?)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_u64(self.parse()?)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_u64(self.parse()?)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_u64(self.parse()?)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        visitor.visit_enum(self.0.into_deserializer())
    }

    serde::forward_to_deserialize_any! {
        bool i128 u128 f32 f64 char str string bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// A variant written as `{"name": value}`.
struct Variant<'a> {
    name: &'a str,
    value: &'a Value,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = DecodeError;
    type Variant = At<'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, At<'de>), DecodeError> {
        let name = de::value::BorrowedStrDeserializer::<DecodeError>::new(self.name);
        Ok((seed.deserialize(name)?, At(self.value)))
    }
}

impl<'de> de::VariantAccess<'de> for At<'de> {
    type Error = DecodeError;

    fn unit_variant(self) -> Result<(), DecodeError> {
        match self.0 {
            Value::Null => Ok(()),
            other => Err(de::Error::invalid_type(unexpected(other), &"a unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, DecodeError> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        de::Deserializer::deserialize_map(self, visitor)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Order {
        id: u32,
        note: Option<String>,
        lines: Vec<Line>,
        #[serde(default)]
        stock: BTreeMap<u16, bool>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Line {
        Item { sku: String, count: u8 },
        Gift(String),
        Empty,
    }

    fn why(value: serde_json::Value) -> String {
        decode::<Order>(&value).unwrap_err().to_string()
    }

    #[test]
    fn decodes_what_serde_json_decodes() {
        let value = json!({
            "id": 7, "note": null,
            "lines": [{"Item": {"sku": "a", "count": 2}}, {"Gift": "card"}, "Empty"],
            "stock": {"12": true}
        });
        let order = decode::<Order>(&value).unwrap();
        assert_eq!(order, serde_json::from_value(value).unwrap());
        assert_eq!(order.stock, BTreeMap::from([(12, true)]));
        assert_eq!(decode::<(u8, f64, bool)>(&json!([1, 2, 3 > 2])).unwrap(), (1, 2.0, true));
        assert_eq!(decode::<i8>(&json!(-3)).unwrap(), -3);
        assert_eq!(decode::<()>(&json!(null)).unwrap(), ());
    }

    /// `value` decoded here and by serde_json, which must agree.
    fn same<T: DeserializeOwned + PartialEq + fmt::Debug>(value: serde_json::Value) -> T {
        let ours = decode::<T>(&value).unwrap();
        assert_eq!(ours, serde_json::from_value::<T>(value).unwrap());
        ours
    }

    #[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
    enum Side {
        Left,
        Right,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
    struct Name(String);

    #[derive(Debug, Deserialize, PartialEq)]
    enum Shape {
        Point(i32, i32),
    }

    #[test]
    fn map_keys_and_variants_decode_as_serde_json_reads_them() {
        let signed = json!({"-1": 1, "2": 2});
        assert_eq!(same::<BTreeMap<i8, u8>>(signed.clone()), BTreeMap::from([(-1, 1), (2, 2)]));
        assert_eq!(same::<BTreeMap<i16, u8>>(signed.clone()).len(), 2);
        assert_eq!(same::<BTreeMap<i32, u8>>(signed.clone()).len(), 2);
        assert_eq!(same::<BTreeMap<i64, u8>>(signed).len(), 2);
        let unsigned = json!({"1": true, "255": false});
        assert_eq!(
            same::<BTreeMap<u8, bool>>(unsigned.clone()),
            BTreeMap::from([(1, true), (255, false)])
        );
        assert_eq!(same::<BTreeMap<u16, bool>>(unsigned.clone()).len(), 2);
        assert_eq!(same::<BTreeMap<u32, bool>>(unsigned.clone()).len(), 2);
        assert_eq!(same::<BTreeMap<u64, bool>>(unsigned).len(), 2);
        assert_eq!(
            same::<BTreeMap<Side, u8>>(json!({"Left": 1})),
            BTreeMap::from([(Side::Left, 1)])
        );
        assert_eq!(
            same::<BTreeMap<Name, u8>>(json!({"n": 1})),
            BTreeMap::from([(Name("n".into()), 1)])
        );
        assert_eq!(same::<Shape>(json!({"Point": [1, -2]})), Shape::Point(1, -2));
        // A key that is not the number the map wants is named, as any other misfit.
        let why = decode::<BTreeMap<u8, bool>>(&json!({"x": true})).unwrap_err().to_string();
        assert!(why.contains("\"x\"") && why.contains("a number"), "{why}");
        let why = decode::<BTreeMap<Side, u8>>(&json!({"Up": 1})).unwrap_err().to_string();
        assert!(why.contains("unknown variant `Up`"), "{why}");
    }

    #[test]
    fn names_the_pointer_of_what_did_not_fit() {
        let lines = |line: serde_json::Value| json!({"id": 1, "lines": [line]});
        assert_eq!(
            why(json!({"id": -1, "lines": []})),
            "/id: invalid value: integer `-1`, expected u32"
        );
        assert_eq!(why(json!({"id": 1})), "/: missing field `lines`");
        assert_eq!(
            why(lines(json!({"Item": {"sku": "a", "count": 256}}))),
            "/lines/0/Item/count: invalid value: integer `256`, expected u8"
        );
        assert_eq!(
            why(lines(json!({"Item": {"sku": "a"}}))),
            "/lines/0/Item: missing field `count`"
        );
        assert_eq!(
            why(lines(json!("Gone"))),
            "/lines/0: unknown variant `Gone`, expected one of `Item`, `Gift`, `Empty`"
        );
        assert_eq!(
            why(lines(json!([1]))),
            "/lines/0: invalid type: sequence, expected a string or an object with one key"
        );
        assert_eq!(
            why(json!({"id": 1, "lines": [], "stock": {"a/b~": true}})),
            "/stock/a~1b~0: invalid value: string \"a/b~\", expected a number"
        );
        // On one line, control characters escaped, as a validation error shows them (serde
        // quotes the key in Rust's own escapes).
        assert_eq!(
            why(json!({"id": 1, "lines": [], "stock": {"\u{1b}[2J\n\\": true}})),
            "/stock/\\u001b[2J\\n\\\\: invalid value: string \"\\u{1b}[2J\\n\\\\\", expected a number"
        );
        assert_eq!(
            decode::<(u8,)>(&json!([1, 2])).unwrap_err().to_string(),
            "/: invalid length 2, expected fewer elements in array"
        );
    }
}
