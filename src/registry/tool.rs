//! What a library user writes: a [`Tool`] (name, schema, handler), the [`ToolOutput`] a handler
//! returns, and its [`Content`] blocks.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

pub use crate::conn::context::Context;
use crate::registry::describe::Describe;
use crate::registry::typed_args::{DecodeError, decode};
use crate::schema::Problem;

/// What a handler fails with: any error, boxed, so `?` works on an `io::Error`, a
/// [`crate::ClientError`] or a `&str`. The model sees its `Display` text in an
/// `isError: true` result; the server carries on.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// A tool handler as the server calls it: the validated arguments (always an object) and the
/// call's context in, the output or an error out.
pub type Handler = dyn Fn(&Value, &mut Context) -> Result<ToolOutput, HandlerError>;

/// A tool: a name, a description, the JSON Schema of its arguments, and the function that
/// runs it. Register it with [`crate::Server::add_tool`].
///
/// [`Tool::typed`] hands the handler the arguments decoded into a type of yours, and lists
/// that type's schema ([`Describe`], which [`crate::tool_args!`] derives from the type's own
/// declaration); [`Tool::typed_with_schema`] does the same with a schema you write;
/// [`Tool::new`] hands the handler the JSON value. Every call's arguments are validated
/// against the schema before the handler runs; a call that does not satisfy it gets an
/// `isError` result listing what is wrong, with JSON Pointers. Optional parts are set by
/// value, each method taking and returning the tool: `.title(..)`, `.output_schema(..)`,
/// `.annotations(..)`, `.structured_text(..)`.
///
/// Handlers are `Fn` and run on the serving thread, one call at a time (a request that
/// arrives while a handler waits on the client is queued, not run): a tool that keeps state
/// holds it in a `Cell` or `RefCell` it captures, and an `Rc` shares it between tools.
/// Handlers are not `FnMut` because [`crate::Server::serve`] takes `&self`, so one
/// registered server can serve stream after stream (or, through another transport, many
/// sessions); the state a handler keeps is the handler's to guard, not the server's.
///
/// ```
/// use std::cell::Cell;
///
/// use baremcp::{Json, Server, Tool, tool_args};
/// use serde::Deserialize;
/// use serde_json::json;
///
/// tool_args! {
///     #[derive(Deserialize)]
///     struct Add {
///         a: i64,
///         b: i64,
///     }
/// }
///
/// let calls = Cell::new(0);
/// let add = Tool::typed("add", "Adds two integers", move |Add { a, b }, _cx| {
///     calls.set(calls.get() + 1);
///     Ok(Json(json!({"sum": a.checked_add(b).ok_or("the sum overflows")?, "calls": calls.get()})))
/// })
/// .title("Adder");
///
/// let mut server = Server::new("calculator", "1.0.0");
/// let warnings = server.add_tool(add)?;
/// assert!(warnings.is_empty());
/// # Ok::<(), baremcp::Error>(())
/// ```
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Option<Value>,
    pub(crate) handler: Box<Handler>,
    /// A typed tool's check that a value decodes into its argument type, for the schema's
    /// `examples` at registration.
    pub(crate) decodes: Option<Decodes>,
    /// A derived schema's check against the type's `Deserialize` (`Describe::check_agreement`).
    pub(crate) agrees: Option<fn(&mut Vec<Problem>)>,
    /// Whether structured content is also sent as a text block.
    pub(crate) structured_text: bool,
}

/// Whether a value decodes into a typed tool's argument type.
type Decodes = fn(&Value) -> Result<(), DecodeError>;

impl Tool {
    /// A tool whose handler gets the arguments as JSON: an object that satisfies
    /// `input_schema` (a JSON Schema with `"type": "object"`).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(&Value, &mut Context) -> Result<ToolOutput, HandlerError> + 'static,
    ) -> Tool {
        Tool {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            annotations: None,
            handler: Box::new(handler),
            decodes: None,
            agrees: None,
            structured_text: true,
        }
    }

    /// A tool whose handler gets the arguments decoded into `T`, whose schema ([`Describe`])
    /// is the tool's `inputSchema`: declare `T` with [`crate::tool_args!`] and the model sees
    /// its fields, which of them are required, their bounds and their doc comments. The
    /// handler returns anything that converts into a [`ToolOutput`]: a `String` or `&str`
    /// (one text block), [`Json`] of any `Serialize` value (structured content), or a
    /// `ToolOutput`.
    ///
    /// Arguments are validated against the schema first, then decoded; either failing gets
    /// an `isError` result naming the JSON Pointer of what did not fit. At registration
    /// [`crate::Server::add_tool`] checks that the schema's names agree with what `T`'s
    /// `Deserialize` reads ([`crate::Error::Mismatch`] otherwise) and that the schema's
    /// `examples`, its fields' too (and their `default`), decode into `T`, and that the
    /// schema's own (and a nested type's) pass it ([`crate::Error::InvalidExample`]).
    ///
    /// ```
    /// use baremcp::{Server, Tool, tool_args};
    /// use serde::Deserialize;
    ///
    /// tool_args! {
    ///     #[derive(Deserialize)]
    ///     struct Repeat {
    ///         /// What to repeat.
    ///         text: String,
    ///         /// How many times.
    ///         #[schema(maximum = 10)]
    ///         times: u8,
    ///     }
    /// }
    ///
    /// let mut server = Server::new("echo", "1.0.0");
    /// server.add_tool(Tool::typed("repeat", "Repeats a text", |args: Repeat, _cx| {
    ///     Ok(args.text.repeat(args.times.into()))
    /// }))?;
    /// # Ok::<(), baremcp::Error>(())
    /// ```
    pub fn typed<T, O>(
        name: impl Into<String>,
        description: impl Into<String>,
        handler: impl Fn(T, &mut Context) -> Result<O, HandlerError> + 'static,
    ) -> Tool
    where
        T: Describe + DeserializeOwned + 'static,
        O: Into<ToolOutput>,
    {
        Tool {
            agrees: Some(|found| T::check_agreement("", found)),
            ..Tool::typed_with_schema(name, description, T::schema(), handler)
        }
    }

    /// A tool whose handler gets the arguments decoded into `T`, after they passed
    /// `input_schema`, which you write: for a type whose serde attributes
    /// [`crate::tool_args!`] does not follow, or a schema that says more than a type can
    /// (or one made by another crate, such as schemars: see the crate docs).
    ///
    /// The schema is what the model sees; `T` only says how to read what passed it.
    /// Arguments that pass the schema but do not decode (the schema allows more than `T`
    /// does) get an `isError` result naming the JSON Pointer of the value that did not fit.
    /// So that the two agree at least on the schema's own `examples`, registration refuses
    /// the tool when one of them does not decode into `T`, or does not pass the schema.
    ///
    /// ```
    /// use baremcp::{Server, Tool};
    /// use serde::Deserialize;
    /// use serde_json::json;
    ///
    /// #[derive(Deserialize)]
    /// struct Shout {
    ///     #[serde(rename = "message")]
    ///     text: String,
    /// }
    ///
    /// let schema = json!({
    ///     "type": "object",
    ///     "properties": {"message": {"type": "string", "minLength": 1}},
    ///     "required": ["message"],
    ///     "examples": [{"message": "hello"}]
    /// });
    /// let mut server = Server::new("loud", "1.0.0");
    /// server.add_tool(Tool::typed_with_schema("shout", "Shouts", schema, |args: Shout, _cx| {
    ///     Ok(args.text.to_uppercase())
    /// }))?;
    /// # Ok::<(), baremcp::Error>(())
    /// ```
    pub fn typed_with_schema<T, O>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(T, &mut Context) -> Result<O, HandlerError> + 'static,
    ) -> Tool
    where
        T: DeserializeOwned + 'static,
        O: Into<ToolOutput>,
    {
        let name = name.into();
        let tool_name = name.clone();
        let decoding = move |args: &Value, cx: &mut Context| match decode::<T>(args) {
            Ok(args) => handler(args, cx).map(Into::into),
            Err(e) => {
                Ok(ToolOutput::error(format!("invalid arguments for tool {tool_name}:\n{e}")))
            }
        };
        Tool {
            decodes: Some(|value| decode::<T>(value).map(drop)),
            ..Tool::new(name, description, input_schema, decoding)
        }
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// A schema every successful result's `structuredContent` must satisfy. Any JSON Schema
    /// from 2026-07-28; before, MCP allows only `"type": "object"` at its root, so a legacy
    /// session is listed the tool without another one (its results are still checked).
    pub fn output_schema(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// Hints such as `{"readOnlyHint": true}`, listed as given.
    pub fn annotations(mut self, annotations: Value) -> Tool {
        self.annotations = Some(annotations);
        self
    }

    /// Whether a result's structured content is also sent as JSON text in a last text block
    /// (default `true`). MCP asks for that copy (from 2025-06-18) so that clients which read
    /// only `content` see the result; a server whose clients all read `structuredContent`
    /// can spare the model the duplicate with `false`.
    ///
    /// ```
    /// use baremcp::{Json, Tool};
    /// use serde_json::json;
    ///
    /// let tool = Tool::new("now", "The time", json!({"type": "object"}), |_, _| {
    ///     Ok(Json(json!({"hour": 12})).into())
    /// })
    /// .structured_text(false);
    /// ```
    pub fn structured_text(mut self, on: bool) -> Tool {
        self.structured_text = on;
        self
    }

    /// The tool as `tools/list` shows it.
    pub(crate) fn listing(&self) -> Value {
        let mut tool = Map::new();
        tool.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            tool.insert("title".into(), json!(title));
        }
        tool.insert("description".into(), json!(self.description));
        tool.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(schema) = &self.output_schema {
            tool.insert("outputSchema".into(), schema.clone());
        }
        if let Some(annotations) = &self.annotations {
            tool.insert("annotations".into(), annotations.clone());
        }
        Value::Object(tool)
    }
}

/// One block of a tool result or a prompt message.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Text.
    Text(String),
    /// An image.
    Image {
        /// The image, base64-encoded.
        data: String,
        /// Its MIME type, such as `image/png`.
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// The sound, base64-encoded.
        data: String,
        /// Its MIME type, such as `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource: an object with the strings `uri` and `name` at least (fields as
    /// the MCP `ResourceLink`). Any other value is not sent: see [`ToolOutput`].
    ResourceLink(Value),
    /// An embedded resource: `{"uri", "mimeType"?, "text" | "blob"}`, the strings of the MCP
    /// `TextResourceContents` or `BlobResourceContents` (`blob` in base64). Any other value is
    /// not sent: see [`ToolOutput`].
    Resource(Value),
}

impl Content {
    /// Why the block is not what MCP's `ContentBlock` allows, for the two kinds whose fields
    /// are given as JSON; `None` when it is.
    pub(crate) fn problem(&self) -> Option<&'static str> {
        let string = |value: &Value, key: &str| value.get(key).is_some_and(Value::is_string);
        match self {
            Content::ResourceLink(link) if !(string(link, "uri") && string(link, "name")) => {
                Some(r#"a resource_link block needs an object with the strings "uri" and "name""#)
            }
            Content::Resource(resource)
                if !(string(resource, "uri")
                    && (string(resource, "text") || string(resource, "blob"))) =>
            {
                Some(
                    r#"a resource block needs an object with the strings "uri" and "text" or "blob""#,
                )
            }
            _ => None,
        }
    }

    /// Appends the block as JSON (`type` first, as MCP documents it).
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Content::Text(text) => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                push_str(out, text);
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                let kind: &[u8] =
                    if matches!(self, Content::Image { .. }) { b"image" } else { b"audio" };
                out.extend_from_slice(br#"{"type":""#);
                out.extend_from_slice(kind);
                out.extend_from_slice(br#"","data":"#);
                push_str(out, data);
                out.extend_from_slice(br#","mimeType":"#);
                push_str(out, mime_type);
            }
            Content::ResourceLink(link) => {
                out.extend_from_slice(br#"{"type":"resource_link""#);
                for (key, value) in
                    link.as_object().into_iter().flatten().filter(|(key, _)| *key != "type")
                {
                    out.push(b',');
                    push_json(out, key);
                    out.push(b':');
                    push_json(out, value);
                }
            }
            Content::Resource(resource) => {
                out.extend_from_slice(br#"{"type":"resource","resource":"#);
                push_json(out, resource);
            }
        }
        out.push(b'}');
    }
}

/// Appends `text` as a JSON string: copied as it is when nothing in it needs escaping (most
/// text, and all base64), else through serde_json.
fn push_str(out: &mut Vec<u8>, text: &str) {
    if crate::wire::json_string::plain_len(text.as_bytes()) == text.len() {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        push_json(out, text);
    }
}

/// Appends `value` as JSON. Writing into a `Vec` cannot fail.
fn push_json(out: &mut Vec<u8>, value: &(impl Serialize + ?Sized)) {
    let _ = serde_json::to_writer(&mut *out, value);
}

/// What a tool returns: content blocks, optional structured content, and whether it failed.
///
/// A typed handler may return anything that converts into one: `String` and `&str` become
/// one text block, [`Json`] becomes structured content. An output with a
/// [`Content::ResourceLink`] or [`Content::Resource`] block whose JSON lacks what MCP requires
/// of it is not sent: the client gets an `isError` result naming the block instead.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// The blocks of `content`, in order.
    pub content: Vec<Content>,
    /// `structuredContent`; its JSON text is also sent as a last text block unless the tool
    /// says otherwise ([`Tool::structured_text`]).
    pub structured: Option<Value>,
    /// `isError`: the call failed in a way the model should see and may correct.
    pub is_error: bool,
}

impl From<String> for ToolOutput {
    fn from(text: String) -> ToolOutput {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> ToolOutput {
        ToolOutput::text(text)
    }
}

/// Any `Serialize` value, returned as a tool's structured content (`structuredContent`, and
/// its JSON as a text block unless [`Tool::structured_text`] turns that off). A value that
/// does not serialize to JSON (a map with non-string keys) becomes an `isError` result saying
/// so; a float that is not finite serializes as `null`, as serde_json writes it.
///
/// Only 2026-07-28 allows any JSON value as `structuredContent`; before, it is an object. A
/// legacy session gets a value of another kind (an array, a number, `null`) as its JSON text
/// in the last text block only (even under `structured_text(false)`), and no
/// `structuredContent`. Return a struct or a map to reach every client's `structuredContent`.
///
/// ```
/// use baremcp::{Json, ToolOutput};
/// use serde_json::json;
///
/// #[derive(serde::Serialize)]
/// struct Sum {
///     sum: i64,
/// }
///
/// let output: ToolOutput = Json(Sum { sum: 6 }).into();
/// assert_eq!(output.structured, Some(json!({"sum": 6})));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> From<Json<T>> for ToolOutput {
    fn from(Json(value): Json<T>) -> ToolOutput {
        match serde_json::to_value(value) {
            Ok(value) => ToolOutput::structured(value),
            Err(e) => ToolOutput::error(format!("tool output does not serialize: {e}")),
        }
    }
}

impl ToolOutput {
    /// One text block.
    #[inline]
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput { content: vec![Content::Text(text.into())], ..ToolOutput::default() }
    }

    /// Structured content; its JSON text is added as a text block for clients that only read
    /// `content`, as the MCP spec asks (unless [`Tool::structured_text`] turns that off).
    pub fn structured(value: Value) -> ToolOutput {
        ToolOutput { structured: Some(value), ..ToolOutput::default() }
    }

    /// A failed call the model should see: one text block and `isError: true`.
    pub fn error(message: impl Into<String>) -> ToolOutput {
        ToolOutput { is_error: true, ..ToolOutput::text(message) }
    }

    /// Appends a content block.
    pub fn with(mut self, block: Content) -> ToolOutput {
        self.content.push(block);
        self
    }

    /// An error result naming the output's first block that MCP does not allow
    /// ([`Content::problem`]), to send in its place: a tool's fault, shown to the client as
    /// such rather than sent as invalid JSON for it to trip on. `None` for a valid output.
    pub(crate) fn refused(&self, tool: &str) -> Option<ToolOutput> {
        let mut blocks = self.content.iter().enumerate();
        let (i, why) = blocks.find_map(|(i, block)| Some((i, block.problem()?)))?;
        Some(ToolOutput::error(format!("tool {tool} returned content {i}: {why}")))
    }

    /// Appends the `CallToolResult` as JSON, written in one pass with fields in sorted order,
    /// as every other result is written. `server_info` (JSON text) is given for a 2026-07-28
    /// request, whose result also carries `_meta` and `resultType`; `structured_text` says
    /// whether structured content is also written as a text block.
    pub(crate) fn write_json(
        &self,
        out: &mut Vec<u8>,
        server_info: Option<&str>,
        structured_text: bool,
    ) {
        let texts: usize =
            self.content.iter().map(|c| if let Content::Text(t) = c { t.len() } else { 0 }).sum();
        out.reserve(128 + texts);
        out.push(b'{');
        if let Some(info) = server_info {
            out.extend_from_slice(br#""_meta":{"io.modelcontextprotocol/serverInfo":"#);
            out.extend_from_slice(info.as_bytes());
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(br#""content":["#);
        // Clients that only read `content` get the structured value as JSON text too.
        let structured_text = match &self.structured {
            Some(value) if structured_text => Some(Content::Text(value.to_string())),
            _ => None,
        };
        for (i, block) in self.content.iter().chain(structured_text.as_ref()).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            block.write_json(out);
        }
        out.push(b']');
        if self.is_error {
            out.extend_from_slice(br#","isError":true"#);
        }
        if server_info.is_some() {
            out.extend_from_slice(br#","resultType":"complete""#);
        }
        if let Some(value) = &self.structured {
            out.extend_from_slice(br#","structuredContent":"#);
            push_json(out, value);
        }
        out.push(b'}');
    }
}
