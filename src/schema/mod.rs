//! JSON Schema: the subset real MCP tool schemas use, compiled once and checked with messages
//! that name the offending value's JSON Pointer and say what was allowed.
//!
//! Nothing here does I/O. [`Schema::compile`] refuses a malformed schema with every problem it
//! finds, and returns warnings for keywords it knows but does not enforce, so that nothing
//! passes silently looking like validation. Work is bounded: nesting depth, `$ref` cycles,
//! total steps and regex matching all have limits that end in an error, never a hang.

mod char_class;
mod compile;
mod draft;
mod ids;
pub(crate) use ids::subschemas;
mod node;
mod regex;
mod uri;
pub(crate) mod validate;

use std::fmt;

use serde_json::Value;

pub use draft::Draft;
pub(crate) use pointer::{escape_token, pointer_to, shown_pointer, shown_text};

/// A compiled schema, ready to validate instances.
#[derive(Debug)]
pub struct Schema {
    nodes: Vec<node::Node>,
    warnings: Vec<Problem>,
    draft: Draft,
}

/// A problem found in a schema at load time: where (a JSON Pointer into the schema) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// JSON Pointer into the schema (empty for the whole schema).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl Problem {
    /// A problem at `pointer`.
    pub fn new(pointer: &str, message: impl Into<String>) -> Problem {
        Problem { pointer: pointer.to_string(), message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{}: {}", shown_pointer(pointer), shown_text(&self.message))
    }
}

/// One reason an instance is invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// JSON Pointer to the offending value (`/` for the whole instance).
    pub instance_path: String,
    /// JSON Pointer to the schema keyword that failed, e.g. `/properties/name/minLength`.
    pub keyword_path: String,
    /// What was allowed, and what was found.
    pub message: String,
}

/// One line, whatever the instance's keys or the schema's text hold: the pointer as
/// `shown_pointer` writes it, the message with its control characters escaped (the values
/// it quotes are JSON text already).
impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", shown_pointer(&self.instance_path), shown_text(&self.message))
    }
}

/// All the errors of one instance: the first [`Errors::CAP`] kept, and how many there were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Errors {
    /// The first errors, at most [`Errors::CAP`].
    pub errors: Vec<ValidationError>,
    /// How many errors there were in all.
    pub total: usize,
}

impl Errors {
    /// How many errors are kept.
    pub const CAP: usize = 20;

    /// The first error as where it is inside the instance (`""` for the whole of it, to follow
    /// the instance's own pointer) and its message: what registration says of an example the
    /// schema refuses.
    pub(crate) fn first_inside(&self) -> (&str, &str) {
        match self.errors.first() {
            Some(e) => (if e.instance_path == "/" { "" } else { &e.instance_path }, &e.message),
            None => ("", "refused"),
        }
    }
}

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        if self.total > self.errors.len() {
            write!(f, "\n... and {} more errors", self.total - self.errors.len())?;
        }
        Ok(())
    }
}

impl Schema {
    /// Compiles a schema. `$schema` selects the dialect: absent or 2020-12, or draft-07;
    /// anything else is refused.
    pub fn compile(schema: &Value) -> Result<Schema, Vec<Problem>> {
        compile::compile(schema, Draft::Draft2020_12)
    }

    /// Compiles a schema read as `draft` when it names no `$schema` itself.
    pub fn compile_as(schema: &Value, draft: Draft) -> Result<Schema, Vec<Problem>> {
        compile::compile(schema, draft)
    }

    /// Keywords the schema uses that are known but not enforced, with their JSON Pointers.
    pub fn warnings(&self) -> &[Problem] {
        &self.warnings
    }

    /// The dialect the schema was read as.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// Checks `instance`, collecting every error (the first [`Errors::CAP`] are kept).
    pub fn validate(&self, instance: &Value) -> Result<(), Errors> {
        validate::validate(self, instance)
    }

    /// Whether `instance` is valid, stopping at the first error.
    pub fn is_valid(&self, instance: &Value) -> bool {
        validate::is_valid(self, instance)
    }
}

/// JSON Pointers into schemas and instances. Public within the crate only, so that the
/// binary reaches these through `baremcp::__private` (they are no embedder's concern).
pub(crate) mod pointer {
    use std::borrow::Cow;

    /// The JSON Pointer `base` extended by the reference token `token`, escaped.
    pub fn pointer_to(base: &str, token: &str) -> String {
        let token = escape_token(token);
        let mut pointer = String::with_capacity(base.len() + 1 + token.len());
        pointer.push_str(base);
        pointer.push('/');
        pointer.push_str(&token);
        pointer
    }

    /// A JSON Pointer as error text shows it: each control character as a JSON string escape
    /// (`\n`, `\u001b`) and each backslash doubled, as inside a JSON string. So an error
    /// stays one line, an instance's keys write no terminal escapes, and each pointer shown
    /// stands for one pointer. Borrowed when there is nothing to escape.
    pub fn shown_pointer(pointer: &str) -> Cow<'_, str> {
        crate::util::shown::escaped(pointer, true)
    }

    /// Text shown in an error, with its control characters escaped as in a JSON string.
    pub fn shown_text(text: &str) -> Cow<'_, str> {
        crate::util::shown::escaped(text, false)
    }

    /// Escapes one JSON Pointer reference token; borrowed when there is nothing to escape, as
    /// in nearly every keyword and property name.
    pub fn escape_token(token: &str) -> Cow<'_, str> {
        if token.contains(['~', '/']) {
            Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
        } else {
            Cow::Borrowed(token)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, instance: Value) -> Vec<String> {
        let schema = Schema::compile(&schema).unwrap();
        match schema.validate(&instance) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.errors.iter().map(|e| e.to_string()).collect(),
        }
    }

    fn errors_of(schema: &Schema, instance: &Value) -> Vec<String> {
        schema
            .validate(instance)
            .err()
            .map(|e| e.errors.iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    /// An array nested `depth` deep, built without recursion.
    fn nested(depth: usize) -> Value {
        let mut value = json!(1);
        for _ in 0..depth {
            value = Value::Array(vec![value]);
        }
        value
    }

    /// Lengths are counted only when the byte length leaves them in doubt: every bound near
    /// strings of one- to four-byte characters must still be judged by the character count.
    #[test]
    fn string_lengths_count_characters_at_every_bound() {
        for text in ["", "a", "ab", "é", "aé", "€€", "😀", "😀a", "😀😀", "a€😀é", "abcdefgh"]
        {
            let chars = text.chars().count() as u64;
            for bound in 0..=9u64 {
                let short = !errors(json!({"minLength": bound}), json!(text)).is_empty();
                let long = !errors(json!({"maxLength": bound}), json!(text)).is_empty();
                assert_eq!(
                    (short, long),
                    (chars < bound, chars > bound),
                    "{text:?} against {bound}"
                );
            }
        }
    }

    #[test]
    fn ref_cycles_and_deep_instances_stop_with_an_error() {
        let cycle = errors(json!({"$ref": "#"}), json!(1));
        assert_eq!(
            cycle,
            ["/: validation stopped: schemas applied more than 256 levels deep (a $ref cycle?)"]
        );
        let mutual = errors(
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
            json!(1),
        );
        assert_eq!(mutual.len(), 1, "{mutual:?}");
        let deep = nested(5000);
        let schema = Schema::compile(&json!({"items": {"$ref": "#"}})).unwrap();
        assert!(!schema.is_valid(&deep));
        assert!(
            schema.validate(&deep).unwrap_err().errors[0].message.starts_with("validation stopped")
        );
        // Free the deep value without deep recursion in Drop.
        let mut deep = deep;
        while let Value::Array(mut inner) = deep {
            deep = inner.pop().unwrap_or(Value::Null);
        }
    }

    /// Each level of the walk keeps only its own type's locals on the stack: at the depth
    /// limit a debug build needs about 470 KiB (1.4 MiB when one function held every
    /// keyword), so a thread with a 1 MiB stack is enough even unoptimized.
    #[test]
    fn the_depth_limit_fits_in_a_small_stack() {
        let deep = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                let mut object = json!({});
                for level in 0..300 {
                    object =
                        if level % 2 == 0 { json!({"a": object}) } else { json!({"b": [object]}) };
                }
                let schema = json!({
                    "properties": {"a": {"$ref": "#"}},
                    "additionalProperties": {"items": {"$ref": "#"}},
                    "anyOf": [{"type": "object", "minLength": 1}, true]
                });
                let schema = Schema::compile(&schema).unwrap();
                let full = schema.validate(&object).unwrap_err();
                (full.errors[0].message.clone(), schema.is_valid(&object))
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(deep.0.starts_with("validation stopped"), "{deep:?}");
        assert!(!deep.1);
    }

    #[test]
    fn exponential_schemas_hit_the_step_budget() {
        // Each level doubles the work (two refs to the level below); the budget ends it.
        let mut defs = serde_json::Map::new();
        defs.insert("l0".into(), json!({"type": "string"}));
        for level in 1..=40 {
            let below = format!("#/$defs/l{}", level - 1);
            defs.insert(format!("l{level}"), json!({"anyOf": [{"$ref": below}, {"$ref": below}]}));
        }
        let schema = json!({"$defs": defs, "$ref": "#/$defs/l40"});
        let compiled = Schema::compile(&schema).unwrap();
        let result = compiled.validate(&json!(1)).unwrap_err();
        assert!(
            result.errors[0].message.starts_with("validation stopped"),
            "{:?}",
            result.errors[0]
        );
    }

    /// `n` arrays of `len` integers, alike but for their last one.
    fn rows(n: usize, len: usize) -> Value {
        let row = |k: usize| {
            Value::Array((0..len).map(|i| json!(if i + 1 == len { k } else { i })).collect())
        };
        Value::Array((0..n).map(row).collect())
    }

    /// `uniqueItems` hashes each item once: 2 100 arrays that differ only in their last
    /// integer (2.2 million pairs, each alike for 499 integers) get their answer in moments
    /// (a second or two in a debug build), where comparing pairs took minutes to run into
    /// the step budget.
    #[test]
    fn unique_items_work_is_linear_in_the_array() {
        let unique = Schema::compile(&json!({"uniqueItems": true})).unwrap();
        let mut big = rows(2100, 500);
        let started = std::time::Instant::now();
        assert_eq!(unique.validate(&big), Ok(()));
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
        let items = big.as_array_mut().unwrap();
        items[2099] = items[1000].clone();
        let errors = unique.validate(&big).unwrap_err();
        assert_eq!(
            errors.to_string(),
            "/: items must be unique, but items 1000 and 2099 are equal"
        );
        // Equal as JSON, not as text: numbers by value, members in any order.
        let alike =
            json!([{"a": 1, "b": [1.0, "x"]}, {"b": [1, "x"], "a": 1.0}, {"a": 1, "b": [1, "y"]}]);
        assert_eq!(
            errors_of(&unique, &alike),
            ["/: items must be unique, but items 0 and 1 are equal"]
        );
        assert!(!unique.is_valid(&json!([0, -0.0, 1])));
        assert!(
            unique
                .is_valid(&json!([[1, 2], [2, 1], {"a": [1]}, {"a": [2]}, "1", 1, null, false, 0]))
        );
    }

    /// The budget pays for the values `uniqueItems` hashes, not only for the pairs it
    /// compares: three huge items are a lot of work however few pairs they make.
    #[test]
    fn unique_items_work_counts_against_the_step_budget() {
        let schema =
            Schema::compile(&json!({"items": {"items": true}, "uniqueItems": true})).unwrap();
        let errors = schema.validate(&rows(3, 350_000)).unwrap_err();
        assert_eq!(errors.to_string(), "/: validation stopped: more than 2000000 steps");
    }

    /// Pattern matching draws on the validation's one step budget: strings that each match
    /// within any bound of their own cannot add up to unbounded work (200 strings of 70 000
    /// characters against `[a-z]{1,64}\.com` took 36 s when each match had a budget of its
    /// own). Running out is said as such, with no verdict on the string it cut short.
    #[test]
    fn pattern_matching_counts_against_the_step_budget() {
        let stopped = |len: usize| {
            format!(
                "/: validation stopped: more than 2000000 steps (the last matching a pattern \
                 against a {len}-character string)"
            )
        };
        let each_matches = format!("{}x.com", "ab".repeat(5000));
        let many = Value::Array(vec![json!(each_matches); 40]);
        let items = json!({"items": {"pattern": "[a-z]{1,64}\\.com"}});
        assert!(errors(items.clone(), Value::Array(vec![json!(each_matches); 2])).is_empty());
        assert_eq!(errors(items, many), [stopped(10_005)]);
        // One match that runs out: neither "does not match" nor "unknown property" follows.
        let long = format!("{}x", "a".repeat(20_000));
        assert_eq!(errors(json!({"pattern": ".{1000}.{1000}x"}), json!(long)), [stopped(20_001)]);
        let named =
            json!({"patternProperties": {".{1000}.{1000}x": true}, "additionalProperties": false});
        let mut object = serde_json::Map::new();
        object.insert(long, json!(1));
        assert_eq!(errors(named, Value::Object(object)), [stopped(20_001)]);
    }

    /// An error is one line whatever a key holds, and writes no control character: pointers
    /// and messages show them as JSON string escapes (a pointer doubles its backslashes too,
    /// so that no two keys look alike), in `baremcp validate` and in tool error texts alike.
    #[test]
    fn errors_show_control_characters_escaped() {
        let schema = Schema::compile(&json!({"additionalProperties": {"type": "string"}})).unwrap();
        let instance = json!({"x\r\u{1b}[1Ay\nz": 1, "a\\nb": 2, "del\u{7f}c1\u{9b}": 3});
        let shown = schema.validate(&instance).unwrap_err();
        assert_eq!(shown.errors[2].instance_path, "/x\r\u{1b}[1Ay\nz", "the field is the pointer");
        assert_eq!(
            shown.to_string(),
            "/a\\\\nb: expected string, got integer 2\n\
             /del\\u007fc1\\u009b: expected string, got integer 3\n\
             /x\\r\\u001b[1Ay\\nz: expected string, got integer 1"
        );
        // A message shows the schema's text and the instance's values with no control
        // character either (serde_json leaves DEL and C1 characters as they are).
        assert_eq!(
            errors(json!({"pattern": "^a\u{7}$"}), json!("\u{9b}\\")),
            ["/: \"\\u009b\\\\\" does not match the pattern ^a\\u0007$"]
        );
        let problems = Schema::compile(&json!({"properties": {"a\tb": {"type": "nope"}}}));
        assert_eq!(
            problems.unwrap_err()[0].to_string(),
            "/properties/a\\tb/type: unknown type \"nope\" (expected one of null, boolean, object, \
             array, number, string, integer)"
        );
    }

    #[test]
    fn schemas_nested_too_deep_are_refused() {
        let mut schema = json!({"type": "string"});
        for _ in 0..200 {
            schema = json!({"not": schema});
        }
        let problems = Schema::compile(&schema).unwrap_err();
        assert!(problems[0].message.contains("nested deeper than 128"), "{problems:?}");
    }

    #[test]
    fn dialects_and_warnings() {
        let unknown =
            Schema::compile(&json!({"$schema": "http://json-schema.org/draft-04/schema#"}))
                .unwrap_err();
        assert_eq!(
            unknown[0].to_string(),
            "/$schema: unsupported dialect \"http://json-schema.org/draft-04/schema#\": use JSON Schema 2020-12 or draft-07"
        );
        let draft7 = Schema::compile(
            &json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}),
        )
        .unwrap();
        assert_eq!(draft7.draft(), Draft::Draft7);
        assert!(!draft7.is_valid(&json!([1])));
        let array_items = Schema::compile(&json!({"items": [{"type": "string"}]})).unwrap_err();
        assert_eq!(array_items[0].pointer, "/items");
        let warned = Schema::compile(
            &json!({"properties": {"a": {"unevaluatedItems": false, "$dynamicRef": "#x"}}}),
        )
        .unwrap();
        let pointers: Vec<&str> = warned.warnings().iter().map(|w| w.pointer.as_str()).collect();
        assert_eq!(pointers, ["/properties/a/unevaluatedItems", "/properties/a/$dynamicRef"]);
    }

    #[test]
    fn refs_resolve_anchors_and_ids_within_the_document() {
        let schema = json!({
            "$id": "https://example.com/root.json",
            "properties": {
                "a": {"$ref": "#count"},
                "b": {"$ref": "item.json"},
                "c": {"$ref": "item.json#/$defs/label"},
                "d": {"$ref": "https://example.com/root.json#count"}
            },
            "$defs": {
                "count": {"$anchor": "count", "type": "integer"},
                "item": {"$id": "item.json", "type": "object", "$defs": {"label": {"type": "string"}}},
                "data": {"enum": [{"$id": "data.json", "$anchor": "count"}]}
            }
        });
        assert!(errors(schema.clone(), json!({"a": 1, "b": {}, "c": "x", "d": 2})).is_empty());
        assert_eq!(
            errors(schema, json!({"a": "1", "b": [], "c": 1, "d": 1.5})),
            [
                "/a: expected integer, got string \"1\"",
                "/b: expected object, got array",
                "/c: expected string, got integer 1",
                "/d: expected integer, got number 1.5"
            ]
        );
        // Draft-07 names anchors with `$id: "#name"`.
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "items": {"$ref": "#positive"},
            "definitions": {"p": {"$id": "#positive", "minimum": 1}}
        });
        assert_eq!(errors(draft7, json!([1, 0])), ["/1: must be >= 1, got 0"]);
        let dangling = Schema::compile(&json!({"$ref": "#nowhere"})).unwrap_err();
        assert_eq!(dangling[0].to_string(), "/$ref: $ref \"#nowhere\" does not resolve");
        let remote =
            Schema::compile(&json!({"$id": "https://example.com/a.json", "$ref": "b.json"}))
                .unwrap();
        assert_eq!(
            remote.warnings()[0].to_string(),
            "/$ref: remote $ref \"b.json\" is not followed: this reference is not enforced"
        );
    }

    #[test]
    fn refs_resolve_escaped_and_percent_encoded_pointers() {
        let schema = json!({
            "$defs": {"a/b": {"type": "integer"}, "c~d": {"type": "string"}, "e f": {"type": "boolean"}},
            "properties": {
                "x": {"$ref": "#/$defs/a~1b"},
                "y": {"$ref": "#/$defs/c~0d"},
                "z": {"$ref": "#/$defs/e%20f"},
                "w": {"$ref": "#/properties/x"}
            }
        });
        assert!(errors(schema.clone(), json!({"x": 1, "y": "s", "z": true, "w": 2})).is_empty());
        assert_eq!(errors(schema, json!({"x": "1", "w": 1.5})).len(), 2);
        let dangling = Schema::compile(&json!({"$ref": "#/$defs/none"})).unwrap_err();
        assert_eq!(dangling[0].to_string(), "/$ref: $ref \"#/$defs/none\" does not resolve");
    }
}
