//! The public library API beyond its fixture server (`library_server.rs`): registration
//! refusals and warnings, typed tools, state in a handler, `?` on any error, replies flushed
//! before the server would wait, and the examples (the README's program is checked in `docs`).

use baremcp::{
    Contents, DuplicateKind, Error, FileRoot, Json, Prompt, PromptMessage, ReadError, Resource,
    ResourceTemplate, Server, Tool, ToolOutput,
};
use serde_json::json;

#[test]
fn registration_refuses_bad_tools() {
    let mut server = Server::new("x", "1");
    let noop = |_: &serde_json::Value, _: &mut baremcp::Context| Ok(ToolOutput::text(""));
    server.add_tool(Tool::new("a", "A", json!({"type": "object"}), noop)).unwrap();
    let duplicate =
        server.add_tool(Tool::new("a", "A", json!({"type": "object"}), noop)).unwrap_err();
    assert_eq!(duplicate, Error::Duplicate { kind: DuplicateKind::Tool, name: "a".into() });
    assert_eq!(duplicate.to_string(), r#"duplicate tool name "a""#);
    let not_object =
        server.add_tool(Tool::new("b", "B", json!({"type": "string"}), noop)).unwrap_err();
    assert_eq!(not_object, Error::NotAnObject { tool: "b".into() });
    assert_eq!(not_object.to_string(), r#"tool "b": inputSchema must have "type": "object""#);
    let schema = json!({"type": "object", "properties": {"x": {"type": "strng", "minLength": -1}}});
    let malformed = server.add_tool(Tool::new("c", "C", schema, noop)).unwrap_err();
    let Error::Schema { tool, schema: "inputSchema", problems } = &malformed else {
        panic!("{malformed:?}")
    };
    assert_eq!(tool, "c");
    let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
    assert_eq!(pointers, ["/properties/x/minLength", "/properties/x/type"]);
    assert_eq!(
        malformed.to_string(),
        r#"tool "c": inputSchema does not load: /properties/x/minLength: must be a non-negative integer, got -1; /properties/x/type: unknown type "strng" (expected one of null, boolean, object, array, number, string, integer)"#
    );
    let bad_output =
        Tool::new("d", "D", json!({"type": "object"}), noop).output_schema(json!({"type": 7}));
    let Err(Error::Schema { tool, schema: "outputSchema", .. }) = server.add_tool(bad_output)
    else {
        panic!()
    };
    assert_eq!(tool, "d");
    // A boolean is a JSON Schema, but not what MCP lists as an output schema.
    let boolean = Tool::new("e", "E", json!({"type": "object"}), noop).output_schema(json!(true));
    let refused = server.add_tool(boolean).unwrap_err();
    assert_eq!(
        refused.to_string(),
        r#"tool "e": outputSchema does not load: /: must be a JSON object, not true"#
    );
    // Nothing refused was registered: the refused names are free.
    assert!(server.add_tool(Tool::new("b", "B", json!({"type": "object"}), noop)).is_ok());
}

#[test]
fn registration_refuses_duplicates_of_every_kind() {
    let mut server = Server::new("x", "1");
    let read = |_: &mut baremcp::Context| Ok(Contents::Text(String::new()));
    server.add_resource(Resource::new("test://a", "a", read)).unwrap();
    let duplicate = server.add_resource(Resource::new("test://a", "again", read)).unwrap_err();
    assert_eq!(
        duplicate,
        Error::Duplicate { kind: DuplicateKind::Resource, name: "test://a".into() }
    );
    let prompt = || Prompt::new("p", |_, _| Ok(vec![]));
    server.add_prompt(prompt()).unwrap();
    assert_eq!(
        server.add_prompt(prompt()).unwrap_err(),
        Error::Duplicate { kind: DuplicateKind::Prompt, name: "p".into() }
    );
    let template = ResourceTemplate::new("test://fixed", "fixed", |_, _| Err(ReadError::NotFound));
    let no_variable = server.add_template(template).unwrap_err();
    assert_eq!(no_variable, Error::NoVariable { template: "test://fixed".into() });
    assert_eq!(no_variable.to_string(), r#"resource template "test://fixed" has no {variable}"#);
    let template = || ResourceTemplate::new("test://{id}", "t", |_, _| Err(ReadError::NotFound));
    server.add_template(template()).unwrap();
    let twice = server.add_template(template()).unwrap_err();
    assert_eq!(
        twice,
        Error::Duplicate { kind: DuplicateKind::Template, name: "test://{id}".into() }
    );
    assert_eq!(twice.to_string(), r#"duplicate resource template uriTemplate "test://{id}""#);
    let dir = crate::fixture("tree");
    server.add_directory(FileRoot::new(&dir, false, 1024).unwrap()).unwrap();
    let twice = server.add_directory(FileRoot::new(&dir, false, 1024).unwrap()).unwrap_err();
    let Error::Duplicate { kind: DuplicateKind::Directory, name } = &twice else {
        panic!("{twice:?}")
    };
    assert!(name.starts_with("file:///") && name.ends_with("/fixtures/tree"), "{name}");
    // A template with a directory's text, registered after it or before.
    let root = || FileRoot::new(&dir, false, 1024).unwrap();
    let same = || ResourceTemplate::new(root().template(), "t", |_, _| Err(ReadError::NotFound));
    let as_template = Error::Duplicate { kind: DuplicateKind::Template, name: root().template() };
    assert_eq!(server.add_template(same()).unwrap_err(), as_template);
    let mut server = Server::new("x", "1");
    server.add_template(same()).unwrap();
    assert_eq!(server.add_directory(root()).unwrap_err(), as_template);
}

/// Resources, templates and prompts are found by a hash index, as tools are: each was a scan
/// of those registered before, so 40 000 resources took 11 s to register in a release build
/// (55 ms now; 40 000 prompts 4 s, now 22 ms).
#[test]
fn registering_many_resources_and_prompts_takes_linear_time() {
    const MANY: usize = 30_000;
    let read = |_: &mut baremcp::Context| Ok(Contents::Text(String::new()));
    let started = std::time::Instant::now();
    let mut server = Server::new("x", "1");
    for i in 0..MANY {
        server.add_resource(Resource::new(format!("mem://item/{i:08}"), "r", read)).unwrap();
        server.add_prompt(Prompt::new(format!("p{i:08}"), |_, _| Ok(vec![]))).unwrap();
    }
    let took = started.elapsed();
    for i in [0, MANY / 2, MANY - 1] {
        let uri = format!("mem://item/{i:08}");
        let again = server.add_resource(Resource::new(uri.clone(), "again", read)).unwrap_err();
        assert_eq!(again, Error::Duplicate { kind: DuplicateKind::Resource, name: uri });
        let name = format!("p{i:08}");
        let again = server.add_prompt(Prompt::new(name.clone(), |_, _| Ok(vec![]))).unwrap_err();
        assert_eq!(again, Error::Duplicate { kind: DuplicateKind::Prompt, name });
    }
    // Each refused one left the others where they were: the last is read as itself.
    let last = format!("mem://item/{:08}", MANY - 1);
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": last}});
    assert_eq!(crate::files::ask(&server, &[request])[0]["result"]["contents"][0]["uri"], last);
    // A bound in time is only a sign (this machine may be busy): it took 0.2 s in a debug
    // build here, and 24 s with the scans.
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
}

/// A template is served as RFC 6570 level 1 would expand it, or refused when it is registered:
/// `{?q}` matched `q://x?q=1` with a variable named `?q`, and a completer for a variable the
/// template lacks was never used.
#[test]
fn registration_refuses_templates_it_would_not_serve_as_written() {
    let mut server = Server::new("x", "1");
    let read =
        |vars: &baremcp::Vars, _: &mut baremcp::Context| Ok(Contents::Text(format!("{vars:?}")));
    let only = "only {var} and {+var} (RFC 6570 level 1) are supported";
    for (text, why) in [
        ("e://{}", "an empty expression {}".to_string()),
        ("d://{a}/{a}", r#"variable "a" appears twice"#.into()),
        ("q://x{?q}", format!("operator '?' in {{?q}}: {only}")),
        ("c://{a,b}", format!("a list of variables {{a,b}}: {only}, one variable each")),
    ] {
        let refused = server.add_template(ResourceTemplate::new(text, "t", read)).unwrap_err();
        assert_eq!(refused, Error::Template { template: text.into(), why }, "{text}");
    }
    let unknown = ResourceTemplate::new("c://{a}", "c", read)
        .complete("a", baremcp::Completer::values(["1"]))
        .complete("zzz", baremcp::Completer::values(["1"]));
    assert_eq!(
        server.add_template(unknown).unwrap_err().to_string(),
        r#"resource template "c://{a}": a completer names "zzz", which is not one of its variables"#
    );
    // Nothing refused was registered: no template matches, and the capability is not declared.
    let listed = crate::files::ask(
        &server,
        &[json!({"jsonrpc": "2.0", "id": 1, "method": "resources/templates/list"})],
    );
    assert_eq!(listed[0]["error"]["code"], -32601, "{listed:?}");
}

/// The result of one `tools/call` on a fresh 2025-11-25 session.
fn call(server: &Server, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
    calls(server, tool, &[arguments]).pop().unwrap()
}

/// The results of `tools/call`s in order, on one session.
fn calls(server: &Server, tool: &str, arguments: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut input = String::from(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    for (id, args) in arguments.iter().enumerate() {
        let params = json!({"name": tool, "arguments": args});
        input.push_str(&format!(
            "\n{}\n",
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params": params})
        ));
    }
    let mut output = Vec::new();
    server.serve(&mut input.as_bytes(), &mut output).unwrap();
    let replies: Vec<serde_json::Value> = String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    replies[1..].iter().map(|reply| reply["result"].clone()).collect()
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Repeat {
    text: String,
    times: u8,
    #[serde(default)]
    style: Style,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "lowercase")]
enum Style {
    #[default]
    Plain,
    Shout,
}

/// A schema looser than `Repeat`: any integer for `times`, any string for `style`, no
/// `additionalProperties: false`.
fn repeat_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "times": {"type": "integer", "minimum": 0}, "style": {"type": "string"}},
        "required": ["text", "times"]
    })
}

fn repeat(args: Repeat, _: &mut baremcp::Context) -> Result<String, baremcp::HandlerError> {
    let text = match args.style {
        Style::Plain => args.text,
        Style::Shout => args.text.to_uppercase(),
    };
    Ok(text.repeat(args.times.into()))
}

#[test]
fn typed_tool_gets_its_arguments_decoded() {
    let mut server = Server::new("x", "1");
    server.add_tool(Tool::typed_with_schema("repeat", "Repeats", repeat_schema(), repeat)).unwrap();
    let ok = call(&server, "repeat", json!({"text": "ab", "times": 3, "style": "shout"}));
    assert_eq!(ok, json!({"content": [{"type": "text", "text": "ABABAB"}]}));
    // The schema passes them; the type does not take them. The model learns which value.
    let cases = [
        (json!({"text": "ab", "times": 300}), "/times: invalid value: integer `300`, expected u8"),
        (
            json!({"text": "ab", "times": 1, "style": "whisper"}),
            "/style: unknown variant `whisper`, expected `plain` or `shout`",
        ),
        (
            json!({"text": "ab", "times": 1, "extra": 1}),
            "/extra: unknown field `extra`, expected one of `text`, `times`, `style`",
        ),
    ];
    for (arguments, why) in cases {
        let result = call(&server, "repeat", arguments);
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(
            result["content"][0]["text"],
            format!("invalid arguments for tool repeat:\n{why}")
        );
    }
    // Schema validation still comes first, with its own message.
    let invalid = call(&server, "repeat", json!({"text": "ab"}));
    assert_eq!(
        invalid["content"][0]["text"],
        "invalid arguments for tool repeat:\n/: missing required property \"times\""
    );
}

#[test]
fn typed_tool_outputs_convert_from_text_and_serialize() {
    #[derive(serde::Deserialize)]
    struct Pair {
        a: i64,
        b: i64,
    }
    #[derive(serde::Serialize)]
    struct Sum {
        sum: i64,
    }
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]});
    let mut server = Server::new("x", "1");
    server
        .add_tool(Tool::typed_with_schema("sum", "Adds", schema.clone(), |p: Pair, _| {
            Ok(Json(Sum { sum: p.a + p.b }))
        }))
        .unwrap();
    server
        .add_tool(Tool::typed_with_schema("label", "Names", schema, |_: Pair, _| Ok("a pair")))
        .unwrap();
    assert_eq!(
        call(&server, "sum", json!({"a": 2, "b": 3})),
        json!({"content": [{"type": "text", "text": r#"{"sum":5}"#}], "structuredContent": {"sum": 5}})
    );
    assert_eq!(
        call(&server, "label", json!({"a": 2, "b": 3})),
        json!({"content": [{"type": "text", "text": "a pair"}]})
    );
}

#[test]
fn typed_tool_is_refused_when_a_schema_example_does_not_decode() {
    let mut schema = repeat_schema();
    schema["examples"] = json!([{"text": "a", "times": 2}, {"text": "b", "times": 1000}]);
    let mut server = Server::new("x", "1");
    let refused = server
        .add_tool(Tool::typed_with_schema("repeat", "Repeats", schema.clone(), repeat))
        .unwrap_err();
    assert_eq!(
        refused,
        Error::Example {
            tool: "repeat".into(),
            pointer: "/examples/1/times".into(),
            why: "invalid value: integer `1000`, expected u8".into()
        }
    );
    assert_eq!(
        refused.to_string(),
        r#"tool "repeat": inputSchema /examples/1/times: does not decode into the argument type: invalid value: integer `1000`, expected u8"#
    );
    // The same examples on an untyped tool, or examples that decode, are fine.
    server
        .add_tool(Tool::new("raw", "Raw", schema.clone(), |_, _| Ok(ToolOutput::text(""))))
        .unwrap();
    schema["examples"] = json!([{"text": "a", "times": 2}]);
    server.add_tool(Tool::typed_with_schema("repeat", "Repeats", schema, repeat)).unwrap();
}

#[test]
fn a_tool_keeps_state_in_a_cell() {
    let count = std::rc::Rc::new(std::cell::Cell::new(0u32));
    let seen = count.clone();
    let mut server = Server::new("x", "1");
    let counter = Tool::new("count", "Counts its calls", json!({"type": "object"}), move |_, _| {
        count.set(count.get() + 1);
        Ok(ToolOutput::text(count.get().to_string()))
    });
    server.add_tool(counter).unwrap();
    let texts: Vec<serde_json::Value> = calls(&server, "count", &[json!({}), json!({}), json!({})])
        .iter()
        .map(|r| r["content"][0]["text"].clone())
        .collect();
    assert_eq!(texts, ["1", "2", "3"]);
    assert_eq!(seen.get(), 3, "the state outlives the session");
}

#[test]
fn question_mark_on_any_error_is_an_error_result() {
    let mut server = Server::new("x", "1");
    let schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    server
        .add_tool(Tool::new("read", "Reads a file", schema, |args, _| {
            let text = std::fs::read_to_string(args["path"].as_str().unwrap_or_default())?;
            Ok(ToolOutput::text(text))
        }))
        .unwrap();
    let missing = crate::scratch("question-mark").join("missing.txt");
    let result = call(&server, "read", json!({"path": missing}));
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "No such file or directory (os error 2)"}], "isError": true})
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
    let warnings = server
        .add_tool(Tool::new("lenient", "L", schema, |_, _| Ok(ToolOutput::text(""))))
        .unwrap();
    // Returned, for an embedder without a logger...
    let returned: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    let pointers: Vec<&str> = warnings.iter().map(|w| w.problem.pointer.as_str()).collect();
    assert_eq!(pointers, ["/unevaluatedProperties", "/properties/p/$ref"]);
    assert!(warnings.iter().all(|w| w.tool == "lenient" && w.schema == "inputSchema"));
    // ...and logged, in the same words.
    let lines = CAPTURE.0.lock().unwrap().clone();
    let ours: Vec<&String> = lines.iter().filter(|l| l.contains("\"lenient\"")).collect();
    assert_eq!(
        ours,
        [
            "WARN tool \"lenient\": inputSchema: /unevaluatedProperties: unevaluatedProperties is not supported and is not enforced",
            "WARN tool \"lenient\": inputSchema: /properties/p/$ref: remote $ref \"https://example.com/p.json\" is not followed: this reference is not enforced",
        ]
    );
    let logged: Vec<String> =
        ours.iter().map(|l| l.trim_start_matches("WARN ").to_string()).collect();
    assert_eq!(returned, logged);
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

/// MCP's `progress` and `total` are numbers, which NaN and the infinities are not: they were
/// sent as `null`. A progress that is not finite is not sent; such a total is left out.
#[test]
fn progress_that_is_not_a_number_is_not_sent() {
    let mut server = Server::new("x", "1");
    let steps = |_: &serde_json::Value, cx: &mut baremcp::Context| {
        cx.progress(f64::NAN, Some(1.0), Some("nan"));
        cx.progress(f64::INFINITY, None, Some("infinite"));
        cx.progress(1.0, Some(f64::INFINITY), Some("one"));
        cx.progress(2.0, Some(f64::NAN), Some("two"));
        cx.progress(3.0, Some(4.0), Some("three"));
        Ok(ToolOutput::text("done"))
    };
    server.add_tool(Tool::new("steps", "s", json!({"type": "object"}), steps)).unwrap();
    let params = json!({"name": "steps", "_meta": {"progressToken": "t"}});
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let sent = crate::files::ask(&server, &[request]);
    let progress: Vec<&serde_json::Value> = sent.iter().map(|m| &m["params"]).collect();
    assert_eq!(
        progress[..3],
        [
            &json!({"progressToken": "t", "progress": 1.0, "message": "one"}),
            &json!({"progressToken": "t", "progress": 2.0, "message": "two"}),
            &json!({"progressToken": "t", "progress": 3.0, "total": 4.0, "message": "three"}),
        ]
    );
    assert_eq!(sent[3]["result"]["content"][0]["text"], "done", "{sent:?}");
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
            leak(format!(
                "{init}\n{}\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
            )),
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

/// Input whose read fails once what it holds is read, as a disk gone would.
struct ThenFails(&'static [u8]);

impl std::io::Read for ThenFails {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = std::io::Read::read(&mut std::io::BufRead::fill_buf(self)?, buf)?;
        self.0 = &self.0[n..];
        Ok(n)
    }
}

impl std::io::BufRead for ThenFails {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self.0 {
            [] => Err(std::io::Error::other("disk gone")),
            rest => Ok(rest),
        }
    }
    fn consume(&mut self, n: usize) {
        self.0 = &self.0[n..];
    }
}

#[test]
fn a_read_that_fails_while_a_handler_waits_on_the_client_ends_serve_with_its_error() {
    let mut server = Server::new("x", "1");
    let ask = |_: &serde_json::Value, cx: &mut baremcp::Context| {
        let answer = cx.elicit("Name?", json!({"type": "object"}));
        Ok(ToolOutput::text(format!("{answer:?}")))
    };
    server.add_tool(Tool::new("ask", "Asks", json!({"type": "object"}), ask)).unwrap();
    server
        .add_tool(Tool::new("plain", "Asks not", json!({"type": "object"}), |_, _| {
            Ok(ToolOutput::text("plain"))
        }))
        .unwrap();
    for tool in ["plain", "ask"] {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}});
        let text = format!("{init}\n{call}\n");
        let mut output = Vec::new();
        let served = server.serve(&mut ThenFails(text.leak().as_bytes()), &mut output);
        // The handler is told the client is gone, and its reply written; before, serve then
        // returned Ok(()) as at the end of input, the error lost.
        let error = served.expect_err(tool);
        assert_eq!(error.to_string(), "disk gone", "{tool}");
        let output = String::from_utf8(output).unwrap();
        let reply: serde_json::Value =
            serde_json::from_str(output.lines().last().unwrap()).unwrap();
        assert_eq!(reply["id"], 1, "{tool}: {output}");
        if tool == "ask" {
            let text = reply["result"]["content"][0]["text"].as_str().unwrap();
            assert!(text.starts_with("Err(Disconnected"), "{text}");
        }
    }
}

#[test]
fn question_mark_in_a_reader_or_a_prompt_refuses_with_the_error_text() {
    let missing = crate::scratch("question-mark-reader").join("missing.txt");
    let mut server = Server::new("x", "1");
    let path = missing.clone();
    server
        .add_resource(Resource::new("test://file", "file", move |_| {
            Ok(Contents::Text(std::fs::read_to_string(&path)?))
        }))
        .unwrap();
    server
        .add_prompt(Prompt::new("file", move |_, _| {
            Ok(vec![PromptMessage::user(std::fs::read_to_string(&missing)?)])
        }))
        .unwrap();
    let input = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://file"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"file"}}"#,
    ]
    .join("\n");
    let mut output = Vec::new();
    server.serve(&mut input.as_bytes(), &mut output).unwrap();
    let replies: Vec<&str> = std::str::from_utf8(&output).unwrap().lines().skip(1).collect();
    assert_eq!(
        replies,
        [
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No such file or directory (os error 2)","data":{"uri":"test://file"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"No such file or directory (os error 2)"}}"#,
        ]
    );
}

/// An example program as cargo builds it (already built by `cargo test`; this makes sure).
pub(crate) fn example(name: &str) -> std::path::PathBuf {
    let build = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--message-format=json", "--example", name])
        .current_dir(crate::root())
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "cargo build --example {name}:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let messages = String::from_utf8(build.stdout).unwrap();
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|m| m["target"]["name"] == name && m["executable"].is_string())
        .map(|m| m["executable"].as_str().unwrap().into())
        .unwrap_or_else(|| panic!("cargo named no executable for example {name}"))
}

#[test]
fn the_minimal_example_serves_and_ends_quietly_when_stdout_closes() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let minimal = example("minimal");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"text":"hi"}}}"#;
    let mut child =
        Command::new(&minimal).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(format!("{init}\n{call}\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let last = String::from_utf8(out.stdout).unwrap().lines().last().unwrap().to_string();
    assert_eq!(
        last,
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"HI"}]}}"#
    );

    // A client that closes the server's stdout has ended the session: exit 0, nothing said.
    let mut child = Command::new(&minimal)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    // The server may be gone before all of this is written; that is the point.
    let _ = stdin.write_all(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".repeat(100_000).as_bytes(),
    );
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}
