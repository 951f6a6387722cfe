//! `baremcp check` on the problem shapes `fixtures/manifests/broken.json` leaves out (each
//! reported once, with its pointer and what is wrong), its summary and warnings, the
//! subcommands' own flags, and `validate --jsonl` answering every line.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn baremcp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_baremcp")).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `baremcp check` of `document`, written to `manifest`.
fn check(manifest: &std::path::Path, document: &str) -> Output {
    std::fs::write(manifest, document).unwrap();
    baremcp(&["check", &manifest.to_string_lossy()])
}

/// A `run` that is not an object is that one problem, not also one about `output`.
#[test]
fn a_run_that_is_not_an_object_is_one_problem() {
    let manifest = crate::scratch("check-run").join("run.json");
    let resource = r#"{"resources":[{"uri":"x://a","name":"t","run":["echo","hi"]}]}"#;
    let stderr = text(&check(&manifest, resource).stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.ends_with("/resources/0/run: expected object, got array\n"), "{stderr}");
}

#[test]
fn every_problem_shape_is_reported_with_its_pointer() {
    let dir = crate::scratch("check-shapes");
    let manifest = dir.join("shapes.json");
    let out = check(
        &manifest,
        r#"{
  "server": {"name": 5},
  "tools": [
    5,
    {"name": "a", "description": 7, "run": {"argv": ["echo", "{bad name}", "a}b", ["--x", 5], 6, []], "env": {"PASS": true, "BAD": 1}}},
    {"name": "b", "description": "env not an object", "run": {"argv": ["echo"], "env": []}},
    {"name": "", "description": "empty name", "run": {"argv": ["echo"]}},
    {"name": "d", "description": "no run"}
  ],
  "resources": {},
  "resourceTemplates": [
    {"uriTemplate": "x://fixed", "name": "t", "run": {"argv": ["echo"]}},
    {"uriTemplate": "x://{a,b}", "name": "u", "run": {"argv": ["echo"]}}
  ],
  "prompts": [{"name": "p", "arguments": [{"name": "a", "required": "yes"}], "messages": []}]
}"#,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let problems = [
        "/server/name: expected string, got integer 5",
        "/tools/0: expected object, got integer 5",
        "/tools/1/description: expected string, got integer 7",
        "/tools/1/run/argv/1: malformed placeholder {bad name} (use {{ for a literal brace)",
        "/tools/1/run/argv/2: unmatched } (use }} for a literal brace)",
        "/tools/1/run/argv/3: must be a string, or (after the program) a non-empty array of strings",
        "/tools/1/run/argv/4: must be a string, or (after the program) a non-empty array of strings",
        "/tools/1/run/argv/5: must be a string, or (after the program) a non-empty array of strings",
        "/tools/1/run/env/BAD: must be a string (the value) or true (pass it through)",
        "/tools/2/run/env: expected object, got array",
        "/tools/3/name: must be at least 1 character long",
        "/tools/4: missing required property \"run\"",
        "/resources: expected array, got object",
        "/resourceTemplates/0/uriTemplate: needs at least one {variable}",
        "/resourceTemplates/1/uriTemplate: a list of variables {a,b}: only {var} and {+var} (RFC 6570 level 1) are supported, one variable each",
        "/prompts/0/arguments/0/required: expected boolean, got string \"yes\"",
        "/prompts/0/messages: must have at least 1 item, got 0",
    ];
    for problem in problems {
        assert!(
            stderr.contains(&format!("shapes.json: {problem}\n")),
            "{problem:?} not reported:\n{stderr}"
        );
    }
    assert_eq!(stderr.lines().count(), problems.len(), "{stderr}");

    // A document that is not an object, and a file that is not JSON, are one problem each.
    let out = check(&manifest, "[]");
    assert_eq!(
        (out.status.code(), text(&out.stderr).lines().count()),
        (Some(2), 1),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("shapes.json: /: expected object, got array"),
        "{}",
        text(&out.stderr)
    );
    // A timeout past a day is refused before it could overflow a deadline.
    let out = check(
        &manifest,
        r#"{"tools": [{"name": "t", "description": "d", "run": {"argv": ["echo"], "timeoutMs": 18446744073709551615}}]}"#,
    );
    assert!(
        text(&out.stderr).contains("/tools/0/run/timeoutMs: must be <= 86400000"),
        "{}",
        text(&out.stderr)
    );
    let out = check(&manifest, "{");
    assert!(text(&out.stderr).contains("not JSON"), "{}", text(&out.stderr));

    // A schema keyword that is known but not enforced is a warning, not a problem.
    let out = check(
        &manifest,
        r#"{"tools": [{"name": "w", "description": "warns", "inputSchema": {"type": "object", "unevaluatedProperties": false}, "run": {"argv": ["echo"], "env": {"HOME": true}}}]}"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("/tools/0/inputSchema"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("unevaluatedProperties"), "{}", text(&out.stderr));
    // Serving the same manifest says it once (the library logs it as the tool is added).
    let out = baremcp(&["--manifest", &manifest.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).matches("is not enforced").count(), 1, "{}", text(&out.stderr));
}

#[test]
fn a_cap_on_output_past_64_mib_is_refused() {
    let manifest = crate::scratch("check-output-cap").join("cap.json");
    // What is kept is copied into the result, and an allocation past memory aborts the
    // server (a cap of 1e12 did, under `ulimit -v`).
    let out = check(
        &manifest,
        r#"{"tools": [{"name": "t", "description": "d", "run": {"argv": ["echo"], "maxOutputBytes": 1000000000000}}]}"#,
    );
    assert!(
        text(&out.stderr).contains("/tools/0/run/maxOutputBytes: must be <= 67108864"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn what_no_command_could_be_given_and_members_named_twice_are_refused() {
    let dir = crate::scratch("check-unrunnable");
    let manifest = dir.join("m.json");
    let check = |document: &str| {
        let out = check(&manifest, document);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    // The second `run` would win for serde_json, the first for an editor or a reviewer.
    let twice = r#"{"tools": [{"name": "a", "description": "d", "run": {"argv": ["echo", "safe"]}, "run": {"argv": ["rm"]}}]}"#;
    assert!(
        check(twice).ends_with("m.json: the member \"run\" is named twice at line 1 column 85\n")
    );
    let stderr = check(
        r#"{"tools": [{"name": "a", "description": "d", "run": {"argv": ["tr\u0000ue", ["-x", "a\u0000"]], "cwd": "/t\u0000mp", "env": {"A=B": "x", "": "y", "N\u0000UL": "z", "OK": "v\u0000"}}}],
            "prompts": [{"name": "p", "arguments": [{"name": "a", "required": true}, {"name": "a"}], "messages": [{"role": "user", "text": "{{a}}"}]}]}"#,
    );
    let nul = "holds a NUL byte, which no command can be given";
    let name = "is not a variable name: it is empty, or holds = or a NUL byte";
    let problems = [
        format!("/tools/0/run/argv/0: {nul}"),
        format!("/tools/0/run/argv/1/1: {nul}"),
        format!("/tools/0/run/cwd: {nul}"),
        format!("/tools/0/run/env/: {name}"),
        format!("/tools/0/run/env/A=B: {name}"),
        // Control characters in a pointer are shown escaped, never written raw.
        format!("/tools/0/run/env/N\\u0000UL: {name}"),
        format!("/tools/0/run/env/OK: {nul}"),
        "/prompts/0/arguments/1/name: duplicate argument \"a\"".to_string(),
    ];
    for problem in &problems {
        assert!(stderr.contains(&format!("m.json: {problem}\n")), "{problem:?}:\n{stderr}");
    }
    assert_eq!(stderr.lines().count(), problems.len(), "{stderr}");
    assert!(!stderr.contains('\0'), "{stderr}");
}

#[test]
fn check_shows_control_characters_escaped_never_raw() {
    let dir = crate::scratch("check-control");
    let manifest = dir.join("m.json");
    let document = r#"{"server": {"name": "s\u001b[2J"}, "tools": [{"name": "t\u001b\u009b\nfake: ok\u202e\u200f", "description": "d", "run": {"argv": ["echo", "a\u009b"], "cwd": "/nowhere\u001b\nfake", "env": {"E\u001bV": "v\u001b"}}}]}"#;
    let out = check(&manifest, document);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    // One style, JSON's, in names and in the JSON-quoted values beside them; C1 controls
    // (which JSON leaves raw) included.
    assert!(stdout.contains("server s\\u001b[2J\n"), "{stdout}");
    // A line break in a name or path is escaped too: it cannot make a line of its own.
    // So are those that break or reorder a line on screen.
    let tool = "tool t\\u001b\\u009b\\nfake: ok\\u202e\\u200f: echo \"a\\u009b\"\n";
    assert!(stdout.contains(tool), "{stdout}");
    assert!(!stdout.lines().chain(stderr.lines()).any(|l| l.starts_with("fake")), "{stdout}");
    assert!(stdout.contains("  env: E\\u001bV=\"v\\u001b\"\n"), "{stdout}");
    // The warning that the cwd is no directory names it escaped too.
    assert!(stderr.contains("/nowhere\\u001b\\nfake"), "{stderr}");
    let raw = |text: &str| text.contains(['\x1b', '\u{9b}']);
    assert!(!raw(&stdout) && !raw(&stderr), "{stdout}{stderr}");
}

#[test]
fn the_summary_shows_each_command_whole_and_the_warnings_what_will_go_wrong() {
    let dir = crate::scratch("check-summary");
    std::fs::create_dir(dir.join("sub")).unwrap();
    let manifest = dir.join("m.json");
    let out = check(
        &manifest,
        r#"{"tools": [
  {"name": "a", "description": "d", "inputSchema": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
   "run": {"argv": ["sh", "-c", "cat; echo $GREETING", "--", "{who}"], "cwd": "sub", "stdin": "hi {who}\n", "env": {"GREETING": "hello {who}", "HOME": true}}},
  {"name": "log", "description": "d", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}},
   "run": {"argv": ["ls", "-w", "{n}"], "cwd": "/no/such/dir"}}
]}"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let path = manifest.display();
    assert_eq!(
        text(&out.stdout),
        format!(
            "{path}: ok\nserver baremcp-manifest\n\
             tool a: sh -c \"cat; echo $GREETING\" -- {{who}}\n\
             \x20 cwd: sub (relative to {})\n\
             \x20 stdin: \"hi {{who}}\\n\"\n\
             \x20 env: GREETING=\"hello {{who}}\", HOME (passed through)\n\
             tool log: ls -w {{n}}\n\
             \x20 cwd: /no/such/dir\n",
            dir.display()
        )
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "{path}: warning: /tools/1/run/cwd: cwd /no/such/dir is not a directory (a relative cwd \
             starts at the manifest's folder)\n\
             {path}: warning: /tools/1/run/argv/2: {{n}} is optional: without it this element is \
             dropped and \"-w\" is left without its value; group them ([\"-w\", \"{{n}}\"]) to drop \
             both, or give n a \"default\"\n"
        )
    );
}

/// docs/manifests.md's example manifest is checked as written, and prints what the page shows.
#[test]
fn the_documented_example_checks_as_shown() {
    let docs = std::fs::read_to_string(crate::root().join("docs/manifests.md")).unwrap();
    let block = |start: &str| {
        let from = docs.find(start).unwrap_or_else(|| panic!("no {start:?} block"));
        let body = &docs[from + start.find('\n').unwrap() + 1..];
        body[..body.find("```\n").unwrap()].to_string()
    };
    let dir = crate::scratch("check-docs-example");
    std::fs::write(dir.join("tools.json"), block("```json\n")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["check", "tools.json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), block("```text\ntools.json: ok\n"));
}

#[test]
fn subcommands_take_help_and_refuse_what_they_do_not_know() {
    for sub in ["validate", "check", "replay", "proxy"] {
        let out = baremcp(&[sub, "--help"]);
        assert!(out.status.success(), "{sub} --help: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with("usage: baremcp"),
            "{sub} --help: {}",
            text(&out.stdout)
        );
    }
    let refused: [(&[&str], &str); 6] = [
        (&["check", "a.json", "b.json"], "b.json"),
        (&["check"], "check needs a MANIFEST.json"),
        (&["validate", "--bogus", "s.json"], "--bogus"),
        (
            &["validate", "--jsonl", "s.json", "i.json"],
            "--jsonl reads instances from stdin: give no INSTANCE files",
        ),
        (&["replay", "--bogus", "t.txt"], "--bogus"),
        (&["proxy", "stray", "--", "cat"], "stray"),
    ];
    for (args, says) in refused {
        let out = baremcp(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.lines().next().is_some_and(|l| l.contains(says)), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("try 'baremcp {} --help'", args[0])),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn validate_jsonl_answers_every_line_even_one_that_is_not_utf8() {
    let dir = crate::scratch("validate-jsonl");
    let schema = dir.join("schema.json");
    std::fs::write(&schema, r#"{"type": "integer"}"#).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["validate", "--jsonl", &schema.to_string_lossy()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"1\n\"\xff\"\nnope\n2\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let verdicts: Vec<serde_json::Value> =
        text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(verdicts.len(), 4, "{}", text(&out.stdout));
    let valid: Vec<bool> = verdicts.iter().map(|v| v["valid"].as_bool().unwrap()).collect();
    assert_eq!(valid, [true, false, false, true]);
    assert!(
        verdicts[1]["errors"][0]["message"].as_str().unwrap().starts_with("line 2 is not UTF-8"),
        "{}",
        verdicts[1]
    );
    assert!(
        verdicts[2]["errors"][0]["message"].as_str().unwrap().starts_with("line 3 is not JSON"),
        "{}",
        verdicts[2]
    );
}

/// An `x-mcp-header` annotation that breaks a rule of the Streamable HTTP transport makes the
/// tool invalid (clients drop it): `check` reports each where it is, as serving would refuse
/// it; one on a nested property reached through `properties` alone is fine.
#[test]
fn an_invalid_x_mcp_header_is_reported_where_it_is() {
    let manifest = crate::scratch("check-param-header").join("headers.json");
    let tool = |name: &str, properties: &str| {
        format!(
            r#"{{"name": "{name}", "description": "d", "run": {{"argv": ["echo"]}},
                "inputSchema": {{"type": "object", "properties": {properties}}}}}"#
        )
    };
    let tools = [
        tool(
            "nested",
            r#"{"o": {"type": "object", "properties": {"d": {"type": "string", "x-mcp-header": "D"}}}}"#,
        ),
        tool("number", r#"{"n": {"type": "number", "x-mcp-header": "N"}}"#),
        tool(
            "twice",
            r#"{"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}"#,
        ),
        tool(
            "items",
            r#"{"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}}"#,
        ),
        tool("space", r#"{"s": {"type": "string", "x-mcp-header": "a b"}}"#),
        tool("object", r#"{"o": {"type": "object", "x-mcp-header": "O"}}"#),
        tool("untyped", r#"{"u": {"x-mcp-header": "U"}}"#),
        tool("nostring", r#"{"k": {"type": "string", "x-mcp-header": 5}}"#),
    ];
    let out = check(&manifest, &format!(r#"{{"tools": [{}]}}"#, tools.join(",")));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let problems = [
        "/tools/1/inputSchema/properties/n/x-mcp-header: must be on an integer, string or boolean \
         property (\"type\" naming one of them, optionally with \"null\"): \"type\" is \"number\"",
        "/tools/2/inputSchema/properties/b/x-mcp-header: \"mcp-param-dup\" is also used at \
         /properties/a/x-mcp-header (header names ignore case)",
        "/tools/3/inputSchema/properties/l/items/x-mcp-header: must be on a property reached \
         from the root through \"properties\" alone",
        "/tools/4/inputSchema/properties/s/x-mcp-header: \"a b\" holds a character a header name \
         may not",
        "/tools/5/inputSchema/properties/o/x-mcp-header: must be on an integer, string or boolean",
        "/tools/6/inputSchema/properties/u/x-mcp-header: must be on an integer, string or \
         boolean property (\"type\" naming one of them, optionally with \"null\"): \"type\" is \
         missing",
        "/tools/7/inputSchema/properties/k/x-mcp-header: must be a string",
    ];
    for problem in problems {
        assert!(stderr.contains(&format!("headers.json: {problem}")), "{problem:?}:\n{stderr}");
    }
    assert_eq!(stderr.lines().count(), problems.len(), "{stderr}");
    let out = check(&manifest, &format!(r#"{{"tools": [{}]}}"#, tools[0]));
    assert!(out.status.success(), "{}", text(&out.stderr));
}
