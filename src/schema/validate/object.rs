//! The keywords of objects: `properties`, `patternProperties`, `additionalProperties`,
//! `required`, `propertyNames`, `minProperties`, `maxProperties` and the dependent ones.

use serde_json::{Map, Value};

use super::messages::{PROPERTIES, count_bounds, quote, some};
use super::{Cx, Flow, Frame, Path, Seg, Walk};
use crate::schema::node::{Keywords, Node};
use crate::util::sort::sort;

impl Walk<'_> {
    pub(super) fn object<'v>(
        &self,
        frame: &mut Frame<'_, '_, 'v>,
        object: &'v Map<String, Value>,
        inst: &'v Value,
        cx: &mut Cx,
    ) -> Flow {
        let (k, path) = (frame.k, frame.path);
        // One pass over the members applies each property's schema and counts the required
        // properties met (members and properties are both in key order, so errors come in
        // the same order as walking the properties would give).
        let (mut required_met, mut unmatched) = (0, false);
        // A few properties are looked at in turn, which costs less than making sure of the order.
        let sorted = k.properties.len() > 16
            && !object.is_empty()
            && k.properties.is_sorted_by(|a, b| a.0 < b.0);
        for (key, value) in object {
            match property(k, sorted, key) {
                Some(i) => {
                    required_met += usize::from(k.property_required[i]);
                    self.apply(frame, k.properties[i].1, value, &path.child(Seg::Key(key)), cx)?;
                }
                None => unmatched = true,
            }
        }
        // Patterns and `additionalProperties` come after, and only when they can apply.
        if unmatched || !k.pattern_properties.is_empty() {
            for (key, value) in object {
                let mut covered = property(k, sorted, key).is_some();
                for (_, regex, node) in &k.pattern_properties {
                    if self.regex(regex, key, cx)? {
                        covered = true;
                        self.apply(frame, *node, value, &path.child(Seg::Key(key)), cx)?;
                    }
                }
                if let (false, Some(additional)) = (covered, k.additional_properties) {
                    if matches!(self.schema.nodes[additional], Node::Bool(false)) {
                        self.fail(frame, cx, "additionalProperties", || {
                            format!("unknown property {} ({})", quote(key), allowed_names(k))
                        })?;
                    } else {
                        self.apply(frame, additional, value, &path.child(Seg::Key(key)), cx)?;
                    }
                }
            }
        }
        // Every required name met as a property: nothing is missing. Otherwise (a name
        // required but not a property, or listed twice) each one is looked up.
        if required_met < k.required.len() {
            for name in &k.required {
                if !object.contains_key(name) {
                    self.fail(frame, cx, "required", || {
                        format!("missing required property {}", quote(name))
                    })?;
                }
            }
        }
        if let Some(node) = k.property_names {
            for key in object.keys() {
                let name = Value::String(key.clone());
                // The name's own errors are collected only for a message that is kept.
                if cx.collect && cx.keeps() {
                    let errors =
                        self.collect_apart(cx, |cx| self.eval(node, &name, &Path::ROOT, cx));
                    if let Some(first) = errors.first() {
                        self.fail(frame, cx, "propertyNames", || {
                            format!("property name {} is invalid: {}", quote(key), first.message)
                        })?;
                    }
                } else if !self.probe(cx, |cx| self.eval(node, &name, &Path::ROOT, cx)) {
                    self.fail(frame, cx, "propertyNames", String::new)?;
                }
            }
        }
        if let Some((keyword, message)) =
            count_bounds(object.len(), (k.min_properties, k.max_properties), PROPERTIES)
        {
            self.fail(frame, cx, keyword, || message)?;
        }
        for (name, needed) in &k.dependent_required {
            if object.contains_key(name) {
                for other in needed {
                    if !object.contains_key(other) {
                        self.fail(frame, cx, "dependentRequired", || {
                            format!("property {} requires property {}", quote(name), quote(other))
                        })?;
                    }
                }
            }
        }
        for (name, node) in &k.dependent_schemas {
            if object.contains_key(name) {
                self.apply(frame, *node, inst, path, cx)?;
            }
        }
        Ok(())
    }
}

/// Where `key` is among `k`'s properties. serde_json's map gives them in key order, so a
/// binary search finds it: a member costs no look at each of thousands of properties. A
/// build that keeps maps in the order written (serde_json's `preserve_order`) leaves them
/// unsorted, which `sorted` says: then each property is looked at.
#[inline]
fn property(k: &Keywords, sorted: bool, key: &str) -> Option<usize> {
    if sorted {
        k.properties.binary_search_by(|(name, _)| name.as_str().cmp(key)).ok()
    } else {
        k.properties.iter().position(|(name, _)| name == key)
    }
}

/// What an object may hold, for the message about a property it may not: the first names
/// in order and the first patterns, each list cut short (a schema may have thousands).
fn allowed_names(k: &Keywords) -> String {
    let mut names: Vec<&str> = k.properties.iter().map(|(name, _)| name.as_str()).collect();
    sort(&mut names);
    let names = some(names.iter().map(|name| name.to_string()));
    let patterns = some(k.pattern_properties.iter().map(|(source, _, _)| format!("/{source}/")));
    match (names.is_empty(), patterns.is_empty()) {
        (true, true) => "no properties are allowed".into(),
        (false, true) => format!("allowed: {names}"),
        (true, false) => format!("allowed: names matching {patterns}"),
        (false, false) => format!("allowed: {names}, or names matching {patterns}"),
    }
}
