//! Compiling a schema document into an arena of nodes: keyword checks at load time, `$ref`
//! resolution within the document, and warnings for keywords that are known but not enforced.

use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use super::draft::{Draft, MAX_DEPTH};
use super::ids::{Ids, Target};
use super::node::{Keywords, Node, types};
use super::regex::Regex;
use super::{Problem, Schema, escape_token, pointer_to};

/// Keywords in the vocabularies that the validator does not enforce. Using one is a warning.
const NOT_ENFORCED: [&str; 7] = [
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "contentSchema",
];

/// Draft-07 keywords that 2020-12 replaced, with what replaced them. Under 2020-12 they are
/// not keywords at all, so not enforced: using one is a warning, not a silent pass.
const REPLACED_IN_2020_12: [(&str, &str); 2] = [
    ("dependencies", "dependentRequired or dependentSchemas"),
    ("additionalItems", "items beside prefixItems"),
];

/// A keyword met in a schema object: its name and value, its JSON Pointer, and the depth of
/// the schema that holds it.
struct Keyword<'v> {
    name: &'v str,
    value: &'v Value,
    here: String,
    depth: usize,
}

struct Compiler<'d> {
    root: &'d Value,
    draft: Draft,
    nodes: Vec<Node>,
    at_pointer: BTreeMap<String, usize>,
    /// Indexed when the first `$ref` needs it: most schemas have none.
    ids: Option<Ids>,
    /// `(node, JSON Pointer of its target, the $ref, pointer of the $ref keyword)`, to
    /// compile and link once every node reached as a subschema exists.
    refs: Vec<(usize, String, String, String)>,
    errors: Vec<Problem>,
    warnings: Vec<Problem>,
}

pub(super) fn compile(root: &Value, default: Draft) -> Result<Schema, Vec<Problem>> {
    let draft = Draft::of(root, default).map_err(|problem| vec![problem])?;
    let mut c = Compiler {
        root,
        draft,
        nodes: Vec::new(),
        at_pointer: BTreeMap::new(),
        ids: None,
        refs: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    c.node(root, String::new(), 0);
    c.resolve_refs();
    if c.errors.is_empty() {
        Ok(Schema { nodes: c.nodes, warnings: c.warnings, draft })
    } else {
        Err(c.errors)
    }
}

impl Compiler<'_> {
    fn error(&mut self, pointer: &str, message: impl Into<String>) {
        self.errors.push(Problem::new(pointer, message));
    }

    /// Compiles the schema at `path` and returns its node index.
    fn node(&mut self, value: &Value, path: String, depth: usize) -> usize {
        if let Some(&index) = self.at_pointer.get(&path) {
            return index;
        }
        let index = self.nodes.len();
        self.nodes.push(Node::Bool(true));
        self.at_pointer.insert(path.clone(), index);
        if depth > MAX_DEPTH {
            self.error(&path, format!("schema nested deeper than {MAX_DEPTH} levels"));
            return index;
        }
        self.nodes[index] = match value {
            Value::Bool(b) => Node::Bool(*b),
            Value::Object(map) => Node::Keywords(Box::new(self.keywords(map, &path, index, depth))),
            _ => {
                self.error(&path, "a schema must be an object or a boolean");
                Node::Bool(true)
            }
        };
        index
    }

    /// One schema object's keywords. Each keyword is compiled in the order the document
    /// holds them (errors come out in that order) by the family that knows it.
    fn keywords(
        &mut self,
        map: &Map<String, Value>,
        path: &str,
        index: usize,
        depth: usize,
    ) -> Keywords {
        let mut k =
            Keywords { path: path.to_string(), items_keyword: "items", ..Keywords::default() };
        let at = |keyword: &str| pointer_to(path, keyword);
        // Draft-07 ignores every sibling of `$ref`.
        if let Some(reference) = map.get("$ref") {
            self.reference(reference, path, index);
            if self.draft == Draft::Draft7 {
                return k;
            }
        }
        for keyword in NOT_ENFORCED {
            if map.contains_key(keyword) {
                self.warnings.push(Problem::new(
                    &at(keyword),
                    format!("{keyword} is not supported and is not enforced"),
                ));
            }
        }
        for (keyword, instead) in REPLACED_IN_2020_12 {
            if self.draft != Draft::Draft7 && map.contains_key(keyword) {
                self.warnings.push(Problem::new(
                    &at(keyword),
                    format!(
                        "{keyword} is not a 2020-12 keyword and is not enforced: use {instead}"
                    ),
                ));
            }
        }
        for (name, value) in map {
            let keyword = Keyword { name, value, here: at(name), depth };
            // Unknown keywords are annotations: no family takes them.
            let _known = self.any_type_keyword(&mut k, &keyword)
                || self.object_keyword(&mut k, &keyword)
                || self.array_keyword(&mut k, &keyword)
                || self.string_or_number_keyword(&mut k, &keyword)
                || self.applicator_keyword(&mut k, &keyword);
        }
        self.conditional_and_additional_items(&mut k, map, path, depth);
        k.property_required =
            k.properties.iter().map(|(name, _)| k.required.contains(name)).collect();
        k.applicators = !(k.all_of.is_empty() && k.any_of.is_empty() && k.one_of.is_empty())
            || k.not.is_some()
            || k.if_then_else.is_some();
        k
    }

    /// `$ref`: a reference within the document is linked once every node exists; a remote
    /// one is a warning, since it is not followed.
    fn reference(&mut self, reference: &Value, path: &str, index: usize) {
        let at = pointer_to(path, "$ref");
        let ids = self.ids.get_or_insert_with(|| Ids::index(self.root, self.draft));
        match reference.as_str().map(|r| (r, ids.resolve(path, r))) {
            Some((r, Ok(Target::Here(target)))) => {
                self.refs.push((index, target, r.to_string(), at))
            }
            Some((r, Ok(Target::Remote))) => self.warnings.push(Problem::new(
                &at,
                format!("remote $ref {r:?} is not followed: this reference is not enforced"),
            )),
            Some((_, Err(why))) => self.error(&at, why),
            None => self.error(&at, "must be a string"),
        }
    }

    /// The subschema at `here`, one level deeper.
    fn sub(&mut self, value: &Value, here: &str, depth: usize) -> usize {
        self.node(value, here.to_string(), depth + 1)
    }

    /// `type`, `enum` and `const`, which apply to any value; false for another keyword.
    fn any_type_keyword(&mut self, k: &mut Keywords, keyword: &Keyword) -> bool {
        let &Keyword { name, value, ref here, .. } = keyword;
        match name {
            "type" => (k.types, k.type_names) = self.types(value, here),
            "enum" => match value {
                Value::Array(values) => k.enumeration = Some(values.clone()),
                _ => self.error(here, "must be an array"),
            },
            "const" => k.constant = Some(value.clone()),
            _ => return false,
        }
        true
    }

    /// The keywords of objects; false for another keyword.
    fn object_keyword(&mut self, k: &mut Keywords, keyword: &Keyword) -> bool {
        let &Keyword { name, value, ref here, depth } = keyword;
        let draft7 = self.draft == Draft::Draft7;
        match name {
            "properties" => k.properties = self.schema_map(value, here, depth),
            "patternProperties" => {
                for (pattern, node) in self.schema_map(value, here, depth) {
                    match Regex::new(&pattern) {
                        Ok(regex) => k.pattern_properties.push((pattern, regex, node)),
                        Err(e) => self.error(&pointer_to(here, &pattern), e.to_string()),
                    }
                }
            }
            "additionalProperties" => k.additional_properties = Some(self.sub(value, here, depth)),
            "propertyNames" => k.property_names = Some(self.sub(value, here, depth)),
            "required" => k.required = self.strings(value, here),
            "minProperties" => k.min_properties = self.count(value, here),
            "maxProperties" => k.max_properties = self.count(value, here),
            "dependentRequired" if !draft7 => {
                k.dependent_required = self.dependent_required(value, here)
            }
            "dependentSchemas" if !draft7 => {
                k.dependent_schemas = self.schema_map(value, here, depth)
            }
            "dependencies" if draft7 => self.dependencies(k, value, here, depth),
            _ => return false,
        }
        true
    }

    /// Draft-07 `dependencies`: each member names required properties (an array) or a schema.
    fn dependencies(&mut self, k: &mut Keywords, value: &Value, here: &str, depth: usize) {
        let Value::Object(deps) = value else {
            return self.error(here, "must be an object");
        };
        for (name, dep) in deps {
            let dep_path = pointer_to(here, name);
            if dep.is_array() {
                let names = self.strings(dep, &dep_path);
                k.dependent_required.push((name.clone(), names));
            } else {
                let node = self.node(dep, dep_path, depth + 1);
                k.dependent_schemas.push((name.clone(), node));
            }
        }
    }

    /// The keywords of arrays (draft-07 `additionalItems` aside, which depends on `items`);
    /// false for another keyword.
    fn array_keyword(&mut self, k: &mut Keywords, keyword: &Keyword) -> bool {
        let &Keyword { name, value, ref here, depth } = keyword;
        let draft7 = self.draft == Draft::Draft7;
        match name {
            "prefixItems" if !draft7 => k.prefix_items = self.schema_list(value, here, depth, true),
            "items" => match value {
                Value::Array(_) if draft7 => {
                    k.prefix_items = self.schema_list(value, here, depth, false)
                }
                Value::Array(_) => self.error(
                    here,
                    "must be a schema in 2020-12 (an array of schemas is prefixItems)",
                ),
                _ => k.items = Some(self.sub(value, here, depth)),
            },
            "minItems" => k.min_items = self.count(value, here),
            "maxItems" => k.max_items = self.count(value, here),
            "uniqueItems" => match value {
                Value::Bool(b) => k.unique_items = *b,
                _ => self.error(here, "must be a boolean"),
            },
            "contains" => k.contains = Some(self.sub(value, here, depth)),
            "minContains" if !draft7 => k.min_contains = self.count(value, here),
            "maxContains" if !draft7 => k.max_contains = self.count(value, here),
            _ => return false,
        }
        true
    }

    /// The keywords of strings and numbers; false for another keyword.
    fn string_or_number_keyword(&mut self, k: &mut Keywords, keyword: &Keyword) -> bool {
        let &Keyword { name, value, ref here, .. } = keyword;
        match name {
            "minLength" => k.min_length = self.count(value, here),
            "maxLength" => k.max_length = self.count(value, here),
            "pattern" => match value {
                Value::String(pattern) => match Regex::new(pattern) {
                    Ok(regex) => k.pattern = Some((pattern.clone(), regex)),
                    Err(e) => self.error(here, e.to_string()),
                },
                _ => self.error(here, "must be a string"),
            },
            "minimum" => k.minimum = self.number(value, here),
            "maximum" => k.maximum = self.number(value, here),
            "exclusiveMinimum" => k.exclusive_minimum = self.number(value, here),
            "exclusiveMaximum" => k.exclusive_maximum = self.number(value, here),
            "multipleOf" => {
                k.multiple_of = self.number(value, here);
                if k.multiple_of.as_ref().and_then(Number::as_f64).is_some_and(|m| m <= 0.0) {
                    self.error(here, "must be greater than 0");
                }
            }
            _ => return false,
        }
        true
    }

    /// `allOf`, `anyOf`, `oneOf`, `not`, and the definitions they may point into (`if` aside,
    /// which goes with `then` and `else`); false for another keyword.
    fn applicator_keyword(&mut self, k: &mut Keywords, keyword: &Keyword) -> bool {
        let &Keyword { name, value, ref here, depth } = keyword;
        match name {
            "allOf" => k.all_of = self.schema_list(value, here, depth, true),
            "anyOf" => k.any_of = self.schema_list(value, here, depth, true),
            "oneOf" => k.one_of = self.schema_list(value, here, depth, true),
            "not" => k.not = Some(self.sub(value, here, depth)),
            "$defs" | "definitions" => {
                self.schema_map(value, here, depth);
            }
            _ => return false,
        }
        true
    }

    /// The keywords read together, after the others: draft-07 `additionalItems` (with
    /// array-form `items`), and `if` with its `then` and `else`.
    fn conditional_and_additional_items(
        &mut self,
        k: &mut Keywords,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let at = |keyword: &str| pointer_to(path, keyword);
        if self.draft == Draft::Draft7
            && let Some(additional) = map.get("additionalItems")
        {
            let node = self.sub(additional, &at("additionalItems"), depth);
            // Only meaningful after array-form `items`; with object-form `items` every item
            // is already covered (the subschema is still checked).
            if map.get("items").is_some_and(Value::is_array) {
                k.items = Some(node);
                k.items_keyword = "additionalItems";
            }
        }
        if let Some(condition) = map.get("if") {
            let condition = self.sub(condition, &at("if"), depth);
            let then = map.get("then").map(|s| self.sub(s, &at("then"), depth));
            let otherwise = map.get("else").map(|s| self.sub(s, &at("else"), depth));
            k.if_then_else = Some((condition, then, otherwise));
        }
    }

    fn types(&mut self, value: &Value, here: &str) -> (u8, Vec<&'static str>) {
        let names = match value {
            Value::Array(names) if !names.is_empty() => names.as_slice(),
            Value::Array(_) => {
                self.error(here, "must not be an empty array");
                return (0, Vec::new());
            }
            name => std::slice::from_ref(name),
        };
        let (mut bits, mut listed) = (0, Vec::new());
        for name in names {
            match name.as_str().and_then(|n| types::NAMES.iter().find(|(known, _)| *known == n)) {
                Some((known, bit)) => {
                    bits |= bit;
                    listed.push(*known);
                }
                None => self.error(
                    here,
                    format!(
                        "unknown type {name} (expected one of null, boolean, object, array, number, string, integer)"
                    ),
                ),
            }
        }
        (bits, listed)
    }

    fn schema_map(&mut self, value: &Value, here: &str, depth: usize) -> Vec<(String, usize)> {
        match value {
            Value::Object(map) => map
                .iter()
                .map(|(name, schema)| {
                    (name.clone(), self.node(schema, pointer_to(here, name), depth + 1))
                })
                .collect(),
            _ => {
                self.error(here, "must be an object whose values are schemas");
                Vec::new()
            }
        }
    }

    fn schema_list(
        &mut self,
        value: &Value,
        here: &str,
        depth: usize,
        non_empty: bool,
    ) -> Vec<usize> {
        match value {
            Value::Array(list) if !(non_empty && list.is_empty()) => list
                .iter()
                .enumerate()
                .map(|(i, schema)| self.node(schema, format!("{here}/{i}"), depth + 1))
                .collect(),
            _ => {
                self.error(here, "must be a non-empty array of schemas");
                Vec::new()
            }
        }
    }

    fn strings(&mut self, value: &Value, here: &str) -> Vec<String> {
        let names: Option<Vec<String>> =
            value.as_array().and_then(|a| a.iter().map(|s| s.as_str().map(String::from)).collect());
        match names {
            Some(names) if names.iter().enumerate().all(|(i, n)| !names[..i].contains(n)) => names,
            _ => {
                self.error(here, "must be an array of unique strings");
                Vec::new()
            }
        }
    }

    fn dependent_required(&mut self, value: &Value, here: &str) -> Vec<(String, Vec<String>)> {
        match value {
            Value::Object(map) => map
                .iter()
                .map(|(name, deps)| (name.clone(), self.strings(deps, &pointer_to(here, name))))
                .collect(),
            _ => {
                self.error(here, "must be an object of string arrays");
                Vec::new()
            }
        }
    }

    /// A non-negative integer (`1.0` counts as an integer).
    fn count(&mut self, value: &Value, here: &str) -> Option<u64> {
        let n = value
            .as_u64()
            .or_else(|| value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64));
        if n.is_none() {
            self.error(here, format!("must be a non-negative integer, got {value}"));
        }
        n
    }

    fn number(&mut self, value: &Value, here: &str) -> Option<Number> {
        match value {
            Value::Number(n) => Some(n.clone()),
            _ => {
                self.error(here, format!("must be a number, got {value}"));
                None
            }
        }
    }

    /// Links every reference to its target's node, compiling targets that are not themselves
    /// reached as subschemas (a `$ref` may point anywhere in the document).
    fn resolve_refs(&mut self) {
        while let Some((node, pointer, reference, at)) = self.refs.pop() {
            let Some(target) = self.root.pointer(&pointer) else {
                self.error(&at, format!("$ref {reference:?} does not resolve"));
                continue;
            };
            let canonical: String = pointer
                .split('/')
                .skip(1)
                .map(|t| format!("/{}", escape_token(&unescape_token(t))))
                .collect();
            let index = self.node(target, canonical, 0);
            if let Node::Keywords(k) = &mut self.nodes[node] {
                k.reference = Some(index);
            }
        }
    }
}

fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::schema::Schema;

    fn read(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn numbers_are_read_as_the_decimals_written() {
        // Without serde_json's `float_roundtrip`, `1.0e-38` read as 1.0000000000000001e-38.
        let constant = Schema::compile(&read(r#"{"const": 1.0e-38}"#)).unwrap();
        assert!(constant.is_valid(&read("1e-38")));
        let unique = Schema::compile(&json!({"uniqueItems": true})).unwrap();
        assert!(!unique.is_valid(&read("[1e-38, 1.0e-38]")));
        // What a tool's arguments are written back as, for a command to read.
        assert_eq!(
            read(r#"{"x": 1.0e-38, "y": 250.0e-9}"#).to_string(),
            r#"{"x":1e-38,"y":2.5e-7}"#
        );
        for digits in ["1", "7", "123", "98765432", "123456789012345"] {
            for exponent in (-320..=290).step_by(7) {
                let text = format!("{digits}.0e{exponent}");
                let nearest: f64 = text.parse().unwrap();
                assert_eq!(read(&text).as_f64(), Some(nearest), "{text}");
            }
        }
    }

    #[test]
    fn draft7_keywords_are_warned_of_under_2020_12() {
        let schema = json!({
            "type": "object",
            "dependencies": {"a": ["b"]},
            "properties": {"list": {"prefixItems": [{"type": "string"}], "additionalItems": false}}
        });
        let warned = Schema::compile(&schema).unwrap();
        let warnings: Vec<String> = warned.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "/dependencies: dependencies is not a 2020-12 keyword and is not enforced: use \
                 dependentRequired or dependentSchemas",
                "/properties/list/additionalItems: additionalItems is not a 2020-12 keyword and \
                 is not enforced: use items beside prefixItems",
            ]
        );
        // Draft-07 enforces both, with nothing to warn of.
        let mut draft7 = schema;
        draft7["$schema"] = json!("http://json-schema.org/draft-07/schema#");
        draft7["properties"]["list"] =
            json!({"items": [{"type": "string"}], "additionalItems": false});
        let enforced = Schema::compile(&draft7).unwrap();
        assert!(enforced.warnings().is_empty(), "{:?}", enforced.warnings());
        assert!(!enforced.is_valid(&json!({"a": 1})));
        assert!(!enforced.is_valid(&json!({"list": ["x", 1]})));
    }
}
