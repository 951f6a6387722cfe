//! The fixtures the conformance suite 0.2.0-alpha.12 added for 2026-07-28
//! (`tests/interop/conformance-fixtures.md`): multi round-trip tools whose questions carry
//! the keys the suite answers under, a prompt that asks too, a tool that needs a capability
//! the client may lack, per-request logging, and a tool with an `x-mcp-header` parameter.
//! Each also works in the legacy era, where the questions are server requests.

use baremcp::{ClientError, Context, LogLevel, Prompt, PromptMessage, Tool, ToolOutput};
use serde_json::{Value, json};

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// A form of one required field.
fn form(field: &str, kind: &str) -> Value {
    json!({ "type": "object", "properties": { field: { "type": kind } }, "required": [field] })
}

/// The user's answer to a one-field form, or why there is none.
fn field(answer: &Value, field: &str) -> String {
    match answer["action"].as_str() {
        Some("accept") => match &answer["content"][field] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        other => format!("({})", other.unwrap_or("no answer")),
    }
}

fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": text } }], "maxTokens": max_tokens })
}

fn name(cx: &mut Context, key: &str, message: &str) -> Result<String, ClientError> {
    Ok(field(&cx.key(key).elicit(message, form("name", "string"))?, "name"))
}

/// Asks every question before giving up, so one `InputRequiredResult` carries them all.
fn all<A, B, C>(
    a: Result<A, ClientError>,
    b: Result<B, ClientError>,
    c: Result<C, ClientError>,
) -> Result<(A, B, C), ClientError> {
    Ok((a?, b?, c?))
}

/// The 2026-07-28 tools, in `tools/list` order (after `server.rs`'s): the golden transcripts
/// compare it byte for byte.
pub fn tools() -> Vec<Tool> {
    [one_question_tools(), retry_tools(), capability_tools(), request_tools()]
        .into_iter()
        .flatten()
        .collect()
}

/// One question of each kind, under the key the suite answers it by.
fn one_question_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_input_required_result_elicitation",
            "Asks for the user's name (key user_name), then greets them",
            no_arguments(),
            |_, cx| {
                Ok(ToolOutput::text(format!(
                    "Hello, {}!",
                    name(cx, "user_name", "What is your name?")?
                )))
            },
        ),
        Tool::new(
            "test_input_required_result_sampling",
            "Asks the client's model a question (key capital_question)",
            no_arguments(),
            |_, cx| {
                let answer = cx
                    .key("capital_question")
                    .sample(sampling("What is the capital of France?", 100))?;
                Ok(ToolOutput::text(format!(
                    "LLM response: {}",
                    answer["content"]["text"].as_str().unwrap_or("")
                )))
            },
        ),
        Tool::new(
            "test_input_required_result_list_roots",
            "Asks for the client's roots (key client_roots) and lists them",
            no_arguments(),
            |_, cx| {
                let answer = cx.key("client_roots").roots()?;
                let uris: Vec<&str> = answer["roots"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["uri"].as_str())
                    .collect();
                Ok(ToolOutput::text(format!("Roots: {}", uris.join(", "))))
            },
        ),
    ]
}

/// Retries: the signed `requestState` carried back (verified, or refused when tampered
/// with), and questions asked at once or round by round.
fn retry_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_input_required_result_request_state",
            "Asks for a confirmation (key confirm); the retry's signed requestState is verified",
            no_arguments(),
            |_, cx| {
                let answer = cx.key("confirm").elicit("Please confirm", form("ok", "boolean"))?;
                Ok(ToolOutput::text(format!("state-ok: confirmed={}", field(&answer, "ok"))))
            },
        ),
        Tool::new(
            "test_input_required_result_multiple_inputs",
            "Asks three questions at once: user_name, greeting (sampling) and client_roots",
            no_arguments(),
            |_, cx| {
                let user = name(cx, "user_name", "What is your name?");
                let greeting = cx.key("greeting").sample(sampling("Generate a greeting", 50));
                let roots = cx.key("client_roots").roots();
                let (user, greeting, roots) = all(user, greeting, roots)?;
                let greeting = greeting["content"]["text"].as_str().unwrap_or("").to_string();
                let count = roots["roots"].as_array().map_or(0, Vec::len);
                Ok(ToolOutput::text(format!("{greeting} {user} ({count} roots)")))
            },
        ),
        Tool::new(
            "test_input_required_result_multi_round",
            "Asks two questions, one round each (keys step1, step2)",
            no_arguments(),
            |_, cx| {
                let user = name(cx, "step1", "Step 1: What is your name?")?;
                let color = cx
                    .key("step2")
                    .elicit("Step 2: What is your favorite color?", form("color", "string"))?;
                Ok(ToolOutput::text(format!("{user} likes {}", field(&color, "color"))))
            },
        ),
        Tool::new(
            "test_input_required_result_tampered_state",
            "Asks for a confirmation (key confirm); a changed requestState is refused",
            no_arguments(),
            |_, cx| {
                let answer = cx.key("confirm").elicit("Please confirm", form("ok", "boolean"))?;
                Ok(ToolOutput::text(format!("confirmed={}", field(&answer, "ok"))))
            },
        ),
    ]
}

/// Questions only through the capabilities the client declared, or failing without one.
fn capability_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_input_required_result_capabilities",
            "Asks only through the capabilities the client declared (sampling, elicitation)",
            no_arguments(),
            |_, cx| {
                let mut answers = Vec::new();
                let mut waiting = None;
                if cx.client_supports("sampling") {
                    match cx.key("sampling_request").sample(sampling("Say hello", 20)) {
                        Ok(answer) => {
                            answers.push(format!("sampling: {}", answer["content"]["text"]))
                        }
                        Err(e) => waiting = Some(e),
                    }
                }
                if cx.client_supports("elicitation") {
                    match name(cx, "elicitation_request", "What is your name?") {
                        Ok(user) => answers.push(format!("elicitation: {user}")),
                        Err(e) => waiting = waiting.or(Some(e)),
                    }
                }
                if let Some(e) = waiting {
                    return Err(e.into());
                }
                if answers.is_empty() {
                    answers.push("the client declared neither sampling nor elicitation".into());
                }
                Ok(ToolOutput::text(answers.join("; ")))
            },
        ),
        Tool::new(
            "test_missing_capability",
            "Needs the client's sampling capability: without it the call fails with -32021",
            no_arguments(),
            |_, cx| {
                let answer = cx.sample(sampling("Say hello", 20))?;
                Ok(ToolOutput::text(format!(
                    "LLM response: {}",
                    answer["content"]["text"].as_str().unwrap_or("")
                )))
            },
        ),
    ]
}

/// What the request or its transport decides: a question on an open stream, logs only when
/// asked for, an argument mirrored into an HTTP header.
fn request_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_streaming_elicitation",
            "Asks the user while the call is open: an InputRequiredResult, never a server request, in 2026-07-28",
            no_arguments(),
            |_, cx| {
                Ok(ToolOutput::text(format!(
                    "Hello, {}!",
                    name(cx, "user_name", "What is your name?")?
                )))
            },
        ),
        Tool::new(
            "test_logging_tool",
            "Logs three messages, sent only when the request asked for logs",
            no_arguments(),
            |_, cx| {
                for step in
                    ["Tool execution started", "Tool processing data", "Tool execution completed"]
                {
                    cx.log(LogLevel::Info, Some("everything"), step);
                }
                Ok(ToolOutput::text("Tool with logging executed successfully"))
            },
        ),
        Tool::new(
            "test_custom_header",
            "Echoes a region that HTTP clients also send as the Mcp-Param-Region header",
            json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "description": "A region, mirrored into Mcp-Param-Region", "x-mcp-header": "Region" }
                },
                "required": ["region"]
            }),
            |args, _| {
                Ok(ToolOutput::text(format!("Region: {}", args["region"].as_str().unwrap_or(""))))
            },
        ),
    ]
}

pub fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_input_required_result_prompt", |_, cx| {
            let answer = cx
                .key("user_context")
                .elicit("What context should the prompt use?", form("context", "string"))?;
            Ok(vec![PromptMessage::user(format!(
                "Use this context: {}",
                field(&answer, "context")
            ))])
        })
        .description("A prompt that asks the user for its context first (key user_context)"),
    ]
}
