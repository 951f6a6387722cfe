//! The end of input in transcripts (`-->| end of input`): `baremcp replay` closes the server's
//! input there, so a server that answers only once its input ends (a request left waiting on
//! the client, last words) replays; `--update` keeps it in place; and `baremcp proxy --record`
//! writes it where its client closed its input.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use crate::app::transcript::END_OF_INPUT;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_baremcp")
}

/// `baremcp replay ARGS…`: its report, and whether it passed.
fn replay(args: &[&str]) -> (String, bool) {
    let out = Command::new(bin()).arg("replay").args(args).stderr(Stdio::null()).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    (report, out.status.success())
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
const ELICIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"anyone there?"}}}"#;

#[test]
fn a_server_that_answers_at_end_of_input_replays() {
    // The everything server's pending elicitation fails once the client is gone: its answer
    // comes only after the end of input, which replay must give it, not wait for.
    let everything = crate::library::example("everything").to_string_lossy().into_owned();
    let file = crate::fixture("transcripts/everything/elicitation-eof.txt");
    let file = file.to_string_lossy().into_owned();
    let (report, ok) = replay(&["--timeout-ms", "3000", &file, "--", &everything]);
    assert!(ok && report.ends_with("1 passed, 0 failed\n"), "{report}");

    // A tiny server whose last words follow the end of its input; `--update` keeps each line
    // on its side of the end.
    let dir = crate::scratch("replay-eof");
    let script = r#"read x; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; cat >/dev/null; echo '{"jsonrpc":"2.0","method":"bye"}'"#;
    let text = format!(
        "# last words\n--> {{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\n\
         <-- {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}\n{END_OF_INPUT}\n# then\n\
         <-- {{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}}\n"
    );
    let path = dir.join("t.txt");
    std::fs::write(&path, &text).unwrap();
    let path = path.to_string_lossy().into_owned();
    let (report, ok) = replay(&["--timeout-ms", "3000", &path, "--", "sh", "-c", script]);
    assert!(ok, "{report}");
    std::fs::write(&path, text.replace("<-- {", "<-- {\"stale\":1,")).unwrap();
    let (report, ok) = replay(&["--update", &path, "--", "sh", "-c", script]);
    assert!(ok, "{report}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // A text that does not say where its input ends gets the end written in, above what the
    // server wrote once it had ended, and replays then.
    let unsaid = text.replace(&format!("{END_OF_INPUT}\n"), "");
    std::fs::write(&path, unsaid.replace("<-- {\"jsonrpc\":\"2.0\",\"method\"", "# x")).unwrap();
    let (report, ok) = replay(&["--update", &path, "--", "sh", "-c", script]);
    assert!(ok, "{report}");
    let updated = std::fs::read_to_string(&path).unwrap();
    assert!(
        updated.ends_with(&format!(
            "{END_OF_INPUT}\n<-- {{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}}\n"
        )),
        "{updated}"
    );
    let (report, ok) = replay(&["--timeout-ms", "3000", &path, "--", "sh", "-c", script]);
    assert!(ok, "{report}");

    // Nothing is sent after the end of input.
    std::fs::write(&path, format!("{text}--> {{}}\n")).unwrap();
    let (report, ok) = replay(&[&path, "--", "cat"]);
    assert!(!ok && report.contains("line 7: nothing is sent after the end of input at line 4"));
}

#[test]
fn a_proxy_recording_of_a_client_that_closes_while_the_server_waits_replays() {
    let everything = crate::library::example("everything").to_string_lossy().into_owned();
    let dir = crate::scratch("proxy-record-eof");
    let record = dir.join("rec.txt").to_string_lossy().into_owned();
    let mut proxy = Command::new(bin())
        .args(["proxy", "--record", &record, "--", &everything])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap());
    let mut line = String::new();
    // Initialized, then a call whose tool asks the client a question; the client hangs up
    // instead of answering.
    for (sent, awaited) in [(INITIALIZE, "\"id\":0,\"result\""), (ELICIT, "elicitation/create")] {
        writeln!(stdin, "{sent}").unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains(awaited), "{line}");
    }
    drop(stdin);
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("the client went away"), "{line}");
    assert!(proxy.wait().unwrap().success());
    let recording = std::fs::read_to_string(&record).unwrap();
    let (report, ok) = replay(&["--timeout-ms", "3000", &record, "--", &everything]);
    assert!(ok, "{report}\n{recording}");
    // The end of input is where the client hung up: after the question, before the answer.
    let lines: Vec<&str> = recording.lines().skip(2).collect();
    assert_eq!(lines.len(), 6, "{recording}");
    assert!(lines[3].contains("elicitation/create") && lines[4] == END_OF_INPUT, "{recording}");
}
