//! The members of a message's `params` that methods read, captured as raw slices in the same
//! pass that parses the envelope, so `params` is scanned once however many members matter.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// `params` as the client sent it.
#[derive(Debug, Default)]
pub enum ParamsField<'a> {
    /// No `params` member: the same as `{}`.
    #[default]
    Absent,
    Object(Params<'a>),
    /// `params` was present but not an object (JSON-RPC allows arrays; MCP does not).
    NotObject,
}

/// The known members, each the raw JSON the client wrote.
#[derive(Debug, Default, Clone, Copy)]
pub struct Params<'a> {
    pub meta: Option<&'a RawValue>,
    pub protocol_version: Option<&'a RawValue>,
    pub name: Option<&'a RawValue>,
    pub arguments: Option<&'a RawValue>,
    pub cursor: Option<&'a RawValue>,
    pub request_id: Option<&'a RawValue>,
    /// A known member appeared twice: ambiguous, so the request is refused.
    pub duplicate: bool,
}

impl<'a> ParamsField<'a> {
    /// The members, or `None` when `params` is not a usable object.
    pub fn object(&self) -> Option<Params<'a>> {
        match self {
            ParamsField::Absent => Some(Params::default()),
            ParamsField::Object(params) if !params.duplicate => Some(*params),
            _ => None,
        }
    }
}

/// Which known member a key names, read without allocating even when the key has escapes.
enum Key {
    Meta,
    ProtocolVersion,
    Name,
    Arguments,
    Cursor,
    RequestId,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "_meta" => Key::Meta,
                    "protocolVersion" => Key::ProtocolVersion,
                    "name" => Key::Name,
                    "arguments" => Key::Arguments,
                    "cursor" => Key::Cursor,
                    "requestId" => Key::RequestId,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for ParamsField<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = ParamsField<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("params")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut p = Params::default();
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key {
                Key::Meta => &mut p.meta,
                Key::ProtocolVersion => &mut p.protocol_version,
                Key::Name => &mut p.name,
                Key::Arguments => &mut p.arguments,
                Key::Cursor => &mut p.cursor,
                Key::RequestId => &mut p.request_id,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            p.duplicate |= slot.replace(map.next_value()?).is_some();
        }
        Ok(ParamsField::Object(p))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ParamsField::NotObject)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ParamsField::NotObject)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ParamsField::NotObject)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ParamsField::NotObject)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ParamsField::NotObject)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ParamsField::NotObject)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ParamsField::NotObject)
    }
}

/// For `#[serde(deserialize_with)]`: a present `params` (even `null`) is never "absent".
pub fn present<'de, D: Deserializer<'de>>(d: D) -> Result<ParamsField<'de>, D::Error> {
    // `null` reaches `deserialize_any` as a unit, so it is kept as "not an object".
    ParamsField::deserialize(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(json: &str) -> ParamsField<'_> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn captures_known_members_in_one_pass() {
        let ParamsField::Object(p) =
            field(r#"{"name":"x","arguments":{"a":[1,{"b":2}]},"other":{"deep":[1,2]},"_meta":{}}"#)
        else {
            panic!("not an object")
        };
        assert_eq!(p.name.unwrap().get(), r#""x""#);
        assert_eq!(p.arguments.unwrap().get(), r#"{"a":[1,{"b":2}]}"#);
        assert_eq!(p.meta.unwrap().get(), "{}");
        assert!(p.cursor.is_none() && !p.duplicate);
        let ParamsField::Object(escaped) = field(r#"{"n\u0061me":"y"}"#) else { panic!("not an object") };
        assert_eq!(escaped.name.unwrap().get(), r#""y""#);
        assert!(matches!(field(r#"{"name":1,"name":2}"#), ParamsField::Object(Params { duplicate: true, .. })));
        for not_object in ["[1,2]", "null", "7", "\"s\"", "true", "1.5"] {
            assert!(matches!(field(not_object), ParamsField::NotObject), "{not_object}");
        }
    }
}
