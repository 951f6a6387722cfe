//! Whether a [`crate::tool_args!`] type's schema and its `Deserialize` agree: the names the
//! schema lists against the names serde reads, found by running the type's `Deserialize`
//! against a deserializer that holds no data and only records what it is asked for.
//!
//! The macro builds the schema from the field and variant names as written; serde reads
//! them as its attributes say (`rename`, `rename_all`, `skip`, `alias`, `flatten`,
//! `untagged`, ...). Those the macro cannot follow would make the two disagree silently, so
//! registration compares them and refuses the tool, naming each difference.

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::Value;

use crate::registry::describe::{Describe, Within};
use crate::schema::{Problem, pointer_to};

/// What a type's `Deserialize` asked the tracer for.
#[derive(Debug)]
enum Traced {
    /// A struct with these field names (aliases included), as `deserialize_struct` gives them.
    Struct(&'static [&'static str]),
    /// An enum with these variant names.
    Enum(&'static [&'static str]),
    /// A struct decoded from an empty object failed for want of this field.
    Missing(&'static str),
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

/// The tracer: answers a struct's request with an empty object (`Empty`) or with nothing but
/// the record of what was asked (`Ask`).
#[derive(Clone, Copy, PartialEq)]
enum Tracer {
    Ask,
    Empty,
}

impl<'de> de::Deserializer<'de> for Tracer {
    type Error = Traced;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Traced> {
        Err(Traced::Other("any value".into()))
    }

    fn deserialize_map<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Traced> {
        Err(Traced::Other("a map".into()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Traced> {
        match self {
            Tracer::Ask => Err(Traced::Struct(fields)),
            Tracer::Empty => visitor.visit_map(NoEntries),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Traced> {
        Err(Traced::Enum(variants))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct identifier ignored_any
    }
}

/// An object with no members.
struct NoEntries;

impl<'de> de::MapAccess<'de> for NoEntries {
    type Error = Traced;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        _seed: K,
    ) -> Result<Option<K::Value>, Traced> {
        Ok(None)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        _seed: V,
    ) -> Result<V::Value, Traced> {
        Err(Traced::Other("a value without a key".into()))
    }
}

/// Names one side has and the other lacks, in the first side's order.
fn lacking<'a>(names: &[&'a str], other: &[&str]) -> Vec<&'a str> {
    names.iter().filter(|name| !other.contains(name)).copied().collect()
}

/// Compares a struct's schema (its `properties` and `required`) with what its `Deserialize`
/// reads, adding each difference to `found` under `pointer`. Whether the types of its fields
/// are to be checked too: not when the type contains itself, which its schema cannot say
/// (and checking would never end).
pub fn check_struct<T: DeserializeOwned + Describe>(
    pointer: &str,
    found: &mut Vec<Problem>,
) -> bool {
    let mut within = Within::default();
    let schema = T::schema_within(&mut within);
    if let Some(name) = within.recursive() {
        let why = format!(
            "the type {name} contains itself, which tool_args! cannot describe: write the \
             schema (a \"$ref\" can refer to a part of it) and use Tool::typed_with_schema"
        );
        found.push(Problem::new(pointer, why));
        return false;
    }
    let listed: Vec<&str> = schema["properties"]
        .as_object()
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let fields = match T::deserialize(Tracer::Ask) {
        Err(Traced::Struct(fields)) => fields,
        other => {
            found.push(not_as_declared(pointer, "a struct", other.err()));
            return true;
        }
    };
    let at = pointer_to(pointer, "properties");
    if !differences(fields, &listed, &at, |name| pointer_to(&at, name), found) {
        return true;
    }
    // Which fields the type needs is seen one at a time (serde stops at the first missing):
    // an empty object shows the first, which the schema must require too.
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    match T::deserialize(Tracer::Empty) {
        Err(Traced::Missing(name)) if !required.contains(&name) => found.push(Problem::new(
            &pointer_to(pointer, "required"),
            format!("the type needs {name:?}, which the schema does not require"),
        )),
        Ok(_) if !required.is_empty() => found.push(Problem::new(
            &pointer_to(pointer, "required"),
            format!(
                "the schema requires {:?}, which the type can do without (#[serde(default)])",
                required[0]
            ),
        )),
        _ => {}
    }
    true
}

/// Compares a unit-variant enum's schema (its `enum`) with the variants its `Deserialize`
/// reads.
pub fn check_enum<T: DeserializeOwned + Describe>(pointer: &str, found: &mut Vec<Problem>) {
    let schema = T::schema();
    let listed: Vec<&str> =
        schema["enum"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let variants = match T::deserialize(Tracer::Ask) {
        Err(Traced::Enum(variants)) => variants,
        other => return found.push(not_as_declared(pointer, "an enum", other.err())),
    };
    let at = pointer_to(pointer, "enum");
    differences(variants, &listed, &at, |_| at.clone(), found);
}

/// Adds to `found` each name the type reads that the schema does not list (at `at`), and
/// each the schema lists that the type does not read (at `listed_at(name)`). Whether the two
/// agree.
fn differences(
    read: &[&str],
    listed: &[&str],
    at: &str,
    listed_at: impl Fn(&str) -> String,
    found: &mut Vec<Problem>,
) -> bool {
    let (unlisted, unread) = (lacking(read, listed), lacking(listed, read));
    for name in &unlisted {
        let why = format!("the type reads {name:?}, which the schema does not list");
        found.push(Problem::new(at, why));
    }
    for name in &unread {
        let why = format!("the schema lists {name:?}, which the type does not read");
        found.push(Problem::new(&listed_at(name), why));
    }
    unlisted.is_empty() && unread.is_empty()
}

/// A type whose `Deserialize` asked for something other than what it was declared as (a
/// struct with `#[serde(flatten)]` reads a map, an untagged enum any value).
fn not_as_declared(pointer: &str, declared: &str, traced: Option<Traced>) -> Problem {
    let read = match traced {
        Some(Traced::Struct(_)) => "a struct".to_string(),
        Some(Traced::Enum(_)) => "an enum".to_string(),
        Some(Traced::Other(what)) => what,
        Some(Traced::Missing(_)) | None => "something else".to_string(),
    };
    Problem::new(
        pointer,
        format!(
            "declared as {declared}, the type reads {read}: a serde attribute tool_args! cannot \
             follow (flatten, untagged, transparent, tag...); write the schema with \
             Tool::typed_with_schema"
        ),
    )
}
