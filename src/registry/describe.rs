//! A type's own JSON Schema: the [`Describe`] trait, its implementations for the standard
//! types, and the pieces the [`crate::tool_args!`] macro builds a struct's or an enum's
//! schema from.

use std::any::{TypeId, type_name};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::schema::Problem;

/// A type that describes its own JSON Schema: what [`crate::Tool::typed`] lists as a tool's
/// `inputSchema`, so the schema the model sees and the type that decodes its arguments come
/// from one declaration.
///
/// Declare argument types with [`crate::tool_args!`], which implements this trait from the
/// struct's fields, their types and doc comments. The standard types implement it as this
/// table says (each row is tested, in `tests/it/typed.rs`):
///
/// | Rust type | JSON Schema |
/// |---|---|
/// | `String` | `{"type": "string"}` |
/// | `PathBuf` | `{"type": "string"}` |
/// | `char` | `{"type": "string", "minLength": 1, "maxLength": 1}` |
/// | `bool` | `{"type": "boolean"}` |
/// | `u8` | `{"type": "integer", "minimum": 0, "maximum": 255}` |
/// | `u16` | `{"type": "integer", "minimum": 0, "maximum": 65535}` |
/// | `u32` | `{"type": "integer", "minimum": 0, "maximum": 4294967295}` |
/// | `u64` | `{"type": "integer", "minimum": 0, "maximum": 18446744073709551615}` |
/// | `u128` | `{"type": "integer", "minimum": 0, "maximum": 18446744073709551615}` |
/// | `usize` | `{"type": "integer", "minimum": 0, "maximum": 18446744073709551615}` |
/// | `i8` | `{"type": "integer", "minimum": -128, "maximum": 127}` |
/// | `i16` | `{"type": "integer", "minimum": -32768, "maximum": 32767}` |
/// | `i32` | `{"type": "integer", "minimum": -2147483648, "maximum": 2147483647}` |
/// | `i64` | `{"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}` |
/// | `i128` | `{"type": "integer", "minimum": -9223372036854775808, "maximum": 18446744073709551615}` |
/// | `isize` | `{"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807}` |
/// | `f32` | `{"type": "number"}` |
/// | `f64` | `{"type": "number"}` |
/// | `Option<u8>` | `{"type": ["integer", "null"], "minimum": 0, "maximum": 255}` |
/// | `Vec<String>` | `{"type": "array", "items": {"type": "string"}}` |
/// | `VecDeque<String>` | `{"type": "array", "items": {"type": "string"}}` |
/// | `[bool; 3]` | `{"type": "array", "items": {"type": "boolean"}, "minItems": 3, "maxItems": 3}` |
/// | `HashSet<String>` | `{"type": "array", "items": {"type": "string"}, "uniqueItems": true}` |
/// | `BTreeSet<String>` | `{"type": "array", "items": {"type": "string"}, "uniqueItems": true}` |
/// | `HashMap<String, bool>` | `{"type": "object", "additionalProperties": {"type": "boolean"}}` |
/// | `BTreeMap<String, bool>` | `{"type": "object", "additionalProperties": {"type": "boolean"}}` |
/// | `Box<bool>` | `{"type": "boolean"}` |
/// | `serde_json::Value` | `{}` |
/// | `serde_json::Map<String, Value>` | `{"type": "object"}` |
///
/// Integer bounds are what the type holds, so a model is told `maximum: 255` rather than
/// failing to decode 256; `i128` and `u128` are bounded by what a JSON number decodes to
/// (`i64::MIN` to `u64::MAX`). `Option<T>` is `T` that may also be `null`, and a struct
/// field of an `Option` type is not `required` ([`Describe::OPTIONAL`]). A `Box<T>` is `T`.
///
/// Implement it by hand for a type of your own when you write its schema yourself:
///
/// ```
/// use baremcp::Describe;
/// use serde_json::{Value, json};
///
/// /// A colour as `#rrggbb`.
/// struct Colour(String);
///
/// impl Describe for Colour {
///     fn schema() -> Value {
///         json!({"type": "string", "pattern": "^#[0-9a-f]{6}$"})
///     }
/// }
///
/// assert_eq!(<Option<Colour>>::schema()["type"], json!(["string", "null"]));
/// ```
pub trait Describe {
    /// Whether a struct field of this type may be left out: `true` for `Option`, whose
    /// field [`crate::tool_args!`] then leaves out of `required`.
    const OPTIONAL: bool = false;

    /// This type's JSON Schema: the JSON it decodes from.
    fn schema() -> Value;

    /// [`Describe::schema`], built inside the schemas of the types in `within`: what
    /// [`crate::tool_args!`] types and the standard containers call for the types they hold,
    /// so that a type which contains itself is noticed instead of nested without end. Other
    /// types need not implement it.
    #[doc(hidden)]
    fn schema_within(_within: &mut Within) -> Value {
        Self::schema()
    }

    /// For types declared with [`crate::tool_args!`]: adds to `found` every way the names in
    /// the schema (properties, enum values) differ from those the type's `Deserialize` reads,
    /// for this type and the types of its fields, with JSON Pointers under `pointer`. Other
    /// types have nothing to check. Called by [`crate::Server::add_tool`] for
    /// [`crate::Tool::typed`] tools.
    #[doc(hidden)]
    fn check_agreement(_pointer: &str, _found: &mut Vec<Problem>) {}
}

impl Describe for String {
    fn schema() -> Value {
        json!({"type": "string"})
    }
}

impl Describe for PathBuf {
    fn schema() -> Value {
        json!({"type": "string"})
    }
}

impl Describe for char {
    fn schema() -> Value {
        json!({"type": "string", "minLength": 1, "maxLength": 1})
    }
}

impl Describe for bool {
    fn schema() -> Value {
        json!({"type": "boolean"})
    }
}

/// Integers are bounded by what they hold: a model told `maximum` does not send what the
/// type would refuse.
macro_rules! integers {
    ($($t:ty: $min:expr, $max:expr;)*) => {$(
        impl Describe for $t {
            fn schema() -> Value {
                json!({"type": "integer", "minimum": $min, "maximum": $max})
            }
        }
    )*};
}

// A JSON number decodes into at most a `u64` or an `i64`: the 128-bit types hold no more.
integers! {
    u8: u8::MIN, u8::MAX;
    u16: u16::MIN, u16::MAX;
    u32: u32::MIN, u32::MAX;
    u64: u64::MIN, u64::MAX;
    u128: 0, u64::MAX;
    usize: usize::MIN, usize::MAX;
    i8: i8::MIN, i8::MAX;
    i16: i16::MIN, i16::MAX;
    i32: i32::MIN, i32::MAX;
    i64: i64::MIN, i64::MAX;
    i128: i64::MIN, u64::MAX;
    isize: isize::MIN, isize::MAX;
}

impl Describe for f32 {
    fn schema() -> Value {
        json!({"type": "number"})
    }
}

impl Describe for f64 {
    fn schema() -> Value {
        json!({"type": "number"})
    }
}

impl Describe for Value {
    fn schema() -> Value {
        json!({})
    }
}

impl Describe for Map<String, Value> {
    fn schema() -> Value {
        json!({"type": "object"})
    }
}

impl<T: Describe> Describe for Option<T> {
    const OPTIONAL: bool = true;

    fn schema() -> Value {
        Self::schema_within(&mut Within::default())
    }

    fn schema_within(within: &mut Within) -> Value {
        nullable(T::schema_within(within))
    }

    fn check_agreement(pointer: &str, found: &mut Vec<Problem>) {
        T::check_agreement(pointer, found);
    }
}

impl<T: Describe> Describe for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;

    fn schema() -> Value {
        Self::schema_within(&mut Within::default())
    }

    fn schema_within(within: &mut Within) -> Value {
        T::schema_within(within)
    }

    fn check_agreement(pointer: &str, found: &mut Vec<Problem>) {
        T::check_agreement(pointer, found);
    }
}

/// Arrays, sets and maps: the schema of their items (`T`'s) under `keyword`, checked there
/// too.
macro_rules! containers {
    ($($t:ty, [$($generic:tt)*]: $keyword:literal, |$items:ident| $schema:expr;)*) => {$(
        impl<$($generic)*> Describe for $t {
            fn schema() -> Value {
                Self::schema_within(&mut Within::default())
            }

            fn schema_within(within: &mut Within) -> Value {
                let $items = T::schema_within(within);
                $schema
            }

            fn check_agreement(pointer: &str, found: &mut Vec<Problem>) {
                T::check_agreement(&format!("{pointer}/{}", $keyword), found);
            }
        }
    )*};
}

containers! {
    Vec<T>, [T: Describe]: "items", |items| json!({"type": "array", "items": items});
    VecDeque<T>, [T: Describe]: "items", |items| json!({"type": "array", "items": items});
    [T; N], [T: Describe, const N: usize]: "items",
        |items| json!({"type": "array", "items": items, "minItems": N, "maxItems": N});
    HashSet<T, S>, [T: Describe, S]: "items",
        |items| json!({"type": "array", "items": items, "uniqueItems": true});
    BTreeSet<T>, [T: Describe]: "items",
        |items| json!({"type": "array", "items": items, "uniqueItems": true});
    HashMap<String, T, S>, [T: Describe, S]: "additionalProperties",
        |items| json!({"type": "object", "additionalProperties": items});
    BTreeMap<String, T>, [T: Describe]: "additionalProperties",
        |items| json!({"type": "object", "additionalProperties": items});
}

/// The [`crate::tool_args!`] types whose schemas are being built on this thread, outermost
/// first, and the first type met again inside its own: a type that contains itself
/// (`children: Vec<Node>` in `Node`) would nest its schema without end, and overflow the
/// stack. The record is the thread's, not the value's: a hand-written [`Describe`] between
/// two of them starts a `Within` of its own (`Vec::<Node>::schema()`), which must still see
/// the types outside it. The outermost `Within` clears the record when dropped, a panic's
/// unwinding included.
#[doc(hidden)]
pub struct Within {
    outermost: bool,
}

thread_local! {
    static BUILDING: std::cell::RefCell<(Vec<TypeId>, Option<&'static str>)> =
        const { std::cell::RefCell::new((Vec::new(), None)) };
}

impl Default for Within {
    fn default() -> Within {
        Within { outermost: BUILDING.with_borrow(|(building, _)| building.is_empty()) }
    }
}

impl Drop for Within {
    fn drop(&mut self) {
        if self.outermost {
            BUILDING.with_borrow_mut(|state| *state = (Vec::new(), None));
        }
    }
}

impl Within {
    /// Enters `T`'s schema: `false` when it is being built already, which is remembered.
    pub fn enter<T: 'static>(&mut self) -> bool {
        let id = TypeId::of::<T>();
        BUILDING.with_borrow_mut(|(building, recursive)| {
            if building.contains(&id) {
                recursive.get_or_insert(type_name::<T>());
                return false;
            }
            building.push(id);
            true
        })
    }

    /// Leaves the schema entered last.
    pub fn leave(&mut self) {
        BUILDING.with_borrow_mut(|(building, _)| building.pop());
    }

    /// The first type met inside its own schema, by its Rust path.
    pub fn recursive(&self) -> Option<&'static str> {
        BUILDING.with_borrow(|(_, recursive)| *recursive)
    }
}

/// What stands where a type meets itself again: no schema describes it, and
/// [`crate::Server::add_tool`] refuses the tool (`agreement.rs`).
pub fn recursion(name: &str) -> Value {
    let why = format!("{name} again: tool_args! does not describe a type that contains itself");
    json!({ "$comment": why })
}

/// `schema` that also allows `null`, as serde decodes `null` into `None`: `null` joins its
/// `type` and its `enum`; a schema without a `type` allows it already.
fn nullable(mut schema: Value) -> Value {
    let Some(object) = schema.as_object_mut() else { return schema };
    match object.get_mut("type") {
        Some(Value::String(name)) => {
            let name = std::mem::take(name);
            object.insert("type".into(), json!([name, "null"]));
        }
        Some(Value::Array(names)) if !names.contains(&json!("null")) => names.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = object.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    schema
}

/// Doc comment lines as one description: the lines of a paragraph joined by spaces, the
/// paragraphs by a blank line. `None` when there are none.
pub fn doc_text(lines: &[&str]) -> Option<String> {
    let mut text = String::new();
    let mut blank = false;
    for line in lines.iter().flat_map(|doc| doc.split('\n')) {
        let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
        if line.is_empty() {
            blank = !text.is_empty();
            continue;
        }
        if blank {
            text.push_str("\n\n");
        } else if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(line);
        blank = false;
    }
    (!text.is_empty()).then_some(text)
}

/// `#[schema(...)]` keywords, set over what the type says (a `maximum` below the type's own).
fn set_keywords(schema: &mut Value, keywords: Vec<(&str, Value)>) {
    if keywords.is_empty() {
        return;
    }
    if !schema.is_object() {
        // `true` (any value) as an object, so that it can hold keywords.
        *schema = json!({});
    }
    if let Some(object) = schema.as_object_mut() {
        for (keyword, value) in keywords {
            object.insert(keyword.into(), value);
        }
    }
}

/// The schema of a struct declared with [`crate::tool_args!`], built field by field.
pub struct ObjectSchema {
    properties: Map<String, Value>,
    required: Vec<Value>,
    /// `#[serde(default)]` on the struct: every field may be left out.
    all_default: bool,
    description: Option<String>,
    deny_unknown: bool,
}

impl ObjectSchema {
    /// A struct with these doc comment lines and flags (`default`, `deny_unknown_fields`:
    /// the serde attributes of the struct the macro follows).
    pub fn new(docs: &[&str], flags: &[&str]) -> ObjectSchema {
        ObjectSchema {
            properties: Map::new(),
            required: Vec::new(),
            all_default: flags.contains(&"default"),
            description: doc_text(docs),
            deny_unknown: flags.contains(&"deny_unknown_fields"),
        }
    }

    /// One field: its name (a raw identifier's without `r#`, as serde reads it), its type's
    /// schema and whether that type may be left out, its doc comment lines, its flags
    /// (`default`: `#[serde(default ...)]`) and its `#[schema(...)]` keywords.
    pub fn field(
        &mut self,
        name: &str,
        mut schema: Value,
        optional: bool,
        docs: &[&str],
        flags: &[&str],
        keywords: Vec<(&str, Value)>,
    ) {
        let name = name.strip_prefix("r#").unwrap_or(name);
        if let Some(description) = doc_text(docs) {
            set_keywords(&mut schema, vec![("description", json!(description))]);
        }
        set_keywords(&mut schema, keywords);
        if !(optional || self.all_default || flags.contains(&"default")) {
            self.required.push(json!(name));
        }
        self.properties.insert(name.into(), schema);
    }

    /// The schema, with the struct's own `#[schema(...)]` keywords.
    pub fn finish(self, keywords: Vec<(&str, Value)>) -> Value {
        let mut schema = json!({"type": "object", "properties": self.properties});
        if let Some(description) = self.description {
            schema["description"] = json!(description);
        }
        if !self.required.is_empty() {
            schema["required"] = Value::Array(self.required);
        }
        if self.deny_unknown {
            schema["additionalProperties"] = json!(false);
        }
        set_keywords(&mut schema, keywords);
        schema
    }
}

/// A `#[schema(...)]` value as JSON. A value serde_json cannot write (a map with keys that
/// are not strings) is a mistake in the declaration, said when the schema is first built.
pub fn keyword(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value)
        .unwrap_or_else(|e| panic!("a #[schema(...)] value does not serialize to JSON: {e}"))
}

/// The JSON Pointer of property `field` (a raw identifier's name without `r#`) in the object
/// schema at `pointer`.
pub fn property(pointer: &str, field: &str) -> String {
    let field = field.strip_prefix("r#").unwrap_or(field);
    crate::schema::pointer_to(&crate::schema::pointer_to(pointer, "properties"), field)
}

/// The schema of a unit-variant enum declared with [`crate::tool_args!`]: a string, one of the
/// variants' names.
pub fn enum_schema(variants: &[&str], docs: &[&str], keywords: Vec<(&str, Value)>) -> Value {
    let names: Vec<&str> = variants.iter().map(|v| v.strip_prefix("r#").unwrap_or(v)).collect();
    let mut schema = json!({"type": "string", "enum": names});
    if let Some(description) = doc_text(docs) {
        schema["description"] = json!(description);
    }
    set_keywords(&mut schema, keywords);
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_become_paragraphs() {
        assert_eq!(doc_text(&[]), None);
        assert_eq!(doc_text(&[" One", " two.", "", " Three."]), Some("One two.\n\nThree.".into()));
        assert_eq!(doc_text(&["  Indented", " ", ""]), Some(" Indented".into()));
        // A `/** */` block arrives as one string of several lines.
        assert_eq!(doc_text(&["\n A\n B\n"]), Some("A B".into()));
    }

    #[test]
    fn null_joins_the_type_and_the_enum_once() {
        assert_eq!(nullable(json!({"type": "string"})), json!({"type": ["string", "null"]}));
        assert_eq!(
            nullable(json!({"type": ["string", "null"], "enum": ["a", null]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(
            nullable(json!({"type": "string", "enum": ["a"]})),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(nullable(json!({})), json!({}));
        assert_eq!(nullable(json!(true)), json!(true));
    }

    #[test]
    fn keywords_override_and_reach_a_schema_that_was_true() {
        let mut schema = json!({"type": "integer", "maximum": 255});
        set_keywords(&mut schema, vec![("maximum", json!(10))]);
        assert_eq!(schema, json!({"type": "integer", "maximum": 10}));
        let mut any = json!(true);
        set_keywords(&mut any, vec![("examples", json!([1]))]);
        assert_eq!(any, json!({"examples": [1]}));
    }
}
