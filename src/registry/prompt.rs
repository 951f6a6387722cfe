//! Prompts a library user registers: arguments (with optional completion) and a function that
//! turns the arguments into messages.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::registry::resource::Completer;
use crate::registry::tool::{Content, Context, HandlerError};

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt's result.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, an image, audio or a resource.
    pub content: Content,
}

impl PromptMessage {
    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> PromptMessage {
        PromptMessage { role: Role::User, content: Content::Text(text.into()) }
    }

    /// The message as `prompts/get` sends it, or why its content is not what MCP allows
    /// ([`Content::problem`]).
    pub(crate) fn to_value(&self) -> Result<Value, &'static str> {
        if let Some(why) = self.content.problem() {
            return Err(why);
        }
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut content = Vec::new();
        self.content.write_json(&mut content);
        let content: Value = serde_json::from_slice(&content).unwrap_or(Value::Null);
        Ok(json!({ "role": role, "content": content }))
    }
}

/// Arguments as the client sent them (MCP prompt arguments are strings).
pub type PromptArgs = BTreeMap<String, String>;

/// Builds a prompt's messages. An error is reported to the client as invalid params (-32602)
/// with its `Display` text.
pub type PromptHandler =
    dyn Fn(&PromptArgs, &mut Context) -> Result<Vec<PromptMessage>, HandlerError>;

pub(crate) struct Argument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
    pub completer: Option<Completer>,
}

/// A prompt template, offered to users as a slash command by many clients: a name and the
/// function that turns the arguments into messages; a title, a description and the
/// arguments are set by value. Register it with [`crate::Server::add_prompt`].
///
/// ```
/// use baremcp::{Completer, Prompt, PromptMessage, Server};
///
/// let mut server = Server::new("memo", "1.0.0");
/// server.add_prompt(
///     Prompt::new("summarize", |args, _cx| {
///         Ok(vec![PromptMessage::user(format!("Summarize the memo of {}", args["day"]))])
///     })
///     .title("Summarize")
///     .description("Summarizes a memo")
///     .argument("day", Some("Which memo"), true)
///     .complete(Completer::values(["today", "tomorrow"])),
/// )?;
///
/// let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}
/// {"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"summarize","arguments":{"day":"today"}}}
/// "#;
/// let mut output = Vec::new();
/// server.serve(&mut &input[..], &mut output)?;
/// let last = String::from_utf8(output)?.lines().last().unwrap_or_default().to_string();
/// assert_eq!(
///     last,
///     r#"{"jsonrpc":"2.0","id":2,"result":{"description":"Summarizes a memo","messages":[{"content":{"text":"Summarize the memo of today","type":"text"},"role":"user"}]}}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Prompt {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) arguments: Vec<Argument>,
    pub(crate) handler: Box<PromptHandler>,
}

impl Prompt {
    /// A prompt named `name` whose messages `handler` builds; title, description and
    /// arguments are optional, as in MCP, and added with the methods below.
    pub fn new(
        name: impl Into<String>,
        handler: impl Fn(&PromptArgs, &mut Context) -> Result<Vec<PromptMessage>, HandlerError>
        + 'static,
    ) -> Prompt {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            handler: Box::new(handler),
        }
    }

    /// What the prompt is for, as listed.
    pub fn description(mut self, description: impl Into<String>) -> Prompt {
        self.description = Some(description.into());
        self
    }

    /// A human-readable display name.
    pub fn title(mut self, title: impl Into<String>) -> Prompt {
        self.title = Some(title.into());
        self
    }

    /// Declares an argument, with a description or none; `prompts/get` refuses a call that
    /// lacks a required one.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: Option<&str>,
        required: bool,
    ) -> Prompt {
        self.arguments.push(Argument {
            name: name.into(),
            description: description.map(String::from),
            required,
            completer: None,
        });
        self
    }

    /// Suggestions for the most recently declared argument.
    pub fn complete(mut self, completer: Completer) -> Prompt {
        if let Some(last) = self.arguments.last_mut() {
            last.completer = Some(completer);
        }
        self
    }

    pub(crate) fn listing(&self) -> Value {
        let mut prompt = Map::new();
        prompt.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            prompt.insert("title".into(), json!(title));
        }
        if let Some(description) = &self.description {
            prompt.insert("description".into(), json!(description));
        }
        if !self.arguments.is_empty() {
            let arguments: Vec<Value> = self
                .arguments
                .iter()
                .map(|a| {
                    let mut argument = json!({ "name": a.name, "required": a.required });
                    if let Some(description) = &a.description {
                        argument["description"] = json!(description);
                    }
                    argument
                })
                .collect();
            prompt.insert("arguments".into(), Value::Array(arguments));
        }
        Value::Object(prompt)
    }
}
