//! `baremcp replay`: checks any stdio MCP server against transcripts. Each file gets a fresh
//! server process; client lines are sent in order, and what the server writes is compared
//! with the expected lines as JSON values (member order and whitespace do not matter,
//! placeholders match by type). A server that hangs, exits early or writes garbage fails with
//! the line it was at, never hangs the replay: every read and every write has a deadline.

use std::ffi::OsString;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::channel::{Receiver, RecvError, Sender, channel};
use super::process_group::{end_by_passed_on, kill_group, reaped, spawn_upstream, waited};
use super::rewrite::{self, Answer};
use super::transcript::{self, Entry, Json, Transcript, Vars};
use super::wait::exit_by;
use baremcp::Id;
use baremcp::transport::{Line, LineReader};

/// What `baremcp replay` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    pub files: Vec<PathBuf>,
    /// The server command; empty means this binary's built-in server.
    pub command: Vec<OsString>,
    pub timeout: Duration,
    pub update: bool,
    /// Where the server's stderr goes; `None` passes it through.
    pub stderr: Option<PathBuf>,
    /// The longest server line kept; a longer one fails the file.
    pub max_message_bytes: usize,
}

/// How long `--update` waits for more output after the last line the server wrote.
const QUIET: Duration = Duration::from_millis(200);
/// How long `--update` waits for a request's response before its quiet period.
const PATIENCE: Duration = Duration::from_secs(2);

/// Replays every file, writing each one's result to `out` as it is known; returns the exit
/// code (0 when all pass).
pub fn run(options: &ReplayOptions, out: &mut dyn Write) -> io::Result<i32> {
    let (mut passed, mut failed) = (0, 0);
    for file in &options.files {
        match replay_file(file, options) {
            Ok(()) => {
                passed += 1;
                writeln!(out, "{}: ok", file.display())?;
            }
            Err(why) => {
                failed += 1;
                writeln!(out, "{}: FAILED", file.display())?;
                for line in why.lines() {
                    writeln!(out, "  {line}")?;
                }
            }
        }
        out.flush()?;
        // A stop signal passed on to the server (Ctrl-C, `timeout`) ends the run by it.
        end_by_passed_on();
    }
    writeln!(out, "{passed} passed, {failed} failed")?;
    Ok(if failed == 0 { 0 } else { 1 })
}

/// The environment's variables (those that are UTF-8), for `$NAME` in transcripts.
fn environment() -> Vars {
    let utf8 = |(name, value): (OsString, OsString)| {
        Some((name.into_string().ok()?, value.into_string().ok()?))
    };
    std::env::vars_os().filter_map(utf8).collect()
}

struct Server {
    child: Child,
    /// The server's input, written by a thread so that a server that does not read it cannot
    /// block the replay past its deadline; `None` once closed (the thread then closes it).
    stdin: Option<Sender<Vec<u8>>>,
    /// One answer per write: done, or the error it met.
    written: Receiver<io::Result<()>>,
    lines: Receiver<Output>,
    max: usize,
}

/// How many server lines may wait for the replay; past it, the reading thread waits, and so
/// does the server once its pipe is full.
const QUEUED_LINES: usize = 4;

/// Why a client line could not be sent.
enum NotSent {
    Closed,
    Timeout(Duration),
}

impl std::fmt::Display for NotSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotSent::Closed => write!(f, "the server closed its input before"),
            NotSent::Timeout(after) => {
                write!(
                    f,
                    "timed out after {} ms writing (the server is not reading its input)",
                    after.as_millis()
                )
            }
        }
    }
}

/// What the reader thread saw on the server's output.
enum Output {
    Line(Vec<u8>),
    TooLong,
    End,
}

/// Why no line came.
enum NoLine {
    Timeout(Duration),
    /// A line longer than this many bytes.
    TooLong(usize),
    /// A line that is not UTF-8 (so not JSON), valid up to this byte.
    NotUtf8(usize),
}

impl std::fmt::Display for NoLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoLine::Timeout(after) => write!(f, "timed out after {} ms", after.as_millis()),
            NoLine::TooLong(max) => {
                write!(f, "the server wrote a line longer than {max} bytes (not kept)")
            }
            NoLine::NotUtf8(at) => {
                write!(f, "the server wrote a line that is not UTF-8 (at byte {at})")
            }
        }
    }
}

impl Server {
    fn start(options: &ReplayOptions, args: &[String]) -> Result<Server, String> {
        let mut command = match options.command.split_first() {
            Some((program, rest)) => {
                let mut command = Command::new(program);
                command.args(rest);
                command
            }
            None => Command::new(
                std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?,
            ),
        };
        command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped());
        match &options.stderr {
            Some(path) => {
                let file = std::fs::OpenOptions::new().create(true).append(true).open(path);
                command.stderr(file.map_err(|e| format!("--stderr {}: {e}", path.display()))?);
            }
            None => {
                command.stderr(Stdio::inherit());
            }
        }
        // Placed as the proxy's upstream (docs/transcripts.md, Signals), so that a server is
        // ended with what it started, and replay's stop signals reach it; in a terminal's job
        // it shares replay's group, and may use the terminal (its stderr, a prompt) as any
        // job's processes may.
        let mut child =
            spawn_upstream(&mut command).map_err(|e| format!("cannot start the server: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (send, lines) = channel(QUEUED_LINES);
        let max = options.max_message_bytes;
        // A thread per server reads lines, so the replay itself can wait with a deadline.
        // Lines are bounded as the server bounds its own input: an endless line is reported,
        // not held.
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut lines = LineReader::new(max);
            loop {
                let mut line = Vec::new();
                let out = match lines.read(&mut reader, &mut line) {
                    Ok(Line::Complete) => Output::Line(line),
                    Ok(Line::TooLong) => Output::TooLong,
                    Ok(Line::Eof) | Err(_) => Output::End,
                };
                let end = matches!(out, Output::End);
                if send.send(out).is_err() || end {
                    return;
                }
            }
        });
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let (input, to_write) = channel::<Vec<u8>>(usize::MAX);
        let (report, written) = channel(usize::MAX);
        std::thread::spawn(move || {
            while let Some(bytes) = to_write.recv() {
                let result = stdin.write_all(&bytes).and_then(|()| stdin.flush());
                let failed = result.is_err();
                if report.send(result).is_err() || failed {
                    return;
                }
            }
        });
        Ok(Server { stdin: Some(input), written, child, lines, max })
    }

    /// Writes one client line, waiting at most `timeout` for the server to take it.
    fn send(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), NotSent> {
        let stdin = self.stdin.as_ref().ok_or(NotSent::Closed)?;
        stdin.send(bytes.to_vec()).map_err(|_| NotSent::Closed)?;
        match self.written.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) | Err(RecvError::Disconnected) => Err(NotSent::Closed),
            Err(RecvError::Timeout) => Err(NotSent::Timeout(timeout)),
        }
    }

    /// The next line, `Ok(None)` at end of output, `Err` at the deadline or for a line over
    /// the limit or not UTF-8.
    fn next(&self, timeout: Duration) -> Result<Option<String>, NoLine> {
        match self.lines.recv_timeout(timeout) {
            Ok(Output::Line(mut line)) => {
                if line.ends_with(b"\r") {
                    line.pop();
                }
                // JSON-RPC over stdio is UTF-8: a line that is not is no message at all.
                let line = String::from_utf8(line);
                line.map(Some).map_err(|e| NoLine::NotUtf8(e.utf8_error().valid_up_to()))
            }
            Ok(Output::TooLong) => Err(NoLine::TooLong(self.max)),
            Ok(Output::End) | Err(RecvError::Disconnected) => Ok(None),
            Err(RecvError::Timeout) => Err(NoLine::Timeout(timeout)),
        }
    }

    /// Closes the server's input and waits for it to exit; `Err` says why it did not.
    fn finish(mut self, timeout: Duration) -> Result<(), String> {
        drop(self.stdin.take());
        match exit_by(Instant::now() + timeout, || reaped(&mut self.child)) {
            Ok(Some(status)) if status.success() => Ok(()),
            Ok(Some(status)) => {
                Err(format!("the server exited with {status} after its input closed"))
            }
            _ => {
                self.end();
                Err(format!(
                    "the server did not exit within {} ms after its input closed",
                    timeout.as_millis()
                ))
            }
        }
    }

    /// Ends the server and what it started, unless it has exited.
    fn end(&mut self) {
        if matches!(reaped(&mut self.child), Ok(None)) {
            kill_group(&mut self.child);
            let _ = waited(&mut self.child);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.end();
    }
}

fn replay_file(file: &Path, options: &ReplayOptions) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read: {e}"))?;
    let environment = environment();
    let transcript = transcript::parse(&text, &environment)?;
    // A file that says nothing would pass against any server that exits: most likely the
    // wrong file, or one cut short.
    const NO_MESSAGES: &str = "holds no messages (no -->, -->~ or <-- line)";
    let silent =
        |entries: &[Entry]| entries.iter().all(|e| matches!(e, Entry::Note(_) | Entry::EndOfInput));
    if silent(&transcript.entries) {
        return Err(NO_MESSAGES.into());
    }
    let vars = &transcript.vars;
    let mut server = Server::start(options, &transcript.args)?;
    if options.update {
        let answers = record(&mut server, &transcript, options.timeout)?;
        server.finish(options.timeout)?;
        let (updated, entries) = rewrite::rewrite(&text, &transcript.entries, &answers);
        if updated == text {
            return Ok(());
        }
        // Never write what would not read back as written: the file's old lines would be
        // lost for a transcript that no longer says what the server wrote.
        let refuse = |why: String| format!("{why}; --update left the file as it was");
        let again = transcript::parse(&updated, &environment).map_err(refuse)?.entries;
        // The server wrote nothing to a file of `<--` lines alone: all of them would go.
        if silent(&again) {
            return Err(refuse(format!("the updated file {NO_MESSAGES}")));
        }
        let lines = entries.len().max(again.len());
        if let Some(n) = (0..lines).find(|&n| again.get(n) != entries.get(n)) {
            let line = transcript::render(entries.get(n..=n).unwrap_or_default());
            let line = line.strip_suffix('\n').unwrap_or_default();
            return Err(refuse(format!(
                "line {}: would not read back as written: {line:?}",
                n + 1
            )));
        }
        return rewrite::replace(file, updated.as_bytes())
            .map_err(|e| format!("cannot write: {e}"));
    }
    check(&mut server, &text, &transcript, vars, options.timeout)?;
    // Anything the server writes after the last expected line is a difference too.
    drop(server.stdin.take());
    match server.next(options.timeout) {
        Ok(None) | Err(NoLine::Timeout(_)) => {}
        Ok(Some(extra)) => {
            return Err(format!(
                "after the last line, an unexpected message:\n<-- {}",
                transcript::mask(&extra, vars)
            ));
        }
        Err(why) => return Err(format!("after the last line, {why}")),
    }
    server.finish(options.timeout)
}

/// One expected server line.
struct Expected {
    line: usize,
    json: Json,
    /// A response (a message with an id and no method), which may arrive in any order among
    /// the responses the server owes, as JSON-RPC allows: matched by its id.
    is_response: bool,
    seen: bool,
}

/// Walks the transcript, failing at the first difference. A client line is sent once every
/// server line before it has arrived. Server lines are matched within their block (between
/// two client lines): responses by id, notifications and requests from the server in order.
fn check(
    server: &mut Server,
    text: &str,
    transcript: &Transcript,
    vars: &Vars,
    timeout: Duration,
) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut expected = Vec::new();
    for (n, entry) in transcript.entries.iter().enumerate() {
        if let Entry::Expect(line) = entry {
            let json = Json::parse(line).map_err(|e| {
                format!("line {}: the expected line cannot be read as JSON: {e}", n + 1)
            })?;
            let is_response = json.is_response();
            expected.push(Expected { line: n + 1, json, is_response, seen: false });
        }
    }
    for (n, entry) in transcript.entries.iter().enumerate() {
        match entry {
            Entry::Send { bytes, .. } => {
                receive_until(server, &mut expected, n + 1, vars, timeout)?;
                server
                    .send(bytes, timeout)
                    .map_err(|why| format!("line {}: {why}:\n{}", n + 1, lines[n]))?;
            }
            // The client closed the server's input here, and so does replay, once the lines
            // above have arrived: those below may come only once the input has ended.
            Entry::EndOfInput => {
                receive_until(server, &mut expected, n + 1, vars, timeout)?;
                drop(server.stdin.take());
            }
            Entry::Note(_) | Entry::Expect(_) => {}
        }
    }
    // A last line sent without its newline ends only with the input: close it, as a client
    // that writes one message and hangs up does.
    let last_sent = transcript.entries.iter().rev().find_map(|e| match e {
        Entry::Send { bytes, .. } => Some(bytes),
        _ => None,
    });
    if last_sent.is_some_and(|bytes| !bytes.ends_with(b"\n")) {
        drop(server.stdin.take());
    }
    receive_until(server, &mut expected, usize::MAX, vars, timeout)
}

/// Reads server messages until every expected line before `line` has arrived. Each message
/// is matched only among the lines of its block, the unseen ones above `line` (all above
/// them have arrived): a server line is written in place, so one the file expects after a
/// later client line, or one it expects nowhere, fails here.
fn receive_until(
    server: &Server,
    expected: &mut [Expected],
    line: usize,
    vars: &Vars,
    timeout: Duration,
) -> Result<(), String> {
    while let Some(waiting) = expected.iter().find(|e| !e.seen && e.line < line) {
        let (at, wanted) = (waiting.line, waiting.json.text.clone());
        let actual = match server.next(timeout) {
            Ok(Some(actual)) => transcript::mask(&actual, vars),
            Ok(None) => {
                return Err(format!(
                    "line {at}: the server closed its output; expected:\n<-- {wanted}"
                ));
            }
            Err(why) => return Err(format!("line {at}: {why} waiting for:\n<-- {wanted}")),
        };
        let message = Json::parse(&actual).map_err(|e| {
            format!(
                "line {at}: the server wrote a line that cannot be read as JSON ({e}):\n{actual}\nexpected:\n<-- {wanted}"
            )
        })?;
        let Some(slot) = slot_for(expected, line, &message) else {
            let why = match expected_later(expected, line, &message) {
                Some(later) => format!(
                    "a message arrived early (it is expected at line {later}, after a client \
                     line not sent yet)"
                ),
                None => "an unexpected message arrived".to_string(),
            };
            return Err(format!(
                "line {at}: {why}:\n<-- {actual}\nwhile waiting for:\n<-- {wanted}"
            ));
        };
        if let Some(difference) = transcript::first_difference(&slot.json, &message) {
            return Err(format!(
                "line {}: {difference}\nexpected <-- {}\n     got <-- {actual}",
                slot.line, slot.json.text
            ));
        }
        slot.seen = true;
    }
    // A message written after the last line of this block is judged in the next one, even
    // when it arrived before the next client line was sent: the server's order decides,
    // never how fast the replay reads (through the proxy, a line the server wrote while the
    // client's next line was on its way is recorded after that line).
    Ok(())
}

/// The unseen expected line above `line` that `message` is compared with: the response with
/// its id, or else the first notification or server request, as they are matched in order.
fn slot_for<'a>(
    expected: &'a mut [Expected],
    line: usize,
    message: &Json,
) -> Option<&'a mut Expected> {
    let mut block = expected.iter_mut().filter(|e| !e.seen && e.line < line);
    if message.is_response() {
        block
            .find(|e| e.is_response && transcript::difference_at(&e.json, message, "/id").is_none())
    } else {
        block.find(|e| !e.is_response)
    }
}

/// When no line above `line` takes `message`: the first unseen line below it that matches
/// it whole, expected after a client line not sent yet; `None` when no line expects it.
fn expected_later(expected: &[Expected], line: usize, message: &Json) -> Option<usize> {
    let later = |e: &&Expected| !e.seen && e.line > line;
    let matches = |e: &&Expected| transcript::first_difference(&e.json, message).is_none();
    expected.iter().filter(later).find(matches).map(|e| e.line)
}

/// For `--update`: what the server writes after each client line, until it has been quiet
/// for a moment, each line with the number of client lines sent before it. After a request,
/// its response is waited for first (up to [`PATIENCE`]), so a slow server's reply is
/// recorded after its own request, not the next line; a request the server answers later or
/// never (a question to the client first, a listen stream, a cancellation) costs only that
/// wait. A server that never stops writing fails once it has written for the whole timeout.
fn record(
    server: &mut Server,
    transcript: &Transcript,
    timeout: Duration,
) -> Result<Vec<Answer>, String> {
    let mut out = Vec::new();
    let quiet = QUIET.min(timeout);
    let collect = |server: &Server,
                   out: &mut Vec<Answer>,
                   sent: usize,
                   wait: Duration,
                   mut awaited: Option<Id>| {
        let patient_until = Instant::now() + PATIENCE.min(timeout);
        let deadline = Instant::now() + wait + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let patience = patient_until.saturating_duration_since(Instant::now());
            if awaited.is_some() && patience.is_zero() {
                awaited = None;
            }
            let step = if awaited.is_some() { patience } else { wait }.min(left);
            if step.is_zero() {
                return Err(format!(
                    "the server did not stop writing within {} ms",
                    timeout.as_millis()
                ));
            }
            match server.next(step) {
                Ok(Some(line)) => {
                    // Written down, it would fail every replay after.
                    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&line) {
                        return Err(format!(
                            "the server wrote a line that cannot be read as JSON ({e}):\n{line}"
                        ));
                    }
                    let (method, id) = transcript::method_and_id(line.as_bytes());
                    // Its response, or a question of its own: either way, no more waiting.
                    if awaited.is_some()
                        && (method.is_none() && id == awaited || method.is_some() && id.is_some())
                    {
                        awaited = None;
                    }
                    out.push((sent, transcript::mask(&line, &transcript.vars)));
                }
                Ok(None) => return Ok(()),
                // Quiet for the whole wait: what this line brings has all arrived.
                Err(NoLine::Timeout(_)) if step == wait && awaited.is_none() => return Ok(()),
                Err(NoLine::Timeout(_)) => {}
                Err(why) => return Err(why.to_string()),
            }
        }
    };
    // What the server writes before the first client line, when the transcript expects any
    // there (a banner): else it would be taken as the first line's answer.
    let mut before_the_first = (transcript.entries.iter())
        .take_while(|e| !matches!(e, Entry::Send { .. } | Entry::EndOfInput));
    if before_the_first.any(|e| matches!(e, Entry::Expect(_))) {
        collect(server, &mut out, 0, quiet, None)?;
    }
    let mut sent = 0;
    for entry in &transcript.entries {
        match entry {
            Entry::Send { line, bytes } => {
                sent += 1;
                server.send(bytes, timeout).map_err(|why| format!("{why}:\n{line}"))?;
                let awaited = match transcript::method_and_id(bytes) {
                    (Some(_), id) => id,
                    _ => None,
                };
                collect(server, &mut out, sent, quiet, awaited)?;
            }
            // Nothing is sent after it: what the server writes from here on is collected
            // below, after the end of input, as the file expects it.
            Entry::EndOfInput => {
                sent += 1;
                drop(server.stdin.take());
            }
            Entry::Note(_) | Entry::Expect(_) => {}
        }
    }
    // What comes once the input is closed, in a text that does not say where it ends, is
    // filed after one more client line: the rewrite says where the input ended above it.
    if !transcript.entries.contains(&Entry::EndOfInput) {
        sent += 1;
    }
    drop(server.stdin.take());
    collect(server, &mut out, sent, timeout, None)?;
    Ok(out)
}
