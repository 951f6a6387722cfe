//! What a library user writes: a [`Tool`] (name, schema, handler), the [`ToolOutput`] a handler
//! returns, its [`Content`] blocks, and the [`Context`] a handler is given.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use crate::era::Era;
use crate::jsonrpc::Id;

/// A tool handler: the validated arguments (always an object) and the call's context in, the
/// output or a message for the model out. `Err(message)` becomes an `isError: true` result.
pub type Handler = dyn Fn(&Value, &mut Context) -> Result<ToolOutput, String>;

/// A tool as registered with [`crate::Server::add_tool`].
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Option<Value>,
    pub(crate) handler: Box<Handler>,
}

impl Tool {
    /// A tool whose arguments are checked against `input_schema` (a JSON Schema with
    /// `"type": "object"`) before `handler` runs.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(&Value, &mut Context) -> Result<ToolOutput, String> + 'static,
    ) -> Tool {
        Tool {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema: None,
            annotations: None,
            handler: Box::new(handler),
        }
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// A schema every successful result's `structuredContent` must satisfy.
    pub fn output_schema(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// Hints such as `{"readOnlyHint": true}`, listed as given.
    pub fn annotations(mut self, annotations: Value) -> Tool {
        self.annotations = Some(annotations);
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

/// One block of a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    /// Base64 data and its MIME type.
    Image {
        data: String,
        mime_type: String,
    },
    /// Base64 data and its MIME type.
    Audio {
        data: String,
        mime_type: String,
    },
    /// A link to a resource: `uri` and `name` at least (fields as the MCP `ResourceLink`).
    ResourceLink(Value),
    /// An embedded resource: `{"uri", "mimeType"?, "text" | "blob"}`.
    Resource(Value),
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        match self {
            Content::Text(text) => {
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                map.serialize_entry("type", if matches!(self, Content::Image { .. }) { "image" } else { "audio" })?;
                map.serialize_entry("data", data)?;
                map.serialize_entry("mimeType", mime_type)?;
            }
            Content::ResourceLink(link) => {
                map.serialize_entry("type", "resource_link")?;
                for (key, value) in link.as_object().into_iter().flatten().filter(|(key, _)| *key != "type") {
                    map.serialize_entry(key, value)?;
                }
            }
            Content::Resource(resource) => {
                map.serialize_entry("type", "resource")?;
                map.serialize_entry("resource", resource)?;
            }
        }
        map.end()
    }
}

/// What a tool returns: content blocks, optional structured content, and whether it failed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl ToolOutput {
    /// One text block.
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput { content: vec![Content::Text(text.into())], ..ToolOutput::default() }
    }

    /// Structured content; its JSON text is added as a text block for clients that only read
    /// `content`, as the MCP spec asks.
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

    /// The `CallToolResult` as JSON text, written in one pass. `server_info` is given for a
    /// 2026-07-28 request, whose result also carries `_meta` and `resultType`.
    pub(crate) fn to_json(&self, server_info: Option<&Value>) -> String {
        serde_json::to_string(&ResultJson { output: self, server_info }).unwrap_or_default()
    }
}

/// A tool result's wire form: fields in sorted order, as every other result is written.
struct ResultJson<'a> {
    output: &'a ToolOutput,
    server_info: Option<&'a Value>,
}

impl Serialize for ResultJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ToolOutput { content, structured, is_error } = self.output;
        let mut map = serializer.serialize_map(None)?;
        if let Some(info) = self.server_info {
            map.serialize_entry("_meta", &ServerInfoMeta(info))?;
        }
        match structured {
            // Clients that only read `content` get the structured value as JSON text.
            Some(value) => {
                let text = Content::Text(value.to_string());
                map.serialize_entry("content", &Chain(content, &text))?;
            }
            None => map.serialize_entry("content", content)?,
        }
        if *is_error {
            map.serialize_entry("isError", &true)?;
        }
        if self.server_info.is_some() {
            map.serialize_entry("resultType", "complete")?;
        }
        if let Some(value) = structured {
            map.serialize_entry("structuredContent", value)?;
        }
        map.end()
    }
}

struct ServerInfoMeta<'a>(&'a Value);

impl Serialize for ServerInfoMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(crate::era::SERVER_INFO_KEY, self.0)?;
        map.end()
    }
}

/// A list of blocks and one more, serialized as one array.
struct Chain<'a>(&'a [Content], &'a Content);

impl Serialize for Chain<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len() + 1))?;
        for block in self.0.iter().chain(std::iter::once(self.1)) {
            seq.serialize_element(block)?;
        }
        seq.end()
    }
}

/// What a handler may know about the request it serves.
pub struct Context<'a> {
    pub(crate) id: &'a Id<'a>,
    pub(crate) era: Era,
    pub(crate) legacy_version: Option<&'static str>,
}

impl Context<'_> {
    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> &Id<'_> {
        self.id
    }

    /// The protocol version this request speaks: its `_meta` version (2026-07-28) or the one
    /// negotiated by `initialize`.
    pub fn protocol_version(&self) -> &'static str {
        match self.era {
            Era::Modern(version) => version,
            Era::Legacy => self.legacy_version.unwrap_or(crate::era::LEGACY_VERSIONS[0]),
        }
    }
}
