//! What the binary says as it starts, at the default log level: where HTTP is served and
//! whether a token is required; on a terminal, that stdio waits for an MCP client; nothing
//! when a client spawns it, and nothing with `--quiet` or a quieter `--log-level`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn baremcp() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.env_remove("RUST_LOG");
    command
}

/// The first line `child` writes to stderr, waiting at most ten seconds; the rest of its
/// stderr keeps being read, so the child never blocks on a full pipe.
fn first_stderr_line(child: &mut Child) -> Option<String> {
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    lines.recv_timeout(Duration::from_secs(10)).ok()
}

/// Waits (at most ten seconds) for `child` to exit after `what`; kills it and fails if not.
fn exits_after(child: &mut Child, what: &str) {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("no exit within 10 s of {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGTERM and waits for the exit.
fn terminate(child: &mut Child) {
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    exits_after(child, "SIGTERM");
}

#[test]
fn http_says_each_url_and_whether_a_token_is_required() {
    let dir = crate::scratch("startup-http");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "secret\n").unwrap();
    for (args, token) in [
        (vec![], "no token required"),
        (vec!["--auth-token-file", tokens.to_str().unwrap()], "bearer token required"),
    ] {
        let mut child = baremcp()
            .args(["--http", "127.0.0.1:0"])
            .args(&args)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let line = first_stderr_line(&mut child).unwrap_or_default();
        let (_, says) = line.split_once(" INFO  baremcp::http: ").unwrap_or_default();
        let url = says.strip_prefix(&format!("{token}; serving MCP at ")).unwrap_or_default();
        let addr = url.strip_prefix("http://").and_then(|a| a.strip_suffix("/mcp"));
        assert!(addr.is_some(), "{args:?}: {line}");
        // The address is the one really listened on (port 0 was asked for).
        assert!(TcpStream::connect(addr.unwrap()).is_ok(), "{line}");
        terminate(&mut child);
    }
}

#[test]
fn quiet_http_says_nothing() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    for quiet in ["-q", "--quiet", "--log-level=error"] {
        let mut child = baremcp()
            .args(["--http", &addr, quiet])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while TcpStream::connect(&addr).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "the server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        terminate(&mut child);
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert_eq!(stderr, "", "{quiet}");
    }
}

/// A pseudo-terminal: the controller end, and the terminal end a child gets as its stdin.
/// `None` where the system has none to give.
fn terminal() -> Option<(File, File)> {
    unsafe extern "C" {
        fn posix_openpt(flags: i32) -> i32;
        fn grantpt(fd: i32) -> i32;
        fn unlockpt(fd: i32) -> i32;
        fn ptsname(fd: i32) -> *const std::ffi::c_char;
    }
    const O_RDWR: i32 = 2;
    // SAFETY: these calls take and return plain integers; `ptsname`'s string is copied out
    // before any other call could reuse its buffer, and this is the only test that calls it.
    unsafe {
        let fd = posix_openpt(O_RDWR);
        if fd < 0 {
            return None;
        }
        let controller = <File as std::os::fd::FromRawFd>::from_raw_fd(fd);
        if grantpt(fd) != 0 || unlockpt(fd) != 0 {
            return None;
        }
        let name = ptsname(fd);
        if name.is_null() {
            return None;
        }
        let path = std::ffi::CStr::from_ptr(name).to_string_lossy().into_owned();
        let end = File::options().read(true).write(true).open(path).ok()?;
        Some((controller, end))
    }
}

/// What the binary, run with `args` and a terminal as stdin, writes to stderr before it
/// reads end of input (Ctrl-D).
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let (mut controller, end) = terminal()?;
    let mut child = baremcp()
        .args(args)
        .stdin(end)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-D at the start of a line: the terminal's end of input.
    controller.write_all(b"\x04").unwrap();
    exits_after(&mut child, "Ctrl-D");
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    Some(stderr)
}

#[test]
fn stdio_on_a_terminal_says_it_waits_for_a_client() {
    let Some(stderr) = on_a_terminal(&[]) else {
        eprintln!("skipped: this system gives no pseudo-terminal");
        return;
    };
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0]
            .contains(" INFO  baremcp::stdio: waiting for JSON-RPC messages from an MCP client"),
        "{stderr}"
    );
    for quiet in ["--quiet", "--log-level=error"] {
        assert_eq!(on_a_terminal(&[quiet]).unwrap(), "", "{quiet}");
    }
    // A client spawns it with a pipe: then nothing is said (`cli` checks the same with input).
    let out = baremcp().stdin(Stdio::piped()).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
