//! `baremcp replay` and `baremcp proxy` as processes: baremcp's own transcripts replayed
//! against the binary as an external command, a session recorded through the proxy and
//! replayed, the tool filters, and servers that hang, exit early or write garbage.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_baremcp")
}

fn replay(args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = Command::new(bin())
        .arg("replay")
        .args(args)
        .env("FIXTURES", crate::fixtures())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (out, started.elapsed())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn transcripts(dir: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(crate::fixture(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

#[test]
fn own_transcripts_pass_against_the_binary_as_an_external_command() {
    let files = transcripts("transcripts");
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.extend(["--", bin()]);
    let (out, _) = replay(&args);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.ends_with(&format!("\n{} passed, 0 failed\n", files.len())), "{text}");
    // And against the built-in server, with no command at all.
    let args: Vec<&str> = files.iter().map(String::as_str).collect();
    let (out, _) = replay(&args);
    assert!(out.status.success(), "{}", stdout(&out));
}

#[test]
fn a_verdict_whose_output_closes_early_fails() {
    // A report that cannot be written (its reader gone, as `| head` leaves it) has not shown
    // that every file passed: replay fails, and so does `validate`.
    let files = transcripts("transcripts");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut replay = Command::new(bin());
    replay.arg("replay").args(&files[..2]).stdout(writer.try_clone().unwrap());
    assert_eq!(replay.status().unwrap().code(), Some(1));
    let dir = crate::scratch("closed-verdict");
    std::fs::write(dir.join("schema.json"), r#"{"type": "string"}"#).unwrap();
    std::fs::write(dir.join("one.json"), "1").unwrap();
    let mut validate = Command::new(bin());
    validate.current_dir(&dir).args(["validate", "schema.json", "one.json"]).stdout(writer);
    assert_eq!(validate.status().unwrap().code(), Some(1));
}

#[test]
fn filters_and_placeholders() {
    let file =
        |name: &str| crate::fixture(&format!("replay/{name}")).to_string_lossy().into_owned();
    let deny = file("deny-tools.txt");
    let (out, _) = replay(&[
        &deny,
        "--",
        bin(),
        "proxy",
        "--deny-tools",
        "calculate",
        "--",
        bin(),
        "--page-size",
        "1",
    ]);
    assert!(out.status.success(), "{}", stdout(&out));
    // Each request in a batch the filter refuses gets its own error (a 2025-03-26 session).
    let batch = file("deny-tools-batch.txt");
    let (out, _) = replay(&[&batch, "--", bin(), "proxy", "--deny-tools", "hello", "--", bin()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let allow = file("allow-tools.txt");
    let (out, _) =
        replay(&[&allow, "--", bin(), "proxy", "--allow-tools", "calculate", "--", bin()]);
    assert!(out.status.success(), "{}", stdout(&out));
    let (out, _) = replay(&[&file("placeholders.txt")]);
    assert!(out.status.success(), "{}", stdout(&out));
    // With `cat` upstream, whatever the proxy forwards comes back: nothing ambiguous may.
    let (out, _) = replay(&[
        &file("ambiguous-client.txt"),
        "--",
        bin(),
        "proxy",
        "--allow-tools",
        "calculate",
        "--",
        "cat",
    ]);
    assert!(out.status.success(), "{}", stdout(&out));
    // Without the filter the same deny transcript fails: the filter is what it checks.
    let (out, _) = replay(&[&deny, "--", bin(), "--page-size", "1"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_session_recorded_through_the_proxy_replays() {
    let dir = crate::scratch("proxy-record");
    let record = dir.join("session.txt");
    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":"two","method":"tools/list"}"#,
        r#"[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hello","arguments":{"name":"batch"}}}]"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"calculate","arguments":{"expression":"1/0"}}}"#,
        "not json",
        r#"{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ];
    let input: String = session.iter().map(|l| format!("{l}\n")).collect::<String>()
        + "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\r\n";
    let run = |args: &[&str]| {
        let mut child = Command::new(bin())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let direct = run(&[]);
    let record_arg = record.to_string_lossy().into_owned();
    let proxied = run(&["proxy", "--record", &record_arg, "--", bin()]);
    assert!(proxied.status.success());
    assert_eq!(stdout(&proxied), stdout(&direct), "the proxy must forward every line unchanged");
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(
        recorded.contains("-->~ {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\\r\\n"),
        "{recorded}"
    );
    assert_eq!(recorded.lines().filter(|l| l.starts_with("<-- ")).count(), 7, "{recorded}");
    let (out, _) = replay(&[&record_arg, "--", bin()]);
    assert!(out.status.success(), "{}\n{recorded}", stdout(&out));
}

#[test]
fn broken_servers_fail_clearly_and_quickly() {
    let seed = crate::fixture("transcripts/seed-session.txt").to_string_lossy().into_owned();
    let cases: [(&[&str], &str); 4] = [
        (&["sleep", "30"], "line 5: timed out after 300 ms waiting for:"),
        // Gone before or after the first line is written: either way it is named.
        (&["true"], "the server closed its"),
        (
            &["sh", "-c", "read x; echo garbage; cat >/dev/null"],
            "line 5: the server wrote a line that cannot be read as JSON \
             (expected value at line 1 column 1):\n  garbage",
        ),
        (&["sh", "-c", "cat >/dev/null; exit 3"], "timed out"),
    ];
    for (command, expected) in cases {
        let mut args = vec!["--timeout-ms", "300", &seed, "--"];
        args.extend(command);
        let (out, elapsed) = replay(&args);
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(1), "{command:?}: {text}");
        assert!(
            text.contains("seed-session.txt: FAILED") && text.contains(expected),
            "{command:?}: {text}"
        );
        assert!(text.ends_with("0 passed, 1 failed\n"), "{text}");
        assert!(elapsed < Duration::from_secs(5), "{command:?} took {elapsed:?}");
    }
    // A server that answers but then exits with an error status fails at the end.
    let ping = crate::scratch("replay-exit").join("ping.txt");
    std::fs::write(&ping, "# ping\n--> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n<-- {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").unwrap();
    let ping = ping.to_string_lossy().into_owned();
    let script = r#"read x; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; cat >/dev/null; exit 4"#;
    let (out, _) = replay(&[&ping, "--", "sh", "-c", script]);
    assert!(stdout(&out).contains("the server exited with exit status: 4"), "{}", stdout(&out));
    // A line longer than the server's own input limit is reported without being held.
    let script = r#"read x; head -c 17000000 /dev/zero | tr '\0' x; echo; cat >/dev/null"#;
    let (out, _) = replay(&["--timeout-ms", "20000", &ping, "--", "sh", "-c", script]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "line 3: the server wrote a line longer than 16777216 bytes (not kept) waiting for:"
        ),
        "{text}"
    );
    // A message nobody asked for is a failure too.
    let script = r#"read x; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; echo '{"jsonrpc":"2.0","method":"surprise"}'; cat >/dev/null"#;
    let (out, _) = replay(&[&ping, "--", "sh", "-c", script]);
    assert!(stdout(&out).contains("unexpected message"), "{}", stdout(&out));
}

#[test]
fn update_rewrites_expectations_and_stderr_can_be_captured() {
    let dir = crate::scratch("replay-update");
    let original = std::fs::read_to_string(crate::fixture("transcripts/tools-hello.txt")).unwrap();
    let stale: String = original
        .lines()
        .map(|l| if l.starts_with("<-- ") { "<-- {\"stale\":true}" } else { l })
        .map(|l| format!("{l}\n"))
        .collect();
    let file = dir.join("t.txt");
    std::fs::write(&file, stale).unwrap();
    let path = file.to_string_lossy().into_owned();
    let log = dir.join("stderr.log");
    let (out, _) = replay(&[
        "--update",
        "--stderr",
        &log.to_string_lossy(),
        &path,
        "--",
        bin(),
        "--log-level",
        "info",
    ]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert!(std::fs::read_to_string(&log).unwrap().contains("tools/call id=1"));
    let (out, _) = replay(&[&path]);
    assert!(out.status.success(), "{}", stdout(&out));
    // A server slower than the quiet period still has each response recorded after its
    // request: --update waits for the response to each request it sends.
    std::fs::write(&file, original.replace("<-- {", "<-- {\"stale\":true,")).unwrap();
    let (out, _) = replay(&["--update", &path, "--", "sh", "-c", r#"sleep 0.5; exec "$0""#, bin()]);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    // Requests answered only after the client's next line (a server question, a cancel) or
    // never (a listen stream) are recorded all the same: the wait for a response is bounded.
    let everything = crate::library::example("everything").to_string_lossy().into_owned();
    for (name, server) in [
        ("everything/sampling-legacy.txt", everything.as_str()),
        ("everything/elicitation-cancel.txt", everything.as_str()),
        ("modern-subscriptions-listen.txt", bin()),
    ] {
        let original =
            std::fs::read_to_string(crate::fixture(&format!("transcripts/{name}"))).unwrap();
        std::fs::write(&file, original.replace("<-- {", "<-- {\"stale\":true,")).unwrap();
        let (out, _) = replay(&["--update", &path, "--", server]);
        assert!(out.status.success(), "{name}: {}", stdout(&out));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "{name}");
    }
}

/// What `baremcp proxy args…` writes to its client for `input`; it must exit 0.
fn proxy(args: &[&str], input: &str) -> String {
    let mut child = Command::new(bin())
        .arg("proxy")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    stdout(&out)
}

#[test]
fn the_proxy_bounds_lines_both_ways() {
    // A client line over the limit is refused as baremcp refuses it (with its id, read from
    // the line's start), and never forwarded.
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(2000)
    );
    let input = format!("{long}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n");
    assert_eq!(
        proxy(&["--max-message-bytes", "1000", "--", bin()], &input),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32600,\"message\":\"message too large\"}}\n\
         {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
    );
    // A server line over the limit is dropped as it streams in; the client gets an error.
    let script = r#"read x; head -c 5000 /dev/zero | tr '\0' x; echo; echo '{"jsonrpc":"2.0","id":2,"result":{}}'"#;
    assert_eq!(
        proxy(&["--max-message-bytes", "1000", "--", "sh", "-c", script], "{}\n"),
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"server message too large to forward\"}}\n\
         {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
    );
    // A last line without its newline is forwarded all the same, either way.
    let script = r#"read x; echo "$x"; printf '{"jsonrpc":"2.0","id":3,"result":{}}'"#;
    assert_eq!(
        proxy(&["--", "sh", "-c", script], "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}"),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n"
    );
}

#[test]
fn the_filter_passes_blank_lines_as_the_server_reads_them() {
    // A blank line is no message: the server skips it, and so does the filter (no parse
    // error the server itself would not send).
    let input = "\n  \r\n\t\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    let out = proxy(&["--allow-tools", "calculate", "--", bin()], input);
    assert_eq!(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
}

#[test]
fn the_filter_answers_a_lone_surrogate_id_as_written() {
    // A transcript cannot hold this (its expectations are read as JSON): `"\ud800"` and
    // `"\udc00"` are two ids a client can tell apart, and no decoded string holds either.
    let input = r#"{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"name":"secret"}}
{"jsonrpc":"2.0","id":"\udc00","method":"tools/call","params":{"name":"secret"}}
"#;
    let out = proxy(&["--allow-tools", "calculate", "--", "cat"], input);
    let ids: Vec<&str> = out.lines().map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(ids, [r#""id":"\ud800""#, r#""id":"\udc00""#], "{out}");
}

#[test]
fn the_filter_judges_server_lines_as_the_client_will_read_them() {
    let dir = crate::scratch("proxy-ambiguous-server");
    // What the upstream answers to each line it reads, in order.
    let answers: [&[u8]; 8] = [
        br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"calculate"}]},"result":{"tools":[{"name":"secret"}]}}"#,
        br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"calculate","name":"secret"}]}}"#,
        br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"secret"},{"name":"calculate"},{"title":"no name"}],"nextCursor":"c"}}"#,
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"tools\":[{\"name\":\"secret\",\"x\":\"\xff\"}]}}",
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","level":"debug"}}"#,
        br#"[{"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"secret"}]}}]"#,
        br#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        br#"[{"jsonrpc":"2.0","id":"\ud800\udc00","result":{"tools":[{"name":"secret"}]}},{"jsonrpc":"2.0","id":-0,"result":{}}]"#,
    ];
    let file = dir.join("answers");
    std::fs::write(
        &file,
        answers.iter().flat_map(|a| [*a, b"\n"]).flatten().copied().collect::<Vec<u8>>(),
    )
    .unwrap();
    let script = format!(
        "while IFS= read -r x; do IFS= read -r y <&3 && printf '%s\\n' \"$y\"; done 3< '{}'",
        file.display()
    );
    let mut child = Command::new(bin())
        .args(["proxy", "--allow-tools", "calculate", "--", "sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pings: String = (1..=8)
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"))
        .collect();
    child.stdin.take().unwrap().write_all(pings.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let refused = |id: u64, why: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-32603,\"message\":\"server message refused by the filtering proxy\",\"data\":\"{why}\"}}}}"
        )
    };
    let expected = [
        refused(1, r#"the member \"result\" is named twice at line 1 column 74"#),
        refused(2, r#"the member \"name\" is named twice at line 1 column 69"#),
        r#"{"id":3,"jsonrpc":"2.0","result":{"nextCursor":"c","tools":[{"name":"calculate"}]}}"#.to_string(),
        refused(4, "the message is not UTF-8"),
        r#"[{"id":6,"jsonrpc":"2.0","result":{"tools":[]}}]"#.to_string(),
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#.to_string(),
        // A rewritten reply keeps each id as the server wrote it, whatever it decodes to.
        r#"[{"id":"\ud800\udc00","jsonrpc":"2.0","result":{"tools":[]}},{"id":-0,"jsonrpc":"2.0","result":{}}]"#
            .to_string(),
    ];
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), expected);
}

#[test]
fn the_proxy_ends_when_its_upstream_exits_though_a_grandchild_holds_its_output() {
    // The upstream leaves a background process holding its stdout, and the client keeps its
    // end open: only the upstream's exit can end the session.
    let script = r#"sleep 8 & echo '{"jsonrpc":"2.0","method":"bye"}'; exit 3"#;
    let started = Instant::now();
    let mut child = Command::new(bin())
        .args(["proxy", "--", "sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the proxy did not end");
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(3));
    assert_eq!(stdout(&out), "{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\n");
    assert!(elapsed < Duration::from_secs(5), "the proxy waited {elapsed:?} for a grandchild");
}

#[test]
fn replay_deadlines_bound_writes_and_endless_output() {
    let dir = crate::scratch("replay-deadlines");
    // A client line larger than any pipe's buffer, to a server that never reads its input.
    let big = dir.join("big.txt");
    let pad = "x".repeat(1 << 20);
    std::fs::write(&big, format!("--> {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{pad}\"}}}}\n<-- {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}\n")).unwrap();
    let (out, elapsed) =
        replay(&["--timeout-ms", "1000", &big.to_string_lossy(), "--", "sleep", "10"]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "line 1: timed out after 1000 ms writing (the server is not reading its input):"
        ),
        "{text}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    // `--update` against a server that answers, then never stops writing (a line every 10
    // ms, for a few seconds), fails once it has written for the whole timeout.
    let ping = dir.join("ping.txt");
    std::fs::write(&ping, "--> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").unwrap();
    let script = r#"read x; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; i=0; while [ $i -lt 500 ]; do echo '{"jsonrpc":"2.0","method":"tick"}'; sleep 0.01; i=$((i+1)); done"#;
    let (out, elapsed) = replay(&[
        "--update",
        "--timeout-ms",
        "1000",
        &ping.to_string_lossy(),
        "--",
        "sh",
        "-c",
        script,
    ]);
    let text = stdout(&out);
    assert!(text.contains("the server did not stop writing within 1000 ms"), "{text}");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

/// `baremcp replay ARGS…` on the transcript `text` (written to `dir/t.txt`, at the place of
/// `{}` in `args`), with `env` set (or removed, `None`); its stdout, and the file afterwards.
fn replay_text(
    dir: &std::path::Path,
    text: &str,
    env: &[(&str, Option<&str>)],
    args: &[&str],
) -> (String, String) {
    let file = dir.join("t.txt");
    std::fs::write(&file, text).unwrap();
    let path = file.to_string_lossy().into_owned();
    let mut command = Command::new(bin());
    command.arg("replay").args(args.iter().map(|a| if *a == "{}" { path.as_str() } else { a }));
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let out = command.stderr(Stdio::null()).output().unwrap();
    (stdout(&out), std::fs::read_to_string(&file).unwrap())
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[test]
fn replay_masks_only_long_values_of_variables_its_client_side_uses() {
    let dir = crate::scratch("replay-variables");
    // A `$NAME` in a comment is no variable, whatever its value.
    let commented = format!("# the price is in $CURRENCY\n--> {PING}\n<-- {PING}\n");
    for value in [None, Some(""), Some("1"), Some("ping")] {
        let env = [("CURRENCY", value)];
        let (out, _) = replay_text(&dir, &commented, &env, &["{}", "--", "cat"]);
        assert!(out.ends_with("1 passed, 0 failed\n"), "{value:?}: {out}");
    }
    // Used in a client line: a short value is sent but not masked, a long one is masked only
    // where it is not part of a longer word.
    let echo = r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"v":"$V","w":"$W","x":"$Wx"}}"#;
    let echoed =
        r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"v":"1","w":"$W","x":"/srv/datax"}}"#;
    let env = [("V", Some("1")), ("W", Some("/srv/data"))];
    let text = format!("# echo\n--> {echo}\n<-- {echoed}\n");
    let (out, _) = replay_text(&dir, &text, &env, &["{}", "--", "cat"]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    // A variable a client line uses must be set.
    let (out, _) = replay_text(&dir, &text, &[("V", Some("1")), ("W", None)], &["{}"]);
    assert!(out.contains("FAILED\n  line 2: $W is not set (write $$ for a literal $)\n"), "{out}");
    // `--update` with an empty value writes what the server wrote.
    let stale = format!("# costs in $CURRENCY\n--> {PING}\n<-- {{}}\n");
    let env = [("CURRENCY", Some(""))];
    let (out, after) = replay_text(&dir, &stale, &env, &["--update", "{}", "--", "cat"]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    assert_eq!(after, commented.replace("the price is in", "costs in"));
}

#[test]
fn update_refuses_to_write_what_would_not_read_back() {
    let dir = crate::scratch("replay-update-read-back");
    // A line that ends in two `\r`: one is taken as the line end, the other would be lost
    // when the file is read again.
    let script = r#"read x; printf '{"jsonrpc":"2.0","id":1,"result":{}}\r\r\n'; cat >/dev/null"#;
    let text = format!("# ping\n--> {PING}\n<-- {{}}\n");
    let said = "FAILED\n  line 3: would not read back as written: \
                \"<-- {\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":1,\\\"result\\\":{}}\\r\"; \
                --update left the file as it was\n";
    update_is_refused(&dir, &text, &["sh", "-c", script], said);
    // A file of server lines alone, and a server that now writes none: nothing would be left.
    let text = format!("# a banner\n<-- {PING}\n");
    let said = "the updated file holds no messages (no -->, -->~ or <-- line); --update left";
    update_is_refused(&dir, &text, &["true"], said);
}

/// `replay --update` of `text` against `server`: it fails saying `said`, and leaves the file
/// as it was.
fn update_is_refused(dir: &std::path::Path, text: &str, server: &[&str], said: &str) {
    let args: Vec<&str> =
        ["--update", "{}", "--"].into_iter().chain(server.iter().copied()).collect();
    let (out, after) = replay_text(dir, text, &[], &args);
    assert!(out.contains(said), "{out}");
    assert_eq!(after, text);
}

#[test]
fn a_recorded_dollar_replays_as_it_was_sent() {
    let dir = crate::scratch("replay-dollar");
    let record = dir.join("rec.txt").to_string_lossy().into_owned();
    let sent = r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"echo $HOME $$ $x $"}}"#;
    let mut child = Command::new(bin())
        .args(["proxy", "--record", &record, "--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{sent}\n").as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(recorded.contains(r#""text":"echo $$HOME $$$ $x $"}}"#), "{recorded}");
    let env = [("HOME", Some("/home/someone"))];
    let (out, after) = replay_text(&dir, &recorded, &env, &["{}", "--", "cat"]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}\n{recorded}");
    assert_eq!(after, recorded);
    // `--update` keeps the escapes as they are.
    let (out, after) = replay_text(&dir, &recorded, &env, &["--update", "{}", "--", "cat"]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    assert_eq!(after, recorded);
}

#[test]
fn a_server_line_that_is_not_utf8_fails_replay() {
    let dir = crate::scratch("replay-not-utf8");
    let script =
        r#"read x; printf '{"jsonrpc":"2.0","id":1,"result":{"t":"\377"}}\n'; cat >/dev/null"#;
    let text = format!(
        "# ping\n--> {PING}\n<-- {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"\u{fffd}\"}}}}\n"
    );
    for update in [false, true] {
        let args = [&["--update"][..(update as usize)], &["{}", "--", "sh", "-c", script]].concat();
        let (out, after) = replay_text(&dir, &text, &[], &args);
        let want = if update {
            "FAILED\n  the server wrote a line that is not UTF-8 (at byte 39)\n"
        } else {
            "FAILED\n  line 3: the server wrote a line that is not UTF-8 (at byte 39) waiting for:\n"
        };
        assert!(out.contains(want), "{out}");
        assert_eq!(after, text);
    }
}

#[test]
fn replay_compares_numbers_past_64_bits_exactly() {
    let dir = crate::scratch("replay-big-numbers");
    let answer = |line: &str| format!("read x; echo '{line}'; cat >/dev/null");
    // A changed id is a message nobody expected.
    let request = r#"{"jsonrpc":"2.0","id":100000000000000000000,"method":"ping"}"#;
    let text = format!(
        "# ping\n--> {request}\n<-- {{\"jsonrpc\":\"2.0\",\"id\":100000000000000000000,\"result\":{{\"n\":18446744073709551616,\"f\":1.0}}}}\n"
    );
    let script = answer(r#"{"jsonrpc":"2.0","id":100000000000000000001,"result":{}}"#);
    let (out, _) = replay_text(&dir, &text, &[], &["{}", "--", "sh", "-c", &script]);
    assert!(out.contains("FAILED\n  line 3: an unexpected message arrived:\n"), "{out}");
    // A changed number is a difference, shown as written.
    let script = answer(r#"{"jsonrpc":"2.0","id":1e20,"result":{"n":18446744073709551617,"f":1}}"#);
    let (out, _) = replay_text(&dir, &text, &[], &["{}", "--", "sh", "-c", &script]);
    assert!(
        out.contains(
            "line 3: at /result/n: expected 18446744073709551616, got 18446744073709551617\n"
        ),
        "{out}"
    );
    // The same values written otherwise pass: numbers compare by value.
    let script =
        answer(r#"{"jsonrpc":"2.0","id":1.0e20,"result":{"n":1.8446744073709551616e19,"f":1}}"#);
    let (out, _) = replay_text(&dir, &text, &[], &["{}", "--", "sh", "-c", &script]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
}

#[test]
fn a_transcript_without_messages_fails() {
    let dir = crate::scratch("replay-empty");
    for text in ["", "# only a comment\n\n# args: --page-size 1\n"] {
        let (out, _) = replay_text(&dir, text, &[], &["{}", "--", "cat"]);
        assert!(
            out.contains(": FAILED\n  holds no messages (no -->, -->~ or <-- line)\n"),
            "{out}"
        );
        assert!(out.ends_with("0 passed, 1 failed\n"), "{out}");
    }
}

#[test]
fn update_changes_only_the_answers_that_changed() {
    let dir = crate::scratch("replay-update-in-place");
    let ping = |id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
    let pong = |id| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
    // CRLF, a note between a request and its answer, a blank line, and one LF line.
    let text = format!(
        "# a CRLF file\r\n--> {}\r\n# the answer is an empty result:\r\n<-- {}\r\n\r\n--> {}\n<-- {}\r\n",
        ping(1),
        pong(1),
        ping(2),
        pong(2)
    );
    let (out, after) = replay_text(&dir, &text, &[], &["--update", "{}"]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    assert_eq!(after, text);
    // A changed answer is replaced in place, keeping its line's ending; a line the server no
    // longer writes goes; a missing one comes back below its request, with the first line's
    // ending.
    let stale = format!(
        "# a CRLF file\r\n--> {}\r\n# the answer is an empty result:\r\n<-- {}\r\n<-- {}\r\n\r\n--> {}\n",
        ping(1),
        r#"{"jsonrpc":"2.0","id":1,"result":{"old":true}}"#,
        r#"{"jsonrpc":"2.0","method":"gone"}"#,
        ping(2)
    );
    let (out, after) = replay_text(&dir, &stale, &[], &["--update", "{}"]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    assert_eq!(after, text);
}

#[test]
fn update_keeps_what_the_server_writes_before_the_first_client_line_there() {
    let dir = crate::scratch("replay-update-banner");
    let banner = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    let server = format!("echo '{banner}'; exec cat");
    let text = format!("# a banner first\n<-- {banner}\n--> {PING}\n<-- {PING}\n");
    let (out, after) =
        replay_text(&dir, &text, &[], &["--update", "{}", "--", "sh", "-c", &server]);
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    assert_eq!(after, text);
}

#[test]
fn update_refuses_a_server_line_that_is_not_json() {
    let dir = crate::scratch("replay-update-garbage");
    let text = format!("--> {PING}\n<-- {PING}\n");
    let server = "read x; echo garbage; cat >/dev/null";
    let said = "FAILED\n  the server wrote a line that cannot be read as JSON (expected value";
    update_is_refused(&dir, &text, &["sh", "-c", server], said);
}

#[test]
fn a_failure_shows_the_servers_member_names_escaped() {
    let dir = crate::scratch("replay-escaped-path");
    let text = "--> {\"\\u001b[2J\\n\":1}\n<-- {\"\\u001b[2J\\n\":2}\n";
    let (out, _) = replay_text(&dir, text, &[], &["{}", "--", "cat"]);
    assert!(out.contains("line 2: at /\\u001b[2J\\n: expected 2, got 1\n"), "{out}");
    assert!(!out.contains('\x1b'), "{out}");
}

#[test]
fn replay_compares_numbers_with_exponents_of_any_size() {
    let dir = crate::scratch("replay-huge-exponents");
    let check = |expected: &str, written: &str| {
        let text = format!("--> {{\"n\":{written}}}\n<-- {{\"n\":{expected}}}\n");
        replay_text(&dir, &text, &[], &["{}", "--", "cat"]).0
    };
    let out = check("1e-99999999999999999999", "1e-99999999999999999998");
    assert!(
        out.contains(
            "line 2: at /n: expected 1e-99999999999999999999, got 1e-99999999999999999998\n"
        ),
        "{out}"
    );
    let out = check("10e-99999999999999999999", "1e-99999999999999999998");
    assert!(out.ends_with("1 passed, 0 failed\n"), "{out}");
    // Past what a 64-bit float holds, serde_json reads no number: said as such.
    let out = check("1e400", "1e400");
    assert!(
        out.contains(
            "line 2: the expected line cannot be read as JSON: number out of range at line 1 column 10\n"
        ),
        "{out}"
    );
}
