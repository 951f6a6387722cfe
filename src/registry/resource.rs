//! What a library user registers to serve data: static [`Resource`]s, [`ResourceTemplate`]s
//! with RFC 6570 `{var}` / `{+var}` variables, what a read returns ([`Contents`]), and how
//! values are suggested for completion ([`Completer`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use crate::registry::tool::Context;
use crate::util::encoding;

/// What a read produces: text, or bytes that are sent as base64.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// Text, sent as `text`.
    Text(String),
    /// Bytes, sent base64-encoded as `blob`.
    Blob(Vec<u8>),
}

impl Contents {
    /// Bytes read from a file or a command: text when they are UTF-8 without a NUL byte (a
    /// NUL says binary even in valid UTF-8), else a blob.
    pub fn from_bytes(bytes: Vec<u8>) -> Contents {
        match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => Contents::Text(text),
            Ok(text) => Contents::Blob(text.into_bytes()),
            Err(e) => Contents::Blob(e.into_bytes()),
        }
    }
}

/// Why a read failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadError {
    /// There is no such resource: the client gets the protocol's not-found error.
    NotFound,
    /// The resource exists but cannot be served (too large, unreadable): -32602 with this text.
    Refused(String),
}

/// So `?` works on any error in a reader: it refuses the read with the error's text. (A
/// missing resource is [`ReadError::NotFound`], returned as such.)
impl<E: std::error::Error> From<E> for ReadError {
    fn from(error: E) -> ReadError {
        ReadError::Refused(error.to_string())
    }
}

/// Reads a static resource.
pub type Reader = dyn Fn(&mut Context) -> Result<Contents, ReadError>;
/// Reads a resource through a template, given the matched variables.
pub type TemplateReader = dyn Fn(&Vars, &mut Context) -> Result<Contents, ReadError>;
/// Template variables by name, percent-decoded.
pub type Vars = BTreeMap<String, String>;

/// Suggests values given the typed prefix and the other arguments given so far.
pub type Suggest = dyn Fn(&str, &Map<String, Value>) -> Vec<String>;

/// Suggests values for a prompt argument or a template variable.
pub enum Completer {
    /// A fixed list, filtered by the typed prefix.
    Values(Vec<String>),
    /// Called with the typed value and the other arguments given so far; its suggestions are
    /// filtered by the prefix too.
    Function(Box<Suggest>),
}

impl Completer {
    /// A fixed list of suggestions.
    pub fn values<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Completer {
        Completer::Values(values.into_iter().map(Into::into).collect())
    }

    pub(crate) fn suggest(&self, prefix: &str, context: &Map<String, Value>) -> Vec<String> {
        let all = match self {
            Completer::Values(values) => values.clone(),
            Completer::Function(f) => f(prefix, context),
        };
        all.into_iter().filter(|v| v.starts_with(prefix)).collect()
    }
}

/// A resource with a fixed URI: a name, optional metadata set by value (`.title(..)`,
/// `.mime_type(..)`, ...), and the function that reads it. Register it with
/// [`crate::Server::add_resource`].
///
/// ```
/// use std::cell::RefCell;
///
/// use baremcp::{Contents, Resource, Server, Tool, ToolOutput};
/// use serde_json::json;
/// use std::rc::Rc;
///
/// let memo = Rc::new(RefCell::new(String::from("buy milk")));
/// let read = memo.clone();
/// let mut server = Server::new("memo", "1.0.0");
/// server.add_resource(
///     Resource::new("memo://today", "today", move |_cx| Ok(Contents::Text(read.borrow().clone())))
///         .title("Today's memo")
///         .mime_type("text/plain"),
/// )?;
/// // A tool that changes it tells subscribers.
/// let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
/// server.add_tool(Tool::new("write_memo", "Replaces the memo", schema, move |args, cx| {
///     *memo.borrow_mut() = args["text"].as_str().unwrap_or_default().to_string();
///     cx.resource_updated("memo://today");
///     Ok(ToolOutput::text("written"))
/// }))?;
///
/// let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}
/// {"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"memo://today"}}
/// "#;
/// let mut output = Vec::new();
/// server.serve(&mut &input[..], &mut output)?;
/// let last = String::from_utf8(output)?.lines().last().unwrap_or_default().to_string();
/// assert_eq!(
///     last,
///     r#"{"jsonrpc":"2.0","id":2,"result":{"contents":[{"mimeType":"text/plain","text":"buy milk","uri":"memo://today"}]}}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Resource {
    pub(crate) uri: String,
    pub(crate) meta: Map<String, Value>,
    pub(crate) mime_type: Option<String>,
    pub(crate) reader: Box<Reader>,
    /// The file whose changes are notified to subscribers.
    pub(crate) watched_file: Option<PathBuf>,
}

impl Resource {
    /// A resource at `uri`, listed under `name`, read by `reader`.
    pub fn new(
        uri: impl Into<String>,
        name: impl Into<String>,
        reader: impl Fn(&mut Context) -> Result<Contents, ReadError> + 'static,
    ) -> Resource {
        let uri = uri.into();
        let mut meta = Map::new();
        meta.insert("uri".into(), json!(uri));
        meta.insert("name".into(), json!(name.into()));
        Resource { uri, meta, mime_type: None, reader: Box::new(reader), watched_file: None }
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> Resource {
        self.meta.insert("title".into(), json!(title.into()));
        self
    }

    /// What the resource holds, for the model or the user.
    pub fn description(mut self, description: impl Into<String>) -> Resource {
        self.meta.insert("description".into(), json!(description.into()));
        self
    }

    /// The MIME type, listed and sent with the contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Resource {
        let mime_type = mime_type.into();
        self.meta.insert("mimeType".into(), json!(mime_type));
        self.mime_type = Some(mime_type);
        self
    }

    /// The size in bytes, if known, shown in listings.
    pub fn size(mut self, size: u64) -> Resource {
        self.meta.insert("size".into(), json!(size));
        self
    }

    /// `{"audience": [...], "priority": n, "lastModified": "..."}` as MCP defines them.
    pub fn annotations(mut self, annotations: Value) -> Resource {
        self.meta.insert("annotations".into(), annotations);
        self
    }

    /// The resource is the file at `path`: subscribers are notified when it changes, as for a
    /// `--root` file (looked at before each wait for input, and every half second while
    /// [`crate::Server::serve_stdio`] waits).
    pub fn watch_file(mut self, path: impl Into<PathBuf>) -> Resource {
        self.watched_file = Some(path.into());
        self
    }

    pub(crate) fn listing(&self) -> Value {
        Value::Object(self.meta.clone())
    }
}

/// A family of resources whose URIs match a template such as `test://items/{id}`. Register it
/// with [`crate::Server::add_template`].
///
/// ```
/// use baremcp::{Completer, Contents, ReadError, ResourceTemplate, Server};
///
/// let mut server = Server::new("memo", "1.0.0");
/// server.add_template(
///     ResourceTemplate::new("memo://{day}", "memo by day", |vars, _cx| match vars["day"].as_str() {
///         "today" => Ok(Contents::Text("buy milk".into())),
///         _ => Err(ReadError::NotFound),
///     })
///     .complete("day", Completer::values(["today", "tomorrow"])),
/// )?;
/// # Ok::<(), baremcp::Error>(())
/// ```
pub struct ResourceTemplate {
    pub(crate) template: UriTemplate,
    pub(crate) meta: Map<String, Value>,
    pub(crate) mime_type: Option<String>,
    pub(crate) reader: Box<TemplateReader>,
    pub(crate) completers: BTreeMap<String, Completer>,
}

impl ResourceTemplate {
    /// `uri_template` uses RFC 6570 level 1 `{var}` (one path segment) and `{+var}` (any
    /// text, `/` included, for paths).
    pub fn new(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        reader: impl Fn(&Vars, &mut Context) -> Result<Contents, ReadError> + 'static,
    ) -> ResourceTemplate {
        let text = uri_template.into();
        let mut meta = Map::new();
        meta.insert("uriTemplate".into(), json!(text));
        meta.insert("name".into(), json!(name.into()));
        ResourceTemplate {
            template: UriTemplate::parse(&text),
            meta,
            mime_type: None,
            reader: Box::new(reader),
            completers: BTreeMap::new(),
        }
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> ResourceTemplate {
        self.meta.insert("title".into(), json!(title.into()));
        self
    }

    /// What the resources hold, for the model or the user.
    pub fn description(mut self, description: impl Into<String>) -> ResourceTemplate {
        self.meta.insert("description".into(), json!(description.into()));
        self
    }

    /// The MIME type, listed and sent with the contents.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> ResourceTemplate {
        let mime_type = mime_type.into();
        self.meta.insert("mimeType".into(), json!(mime_type));
        self.mime_type = Some(mime_type);
        self
    }

    /// `{"audience": [...], "priority": n, "lastModified": "..."}` as MCP defines them.
    pub fn annotations(mut self, annotations: Value) -> ResourceTemplate {
        self.meta.insert("annotations".into(), annotations);
        self
    }

    /// The template's variable names, in order (`{+path}` is `path`).
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.template.variables()
    }

    /// Suggestions for one variable in `completion/complete`.
    pub fn complete(
        mut self,
        variable: impl Into<String>,
        completer: Completer,
    ) -> ResourceTemplate {
        self.completers.insert(variable.into(), completer);
        self
    }

    pub(crate) fn listing(&self) -> Value {
        Value::Object(self.meta.clone())
    }
}

/// A parsed URI template: literal text and variables, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    /// A variable; `reserved` (`{+var}`) may span `/`.
    Var {
        name: String,
        reserved: bool,
    },
}

impl UriTemplate {
    pub(crate) fn parse(text: &str) -> UriTemplate {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let inner = &rest[open + 1..close];
            let (reserved, name) = match inner.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, inner),
            };
            parts.push(Part::Var { name: name.to_string(), reserved });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        UriTemplate { parts }
    }

    /// The variables of `uri` if it matches, percent-decoded; `None` otherwise (or when a
    /// value does not decode to UTF-8).
    pub(crate) fn matches(&self, uri: &str) -> Option<Vars> {
        let mut vars = Vars::new();
        self.match_from(0, uri, &mut vars).then_some(vars)
    }

    fn match_from(&self, part: usize, rest: &str, vars: &mut Vars) -> bool {
        match self.parts.get(part) {
            None => rest.is_empty(),
            Some(Part::Literal(literal)) => rest
                .strip_prefix(literal.as_str())
                .is_some_and(|rest| self.match_from(part + 1, rest, vars)),
            Some(Part::Var { name, reserved }) => {
                // Try the shortest value first; a variable never matches the empty string. A
                // last variable must take the rest, so only that length is tried.
                let limit =
                    if *reserved { rest.len() } else { rest.find('/').unwrap_or(rest.len()) };
                let first = if part + 1 == self.parts.len() { limit.max(1) } else { 1 };
                for end in (first..=limit).filter(|&end| rest.is_char_boundary(end)) {
                    let Some(value) = encoding::percent_decode(&rest[..end])
                        .and_then(|b| String::from_utf8(b).ok())
                    else {
                        continue;
                    };
                    vars.insert(name.clone(), value);
                    if self.match_from(part + 1, &rest[end..], vars) {
                        return true;
                    }
                }
                vars.remove(name);
                false
            }
        }
    }

    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template).matches(uri).map(|v| v.into_iter().collect())
    }

    #[test]
    fn matches_level_1_and_reserved_variables() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Some(vec![pair("id", "123")])
        );
        assert_eq!(vars("test://template/{id}/data", "test://template/1/2/data"), None);
        assert_eq!(vars("test://template/{id}/data", "test://template//data"), None);
        assert_eq!(
            vars("file:///root/{+path}", "file:///root/a/b%20c.txt"),
            Some(vec![pair("path", "a/b c.txt")])
        );
        assert_eq!(
            vars("x://{a}-{b}", "x://one-two-three"),
            Some(vec![pair("a", "one"), pair("b", "two-three")])
        );
        assert_eq!(vars("x://{a}", "x://%ff"), None);
        assert_eq!(vars("x://fixed", "x://fixed"), Some(vec![]));
        assert_eq!(UriTemplate::parse("a/{x}/{+y}").variables().collect::<Vec<_>>(), ["x", "y"]);
    }
}
