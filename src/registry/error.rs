//! What registration reports: why a tool, resource, template, prompt or directory was refused
//! ([`Error`]), and what it accepted but will not enforce ([`Warning`]).

use std::fmt;
use std::path::PathBuf;

use crate::schema::Problem;

/// Why [`crate::Server`] refused to register something. Each variant holds the problem as
/// data, so a caller can match on it; `Display` says it in one line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// Something of this kind is already registered under this name (tools, prompts) or URI
    /// (resources, directories; templates by their text).
    Duplicate {
        /// What was registered twice.
        kind: DuplicateKind,
        /// The name or URI both share.
        name: String,
    },
    /// A tool's schema does not load.
    Schema {
        /// The tool's name.
        tool: String,
        /// Which schema, named as the tool listing names it: `inputSchema` or `outputSchema`.
        schema: &'static str,
        /// Each problem, with the JSON Pointer into that schema where it is.
        problems: Vec<Problem>,
    },
    /// A tool's input schema does not say `"type": "object"`, which MCP requires.
    NotAnObject {
        /// The tool's name.
        tool: String,
    },
    /// An entry of a typed tool's input schema `examples` does not decode into the handler's
    /// argument type: the schema and the type disagree, and a model shown that example would
    /// send arguments the handler cannot take.
    Example {
        /// The tool's name.
        tool: String,
        /// JSON Pointer into the input schema, e.g. `/examples/0/count`.
        pointer: String,
        /// What did not fit, as serde says it.
        why: String,
    },
    /// An entry of a typed tool's input schema `examples` is refused by that schema: a model
    /// shown that example would send arguments that fail validation.
    InvalidExample {
        /// The tool's name.
        tool: String,
        /// JSON Pointer into the input schema, e.g. `/examples/0/name`.
        pointer: String,
        /// What the schema allows, and what the example holds, as a call's error says it.
        why: String,
    },
    /// A [`crate::Tool::typed`] tool's schema, derived by [`crate::tool_args!`], and its
    /// argument type's `Deserialize` disagree: they read different names (a serde attribute
    /// the macro does not follow: `rename`, `skip`, `flatten`, ...), or need different
    /// fields, or a field's `default` or a field's or a nested type's `examples` entry does
    /// not decode, or the type contains itself. Write the schema out with
    /// [`crate::Tool::typed_with_schema`], or drop the attribute.
    Mismatch {
        /// The tool's name.
        tool: String,
        /// Each difference, with the JSON Pointer into the input schema where it is.
        problems: Vec<Problem>,
    },
    /// An `x-mcp-header` annotation of a tool's input schema breaks a rule of the Streamable
    /// HTTP transport (clients drop such a tool): not on an `integer`, `string` or `boolean`
    /// property reached from the root through `properties` alone, a name that is empty, not
    /// an HTTP token or used twice (ignoring case), or a value that is no string.
    ParamHeader {
        /// The tool's name.
        tool: String,
        /// Each annotation that breaks a rule, with the JSON Pointer to it in the input
        /// schema (`/properties/region/x-mcp-header`).
        problems: Vec<Problem>,
    },
    /// A resource template has no `{variable}`: it would match one URI only, which is what a
    /// resource is for.
    NoVariable {
        /// The URI template as given.
        template: String,
    },
    /// A resource template that cannot be served as written: an expression other than RFC
    /// 6570 level 1 `{var}` and `{+var}` (`{?q}`, `{a,b}`, `{x*}`), an empty or malformed
    /// variable name, a variable named twice, an unmatched brace, or a completer
    /// ([`crate::ResourceTemplate::complete`]) for a variable the template does not have.
    Template {
        /// The URI template as given.
        template: String,
        /// What is wrong with it.
        why: String,
    },
    /// A resource's URI is not a URI as RFC 3986 spells it (MCP's `format: "uri"`): it has no
    /// scheme, or a character a URI cannot hold raw (a space, a control, non-ASCII, `<`,
    /// ...), or a `%` without two hex digits.
    Uri {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        why: String,
    },
    /// A directory given to [`crate::Server::add_directory`] lies inside another one served,
    /// or holds one: the files of the inner one would be listed twice, under the same URIs.
    NestedDirectory {
        /// The canonical path of the directory inside the other.
        inner: PathBuf,
        /// The canonical path of the directory that holds it.
        outer: PathBuf,
    },
}

/// What [`Error::Duplicate`] found registered twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DuplicateKind {
    /// A tool, by name.
    Tool,
    /// A prompt, by name.
    Prompt,
    /// A static resource, by URI.
    Resource,
    /// A resource template, by its `uriTemplate` text (a directory's `file:///dir/{+path}`
    /// included).
    Template,
    /// A directory served with [`crate::Server::add_directory`], by its base URI.
    Directory,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Duplicate { kind, name } => {
                let (kind, by) = match kind {
                    DuplicateKind::Tool => ("tool", "name"),
                    DuplicateKind::Prompt => ("prompt", "name"),
                    DuplicateKind::Resource => ("resource", "uri"),
                    DuplicateKind::Template => ("resource template", "uriTemplate"),
                    DuplicateKind::Directory => ("directory", "uri"),
                };
                write!(f, "duplicate {kind} {by} {name:?}")
            }
            Error::Schema { tool, schema, problems } => {
                write!(f, "tool {tool:?}: {schema} does not load: ")?;
                problem_list(f, problems)
            }
            Error::Mismatch { tool, problems } => {
                write!(f, "tool {tool:?}: inputSchema and the argument type disagree: ")?;
                problem_list(f, problems)
            }
            Error::NotAnObject { tool } => {
                write!(f, r#"tool {tool:?}: inputSchema must have "type": "object""#)
            }
            Error::ParamHeader { tool, problems } => {
                write!(f, "tool {tool:?}: inputSchema has an invalid x-mcp-header: ")?;
                problem_list(f, problems)
            }
            Error::Example { tool, pointer, why } => {
                write!(
                    f,
                    "tool {tool:?}: inputSchema {pointer}: does not decode into the argument type: {why}"
                )
            }
            Error::InvalidExample { tool, pointer, why } => {
                write!(
                    f,
                    "tool {tool:?}: inputSchema {pointer}: the schema refuses its example: {why}"
                )
            }
            Error::NoVariable { template } => {
                write!(f, "resource template {template:?} has no {{variable}}")
            }
            Error::Template { template, why } => write!(f, "resource template {template:?}: {why}"),
            Error::Uri { uri, why } => write!(f, "resource uri {uri:?} is not a valid uri: {why}"),
            Error::NestedDirectory { inner, outer } => {
                write!(
                    f,
                    "directory {inner:?} is inside directory {outer:?}, also served: serve only one \
                     (the inner one's files would be listed twice)"
                )
            }
        }
    }
}

impl std::error::Error for Error {}

fn problem_list(f: &mut fmt::Formatter<'_>, problems: &[Problem]) -> fmt::Result {
    for (i, problem) in problems.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        write!(f, "{problem}")?;
    }
    Ok(())
}

/// A keyword in a tool's schema that is known but not enforced (such as
/// `unevaluatedProperties`): the tool is registered, and arguments are not checked against
/// that keyword. Returned by [`crate::Server::add_tool`] and logged at warn level.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    /// The tool's name.
    pub tool: String,
    /// Which schema: `inputSchema` or `outputSchema`.
    pub schema: &'static str,
    /// Where in that schema, and what is not enforced.
    pub problem: Problem,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool {:?}: {}: {}", self.tool, self.schema, self.problem)
    }
}
