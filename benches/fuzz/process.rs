//! Running a process: the input written on its stdin (then a sentinel `ping`, when asked),
//! every stdout line checked as it arrives, stderr kept, peak memory read when the sentinel's
//! reply arrives, and the whole process group ended past a deadline.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::replies::{Out, check_out};

/// What one run of a process did.
#[derive(Debug, Default)]
pub struct Run {
    /// Each stdout line checked (or why it is not a valid message), with its first bytes.
    pub outs: Vec<Result<Out, String>>,
    pub excerpts: Vec<String>,
    /// The whole stdout, for content checks (capped).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: Option<i32>,
    pub hung: bool,
    /// The process stopped reading before the end of its input.
    pub write_failed: bool,
    /// Peak resident memory in KiB, read when the sentinel's reply arrived.
    pub peak_kib: Option<u64>,
    pub sentinel_seen: bool,
    /// A stdout line longer than the cap.
    pub huge_line: Option<usize>,
}

pub const SENTINEL_ID: &str = "\"fuzz-sentinel\"";
const SENTINEL: &[u8] = b"\n{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-sentinel\",\"method\":\"ping\"}\n";
/// A reply line longer than this is amplification, whatever the limits.
pub const OUTPUT_LINE_CAP: usize = 64 << 20;
const KEPT_STDOUT: usize = 4 << 20;

fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `command` with `input` on its stdin (then the sentinel ping, when asked), reading
/// everything it writes; ends it (its whole process group) past `deadline`.
pub fn run(command: &mut Command, input: &[u8], sentinel: bool, deadline: Duration) -> Run {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let mut child = match command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return Run { outs: vec![Err(format!("cannot start: {e}"))], ..Run::default() },
    };
    let pid = child.id();
    let (seen_tx, seen_rx) = mpsc::channel::<()>();
    let writer = feed(child.stdin.take().unwrap(), input.to_vec(), sentinel, seen_rx, deadline);
    let replies = read_replies(child.stdout.take().unwrap(), pid, sentinel, seen_tx);
    let stderr = keep_stderr(child.stderr.take().unwrap());
    let (status, hung) = wait_or_end(&mut child, pid, started, deadline);
    // Children of the process may still hold its pipes: end them too.
    end_group(pid);
    let mut run = replies.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    run.stderr = stderr.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    run.write_failed = !writer.join().unwrap_or(false);
    run.hung = hung;
    run.code = status.and_then(|s| s.code());
    run
}

/// Writes the input, then the sentinel when asked; the thread says whether all was written.
fn feed(
    mut stdin: ChildStdin,
    input: Vec<u8>,
    sentinel: bool,
    seen: Receiver<()>,
    deadline: Duration,
) -> JoinHandle<bool> {
    std::thread::spawn(move || {
        let mut ok = stdin.write_all(&input).is_ok();
        if sentinel && ok {
            ok = stdin.write_all(SENTINEL).and_then(|()| stdin.flush()).is_ok();
            // Keep the input open until the sentinel's reply is read, so the process is
            // measured alive, with everything before it done.
            let _ = seen.recv_timeout(deadline);
        }
        ok
    })
}

/// Reads stdout to its end, checking each line; the sentinel's reply reads peak memory and
/// tells the writer to close the input.
fn read_replies(stdout: ChildStdout, pid: u32, sentinel: bool, seen: Sender<()>) -> Receiver<Run> {
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::with_capacity(1 << 16, stdout);
        let mut run = Run::default();
        let mut line = Vec::new();
        loop {
            let (too_long, ended) = next_line(&mut reader, &mut line);
            if too_long > 0 {
                run.huge_line = Some(too_long);
            } else if !line.is_empty() {
                if run.stdout.len() < KEPT_STDOUT {
                    run.stdout.extend_from_slice(&line[..line.len().min(KEPT_STDOUT)]);
                    run.stdout.push(b'\n');
                }
                let out = check_out(&line);
                if sentinel && matches!(&out, Ok(Out::Response(Some(id), _)) if id == SENTINEL_ID) {
                    run.peak_kib = peak_kib(pid);
                    run.sentinel_seen = true;
                    let _ = seen.send(());
                }
                run.excerpts
                    .push(String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned());
                run.outs.push(out);
            }
            if ended {
                break;
            }
        }
        let _ = out_tx.send(run);
    });
    out_rx
}

/// Reads one line into `line` (without its `\n`); returns how long it was when it passed
/// [`OUTPUT_LINE_CAP`] (then `line` is left empty, 0 otherwise), and whether the output ended.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> (usize, bool) {
    line.clear();
    let mut too_long = 0usize;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) if !chunk.is_empty() => chunk,
            _ => return (too_long, true),
        };
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (chunk.len(), false),
        };
        if too_long > 0 || line.len() + take > OUTPUT_LINE_CAP {
            too_long += take + line.len();
            line.clear();
        } else {
            line.extend_from_slice(&chunk[..take]);
        }
        reader.consume(take + usize::from(done));
        if done {
            return (too_long, false);
        }
    }
}

/// Reads stderr to its end, keeping its first MiB.
fn keep_stderr(mut stderr: ChildStderr) -> Receiver<Vec<u8>> {
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut kept, mut buf) = (Vec::new(), [0u8; 8192]);
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            if kept.len() < 1 << 20 {
                kept.extend_from_slice(&buf[..n]);
            }
        }
        let _ = err_tx.send(kept);
    });
    err_rx
}

/// Waits for the process to exit; past the deadline ends it and says it hung.
fn wait_or_end(
    child: &mut Child,
    pid: u32,
    started: Instant,
    deadline: Duration,
) -> (Option<ExitStatus>, bool) {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), false),
            Ok(None) if started.elapsed() < deadline => {
                std::thread::sleep(Duration::from_millis(1))
            }
            _ => {
                end_group(pid);
                let _ = child.kill();
                return (child.wait().ok(), true);
            }
        }
    }
}

/// Kills the process group `pid` leads.
fn end_group(pid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}
