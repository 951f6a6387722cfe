//! A server built with the public library API, for what the built-in catalog cannot show:
//! panicking and failing handlers, every content type, output-schema enforcement, and rich
//! input schemas whose validation messages a model has to act on.

use baremcp::{
    Completer, Content, Contents, Prompt, PromptMessage, ReadError, Resource, ResourceTemplate, Server, Tool,
    ToolOutput,
};
use serde_json::json;

pub fn server(args: &[String]) -> Server {
    let mut server = Server::new("library-test", "1.0.0")
        .instructions("Test tools for the library API.")
        .state_secret("transcripts");
    let tools = [
        Tool::new("explode", "Panics", json!({"type": "object"}), |_, _| panic!("kaboom")),
        Tool::new("fail", "Returns an error", json!({"type": "object"}), |_, _| Err("the disk is full".into())),
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
    ];
    for tool in tools {
        server.add_tool(tool).expect("test tools register");
    }
    server
        .add_tool(Tool::new(
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
        ))
        .unwrap();
    server
        .add_resource(
            Resource::new("test://static-text", "static-text", |_| Ok(Contents::Text("static text".into())))
                .title("Static Text")
                .description("A fixed text")
                .mime_type("text/plain")
                .size(11)
                .annotations(json!({"audience": ["user"], "priority": 0.5})),
        )
        .unwrap();
    server
        .add_resource(
            Resource::new("test://bytes", "bytes", |_| Ok(Contents::Blob(vec![0, 159, 146, 150])))
                .mime_type("application/octet-stream"),
        )
        .unwrap();
    server.add_resource(Resource::new("test://gone", "gone", |_| Err(ReadError::NotFound))).unwrap();
    server
        .add_resource(Resource::new("test://refused", "refused", |_| Err(ReadError::Refused("not today".into()))))
        .unwrap();
    server.add_resource(Resource::new("test://panics", "panics", |_| panic!("reader bug"))).unwrap();
    server
        .add_template(
            ResourceTemplate::new("test://items/{id}/data", "item", |vars, _| {
                Ok(Contents::Text(format!("{{\"id\":\"{}\"}}", vars["id"])))
            })
            .title("Item")
            .mime_type("application/json")
            .complete("id", Completer::values(["100", "123", "200"])),
        )
        .unwrap();
    server
        .add_prompt(
            Prompt::new("greet", |args, _| Ok(vec![PromptMessage::user(format!("Say hello in {}", args["language"]))]))
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
        )
        .unwrap();
    server
        .add_tool(Tool::new(
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
                    match cx.elicit(&format!("question {round}"), json!({"type": "object", "properties": {}})) {
                        Ok(answer) => answers.push(answer["action"].as_str().unwrap_or("").to_string()),
                        Err(baremcp::ClientError::Cancelled) => continue,
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(ToolOutput::text(answers.join(",")))
            },
        ))
        .unwrap();
    server
        .add_tool(Tool::new("roots", "Lists the client's roots", json!({"type": "object"}), |_, cx| {
            let roots = cx.roots()?;
            Ok(ToolOutput::text(format!("{} roots", roots["roots"].as_array().map_or(0, Vec::len))))
        }))
        .unwrap();
    server
        .add_prompt(Prompt::new("refuses", |_, _| Err("no prompt for you".into())).description("Always refuses"))
        .unwrap();
    crate::transcripts::apply_args(server, args)
}

#[test]
fn library_transcripts() {
    crate::transcripts::check_dir("transcripts/library", &server, false);
}

#[test]
fn registration_refuses_bad_tools() {
    let mut server = Server::new("x", "1");
    let noop = |_: &serde_json::Value, _: &mut baremcp::Context| Ok(ToolOutput::text(""));
    server.add_tool(Tool::new("a", "A", json!({"type": "object"}), noop)).unwrap();
    let duplicate = server.add_tool(Tool::new("a", "A", json!({"type": "object"}), noop)).err().unwrap();
    assert_eq!(duplicate.to_string(), r#"duplicate tool name "a""#);
    let not_object = server.add_tool(Tool::new("b", "B", json!({"type": "string"}), noop)).err().unwrap();
    assert_eq!(not_object.to_string(), r#"tool "b": inputSchema must have "type": "object""#);
    let malformed = server
        .add_tool(Tool::new(
            "c",
            "C",
            json!({"type": "object", "properties": {"x": {"type": "strng", "minLength": -1}}}),
            noop,
        ))
        .err()
        .unwrap();
    assert_eq!(
        malformed.to_string(),
        r#"tool "c": inputSchema does not load: /properties/x/minLength: must be a non-negative integer, got -1; /properties/x/type: unknown type "strng" (expected one of null, boolean, object, array, number, string, integer)"#
    );
}

/// Records log lines so a test can see what the library reports.
struct Capture(std::sync::Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, record: &log::Record) {
        self.0.lock().unwrap().push(format!("{} {}", record.level(), record.args()));
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture(std::sync::Mutex::new(Vec::new()));

#[test]
fn registration_warns_about_keywords_it_does_not_enforce() {
    let _ = log::set_logger(&CAPTURE);
    log::set_max_level(log::LevelFilter::Trace);
    let mut server = Server::new("x", "1");
    let schema = json!({"type": "object", "unevaluatedProperties": false, "properties": {"p": {"$ref": "https://example.com/p.json"}}});
    server.add_tool(Tool::new("lenient", "L", schema, |_, _| Ok(ToolOutput::text("")))).unwrap();
    let lines = CAPTURE.0.lock().unwrap().clone();
    let ours: Vec<&String> = lines.iter().filter(|l| l.contains("\"lenient\"")).collect();
    assert_eq!(
        ours,
        [
            "WARN tool \"lenient\": inputSchema: /unevaluatedProperties: unevaluatedProperties is not supported and is not enforced",
            "WARN tool \"lenient\": inputSchema: /properties/p/$ref: remote $ref \"https://example.com/p.json\" is not followed: this reference is not enforced",
        ]
    );
}

/// Input that arrives in pieces, one per read, like a client writing them one at a time.
struct Pieces(std::collections::VecDeque<&'static [u8]>);

impl std::io::Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = std::io::Read::read(&mut self.0.front().copied().unwrap_or_default(), buf)?;
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl std::io::BufRead for Pieces {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(self.0.front().copied().unwrap_or_default())
    }
    fn consume(&mut self, n: usize) {
        if let Some(front) = self.0.front_mut() {
            *front = &front[n..];
            if front.is_empty() {
                self.0.pop_front();
            }
        }
    }
}

/// Output that records what each flush handed to the client.
#[derive(Default)]
struct Flushes {
    pending: Vec<u8>,
    sent: Vec<String>,
}

impl std::io::Write for Flushes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.sent.push(String::from_utf8(std::mem::take(&mut self.pending)).unwrap());
        }
        Ok(())
    }
}

#[test]
fn replies_are_flushed_before_the_server_would_wait() {
    let mut server = Server::new("flush-test", "1");
    let tool = |name: &str| {
        Tool::new(name, "Says hi", json!({"type": "object"}), |_, cx| {
            cx.progress(1.0, None, None);
            Ok(ToolOutput::text("hi"))
        })
    };
    server.add_tool(tool("hi")).unwrap();
    let call = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hi","_meta":{{"progressToken":{id}}}}}}}"#
        )
    };
    let leak = |text: String| -> &'static [u8] { Box::leak(text.into_bytes().into_boxed_slice()) };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut input = Pieces(
        [
            leak(format!("{init}\n{}\n", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)),
            leak(format!("{}\n{}\n", call(2), call(3))),
            leak(format!("{}\n", call(4))),
        ]
        .into(),
    );
    let mut output = Flushes::default();
    server.serve(&mut input, &mut output).unwrap();
    assert!(output.pending.is_empty(), "everything is flushed at the end");
    let sent: Vec<Vec<String>> = output
        .sent
        .iter()
        .map(|flushed| {
            flushed
                .lines()
                .map(|line| {
                    let message: serde_json::Value = serde_json::from_str(line).unwrap();
                    match message.get("id") {
                        Some(id) => format!("reply {id}"),
                        None => format!("progress {}", message["params"]["progressToken"]),
                    }
                })
                .collect()
        })
        .collect();
    // Progress goes out while the handler works; replies to lines that arrived together go
    // out together, and nothing waits past the end of what the client sent.
    assert_eq!(
        sent,
        [
            vec!["reply 1"],
            vec!["progress 2"],
            vec!["reply 2", "progress 3"],
            vec!["reply 3"],
            vec!["progress 4"],
            vec!["reply 4"]
        ]
    );
}
