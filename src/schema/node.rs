//! The compiled form of a schema: an arena of nodes, each a boolean schema or one schema
//! object's keywords, its subschemas named by their index in the arena.

use serde_json::{Number, Value};

use super::regex::Regex;

/// Type bits for the `type` keyword.
pub(super) mod types {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const OBJECT: u8 = 4;
    pub const ARRAY: u8 = 8;
    pub const NUMBER: u8 = 16;
    pub const STRING: u8 = 32;
    pub const INTEGER: u8 = 64;
    pub const NAMES: [(&str, u8); 7] = [
        ("null", NULL),
        ("boolean", BOOLEAN),
        ("object", OBJECT),
        ("array", ARRAY),
        ("number", NUMBER),
        ("string", STRING),
        ("integer", INTEGER),
    ];
}

#[derive(Debug)]
pub(super) enum Node {
    Bool(bool),
    Keywords(Box<Keywords>),
}

/// One compiled schema object. Subschemas are indices into [`Schema`](super::Schema)'s nodes.
#[derive(Debug, Default)]
pub(super) struct Keywords {
    /// This schema's JSON Pointer within the document, for keyword paths in errors.
    pub path: String,
    pub types: u8,
    /// The `type` names in the order the schema gives them, for messages.
    pub type_names: Vec<&'static str>,
    pub enumeration: Option<Vec<Value>>,
    pub constant: Option<Value>,
    pub properties: Vec<(String, usize)>,
    /// Which of `properties` are also `required`, so one pass over an object counts them.
    pub property_required: Vec<bool>,
    pub required: Vec<String>,
    pub additional_properties: Option<usize>,
    pub pattern_properties: Vec<(String, Regex, usize)>,
    pub property_names: Option<usize>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, usize)>,
    pub prefix_items: Vec<usize>,
    /// Applies to every item after `prefix_items` (2020-12 `items`, draft-07 `additionalItems`
    /// or object-form `items`).
    pub items: Option<usize>,
    /// The keyword `items` came from, for error paths.
    pub items_keyword: &'static str,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub contains: Option<usize>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<(String, Regex)>,
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub multiple_of: Option<Number>,
    pub all_of: Vec<usize>,
    pub any_of: Vec<usize>,
    pub one_of: Vec<usize>,
    pub not: Option<usize>,
    pub if_then_else: Option<(usize, Option<usize>, Option<usize>)>,
    pub reference: Option<usize>,
    /// Whether any of `allOf`, `anyOf`, `oneOf`, `not`, `if` is present: most schemas have
    /// none, and one test then skips them all.
    pub applicators: bool,
}
