//! The README's client-setup snippets (its "Connect a client" quickstart): each JSON block
//! parses in the shape its client reads, and each command line it names (with `baremcp`
//! taken as this build and the notes folder as `fixtures/tree`) really serves an
//! `initialize` and lists a file.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::docs::blocks;

/// The README's quickstart "Connect a client".
fn section() -> String {
    crate::docs::section("README.md", "## Connect a client")
}

/// Runs `args` as this build would be run by a client, with the placeholders a user fills in
/// replaced, and checks a 2025-11-25 handshake and a `resources/list` that names a file.
fn serves(args: &[String]) {
    assert_eq!(args[0], "baremcp", "a snippet's command is the installed name: {args:?}");
    let tree = crate::fixture("tree").display().to_string();
    let rest: Vec<String> = args[1..]
        .iter()
        .map(|a| {
            a.replace("/home/me/notes", &tree)
                .replace("~/notes", &tree)
                .replace("${workspaceFolder}", &tree)
        })
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(&rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"resources/list"}}"#).unwrap();
    drop(stdin);
    let lines: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.wait().unwrap().success(), "{args:?} did not exit cleanly");
    assert_eq!(lines.len(), 2, "{args:?}: {lines:?}");
    assert_eq!(lines[0]["result"]["protocolVersion"], "2025-11-25", "{args:?}");
    let listed = lines[1]["result"]["resources"].as_array().unwrap();
    assert!(
        listed.iter().any(|r| r["name"] == "hello.txt"),
        "{args:?} lists no file of the tree: {listed:?}"
    );
}

/// `command` and `args` of the one server a JSON snippet declares under `key`.
fn declared(snippet: &Value, key: &str) -> Vec<String> {
    let servers =
        snippet[key].as_object().unwrap_or_else(|| panic!("snippet has no {key}: {snippet}"));
    assert_eq!(servers.len(), 1);
    let server = &servers["baremcp"];
    let mut argv = vec![server["command"].as_str().unwrap().to_string()];
    argv.extend(server["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()));
    argv
}

#[test]
fn every_json_snippet_parses_and_its_command_serves() {
    let section = section();
    let snippets: Vec<Value> = blocks(&section, "json")
        .iter()
        .map(|b| serde_json::from_str(b).expect("snippet is JSON"))
        .collect();
    // Claude Desktop and Cursor read `mcpServers`; VS Code reads `servers` with a `type`.
    let keys: Vec<&str> = snippets
        .iter()
        .map(|s| if s.get("servers").is_some() { "servers" } else { "mcpServers" })
        .collect();
    assert_eq!(keys, ["mcpServers", "servers", "mcpServers"], "Claude Desktop, VS Code, Cursor");
    assert_eq!(snippets[1]["servers"]["baremcp"]["type"], "stdio");
    for (snippet, key) in snippets.iter().zip(keys) {
        serves(&declared(snippet, key));
    }
}

#[test]
fn the_shell_one_liners_name_a_command_that_serves() {
    let section = section();
    let lines: Vec<String> =
        blocks(&section, "sh").iter().flat_map(|b| b.lines().map(str::to_string)).collect();
    let claude = lines
        .iter()
        .find(|l| l.starts_with("claude mcp add baremcp -- "))
        .expect("a claude mcp add line");
    serves(
        &claude
            .split(" -- ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>(),
    );
    let inspector = lines
        .iter()
        .find(|l| l.starts_with("npx @modelcontextprotocol/inspector "))
        .expect("an Inspector line");
    serves(&inspector.split_whitespace().skip(2).map(str::to_string).collect::<Vec<_>>());
}
