//! `baremcp proxy`: sits between a client (this process's stdin and stdout) and an upstream
//! stdio server it spawns, forwarding every line both ways unchanged (ending in `\n`), one
//! thread per direction (and one writing to the upstream, `upstream_feed.rs`; the upstream's
//! process and output are `upstream.rs`'s). It can record the session as a transcript
//! (`recording.rs`) and filter the upstream's tools. Lines are bounded: one longer than the
//! limit is dropped as it streams in, and the client gets an error in its place.
//!
//! Filtering rewrites only what it must: a response listing tools (filtered tools removed,
//! `nextCursor` kept, so pagination still works) and a `tools/call` of a filtered tool, which
//! the proxy answers itself with -32602 `unknown tool` without forwarding. A batch that holds
//! a `tools/list` or `tools/call` is refused while filters are on, so nothing slips past them
//! (each request in it gets its own error).
//!
//! A filter must judge exactly what the other side will read. JSON with a member named twice
//! means one thing to a reader that keeps the first and another to one that keeps the last,
//! and text that is not UTF-8 or not strict JSON may be read leniently upstream; so while
//! filters are on, every line either way must be strict UTF-8 JSON with no member named
//! twice at any depth, or it is not forwarded (a request gets an error in its place).

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{self, BufReader, Read, Write};
#[cfg(unix)]
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[cfg(unix)]
use super::process_group::passed_on;
use super::process_group::{end_by_passed_on, passed_on_notice, spawn_upstream};
use super::recording::Recording;
use super::transcript;
use super::upstream::{GRACE, Upstream, UpstreamOutput};
use super::upstream_feed::Outbox;
use baremcp::__private::{
    Clipped, Outline, StrictError, error_response, read_strict, response_in_head,
};
use baremcp::transport::{Line, LineReader};
use baremcp::{DEFAULT_MAX_MESSAGE_BYTES, ErrorObject, Id};

/// What `baremcp proxy` was asked to do.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProxyOptions {
    pub command: Vec<OsString>,
    pub record: Option<PathBuf>,
    /// Only these tools, when given.
    pub allow: Option<Vec<String>>,
    pub deny: Vec<String>,
    /// The longest line forwarded either way; a longer one is dropped as it streams in.
    pub max_message_bytes: usize,
}

impl ProxyOptions {
    fn filtering(&self) -> bool {
        self.allow.is_some() || !self.deny.is_empty()
    }

    fn allowed(&self, tool: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(|t| t == tool))
            && !self.deny.iter().any(|t| t == tool)
    }

    /// The flags that change what the client sees, as given: the recording's header names
    /// them, and replays through a proxy with the same.
    fn recorded_flags(&self) -> Vec<OsString> {
        let mut flags: Vec<OsString> = Vec::new();
        if let Some(allow) = &self.allow {
            flags.extend(["--allow-tools".into(), allow.join(",").into()]);
        }
        if !self.deny.is_empty() {
            flags.extend(["--deny-tools".into(), self.deny.join(",").into()]);
        }
        if self.max_message_bytes != DEFAULT_MAX_MESSAGE_BYTES {
            flags.extend(["--max-message-bytes".into(), self.max_message_bytes.to_string().into()]);
        }
        flags
    }
}

/// The proxy's exit code when the upstream exited 0 but the recording was cut short.
const RECORDING_CUT_SHORT: i32 = 2;

/// The shared ends: the client's stdout and the recording, each written a whole line at a time.
struct Sinks {
    client: Mutex<Box<dyn Write + Send>>,
    record: Mutex<Option<Recording>>,
    /// Bytes the client has taken, counted a piece at a time: a long line to a slow client
    /// is progress, which a stuck client makes none of ([`end_if_stuck`]).
    taken: AtomicU64,
}

/// The most written to the client at once, so that its progress shows in [`Sinks::taken`]:
/// a pipe takes a write this small whole, as soon as it has room for it.
const PIECE: usize = 4 << 10;

impl Sinks {
    fn to_client(&self, line: &[u8]) -> io::Result<()> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        for piece in line.chunks(PIECE) {
            client.write_all(piece)?;
            client.flush()?;
            self.taken.fetch_add(piece.len() as u64, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Appends one transcript line, written at once so a crash loses nothing.
    fn record(&self, line: &str) {
        if let Some(recording) = self.record.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            recording.line(line);
        }
    }

    fn recording_cut_short(&self) -> bool {
        let record = self.record.lock().unwrap_or_else(|e| e.into_inner());
        record.as_ref().is_some_and(Recording::cut_short)
    }
}

/// Runs the proxy until the upstream exits; returns the exit code: the upstream's, 128+N
/// when signal N ended it, or [`RECORDING_CUT_SHORT`] when it exited 0 but the recording
/// stopped early.
pub fn run(options: ProxyOptions) -> io::Result<i32> {
    let (program, args) =
        options.command.split_first().ok_or_else(|| io::Error::other("no server command"))?;
    // The recording comes first: when it cannot be made, nothing has started.
    let record = match &options.record {
        Some(path) => Some(Recording::create(path, &options.recorded_flags(), &options.command)?),
        None => None,
    };
    let client = Mutex::new(Box::new(io::stdout()) as Box<dyn Write + Send>);
    let sinks = Arc::new(Sinks { client, record: Mutex::new(record), taken: AtomicU64::new(0) });
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    // Its stop signals are passed on to it, and a SIGKILL to the proxy ends it too (Linux).
    let notice = passed_on_notice();
    let mut child = spawn_upstream(&mut command).map_err(|e| {
        let why = format!("cannot start {}: {e}", program.to_string_lossy());
        sinks.record(&format!("# {why}"));
        io::Error::other(why)
    })?;
    let options = Arc::new(options);

    let upstream_in = child.stdin.take().ok_or_else(|| io::Error::other("no upstream stdin"))?;
    let upstream_out = child.stdout.take().ok_or_else(|| io::Error::other("no upstream stdout"))?;
    let upstream = Arc::new(Upstream::new(child));
    if let Some(notice) = notice {
        let (upstream, sinks) = (upstream.clone(), sinks.clone());
        std::thread::spawn(move || end_if_stuck(notice, &upstream, &sinks));
    }
    let outbox = Arc::new(Outbox::new(options.max_message_bytes));
    let writer = outbox.clone();
    std::thread::spawn(move || writer.write_to(upstream_in));
    let client_thread = {
        let (sinks, options, upstream, outbox) =
            (sinks.clone(), options.clone(), upstream.clone(), outbox.clone());
        std::thread::spawn(move || {
            client_to_upstream(&outbox, &sinks, &options);
            outbox.close();
            after_the_client(&outbox, &upstream);
        })
    };

    let output = UpstreamOutput::new(upstream_out, upstream.clone());
    let ended = upstream_to_client(&mut BufReader::new(output), &sinks, &options)?;
    // The upstream closed its output or exited, or the client is gone. Leave with its status
    // (a server that keeps running is ended after the same grace period).
    let status = match upstream.exit_or_end(&format!("{ended} did not exit"), "")? {
        Some(status) => status,
        None => upstream.wait()?,
    };
    drop(client_thread);
    let unwritten = outbox.unwritten();
    if unwritten > 0 {
        log::warn!("client lines not written to the server (it did not read them): {unwritten}");
    }
    // It ended of the signal the proxy passed on to it: so does the proxy.
    #[cfg(unix)]
    if status.signal().is_some_and(passed_on) {
        end_by_passed_on();
    }
    let code = exit_code(status, upstream.ended_by_proxy());
    Ok(if code == 0 && sinks.recording_cut_short() { RECORDING_CUT_SHORT } else { code })
}

/// Once a stop signal was passed on (`notice` readable) and the upstream has exited, the proxy
/// writes the upstream's last lines for as long as the client takes them; when the client
/// takes nothing for [`GRACE`], the proxy is stuck writing to a client that stopped reading
/// (a client ending its server, say), and ends by the signal.
fn end_if_stuck(mut notice: impl Read, upstream: &Upstream, sinks: &Sinks) {
    if notice.read_exact(&mut [0]).is_err() {
        return;
    }
    // An upstream may take its time to act on the signal, or ignore it: looked at less and
    // less often, up to twice a second.
    let mut pause = Duration::from_millis(20);
    while matches!(upstream.try_wait(), Ok(None)) {
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(500));
    }
    loop {
        let taken = sinks.taken.load(Ordering::Relaxed);
        std::thread::sleep(GRACE);
        if sinks.taken.load(Ordering::Relaxed) == taken {
            break;
        }
    }
    let why = format!(
        "the client took less than {} KiB of the server's last output in {} s: ending after \
         the stop signal",
        PIECE >> 10,
        GRACE.as_secs()
    );
    log::warn!("{why}");
    sinks.record(&format!("# {why}"));
    end_by_passed_on();
}

/// Once the client hung up: the lines before are still written, however long the upstream
/// takes to read them (a server busy with a slow call reads on later: none is dropped), then
/// its input closes and it has [`GRACE`] to exit.
fn after_the_client(outbox: &Outbox, upstream: &Upstream) {
    if outbox.wait_written() {
        let _ = upstream.exit_or_end("the server did not exit", " after its input closed");
    }
}

/// The upstream's exit code, or 128+N as shells give it when signal N ended it (said on
/// stderr unless the proxy sent it, having said so already, or passed it on).
fn exit_code(status: ExitStatus, ended_by_proxy: bool) -> i32 {
    #[cfg(unix)]
    if let Some(signal) = status.signal() {
        if !ended_by_proxy && !passed_on(signal) {
            log::error!("the server was killed by signal {signal}");
        }
        return 128 + signal;
    }
    #[cfg(not(unix))]
    let _ = ended_by_proxy;
    status.code().unwrap_or(1)
}

/// Forwards the upstream's lines to the client, filtered when filters are on, until the
/// upstream's output ends or the client is gone; returns which, as the start of a sentence.
fn upstream_to_client(
    upstream: &mut BufReader<UpstreamOutput>,
    sinks: &Sinks,
    options: &ProxyOptions,
) -> io::Result<&'static str> {
    let mut lines = LineReader::new(options.max_message_bytes);
    let mut line = Vec::new();
    loop {
        let forwarded = match lines.read(upstream, &mut line)? {
            Line::Eof => return Ok("the server closed its output but"),
            Line::TooLong => {
                // The client hears of it rather than waiting forever: an error whose id is
                // null, as JSON-RPC has for a message whose id is unknown.
                let why = format!(
                    "the server wrote a line longer than {} bytes",
                    options.max_message_bytes
                );
                log::error!("{why}: dropped");
                sinks.record(&format!("# {why}; the proxy dropped it and wrote this instead"));
                let error = ErrorObject {
                    message: "server message too large to forward".into(),
                    ..ErrorObject::internal()
                };
                // Recorded as the client got it, so that the recording's replay, through the
                // same proxy, expects it.
                let error = error_response(None, error);
                sinks.record(&format!("<-- {error}"));
                format!("{error}\n").into_bytes()
            }
            // The end the proxy made after the upstream's exit fell in this line: no client
            // gets half a message.
            Line::Complete if upstream.get_ref().cut() => {
                let why = format!(
                    "the server's output ended in the middle of a line ({} bytes, dropped): the \
                     server exited, and a process it started still holds its output",
                    line.len()
                );
                log::warn!("{why}");
                sinks.record(&format!("# {why}"));
                continue;
            }
            Line::Complete => {
                let text = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(&line));
                log_line("server -> client", &text);
                let verdict = if options.filtering() {
                    filter_server_line(&line, options)
                } else {
                    Verdict::Forward
                };
                match verdict {
                    Verdict::Forward => {
                        // Forwarded as written; the transcript, being text, can only say so.
                        // (Only a line that is not UTF-8 made `text` a copy.)
                        if let Cow::Owned(_) = &text
                            && let Err(e) = std::str::from_utf8(&line)
                        {
                            let why = format!(
                                "the server wrote a line that is not UTF-8 (at byte {})",
                                e.valid_up_to()
                            );
                            log::warn!("{why}");
                            sinks.record(&format!("# {why}; recorded with U+FFFD in its place"));
                        }
                        sinks.record(&format!("<-- {text}"));
                        [&line[..], b"\n"].concat()
                    }
                    Verdict::Answer(rewritten) => {
                        sinks.record(&format!("<-- {rewritten}"));
                        format!("{rewritten}\n").into_bytes()
                    }
                    Verdict::Drop(why) => {
                        sinks.record(&format!("# the proxy dropped a server line: {why}"));
                        continue;
                    }
                }
            }
        };
        if sinks.to_client(&forwarded).is_err() {
            return Ok("the client stopped reading, and the server");
        }
    }
}

fn log_line(direction: &str, line: &str) {
    if log::log_enabled!(log::Level::Debug) {
        let (method, id) = describe(line);
        // A client's or server's text, on its line (a method may hold a newline).
        let (method, id) = (Clipped(&method), Clipped(&id));
        log::debug!("{direction}: method={method} id={id}");
    }
}

/// The method and id of a line, for the debug log.
fn describe(line: &str) -> (String, String) {
    if line.trim_start().starts_with('[') {
        let items = serde_json::from_str::<Vec<IgnoredAny>>(line).map_or(0, |items| items.len());
        return (format!("(batch of {items})"), "-".into());
    }
    match transcript::method_and_id(line.as_bytes()) {
        (Some(method), id) => (method, id.map_or("-".into(), |id| id.as_json().to_owned())),
        (None, Some(id)) => ("(response)".into(), id.as_json().to_owned()),
        (None, None) => ("(other)".into(), "-".into()),
    }
}

/// Hands client lines to the upstream's writer, replying to filtered calls itself, until the
/// client closes its input (or either side is gone).
fn client_to_upstream(outbox: &Outbox, sinks: &Sinks, options: &ProxyOptions) {
    let mut stdin = io::stdin().lock();
    let mut lines = LineReader::new(options.max_message_bytes);
    let mut line = Vec::new();
    loop {
        // What the proxy answers itself instead of forwarding, if anything.
        let reply = match lines.read(&mut stdin, &mut line) {
            Ok(Line::Eof) | Err(_) => {
                // The upstream's input closes once the lines before are written: a replay
                // closes it at the same place, so what the upstream writes only then (an
                // answer to a request left waiting on the client, its last words) is
                // expected after it, not waited for with its input still open.
                sinks.record(transcript::END_OF_INPUT);
                break;
            }
            Ok(Line::TooLong) => {
                // Refused as baremcp itself refuses it; the upstream never sees it.
                let why = format!("a client line longer than {} bytes", options.max_message_bytes);
                log::warn!("{why}: refused");
                sinks.record(&format!("# {why} was refused by the proxy"));
                // Its id, when whole near its start, tells the client which request it was.
                let (id, error) = (Id::in_head(&line), ErrorObject::too_large());
                if !response_in_head(&line) {
                    Some(error_response(id.as_ref(), error))
                } else {
                    // An answer to the upstream's request: a response is never answered, but
                    // the upstream, which waits for it, hears it failed, as baremcp's own
                    // handler would.
                    let Some(id) = id else { continue };
                    let failed = error_response(Some(&id), error);
                    // Recorded as sent, so that a replay through the same proxy sends it too.
                    sinks.record("# sent to the server in its place:");
                    sinks.record(&transcript::client_line(failed.as_bytes()));
                    if !outbox.push(format!("{failed}\n").into_bytes()) {
                        break;
                    }
                    continue;
                }
            }
            Ok(Line::Complete) => {
                sinks.record(&transcript::client_line(&line));
                if let Ok(text) = std::str::from_utf8(&line) {
                    log_line("client -> server", text);
                }
                match if options.filtering() { intercept(&line, options) } else { Verdict::Forward }
                {
                    Verdict::Forward => None,
                    Verdict::Answer(reply) => {
                        sinks.record(&format!("<-- {reply}"));
                        Some(reply)
                    }
                    Verdict::Drop(why) => {
                        sinks.record(&format!("# the proxy dropped this line: {why}"));
                        continue;
                    }
                }
            }
        };
        let sent = match reply {
            Some(reply) => sinks.to_client(format!("{reply}\n").as_bytes()).is_ok(),
            None => outbox.push([&line[..], b"\n"].concat()),
        };
        if !sent {
            break; // the client or the upstream is gone (then its output loop ends the proxy)
        }
    }
}

/// What a filter does with one line.
enum Verdict {
    Forward,
    /// Send this instead (to the client): an error in place of a request, or a rewritten
    /// response.
    Answer(String),
    /// Forward nothing and answer nothing (a notification, or an answer nobody can match),
    /// for this reason.
    Drop(String),
}

/// Looks at a client line while filters are on: what must not reach the upstream is answered
/// (a request) or dropped (a notification).
fn intercept(line: &[u8], options: &ProxyOptions) -> Verdict {
    // A blank line is no message: the server skips it, so there is nothing to judge or answer.
    if line.trim_ascii().is_empty() {
        return Verdict::Forward;
    }
    let message = match judge(line) {
        Ok(message) => message,
        Err(refusal) => {
            log::warn!("a client message was refused: {}", refusal.why);
            return refuse(line, refusal.error);
        }
    };
    let method = |item: &Value| item.get("method").and_then(Value::as_str).map(str::to_owned);
    if let Value::Array(items) = &message {
        if items.iter().filter_map(method).any(|m| m.starts_with("tools/")) {
            return refuse_batch(line);
        }
        return Verdict::Forward;
    }
    // Any message naming `tools/call` is judged, valid envelope or not: a lenient upstream may
    // run what baremcp would call invalid.
    if method(&message).as_deref() != Some("tools/call") {
        return Verdict::Forward;
    }
    let error = match message.pointer("/params/name") {
        Some(Value::String(name)) if options.allowed(name) => return Verdict::Forward,
        Some(Value::String(name)) => ErrorObject::invalid_params(format!("unknown tool: {name}"))
            .with_data(json!({ "name": name })),
        _ => ErrorObject::invalid_params(
            "a tools/call without a tool name is not passed through a filtering proxy",
        ),
    };
    log::info!("a tools/call was refused by the filter: {}", error.message);
    refuse(line, error)
}

/// A client line that is not forwarded: a request gets `error` with its id, a notification
/// (JSON with no id) is dropped, and anything else gets `error` with a null id. A line that
/// is not UTF-8 is answered even without an id, as baremcp answers it: a parse error.
fn refuse(line: &[u8], error: ErrorObject) -> Verdict {
    match Outline::read(line) {
        Some(Outline { id: Some(id), .. }) => Verdict::Answer(error_response(Some(&id), error)),
        Some(Outline { object: true, names_id: false, .. })
            if error.code != ErrorObject::parse_error().code =>
        {
            Verdict::Drop(error.data.as_ref().map_or(error.message.clone(), Value::to_string))
        }
        _ => Verdict::Answer(error_response(None, error)),
    }
}

/// A batch holding `tools/` requests, refused whole: each request in it gets its own error
/// with its id, in one array as a batch's replies come (a client waits on each id it sent);
/// its notifications and responses get nothing, as in any batch, and an element that is no
/// object gets an error with a null id, as baremcp answers it.
fn refuse_batch(line: &[u8]) -> Verdict {
    const WHY: &str = "batches with tools/ requests are not passed through a filtering proxy";
    let error = || ErrorObject::invalid_request().with_data(json!(WHY));
    // The line was judged strict JSON already, so it splits; each id is read as written.
    let items = serde_json::from_slice::<Vec<&RawValue>>(line).unwrap_or_default();
    let replies: Vec<String> = items
        .iter()
        .filter_map(|item| match Outline::read(item.get().as_bytes())? {
            Outline { names_method: true, names_id: true, id, .. } => Some(id),
            Outline { object: false, .. } => Some(None),
            _ => None,
        })
        .map(|id| error_response(id.as_ref(), error()))
        .collect();
    log::info!("a batch with tools/ requests was refused by the filter");
    match replies.is_empty() {
        true => Verdict::Drop(WHY.into()),
        false => Verdict::Answer(format!("[{}]", replies.join(","))),
    }
}

/// Looks at a server line while filters are on: filtered tools are removed from any response
/// that lists tools, and a line the filter cannot judge is not forwarded (a response still
/// reaches its client, as an error with its id).
fn filter_server_line(line: &[u8], options: &ProxyOptions) -> Verdict {
    if line.trim_ascii().is_empty() {
        return Verdict::Forward;
    }
    let mut message = match judge(line) {
        Ok(message) => message,
        Err(refusal) => {
            log::error!("a server message was dropped: {}", refusal.why);
            return match Outline::read(line) {
                Some(Outline { names_method: false, id: Some(id), .. }) => {
                    let error = ErrorObject {
                        message: "server message refused by the filtering proxy".into(),
                        ..ErrorObject::internal()
                    }
                    .with_data(json!(refusal.why));
                    Verdict::Answer(error_response(Some(&id), error))
                }
                _ => Verdict::Drop(format!(
                    "server message refused by the filtering proxy: {}",
                    refusal.why
                )),
            };
        }
    };
    let mut removed = false;
    let responses: Vec<&mut Value> = match &mut message {
        Value::Array(items) => items.iter_mut().collect(),
        single => vec![single],
    };
    for response in responses {
        if let Some(Value::Array(tools)) = response.pointer_mut("/result/tools") {
            let before = tools.len();
            tools.retain(|tool| {
                tool.get("name").and_then(Value::as_str).is_some_and(|name| options.allowed(name))
            });
            removed |= tools.len() < before;
        }
    }
    if !removed {
        return Verdict::Forward;
    }
    // Written again with each id as the server wrote it (a client matches replies by that
    // text): the ids are read from the line itself, one per item of a batch.
    let text = String::from_utf8_lossy(line);
    match message {
        Value::Array(items) => match serde_json::from_str::<Vec<&RawValue>>(&text) {
            Ok(raw) => {
                let ids = raw.iter().map(|item| Id::in_head(item.get().as_bytes()));
                let items: Vec<String> =
                    items.iter().zip(ids).map(|(item, id)| with_id(item, id)).collect();
                Verdict::Answer(format!("[{}]", items.join(",")))
            }
            Err(_) => Verdict::Drop("a server batch the proxy cannot split".into()),
        },
        single => Verdict::Answer(with_id(&single, Id::in_head(line))),
    }
}

/// A message as JSON, its `id` member written as `id` (the raw text it arrived as).
fn with_id(message: &Value, id: Option<Id>) -> String {
    let (Value::Object(members), Some(id)) = (message, id) else { return message.to_string() };
    let members: Vec<String> = members
        .iter()
        .map(|(name, value)| match name.as_str() {
            "id" => format!(r#""id":{}"#, id.as_json()),
            _ => format!("{}:{value}", Value::from(name.as_str())),
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

/// Why a line cannot be judged, and the error a request gets for it.
struct Refusal {
    why: String,
    error: ErrorObject,
}

/// Reads a line the way every strict reader does (see [`read_strict`]), or refuses it.
fn judge(line: &[u8]) -> Result<Value, Refusal> {
    read_strict(line).map_err(|refused| {
        // Text that is not JSON is a parse error, as the upstream would call it; JSON that is
        // ambiguous (or nested too deeply to judge) is an invalid request.
        let error = match refused {
            StrictError::NotUtf8 => ErrorObject::parse_error(),
            _ if Outline::read(line).is_some() => ErrorObject::invalid_request(),
            _ => ErrorObject::parse_error(),
        };
        let why = refused.to_string();
        let error = error.with_data(json!(format!("refused by the filtering proxy: {why}")));
        Refusal { why, error }
    })
}
