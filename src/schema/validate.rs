//! Checking an instance against a compiled schema: every keyword, errors with the instance's
//! JSON Pointer and a message saying what was allowed, inside a depth and step budget.

use std::cmp::Ordering;

use serde_json::{Number, Value};

use super::compile::{Keywords, Node, types};
use super::regex::{BudgetExhausted, DEFAULT_BUDGET, Regex};
use super::{Errors, Schema, ValidationError, escape_token};

#[inline(never)]
#[cold]
fn record(cx: &mut Cx, path: &Path, base: &str, keyword: &str, message: impl FnOnce() -> String) {
    cx.error(path, format!("{base}/{keyword}"), message());
}

/// A numeric bound: its value, keyword, operator as written in messages, and the test.
type Bound<'k> = (&'k Option<Number>, &'static str, &'static str, fn(Ordering) -> bool);

/// Subschema applications deeper than this end validation (a `$ref` cycle, or a hostile
/// instance nested as deep as the parser allows).
const MAX_DEPTH: usize = 256;
/// Keyword evaluations one validation may make.
const MAX_STEPS: u64 = 2_000_000;

pub(super) fn validate(schema: &Schema, instance: &Value) -> Result<(), Errors> {
    let mut cx = Cx::new(true);
    let ok = Walk { schema }.eval(0, instance, &Path::ROOT, &mut cx);
    if let Some(stopped) = cx.stopped.take() {
        cx.errors
            .insert(0, ValidationError { instance_path: "/".into(), keyword_path: String::new(), message: stopped });
        cx.total += 1;
    }
    if ok && cx.total == 0 {
        return Ok(());
    }
    cx.errors.truncate(Errors::CAP);
    Err(Errors { errors: cx.errors, total: cx.total.max(1) })
}

pub(super) fn is_valid(schema: &Schema, instance: &Value) -> bool {
    let mut cx = Cx::new(false);
    Walk { schema }.eval(0, instance, &Path::ROOT, &mut cx) && cx.stopped.is_none()
}

#[derive(Clone, Copy)]
enum Seg<'v> {
    Key(&'v str),
    Index(usize),
}

/// Where the walk is in the instance: a list linked through the stack, so descending into a
/// member costs nothing until an error needs the pointer.
#[derive(Clone, Copy)]
struct Path<'p, 'v> {
    parent: Option<&'p Path<'p, 'v>>,
    seg: Option<Seg<'v>>,
}

impl<'p, 'v> Path<'p, 'v> {
    const ROOT: Path<'static, 'static> = Path { parent: None, seg: None };

    fn child(&'p self, seg: Seg<'v>) -> Path<'p, 'v> {
        Path { parent: Some(self), seg: Some(seg) }
    }
}

/// The JSON Pointer of `path` (`/` for the root).
fn pointer(path: &Path) -> String {
    let mut segs = Vec::new();
    let mut at = Some(path);
    while let Some(p) = at {
        segs.extend(p.seg);
        at = p.parent;
    }
    if segs.is_empty() {
        return "/".into();
    }
    let mut out = String::new();
    for seg in segs.iter().rev() {
        out.push('/');
        match seg {
            Seg::Key(key) => out.push_str(&escape_token(key)),
            Seg::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

struct Cx {
    /// Collecting every error, or only asking "valid?" and stopping at the first failure.
    collect: bool,
    errors: Vec<ValidationError>,
    total: usize,
    steps: u64,
    depth: usize,
    stopped: Option<String>,
}

impl Cx {
    fn new(collect: bool) -> Cx {
        Cx { collect, errors: Vec::new(), total: 0, steps: 0, depth: 0, stopped: None }
    }

    fn error(&mut self, path: &Path, keyword_path: String, message: String) {
        self.total += 1;
        if self.errors.len() < Errors::CAP {
            self.errors.push(ValidationError { instance_path: pointer(path), keyword_path, message });
        }
    }

    fn stop(&mut self, why: String) {
        self.stopped.get_or_insert(why);
    }
}

struct Walk<'s> {
    schema: &'s Schema,
}

impl Walk<'_> {
    /// Whether `inst` satisfies node `node`; in collect mode, records why not.
    fn eval<'v>(&self, node: usize, inst: &'v Value, path: &Path<'_, 'v>, cx: &mut Cx) -> bool {
        if cx.stopped.is_some() {
            return false;
        }
        cx.steps += 1;
        if cx.steps > MAX_STEPS {
            cx.stop(format!("validation stopped: more than {MAX_STEPS} steps"));
            return false;
        }
        if cx.depth >= MAX_DEPTH {
            cx.stop(format!("validation stopped: schemas applied more than {MAX_DEPTH} levels deep (a $ref cycle?)"));
            return false;
        }
        cx.depth += 1;
        let ok = match &self.schema.nodes[node] {
            Node::Bool(true) => true,
            Node::Bool(false) => {
                if cx.collect {
                    let path_text = self.node_path(node);
                    cx.error(path, path_text, "no value is allowed here".into());
                }
                false
            }
            Node::Keywords(k) => self.keywords(k, inst, path, cx),
        };
        cx.depth -= 1;
        ok
    }

    fn node_path(&self, node: usize) -> String {
        match &self.schema.nodes[node] {
            Node::Keywords(k) => k.path.clone(),
            Node::Bool(_) => String::new(),
        }
    }

    /// Runs `f` without recording errors, for keywords that only need a yes or no.
    fn probe(&self, cx: &mut Cx, f: impl FnOnce(&mut Cx) -> bool) -> bool {
        let collect = std::mem::replace(&mut cx.collect, false);
        let ok = f(cx);
        cx.collect = collect;
        ok
    }

    /// Runs `f` collecting its errors apart from the main list.
    fn collect_apart(&self, cx: &mut Cx, f: impl FnOnce(&mut Cx) -> bool) -> Vec<ValidationError> {
        let saved_errors = std::mem::take(&mut cx.errors);
        let (saved_total, collect) = (cx.total, std::mem::replace(&mut cx.collect, true));
        f(cx);
        cx.collect = collect;
        cx.total = saved_total;
        std::mem::replace(&mut cx.errors, saved_errors)
    }

    fn keywords<'v>(&self, k: &Keywords, inst: &'v Value, path: &Path<'_, 'v>, cx: &mut Cx) -> bool {
        let mut ok = true;
        // Records a failure: stop at once when only validity is asked, else note and go on.
        macro_rules! fail {
            ($keyword:expr, $message:expr) => {{
                ok = false;
                if !cx.collect {
                    return false;
                }
                // The message is built in a closure: its temporaries then live in the closure's
                // frame, not in this recursive one, which keeps deep schemas off the stack.
                record(cx, path, &k.path, $keyword, || $message);
            }};
        }
        macro_rules! apply {
            ($node:expr, $value:expr) => {{
                if !self.eval($node, $value, path, cx) {
                    ok = false;
                    if !cx.collect {
                        return false;
                    }
                }
            }};
            ($node:expr, $value:expr, $seg:expr) => {{
                let child = path.child($seg);
                if !self.eval($node, $value, &child, cx) {
                    ok = false;
                    if !cx.collect {
                        return false;
                    }
                }
            }};
        }

        if let Some(target) = k.reference {
            apply!(target, inst);
        }
        if k.types != 0 && !type_matches(k.types, inst) {
            fail!("type", format!("expected {}, got {}", either(&k.type_names), describe(inst)));
        }
        if let Some(allowed) = &k.enumeration
            && !allowed.iter().any(|v| json_eq(v, inst))
        {
            fail!("enum", format!("{} is not one of {}", short(inst), list(allowed)));
        }
        if let Some(constant) = &k.constant
            && !json_eq(constant, inst)
        {
            fail!("const", format!("must be {}, got {}", short(constant), short(inst)));
        }

        match inst {
            Value::Object(object) => {
                // One pass over the members applies each property's schema and counts the
                // required properties met (members and properties are both in key order, so
                // errors come in the same order as walking the properties would give).
                let (mut required_met, mut unmatched) = (0, false);
                for (key, value) in object {
                    match k.properties.iter().position(|(name, _)| name == key) {
                        Some(i) => {
                            required_met += usize::from(k.property_required[i]);
                            apply!(k.properties[i].1, value, Seg::Key(key));
                        }
                        None => unmatched = true,
                    }
                }
                // Patterns and `additionalProperties` come after, and only when they can apply.
                if unmatched || !k.pattern_properties.is_empty() {
                    for (key, value) in object {
                        let mut covered = k.properties.iter().any(|(name, _)| name == key);
                        for (_, regex, node) in &k.pattern_properties {
                            if self.regex(regex, key, cx) {
                                covered = true;
                                apply!(*node, value, Seg::Key(key));
                            }
                        }
                        if let (false, Some(additional)) = (covered, k.additional_properties) {
                            if matches!(self.schema.nodes[additional], Node::Bool(false)) {
                                fail!(
                                    "additionalProperties",
                                    format!("unknown property {} ({})", quote(key), allowed_names(k))
                                );
                            } else {
                                apply!(additional, value, Seg::Key(key));
                            }
                        }
                    }
                }
                // Every required name met as a property: nothing is missing. Otherwise (a name
                // required but not a property, or listed twice) each one is looked up.
                if required_met < k.required.len() {
                    for name in &k.required {
                        if !object.contains_key(name) {
                            fail!("required", format!("missing required property {}", quote(name)));
                        }
                    }
                }
                if let Some(node) = k.property_names {
                    for key in object.keys() {
                        let name = Value::String(key.clone());
                        if cx.collect {
                            let errors = self.collect_apart(cx, |cx| self.eval(node, &name, &Path::ROOT, cx));
                            if let Some(first) = errors.first() {
                                fail!(
                                    "propertyNames",
                                    format!("property name {} is invalid: {}", quote(key), first.message)
                                );
                            }
                        } else if !self.eval(node, &name, &Path::ROOT, cx) {
                            return false;
                        }
                    }
                }
                let bounds = (k.min_properties, k.max_properties);
                if let Some((keyword, message)) = count_bounds(object.len(), bounds, PROPERTIES) {
                    fail!(keyword, message);
                }
                for (name, needed) in &k.dependent_required {
                    if object.contains_key(name) {
                        for other in needed {
                            if !object.contains_key(other) {
                                fail!(
                                    "dependentRequired",
                                    format!("property {} requires property {}", quote(name), quote(other))
                                );
                            }
                        }
                    }
                }
                for (name, node) in &k.dependent_schemas {
                    if object.contains_key(name) {
                        apply!(*node, inst);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let node =
                        k.prefix_items.get(i).copied().or(if i >= k.prefix_items.len() { k.items } else { None });
                    if let Some(node) = node {
                        if i >= k.prefix_items.len() && matches!(self.schema.nodes[node], Node::Bool(false)) {
                            let allowed = k.prefix_items.len();
                            fail!(
                                k.items_keyword,
                                format!(
                                    "must have at most {allowed} {}, got {}",
                                    plural(allowed as u64, "item", "items"),
                                    items.len()
                                )
                            );
                            break;
                        }
                        apply!(node, item, Seg::Index(i));
                    }
                }
                if let Some((keyword, message)) = count_bounds(items.len(), (k.min_items, k.max_items), ITEMS) {
                    fail!(keyword, message);
                }
                if k.unique_items
                    && let Some((a, b)) = self.duplicate(items, cx)
                {
                    fail!("uniqueItems", format!("items must be unique, but items {a} and {b} are equal"));
                }
                if let Some(node) = k.contains {
                    let mut matched = 0u64;
                    for item in items {
                        if self.probe(cx, |cx| self.eval(node, item, &Path::ROOT, cx)) {
                            matched += 1;
                        }
                    }
                    let min = k.min_contains.unwrap_or(1);
                    if matched < min {
                        fail!(
                            if k.min_contains.is_some() { "minContains" } else { "contains" },
                            format!(
                                "must contain at least {min} {} matching the contains schema, found {matched}",
                                plural(min, "item", "items")
                            )
                        );
                    }
                    if let Some(max) = k.max_contains
                        && matched > max
                    {
                        fail!(
                            "maxContains",
                            format!(
                                "must contain at most {max} {} matching the contains schema, found {matched}",
                                plural(max, "item", "items")
                            )
                        );
                    }
                }
            }
            Value::String(text) => {
                if k.min_length.is_some() || k.max_length.is_some() {
                    // Lengths count characters, each one to four bytes in UTF-8: they are
                    // counted only when a bound falls between a quarter of the byte length and
                    // all of it (and most strings are ASCII, where bytes are characters).
                    let bytes = text.len() as u64;
                    let length = || if text.is_ascii() { bytes } else { text.chars().count() as u64 };
                    if let Some(min) = k.min_length
                        && bytes.div_ceil(4) < min
                        && length() < min
                    {
                        fail!(
                            "minLength",
                            format!("must be at least {min} {} long", plural(min, "character", "characters"))
                        );
                    }
                    if let Some(max) = k.max_length
                        && bytes > max
                        && length() > max
                    {
                        fail!(
                            "maxLength",
                            format!(
                                "must be at most {max} {} long, got {}",
                                plural(max, "character", "characters"),
                                length()
                            )
                        );
                    }
                }
                if let Some((source, regex)) = &k.pattern
                    && !self.regex(regex, text, cx)
                {
                    fail!("pattern", format!("{} does not match the pattern {source}", short(inst)));
                }
            }
            Value::Number(n) => {
                let bounds: [Bound; 4] = [
                    (&k.minimum, "minimum", ">=", |o| o != Ordering::Less),
                    (&k.maximum, "maximum", "<=", |o| o != Ordering::Greater),
                    (&k.exclusive_minimum, "exclusiveMinimum", ">", |o| o == Ordering::Greater),
                    (&k.exclusive_maximum, "exclusiveMaximum", "<", |o| o == Ordering::Less),
                ];
                for (bound, keyword, op, holds) in bounds {
                    if let Some(bound) = bound
                        && !compare(n, bound).is_some_and(holds)
                    {
                        fail!(keyword, format!("must be {op} {bound}, got {n}"));
                    }
                }
                if let Some(divisor) = &k.multiple_of
                    && !multiple_of(n, divisor)
                {
                    fail!("multipleOf", format!("must be a multiple of {divisor}, got {n}"));
                }
            }
            _ => {}
        }

        if !k.applicators {
            return ok;
        }
        for &node in &k.all_of {
            apply!(node, inst);
        }
        if !k.any_of.is_empty() {
            let matched = k.any_of.iter().any(|&node| self.probe(cx, |cx| self.eval(node, inst, path, cx)));
            if !matched {
                let message =
                    if cx.collect { self.alternatives(&k.any_of, "anyOf", inst, path, cx) } else { String::new() };
                fail!("anyOf", message);
            }
        }
        if !k.one_of.is_empty() {
            let matched: Vec<usize> =
                (0..k.one_of.len()).filter(|&i| self.probe(cx, |cx| self.eval(k.one_of[i], inst, path, cx))).collect();
            match matched.len() {
                1 => {}
                0 => {
                    let message =
                        if cx.collect { self.alternatives(&k.one_of, "oneOf", inst, path, cx) } else { String::new() };
                    fail!("oneOf", message);
                }
                _ => fail!(
                    "oneOf",
                    format!("must match exactly one oneOf alternative, but matched {}", join(&matched, " and "))
                ),
            }
        }
        if let Some(node) = k.not
            && self.probe(cx, |cx| self.eval(node, inst, path, cx))
        {
            fail!("not", "must not match the schema in not".to_string());
        }
        if let Some((condition, then, otherwise)) = k.if_then_else {
            let branch = if self.probe(cx, |cx| self.eval(condition, inst, path, cx)) { then } else { otherwise };
            if let Some(node) = branch {
                apply!(node, inst);
            }
        }
        ok
    }

    /// Explains why no alternative matched. When each alternative fails only on `type` (the
    /// common nullable `anyOf`), that reads as one type error; otherwise each alternative's
    /// first error is listed.
    fn alternatives<'v>(
        &self,
        nodes: &[usize],
        keyword: &str,
        inst: &'v Value,
        path: &Path<'_, 'v>,
        cx: &mut Cx,
    ) -> String {
        let here = pointer(path);
        let per_branch: Vec<Vec<ValidationError>> =
            nodes.iter().map(|&node| self.collect_apart(cx, |cx| self.eval(node, inst, path, cx))).collect();
        let only_types = per_branch
            .iter()
            .all(|e| e.len() == 1 && e[0].instance_path == here && e[0].keyword_path.ends_with("/type"));
        if only_types {
            let mut names: Vec<&str> = Vec::new();
            for &node in nodes {
                if let Node::Keywords(k) = &self.schema.nodes[node] {
                    names.extend(k.type_names.iter().filter(|n| !names.contains(n)).collect::<Vec<_>>());
                }
            }
            return format!("expected {}, got {}", either(&names), describe(inst));
        }
        let reasons: Vec<String> = per_branch
            .iter()
            .enumerate()
            .filter_map(|(i, errors)| {
                let first = errors.first()?;
                let at = if first.instance_path == here { String::new() } else { format!("{} ", first.instance_path) };
                Some(format!("[{i}] {at}{}", first.message))
            })
            .collect();
        format!("does not match any {keyword} alternative: {}", reasons.join("; "))
    }

    fn regex(&self, regex: &Regex, text: &str, cx: &mut Cx) -> bool {
        match regex.is_match(text, DEFAULT_BUDGET) {
            Ok(hit) => hit,
            Err(BudgetExhausted) => {
                cx.stop(format!(
                    "validation stopped: a pattern exceeded its match budget on a {}-character string",
                    text.chars().count()
                ));
                false
            }
        }
    }

    /// The first pair of equal items, if any. Counts against the step budget.
    fn duplicate(&self, items: &[Value], cx: &mut Cx) -> Option<(usize, usize)> {
        for (i, a) in items.iter().enumerate() {
            for (j, b) in items.iter().enumerate().skip(i + 1) {
                cx.steps += 1;
                if cx.steps > MAX_STEPS {
                    cx.stop(format!("validation stopped: more than {MAX_STEPS} steps"));
                    return None;
                }
                if json_eq(a, b) {
                    return Some((i, j));
                }
            }
        }
        None
    }
}

fn type_matches(bits: u8, value: &Value) -> bool {
    let bit = match value {
        Value::Null => types::NULL,
        Value::Bool(_) => types::BOOLEAN,
        Value::Object(_) => types::OBJECT,
        Value::Array(_) => types::ARRAY,
        Value::String(_) => types::STRING,
        Value::Number(n) if is_integer(n) => types::INTEGER | types::NUMBER,
        Value::Number(_) => types::NUMBER,
    };
    bits & bit != 0
}

/// The keywords and nouns of a bounded count.
struct Counted {
    keywords: [&'static str; 2],
    one: &'static str,
    many: &'static str,
}

const PROPERTIES: Counted =
    Counted { keywords: ["minProperties", "maxProperties"], one: "property", many: "properties" };
const ITEMS: Counted = Counted { keywords: ["minItems", "maxItems"], one: "item", many: "items" };

/// A count outside its bounds: the keyword that fails and the message. The comparisons are
/// inlined, so a count within its bounds (or with none) costs no call.
#[inline(always)]
fn count_bounds(count: usize, (min, max): (Option<u64>, Option<u64>), what: Counted) -> Option<(&'static str, String)> {
    let count = count as u64;
    let [min_keyword, max_keyword] = what.keywords;
    match (min, max) {
        (Some(min), _) if count < min => Some((min_keyword, count_message("least", min, count, what))),
        (_, Some(max)) if count > max => Some((max_keyword, count_message("most", max, count, what))),
        _ => None,
    }
}

#[cold]
fn count_message(side: &str, bound: u64, count: u64, what: Counted) -> String {
    format!("must have at {side} {bound} {}, got {count}", plural(bound, what.one, what.many))
}

/// `a`, `a or b`, `a, b or c`.
fn either(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// A value as an error message shows it, with its type: `string "5"`, `integer 5`, `object`.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) if is_integer(n) => format!("integer {n}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => format!("string {}", short(value)),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

/// A value's JSON text, cut short so that a huge argument does not flood the message.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 64 {
        return text;
    }
    let cut: String = text.chars().take(60).collect();
    format!("{cut}...")
}

fn quote(name: &str) -> String {
    short(&Value::String(name.to_string()))
}

fn list(values: &[Value]) -> String {
    let shown: Vec<String> = values.iter().take(20).map(short).collect();
    let more = if values.len() > 20 { format!(" (and {} more)", values.len() - 20) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

fn join(items: &[usize], separator: &str) -> String {
    items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(separator)
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn allowed_names(k: &Keywords) -> String {
    let mut names: Vec<String> = k.properties.iter().map(|(name, _)| name.clone()).collect();
    names.sort();
    let patterns: Vec<String> = k.pattern_properties.iter().map(|(source, _, _)| format!("/{source}/")).collect();
    match (names.is_empty(), patterns.is_empty()) {
        (true, true) => "no properties are allowed".into(),
        (false, true) => format!("allowed: {}", names.join(", ")),
        (true, false) => format!("allowed: names matching {}", patterns.join(", ")),
        (false, false) => format!("allowed: {}, or names matching {}", names.join(", "), patterns.join(", ")),
    }
}

/// Compares two JSON numbers exactly when both are integers, else as floats.
fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_i128(a), as_i128(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

fn multiple_of(n: &Number, divisor: &Number) -> bool {
    if let (Some(x), Some(d)) = (as_i128(n), as_i128(divisor)) {
        return d != 0 && x % d == 0;
    }
    match (n.as_f64(), divisor.as_f64()) {
        (Some(x), Some(d)) => {
            let quotient = x / d;
            quotient.is_finite() && (quotient - quotient.round()).abs() < 1e-9
        }
        _ => false,
    }
}

/// JSON equality: numbers by value (`1 == 1.0`), objects regardless of key order.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, a)| y.get(key).is_some_and(|b| json_eq(a, b)))
        }
        _ => a == b,
    }
}
