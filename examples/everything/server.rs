//! The conformance fixture set (`tests/interop/conformance-fixtures.md`), registered with the
//! public API: tools for every content type, logging, progress, errors, sampling and
//! elicitation; static and template resources; prompts with arguments, resources and images.
//! The fixtures the 2026-07-28 requirements added are in `modern.rs`, the tasks extension's in
//! `tasks.rs`.

use baremcp::{
    Completer, Content, Contents, Context, LogLevel, Prompt, PromptMessage, ReadError, Resource,
    ResourceTemplate, Server, Tool, ToolOutput,
};
use serde_json::{Value, json};

/// A 1x1 red PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A tiny WAV file: 8 kHz, 8-bit mono, four samples of silence.
fn wav() -> String {
    let mut bytes = b"RIFF".to_vec();
    bytes.extend_from_slice(&40u32.to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    for field in
        [16u32.to_le_bytes().to_vec(), 1u16.to_le_bytes().to_vec(), 1u16.to_le_bytes().to_vec()]
    {
        bytes.extend_from_slice(&field);
    }
    for field in [8000u32, 8000] {
        bytes.extend_from_slice(&field.to_le_bytes());
    }
    bytes.extend_from_slice(&1u16.to_le_bytes());
    bytes.extend_from_slice(&8u16.to_le_bytes());
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&4u32.to_le_bytes());
    bytes.extend_from_slice(&[128; 4]);
    baremcp::encoding::base64(&bytes)
}

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {} })
}

fn text(text: &str) -> ToolOutput {
    ToolOutput::text(text)
}

fn png() -> Content {
    Content::Image { data: PNG.into(), mime_type: "image/png".into() }
}

/// The reply to an elicitation, as the reference server words it.
fn elicited(prefix: &str, answer: &Value) -> ToolOutput {
    let action = answer["action"].as_str().unwrap_or("");
    let content = answer.get("content").cloned().unwrap_or(Value::Null);
    text(&format!("{prefix}: action={action}, content={content}"))
}

/// This file's tools, in `tools/list` order: the golden transcripts compare it byte for byte.
fn tools() -> Vec<Tool> {
    [content_tools(), utility_tools(), asking_tools(), schema_and_stream_tools()]
        .into_iter()
        .flatten()
        .collect()
}

/// Every content type: text, an image, audio, an embedded resource, and all at once.
fn content_tools() -> Vec<Tool> {
    vec![
        Tool::new("test_simple_text", "Returns a simple text response", no_arguments(), |_, _| {
            Ok(text("This is a simple text response for testing."))
        }),
        Tool::new("test_image_content", "Returns an image", no_arguments(), |_, _| {
            Ok(ToolOutput { content: vec![png()], ..Default::default() })
        }),
        Tool::new("test_audio_content", "Returns a short audio clip", no_arguments(), |_, _| {
            Ok(ToolOutput {
                content: vec![Content::Audio { data: wav(), mime_type: "audio/wav".into() }],
                ..Default::default()
            })
        }),
        Tool::new(
            "test_embedded_resource",
            "Returns an embedded resource",
            no_arguments(),
            |_, _| {
                let resource = json!({"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."});
                Ok(ToolOutput { content: vec![Content::Resource(resource)], ..Default::default() })
            },
        ),
        Tool::new(
            "test_multiple_content_types",
            "Returns text, an image and a resource",
            no_arguments(),
            |_, _| {
                let resource = json!({"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"});
                Ok(text("Multiple content types test:")
                    .with(png())
                    .with(Content::Resource(resource)))
            },
        ),
    ]
}

/// Logging, a tool error, and progress.
fn utility_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_tool_with_logging",
            "Logs three messages while it runs",
            no_arguments(),
            |_, cx| {
                for step in
                    ["Tool execution started", "Tool processing data", "Tool execution completed"]
                {
                    cx.log(LogLevel::Info, Some("everything"), step);
                }
                Ok(text("Tool with logging executed successfully"))
            },
        ),
        Tool::new(
            "test_error_handling",
            "Always fails, as a tool error",
            no_arguments(),
            |_, _| Ok(ToolOutput::error("This tool intentionally returns an error for testing")),
        ),
        Tool::new(
            "test_tool_with_progress",
            "Reports progress in three steps",
            no_arguments(),
            |_, cx: &mut Context| {
                for (step, progress) in [(0, 0.0), (1, 50.0), (2, 100.0)] {
                    cx.progress(
                        progress,
                        Some(100.0),
                        Some(&format!("Completed step {step} of 2")),
                    );
                }
                let token = cx
                    .progress_token()
                    .map_or_else(|| "no progress token".to_string(), |t| t.to_string());
                Ok(text(&token))
            },
        ),
    ]
}

/// Questions to the client: its model (sampling) and its user (elicitation forms).
fn asking_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_sampling",
            "Asks the client's model and returns its answer",
            json!({"type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}}, "required": ["prompt"]}),
            |args, cx| {
                let request = json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": args["prompt"]}}],
                    "maxTokens": 100
                });
                let answer = cx.sample(request)?;
                Ok(text(&format!(
                    "LLM response: {}",
                    answer["content"]["text"].as_str().unwrap_or("")
                )))
            },
        ),
        Tool::new(
            "test_elicitation",
            "Asks the user for a username and an email",
            json!({"type": "object", "properties": {"message": {"type": "string", "description": "The message to show the user"}}, "required": ["message"]}),
            |args, cx| {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                });
                let answer = cx.elicit(args["message"].as_str().unwrap_or(""), schema)?;
                Ok(elicited("User response", &answer))
            },
        ),
        Tool::new(
            "test_elicitation_sep1034_defaults",
            "Asks for a form whose fields have defaults",
            no_arguments(),
            |_, cx| {
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    },
                    "required": []
                });
                let answer =
                    cx.elicit("Please review and update the form fields with defaults", schema)?;
                Ok(elicited("Elicitation completed", &answer))
            },
        ),
        Tool::new(
            "test_elicitation_sep1330_enums",
            "Asks for single and multiple choices",
            no_arguments(),
            |_, cx| {
                let choices = |titles: [&str; 3]| -> Value {
                    titles
                        .iter()
                        .enumerate()
                        .map(|(i, t)| json!({"const": format!("value{}", i + 1), "title": t}))
                        .collect()
                };
                let schema = json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "description": "Pick one", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "description": "Pick one", "oneOf": choices(["First Option", "Second Option", "Third Option"])},
                        "legacyEnum": {"type": "string", "description": "Pick one", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "description": "Pick some", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "description": "Pick some", "minItems": 1, "maxItems": 3, "items": {"anyOf": choices(["First Choice", "Second Choice", "Third Choice"])}}
                    },
                    "required": []
                });
                let answer = cx.elicit("Please select options from the enum fields", schema)?;
                Ok(elicited("Elicitation completed", &answer))
            },
        ),
    ]
}

/// A 2020-12 input schema, and a tool whose stream the client reconnects to.
fn schema_and_stream_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            // Every 2020-12 keyword the suite looks for, as it lists them; the validator
            // enforces them all, `$anchor` included.
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
            |args, _| Ok(text(&format!("Received {args}"))),
        ),
        Tool::new(
            "test_reconnection",
            "Completes normally (the stream handling is the transport's)",
            no_arguments(),
            |_, _| {
                Ok(text(
                    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.",
                ))
            },
        ),
    ]
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt", |_, _| {
            Ok(vec![PromptMessage::user("This is a simple prompt for testing.")])
        })
.description("A simple prompt without arguments"),
        Prompt::new("test_prompt_with_arguments", |args, _| {
            Ok(vec![PromptMessage::user(format!("Prompt with arguments: arg1='{}', arg2='{}'", args["arg1"], args["arg2"]))])
        })
.description("A prompt with required arguments")
        .argument("arg1", Some("First test argument"), true)
        .argument("arg2", Some("Second test argument"), true),
        Prompt::new("test_prompt_with_embedded_resource", |args, _| {
            let resource = json!({"uri": args["resourceUri"], "mimeType": "text/plain", "text": "Embedded resource content for testing."});
            Ok(vec![
                PromptMessage { role: baremcp::Role::User, content: Content::Resource(resource) },
                PromptMessage::user("Please process the embedded resource above."),
            ])
        })
.description("A prompt that includes an embedded resource")
        .argument("resourceUri", Some("URI of the resource to embed"), true),
        Prompt::new("test_prompt_with_image", |_, _| {
            Ok(vec![PromptMessage { role: baremcp::Role::User, content: png() }, PromptMessage::user("Please analyze the image above.")])
        })
.description("A prompt that includes image content"),
    ]
}

/// The whole server.
pub fn build() -> Result<Server, baremcp::Error> {
    let mut server = Server::new("baremcp-everything", env!("CARGO_PKG_VERSION"))
        .title("baremcp everything")
        .instructions("A test server exposing every MCP feature: tools, resources, prompts, logging, completion.");
    for tool in tools().into_iter().chain(super::modern::tools()).chain(super::tasks::tools()) {
        server.add_tool(tool)?;
    }
    for tool in super::tasks::task_tools() {
        server.add_task_tool(tool)?;
    }
    server.add_resource(
        Resource::new("test://static-text", "static-text", |_| {
            Ok(Contents::Text("This is the content of the static text resource.".into()))
        })
        .title("Static Text Resource")
        .description("A static text resource for testing")
        .mime_type("text/plain"),
    )?;
    server.add_resource(
        Resource::new("test://static-binary", "static-binary", |_| {
            Ok(Contents::Blob(baremcp::encoding::base64_decode(PNG).expect("PNG is valid base64")))
        })
        .title("Static Binary Resource")
        .description("A static binary resource (image) for testing")
        .mime_type("image/png"),
    )?;
    server.add_resource(
        Resource::new("test://watched-resource", "watched-resource", |_| {
            Ok(Contents::Text("Watched resource content".into()))
        })
        .title("Watched Resource")
        .description("A resource that auto-updates every 3 seconds")
        .mime_type("text/plain"),
    )?;
    server.add_template(
        ResourceTemplate::new("test://template/{id}/data", "template", |vars, _| match vars.get("id") {
            Some(id) => {
                let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok(Contents::Text(data.to_string()))
            }
            None => Err(ReadError::NotFound),
        })
        .title("Resource Template")
        .description("A resource template with parameter substitution")
        .mime_type("application/json")
        .complete("id", Completer::values(["123", "456", "789"])),
    )?;
    for prompt in prompts().into_iter().chain(super::modern::prompts()) {
        server.add_prompt(prompt)?;
    }
    Ok(server)
}
