//! What a library user writes: a [`Tool`] (name, schema, handler), the [`ToolOutput`] a handler
//! returns, and its [`Content`] blocks.

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use crate::context::Context;

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
    /// Appends the block as JSON (`type` first, as MCP documents it).
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Content::Text(text) => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                push_str(out, text);
            }
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                let kind: &[u8] = if matches!(self, Content::Image { .. }) { b"image" } else { b"audio" };
                out.extend_from_slice(br#"{"type":""#);
                out.extend_from_slice(kind);
                out.extend_from_slice(br#"","data":"#);
                push_str(out, data);
                out.extend_from_slice(br#","mimeType":"#);
                push_str(out, mime_type);
            }
            Content::ResourceLink(link) => {
                out.extend_from_slice(br#"{"type":"resource_link""#);
                for (key, value) in link.as_object().into_iter().flatten().filter(|(key, _)| *key != "type") {
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
    if crate::scan::plain_len(text.as_bytes()) == text.len() {
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

    /// Appends the `CallToolResult` as JSON, written in one pass with fields in sorted order,
    /// as every other result is written. `server_info` (JSON text) is given for a 2026-07-28
    /// request, whose result also carries `_meta` and `resultType`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>, server_info: Option<&str>) {
        let texts: usize = self.content.iter().map(|c| if let Content::Text(t) = c { t.len() } else { 0 }).sum();
        out.reserve(128 + texts);
        out.push(b'{');
        if let Some(info) = server_info {
            out.extend_from_slice(br#""_meta":{"io.modelcontextprotocol/serverInfo":"#);
            out.extend_from_slice(info.as_bytes());
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(br#""content":["#);
        // Clients that only read `content` get the structured value as JSON text too.
        let structured_text = self.structured.as_ref().map(|value| Content::Text(value.to_string()));
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
