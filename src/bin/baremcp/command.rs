//! Running a declared command: an argv (never a shell), a minimal environment, optional stdin,
//! a deadline that ends the whole process group, and a cap on captured output.
//!
//! The serving loop stays single-threaded; only here, two short-lived threads drain the
//! child's stdout and stderr so that neither pipe can fill up and stall the child, and
//! stderr lines reach the caller (as progress) while the command runs. What they hand over
//! is bounded: stdout is kept up to the cap and counted past it, and stderr lines wait in a
//! queue of a few lines, so a command that writes faster than the caller reads is slowed
//! down rather than held in memory. The deadline is checked on every line, so a command
//! that never stops writing is still ended on time; so is whether the caller still wants the
//! result (its request cancelled, it ends the group too). A third thread keeps the deadline
//! while the caller is held up (a progress notification waiting for a client that reads
//! nothing).

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read, Write};
#[cfg(unix)]
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::channel::{Receiver, RecvError, Sender, channel};
use super::process_group::{
    dies_with_this_process, exited, kill_group, kill_group_id, note_command, own_group,
};
use super::wait::exit_by;

/// A fully expanded command, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub argv: Vec<String>,
    pub stdin: Option<String>,
    pub cwd: Option<PathBuf>,
    /// Added to the minimal environment (PATH, HOME, LANG).
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    pub max_output: usize,
}

/// How a command ended.
#[derive(Debug)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    /// Set when stdout was longer than the cap (its full length).
    pub truncated: Option<usize>,
    pub stderr: String,
    /// `None` when the deadline passed, or the caller gave up, and the process group was
    /// ended.
    pub status: Option<ExitStatus>,
    /// The caller gave up on the command (its request was cancelled).
    pub abandoned: bool,
}

impl Outcome {
    /// "exit status 3", "killed by signal 9".
    pub fn describe_status(&self) -> String {
        match self.status {
            None if self.abandoned => "stopped: its caller gave up".into(),
            None => "timed out".into(),
            Some(status) => match status.code() {
                Some(code) => format!("exit status {code}"),
                #[cfg(unix)]
                None if status.signal().is_some() => {
                    format!("killed by signal {}", status.signal().unwrap_or(0))
                }
                None => status.to_string(),
            },
        }
    }
}

/// The variables a command keeps from baremcp's environment; nothing else leaks through.
const KEPT: [&str; 3] = ["PATH", "HOME", "LANG"];

/// How many stderr lines may wait for the caller; past it, the reading thread waits, and so
/// does the command once its pipe is full.
const QUEUED_LINES: usize = 8;

/// The longest piece of a stderr line handed over at once (or `max_output`, when smaller):
/// a line is read whole into memory, and [`QUEUED_LINES`] of them may wait, so a command
/// that never writes a newline costs this much per line, not its cap.
const STDERR_PIECE: usize = 64 * 1024;

/// How often the loop looks whether the command has exited while its output is quiet.
const EXIT_CHECK: Duration = Duration::from_millis(50);

/// How long output may still arrive once the command has exited: a process it left behind
/// holding its pipes (`sleep 60 &`) would otherwise keep the call open until the deadline.
const LEFTOVER_OUTPUT: Duration = Duration::from_millis(200);

enum Event {
    StderrLine(String),
    /// The bytes of one read that are kept (none past the cap), and how many were read.
    Stdout(Vec<u8>, usize),
    StdoutDone,
    StderrDone,
}

/// What [`run`] tells its caller while the command runs; the caller answers whether it still
/// wants the result (`false`: the command's group is ended).
pub enum Running<'a> {
    /// A line the command wrote to stderr.
    StderrLine(&'a str),
    /// The command still runs: asked every [`EXIT_CHECK`] at most.
    Still,
}

/// Runs `invocation`, telling `caller` of each line the command writes to stderr and asking
/// it now and then whether to go on. An error means the command could not be started.
pub fn run(invocation: &Invocation, caller: impl FnMut(Running) -> bool) -> io::Result<Outcome> {
    let over = Over(Arc::new(AtomicBool::new(false)));
    let (child, events) = spawn(invocation, &over.0)?;
    // Until it is let go, below, a stop signal ends its group with the server.
    let noted = note_command(&child);
    // A manifest's timeout is at most a day (its schema); a far deadline still never overflows.
    let now = Instant::now();
    let deadline = now.checked_add(invocation.timeout).unwrap_or(now + Duration::from_secs(86_400));
    let mut child = Watched { child, state: Arc::default() };
    let _watching = watch(&child, deadline);
    let (mut outcome, ended) =
        collect(&mut child, &events, deadline, invocation.max_output, caller)?;
    // Its group was ended, if it was to be, while the command was not reaped: its id named its
    // group alone, even with every other member gone. The watching thread and the stop signals
    // let go of it before it is reaped, after which the id may name another group.
    let killed = {
        let mut state = child.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.exited = true;
        state.killed
    };
    drop(noted);
    let status = child.child.wait()?;
    outcome.status = match ended {
        // Ended at the deadline by the watching thread: it exited of that, not of itself.
        Ended::Exited if !killed => Some(status),
        _ => None,
    };
    Ok(outcome)
}

/// The command's process, shared with the thread that ends its group at the deadline
/// ([`watch`]), which it does only while the command's exit is not seen.
struct Watched {
    child: Child,
    state: Arc<Mutex<Watch>>,
}

#[derive(Default)]
struct Watch {
    /// The command's exit was seen (or it is about to be reaped): ending its group is
    /// [`collect`]'s to do.
    exited: bool,
    /// The watching thread ended the group at the deadline.
    killed: bool,
}

impl Watched {
    /// Whether the command has exited, left unreaped ([`exited`]).
    fn exited(&mut self) -> io::Result<bool> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let exited = exited(&mut self.child)?;
        state.exited |= exited;
        Ok(exited)
    }
}

/// Ends the command's group at `deadline` unless [`run`] is over first (the returned sender
/// dropped) or the command reaped. [`collect`] keeps the deadline itself, but a progress
/// notification can hold it up past it: writing one waits while the client reads none.
fn watch(child: &Watched, deadline: Instant) -> Sender<()> {
    let (over, ended) = channel::<()>(1);
    let (state, id) = (child.state.clone(), child.child.id());
    std::thread::spawn(move || {
        let left = deadline.saturating_duration_since(Instant::now());
        if let Err(RecvError::Timeout) = ended.recv_timeout(left) {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            // Without process groups (Windows) there is nothing to end from here: `collect`
            // ends the command when it has control again.
            if !state.exited && cfg!(unix) {
                kill_group_id(id);
                state.killed = true;
            }
        }
    });
    over
}

/// Set once [`run`] has its result, however it returns: the threads on the command's pipes
/// then stop, though a process it left behind (out of its group, `setsid`) still holds
/// them; else each call would leave up to three threads and descriptors behind.
struct Over(Arc<AtomicBool>);

impl Drop for Over {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// One of the command's pipes, read only once it has something (written only once it has
/// room), so that its thread can see that [`run`] is over. Where there is no `poll` (not
/// unix) every read and write is tried at once, and a process left holding the pipe keeps
/// its thread until it exits.
struct Pipe<R> {
    pipe: R,
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
    #[cfg(unix)]
    over: Arc<AtomicBool>,
}

impl<R: Read> Read for Pipe<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        while !baremcp::__private::readable_within(self.fd, EXIT_CHECK) {
            if self.over.load(Ordering::Relaxed) {
                return Ok(0);
            }
        }
        self.pipe.read(buf)
    }
}

impl<W: Write> Write for Pipe<W> {
    /// At most 4 KiB at a time, once the pipe has room for them: a write that would block
    /// is never begun, so the thread can see that [`run`] is over.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        #[cfg(unix)]
        while !baremcp::__private::writable_within(self.fd, EXIT_CHECK) {
            if self.over.load(Ordering::Relaxed) {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
        }
        self.pipe.write(&buf[..buf.len().min(4096)])
    }

    fn flush(&mut self) -> io::Result<()> {
        self.pipe.flush()
    }
}

impl<R> Pipe<R> {
    #[cfg(unix)]
    fn new(pipe: R, over: &Arc<AtomicBool>) -> Pipe<R>
    where
        R: std::os::fd::AsRawFd,
    {
        Pipe { fd: pipe.as_raw_fd(), pipe, over: over.clone() }
    }

    #[cfg(not(unix))]
    fn new(pipe: R, _over: &Arc<AtomicBool>) -> Pipe<R> {
        Pipe { pipe }
    }
}

/// Starts the command in its own process group, with a thread writing its stdin (if any)
/// and one draining each of its outputs into the returned channel.
fn spawn(invocation: &Invocation, over: &Arc<AtomicBool>) -> io::Result<(Child, Receiver<Event>)> {
    let (program, args) =
        invocation.argv.split_first().ok_or_else(|| io::Error::other("empty argv"))?;
    let mut command = Command::new(program);
    command.args(args).env_clear().stdout(Stdio::piped()).stderr(Stdio::piped());
    for name in KEPT {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.envs(&invocation.env);
    if let Some(cwd) = &invocation.cwd {
        command.current_dir(cwd);
    }
    command.stdin(if invocation.stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    // Its own process group, so a timeout ends everything the command started; and ended
    // should the server die while it runs (SIGKILL). `run` reaps it before it returns, so the
    // thread that starts it outlives it, as the death signal needs.
    own_group(&mut command);
    dies_with_this_process(&mut command);
    let mut child = command.spawn().map_err(|e| match &invocation.cwd {
        // Both a missing program and a missing cwd read "No such file or directory": say which.
        Some(cwd) if !cwd.is_dir() => {
            io::Error::new(e.kind(), format!("cwd {} is not a directory", cwd.display()))
        }
        _ => e,
    })?;

    if let (Some(text), Some(stdin)) = (invocation.stdin.clone(), child.stdin.take()) {
        // A command that does not read its input must not block us: write from a thread.
        let mut stdin = Pipe::new(stdin, over);
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let (send, events) = channel(QUEUED_LINES);
    let stdout = Pipe::new(child.stdout.take().ok_or_else(|| io::Error::other("no stdout"))?, over);
    let stderr = Pipe::new(child.stderr.take().ok_or_else(|| io::Error::other("no stderr"))?, over);
    let max = invocation.max_output;
    let out_send = send.clone();
    std::thread::spawn(move || read_stdout(stdout, max, &out_send));
    std::thread::spawn(move || read_stderr(stderr, max, &send));
    Ok((child, events))
}

/// Hands over stdout as it is read: the bytes kept (none past `max`) and how many were read.
fn read_stdout(mut stdout: impl Read, max: usize, send: &Sender<Event>) {
    let (mut kept, mut chunk) = (0usize, [0u8; 8192]);
    while let Ok(n) = stdout.read(&mut chunk) {
        if n == 0 {
            break;
        }
        let keep = n.min(max.saturating_sub(kept));
        kept += keep;
        if send.send(Event::Stdout(chunk[..keep].to_vec(), n)).is_err() {
            return;
        }
    }
    let _ = send.send(Event::StdoutDone);
}

/// Hands over stderr a line at a time, at most `max` bytes (and [`STDERR_PIECE`]) per line:
/// a command that never writes a newline is reported in pieces rather than held whole.
fn read_stderr(stderr: impl Read, max: usize, send: &Sender<Event>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    let piece = max.clamp(1, STDERR_PIECE) as u64;
    while (&mut reader).take(piece).read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
        let text = String::from_utf8_lossy(&line).trim_end_matches(['\n', '\r']).to_string();
        if send.send(Event::StderrLine(text)).is_err() {
            return;
        }
        line.clear();
    }
    let _ = send.send(Event::StderrDone);
}

/// How collecting the output ended, the command not reaped yet.
enum Ended {
    /// The deadline passed while the command ran, or the caller gave up: its group was ended.
    Stopped,
    /// The command exited, and its output closed (or what it left behind was ended).
    Exited,
}

/// Gathers the command's output until the command has exited and both pipes closed, the
/// deadline passes, the caller gives up, or the command has exited and what it left behind
/// holds its pipes too long. A command that closes its output and runs on is still waited
/// for, and still asked about.
fn collect(
    child: &mut Watched,
    events: &Receiver<Event>,
    deadline: Instant,
    max: usize,
    mut caller: impl FnMut(Running) -> bool,
) -> io::Result<(Outcome, Ended)> {
    let mut outcome = Outcome {
        stdout: Vec::new(),
        truncated: None,
        stderr: String::new(),
        status: None,
        abandoned: false,
    };
    let (mut total, mut stdout_done, mut stderr_done) = (0, false, false);
    // Until when what the command left behind may still write, once it exited.
    let mut exited: Option<Instant> = None;
    let mut stopped = false;
    let mut asked = Instant::now();
    loop {
        let drained = stdout_done && stderr_done;
        if drained && exited.is_some() {
            break;
        }
        // Asked at most every EXIT_CHECK: the answer may cost the caller a system call.
        if exited.is_none() && asked.elapsed() >= EXIT_CHECK {
            asked = Instant::now();
            if !caller(Running::Still) {
                (outcome.abandoned, stopped) = (true, true);
                kill_group(&mut child.child);
                break;
            }
        }
        if exited.is_none() && child.exited()? {
            exited = Some(Instant::now() + LEFTOVER_OUTPUT);
        }
        // Checked before each event, not only when none comes: a command that writes without
        // pause would otherwise never let the wait end.
        let end = exited.map_or(deadline, |leftovers| leftovers.min(deadline));
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // Out of time, or the command exited and what it started still holds its output:
            // the group ends either way. (The command is not reaped: its id names its group
            // alone, even when no member is left.)
            stopped = exited.is_none();
            kill_group(&mut child.child);
            break;
        }
        if drained {
            // Nothing more can come: the exit is waited for (seen at once), the caller asked
            // between looks.
            let by = Instant::now() + left.min(EXIT_CHECK);
            if exit_by(by, || Ok(child.exited()?.then_some(())))?.is_some() {
                exited = Some(Instant::now());
            }
            continue;
        }
        match events.recv_timeout(left.min(EXIT_CHECK)) {
            Ok(Event::StderrLine(line)) => {
                if !caller(Running::StderrLine(&line)) {
                    (outcome.abandoned, stopped) = (true, exited.is_none());
                    kill_group(&mut child.child);
                    break;
                }
                if outcome.stderr.len() < max {
                    outcome.stderr.push_str(&line);
                    outcome.stderr.push('\n');
                }
            }
            Ok(Event::Stdout(bytes, n)) => {
                // Memory short of the cap ends keeping, not the server (the cap itself is
                // bounded: what is kept is copied again into the result).
                if outcome.stdout.try_reserve(bytes.len()).is_ok() {
                    outcome.stdout.extend_from_slice(&bytes);
                }
                total += n;
            }
            Ok(Event::StdoutDone) => stdout_done = true,
            Ok(Event::StderrDone) => stderr_done = true,
            Err(RecvError::Timeout) => {}
            // Both readers ended without saying so (they could not): as if drained.
            Err(RecvError::Disconnected) => (stdout_done, stderr_done) = (true, true),
        }
    }
    outcome.truncated = (total > outcome.stdout.len()).then_some(total);
    let ended = match exited {
        Some(_) if !stopped => Ended::Exited,
        _ => Ended::Stopped,
    };
    Ok((outcome, ended))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invocation(argv: &[&str]) -> Invocation {
        Invocation {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            stdin: None,
            cwd: None,
            env: BTreeMap::new(),
            timeout: Duration::from_secs(10),
            max_output: 1 << 20,
        }
    }

    /// A caller that hands each stderr line to `take` and always goes on.
    fn stderr(event: Running, take: impl FnOnce(&str)) -> bool {
        if let Running::StderrLine(line) = event {
            take(line);
        }
        true
    }

    #[test]
    fn runs_without_a_shell_and_captures() {
        let outcome =
            run(&invocation(&["printf", "%s|", "a b", "$(id)", ";rm -rf /"]), |_| true).unwrap();
        assert_eq!(String::from_utf8(outcome.stdout).unwrap(), "a b|$(id)|;rm -rf /|");
        assert!(outcome.status.is_some_and(|s| s.success()));
    }

    #[test]
    fn a_timeout_ends_the_whole_group() {
        let mut slow = invocation(&["sh", "-c", "sleep 30 & sleep 30; echo never"]);
        slow.timeout = Duration::from_millis(300);
        let started = Instant::now();
        let outcome = run(&slow, |_| true).unwrap();
        assert!(outcome.status.is_none());
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    }

    /// The command is reaped only once nothing will signal its group (what it left behind is
    /// ended when its output stays open, a stop signal ends it): until then its id, and so
    /// its group's, names no one else, whoever has left the group.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_command_is_not_reaped_while_what_it_left_behind_writes() {
        let script = "echo $$ >&2; (for i in 1 2 3 4 5 6; do sleep 0.05; echo left >&2; done) &";
        // The state (R, S, Z: a zombie, exited and not reaped) of the command at each line.
        let state = |pid: &str| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next())
        };
        let (mut command, mut states) = (None, Vec::new());
        let outcome = run(&invocation(&["sh", "-c", script]), |event| {
            stderr(event, |line| match &command {
                None => command = Some(line.to_string()),
                Some(pid) => states.push(state(pid)),
            })
        })
        .unwrap();
        assert!(outcome.status.is_some_and(|s| s.success()), "{}", outcome.describe_status());
        assert!(states.contains(&Some('Z')), "no line came after the exit: {states:?}");
        assert!(states.iter().all(Option::is_some), "reaped while it wrote: {states:?}");
    }

    #[test]
    fn output_is_capped_and_stderr_lines_stream() {
        let mut big =
            invocation(&["sh", "-c", "echo one >&2; echo two >&2; head -c 100000 /dev/zero"]);
        big.max_output = 1000;
        let mut lines = Vec::new();
        let outcome =
            run(&big, |event| stderr(event, |line| lines.push(line.to_string()))).unwrap();
        assert_eq!((outcome.stdout.len(), outcome.truncated), (1000, Some(100_000)));
        assert_eq!(lines, ["one", "two"]);
    }

    #[test]
    fn a_stderr_line_without_end_is_read_in_bounded_pieces() {
        let mut endless = invocation(&["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x >&2"]);
        endless.max_output = 1000;
        let mut lengths = Vec::new();
        let outcome =
            run(&endless, |event| stderr(event, |line| lengths.push(line.len()))).unwrap();
        assert!(lengths.iter().all(|&n| n <= 1000), "{lengths:?}");
        assert_eq!(lengths.iter().sum::<usize>(), 100_000);
        assert!(outcome.stderr.len() <= 2001, "{}", outcome.stderr.len());
    }

    #[test]
    fn a_stderr_line_is_handed_over_in_pieces_of_64_kib_whatever_the_cap() {
        let mut endless = invocation(&["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x >&2"]);
        endless.max_output = 64 << 20;
        let mut lengths = Vec::new();
        run(&endless, |event| stderr(event, |line| lengths.push(line.len()))).unwrap();
        assert_eq!(lengths, [65536, 65536, 65536, 200_000 - 3 * 65536]);
    }

    #[test]
    fn a_missing_cwd_is_named_not_taken_for_a_missing_program() {
        let mut nowhere = invocation(&["true"]);
        nowhere.cwd = Some(PathBuf::from("/no/such/dir"));
        let error = run(&nowhere, |_| true).unwrap_err();
        assert_eq!(error.to_string(), "cwd /no/such/dir is not a directory");
        let missing = run(&invocation(&["/no/such/program"]), |_| true).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        assert!(!missing.to_string().contains("cwd"), "{missing}");
    }

    #[test]
    fn the_environment_is_minimal() {
        // EXTRA is set for the child only, through Command: the test process is untouched.
        let mut env = invocation(&["env"]);
        env.env.insert("EXTRA".into(), "1".into());
        let outcome = run(&env, |_| true).unwrap();
        let names: Vec<String> = String::from_utf8(outcome.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_string()))
            .collect();
        assert!(
            names.iter().all(|n| ["PATH", "HOME", "LANG", "EXTRA"].contains(&n.as_str())),
            "{names:?}"
        );
        assert!(names.contains(&"EXTRA".to_string()));
    }
}
