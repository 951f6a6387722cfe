//! `baremcp replay` holding each server line to its place: a message is matched only among
//! the `<--` lines between the client line before it and the client line after it.

use std::process::{Command, Stdio};

/// Replays `transcript` against `sh -c script`; what replay reported.
fn replay(name: &str, transcript: &str, script: &str) -> String {
    let file = crate::scratch(&format!("replay-order-{name}")).join("t.txt");
    std::fs::write(&file, transcript).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["replay", "--timeout-ms", "2000"])
        .arg(&file)
        .args(["--", "sh", "-c", script])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ping(id: u32) -> String {
    format!("--> {{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

fn pong(id: u32) -> String {
    format!("<-- {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n")
}

const CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

/// A script that reads a line, then echoes each of `lines`, for every element.
fn server(blocks: &[&[&str]]) -> String {
    let echo = |line: &&str| format!("echo '{}'; ", line.trim_start_matches("<-- ").trim_end());
    let blocks =
        blocks.iter().map(|b| format!("read x; {}", b.iter().map(echo).collect::<String>()));
    blocks.collect::<String>() + "cat >/dev/null"
}

#[test]
fn a_message_the_file_expects_after_a_later_client_line_fails_when_it_arrives_early() {
    // The notification is expected after the second request's reply; this server writes it
    // before the first.
    let notification = format!("<-- {CHANGED}\n");
    let text = format!("# t\n{}{}{}{}{notification}", ping(1), pong(1), ping(2), pong(2));
    let early = server(&[&[CHANGED, &pong(1)], &[&pong(2)]]);
    let out = replay("notification", &text, &early);
    assert!(
        out.contains("FAILED\n  line 3: a message arrived early (it is expected at line 6, after a client line not sent yet):\n  <-- {\"jsonrpc\""),
        "{out}"
    );
    // In its place it passes.
    let in_place = server(&[&[&pong(1)], &[&pong(2), CHANGED]]);
    assert!(replay("notification", &text, &in_place).ends_with("1 passed, 0 failed\n"));
    // A response the file expects after a later client line (a slow request) fails too
    // when the server writes it before that line is sent.
    let text = format!("# t\n{}{notification}{}{}{}", ping(1), ping(2), pong(1), pong(2));
    let early = server(&[&[&pong(1), CHANGED], &[&pong(2)]]);
    let out = replay("response", &text, &early);
    assert!(out.contains("line 3: a message arrived early (it is expected at line 5,"), "{out}");
    // Within a block, responses still match by id in any order, notifications in order.
    let text = format!("# t\n{}{}{}{notification}{}", ping(1), ping(2), pong(1), pong(2));
    let any_order = server(&[&[], &[&pong(2), CHANGED, &pong(1)]]);
    assert!(replay("block", &text, &any_order).ends_with("1 passed, 0 failed\n"));
}
