//! A tool's `x-mcp-header` annotations: where its arguments are mirrored into
//! `Mcp-Param-{Name}` headers on Streamable HTTP, found once at registration, and the rules
//! that make one invalid (the 2026-07-28 transport spec, "Custom Headers from Tool
//! Parameters"). Clients drop a tool with an invalid one, and the transport could not check
//! what it never found, so registration refuses such a tool.

use serde_json::{Map, Value};

use crate::schema::pointer::pointer_to;
use crate::schema::{Problem, subschemas};
use crate::util::token::is_token;

/// The annotation keyword.
const KEYWORD: &str = "x-mcp-header";

/// Past this nesting the walk refuses the schema rather than risking the stack. Compiling
/// refuses deeper schemas already, but not inside the keywords it does not enforce
/// (`unevaluatedProperties`, `contentSchema`, …), where an annotation could hide.
const MAX_DEPTH: usize = 128;

/// One `x-mcp-header` annotation of a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// The header's name, lowercase: `mcp-param-region`.
    pub header: String,
    /// The property names from the arguments object to the value: `["o", "deep"]`.
    pub path: Vec<String>,
}

/// The `x-mcp-header` annotations of an input schema (which has compiled), each with the
/// property path it reads; or every annotation that breaks a rule, at its JSON Pointer.
pub(crate) fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, Vec<Problem>> {
    let mut walk = Walk::default();
    walk.schema(schema, "", Some(&[]), 0);
    // Case-insensitively unique: a header name is case-insensitive (RFC 9110).
    for (i, (later, pointer)) in walk.found.iter().enumerate() {
        if let Some((_, first)) = walk.found[..i].iter().find(|(h, _)| h.header == later.header) {
            let why =
                format!("{:?} is also used at {first} (header names ignore case)", later.header);
            walk.problems.push(Problem::new(pointer, why));
        }
    }
    if !walk.problems.is_empty() {
        return Err(walk.problems);
    }
    Ok(walk.found.into_iter().map(|(header, _)| header).collect())
}

/// What registration would refuse of `schema`'s `x-mcp-header` annotations (nothing when it
/// would take them): for `baremcp check`, which says it without registering anything.
pub fn param_header_problems(schema: &Value) -> Vec<Problem> {
    param_headers(schema).err().unwrap_or_default()
}

#[derive(Default)]
struct Walk {
    /// Each valid annotation, with its pointer.
    found: Vec<(ParamHeader, String)>,
    problems: Vec<Problem>,
}

impl Walk {
    /// A schema at `path`; `chain`: the property names that lead to it from the root when
    /// every step was a `properties` key (`None` once one was not).
    fn schema(&mut self, schema: &Value, path: &str, chain: Option<&[String]>, depth: usize) {
        let Some(map) = schema.as_object() else { return };
        if depth > MAX_DEPTH {
            let why = format!("schema nested deeper than {MAX_DEPTH} levels");
            self.problems.push(Problem::new(path, why));
            return;
        }
        if let Some(name) = map.get(KEYWORD) {
            self.annotation(map, name, path, chain);
        }
        for (keyword, step, sub) in subschemas(map) {
            let here = pointer_to(path, keyword);
            // Only a chain of `properties` keys reaches a header's argument.
            let chain = match (keyword, &step) {
                ("properties", Some(name)) => {
                    chain.map(|c| [c, std::slice::from_ref(name)].concat())
                }
                _ => None,
            };
            let at = step.map_or_else(|| here.clone(), |step| pointer_to(&here, &step));
            self.schema(sub, &at, chain.as_deref(), depth + 1);
        }
    }

    /// The annotation `name` on the schema `map` at `path`, checked.
    fn annotation(
        &mut self,
        map: &Map<String, Value>,
        name: &Value,
        path: &str,
        chain: Option<&[String]>,
    ) {
        let at = pointer_to(path, KEYWORD);
        let mut refuse = |why: String| self.problems.push(Problem::new(&at, why));
        let Some(chain) = chain.filter(|c| !c.is_empty()) else {
            return refuse(
                "must be on a property reached from the root through \"properties\" alone \
                 (not items, anyOf, allOf, oneOf, not, if/then/else, $ref, $defs, \
                 additionalProperties or patternProperties)"
                    .into(),
            );
        };
        let Some(name) = name.as_str() else {
            return refuse(format!("must be a string (the NAME of Mcp-Param-NAME), not {name}"));
        };
        if name.is_empty() {
            return refuse("must not be empty".into());
        }
        if !name.bytes().all(is_token) {
            return refuse(format!(
                "{name:?} holds a character a header name may not: only letters, digits and \
                 !#$%&'*+-.^_`|~ (RFC 9110 tchar)"
            ));
        }
        if !primitive(map.get("type")) {
            let shown = map.get("type").map_or("missing".to_owned(), Value::to_string);
            return refuse(format!(
                "must be on an integer, string or boolean property (\"type\" naming one of \
                 them, optionally with \"null\"): \"type\" is {shown}"
            ));
        }
        let header = format!("mcp-param-{}", name.to_ascii_lowercase());
        self.found.push((ParamHeader { header, path: chain.to_vec() }, at));
    }
}

/// Whether a property's `type` is one the spec lets a header carry: `integer`, `string` or
/// `boolean`, alone or with `null` (a null argument sends no header). Without a `type` a
/// number or an object could come; a union of two primitives would leave a header's text
/// with two meanings, so it is refused.
fn primitive(kind: Option<&Value>) -> bool {
    let allowed = |t: &Value| matches!(t.as_str(), Some("integer" | "string" | "boolean"));
    match kind {
        Some(Value::Array(types)) => match types.as_slice() {
            [one] => allowed(one),
            [a, b] => (allowed(a) && b == "null") || (a == "null" && allowed(b)),
            _ => false,
        },
        Some(one) => allowed(one),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(schema: Value) -> Vec<String> {
        match param_headers(&schema) {
            Ok(found) => panic!("accepted: {found:?}"),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn annotations_along_properties_chains_are_found_with_their_paths() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "o": {"type": "object", "properties": {
                "deep": {"type": ["null", "integer"], "x-mcp-header": "Deep"},
                "x-mcp-header": {"type": "boolean"}
            }},
            "plain": {"type": "string", "enum": [{"x-mcp-header": "data, not a schema"}]}
        }});
        let found = param_headers(&schema).unwrap();
        let shown: Vec<_> = found.iter().map(|h| (h.header.as_str(), h.path.join("."))).collect();
        // In the order of the schema's members (sorted: serde_json keeps no other).
        assert_eq!(
            shown,
            [("mcp-param-deep", "o.deep".into()), ("mcp-param-region", "region".into())]
        );
    }

    #[test]
    fn each_broken_rule_is_said_at_its_pointer() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "number", "x-mcp-header": "N"},
            "a": {"type": "string", "x-mcp-header": "Dup"},
            "b": {"type": "string", "x-mcp-header": "dup"},
            "e": {"type": "string", "x-mcp-header": ""},
            "s": {"type": "string", "x-mcp-header": "a b"},
            "c": {"type": "string", "x-mcp-header": "a:b"},
            "l": {"type": "string", "x-mcp-header": "a\r\nb"},
            "u": {"type": "string", "x-mcp-header": "ré"},
            "o": {"type": "object", "x-mcp-header": "O"},
            "r": {"type": "array", "x-mcp-header": "R"},
            "m": {"x-mcp-header": "M"},
            "two": {"type": ["string", "integer"], "x-mcp-header": "Two"},
            "k": {"type": "string", "x-mcp-header": 5}
        }});
        let said = problems(schema);
        let expect = [
            "/properties/n/x-mcp-header: must be on an integer, string or boolean property",
            "/properties/e/x-mcp-header: must not be empty",
            "/properties/s/x-mcp-header: \"a b\" holds a character a header name may not",
            "/properties/c/x-mcp-header: \"a:b\" holds a character",
            "/properties/l/x-mcp-header: \"a\\r\\nb\" holds a character",
            "/properties/u/x-mcp-header: \"ré\" holds a character",
            "/properties/o/x-mcp-header: must be on an integer, string or boolean property",
            "/properties/r/x-mcp-header: must be on an integer",
            "/properties/m/x-mcp-header: must be on an integer, string or boolean property \
             (\"type\" naming one of them, optionally with \"null\"): \"type\" is missing",
            "/properties/two/x-mcp-header: must be on an integer",
            "/properties/k/x-mcp-header: must be a string (the NAME of Mcp-Param-NAME), not 5",
            "/properties/b/x-mcp-header: \"mcp-param-dup\" is also used at \
             /properties/a/x-mcp-header (header names ignore case)",
        ];
        for e in expect {
            assert!(said.iter().any(|s| s.starts_with(e)), "{e:?} not in {said:#?}");
        }
        assert_eq!(said.len(), expect.len(), "{said:#?}");
    }

    #[test]
    fn an_annotation_off_a_pure_properties_chain_is_refused() {
        let bad = json!({"type": "string", "x-mcp-header": "X"});
        let places = [
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": bad}}}),
            json!({"type": "object", "properties": {"a": {"prefixItems": [bad]}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a": bad}}]}),
            json!({"type": "object", "allOf": [{"properties": {"a": bad}}]}),
            json!({"type": "object", "oneOf": [{"properties": {"a": bad}}]}),
            json!({"type": "object", "not": {"properties": {"a": bad}}}),
            json!({"type": "object", "if": {"properties": {"a": bad}}}),
            json!({"type": "object", "then": {"properties": {"a": bad}}}),
            json!({"type": "object", "else": {"properties": {"a": bad}}}),
            json!({"type": "object", "$defs": {"d": bad}, "properties": {"a": {"$ref": "#/$defs/d"}}}),
            json!({"type": "object", "additionalProperties": bad}),
            json!({"type": "object", "patternProperties": {"^a": bad}}),
            json!({"type": "object", "dependentSchemas": {"a": {"properties": {"b": bad}}}}),
            json!({"type": "object", "unevaluatedProperties": bad}),
            json!({"type": "object", "propertyNames": bad}),
        ];
        for schema in places {
            let said = problems(schema.clone());
            assert_eq!(said.len(), 1, "{schema}: {said:?}");
            assert!(said[0].contains("must be on a property reached from the root"), "{said:?}");
        }
    }

    #[test]
    fn the_walk_is_bounded() {
        let mut deep = json!({"type": "string", "x-mcp-header": "X"});
        for _ in 0..200 {
            deep = json!({"unevaluatedProperties": deep});
        }
        let said = problems(json!({"type": "object", "unevaluatedProperties": deep}));
        assert!(said[0].ends_with("schema nested deeper than 128 levels"), "{said:?}");
    }
}
