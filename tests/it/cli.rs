//! The binary as a process: flags and exit codes, a closed stdout, bounded memory on huge
//! lines, glibc's libm loaded only when needed, and `baremcp validate`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

pub(crate) fn baremcp() -> Command {
    Command::new(env!("CARGO_BIN_EXE_baremcp"))
}

pub(crate) fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = baremcp()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The process may exit before reading (a bad flag, a broken manifest): a closed pipe
    // here is part of what is being tested, not a failure of the test.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_and_version_go_to_stdout() {
    let help = run(&["--help"], "");
    assert!(help.status.success());
    assert!(text(&help.stdout).starts_with("usage: baremcp"));
    let version = run(&["--version"], "");
    assert_eq!(
        text(&version.stdout),
        format!(
            "baremcp {}\nprotocol versions: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    // docs/cli.md shows each help as the binary prints it.
    let docs = std::fs::read_to_string(crate::root().join("docs/cli.md")).unwrap();
    let shown = |out: &Output| docs.contains(&format!("```text\n{}```\n", text(&out.stdout)));
    assert!(shown(&help), "docs/cli.md must show `baremcp --help` as it is");
    // Each command's --help is its own, never a file name or the global help.
    for command in ["validate", "check", "replay", "proxy", "help"] {
        let out = run(&[command, "--help"], "");
        assert!(shown(&out), "docs/cli.md must show `baremcp {command} --help` as it is");
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).starts_with(&format!("usage: baremcp {command} ")),
            "{}",
            text(&out.stdout)
        );
        assert!(out.stderr.is_empty(), "{command}: {}", text(&out.stderr));
    }
}

#[test]
fn check_prints_the_manifest_schema_and_the_example_manifests_pass_it() {
    let out = run(&["check", "--schema"], "");
    assert!(out.status.success());
    let schema = crate::scratch("manifest-schema").join("schema.json");
    std::fs::write(&schema, &out.stdout).unwrap();
    let parsed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(parsed["$schema"], "https://json-schema.org/draft/2020-12/schema");
    // The schema and `check` agree: every example loads and validates, the broken one fails both.
    for name in ["git", "sysinfo", "test", "tmkb", "broken"] {
        let manifest = crate::fixture(&format!("manifests/{name}.json"));
        let validated =
            run(&["validate", &schema.to_string_lossy(), &manifest.to_string_lossy()], "");
        let checked = run(&["check", &manifest.to_string_lossy()], "");
        let expected = if name == "broken" { (Some(1), Some(2)) } else { (Some(0), Some(0)) };
        assert_eq!(
            (validated.status.code(), checked.status.code()),
            expected,
            "{name}: {}",
            text(&validated.stdout)
        );
        assert!(
            validated.stderr.is_empty(),
            "the schema loads without warnings: {}",
            text(&validated.stderr)
        );
    }
}

#[test]
fn bad_flags_exit_2_with_one_line_and_a_pointer_to_help() {
    for (args, help) in [
        (&["--bogus"][..], "baremcp --help"),
        (&["--page-size", "0"], "baremcp --help"),
        (&["--max-message-bytes", "lots"], "baremcp --help"),
        (&["--log-level", "loud"], "baremcp --help"),
        (&["stray"], "baremcp --help"),
        (&["validate", "--bogus", "s.json"], "baremcp validate --help"),
        (&["check"], "baremcp check --help"),
        (&["replay", "--timeout-ms", "0", "f.txt"], "baremcp replay --help"),
        (&["proxy", "--record"], "baremcp proxy --help"),
        (&["--roots", "x"], "baremcp --help"),
        (&["--http", "http://127.0.0.1:8080/mcp"], "baremcp --help"),
        (&["proxy", "cat"], "baremcp proxy --help"),
        (&["--root", "x", "check", "m.json"], "baremcp check --help"),
        (&["help", "chekc"], "baremcp --help"),
        // A flag that keeps one value, given twice: the last would silently win.
        (
            &["proxy", "--record", "/dev/null", "--record", "/dev/null", "--", "cat"],
            "baremcp proxy --help",
        ),
        (&["--manifest", "a", "--manifest=b"], "baremcp --help"),
        (&["check", "--schema", "--bogus"], "baremcp check --help"),
    ] {
        let out = run(args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must stay empty");
        let stderr = text(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {stderr}");
        assert!(lines[0].starts_with("baremcp: "), "{args:?}: {stderr}");
        assert_eq!(lines[1], format!("try '{help}'"), "{args:?}");
    }
}

#[test]
fn a_file_that_cannot_be_read_is_named_once() {
    let dir = crate::scratch("unreadable");
    let nope = dir.join("nope.json").to_string_lossy().into_owned();
    let gone = "No such file or directory (os error 2)";
    for (args, says) in [
        (vec!["--manifest", &nope], format!("baremcp: {nope}: {gone}")),
        (vec!["check", &nope], format!("{nope}: {gone}")),
        (
            vec!["--http", "127.0.0.1:0", "--auth-token-file", &nope],
            format!("baremcp: --auth-token-file {nope}: {gone}"),
        ),
    ] {
        let out = run(&args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr), format!("{says}\n"), "{args:?}");
    }
    // A file that is not JSON is named once too, with where the JSON breaks.
    let readme = crate::root().join("README.md").to_string_lossy().into_owned();
    let out = run(&["--manifest", &readme], "");
    assert_eq!(
        text(&out.stderr),
        format!("baremcp: {readme}: not JSON: expected value at line 1 column 1\n")
    );
}

#[test]
fn a_closed_stdout_ends_the_server_quietly() {
    let mut child = baremcp()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n".repeat(100_000);
    // The server may be gone before all of this is written; that is the point.
    let _ = stdin.write_all(ping.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
}

/// Peak resident memory of a running process, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_64_mib_line_is_refused_without_being_held() {
    let mut child = crate::serving(["--max-message-bytes", "1048576"]).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let chunk = vec![b'x'; 1 << 20];
    stdin.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#).unwrap();
    for _ in 0..64 {
        stdin.write_all(&chunk).unwrap();
    }
    stdin.write_all(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").unwrap();
    stdin.flush().unwrap();
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        lines.push(line);
    }
    let peak = peak_kib(child.id());
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(
        lines[0],
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"message too large\"}}\n"
    );
    assert_eq!(lines[1], "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
    assert!(peak < 16 * 1024, "peak memory {peak} KiB for a 64 MiB line with a 1 MiB limit");
}

/// glibc's libm is not mapped at start, only once an expression needs it, and then the
/// calculator answers with glibc's own `sin`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn libm_is_loaded_on_first_use() {
    let mut child = crate::serving::<&str>([]).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        reply
    };
    let libm_mapped = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap().contains("/libm.so")
    };
    ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
    );
    ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"sqrt(4)"}}}"#,
    );
    assert!(!libm_mapped(child.id()), "libm is mapped before any expression needs it");
    let reply = ask(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"sin(1)"}}}"#,
    );
    assert!(libm_mapped(child.id()), "libm is not mapped after sin(1)");
    assert!(
        reply.contains(&format!(r#""structuredContent":{{"value":{}}}"#, 1f64.sin())),
        "{reply}"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn validate_reports_each_instance_and_exits_by_verdict() {
    let dir = crate::scratch("validate");
    let schema = dir.join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}"#,
    )
    .unwrap();
    std::fs::write(dir.join("good.json"), r#"{"n": 1}"#).unwrap();
    std::fs::write(dir.join("bad.json"), r#"{"n": "1", "x": 0}"#).unwrap();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();

    let good = run(&["validate", &path("schema.json"), &path("good.json")], "");
    assert_eq!(good.status.code(), Some(0));
    assert_eq!(text(&good.stdout), format!("{}: valid\n", path("good.json")));

    let bad = run(&["validate", &path("schema.json"), &path("good.json"), &path("bad.json")], "");
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        text(&bad.stdout),
        format!(
            "{}: valid\n{}: invalid\n  /n: expected integer, got string \"1\"\n  /: unknown property \"x\" (allowed: n)\n",
            path("good.json"),
            path("bad.json")
        )
    );

    let jsonl = run(&["validate", "--jsonl", &path("schema.json")], "{\"n\":2}\n{}\nnot json\n");
    assert_eq!(jsonl.status.code(), Some(1));
    let lines: Vec<serde_json::Value> =
        text(&jsonl.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0], serde_json::json!({"valid": true, "errors": []}));
    assert_eq!(
        lines[1],
        serde_json::json!({"valid": false, "errors": [{"instancePath": "/", "keywordPath": "/required", "message": "missing required property \"n\""}]})
    );
    assert_eq!(lines[2]["valid"], false);

    std::fs::write(
        dir.join("broken.json"),
        r##"{"type":"strng","minLength":-1,"$ref":"#/nowhere"}"##,
    )
    .unwrap();
    let broken = run(&["validate", &path("broken.json"), &path("good.json")], "");
    assert_eq!(broken.status.code(), Some(2));
    let stderr = text(&broken.stderr);
    for expected in [
        "/type: unknown type \"strng\"",
        "/minLength: must be a non-negative integer",
        "/$ref: $ref \"#/nowhere\" does not resolve",
    ] {
        assert!(stderr.contains(expected), "{expected} not in {stderr}");
    }
    let missing = run(&["validate", &path("absent.json")], "");
    assert_eq!(missing.status.code(), Some(2));
    // An instance that cannot be read is not invalid: nothing was checked (2, named on stderr).
    std::fs::write(dir.join("text.json"), "not json").unwrap();
    for unreadable in ["absent.json", "text.json"] {
        let out = run(
            &[
                "validate",
                &path("schema.json"),
                &path("good.json"),
                &path(unreadable),
                &path("bad.json"),
            ],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{unreadable}");
        assert!(
            text(&out.stderr).starts_with(&format!("{}: ", path(unreadable))),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stdout).lines().filter(|l| !l.starts_with("  ")).count(),
            2,
            "the others are still checked"
        );
    }

    std::fs::write(
        dir.join("warn.json"),
        r#"{"type":"object","unevaluatedProperties":false,"properties":{"a":{"$ref":"https://example.com/s.json"}}}"#,
    )
    .unwrap();
    let warned = run(&["validate", &path("warn.json"), &path("good.json")], "");
    assert_eq!(warned.status.code(), Some(0));
    let stderr = text(&warned.stderr);
    assert!(
        stderr.contains("warning: /unevaluatedProperties: unevaluatedProperties is not supported and is not enforced"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: /properties/a/$ref: remote $ref \"https://example.com/s.json\" is not followed"),
        "{stderr}"
    );
}

#[test]
fn manifests_are_checked_completely_before_serving() {
    let broken = crate::fixture("manifests/broken.json").to_string_lossy().into_owned();
    let checked = run(&["check", &broken], "");
    assert_eq!(checked.status.code(), Some(2));
    let stderr = text(&checked.stderr);
    let pointers = [
        "/server: unknown property \"colour\"",
        "/tools/0/run/argv/1",
        "/tools/1/name",
        "/tools/2/inputSchema/properties/x/type",
        "/tools/3/run/argv/0",
        "/tools/4: missing required property \"description\"",
        "/tools/4/run/argv:",
        "/tools/4/run/timeoutMs",
        "/tools/4/run/okExitCodes",
        "/tools/4/run/output",
        "/tools/5/inputSchema",
        "/tools/5/run: unknown property \"shell\"",
        "/resources/0:",
        "/resources/1/path",
        "/resources/1/uri",
        "/resourceTemplates/0/run/argv/1",
        "/prompts/0/messages/0/role",
        "/prompts/0/messages/0/text",
    ];
    for pointer in pointers {
        assert!(
            stderr.contains(&format!("broken.json: {pointer}")),
            "{pointer} not reported:\n{stderr}"
        );
    }
    assert_eq!(stderr.lines().count(), pointers.len(), "{stderr}");
    // Serving refuses the same manifest without answering anything.
    let served =
        run(&["--manifest", &broken], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
    assert_eq!(served.status.code(), Some(2));
    assert!(served.stdout.is_empty());
    for good in ["test", "tmkb", "git", "sysinfo"] {
        let path = crate::fixture(&format!("manifests/{good}.json")).to_string_lossy().into_owned();
        let checked = run(&["check", &path], "");
        assert!(checked.status.success(), "{good}: {}", text(&checked.stderr));
        assert!(
            text(&checked.stdout).starts_with(&format!("{path}: ok\nserver ")),
            "{}",
            text(&checked.stdout)
        );
    }
}

#[test]
fn manifest_commands_see_a_minimal_environment_and_real_commands_run() {
    let call = |name: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"{name}\",\"arguments\":{{\"name\":\"x\"}},\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{{}}}}}}}}\n"
        )
    };
    let manifest = |name: &str| {
        crate::fixture(&format!("manifests/{name}.json")).to_string_lossy().into_owned()
    };
    let mut child = baremcp()
        .args(["--manifest", &manifest("test")])
        .env("SECRET", "must not leak")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(call("env_names").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "GREETING\n", "{reply}");
    // test.json passes values with a leading `-` on purpose; serving warns about each such
    // placeholder, as `check` does.
    let stderr = text(&out.stderr);
    let warned: Vec<&str> =
        stderr.lines().filter(|l| l.contains(" WARN  baremcp::manifest: ")).collect();
    assert_eq!(warned.len(), 4, "{stderr}");
    assert!(warned[0].ends_with("test.json: /tools/0/run/argv/3: {query} can start with \"-\" and then reads as an option: put \"--\" in argv before it, or constrain the property (e.g. \"pattern\": \"^[^-]\" or \"minimum\": 0)"), "{stderr}");
    // The example manifests work against this machine, and git.json against a repository made
    // here (it serves the repository two folders above it), so no checkout is needed.
    let repo = crate::scratch("git-manifest");
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let has_git = git(&["init", "-q"])
        && git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "first",
        ]);
    std::fs::create_dir_all(repo.join("a/b")).unwrap();
    std::fs::copy(manifest("git"), repo.join("a/b/git.json")).unwrap();
    let in_repo = repo.join("a/b/git.json").to_string_lossy().into_owned();
    let mut cases = vec![(manifest("sysinfo"), "uname"), (manifest("sysinfo"), "uptime")];
    if has_git {
        cases.extend([(in_repo.clone(), "git_log"), (in_repo, "git_status")]);
    } else {
        eprintln!("skipped git.json: git is not installed");
    }
    for (file, tool) in cases {
        // These tools take no `name`: send them no arguments.
        let out = run(&["--manifest", &file], &call(tool).replace(r#"{"name":"x"}"#, "{}"));
        let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(reply["result"]["isError"], serde_json::Value::Null, "{file} {tool}: {reply}");
        assert!(
            !reply["result"]["content"][0]["text"].as_str().unwrap_or("").is_empty()
                || tool == "git_status",
            "{reply}"
        );
    }
}

/// A library server on stdio ends cleanly when its client closes stdout, as the binary does:
/// `serve_stdio` returns `Ok`, not a `BrokenPipe` error every embedder would have to know.
/// The server runs in a child process of this test binary (`serve_stdio_child`).
#[test]
fn serve_stdio_ends_cleanly_when_stdout_closes() {
    // Another test's process spawned at the wrong moment can hold a copy of the pipe's
    // reading end for a while, and then the reply is written after all: tried again.
    let status = (0..3).find_map(|_| stdout_closed_under_serve_stdio(Duration::from_secs(10)));
    let status = status.expect("serve_stdio did not end after its stdout closed (3 tries)");
    assert_eq!(
        status.code(),
        Some(0),
        "serve_stdio returned an error for a closed stdout (exit 3)"
    );
}

/// Runs `serve_stdio_child`, closes its stdout and sends it a request: how it exited, or
/// `None` (killed) when it had not within `patience`.
fn stdout_closed_under_serve_stdio(patience: Duration) -> Option<std::process::ExitStatus> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "cli::serve_stdio_child", "--nocapture", "--test-threads=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The test harness writes to stdout before the test runs: only then is stdout closed.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while line.trim() != "serving" {
        line.clear();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "the child test never started serving");
    }
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").unwrap();
    stdin.flush().unwrap();
    let deadline = std::time::Instant::now() + patience;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
#[ignore = "the child process of serve_stdio_ends_cleanly_when_stdout_closes"]
fn serve_stdio_child() {
    eprintln!("serving");
    let served = baremcp::Server::new("child", "1").serve_stdio();
    std::process::exit(if served.is_ok() { 0 } else { 3 });
}
