//! The binary serving HTTP as a process: a graceful stop on SIGTERM (even while a handler waits
//! on its client), the drain before it (`/readyz` 503 while the listener still serves; a
//! second signal or SIGINT skips it), an answer made as the stop gives up still written, a
//! stop not held by a tool that outlives it, unsafe binds refused, and unix sockets (a stale file replaced, one in use left alone, a
//! successor's file kept, the file removed at stop).

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http_harness::{ask_sampling, connect, initialize, modern, post, post_text, raw};
use crate::http_harness::{read_reply, spawn_http};

/// Flags that stop on SIGTERM at once, without the drain that tests of other things skip.
fn no_drain() -> [&'static std::ffi::OsStr; 2] {
    ["--drain-secs".as_ref(), "0".as_ref()]
}

/// Sends SIGTERM and returns the exit status, which must come within five seconds (the
/// child is killed if not).
fn terminate(child: std::process::Child) -> std::process::ExitStatus {
    signal(&child, "-TERM");
    exit_within(child, 5)
}

fn signal(child: &std::process::Child, which: &str) {
    std::process::Command::new("kill").args([which, &child.id().to_string()]).status().unwrap();
}

/// The exit status, which must come within `secs` seconds (the child is killed if not).
fn exit_within(mut child: std::process::Child, secs: u64) -> std::process::ExitStatus {
    let stopping = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if stopping.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("no exit within {secs} s of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The status `path` answers a GET with, from a balancer's point of view (its own Host).
fn probe(addr: std::net::SocketAddr, path: &str) -> Option<u16> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: lb.internal\r\nConnection: close\r\n\r\n");
    raw(addr, request.as_bytes()).map(|reply| reply.status)
}

/// Asks `/readyz` until it answers 503 (the signal may take a moment to arrive), for 5 s at
/// most.
fn readyz_turns_503(addr: std::net::SocketAddr) {
    let asking = Instant::now();
    while probe(addr, "/readyz") != Some(503) {
        assert!(asking.elapsed() < Duration::from_secs(5), "/readyz still not 503");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_drains_readyz_answers_503_while_the_listener_still_serves() {
    let drain = ["--drain-secs".as_ref(), "4".as_ref()];
    let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &drain);
    assert_eq!(probe(addr, "/readyz"), Some(200));
    signal(&child, "-TERM");
    readyz_turns_503(addr);
    // Draining: a second later (four times as long as the loop takes to notice a stop),
    // alive, and a new connection is still served.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(probe(addr, "/healthz"), Some(200));
    let list = modern("tools/list", json!({}));
    let reply = post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]);
    assert_eq!(reply.json()["result"]["tools"][0]["name"], "hello");
    // Then it stops by itself, in good order.
    let status = exit_within(child, 4 + 10);
    assert!(status.success(), "{status}");
}

#[test]
fn a_second_sigterm_or_a_sigint_skips_the_drain() {
    for signals in [&["-TERM", "-TERM"][..], &["-INT"]] {
        let drain = ["--drain-secs".as_ref(), "600".as_ref()];
        let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &drain);
        for which in signals {
            signal(&child, which);
            if *which == "-TERM" {
                readyz_turns_503(addr);
            }
        }
        let status = exit_within(child, 10);
        assert!(status.success(), "{signals:?}: {status}");
    }
}

/// A stop signal the server was started ignoring stays ignored (SIGINT in a script's
/// background job), as a program's default action would; SIGTERM still stops it.
#[test]
fn a_sigint_started_ignored_stays_ignored() {
    let mut command = std::process::Command::new("sh");
    let script = r#"trap '' INT; exec "$0" --http 127.0.0.1:0 --drain-secs 0"#;
    command.args(["-c", script, env!("CARGO_BIN_EXE_baremcp")]);
    let (child, addr, _) = crate::http_harness::spawn_reporting(command);
    signal(&child, "-INT");
    std::thread::sleep(Duration::from_millis(300));
    crate::http_harness::still_serving(addr);
    let status = terminate(child);
    assert!(status.success(), "{status}");
}

#[test]
fn the_binary_stops_gracefully_on_sigterm_and_refuses_unsafe_binds() {
    let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &no_drain());
    let list = modern("tools/list", json!({}));
    let reply = post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]);
    assert_eq!(reply.json()["result"]["tools"][0]["name"], "hello");
    // An idle keep-alive connection does not hold the stop up.
    let _idle = connect(addr);
    let status = terminate(child);
    assert!(status.success(), "{status}");

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("refusing to listen on 0.0.0.0:0 without authentication"), "{stderr}");
}

/// `baremcp --http unix:PATH args…` started (not waited for).
fn spawn_unix(path: &std::path::Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .arg("--http")
        .arg(format!("unix:{}", path.display()))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until a server accepts on the unix socket at `path`.
fn wait_for_unix(path: &std::path::Path) {
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(path).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "no server on {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_unix_socket_serves_replaces_a_stale_file_and_is_removed_at_stop() {
    use std::os::unix::net::UnixStream;
    let dir = crate::scratch("http-unix");
    let path = dir.join("mcp.sock");
    let spawn = || spawn_unix(&path, &["--drain-secs", "0"]);
    let wait_for_socket = || wait_for_unix(&path);
    let list = modern("tools/list", json!({}));
    let call = || {
        let mut stream = UnixStream::connect(&path).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{list}",
            list.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply
    };
    // A socket file whose server was killed is stale: the next server replaces it.
    let mut killed = spawn();
    wait_for_socket();
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(path.exists(), "a killed server leaves its socket file");
    let child = spawn();
    wait_for_socket();
    let reply = call();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains(r#""name":"hello""#), "{reply}");
    // The probes and the metrics are served on a unix socket too.
    for (route, says) in [
        ("/healthz", "\r\n\r\nok\n"),
        ("/readyz", "ready\n"),
        ("/metrics", "mcp_method_name=\"tools/list\""),
    ] {
        let mut stream = UnixStream::connect(&path).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let request =
            format!("GET {route} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 200") && reply.contains(says), "{route}: {reply}");
    }
    // One in use is not taken over.
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .arg("--http")
        .arg(format!("unix:{}", path.display()))
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&second.stderr).contains("in use"), "{second:?}");
    assert!(call().starts_with("HTTP/1.1 200"));
    // SIGTERM: exit 0, and the file is gone.
    let status = terminate(child);
    assert!(status.success(), "{status}");
    assert!(!path.exists(), "the socket file is removed at stop");
}

#[test]
fn sigterm_ends_a_wait_on_the_client_and_the_process_exits_at_once() {
    let (child, addr) = spawn_http(crate::library::example("everything"), &no_drain());
    let session = initialize(addr, "2025-11-25");
    let _asking = ask_sampling(addr, &session);
    // The question is never answered: the signal, not the 300 s wait, ends it.
    let status = terminate(child);
    assert!(status.success(), "{status}");
}

#[test]
fn a_stopping_server_leaves_the_socket_file_of_its_successor_alone() {
    use std::os::unix::net::UnixStream;
    let dir = crate::scratch("http-unix-successor");
    let path = dir.join("mcp.sock");
    let spawn = || spawn_unix(&path, &["--request-timeout-secs", "2", "--drain-secs", "0"]);
    let serves = || wait_for_unix(&path);
    let old = spawn();
    serves();
    // A half-sent request keeps the old server draining (until its 2 s request timeout).
    let mut slow = UnixStream::connect(&path).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n").unwrap();
    std::process::Command::new("kill").args(["-TERM", &old.id().to_string()]).status().unwrap();
    // Its listener closes at once: a successor takes the path while it drains.
    std::thread::sleep(Duration::from_millis(300));
    let new = spawn();
    serves();
    assert!(terminate(old).success());
    assert!(path.exists(), "the old server removed its successor's socket file");
    serves();
    assert!(terminate(new).success());
    assert!(!path.exists());
}

/// The binary serving (with `flags`) a manifest tool `nap` that sleeps `secs`, and a whole
/// 2026-07-28 request that calls it.
fn sleeping(
    scratch: &str,
    secs: &str,
    flags: &[&str],
) -> (std::process::Child, std::net::SocketAddr, String) {
    let manifest = crate::scratch(scratch).join("nap.json");
    let nap = json!({"tools": [{"name": "nap", "description": "Sleeps", "run": {"argv": ["sleep", secs]}}]});
    std::fs::write(&manifest, nap.to_string()).unwrap();
    let mut args: Vec<&std::ffi::OsStr> = flags.iter().map(|f| f.as_ref()).collect();
    args.extend(["--manifest".as_ref(), manifest.as_os_str()]);
    let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &args);
    let body = modern("tools/call", json!({"name": "nap", "arguments": {}}));
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: nap"];
    (child, addr, post_text(addr, &body, &headers))
}

/// A request whose last byte arrives half a second before a stop's 10 s are up, and whose
/// handler runs past them: the loop answers as the server gives up, and the answer (or, had
/// the loop gone first, a 503) still reaches the client before the process exits.
#[test]
fn an_answer_made_as_a_stop_gives_up_still_reaches_its_client() {
    let (child, addr, request) = sleeping("answer-at-the-cap", "0.8", &["--drain-secs", "0"]);
    let (most, last) = request.split_at(request.len() - 1);
    let mut conn = connect(addr);
    conn.get_mut().write_all(most.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "-TERM");
    std::thread::sleep(Duration::from_millis(9_500));
    conn.get_mut().write_all(last.as_bytes()).unwrap();
    let reply = read_reply(&mut conn).expect("an answer, not the connection closed unanswered");
    match reply.status {
        200 => assert_eq!(reply.json()["id"], 7, "{reply:?}"),
        status => assert_eq!(status, 503, "{reply:?}"),
    }
    assert_eq!(reply.header("connection"), Some("close"));
    assert!(exit_within(child, 5).success());
}

/// A stop while a tool runs past the drain: the listener closes at once (a new connection is
/// refused while the tool still runs), and the process ends 10 s (and a grace of 1 s) after
/// the stop, cutting the call, rather than when the tool ends.
#[test]
fn a_stop_closes_at_once_and_ends_a_tool_that_outlives_the_drain() {
    let (child, addr, request) = sleeping("stop-during-a-tool", "30", &[]);
    let mut call = connect(addr);
    call.get_mut().write_all(request.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "-INT");
    let signalled = Instant::now();
    let refused = loop {
        match std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Err(_) => break signalled.elapsed(),
            Ok(_) if signalled.elapsed() > Duration::from_secs(3) => {
                panic!("still accepting 3 s after the stop, while a tool runs")
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    assert!(refused < Duration::from_secs(1), "refused only after {refused:?}");
    assert!(exit_within(child, 13).success());
    let took = signalled.elapsed();
    assert!(took >= Duration::from_secs(10), "the drain was cut short: {took:?}");
    let mut rest = Vec::new();
    let _ = call.get_mut().read_to_end(&mut rest);
    assert!(!String::from_utf8_lossy(&rest).contains("\"result\""), "the tool ran to its end");
}
