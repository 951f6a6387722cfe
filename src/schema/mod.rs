//! JSON Schema: the subset real MCP tool schemas use, compiled once and checked with messages
//! that name the offending value's JSON Pointer and say what was allowed.
//!
//! Nothing here does I/O. [`Schema::compile`] refuses a malformed schema with every problem it
//! finds, and returns warnings for keywords it knows but does not enforce, so that nothing
//! passes silently looking like validation. Work is bounded: nesting depth, `$ref` cycles,
//! total steps and regex matching all have limits that end in an error, never a hang.

mod compile;
pub mod regex;
mod validate;

use std::fmt;

use serde_json::Value;

pub use compile::Draft;

/// A compiled schema, ready to validate instances.
#[derive(Debug)]
pub struct Schema {
    nodes: Vec<compile::Node>,
    warnings: Vec<Problem>,
    draft: Draft,
}

/// A problem found in a schema at load time: where (a JSON Pointer into the schema) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub pointer: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "/" } else { &self.pointer };
        write!(f, "{pointer}: {}", self.message)
    }
}

/// One reason an instance is invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// JSON Pointer to the offending value (`/` for the whole instance).
    pub instance_path: String,
    /// JSON Pointer to the schema keyword that failed, e.g. `/properties/name/minLength`.
    pub keyword_path: String,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.instance_path, self.message)
    }
}

/// All the errors of one instance: the first [`Errors::CAP`] kept, and how many there were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Errors {
    pub errors: Vec<ValidationError>,
    pub total: usize,
}

impl Errors {
    pub const CAP: usize = 20;
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

/// Escapes one JSON Pointer reference token.
pub(crate) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
