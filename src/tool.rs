//! What a library user writes: a [`Tool`] (name, schema, handler), the [`ToolOutput`] a handler
//! returns, its [`Content`] blocks, and the [`Context`] a handler is given.

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

impl Content {
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Content::Text(text) => json!({ "type": "text", "text": text }),
            Content::Image { data, mime_type } => json!({ "type": "image", "data": data, "mimeType": mime_type }),
            Content::Audio { data, mime_type } => json!({ "type": "audio", "data": data, "mimeType": mime_type }),
            Content::ResourceLink(link) => {
                let mut block = json!({ "type": "resource_link" });
                merge(&mut block, link);
                block
            }
            Content::Resource(resource) => json!({ "type": "resource", "resource": resource }),
        }
    }
}

fn merge(into: &mut Value, from: &Value) {
    if let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) {
        for (key, value) in from {
            into.entry(key.clone()).or_insert_with(|| value.clone());
        }
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

    pub(crate) fn into_value(self) -> Value {
        let mut content: Vec<Value> = self.content.iter().map(Content::to_value).collect();
        let mut result = Map::new();
        if let Some(structured) = self.structured {
            content.push(json!({ "type": "text", "text": structured.to_string() }));
            result.insert("structuredContent".into(), structured);
        }
        result.insert("content".into(), Value::Array(content));
        if self.is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(result)
    }
}

/// What a handler may know about the request it serves.
pub struct Context<'a> {
    pub(crate) id: &'a Id,
    pub(crate) era: Era,
    pub(crate) legacy_version: Option<&'static str>,
}

impl Context<'_> {
    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> &Id {
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
