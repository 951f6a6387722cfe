//! The built-in catalog that plain `baremcp` serves: the `hello` and `calculate` tools and the
//! `code_review` prompt.

mod calculate;
mod libm;

use calculate::evaluate;

use serde_json::{Value, json};

use baremcp::{Completer, Context, Prompt, PromptMessage, Server, Tool, ToolOutput};

/// The binary's server with its built-in tools registered.
pub fn builtin() -> Server {
    let mut server = Server::new("baremcp", env!("CARGO_PKG_VERSION"))
        .title("baremcp")
        .description("A strict, synchronous MCP server: built-in hello and calculate tools, a code_review prompt");
    for tool in [hello(), calculate()] {
        if let Err(e) = server.add_tool(tool) {
            unreachable!("built-in tool does not register: {e}");
        }
    }
    if let Err(e) = server.add_prompt(code_review()) {
        unreachable!("built-in prompt does not register: {e}");
    }
    server
}

fn hello() -> Tool {
    Tool::new(
        "hello",
        "Greets someone by name",
        json!({
            "type": "object",
            "properties": { "name": { "type": "string", "minLength": 1, "description": "Who to greet" } },
            "required": ["name"],
            "additionalProperties": false
        }),
        |args: &Value, _: &mut Context| {
            let name = args["name"].as_str().unwrap_or_default();
            let mut greeting = String::with_capacity(name.len() + 8);
            greeting.extend(["Hello, ", name, "!"]);
            Ok(ToolOutput::text(greeting))
        },
    )
    .title("Hello")
    .annotations(json!({ "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false }))
}

fn calculate() -> Tool {
    Tool::new(
        "calculate",
        "Evaluates an arithmetic expression: numbers, + - * / % ^, parentheses, unary minus, \
         pi, e, and sqrt abs floor ceil round min max ln log10 sin cos tan",
        json!({
            "type": "object",
            "properties": { "expression": { "type": "string", "description": "For example (1 + 2) * sqrt(16)" } },
            "required": ["expression"],
            "additionalProperties": false
        }),
        |args: &Value, _: &mut Context| {
            let value = evaluate(args["expression"].as_str().unwrap_or_default()).map_err(|e| e.to_string())?;
            Ok(ToolOutput::structured(json!({ "value": number(value) })))
        },
    )
    .title("Calculator")
    .output_schema(json!({
        "type": "object",
        "properties": { "value": { "type": "number" } },
        "required": ["value"]
    }))
    .annotations(json!({ "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false }))
}

/// Languages `code_review` suggests for its `language` argument.
const LANGUAGES: [&str; 20] = [
    "bash",
    "c",
    "c#",
    "c++",
    "css",
    "go",
    "html",
    "java",
    "javascript",
    "kotlin",
    "lua",
    "php",
    "python",
    "r",
    "ruby",
    "rust",
    "scala",
    "sql",
    "swift",
    "typescript",
];

fn code_review() -> Prompt {
    Prompt::new("code_review", |args, _| {
        let language = &args["language"];
        let focus = match args.get("focus").map(|f| f.trim()).filter(|f| !f.is_empty()) {
            Some(focus) => format!(", focusing on {focus}"),
            None => String::new(),
        };
        Ok(vec![PromptMessage::user(format!(
            "Please review the following {language} code{focus}. Point out bugs, risky constructs and unclear \
             parts, and suggest concrete improvements."
        ))])
    })
    .description("Asks for a review of code in a given language, with an optional focus")
    .title("Code review")
    .argument("language", Some("The programming language of the code"), true)
    .complete(Completer::values(LANGUAGES))
    .argument("focus", Some("What to pay most attention to, e.g. security or performance"), false)
}

/// Whole results print as integers (`4`, not `4.0`) where that is exact.
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        json!(value as i64)
    } else {
        json!(value)
    }
}
