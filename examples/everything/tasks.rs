//! The tasks-extension fixtures of the conformance suite 0.2.0-alpha.12
//! (`tests/interop/conformance-fixtures.md`): a plain tool, and task tools that sleep, fail,
//! panic, ask the user, or ask before they become a task. Task handlers run on their own
//! thread, so they are `Send + Sync` and reach the client only through their `TaskContext`.

use std::time::Duration;

use baremcp::{HandlerError, TaskContext, TaskTool, Tool, ToolOutput};
use serde_json::{Value, json};

fn form(field: &str, kind: &str) -> Value {
    json!({ "type": "object", "properties": { field: { "type": kind } }, "required": [field] })
}

/// What the user accepted under `field`, as text.
fn accepted(answer: &Value, field: &str) -> Option<String> {
    (answer["action"] == "accept").then(|| match &answer["content"][field] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// Sleeps `seconds`, in steps, so a cancellation ends the wait at once.
fn slow(args: &Value, cx: &mut TaskContext) -> Result<ToolOutput, HandlerError> {
    let seconds = args["seconds"].as_f64().unwrap_or(0.0);
    if !cx.sleep(Duration::from_secs_f64(seconds)) {
        return Err("cancelled".into());
    }
    let label = args["label"].as_str().unwrap_or("job");
    Ok(ToolOutput::text(format!("Computed {label} after {seconds} s")))
}

pub fn tools() -> Vec<Tool> {
    vec![Tool::new(
        "greet",
        "Greets someone, synchronously (never a task)",
        json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }),
        |args, _| Ok(ToolOutput::text(format!("Hello, {}!", args["name"].as_str().unwrap_or("")))),
    )]
}

pub fn task_tools() -> Vec<TaskTool> {
    vec![
        TaskTool::new(
            "slow_compute",
            "Sleeps for `seconds` (0: at once), then returns; a task when the client supports tasks",
            json!({
                "type": "object",
                "properties": {
                    "seconds": { "type": "number", "minimum": 0, "maximum": 600 },
                    "label": { "type": "string" }
                },
                "required": ["seconds"]
            }),
            slow,
        ),
        TaskTool::new(
            "failing_job",
            "Runs briefly, then reports a tool error; only as a task",
            json!({ "type": "object", "properties": {} }),
            |_, cx| {
                cx.sleep(Duration::from_millis(200));
                Err("The job failed, as it always does".into())
            },
        )
        .required(),
        TaskTool::new(
            "protocol_error_job",
            "Panics: its task fails with an internal error rather than completing",
            json!({ "type": "object", "properties": {} }),
            |_, _| panic!("protocol_error_job fails on purpose"),
        ),
        TaskTool::new(
            "confirm_delete",
            "Asks the user to confirm deleting a file (nothing is deleted)",
            json!({ "type": "object", "properties": { "filename": { "type": "string" } }, "required": ["filename"] }),
            |args, cx| {
                let filename = args["filename"].as_str().unwrap_or("");
                let answer = cx.elicit("confirm", &format!("Delete {filename}?"), form("confirm", "boolean"))?;
                let confirmed = accepted(&answer, "confirm").is_some_and(|c| c == "true");
                Ok(ToolOutput::text(if confirmed { format!("Deleted {filename}") } else { format!("Kept {filename}") }))
            },
        ),
        TaskTool::new(
            "multi_input",
            "Asks two questions at once; they may be answered one at a time",
            json!({ "type": "object", "properties": {} }),
            |_, cx| {
                let answers = cx.elicit_all(&[
                    ("name", "What is your name?", form("name", "string")),
                    ("confirm", "Shall I go on?", form("confirm", "boolean")),
                ])?;
                let name = accepted(&answers[0], "name").unwrap_or_else(|| "(no name)".into());
                Ok(ToolOutput::text(format!("{name} answered both questions")))
            },
        ),
        TaskTool::new(
            "test_tool_with_task",
            "Asks for the user's name first (key user_name), then greets them from a task",
            json!({ "type": "object", "properties": {} }),
            |input, _| {
                Ok(ToolOutput::text(format!("Hello, {}, from a task", input["user_name"].as_str().unwrap_or(""))))
            },
        )
        .required()
        .prepare(|_, cx| {
            let answer = cx.key("user_name").elicit("What is your name?", form("name", "string"))?;
            Ok(json!({ "user_name": accepted(&answer, "name").unwrap_or_else(|| "stranger".into()) }))
        }),
    ]
}
