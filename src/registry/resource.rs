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
    /// text, `/` included, for paths); anything else in braces (another operator such as
    /// `{?q}`, a list `{a,b}`, a modifier, an empty or repeated name) is refused by
    /// [`crate::Server::add_template`].
    ///
    /// Variables reach the reader percent-decoded, as RFC 6570 matching gives them: "one path
    /// segment" is of the URI as sent, so `notes://..%2F..%2Fetc%2Fpasswd` gives `{name}` the
    /// value `../../etc/passwd`. A reader that makes a path or a query of a value must check
    /// it (for `/`, `..`, a NUL) as it would any input from the client.
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

    /// Suggestions for one variable in `completion/complete`; a name that is not one of the
    /// template's variables is refused by [`crate::Server::add_template`].
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

    /// The template as written (`uriTemplate`).
    pub(crate) fn text(&self) -> &str {
        self.meta["uriTemplate"].as_str().unwrap_or_default()
    }

    /// What makes the template one that cannot be served as written: its text
    /// ([`UriTemplate::parse`]), or a completer for a variable it does not have.
    pub(crate) fn problem(&self) -> Option<String> {
        if let Some(why) = &self.template.problem {
            return Some(why.clone());
        }
        let unknown = self.completers.keys().find(|name| !self.variables().any(|v| v == *name))?;
        Some(format!("a completer names {unknown:?}, which is not one of its variables"))
    }
}

/// The most steps (bytes scanned, ends tried) one URI may cost to match against one template.
const MATCH_BUDGET: usize = 1 << 22;

/// A parsed URI template: literal text and variables, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
    /// Why it is not served as written ([`Self::parse`]); `None` when it is.
    problem: Option<String>,
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
    /// The template `text`, and the first thing that makes it one this module does not match
    /// as RFC 6570 would expand it (its `problem`): anything but literal text and level 1
    /// `{var}` or `{+var}` expressions, each naming one variable, none twice (`{?q}` would
    /// take `?q=1` as the value of a variable named `?q`). The problem is said in lowercase.
    pub(crate) fn parse(text: &str) -> UriTemplate {
        let (mut parts, mut problem) = (Vec::new(), None);
        let mut rest = text;
        while let Some(open) = rest.find(['{', '}']) {
            let close = rest[open..].find('}').map(|c| open + c);
            let (true, Some(close)) = (rest.as_bytes()[open] == b'{', close) else {
                let unmatched = if close == Some(open) {
                    "a `}` without its `{`"
                } else {
                    "a `{` without its `}`"
                };
                problem = problem.or(Some(unmatched.to_string()));
                break;
            };
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let expression = &rest[open + 1..close];
            let (reserved, name) = match expression.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expression),
            };
            let twice = parts.iter().any(|p| matches!(p, Part::Var { name: n, .. } if n == name));
            let checked = check_name(expression, name).and_then(|()| match twice {
                true => Err(format!("variable {name:?} appears twice")),
                false => Ok(()),
            });
            problem = problem.or(checked.err());
            parts.push(Part::Var { name: name.to_string(), reserved });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        let template = UriTemplate { parts, problem };
        let problem = template.problem.clone().or_else(|| template.literal_problem());
        UriTemplate { problem, ..template }
    }

    /// Why the template's literal text would not expand to URIs (the schema's `format:
    /// "uri-template"`): each variable stands in as `x`, and the text must then be a URI
    /// ([`encoding::uri_problem`]), with no `'` (RFC 6570 literals leave it out). A `{+var}`
    /// that opens the template may bring the scheme (`{+base}/readme`): it stands in as `x:`.
    fn literal_problem(&self) -> Option<String> {
        let probe: String = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, part)| match part {
                Part::Literal(text) => text.as_str(),
                Part::Var { reserved: true, .. } if i == 0 => "x:",
                Part::Var { .. } => "x",
            })
            .collect();
        let why = encoding::uri_problem(&probe).or_else(|| {
            let Some(Part::Literal(text)) =
                self.parts.iter().find(|p| matches!(p, Part::Literal(t) if t.contains('\'')))
            else {
                return None;
            };
            Some(format!("a raw `'` in {text:?}; percent-encode it"))
        })?;
        // Byte positions in the probe are not the template's: the problem is said without one.
        let why = match why.split_once(" at byte ") {
            Some((what, rest)) => {
                format!("{what}{}", &rest[rest.find(';').unwrap_or(rest.len())..])
            }
            None => why,
        };
        Some(format!("not a uri template: {why}"))
    }

    /// The variables of `uri` if it matches, percent-decoded; `None` otherwise (or when a
    /// value does not decode to UTF-8, or the match would take more than [`MATCH_BUDGET`]
    /// steps: a URI is the client's, and its length and shape must not hold the loop).
    pub(crate) fn matches(&self, uri: &str) -> Option<Vars> {
        let mut spans = Vec::new();
        let mut budget = MATCH_BUDGET;
        if !self.split(0, uri, 0, &mut spans, &mut budget) {
            return None;
        }
        // Each value is decoded once, after the split is found; inserted, not collected
        // (docs/development/performance.md, Binary size).
        let mut vars = Vars::new();
        for (name, (start, end)) in self.variables().zip(spans) {
            let value = encoding::percent_decode(&uri[start..end])?;
            vars.insert(name.to_string(), String::from_utf8(value).ok()?);
        }
        Some(vars)
    }

    /// Whether `uri[pos..]` matches the parts from `part` on, pushing each variable's span.
    /// A variable never matches the empty string, never ends inside a `%XX` escape, and takes
    /// the shortest value that lets the rest match: when a literal follows, only where that
    /// literal occurs; a last variable, only the rest. Every step spends `budget`.
    fn split(
        &self,
        part: usize,
        uri: &str,
        pos: usize,
        spans: &mut Vec<(usize, usize)>,
        budget: &mut usize,
    ) -> bool {
        if *budget == 0 {
            return false;
        }
        let rest = &uri[pos..];
        let (name_reserved, next) = match self.parts.get(part) {
            None => return rest.is_empty(),
            Some(Part::Literal(literal)) => {
                return rest.starts_with(literal.as_str())
                    && self.split(part + 1, uri, pos + literal.len(), spans, budget);
            }
            Some(Part::Var { reserved, .. }) => (*reserved, self.parts.get(part + 1)),
        };
        // A plain variable ends at the next `/`: finding it is a scan, paid for like any other.
        let limit = if name_reserved { rest.len() } else { rest.find('/').unwrap_or(rest.len()) };
        if !name_reserved && !charge(budget, limit) {
            return false;
        }
        let fits = |end: usize| {
            end >= 1
                && rest.is_char_boundary(end)
                && !rest.as_bytes()[..end].ends_with(b"%")
                && !(end >= 2 && rest.as_bytes()[end - 2] == b'%')
        };
        let mut try_end = |end: usize, budget: &mut usize| {
            spans.push((pos, pos + end));
            if self.split(part + 1, uri, pos + end, spans, budget) {
                return true;
            }
            spans.pop();
            false
        };
        match next {
            None => limit == rest.len() && fits(limit) && try_end(limit, budget),
            Some(Part::Literal(literal)) => {
                let mut from = 1;
                while from <= limit && !rest.is_char_boundary(from) {
                    from += 1;
                }
                // The literal starts where the variable ends, at `limit` at the latest: the
                // search looks no further.
                let window = rest.len().min(limit + literal.len());
                while from <= limit {
                    let found = rest[from..window].find(literal.as_str()).map(|at| from + at);
                    // What was scanned, found or not, and the try are paid for.
                    let scanned = found.map_or(window - from, |at| at - from + 1);
                    let Some(found) = found.filter(|_| charge(budget, scanned)) else {
                        return false;
                    };
                    if fits(found) && try_end(found, budget) {
                        return true;
                    }
                    from = found + 1;
                    while from <= limit && !rest.is_char_boundary(from) {
                        from += 1;
                    }
                }
                false
            }
            Some(Part::Var { .. }) => {
                for end in 1..=limit {
                    if !charge(budget, 1) {
                        return false;
                    }
                    if fits(end) && try_end(end, budget) {
                        return true;
                    }
                }
                false
            }
        }
    }

    /// Whether `name` is a `{+name}` (reserved expansion) variable here.
    pub(crate) fn reserved(&self, name: &str) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Var { name: n, reserved: true } if n == name))
    }

    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }
}

/// Checks one `{expression}` (given whole, and its variable name without the `+`) for
/// [`UriTemplate::parse`]: RFC 6570 `varname`, `varchar *( ["."] varchar )`, where a varchar is
/// a letter, a digit, `_` or a `%XX` escape.
fn check_name(expression: &str, name: &str) -> Result<(), String> {
    const ONLY: &str = "only {var} and {+var} (RFC 6570 level 1) are supported";
    match name.chars().next() {
        None => return Err(format!("an empty expression {{{expression}}}")),
        Some(op @ ('#' | '.' | '/' | ';' | '?' | '&' | '=' | ',' | '!' | '@' | '|' | '+')) => {
            return Err(format!("operator {op:?} in {{{expression}}}: {ONLY}"));
        }
        Some(_) => {}
    }
    if name.bytes().any(|b| b == b',') {
        return Err(format!("a list of variables {{{expression}}}: {ONLY}, one variable each"));
    }
    if name.bytes().any(|b| b == b':' || b == b'*') {
        return Err(format!("a modifier in {{{expression}}}: {ONLY}"));
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let escape = crate::util::encoding::escape_at(bytes, i);
        let dot = bytes[i] == b'.' && i > 0 && bytes[i - 1] != b'.' && i + 1 < bytes.len();
        if !(escape || dot || bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            return Err(format!(
                "variable name {name:?}: letters, digits, `_`, `%XX` and inner `.` only"
            ));
        }
        i += if escape { 3 } else { 1 };
    }
    Ok(())
}

/// Spends `cost` steps of `budget` (work already done: all that is left when it costs more);
/// whether there were enough. An empty budget ends every try that follows at once.
fn charge(budget: &mut usize, cost: usize) -> bool {
    let enough = cost <= *budget;
    *budget = budget.saturating_sub(cost);
    enough
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
        assert_eq!(vars("x://{a}-{b}", "x://é-%C3%A9"), Some(vec![pair("a", "é"), pair("b", "é")]));
        assert_eq!(vars("x://{a}{b}", "x://%41%42"), Some(vec![pair("a", "A"), pair("b", "B")]));
        assert_eq!(vars("x://{a}/{+b}", "x://1/2/3"), Some(vec![pair("a", "1"), pair("b", "2/3")]));
        assert_eq!(vars("x://fixed", "x://fixed"), Some(vec![]));
        assert_eq!(UriTemplate::parse("a/{x}/{+y}").variables().collect::<Vec<_>>(), ["x", "y"]);
    }

    #[test]
    fn only_level_1_and_reserved_expressions_pass_the_check() {
        for good in ["x://{a}", "x://{+a}/{b}", "x://{a}{b}", "x://{a_1.b%41}", "x://{A}-{+B}"] {
            assert_eq!(UriTemplate::parse(good).problem, None, "{good}");
        }
        let refused = |text: &str| UriTemplate::parse(text).problem.unwrap();
        assert_eq!(refused("e://{}"), "an empty expression {}");
        assert_eq!(refused("e://{+}"), "an empty expression {+}");
        assert_eq!(refused("d://{a}/{a}"), r#"variable "a" appears twice"#);
        assert_eq!(refused("d://{a}/{+a}"), r#"variable "a" appears twice"#);
        let only = "only {var} and {+var} (RFC 6570 level 1) are supported";
        assert_eq!(refused("q://x{?q}"), format!("operator '?' in {{?q}}: {only}"));
        assert_eq!(refused("q://x{#q}"), format!("operator '#' in {{#q}}: {only}"));
        assert_eq!(refused("q://x{++q}"), format!("operator '+' in {{++q}}: {only}"));
        assert_eq!(
            refused("c://{a,b}"),
            format!("a list of variables {{a,b}}: {only}, one variable each")
        );
        assert_eq!(refused("c://{a*}"), format!("a modifier in {{a*}}: {only}"));
        assert_eq!(refused("c://{a:3}"), format!("a modifier in {{a:3}}: {only}"));
        let name = "letters, digits, `_`, `%XX` and inner `.` only";
        for bad in ["{a b}", "{a..b}", "{a.}", "{a%4}", "{a-b}", "{é}", "{a{b}"] {
            let inner = &bad[1..bad.len() - 1];
            assert_eq!(refused(bad), format!("variable name {inner:?}: {name}"), "{bad}");
        }
        assert_eq!(refused("x://{a"), "a `{` without its `}`");
        assert_eq!(refused("x://a}"), "a `}` without its `{`");
        assert_eq!(refused("x://{a}}"), "a `}` without its `{`");
    }

    #[test]
    fn a_hostile_uri_costs_a_bounded_match() {
        // Backtracking over every split was quadratic in one variable and cubic in two.
        let started = std::time::Instant::now();
        let one = format!("test://template/{}", "a/".repeat(500_000));
        assert_eq!(vars("test://template/{id}/data", &one), None);
        let two = format!("db://{}", "-".repeat(1 << 20));
        assert_eq!(vars("db://{table}-{id}/row", &two), None);
        let three = format!("x://{}", "a".repeat(1 << 16));
        assert_eq!(vars("x://{a}{b}{c}/end", &three), None);
        // Scans that passed the end of a segment, or looked for it, were not paid for.
        let dashes = format!("db://{}/x/row", "-".repeat(320_000));
        assert_eq!(vars("db://{table}-{id}/row", &dashes), None);
        let letters = format!("x://{}/", "a".repeat(400_000));
        assert_eq!(vars("x://{a}{b}", &letters), None);
        let dots = format!("y://{}/", ".".repeat(200_000));
        assert_eq!(vars("y://{a}.{b}", &dots), None);
        let long = format!("test://template/{}/data", "x".repeat(1 << 20));
        assert_eq!(vars("test://template/{id}/data", &long).map(|v| v[0].1.len()), Some(1 << 20));
        // Steps, not time, bound it (4 Mi of them); the time is only a sign: all of these
        // take milliseconds in a debug build, and took a minute before every scan was paid for
        // (seconds when a scan that overdrew the budget was not).
        assert!(started.elapsed() < std::time::Duration::from_secs(3), "{:?}", started.elapsed());
    }
}
