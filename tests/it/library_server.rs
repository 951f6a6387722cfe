//! The library fixture server (`fixtures/transcripts/library/`): a server built with the
//! public API, for what the built-in catalog cannot show — panicking and failing handlers,
//! every content type, output-schema enforcement, rich input schemas whose validation messages
//! a model has to act on, handlers that wait on the client, resources that fail every way,
//! and completions.

use baremcp::{
    Completer, Content, Contents, Prompt, PromptMessage, ReadError, Resource, ResourceTemplate,
    Server, Tool, ToolOutput,
};
use serde_json::json;

/// The fixture server, with the transcript's flags applied.
pub fn server(args: &[String]) -> Server {
    let mut server = Server::new("library-test", "1.0.0")
        .instructions("Test tools for the library API.")
        .state_secret("transcripts")
        .state_ttl(std::time::Duration::MAX);
    // Registration order is `tools/list` order, which the transcripts compare byte for byte.
    let tools = [failing_tools(), content_tools(), schema_tools(), client_tools()];
    for tool in tools.into_iter().flatten() {
        server.add_tool(tool).expect("test tools register");
    }
    for resource in resources() {
        server.add_resource(resource).unwrap();
    }
    server.add_template(item_template()).unwrap();
    for prompt in prompts() {
        server.add_prompt(prompt).unwrap();
    }
    crate::transcripts::apply_args(server, args)
}

#[test]
fn library_transcripts() {
    crate::transcripts::check_dir("transcripts/library", &server, false);
}

/// Handlers that panic or fail.
fn failing_tools() -> Vec<Tool> {
    vec![
        Tool::new("explode", "Panics", json!({"type": "object"}), |_, _| panic!("kaboom")),
        Tool::new("fail", "Returns an error", json!({"type": "object"}), |_, _| {
            Err("the disk is full".into())
        }),
    ]
}

/// Every content type, and outputs held against their output schemas.
fn content_tools() -> Vec<Tool> {
    vec![
        Tool::new("media", "Returns every content type", json!({"type": "object"}), |_, _| {
            Ok(ToolOutput::text("all kinds")
                .with(Content::Image { data: "iVBORw0KGgo=".into(), mime_type: "image/png".into() })
                .with(Content::Audio { data: "UklGRg==".into(), mime_type: "audio/wav".into() })
                .with(Content::ResourceLink(
                    json!({"uri": "file:///tmp/a.txt", "name": "a.txt", "mimeType": "text/plain"}),
                ))
                .with(Content::Resource(json!({"uri": "test://embedded", "mimeType": "text/plain", "text": "inline"}))))
        }),
        Tool::new("bad_output", "Breaks its output schema", json!({"type": "object"}), |_, _| {
            Ok(ToolOutput::structured(json!({"value": "not a number"})))
        })
        .output_schema(json!({"type": "object", "properties": {"value": {"type": "number"}}, "required": ["value"]})),
        Tool::new("no_output", "Declares an output schema but returns text", json!({"type": "object"}), |_, _| {
            Ok(ToolOutput::text("plain"))
        })
        .output_schema(json!({"type": "object"})),
    ]
}

/// Rich input schemas, whose validation messages a model has to act on.
fn schema_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "tmkb_query",
            "The seed's strict schema (shared/seeds/001)",
            json!({
                "type": "object",
                "properties": {
                    "context": {"type": "string", "minLength": 1},
                    "language": {"type": "string", "enum": ["python"]},
                    "framework": {"type": "string", "enum": ["flask", "any"]},
                    "verbosity": {"type": "string", "enum": ["agent", "human"], "default": "agent"}
                },
                "required": ["context"],
                "additionalProperties": false
            }),
            |args, _| Ok(ToolOutput::text(format!("patterns for {}", args["context"]))),
        ),
        Tool::new(
            "search",
            "A generated-style schema with $defs, nullable anyOf, arrays and bounds",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {
                    "range": {
                        "type": "object",
                        "properties": {"since": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}},
                        "additionalProperties": false
                    }
                },
                "properties": {
                    "query": {"type": "string", "maxLength": 10},
                    "count": {"type": "integer", "minimum": 1, "maximum": 100},
                    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 2},
                    "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "range": {"$ref": "#/$defs/range"},
                    "ratio": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
                    "choice": {"oneOf": [{"type": "string"}, {"type": "object", "required": ["id"]}]}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            |args, _| Ok(ToolOutput::structured(args.clone())),
        ),
    ]
}

/// Handlers that tell the client of a change, ask it, or list its roots.
fn client_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "touch",
            "Marks a resource changed",
            json!({"type": "object", "properties": {"uri": {"type": "string"}, "confirm": {"type": "boolean"}}}),
            |args, cx| {
                let uri = args["uri"].as_str().unwrap_or("test://static-text").to_string();
                cx.resource_updated(uri.clone());
                // The change stands even when the request then waits on the client.
                if args["confirm"] == true {
                    cx.elicit("touched: keep it?", json!({"type": "object", "properties": {}}))
                        .map_err(|e| e.to_string())?;
                }
                Ok(ToolOutput::text(format!("touched {uri}")))
            },
        ),
        Tool::new(
            "ask_twice",
            "Asks twice, stopping early once cancelled",
            json!({"type": "object"}),
            |_, cx| {
                let mut answers = Vec::new();
                for round in 1..=2 {
                    if cx.is_cancelled() {
                        return Ok(ToolOutput::text("stopped"));
                    }
                    cx.progress(round as f64, Some(2.0), None);
                    match cx.elicit(
                        &format!("question {round}"),
                        json!({"type": "object", "properties": {}}),
                    ) {
                        Ok(answer) => {
                            answers.push(answer["action"].as_str().unwrap_or("").to_string())
                        }
                        Err(baremcp::ClientError::Cancelled) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(ToolOutput::text(answers.join(",")))
            },
        ),
        Tool::new("roots", "Lists the client's roots", json!({"type": "object"}), |_, cx| {
            let roots = cx.roots()?;
            Ok(ToolOutput::text(format!("{} roots", roots["roots"].as_array().map_or(0, Vec::len))))
        }),
    ]
}

/// Resources read every way: text, bytes, not found, refused, a panicking reader.
fn resources() -> Vec<Resource> {
    vec![
        Resource::new("test://static-text", "static-text", |_| {
            Ok(Contents::Text("static text".into()))
        })
        .title("Static Text")
        .description("A fixed text")
        .mime_type("text/plain")
        .size(11)
        .annotations(json!({"audience": ["user"], "priority": 0.5})),
        Resource::new("test://bytes", "bytes", |_| Ok(Contents::Blob(vec![0, 159, 146, 150])))
            .mime_type("application/octet-stream"),
        Resource::new("test://gone", "gone", |_| Err(ReadError::NotFound)),
        Resource::new("test://refused", "refused", |_| Err(ReadError::Refused("not today".into()))),
        Resource::new("test://panics", "panics", |_| panic!("reader bug")),
    ]
}

/// A template whose variable completes from a list.
fn item_template() -> ResourceTemplate {
    ResourceTemplate::new("test://items/{id}/data", "item", |vars, _| {
        Ok(Contents::Text(format!("{{\"id\":\"{}\"}}", vars["id"])))
    })
    .title("Item")
    .mime_type("application/json")
    .complete("id", Completer::values(["100", "123", "200"]))
}

/// A prompt whose completion depends on another argument, and one that refuses.
fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("greet", |args, _| {
            Ok(vec![PromptMessage::user(format!("Say hello in {}", args["language"]))])
        })
        .description("Greets in a language")
        .argument("language", Some("The language"), true)
        .complete(Completer::Function(Box::new(|_, context| {
            let region = context.get("region").and_then(|r| r.as_str()).unwrap_or("");
            if region == "eu" {
                vec!["german".into(), "greek".into()]
            } else {
                vec!["english".into(), "german".into()]
            }
        })))
        .argument("region", Some("Where"), false),
        Prompt::new("refuses", |_, _| Err("no prompt for you".into()))
            .description("Always refuses"),
    ]
}

/// A `ResourceLink` or `Resource` block is JSON the handler writes: one MCP does not allow is
/// the tool's fault, shown as an error result (a prompt's: an internal error), not sent on as
/// `{"type":"resource_link"}` with no `uri` or `name`, or `"resource":5`.
#[test]
fn a_content_block_mcp_does_not_allow_is_an_error_not_invalid_output() {
    let mut server = Server::new("t", "1");
    let blocks = |_: &serde_json::Value, _: &mut baremcp::Context| {
        Ok(ToolOutput::text("x").with(Content::ResourceLink(json!("nope"))))
    };
    server.add_tool(Tool::new("link", "l", json!({"type": "object"}), blocks)).unwrap();
    let embedded = |_: &serde_json::Value, _: &mut baremcp::Context| {
        let fine = json!({"uri": "a://b", "name": "b"});
        Ok(ToolOutput::text("x")
            .with(Content::ResourceLink(fine))
            .with(Content::Resource(json!(5))))
    };
    server.add_tool(Tool::new("embedded", "e", json!({"type": "object"}), embedded)).unwrap();
    let prompt = Prompt::new("p", |_, _| {
        let blob = json!({"uri": "a://b", "blob": 7});
        Ok(vec![
            PromptMessage::user("hi"),
            PromptMessage { role: baremcp::Role::User, content: Content::Resource(blob) },
        ])
    });
    server.add_prompt(prompt).unwrap();
    let call = |id: u64, name: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}});
    let get = json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "p"}});
    let replies = crate::files::ask(&server, &[call(1, "link"), call(2, "embedded"), get]);
    let error = |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": true});
    assert_eq!(
        replies[0]["result"],
        error(
            r#"tool link returned content 1: a resource_link block needs an object with the strings "uri" and "name""#
        )
    );
    assert_eq!(
        replies[1]["result"],
        error(
            r#"tool embedded returned content 2: a resource block needs an object with the strings "uri" and "text" or "blob""#
        )
    );
    assert_eq!(
        replies[2]["error"],
        json!({"code": -32603, "message": r#"prompt p returned message 1: a resource block needs an object with the strings "uri" and "text" or "blob""#})
    );
}
