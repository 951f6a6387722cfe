//! How error messages show values and counts: `string "5"`, `a, b or c`, `1 item`, cut short
//! so that a huge argument does not flood the message.

use serde_json::Value;

use super::number::is_integer;

/// The keywords and nouns of a bounded count.
pub(super) struct Counted {
    keywords: [&'static str; 2],
    one: &'static str,
    many: &'static str,
}

pub(super) const PROPERTIES: Counted =
    Counted { keywords: ["minProperties", "maxProperties"], one: "property", many: "properties" };
pub(super) const ITEMS: Counted =
    Counted { keywords: ["minItems", "maxItems"], one: "item", many: "items" };

/// A count outside its bounds: the keyword that fails and the message. The comparisons are
/// inlined, so a count within its bounds (or with none) costs no call.
#[inline(always)]
pub(super) fn count_bounds(
    count: usize,
    (min, max): (Option<u64>, Option<u64>),
    what: Counted,
) -> Option<(&'static str, String)> {
    let count = count as u64;
    let [min_keyword, max_keyword] = what.keywords;
    match (min, max) {
        (Some(min), _) if count < min => {
            Some((min_keyword, count_message("least", min, count, what)))
        }
        (_, Some(max)) if count > max => {
            Some((max_keyword, count_message("most", max, count, what)))
        }
        _ => None,
    }
}

#[cold]
fn count_message(side: &str, bound: u64, count: u64, what: Counted) -> String {
    format!("must have at {side} {bound} {}, got {count}", plural(bound, what.one, what.many))
}

/// `a`, `a or b`, `a, b or c`.
pub(super) fn either(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// A value as an error message shows it, with its type: `string "5"`, `integer 5`, `object`.
pub(super) fn describe(value: &Value) -> String {
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
pub(super) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 64 {
        return text;
    }
    let cut: String = text.chars().take(60).collect();
    format!("{cut}...")
}

pub(super) fn quote(name: &str) -> String {
    short(&Value::String(name.to_string()))
}

/// Values, as [`some`] lists them.
pub(super) fn list(values: &[Value]) -> String {
    some(values.iter().map(short))
}

/// The first 20 items, comma-separated, then how many more there are: a list in a message
/// (the values of an `enum`, the names an object may have) stays short however long it is.
/// Only those shown are made into text.
pub(super) fn some(items: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 20;
    let len = items.len();
    let shown: Vec<String> = items.take(SHOWN).collect();
    let more = if len > SHOWN { format!(" (and {} more)", len - SHOWN) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

pub(super) fn join(items: &[usize], separator: &str) -> String {
    items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(separator)
}

pub(super) fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
