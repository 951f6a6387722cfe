//! Manifest commands as the binary runs them: a command that writes without end is cut off at
//! its timeout with the server's memory bounded, a timeout ends every process the command
//! started, even on a machine whose `PATH` holds no `kill`, a command that exits is done
//! though a process it left behind holds its output, a cancelled call or read ends its
//! command, and so does the server stopped or killed while it runs, or the timeout while
//! progress waits for a client that reads nothing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Writes a manifest of one tool running `argv` with `timeoutMs` and returns its path.
fn manifest(dir: &Path, argv: Value, timeout_ms: u64) -> String {
    let tool =
        json!({"name": "t", "description": "d", "run": {"argv": argv, "timeoutMs": timeout_ms}});
    let path = dir.join("manifest.json");
    std::fs::write(&path, json!({"tools": [tool]}).to_string()).unwrap();
    path.to_string_lossy().into_owned()
}

/// A 2026-07-28 `tools/call` of `t`, with a progress token when asked.
fn call(id: u64, progress: bool) -> String {
    let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    if progress {
        meta["progressToken"] = json!("p");
    }
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t", "_meta": meta}})
    )
}

/// Peak resident memory of a running process, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Sends `request` to a running server and waits (at most 20 s) for the reply with `id`,
/// counting the notifications before it; returns the reply and how long it took.
fn reply_to(child: &mut Child, request: &str, id: u64) -> (Value, usize, Duration) {
    let started = Instant::now();
    child.stdin.as_mut().unwrap().write_all(request.as_bytes()).unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let value: Value = serde_json::from_str(&line).unwrap();
            let done = value["id"] == json!(id);
            if send.send(value).is_err() || done {
                return;
            }
        }
    });
    let mut notifications = 0;
    loop {
        let value = lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the server died or did not answer within 20 s");
        if value["id"] == json!(id) {
            return (value, notifications, started.elapsed());
        }
        notifications += 1;
    }
}

#[test]
fn endless_output_is_cut_off_at_the_timeout_in_bounded_memory() {
    let dir = crate::scratch("endless-output");
    let cases = [
        (json!(["sh", "-c", "while :; do echo x >&2; done"]), false),
        (json!(["sh", "-c", "while :; do echo x >&2; done"]), true),
        (json!(["sh", "-c", "head -c 100000000 /dev/zero | tr '\\0' x >&2; sleep 30"]), false),
        (json!(["yes"]), false),
        (json!(["sh", "-c", "yes & yes >&2"]), true),
    ];
    for (argv, progress) in cases {
        // Under a 1 GiB address-space limit, a server that holds what it reads dies quickly
        // instead of taking the machine's memory: the test then fails at once.
        let mut child =
            crate::serving_limited(1 << 20, ["--manifest", &manifest(&dir, argv.clone(), 500)])
                .unwrap();
        let (reply, notifications, elapsed) = reply_to(&mut child, &call(1, progress), 1);
        let peak = peak_kib(child.id());
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
        let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert_eq!(
            text, "the command timed out after 500 ms and was stopped",
            "{argv} {progress}: {reply}"
        );
        assert!(
            elapsed < Duration::from_secs(5),
            "{argv} {progress}: the 500 ms timeout took {elapsed:?}"
        );
        assert!(peak < 64 * 1024, "{argv} {progress}: peak memory {peak} KiB");
        assert!(
            progress || notifications == 0,
            "{argv}: {notifications} notifications without a token"
        );
    }
}

/// Whether process `pid` is still running (a zombie waiting for its parent is not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
        state != Some(Some('Z'))
    })
}

/// Whether process `pid` ends within two seconds; one that does not is killed.
pub(crate) fn ends(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while running(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = running(pid);
    if survived {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    !survived
}

#[test]
fn a_timeout_ends_grandchildren_without_kill_on_path() {
    let dir = crate::scratch("grandchildren");
    let pidfile = dir.join("pid");
    let script = format!("/bin/sleep 60 & echo $! > '{}'; wait", pidfile.display());
    let manifest = manifest(&dir, json!(["/bin/sh", "-c", script]), 300);
    let mut child = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["--manifest", &manifest])
        .env("PATH", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (reply, _, _) = reply_to(&mut child, &call(1, false), 1);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert!(
        reply["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("timed out"),
        "{reply}"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
    assert!(ends(&pid), "the grandchild {pid} outlived the timeout");
}

#[test]
fn a_command_that_exits_is_done_though_a_grandchild_holds_its_output() {
    let dir = crate::scratch("leftover-grandchild");
    let pidfile = dir.join("pid");
    // The background `sleep` inherits stdout and stderr: they stay open after `sh` exits.
    let script = format!("sleep 8 & echo $! > '{}'; echo done", pidfile.display());
    let mut child =
        crate::serving(["--manifest", &manifest(&dir, json!(["sh", "-c", script]), 10_000)])
            .unwrap();
    let (reply, _, elapsed) = reply_to(&mut child, &call(1, false), 1);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    assert_eq!(reply["result"]["content"][0]["text"], "done\n", "{reply}");
    assert!(elapsed < Duration::from_secs(5), "the call waited {elapsed:?} for the grandchild");
    // What the command left running is ended with it.
    let pid = std::fs::read_to_string(&pidfile).unwrap().trim().to_string();
    assert!(ends(&pid), "the grandchild {pid} outlived its command");
}

#[test]
fn a_cancelled_call_or_read_ends_its_command_and_gets_no_answer() {
    // A read, and a call whose command closes its output first and runs on.
    for (read, closes) in [(false, false), (true, false), (false, true)] {
        let dir = crate::scratch(&format!("cancelled-command-{read}-{closes}"));
        let pidfile = dir.join("pid");
        let closing = if closes { "exec >&- 2>&-; " } else { "" };
        let script = format!("{closing}sleep 60 & echo $! > '{}'; wait", pidfile.display());
        let path = manifest(&dir, json!(["sh", "-c", script]), 60_000);
        // The same command as a resource's: `resources/read` of `x://slow`.
        let mut declared: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let run = declared["tools"][0]["run"].clone();
        declared["resources"] = json!([{"uri": "x://slow", "name": "slow", "run": run}]);
        std::fs::write(&path, declared.to_string()).unwrap();
        let mut child = crate::serving(["--manifest", &path]).unwrap();
        let first = match read {
            false => call(1, false),
            true => call(1, false)
                .replace("tools/call", "resources/read")
                .replace(r#""name":"t""#, r#""uri":"x://slow""#),
        };
        child.stdin.as_mut().unwrap().write_all(first.as_bytes()).unwrap();
        let pid = pids(&pidfile).trim().to_string();
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1}});
        let list = call(2, false).replace("tools/call", "tools/list");
        let (reply, before, elapsed) = reply_to(&mut child, &format!("{cancel}\n{list}"), 2);
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success());
        assert_eq!(reply["result"]["tools"][0]["name"], "t", "{reply}");
        assert_eq!(before, 0, "{read}: nothing before the list: no answer to the cancelled one");
        assert!(elapsed < Duration::from_secs(5), "{read}: the list waited {elapsed:?}");
        assert!(ends(&pid), "{read}: the command's {pid} outlived its cancelled request");
    }
}

/// What the command wrote to `pidfile` (moved there whole), once it is there (10 s at most).
fn pids(pidfile: &std::path::Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::read_to_string(pidfile).unwrap()
}

#[test]
fn a_command_ends_with_the_server_stopped_or_killed_while_it_runs() {
    if !cfg!(target_os = "linux") {
        return println!("skipped: needs Linux's /proc and PR_SET_PDEATHSIG");
    }
    for signal in ["TERM", "KILL"] {
        let dir = crate::scratch(&format!("stopped-server-{signal}"));
        let (pidfile, written) = (dir.join("pid"), dir.join("pid.tmp"));
        // The command's own pid, then its background child's, then a loop.
        let script = format!(
            "echo $$ > '{tmp}'; sleep 60 & echo $! >> '{tmp}'; mv '{tmp}' '{pid}'; \
             while :; do sleep 1; done",
            tmp = written.display(),
            pid = pidfile.display()
        );
        let path = manifest(&dir, json!(["sh", "-c", script]), 60_000);
        let mut child = crate::serving(["--manifest", &path]).unwrap();
        child.stdin.as_mut().unwrap().write_all(call(1, false).as_bytes()).unwrap();
        let pids = pids(&pidfile);
        let pids: Vec<&str> = pids.lines().collect();
        // As the MCP spec has a stdio client stop its server: stdin closed, then SIGTERM (the
        // server waits on the command meanwhile), or SIGKILL.
        drop(child.stdin.take());
        let server = child.id().to_string();
        assert!(
            Command::new("kill").args([&format!("-{signal}"), &server]).status().unwrap().success()
        );
        assert!(!child.wait().unwrap().success());
        assert!(ends(pids[0]), "{signal}: the command {} outlived the server", pids[0]);
        // SIGKILL leaves no handler to end the group: only the command itself dies with the
        // server; its loop's `sleep 1` ends on its own.
        if signal == "TERM" {
            assert!(ends(pids[1]), "{signal}: the command's child {} outlived the server", pids[1]);
        } else {
            let _ = Command::new("kill").args(["-KILL", pids[1]]).status();
        }
    }
}

/// Over HTTP a stop exits 11 s after it when a tool still runs (docs/deployment.md): the
/// command's group ends with the process.
#[test]
fn a_command_ends_with_a_server_that_exits_while_it_runs() {
    if !cfg!(target_os = "linux") {
        return println!("skipped: needs Linux's /proc");
    }
    use crate::http_harness::{connect, modern, post_text, spawn_http};
    let dir = crate::scratch("exit-during-a-command");
    let (pidfile, written) = (dir.join("pid"), dir.join("pid.tmp"));
    let script = format!(
        "echo $$ > '{tmp}'; sleep 60 & echo $! >> '{tmp}'; mv '{tmp}' '{pid}'; wait",
        tmp = written.display(),
        pid = pidfile.display()
    );
    let path = manifest(&dir, json!(["sh", "-c", script]), 60_000);
    let args = ["--drain-secs".as_ref(), "0".as_ref(), "--manifest".as_ref(), path.as_ref()];
    let (mut child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &args);
    let body = modern("tools/call", json!({"name": "t", "arguments": {}}));
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: t"];
    let mut call = connect(addr);
    call.get_mut().write_all(post_text(addr, &body, &headers).as_bytes()).unwrap();
    let pids = pids(&pidfile);
    let pids: Vec<&str> = pids.lines().collect();
    let server = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &server]).status().unwrap().success());
    assert!(child.wait().unwrap().success());
    assert!(ends(pids[0]), "the command {} outlived the server", pids[0]);
    assert!(ends(pids[1]), "the command's child {} outlived the server", pids[1]);
}

#[test]
fn the_timeout_holds_while_progress_waits_for_a_client_that_reads_nothing() {
    let dir = crate::scratch("progress-unread");
    let (pidfile, written) = (dir.join("pid"), dir.join("pid.tmp"));
    let script = format!(
        "echo $$ > '{tmp}'; mv '{tmp}' '{pid}'; exec yes err >&2",
        tmp = written.display(),
        pid = pidfile.display()
    );
    let path = manifest(&dir, json!(["sh", "-c", script]), 1000);
    let mut child = crate::serving(["--manifest", &path]).unwrap();
    // Each stderr line is a progress notification, and no one reads them: writing one soon
    // waits, and the serving thread with it.
    child.stdin.as_mut().unwrap().write_all(call(1, true).as_bytes()).unwrap();
    let pid = pids(&pidfile).trim().to_string();
    assert!(ends(&pid), "the command {pid} outlived its 1000 ms while progress waited");
    // Read at last, the answer says so.
    let (reply, _, _) = reply_to(&mut child, "", 1);
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(text, "the command timed out after 1000 ms and was stopped", "{reply}");
}

#[test]
fn a_process_left_holding_the_pipes_costs_no_thread_once_the_call_is_answered() {
    let has_setsid = Command::new("setsid").arg("true").status().is_ok_and(|s| s.success());
    if !cfg!(target_os = "linux") || !has_setsid {
        return println!("skipped: needs Linux's /proc and setsid");
    }
    let dir = crate::scratch("left-holding-output");
    // Out of the command's process group, the sleep holds its stdin, stdout and stderr for
    // 3 s, and reads none of the 200 KB of input the tool gives it.
    let script = "exec 3<&0; setsid sleep 3 <&3 & echo started";
    let run = json!({"argv": ["sh", "-c", script], "stdin": "x".repeat(200_000)});
    let tool = json!({"name": "t", "description": "d", "run": run});
    let path = dir.join("manifest.json");
    std::fs::write(&path, json!({"tools": [tool]}).to_string()).unwrap();
    let mut child = crate::serving(["--manifest", path.to_str().unwrap()]).unwrap();
    let calls: String = (1..=10).map(|id| call(id, false)).collect();
    let (reply, _, _) = reply_to(&mut child, &calls, 10);
    assert_eq!(reply["result"]["content"][0]["text"], "started\n", "{reply}");
    let threads = || std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap().count();
    let deadline = Instant::now() + Duration::from_secs(1);
    while threads() > 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Before, the reading and writing threads (and their descriptors) stayed per call until
    // the sleep ended.
    assert!(threads() <= 2, "{} threads after 10 calls", threads());
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}
