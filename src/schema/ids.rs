//! Where the identifiers of one schema document point: the base URI of each subschema (as
//! `$id` changes it), the embedded resources `$id` names, and the anchors (`$anchor`, or
//! draft-07's `$id: "#name"`), so that every `$ref` resolves to a JSON Pointer in the
//! document. Only schema positions are read: an `$id` inside `enum` or `const` is data.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::draft::{Draft, MAX_DEPTH};
use super::{pointer_to, uri};

/// The base URI of a document without a root `$id`: it only has to let fragments and
/// relative references resolve, and names nothing real (`.invalid` is reserved).
const DEFAULT_BASE: &str = "https://baremcp.invalid/schema.json";

pub(super) struct Ids {
    draft: Draft,
    /// The base URI of each subschema whose `$id` changed it, by JSON Pointer; every other
    /// subschema has its nearest such ancestor's.
    bases: BTreeMap<String, String>,
    /// Absolute URI (no fragment) → JSON Pointer of the resource it names.
    resources: BTreeMap<String, String>,
    /// `uri#name` → JSON Pointer of the subschema the anchor names.
    anchors: BTreeMap<String, String>,
}

/// Where a `$ref` leads.
pub(super) enum Target {
    /// A JSON Pointer in this document (which may not exist).
    Here(String),
    /// A resource outside this document: not fetched.
    Remote,
}

impl Ids {
    pub(super) fn index(root: &Value, draft: Draft) -> Ids {
        let mut ids = Ids {
            draft,
            bases: BTreeMap::new(),
            resources: BTreeMap::new(),
            anchors: BTreeMap::new(),
        };
        ids.bases.insert(String::new(), DEFAULT_BASE.to_string());
        ids.resources.insert(DEFAULT_BASE.to_string(), String::new());
        ids.walk(root, String::new(), DEFAULT_BASE, 0);
        ids
    }

    fn walk(&mut self, value: &Value, path: String, base: &str, depth: usize) {
        let Value::Object(map) = value else { return };
        // Deeper than this, compiling refuses the schema anyway.
        if depth > MAX_DEPTH {
            return;
        }
        let draft7 = self.draft == Draft::Draft7;
        let mut base = base.to_string();
        // Draft-07 ignores every sibling of `$ref`, `$id` included.
        let id = map
            .get("$id")
            .and_then(Value::as_str)
            .filter(|_| !(draft7 && map.contains_key("$ref")));
        if let Some(id) = id {
            let resolved = uri::resolve(&base, id);
            let (resource, fragment) = resolved.split_once('#').unwrap_or((&resolved, ""));
            if !resource.is_empty() && resource != base {
                base = resource.to_string();
                self.resources.entry(base.clone()).or_insert_with(|| path.clone());
                self.bases.insert(path.clone(), base.clone());
            }
            if draft7 && !fragment.is_empty() {
                self.anchors.entry(format!("{base}#{fragment}")).or_insert_with(|| path.clone());
            }
        }
        if !draft7 && let Some(anchor) = map.get("$anchor").and_then(Value::as_str) {
            self.anchors.entry(format!("{base}#{anchor}")).or_insert_with(|| path.clone());
        }
        for (keyword, step, schema) in subschemas(map) {
            let here = pointer_to(&path, keyword);
            let at = step.map_or_else(|| here.clone(), |step| pointer_to(&here, &step));
            self.walk(schema, at, &base, depth + 1);
        }
    }

    /// Where `reference`, written in the subschema at `path`, leads; `Err` says why it leads
    /// nowhere.
    pub(super) fn resolve(&self, path: &str, reference: &str) -> Result<Target, String> {
        let absolute = uri::resolve(self.base_at(path), reference);
        let (resource, fragment) = absolute.split_once('#').unwrap_or((&absolute, ""));
        let Some(root) = self.resources.get(resource) else {
            return Ok(Target::Remote);
        };
        let unresolved = || format!("$ref {reference:?} does not resolve");
        let fragment = crate::util::encoding::percent_decode(fragment)
            .and_then(|bytes| String::from_utf8(bytes).ok());
        let fragment = fragment.ok_or_else(unresolved)?;
        if fragment.is_empty() || fragment.starts_with('/') {
            return Ok(Target::Here(format!("{root}{fragment}")));
        }
        match self.anchors.get(&format!("{resource}#{fragment}")) {
            Some(pointer) => Ok(Target::Here(pointer.clone())),
            None => Err(unresolved()),
        }
    }

    /// The base URI in force at `path`: its own `$id`'s, or its nearest ancestor's.
    fn base_at(&self, path: &str) -> &str {
        let mut at = path;
        loop {
            if let Some(base) = self.bases.get(at) {
                return base;
            }
            at = &at[..at.rfind('/').unwrap_or(0)];
        }
    }
}

/// Each subschema `map` holds where a schema (2020-12 or draft-07) can hold one: its keyword,
/// the name or index under it (`None` where the keyword holds one schema), and the schema.
pub(crate) fn subschemas(map: &Map<String, Value>) -> Vec<(&str, Option<String>, &Value)> {
    let mut found = Vec::new();
    for (keyword, sub) in map {
        let keyword = keyword.as_str();
        match (keyword, sub) {
            ("items" | "prefixItems" | "allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                let each = list.iter().enumerate();
                found.extend(each.map(|(i, schema)| (keyword, Some(i.to_string()), schema)));
            }
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
                | "dependencies",
                Value::Object(schemas),
            ) => {
                let each = schemas.iter();
                found.extend(each.map(|(name, schema)| (keyword, Some(name.clone()), schema)));
            }
            (
                "items"
                | "additionalItems"
                | "additionalProperties"
                | "propertyNames"
                | "contains"
                | "not"
                | "if"
                | "then"
                | "else"
                | "unevaluatedProperties"
                | "unevaluatedItems"
                | "contentSchema",
                _,
            ) => found.push((keyword, None, sub)),
            _ => {}
        }
    }
    found
}
