//! `baremcp proxy` as a process: the recording's header (quoted for a shell, replaying through
//! the same filters), a recording that cannot be made or is cut short, and how the upstream
//! ends: 2 s after its input closed, every client line written however long it takes to read
//! them, with a stop signal to the proxy or its process group (passed on to the upstream's
//! group), with the proxy killed outright, or by a signal of its own; and `replay`'s servers,
//! placed the same way.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_baremcp")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `baremcp proxy args…` with `stdin` as its input; its stderr goes to a file (so a process
/// left holding it cannot hold up the test) and is returned in `Output::stderr`. A proxy
/// still running after 20 s is killed, and the test fails.
fn proxy(dir: &Path, args: &[&str], stdin: Stdio) -> Output {
    let log = dir.join("stderr.txt");
    let mut child = Command::new(bin())
        .arg("proxy")
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the proxy {args:?} did not end within 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = child.wait_with_output().unwrap();
    out.stderr = std::fs::read(&log).unwrap();
    out
}

/// A file holding `input`, to be a proxy's stdin.
fn input(dir: &Path, input: &str) -> Stdio {
    let path = dir.join("input.txt");
    std::fs::write(&path, input).unwrap();
    Stdio::from(std::fs::File::open(path).unwrap())
}

/// The recording's lines that start with `prefix`.
fn lines_with<'a>(recording: &'a str, prefix: &str) -> Vec<&'a str> {
    recording.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn the_header_quotes_for_a_shell_and_replays_through_the_same_filter() {
    let dir = crate::scratch("proxy-header");
    let record = dir.join("it's rec 1.txt");
    let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let list = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{\"_meta\":{meta}}}}}\n"
    );
    // `$0` of the shell holds a quote and spaces; the upstream is baremcp, with a filter.
    let out = proxy(
        &dir,
        &[
            "--deny-tools",
            "calculate",
            "--record",
            &record.to_string_lossy(),
            "--",
            "sh",
            "-c",
            "exec \"$1\"",
            "it's a shell",
            bin(),
        ],
        input(&dir, &list),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let recording = std::fs::read_to_string(&record).unwrap();
    // The client saw the tools through the filter.
    let listed = lines_with(&recording, "<-- ");
    assert!(listed.len() == 1 && listed[0].contains("\"hello\""), "{recording}");
    assert!(!listed[0].contains("\"calculate\""), "{recording}");
    let recorded = lines_with(&recording, "# Recorded by ");
    assert_eq!(recorded.len(), 1, "{recording}");
    assert!(
        recorded[0].starts_with("# Recorded by baremcp proxy --deny-tools calculate in front of: ")
            && recorded[0].contains(r#" sh -c 'exec "$1"' 'it'\''s a shell' "#),
        "{recording}"
    );
    // The `# Replay:` line replays the recording through the same filter: without it,
    // `calculate` would be listed.
    replays_as_its_header_says(&recording);
}

/// Runs the recording's `# Replay:` line by a shell as written (`baremcp` found on PATH): it
/// must pass.
fn replays_as_its_header_says(recording: &str) {
    let replay = lines_with(recording, "# Replay: ");
    assert_eq!(replay.len(), 1, "{recording}");
    let path = Path::new(bin()).parent().unwrap();
    let search = format!("{}:{}", path.display(), std::env::var("PATH").unwrap_or_default());
    let replayed = Command::new("sh")
        .arg("-c")
        .arg(&replay[0]["# Replay: ".len()..])
        .env("PATH", search)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        replayed.status.success(),
        "{}\n{}\n{recording}",
        text(&replayed.stdout),
        text(&replayed.stderr)
    );
    assert!(text(&replayed.stdout).contains(": ok\n1 passed, 0 failed"), "{recording}");
}

#[test]
fn a_server_line_over_the_limit_is_recorded_as_the_error_the_client_got() {
    let dir = crate::scratch("proxy-record-too-long");
    let record = dir.join("rec.txt");
    let script = r#"read x; head -c 5000 /dev/zero | tr '\0' x; echo; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; cat >/dev/null"#;
    let ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    let record_arg = record.to_string_lossy();
    let flags = ["--max-message-bytes", "1000", "--record", &record_arg, "--", "sh", "-c", script];
    let out = proxy(&dir, &flags, input(&dir, ping));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let recording = std::fs::read_to_string(&record).unwrap();
    let error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"server message too large to forward"}}"#;
    assert!(text(&out.stdout).starts_with(&format!("{error}\n")), "{}", text(&out.stdout));
    assert_eq!(lines_with(&recording, "<-- ")[0], format!("<-- {error}"), "{recording}");
    replays_as_its_header_says(&recording);
}

/// A client's answer to the server's request, too long to forward: the client hears nothing
/// (a response is never answered), the server an error answer in its place.
#[test]
fn a_client_response_over_the_limit_reaches_the_server_as_an_error_answer() {
    let dir = crate::scratch("proxy-response-too-long");
    let seen = dir.join("seen.txt");
    let script = format!("cat > '{}'", seen.display());
    let long = format!(r#"{{"jsonrpc":"2.0","id":"s1","result":{{"x":"{}"}}}}"#, "x".repeat(5000));
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let record = dir.join("rec.txt");
    let record_arg = record.to_string_lossy();
    let flags = ["--max-message-bytes", "1000", "--record", &record_arg, "--", "sh", "-c", &script];
    let out = proxy(&dir, &flags, input(&dir, &format!("{long}\n{ping}\n")));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "", "a response was answered");
    let failed =
        r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-32600,"message":"message too large"}}"#;
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), format!("{failed}\n{ping}\n"));
    // Recorded as sent, so that a replay through the same proxy sends it too.
    let recording = std::fs::read_to_string(&record).unwrap();
    assert_eq!(lines_with(&recording, "--> "), [format!("--> {failed}"), format!("--> {ping}")]);
}

#[test]
fn a_control_character_in_the_command_or_file_name_never_breaks_the_header() {
    let dir = crate::scratch("proxy-header-newline");
    let ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
    let cases = [
        (dir.join("a.txt"), "first\n--> {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}"),
        (dir.join("new\nline.txt"), "x"),
    ];
    for (record, name) in cases {
        let record_arg = record.to_string_lossy().into_owned();
        let out = proxy(
            &dir,
            &["--record", &record_arg, "--", "sh", "-c", "cat", name],
            input(&dir, ping),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let recording = std::fs::read_to_string(&record).unwrap();
        // Two comment lines, then the session (its end of input aside): no command line in it.
        let lines: Vec<&str> = recording.lines().filter(|l| !l.starts_with("-->| ")).collect();
        assert_eq!(lines.len(), 4, "{recording}");
        assert!(lines[0].starts_with("# Recorded by baremcp proxy in front of: sh -c cat "));
        assert!(lines[1].starts_with("# No replay command line: "), "{recording}");
        assert!(lines_with(&recording, "# Replay:").is_empty(), "{recording}");
        assert_eq!(&lines[2..], [format!("--> {}", ping.trim()), format!("<-- {}", ping.trim())]);
        // The first line shows the argument exactly, in `$'…'` quotes.
        if name.contains('\n') {
            assert!(
                lines[0].ends_with(r#" $'first\x0a--> {"jsonrpc":"2.0","id":9,"method":"ping"}'"#)
            );
        }
        let replayed =
            Command::new(bin()).args(["replay", &record_arg, "--", "cat"]).output().unwrap();
        assert!(replayed.status.success(), "{}\n{recording}", text(&replayed.stdout));
    }
}

#[test]
fn when_the_recording_cannot_be_made_nothing_starts() {
    let dir = crate::scratch("proxy-record-fails");
    let missing = dir.join("missing").join("rec.txt");
    let mut cases = vec![(
        missing.to_string_lossy().into_owned(),
        format!("baremcp: {}: No such file or directory (os error 2)\n", missing.display()),
    )];
    // The file opens, and its header cannot be written.
    if Path::new("/dev/full").exists() {
        cases.push((
            "/dev/full".into(),
            "baremcp: /dev/full: No space left on device (os error 28)\n".into(),
        ));
    }
    for (record, expected) in cases {
        // The upstream would say it started on the proxy's stderr, which it inherits: reading
        // that pipe to its end waits for every process holding it, so a started upstream is
        // always seen.
        let out = Command::new(bin())
            .args(["proxy", "--record", &record, "--", "sh", "-c", "echo upstream started >&2"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{record}");
        assert_eq!(text(&out.stderr), expected);
    }
}

#[test]
fn a_recording_cut_short_is_said_and_fails_the_exit_status() {
    let dir = crate::scratch("proxy-record-cut");
    let record = dir.join("rec.txt");
    let lines: String = (1..=50)
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}\n", "p".repeat(100)))
        .collect();
    // Files the proxy writes may hold 1 KiB (`ulimit -f` counts 512-byte blocks here); past
    // it a write fails with EFBIG, its signal ignored. The upstream's status, when it is not
    // 0, is kept.
    for (upstream, code) in [("cat", 2), ("cat; exit 3", 3)] {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 2 && exec \"$0\" \"$@\"")
            .args([bin(), "proxy", "--record", &record.to_string_lossy(), "--", "sh", "-c"])
            .arg(upstream)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        // Forwarding went on: every line came back through `cat`.
        assert_eq!(text(&out.stdout), lines);
        let said = format!(
            "cannot write the recording {}: File too large (os error 27); recording stops",
            record.display()
        );
        assert_eq!(text(&out.stderr).matches(&said).count(), 1, "{}", text(&out.stderr));
        // The recording ends with its last whole line.
        let recording = std::fs::read_to_string(&record).unwrap();
        assert!(recording.ends_with('\n') && recording.len() <= 1024, "{recording}");
        assert!(recording.lines().skip(2).all(|l| l.ends_with("}}")), "{recording}");
    }
}

#[test]
fn a_server_line_that_is_not_utf8_is_forwarded_as_written_and_noted_in_the_recording() {
    let dir = crate::scratch("proxy-not-utf8");
    let record = dir.join("rec.txt");
    let script = r#"printf '{"jsonrpc":"2.0","id":1,"result":{"a":"\377"}}\n'"#;
    let args = ["--record", &record.to_string_lossy(), "--", "sh", "-c", script];
    let out = proxy(&dir, &args, Stdio::null());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\xff\"}}\n");
    let recording = std::fs::read_to_string(&record).unwrap();
    let why = "# the server wrote a line that is not UTF-8 (at byte 39); recorded with U+FFFD";
    let notes = lines_with(&recording, "# the server");
    assert!(notes.len() == 1 && notes[0].starts_with(why), "{recording}");
    let line = "<-- {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"\u{FFFD}\"}}";
    assert_eq!(lines_with(&recording, "<-- "), [line], "{recording}");
}

#[test]
fn an_upstream_busy_past_the_clients_end_of_input_still_gets_every_line() {
    let dir = crate::scratch("proxy-busy");
    // 1 500 lines (90 KB, more than a pipe holds), then the end of input, to a server busy
    // for 3 s before it reads any: none is dropped, and it answers once its input ends.
    let lines: String = (1..=1500)
        .map(|id| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\",\"params\":{{}}}}\n")
        })
        .collect();
    let out = proxy(&dir, &["--", "sh", "-c", "sleep 3; wc -l"], input(&dir, &lines));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "1500", "{}", text(&out.stderr));
}

#[test]
fn an_upstream_still_reading_after_the_clients_end_of_input_answers_every_line() {
    let dir = crate::scratch("proxy-still-reading");
    let manifest = dir.join("slow.json");
    let slow =
        r#"{"tools": [{"name": "t", "description": "d", "run": {"argv": ["sleep", "0.05"]}}]}"#;
    std::fs::write(&manifest, slow).unwrap();
    // 50 calls of 100 KB: the proxy has them all, and the end of input, at once; the server
    // reads one a call, 2.5 s in all, past the 2 s it has once it stops reading.
    let pad = "x".repeat(100_000);
    let calls: String = (1..=50)
        .map(|id| {
            let meta = format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"pad":"{pad}"}}"#
            );
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"t\",\"_meta\":{meta}}}}}\n"
            )
        })
        .collect();
    let manifest = manifest.to_string_lossy();
    let out = proxy(&dir, &["--", bin(), "--manifest", &manifest], input(&dir, &calls));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 50, "{}", text(&out.stderr));
}

/// A proxy (in a process group of its own, as a terminal's job is) over `sh -c script`,
/// started once the script wrote its pid to `dir/pid` and, when it starts one, the pid of a
/// child of its own to `dir/kid`. Its stderr goes to `dir/stderr.txt`.
#[cfg(target_os = "linux")]
fn proxy_over_script(dir: &Path, script: &str, with_kid: bool) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let kid = match with_kid {
        true => format!("sleep 30 & echo $! > '{}'; ", dir.join("kid").display()),
        false => String::new(),
    };
    let script = format!("{kid}echo $$ > '{}'; {script}", dir.join("pid").display());
    let child = Command::new(bin())
        .args(["proxy", "--", "sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    started(&dir.join("pid"), child.id());
    child
}

/// Waits until the upstream wrote its pid to `pid` and the proxy `proxy` catches SIGTERM, to
/// pass it on (it starts to just after starting the upstream).
#[cfg(target_os = "linux")]
pub(crate) fn started(pid: &Path, proxy: u32) {
    within_10_s("the upstream did not start", || {
        std::fs::read_to_string(pid).is_ok_and(|p| p.ends_with('\n'))
            && signal_mask(proxy, "SigCgt:") & (1 << 14) != 0
    });
}

/// Waits until `done`, for 10 s at most (then the test fails, saying `failure`).
#[cfg(target_os = "linux")]
fn within_10_s(failure: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "{failure}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A mask of signals from `/proc/PID/status` (`SigIgn:`, `SigCgt:`): bit N-1 for signal N.
#[cfg(target_os = "linux")]
fn signal_mask(pid: u32, name: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(name)).unwrap_or(name);
    u64::from_str_radix(line[name.len()..].trim(), 16).unwrap_or(0)
}

/// Whether the process whose pid is in `dir/name` ends within 2 s (killed if not).
#[cfg(target_os = "linux")]
fn ends(dir: &Path, name: &str) -> bool {
    let pid = std::fs::read_to_string(dir.join(name)).unwrap();
    crate::commands::ends(pid.trim())
}

#[cfg(target_os = "linux")]
fn kill(signal: &str, target: &str) {
    assert!(Command::new("kill").args([signal, "--", target]).status().unwrap().success());
}

/// Sends SIGTERM to `child` (a proxy, a replay): it ends by it, and so does the process it
/// started, whose pid is in `dir/pid`.
#[cfg(target_os = "linux")]
fn ended_by_sigterm(child: &mut std::process::Child, dir: &Path) {
    use std::os::unix::process::ExitStatusExt;
    kill("-TERM", &child.id().to_string());
    assert_eq!(exited(child).signal(), Some(15));
    assert!(ends(dir, "pid"), "the process it started was left running");
}

/// The proxy's status once it exited, within 10 s (else the test fails).
#[cfg(target_os = "linux")]
fn exited(child: &mut std::process::Child) -> std::process::ExitStatus {
    let mut status = None;
    within_10_s("the proxy did not exit", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    status.unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_signal_to_the_proxys_process_group_reaches_the_upstream_once() {
    let dir = crate::scratch("proxy-group-signal");
    // An upstream that never reads, as a terminal's Ctrl-C or `timeout` would find it, and
    // that counts the SIGTERMs it gets: one, passed on by the proxy (its own group is not
    // the one signalled).
    let script = format!(
        "trap 'echo term >> \"{}\"; exit 7' TERM; sleep 30 & wait",
        dir.join("terms").display()
    );
    let mut child = proxy_over_script(&dir, &script, false);
    kill("-TERM", &format!("-{}", child.id()));
    assert_eq!(child.wait().unwrap().code(), Some(7));
    assert!(ends(&dir, "pid"), "the upstream was left running");
    assert_eq!(std::fs::read_to_string(dir.join("terms")).unwrap(), "term\n");
}

#[cfg(target_os = "linux")]
#[test]
fn a_stop_signal_to_the_proxy_alone_reaches_the_upstream_and_ends_both() {
    // As an MCP client ends "its server" by pid (the spec's stdio shutdown), the server not
    // reading its input: TERM and HUP end the upstream's child too, INT the upstream (a
    // non-interactive shell's background jobs ignore SIGINT).
    use std::os::unix::process::ExitStatusExt;
    for (signal, number, kid) in [("-TERM", 15, true), ("-HUP", 1, true), ("-INT", 2, false)] {
        let dir = crate::scratch(&format!("proxy-signal{signal}"));
        let mut child = proxy_over_script(&dir, "exec sleep 30", kid);
        kill(signal, &child.id().to_string());
        // The upstream died of it, and so does the proxy (a shell's loop stops at a Ctrl-C
        // only when its job died of SIGINT).
        assert_eq!(exited(&mut child).signal(), Some(number), "{signal}");
        assert!(ends(&dir, "pid"), "{signal}: the upstream was left running");
        assert!(!kid || ends(&dir, "kid"), "{signal}: the upstream's child was left running");
        // The proxy passed it on: no surprise to report.
        let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
        assert!(!stderr.contains("killed by signal"), "{signal}: {stderr}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_proxy_stuck_writing_to_a_client_that_stopped_reading_still_ends_on_a_stop_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = crate::scratch("proxy-stuck-writing");
    let pid = dir.join("pid");
    // An upstream that writes without end, to a client that never reads: the proxy blocks
    // writing to it once the pipe is full.
    let line = r#"{"jsonrpc":"2.0","method":"notifications/message"}"#;
    let script = format!("echo $$ > '{}'; while :; do echo '{line}'; done", pid.display());
    let mut child = Command::new(bin())
        .args(["proxy", "--", "sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    started(&pid, child.id());
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    kill("-TERM", &child.id().to_string());
    // The upstream dies of it; the proxy, still stuck (the client takes nothing), ends 2 s
    // later by the same signal.
    assert!(ends(&dir, "pid"), "the upstream was left running");
    assert_eq!(exited(&mut child).signal(), Some(15));
    assert!(sent.elapsed() >= Duration::from_secs(2), "ended before its 2 s");
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    assert!(
        stderr.contains("the client took less than 4 KiB of the server's last output in 2 s"),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_second_stop_signal_ends_the_proxy_whatever_the_upstream_does() {
    let dir = crate::scratch("proxy-second-signal");
    // An upstream that ignores SIGTERM: the proxy passes it on and goes on serving.
    let mut child = proxy_over_script(&dir, "trap '' TERM; exec sleep 30", false);
    kill("-TERM", &child.id().to_string());
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "the proxy ended on the first SIGTERM");
    // The upstream, SIGTERM or not, is killed with the proxy (Linux's parent-death signal).
    ended_by_sigterm(&mut child, &dir);
}

#[cfg(target_os = "linux")]
#[test]
fn a_stopped_upstream_still_ends_on_a_stop_signal() {
    let dir = crate::scratch("proxy-stopped");
    // As a job stopped by its terminal would be: the signal passed on lands once continued.
    let mut child = proxy_over_script(&dir, "kill -STOP $$; exec sleep 30", false);
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    within_10_s("the upstream did not stop", || {
        std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") T "))
    });
    ended_by_sigterm(&mut child, &dir);
}

#[cfg(target_os = "linux")]
#[test]
fn the_upstream_shares_the_proxys_group_only_in_a_terminals_foreground() {
    let dir = crate::scratch("proxy-placement");
    let groups = dir.join("groups");
    // The upstream writes its group, the proxy's group and its own pid.
    let script = dir.join("upstream.sh");
    let line = "echo $(cut -d' ' -f5 /proc/$$/stat) $(cut -d' ' -f5 /proc/$PPID/stat) $$ >";
    std::fs::write(&script, format!("{line} '{}'\n", groups.display())).unwrap();
    let script = script.to_string_lossy();
    let read = || -> Vec<String> {
        let text = std::fs::read_to_string(&groups).unwrap();
        text.split_whitespace().map(String::from).collect()
    };
    let out = proxy(&dir, &["--", "sh", &script], Stdio::null());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let [own, proxys, pid] = &read()[..] else { panic!("{:?}", read()) };
    assert!(own == pid && own != proxys, "no terminal: a group of its own, got {:?}", read());
    // The foreground job of a terminal, which `script` gives it.
    std::fs::remove_file(&groups).unwrap();
    let command = format!("'{}' proxy -- sh '{script}'", bin());
    let Ok(status) =
        Command::new("script").args(["-qec", &command, "/dev/null"]).stdin(Stdio::null()).status()
    else {
        eprintln!("skipped the terminal half: no `script` (util-linux) to give the proxy one");
        return;
    };
    assert!(status.success());
    let [own, proxys, _] = &read()[..] else { panic!("{:?}", read()) };
    assert_eq!(own, proxys, "in a terminal's foreground: the proxy's group");
    // Started over pipes by a client in a terminal's foreground: a group of its own.
    let command = format!("{command} < /dev/null > /dev/null");
    let mut script = Command::new("script");
    script.args(["-qec", &command, "/dev/null"]).stdin(Stdio::null());
    assert!(script.status().unwrap().success());
    let [own, proxys, pid] = &read()[..] else { panic!("{:?}", read()) };
    assert!(own == pid && own != proxys, "over pipes: a group of its own, got {:?}", read());
}

#[cfg(target_os = "linux")]
#[test]
fn a_ctrl_c_in_a_terminal_lets_the_upstream_finish_first() {
    let dir = crate::scratch("proxy-ctrl-c");
    // An upstream that cleans up on SIGINT, then exits 0.
    let up = dir.join("upstream.sh");
    let body = "trap 'echo cleaned > \"$0.done\"; exit 0' INT; echo $PPID > \"$0.pid\"\n\
                while :; do sleep 0.1; done\n";
    std::fs::write(&up, body).unwrap();
    let up = up.to_string_lossy();
    // The terminal's shell traps SIGINT so it outlives the Ctrl-C to write the status: dash, a
    // common `/bin/sh`, dies of it otherwise. A trapped signal is default again in the proxy.
    let command =
        format!("trap : INT; '{}' proxy -- sh '{up}'; echo \"proxy: $?\" > '{up}.status'", bin());
    let Ok(mut terminal) = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
    else {
        return eprintln!("skipped: no `script` (util-linux) to give the proxy a terminal");
    };
    // Started, and the proxy (its parent) catches SIGINT (bit 1).
    within_10_s("the upstream did not start", || {
        let proxy = std::fs::read_to_string(format!("{up}.pid")).unwrap_or_default();
        proxy.trim().parse().is_ok_and(|pid| signal_mask(pid, "SigCgt:") & 2 != 0)
    });
    // Ctrl-C, typed: the terminal sends SIGINT to the whole job.
    terminal.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    within_10_s("the proxy did not end", || {
        std::fs::read_to_string(format!("{up}.status")).is_ok_and(|s| s.ends_with('\n'))
    });
    drop(terminal.stdin.take());
    let _ = terminal.wait();
    let done = std::fs::read_to_string(format!("{up}.done")).unwrap_or_default();
    let status = std::fs::read_to_string(format!("{up}.status")).unwrap();
    assert_eq!((done.as_str(), status.as_str()), ("cleaned\n", "proxy: 0\n"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_signal_the_proxy_was_started_ignoring_stays_ignored() {
    let dir = crate::scratch("proxy-nohup");
    let pid = dir.join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 30", pid.display());
    // As `nohup` starts it: SIGHUP ignored, which the upstream inherits.
    let mut child = Command::new("sh")
        .args(["-c", "trap '' HUP; exec \"$0\" \"$@\"", bin(), "proxy", "--", "sh", "-c"])
        .arg(&script)
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    started(&pid, child.id());
    // The kernel's word for it: SIGHUP (bit 0) still ignored, not caught to be passed on.
    let (ignored, caught) =
        (signal_mask(child.id(), "SigIgn:"), signal_mask(child.id(), "SigCgt:"));
    ended_by_sigterm(&mut child, &dir);
    assert!(ignored & 1 == 1 && caught & 1 == 0, "SigIgn {ignored:x} SigCgt {caught:x}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_proxy_killed_outright_takes_its_upstream_with_it() {
    let dir = crate::scratch("proxy-sigkill");
    let mut child = proxy_over_script(&dir, "exec sleep 30", false);
    kill("-KILL", &child.id().to_string());
    child.wait().unwrap();
    assert!(ends(&dir, "pid"), "the upstream was left running");
}

#[cfg(target_os = "linux")]
#[test]
fn an_upstream_ended_by_the_proxy_takes_what_it_started_with_it() {
    let dir = crate::scratch("proxy-end-group");
    // Neither reads its input nor exits when it closes: ended 2 s after the client's end.
    let mut child = proxy_over_script(&dir, "exec sleep 30", true);
    drop(child.stdin.take());
    assert_eq!(child.wait().unwrap().code(), Some(137));
    assert!(ends(&dir, "pid"), "the upstream was left running");
    assert!(ends(&dir, "kid"), "the upstream's child was left running");
}

#[test]
fn an_upstream_killed_by_a_signal_gives_128_plus_its_number() {
    let dir = crate::scratch("proxy-signal");
    for (signal, code) in [("KILL", 137), ("TERM", 143)] {
        let script = format!("kill -{signal} $$");
        let out = proxy(&dir, &["--", "sh", "-c", &script], Stdio::null());
        assert_eq!(out.status.code(), Some(code), "{signal}");
        let said = format!("the server was killed by signal {}\n", code - 128);
        assert!(text(&out.stderr).ends_with(&said), "{}", text(&out.stderr));
    }
}

/// `replay` places its servers as the proxy places its upstream: ending one (its deadline
/// passed) ends what it started, and a stop signal to replay alone reaches them and ends
/// replay by it.
#[cfg(target_os = "linux")]
#[test]
fn replay_ends_its_server_with_what_it_started() {
    let dir = crate::scratch("replay-groups");
    let transcript = dir.join("t.txt");
    std::fs::write(&transcript, "--> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n<-- {}\n")
        .unwrap();
    // A server that starts a child of its own, then never answers.
    let (pid, kid, server) = (dir.join("pid"), dir.join("kid"), dir.join("server.sh"));
    let script = format!(
        "sleep 30 & echo $! > '{}'; echo $$ > '{}'; exec sleep 30\n",
        kid.display(),
        pid.display()
    );
    std::fs::write(&server, script).unwrap();
    let replay = |timeout_ms: &str| {
        let _ = std::fs::remove_file(&pid);
        Command::new(bin())
            .args(["replay", "--timeout-ms", timeout_ms])
            .arg(&transcript)
            .arg("--")
            .arg("sh")
            .arg(&server)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // Past its deadline.
    let mut child = replay("300");
    assert_eq!(exited(&mut child).code(), Some(1));
    assert!(ends(&dir, "kid"), "the server's child was left running");
    // As a terminal's foreground job (which `script` makes it), the server stays in replay's
    // job: it may write the terminal under `stty tostop`, where a background group stops.
    let talker = dir.join("talker.sh");
    std::fs::write(&talker, "echo starting >&2; read line; echo '{}'; cat\n").unwrap();
    let command = format!(
        "stty tostop; '{}' replay --timeout-ms 3000 '{}' -- sh '{}'",
        bin(),
        transcript.display(),
        talker.display()
    );
    let terminal = Command::new("script").args(["-qec", &command, "/dev/null"]).output();
    match terminal {
        Ok(terminal) => assert!(terminal.status.success(), "{}", text(&terminal.stdout)),
        Err(_) => eprintln!("skipped the terminal half: no `script` (util-linux) to give one"),
    }
    // A SIGTERM to replay alone, while it waits.
    let mut child = replay("20000");
    started(&pid, child.id());
    ended_by_sigterm(&mut child, &dir);
    assert!(ends(&dir, "kid"), "the server's child was left running");
}
