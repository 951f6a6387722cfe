//! `baremcp proxy` delivering the upstream's output to a client that reads slowly: all the
//! upstream wrote before it exited, and, after a stop signal, all it writes as it ends, for as
//! long as the client keeps taking it.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A proxy over `sh -c script`, its stdout piped to the test and its stderr dropped.
fn proxy(script: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["proxy", "--", "sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Everything `from` gives until it ends, `piece` bytes every 100 ms, as a slow client reads.
fn read_slowly(from: impl Read, piece: usize) -> Vec<u8> {
    read_every(from, piece, Duration::from_millis(100))
}

/// Everything `from` gives until it ends, `piece` bytes every `pause`.
fn read_every(mut from: impl Read, piece: usize, pause: Duration) -> Vec<u8> {
    let (mut all, mut buf) = (Vec::new(), vec![0; piece]);
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
        std::thread::sleep(pause);
    }
}

#[test]
fn all_the_upstream_wrote_before_exiting_reaches_a_slow_client() {
    // 40 lines of 5 KB, then exit: the pipe still holds the last of them when it exits.
    let line =
        format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"x":"{}"}}}}"#, "x".repeat(5000));
    let mut child = proxy(&format!("for i in $(seq 40); do echo '{line}'; done"));
    let out = read_slowly(child.stdout.take().unwrap(), 16 << 10);
    assert_eq!(out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count(), 40);
    assert!(out.split(|&b| b == b'\n').all(|l| l.is_empty() || l == line.as_bytes()));
    assert!(child.wait().unwrap().success());
}

#[cfg(target_os = "linux")]
#[test]
fn after_a_stop_signal_a_slow_client_still_gets_the_upstreams_last_line() {
    let dir = crate::scratch("proxy-slow-last-line");
    let pid = dir.join("pid");
    // On SIGTERM: one last line of 150 KB, then exit 0. At 20 KiB/s the client takes it in
    // about 7 s, and a 64 KiB write to its full pipe would wait 3 s: more than the grace a
    // client that takes nothing gets.
    let last = r#"printf '{"x":"'; head -c 150000 /dev/zero | tr '\0' x; printf '"}\n'"#;
    let script = format!(
        "trap '{}; exit 0' TERM; echo $$ > '{}'; while :; do sleep 0.1; done",
        last.replace('\'', r#"'"'"'"#),
        pid.display()
    );
    let mut child = proxy(&script);
    crate::proxy::started(&pid, child.id());
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    assert!(term.unwrap().success());
    let out = read_every(child.stdout.take().unwrap(), 5 << 10, Duration::from_millis(250));
    assert_eq!(out.len(), 150_000 + 9, "the last line was cut short");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_process_that_outlives_the_upstream_is_cut_at_a_line_end() {
    // The upstream leaves a child writing lines without end, and exits 0: past what a pipe
    // holds, the proxy finishes the line begun and ends, so no line reaches the client cut.
    let line =
        format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{"x":"{}"}}}}"#, "y".repeat(999));
    let mut child = proxy(&format!("yes '{line}' & sleep 0.3; exit 0"));
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(out.len() > 1 << 20, "only {} bytes", out.len());
    assert!(out.ends_with(b"\n"), "the last line was cut");
    assert!(out.split(|&b| b == b'\n').all(|l| l.is_empty() || l == line.as_bytes()));
}

#[test]
fn a_line_cut_by_the_end_of_the_upstreams_output_is_dropped_and_said() {
    let dir = crate::scratch("proxy-cut-line");
    let record = dir.join("rec.txt");
    // The upstream leaves a child that writes a line and half of another, then pauses while
    // still holding the output; the upstream exits meanwhile.
    let script = r#"(printf '{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","meth'; sleep 3; \
        printf 'od":"b"}\n'; sleep 5) & sleep 0.3; exit 0"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["proxy", "--record"])
        .arg(&record)
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(out, "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
    let said = "the server's output ended in the middle of a line (22 bytes, dropped)";
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    assert!(stderr.contains(said), "{stderr}");
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(recorded.contains(&format!("# {said}")), "{recorded}");
}

#[test]
fn once_a_line_begun_is_finished_the_output_ends() {
    // Half a line when the upstream exits; its end comes with more lines behind it, which
    // are the leftover child's, not the upstream's.
    let script = r#"L='{"b":"'$(head -c 9000 /dev/zero | tr '\0' y)'"}'
        ( printf '{"a":"'; sleep 0.3; printf 'x"}\n%s\n%s\n' "$L" "$L"; sleep 1 ) &
        sleep 0.05; exit 0"#;
    let mut child = proxy(script);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(out, "{\"a\":\"x\"}\n");
}

#[test]
fn a_line_that_trickles_on_is_given_a_second_at_most() {
    let dir = crate::scratch("proxy-trickle");
    let kid = dir.join("kid");
    // A child writing a byte every 50 ms of a line without end, left by the upstream.
    let script = format!(
        r#"sh -c 'printf "{{\"a\":\""; while :; do sleep 0.05; printf x; done' &
        echo $! > '{}'; sleep 0.05; exit 0"#,
        kid.display()
    );
    let started = std::time::Instant::now();
    let mut child = proxy(&script);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(out, "");
    let kid = std::fs::read_to_string(&kid).unwrap();
    let _ = Command::new("kill").arg(kid.trim()).status();
}

#[test]
fn writers_that_keep_the_pipe_full_do_not_hold_a_line_open_past_its_second() {
    // The proxy under `strace` reads slower than six children writing one endless line, left
    // by the upstream, can fill the pipe: the line's second is not waited past.
    let traced = Command::new("strace").args(["-qq", "-o", "/dev/null", "true"]).output();
    if !traced.is_ok_and(|out| out.status.success()) {
        return eprintln!("skipped: no strace (or no ptrace) to slow the proxy below its writers");
    }
    let script = "for i in 1 2 3 4 5 6; do timeout 6 cat /dev/zero & done; sleep 0.3; exit 0";
    let started = std::time::Instant::now();
    let mut child = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=poll", "-o", "/dev/null"])
        .arg(env!("CARGO_BIN_EXE_baremcp"))
        .args(["proxy", "--", "sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    let took = started.elapsed();
    assert!(status.success());
    assert!(took < Duration::from_secs(4), "ended {took:?} after it started");
}
