//! The JSON Schema dialects a document may be read as (named by its `$schema`), and how deeply
//! a schema document may nest.

use serde_json::Value;

use super::Problem;

/// Which JSON Schema dialect the document is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// draft-07.
    Draft7,
    /// 2020-12, MCP's default.
    Draft2020_12,
}

/// Past this nesting a schema is refused rather than risking the stack.
pub(super) const MAX_DEPTH: usize = 128;

impl Draft {
    /// The dialect `root` names in `$schema`, or `default` when it names none.
    pub(super) fn of(root: &Value, default: Draft) -> Result<Draft, Problem> {
        match root.get("$schema") {
            None => Ok(default),
            Some(Value::String(uri)) => {
                match uri
                    .trim_end_matches('#')
                    .trim_start_matches("https://")
                    .trim_start_matches("http://")
                {
                    "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft2020_12),
                    "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
                    _ => Err(Problem::new(
                        "/$schema",
                        format!("unsupported dialect {uri:?}: use JSON Schema 2020-12 or draft-07"),
                    )),
                }
            }
            Some(_) => Err(Problem::new("/$schema", "must be a string")),
        }
    }
}
