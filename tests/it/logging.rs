//! Logging of the binary: lines on stderr (or `--log-file`) only, each module's lines under its
//! own filter, the request line and its trace id, and a client's text kept on its line.

use std::io::{Read, Write};
use std::process::Stdio;

use crate::cli::{baremcp, run, text};

#[test]
fn logs_go_to_stderr_and_stdout_stays_protocol() {
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n\
                 {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"hello\",\"arguments\":{\"name\":\"log\"}}}\n\
                 {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}\n";
    let out = run(&["--log-level", "debug"], input);
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 3);
    assert!(stdout.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(r#"<- {"jsonrpc":"2.0","id":3,"method":"nope"}"#), "{stderr}");
    assert!(stderr.contains(r#"-> {"jsonrpc":"2.0","id":3,"error":{"code":-32601"#), "{stderr}");
    let info: Vec<&str> = stderr.lines().filter(|l| l.contains(" INFO  ")).collect();
    assert_eq!(info.len(), 3, "{stderr}");
    // Each line starts with an RFC 3339 UTC timestamp, then the level and the module.
    for line in stderr.lines() {
        let (stamp, rest) = line.split_once(' ').unwrap();
        let b = stamp.as_bytes();
        assert!(
            stamp.len() == 24
                && b[4] == b'-'
                && b[10] == b'T'
                && b[19] == b'.'
                && stamp.ends_with('Z'),
            "{line}"
        );
        assert!(
            rest.starts_with("INFO  baremcp::") || rest.starts_with("DEBUG baremcp::"),
            "{line}"
        );
    }
    assert!(
        info[1].contains("tools/call id=2 ") && info[1].ends_with("ok tool=hello isError=false"),
        "{}",
        info[1]
    );
    assert!(info[2].contains("nope id=3 ") && info[2].ends_with("error -32601"), "{}", info[2]);

    let quiet = run(&[], input);
    assert!(quiet.stderr.is_empty(), "{}", text(&quiet.stderr));
    let by_env = baremcp()
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = by_env.unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    child.wait().unwrap();
    assert_eq!(
        stderr.lines().filter(|l| l.contains(" INFO  baremcp::request: ")).count(),
        3,
        "{stderr}"
    );
}

/// The log lines a run of `input` writes with `RUST_LOG=filter`.
fn logged(filter: &str, input: &str) -> Vec<String> {
    let mut child = baremcp()
        .env("RUST_LOG", filter)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    child.wait().unwrap();
    stderr.lines().map(|l| l.split_once(' ').unwrap().1.to_string()).collect()
}

#[test]
fn each_module_the_docs_name_filters_its_own_lines() {
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    // The targets docs/cli.md's Logging section lists, each with the lines it carries.
    let readme = std::fs::read_to_string(crate::root().join("docs/cli.md")).unwrap();
    for (module, level, expected) in [
        ("baremcp::request", "info", "INFO  baremcp::request: ping id=1 "),
        (
            "baremcp::serve",
            "debug",
            "DEBUG baremcp::serve: <- {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        ),
        (
            "baremcp::outbox",
            "debug",
            "DEBUG baremcp::outbox: -> {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
        ),
    ] {
        assert!(readme.contains(&format!("`{module}`")), "docs/cli.md's Logging names {module}");
        let lines = logged(&format!("{module}={level}"), input);
        assert_eq!(lines.len(), 1, "{module}: {lines:?}");
        assert!(lines[0].starts_with(expected), "{module}: {lines:?}");
    }
    assert!(
        logged("baremcp::dispatch=trace", input).is_empty(),
        "a module that logs nothing shows nothing"
    );
}

/// A request's line names the W3C trace id of its `_meta.traceparent`, and only a valid one.
#[test]
fn the_request_line_names_the_trace_id_of_its_traceparent() {
    let meta = |traceparent: &str| {
        format!(r#""_meta":{{"traceparent":"{traceparent}","tracestate":"rojo=00f067aa0ba902b7"}}"#)
    };
    let call = |id: u32, meta: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"hello","arguments":{{"name":"T"}},{meta}}}}}"#
        )
    };
    let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let modern = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}"#;
    let input = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#.to_string(),
        call(1, &meta(valid)),
        call(2, &meta(&valid.to_uppercase())),
        call(3, r#""_meta":{"progressToken":1}"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{"_meta":{{{modern},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"}}}}}}"#
        ),
    ]
    .join("\n")
        + "\n";
    let lines = logged("baremcp::request=info", &input);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[1].starts_with("INFO  baremcp::request: tools/call id=1 "), "{lines:?}");
    assert!(
        lines[1].ends_with(" tool=hello isError=false trace_id=4bf92f3577b34da6a3ce929d0e0e4736")
    );
    // Uppercase hex is not a trace context; no traceparent, no trace id.
    assert!(
        lines[2].ends_with(" isError=false") && lines[3].ends_with(" isError=false"),
        "{lines:?}"
    );
    assert!(lines[4].ends_with(" ok trace_id=0af7651916cd43dd8448eb211c80319c"), "{lines:?}");
}

#[test]
fn log_file_gets_the_lines_and_an_unwritable_one_is_named() {
    let dir = crate::scratch("log-file");
    let file = dir.join("baremcp.log");
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    let out = run(&["--log-level", "info", "--log-file", &file.to_string_lossy()], input);
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains(" INFO  baremcp::request: ping id=1 "), "{written}");
    // A second run appends.
    run(&["--log-level", "info", "--log-file", &file.to_string_lossy()], input);
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 2);
    let nowhere = dir.join("no/such/dir/x.log").to_string_lossy().into_owned();
    let out = run(&["--log-file", &nowhere], input);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!("baremcp: {nowhere}: ")),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["proxy", "--record", &nowhere, "--", "cat"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!("baremcp: {nowhere}: ")),
        "{}",
        text(&out.stderr)
    );
}

/// A client's text cannot write a log line of its own, nor terminal escapes: a method name with
/// a newline, a carriage return and escape sequences stays on its request's line, escaped, at
/// every level that logs it (the request line, an ignored notification, the wire at debug).
#[test]
fn a_client_s_text_stays_on_its_line() {
    let forged = r#"x\n2026-11-28T00:00:00.000Z ERROR baremcp::http: forged\r\u001b[2J"#;
    let input = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"{forged}\"}}\n\
         {{\"jsonrpc\":\"2.0\",\"method\":\"{forged}\"}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":\"\u{9b}2J\",\"result\":{{}}}}\n"
    );
    let lines = logged("baremcp=debug", &input);
    let shown = r"x\n2026-11-28T00:00:00.000Z ERROR baremcp::http: forged\r\u001b[2J";
    assert!(lines.iter().all(|l| !l.contains("ERROR") || l.contains(shown)), "{lines:?}");
    assert!(lines.iter().all(|l| !l.contains(['\r', '\u{1b}', '\u{9b}'])), "{lines:?}");
    for expected in [
        format!("INFO  baremcp::request: {shown} id=2 "),
        format!("DEBUG baremcp::session: ignored notification {shown}"),
        r#"DEBUG baremcp::session: ignored a response to "\u009b2J": no request"#.to_string(),
        format!(
            "DEBUG baremcp::serve: <- {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"{forged}\"}}"
        ),
    ] {
        assert!(lines.iter().any(|l| l.starts_with(&expected)), "{expected}\n{lines:?}");
    }
}

/// The proxy's debug lines show a method or id escaped as the server's own lines do.
#[test]
fn the_proxy_keeps_a_client_s_text_on_its_line() {
    let forged = r#"x\nERROR forged\u001b[2J"#;
    let mut child = baremcp()
        .args(["proxy", "--", "cat"])
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"{forged}\"}}\n");
    child.stdin.take().unwrap().write_all(line.as_bytes()).unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    child.wait().unwrap();
    let shown = r"method=x\nERROR forged\u001b[2J id=1";
    assert_eq!(stderr.matches(shown).count(), 2, "both ways:\n{stderr}");
    assert!(stderr.lines().all(|l| !l.starts_with("ERROR") && !l.contains('\u{1b}')), "{stderr}");
}

/// Set in the environment of [`panic_child`]: the binary's logger and panic hook are the
/// process's own, so they are installed in a process of their own, not among the other tests.
const PANIC_CHILD: &str = "BAREMCP_TEST_PANIC_CHILD";

/// A handler's panic is logged under `baremcp::panic`, which a filter can name alone.
#[test]
fn a_handler_s_panic_is_logged_under_its_own_target() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "logging::panic_child", "--nocapture"])
        .env(PANIC_CHILD, "1")
        .env("RUST_LOG", "baremcp::panic=error")
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        crate::docs::section("docs/cli.md", "## Logging").contains("| `baremcp::panic` |"),
        "docs/cli.md's Logging names baremcp::panic"
    );
    // One line: the panic's location, then its message escaped, so a message carrying a
    // client's text writes no line of its own.
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.is_empty()).collect();
    let [line] = lines[..] else { panic!("one line: {stderr}") };
    assert!(line.contains(" ERROR baremcp::panic: panicked at "), "{stderr}");
    assert!(line.ends_with(":\\nkaboom\\n2026-11-28 ERROR forged"), "{stderr}");
}

#[test]
#[ignore = "the child process of a_handler_s_panic_is_logged_under_its_own_target"]
fn panic_child() {
    if std::env::var_os(PANIC_CHILD).is_none() {
        return;
    }
    crate::app::init_logger(None, None).unwrap();
    let mut server = baremcp::Server::new("panics", "1");
    let schema = serde_json::json!({"type": "object"});
    server
        .add_tool(baremcp::Tool::new("explode", "Panics", schema, |_, _| {
            panic!("kaboom\n2026-11-28 ERROR forged")
        }))
        .unwrap();
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n\
                 {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"explode\"}}\n";
    let mut out = Vec::new();
    server.serve(&mut input.as_bytes(), &mut out).unwrap();
    assert!(
        text(&out).contains("internal error (kaboom\\n2026-11-28 ERROR forged)"),
        "{}",
        text(&out)
    );
}

/// On stdio as over HTTP, a `subscriptions/listen` stream is logged once, when it ends: when
/// its client cancels it, or is gone (the end of input), its duration how long it was open.
#[test]
fn a_listen_stream_on_stdio_is_logged_once_when_it_ends() {
    let listen = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{{}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}}}}"#
        )
    };
    let mut child = baremcp()
        .env("RUST_LOG", "baremcp::request=info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}\n{}", listen("5"), listen(r#""s6""#)).unwrap();
    // Both streams are open once acknowledged.
    let mut acks = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    for _ in 0..2 {
        let ack = acks.next().unwrap().unwrap();
        assert!(ack.contains("notifications/subscriptions/acknowledged"), "{ack}");
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
    writeln!(stdin, "{cancel}\n{cancel}").unwrap();
    drop(stdin);
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    child.wait().unwrap();
    let lines: Vec<&str> = stderr.lines().map(|l| l.split_once(' ').unwrap().1).collect();
    assert_eq!(lines.len(), 2, "once each: {stderr}");
    let trace = " ok trace_id=4bf92f3577b34da6a3ce929d0e0e4736";
    for (line, id) in lines.iter().zip(["5", r#""s6""#]) {
        let head = format!("INFO  baremcp::request: subscriptions/listen id={id} ");
        assert!(line.starts_with(&head) && line.ends_with(trace), "{line}");
        let micros: u64 = line.split(' ').find_map(|w| w.strip_suffix("us")?.parse().ok()).unwrap();
        assert!(micros >= 300_000, "open for as long as it was: {line}");
    }
}
