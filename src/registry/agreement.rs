//! Whether a [`crate::tool_args!`] type's schema and its `Deserialize` agree: the names the
//! schema lists against the names serde reads, found by running the type's `Deserialize`
//! against a deserializer that holds no data and only records what it is asked for.
//!
//! The macro builds the schema from the field and variant names as written; serde reads
//! them as its attributes say (`rename`, `rename_all`, `skip`, `alias`, `flatten`,
//! `untagged`, ...). Those the macro cannot follow would make the two disagree silently, so
//! registration compares them and refuses the tool, naming each difference. Which fields the
//! type needs, and whether each field's `examples` and `default` decode, are seen by
//! decoding objects that hold some fields (`stand_in.rs`: filled with plain values, or an
//! example).

use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::Value;

use crate::registry::describe::{Describe, Within};
use crate::registry::stand_in::{Instance, Traced};
use crate::schema::{Problem, Schema, pointer_to};

/// The tracer: answers with nothing but the record of what was asked.
struct Tracer;

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
        _visitor: V,
    ) -> Result<V::Value, Traced> {
        Err(Traced::Struct(fields))
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

/// Names one side has and the other lacks, in the first side's order.
fn lacking<'a>(names: &[&'a str], other: &[&str]) -> Vec<&'a str> {
    names.iter().filter(|name| !other.contains(name)).copied().collect()
}

/// Compares a struct's schema (its `properties`, `required`, the fields' `examples` and
/// `default`) with what its `Deserialize` reads, adding each difference to `found` under
/// `pointer`. Whether the types of its fields are to be checked too: not when the type
/// contains itself, which its schema cannot say (and checking would never end).
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
    let fields = match T::deserialize(Tracer) {
        Err(Traced::Struct(fields)) => fields,
        other => {
            found.push(not_as_declared(pointer, "a struct", other.err()));
            return true;
        }
    };
    let at = pointer_to(pointer, "properties");
    if differences(fields, &listed, &at, |name| pointer_to(&at, name), found) {
        let needed = check_required::<T>(pointer, &schema, found);
        check_field_examples::<T>(&at, &schema, &needed, found);
        check_own_examples::<T>(pointer, &schema, found);
    }
    true
}

/// Compares the fields the type needs with those the schema requires, and returns the first
/// (those seen: all, unless a plain value did not decode).
///
/// serde says which field is missing one at a time, the first in declaration order: each
/// field it names is added to the object, filled with a plain value, until the object
/// decodes. When a plain value does not decode (a `deserialize_with` that parses), the fields
/// after it are not seen, and nothing is said of what the schema requires past them.
fn check_required<T: DeserializeOwned>(
    pointer: &str,
    schema: &Value,
    found: &mut Vec<Problem>,
) -> Vec<&'static str> {
    let required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let at = pointer_to(pointer, "required");
    let mut needed = Vec::new();
    loop {
        match T::deserialize(Instance::filled(&needed)) {
            Err(Traced::Missing(name)) if !needed.contains(&name) => {
                if !required.contains(&name) {
                    let why = format!("the type needs {name:?}, which the schema does not require");
                    found.push(Problem::new(&at, why));
                }
                needed.push(name);
            }
            Ok(_) => break,
            Err(_) => return needed,
        }
    }
    for name in lacking(&required, &needed) {
        let why = format!(
            "the schema requires {name:?}, which the type can do without (#[serde(default)])"
        );
        found.push(Problem::new(&at, why));
    }
    needed
}

/// Checks that each entry of a field's `examples`, and its `default`, decodes into the type,
/// as the field of an object that holds the fields the type needs (`needed`, filled with
/// plain values), so that the type's own `Deserialize` (and any `deserialize_with`) reads it.
/// A `default` is shown to the model as the value a field left out stands for: one the type
/// cannot read is as wrong as such an example. `at` is the pointer of the schema's
/// `properties`.
fn check_field_examples<T: DeserializeOwned>(
    at: &str,
    schema: &Value,
    needed: &[&'static str],
    found: &mut Vec<Problem>,
) {
    let properties = schema["properties"].as_object().into_iter().flatten();
    for (name, property) in properties {
        let examples = property.get("examples").and_then(Value::as_array).into_iter().flatten();
        let examples = examples.enumerate().map(|(i, example)| (format!("examples/{i}"), example));
        let default = property.get("default").map(|default| ("default".to_string(), default));
        for (key, example) in examples.chain(default) {
            // The example is read first: a plain value that does not decode comes later, and
            // says nothing of the example.
            if let Err(Traced::Example(why)) = T::deserialize(Instance::with(name, example, needed))
            {
                let at = format!("{}/{key}", pointer_to(at, name));
                found.push(Problem::new(&at, format!("does not decode into the type: {why}")));
            }
        }
    }
}

/// Checks that each entry of a nested type's own `examples` decodes into it, then that it
/// passes its schema (decoding first, as the field's examples are, so that an example both
/// checks refuse is said once). A tool's argument type (at the root) is checked by
/// `Server::add_tool`, as any typed tool's is.
fn check_own_examples<T: DeserializeOwned>(
    pointer: &str,
    schema: &Value,
    found: &mut Vec<Problem>,
) {
    if pointer.is_empty() {
        return;
    }
    let examples = schema.get("examples").and_then(Value::as_array).into_iter().flatten();
    // It loads: the tool's whole schema, which holds it, was compiled before.
    let compiled = Schema::compile(schema).ok();
    for (i, example) in examples.enumerate() {
        if let Err(e) = crate::registry::typed_args::decode::<T>(example) {
            let at = format!("{}/{i}{}", pointer_to(pointer, "examples"), e.pointer);
            found.push(Problem::new(&at, format!("does not decode into the type: {}", e.why)));
        } else if let Some(Err(errors)) = compiled.as_ref().map(|c| c.validate(example)) {
            let (inside, why) = errors.first_inside();
            let at = format!("{}/{i}{inside}", pointer_to(pointer, "examples"));
            found.push(Problem::new(&at, format!("the schema refuses it: {why}")));
        }
    }
}

/// Compares a unit-variant enum's schema (its `enum`) with the variants its `Deserialize`
/// reads.
pub fn check_enum<T: DeserializeOwned + Describe>(pointer: &str, found: &mut Vec<Problem>) {
    let schema = T::schema();
    let listed: Vec<&str> =
        schema["enum"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let variants = match T::deserialize(Tracer) {
        Err(Traced::Enum(variants)) => variants,
        other => return found.push(not_as_declared(pointer, "an enum", other.err())),
    };
    let at = pointer_to(pointer, "enum");
    if differences(variants, &listed, &at, |_| at.clone(), found) {
        check_own_examples::<T>(pointer, &schema, found);
    }
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
        Some(Traced::Missing(_) | Traced::Example(_)) | None => "something else".to_string(),
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
