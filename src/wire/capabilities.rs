//! What a client declared it can do: whether a top-level capability is declared as an object,
//! read from the raw JSON with the scanner (nothing is built, however large the object), and
//! the few short names a legacy session keeps of its `initialize` capabilities.

use crate::wire::jsonrpc::is_object;
use crate::wire::scanner::{Scanner, Syntax};

/// A legacy session keeps at most this many declared names (the spec defines six); the ones
/// after them are not kept.
pub(crate) const MAX_NAMES: usize = 32;
/// A declared name longer than this (in bytes) is not kept.
pub(crate) const MAX_NAME_BYTES: usize = 64;

/// The names of the top-level members of a client's `capabilities` whose value is an object:
/// all a handler's [`crate::Context::client_supports`] reads. At most [`MAX_NAMES`] names of
/// at most [`MAX_NAME_BYTES`] each, so a session's share of a huge `initialize` is small.
#[derive(Default, Debug, PartialEq)]
pub(crate) struct Declared {
    names: Vec<Box<str>>,
}

impl Declared {
    /// Reads `raw`, the JSON text of a `capabilities` object, in one pass that keeps only the
    /// names. A name given twice means what its last member says, as in a parsed value; text
    /// that is not an object declares nothing.
    pub fn read(raw: &str) -> Declared {
        let mut names: Vec<Box<str>> = Vec::new();
        let read = Scanner::new(raw).object(|key, s| {
            // A key that is no `str` (a lone surrogate) fails the whole, as it fails a parse.
            let key = key.ok_or(Syntax)?;
            let object = is_object(s.value()?);
            names.retain(|name| **name != *key);
            if object && key.len() <= MAX_NAME_BYTES && names.len() < MAX_NAMES {
                names.push(key.into());
            }
            Ok(())
        });
        if read.is_err() {
            names.clear();
        }
        Declared { names }
    }

    /// Whether `name` is declared (as an object).
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|kept| **kept == *name)
    }

    /// How many bytes of names are kept.
    #[cfg(test)]
    pub fn kept_bytes(&self) -> usize {
        self.names.iter().map(|name| name.len()).sum()
    }
}

/// Whether the capabilities object `raw` (its JSON text) declares `name` as an object, as a
/// parsed value's last member of that name would say; found in one pass that builds nothing.
pub(crate) fn declares(raw: &str, name: &str) -> bool {
    member(raw, name).is_some_and(is_object)
}

/// The raw JSON of the last member named `name` of the object `raw`; `None` when there is no
/// such member or `raw` is not an object.
pub(crate) fn member<'a>(raw: &'a str, name: &str) -> Option<&'a str> {
    let mut found = None;
    Scanner::new(raw)
        .object(|key, s| {
            let key = key.ok_or(Syntax)?;
            let value = s.value()?;
            if key == name {
                found = Some(value);
            }
            Ok(())
        })
        .ok()?;
    found
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    /// What a parsed value says, the behaviour both readers keep.
    fn parsed(raw: &str, name: &str) -> bool {
        serde_json::from_str::<Value>(raw).is_ok_and(|c| c.get(name).is_some_and(Value::is_object))
    }

    #[test]
    fn both_readers_answer_as_a_parsed_value_does() {
        let cases = [
            r#"{"sampling":{},"roots":{"listChanged":true}}"#,
            r#"{"sampling":{},"sampling":1}"#,
            r#"{"sampling":true,"sampling":{"x":[{}]}}"#,
            r#"{ "elicitation" : { } , "roots" : [ ] }"#,
            r#"{"sam\u0070ling":{}}"#,
            r#"{"\ud800":{},"roots":{}}"#,
            r#"[{"sampling":{}}]"#,
            r#""sampling""#,
            "{}",
            "null",
        ];
        for raw in cases {
            let declared = Declared::read(raw);
            for name in ["sampling", "roots", "elicitation", "experimental"] {
                assert_eq!(declared.has(name), parsed(raw, name), "{raw} {name}");
                assert_eq!(declares(raw, name), parsed(raw, name), "{raw} {name}");
            }
        }
    }

    #[test]
    fn a_huge_capabilities_object_leaves_a_few_short_names() {
        let mut raw = String::from("{");
        for i in 0..10_000 {
            raw.push_str(&format!(r#""c{i}":{{"x":[0,0,0]}},"#));
        }
        let long = "n".repeat(100_000);
        raw.push_str(&format!(
            r#""{long}":{{}},"experimental":{{"x":[{}]}}}}"#,
            "0,".repeat(50_000) + "0"
        ));
        let declared = Declared::read(&raw);
        assert_eq!(declared.names.len(), MAX_NAMES);
        assert!(declared.kept_bytes() <= MAX_NAMES * MAX_NAME_BYTES);
        assert!(declared.has("c0") && declared.has(&format!("c{}", MAX_NAMES - 1)));
        assert!(!declared.has(&long) && !declared.has(&format!("c{MAX_NAMES}")));
        // Within the bound, a name is declared exactly as the parsed value says.
        let few = format!(r#"{{"experimental":{{"x":[0]}},"{}":{{}},"roots":{{}}}}"#, long);
        let declared = Declared::read(&few);
        assert!(declared.has("experimental") && declared.has("roots") && !declared.has(&long));
        assert_eq!(declared.kept_bytes(), "experimental".len() + "roots".len());
    }
}
