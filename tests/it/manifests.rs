//! A manifest's commands and files at run time, where the transcripts do not go: a variable
//! passed through, a program that cannot start, a `cwd` that is not there, defaults standing
//! in for absent arguments, JSON output cut short, resource commands that fail, write too
//! much or write bytes, template metadata, and `path` resources that are too large or not
//! UTF-8.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn commands_and_files_fail_cleanly_and_bytes_come_back_as_blobs() {
    let dir = crate::scratch("manifest-run");
    std::fs::write(dir.join("bytes.bin"), [0xff, 0xfe]).unwrap();
    // Sparse: one byte past the 8 MiB a `path` resource may be, without writing it.
    std::fs::File::create(dir.join("big.bin")).unwrap().set_len(8 * 1024 * 1024 + 1).unwrap();
    let manifest = json!({
        "server": {"name": "run", "version": "1"},
        "tools": [
            {"name": "pass_env", "description": "d", "run": {"argv": ["sh", "-c", "printf %s \"$FUZZ_PASSED\""], "env": {"FUZZ_PASSED": true}}},
            {"name": "missing", "description": "d", "run": {"argv": ["/nonexistent/program"]}},
            {"name": "cut_json", "description": "d", "run": {"argv": ["printf", "{{\"a\": \"0123456789\"}}"], "output": "json", "maxOutputBytes": 5}}
        ],
        "resources": [
            {"uri": "m://fails", "name": "fails", "run": {"argv": ["sh", "-c", "exit 4"]}},
            {"uri": "m://big", "name": "big", "run": {"argv": ["printf", "0123456789"], "maxOutputBytes": 4}},
            {"uri": "m://bytes", "name": "bytes", "run": {"argv": ["printf", "\\377\\376"]}},
            {"uri": "m://file-big", "name": "file-big", "path": "big.bin"},
            {"uri": "m://file-bytes", "name": "file-bytes", "path": "bytes.bin"}
        ],
        "resourceTemplates": [{"uriTemplate": "m://t/{x}", "name": "t", "title": "T", "description": "D", "run": {"argv": ["printf", "%s", "{x}"]}}]
    });
    let path = dir.join("run.json");
    std::fs::write(&path, manifest.to_string()).unwrap();
    let call = |id: u32, name: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}});
    let read = |id: u32, uri: &str| json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}});
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        call(1, "pass_env"),
        call(2, "missing"),
        call(3, "cut_json"),
        read(4, "m://fails"),
        read(5, "m://big"),
        read(6, "m://bytes"),
        read(7, "m://file-big"),
        read(8, "m://file-bytes"),
        json!({"jsonrpc": "2.0", "id": 9, "method": "resources/templates/list"}),
        read(10, "m://t/hello"),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let replies = replies(&path, &input);
    let text = |id: u64| {
        replies[&id]["result"]["content"][0]["text"].as_str().unwrap_or_default().to_string()
    };
    let error = |id: u64| replies[&id]["error"]["message"].as_str().unwrap_or_default().to_string();
    assert_eq!(text(1), "passed through");
    assert_eq!(replies[&2]["result"]["isError"], true);
    assert!(text(2).starts_with("cannot run /nonexistent/program: "), "{}", text(2));
    assert_eq!(replies[&3]["result"]["isError"], true);
    assert!(text(3).starts_with("the command's JSON output was cut short"), "{}", text(3));
    assert_eq!(error(4), "the command failed with exit status 4");
    assert_eq!(error(5), "the content is larger than 4 bytes");
    assert_eq!(replies[&6]["result"]["contents"][0]["blob"], "//4=");
    assert!(error(7).ends_with("big.bin is larger than 8388608 bytes"), "{}", error(7));
    assert_eq!(replies[&7]["error"]["code"], -32602);
    assert_eq!(replies[&8]["result"]["contents"][0]["blob"], "//4=");
    let template = &replies[&9]["result"]["resourceTemplates"][0];
    assert_eq!((&template["title"], &template["description"]), (&json!("T"), &json!("D")));
    assert_eq!(replies[&10]["result"]["contents"][0]["text"], "hello");
}

/// The replies, by id, of the binary serving the manifest at `path` to `input` (with
/// `FUZZ_PASSED` in its environment).
fn replies(path: &Path, input: &str) -> HashMap<u64, Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["--manifest", &path.to_string_lossy()])
        .env("FUZZ_PASSED", "passed through")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["id"].as_u64().unwrap(), v))
        .collect()
}

/// The replies, by id, of the binary serving the manifest `tools` to `calls` (tool name and
/// arguments, ids from 1).
fn call_tools(name: &str, tools: Value, calls: &[(&str, Value)]) -> HashMap<u64, Value> {
    let dir = crate::scratch(name);
    let path = dir.join("manifest.json");
    std::fs::write(&path, json!({"tools": tools}).to_string()).unwrap();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let mut input = String::new();
    for (id, (tool, arguments)) in calls.iter().enumerate() {
        let params = json!({"name": tool, "arguments": arguments, "_meta": meta});
        let call =
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params": params});
        input.push_str(&format!("{call}\n"));
    }
    replies(&path, &input)
}

#[test]
fn a_boolean_in_a_group_is_a_switch() {
    let all = json!({"type": "boolean"});
    let tools = json!([
        {"name": "ls", "description": "d", "inputSchema": {"type": "object", "properties": {"all": all}},
         "run": {"argv": ["printf", "<%s>", "ls", ["-a", "{all}"], "dir"]}}
    ]);
    let replies = call_tools(
        "manifest-switch",
        tools,
        &[("ls", json!({"all": true})), ("ls", json!({"all": false})), ("ls", json!({}))],
    );
    let text = |id: u64| replies[&id]["result"]["content"][0]["text"].clone();
    assert_eq!(text(1), "<ls><-a><dir>", "{:?}", replies[&1]);
    assert_eq!(text(2), "<ls><dir>");
    assert_eq!(text(3), "<ls><dir>");
}

#[test]
fn an_empty_array_drops_its_group_whole_and_leaves_the_guard_alone() {
    let properties = json!({"ignore": {"type": "array", "items": {"type": "string"}},
        "dir": {"type": "string"}});
    let tools = json!([
        {"name": "ls", "description": "d", "inputSchema": {"type": "object", "properties": properties},
         "run": {"argv": ["printf", "<%s>", "ls", ["-I", "{ignore}"], "--", "{dir}", "{ignore}"]}}
    ]);
    let replies = call_tools(
        "manifest-empty-array",
        tools,
        &[
            ("ls", json!({"ignore": [], "dir": "-la"})),
            ("ls", json!({"ignore": ["a"], "dir": "d"})),
        ],
    );
    let text = |id: u64| replies[&id]["result"]["content"][0]["text"].clone();
    // Kept, `-I` would have taken `--` for its value, and `-la` been read as options.
    assert_eq!(text(1), "<ls><--><-la>", "{:?}", replies[&1]);
    assert_eq!(text(2), "<ls><-I><a><--><d><a>");
}

#[test]
fn a_number_reaches_the_command_as_an_integer_when_it_is_one() {
    let dir = crate::scratch("manifest-numbers");
    let path = dir.join("manifest.json");
    let n = json!({"type": "number", "minimum": 0});
    let tools = json!([{"name": "n", "description": "d",
        "inputSchema": {"type": "object", "properties": {"n": n}},
        "run": {"argv": ["printf", "<%s>", "{n}"]}}]);
    std::fs::write(&path, json!({"tools": tools}).to_string()).unwrap();
    // Written here as text: `json!` would read them as the server does, and the test
    // would pass whatever the server makes of them.
    let written =
        ["-0", "1e2", "100.0", "0.5", "1e-7", "9007199254740993", "12345678901234567890123"];
    let mut input = String::new();
    for (id, n) in written.iter().enumerate() {
        input.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"n","arguments":{{"n":{n}}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#,
            id + 1
        ));
        input.push('\n');
    }
    let replies = replies(&path, &input);
    let text = |id: u64| replies[&id]["result"]["content"][0]["text"].clone();
    let passed: Vec<Value> = (1..=written.len() as u64).map(text).collect();
    let expected = [
        "<0>",
        "<100>",
        "<100>",
        "<0.5>",
        "<1e-7>",
        "<9007199254740993>",
        "<1.2345678901234568e+22>",
    ];
    assert_eq!(passed, expected.map(|e| json!(e)), "{replies:?}");
}

#[test]
fn a_default_stands_in_for_an_absent_argument() {
    let n = json!({"type": "integer", "minimum": 1, "default": 5});
    let tools = json!([
        {"name": "log", "description": "d", "inputSchema": {"type": "object", "properties": {"n": n}},
         "run": {"argv": ["printf", "<%s>", "log", "-n", "{n}"]}},
        {"name": "greet", "description": "d",
         "inputSchema": {"type": "object", "properties": {"who": {"type": "string", "default": "world"}}},
         "run": {"argv": ["cat"], "stdin": "hello {who}", "env": {"WHO": "{who}"}}}
    ]);
    let replies = call_tools(
        "manifest-defaults",
        tools,
        &[("log", json!({})), ("log", json!({"n": 2})), ("greet", json!({}))],
    );
    let text = |id: u64| replies[&id]["result"]["content"][0]["text"].clone();
    assert_eq!(text(1), "<log><-n><5>", "{:?}", replies[&1]);
    assert_eq!(text(2), "<log><-n><2>");
    assert_eq!(text(3), "hello world");
}

#[test]
fn a_cwd_that_is_not_there_is_named_as_a_missing_directory() {
    let tools = json!([
        {"name": "here", "description": "d", "run": {"argv": ["ls"], "cwd": "no/such/dir"}},
        {"name": "nothing", "description": "d", "run": {"argv": ["/no/such/program"]}}
    ]);
    let replies = call_tools("manifest-cwd", tools, &[("here", json!({})), ("nothing", json!({}))]);
    let dir = crate::scratch("manifest-cwd");
    let text = |id: u64| replies[&id]["result"]["content"][0]["text"].as_str().unwrap().to_string();
    assert_eq!(replies[&1]["result"]["isError"], true);
    assert_eq!(
        text(1),
        format!("cannot run ls: cwd {} is not a directory", dir.join("no/such/dir").display())
    );
    assert_eq!(text(2), "cannot run /no/such/program: No such file or directory (os error 2)");
}

#[test]
fn a_prompt_argument_is_filled_in_once_and_never_read_as_a_placeholder() {
    let dir = crate::scratch("manifest-prompt-fill");
    let path = dir.join("manifest.json");
    let prompts = json!([{"name": "compare", "description": "d",
        "arguments": [{"name": "a", "required": true}, {"name": "b", "required": true}],
        "messages": [{"role": "user", "text": "Compare {{a}} with {{ b }}, then {{a}}."}]}]);
    std::fs::write(&path, json!({"prompts": prompts}).to_string()).unwrap();
    // Each argument names the other: filled again, `{{b}}` became the 3 MB of b, and a value
    // whose placeholder appeared twice grew the text quadratically (a request of 126 kB took a
    // server past 2 GB and it aborted).
    let b = "{{a}}".repeat(1000);
    let get = json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
        "params": {"name": "compare", "arguments": {"a": "{{b}}", "b": b}}});
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let replies = replies(&path, &format!("{init}\n{get}\n"));
    let text = &replies[&1]["result"]["messages"][0]["content"]["text"];
    assert_eq!(text, &json!(format!("Compare {{{{b}}}} with {b}, then {{{{b}}}}.")), "{replies:?}");
}
