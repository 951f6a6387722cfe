//! `baremcp proxy`: sits between a client (this process's stdin and stdout) and an upstream
//! stdio server it spawns, forwarding every line both ways unchanged (ending in `\n`), one
//! thread per direction. It can record the session as a transcript and filter the upstream's
//! tools. Lines are bounded: one longer than the limit is dropped as it streams in, and the
//! client gets an error in its place.
//!
//! Filtering rewrites only what it must: a `tools/list` response (filtered tools removed,
//! `nextCursor` kept, so pagination still works) and a `tools/call` of a filtered tool, which
//! the proxy answers itself with -32602 `unknown tool` without forwarding. A batch that holds
//! a `tools/list` or `tools/call` is refused while filters are on, so nothing slips past them.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::transcript;
use super::wait::exit_by;
use baremcp::ErrorObject;
use baremcp::transport::{Line, LineReader};

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
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(|t| t == tool)) && !self.deny.iter().any(|t| t == tool)
    }
}

/// How long the upstream may take to exit after the client closed its input.
const GRACE: Duration = Duration::from_secs(2);

/// The shared ends: the client's stdout and the recording, each written a whole line at a time.
struct Sinks {
    client: Mutex<Box<dyn Write + Send>>,
    record: Mutex<Option<BufWriter<File>>>,
}

impl Sinks {
    fn to_client(&self, line: &[u8]) -> io::Result<()> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        client.write_all(line)?;
        client.flush()
    }

    /// Appends one transcript line, flushed at once so a crash loses nothing.
    fn record(&self, line: &str) {
        let mut record = self.record.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = record.as_mut()
            && writeln!(file, "{line}").and_then(|()| file.flush()).is_err()
        {
            log::error!("cannot write the recording; recording stops");
            *record = None;
        }
    }
}

/// Runs the proxy until the upstream exits; returns its exit code.
pub fn run(options: ProxyOptions) -> io::Result<i32> {
    let (program, args) = options.command.split_first().ok_or_else(|| io::Error::other("no server command"))?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| io::Error::other(format!("cannot start {}: {e}", program.to_string_lossy())))?;
    let record = match &options.record {
        Some(path) => {
            let mut file = BufWriter::new(File::create(path).map_err(|e| super::named(path, e))?);
            let command: Vec<String> = options.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            writeln!(file, "# Recorded by baremcp proxy in front of: {}", command.join(" "))?;
            writeln!(file, "# Replay: baremcp replay {} -- {}", path.display(), command.join(" "))?;
            file.flush()?;
            Some(file)
        }
        None => None,
    };
    let sinks = Arc::new(Sinks { client: Mutex::new(Box::new(io::stdout())), record: Mutex::new(record) });
    let pending_lists: Arc<Mutex<HashSet<String>>> = Arc::default();
    let options = Arc::new(options);

    let upstream_in = child.stdin.take().ok_or_else(|| io::Error::other("no upstream stdin"))?;
    let upstream_out = child.stdout.take().ok_or_else(|| io::Error::other("no upstream stdout"))?;
    let child = Arc::new(Mutex::new(child));
    let client_thread = {
        let (sinks, pending, options, child) = (sinks.clone(), pending_lists.clone(), options.clone(), child.clone());
        std::thread::spawn(move || {
            client_to_upstream(upstream_in, &sinks, &pending, &options);
            // The client hung up and the upstream's input is closed: give it a moment to exit,
            // then end it.
            let exited = exit_by(Instant::now() + GRACE, || child.lock().unwrap_or_else(|e| e.into_inner()).try_wait());
            if !matches!(exited, Ok(None)) {
                return;
            }
            log::warn!("the server did not exit within {} s after its input closed: ending it", GRACE.as_secs());
            let _ = child.lock().unwrap_or_else(|e| e.into_inner()).kill();
        })
    };

    let mut reader = BufReader::new(upstream_out);
    let mut lines = LineReader::new(options.max_message_bytes);
    let mut line = Vec::new();
    loop {
        let forwarded = match lines.read(&mut reader, &mut line)? {
            Line::Eof => break,
            Line::TooLong => {
                // The client hears of it rather than waiting forever: an error whose id is
                // null, as JSON-RPC has for a message whose id is unknown.
                let why = format!("the server wrote a line longer than {} bytes", options.max_message_bytes);
                log::error!("{why}: dropped");
                sinks.record(&format!("# {why}; the proxy dropped it"));
                let error = ErrorObject::new(INTERNAL_ERROR, "server message too large to forward");
                format!("{}\n", response(None, error)).into_bytes()
            }
            Line::Complete => {
                let text = String::from_utf8_lossy(line.strip_suffix(b"\r").unwrap_or(&line));
                log_line("server -> client", &text);
                let filtered = options.filtering().then(|| filter_list(&text, &pending_lists, &options)).flatten();
                sinks.record(&format!("<-- {}", filtered.as_deref().unwrap_or(&text)));
                match filtered {
                    Some(rewritten) => format!("{rewritten}\n").into_bytes(),
                    None => [&line[..], b"\n"].concat(),
                }
            }
        };
        if sinks.to_client(&forwarded).is_err() {
            break; // the client is gone
        }
    }
    // The upstream closed its output: it is exiting. Leave with its status (a server that
    // closed its output but keeps running is ended after the same grace period).
    let lock = || child.lock().unwrap_or_else(|e| e.into_inner());
    let status = match exit_by(Instant::now() + GRACE, || lock().try_wait())? {
        Some(status) => status,
        None => {
            let mut child = lock();
            let _ = child.kill();
            child.wait()?
        }
    };
    drop(client_thread);
    Ok(status.code().unwrap_or(1))
}

fn log_line(direction: &str, line: &str) {
    if log::log_enabled!(log::Level::Debug) {
        let (method, id) = describe(line);
        log::debug!("{direction}: method={method} id={id}");
    }
}

/// The method and id of a line, for the debug log.
fn describe(line: &str) -> (String, String) {
    let (method, id) = match serde_json::from_str::<Value>(line) {
        Ok(Value::Array(items)) => return (format!("(batch of {})", items.len()), "-".into()),
        Ok(message) => (message.get("method").and_then(Value::as_str).map(String::from), message.get("id").cloned()),
        Err(_) => (None, None),
    };
    match (method, id) {
        (Some(method), Some(id)) => (method, id.to_string()),
        (Some(method), None) => (method, "-".into()),
        (None, Some(id)) => ("(response)".into(), id.to_string()),
        (None, None) => ("(other)".into(), "-".into()),
    }
}

/// JSON-RPC's internal error, for what the proxy cannot forward.
const INTERNAL_ERROR: i64 = -32603;

/// The method and id of a JSON-RPC request (a notification has no id; a response no method).
fn request(message: &Value) -> Option<(&str, &Value)> {
    let id = message.get("id").filter(|id| id.is_string() || id.is_number())?;
    let method = message.get("method")?.as_str()?;
    (message["jsonrpc"] == "2.0" && message.get("result").is_none() && message.get("error").is_none())
        .then_some((method, id))
}

/// Forwards client lines to the upstream, replying to filtered calls itself. When the client
/// closes its input, the upstream's input is closed too.
fn client_to_upstream(
    upstream: std::process::ChildStdin,
    sinks: &Sinks,
    pending: &Mutex<HashSet<String>>,
    options: &ProxyOptions,
) {
    let mut upstream = BufWriter::new(upstream);
    let mut stdin = io::stdin().lock();
    let mut lines = LineReader::new(options.max_message_bytes);
    let mut line = Vec::new();
    loop {
        // What the proxy answers itself instead of forwarding, if anything.
        let reply = match lines.read(&mut stdin, &mut line) {
            Ok(Line::Eof) | Err(_) => break,
            Ok(Line::TooLong) => {
                // Refused as baremcp itself refuses it; the upstream never sees it.
                let why = format!("a client line longer than {} bytes", options.max_message_bytes);
                log::warn!("{why}: refused");
                sinks.record(&format!("# {why} was refused by the proxy"));
                Some(response(None, ErrorObject::too_large()))
            }
            Ok(Line::Complete) => {
                sinks.record(&transcript::client_line(&line));
                let text = std::str::from_utf8(&line).ok();
                text.inspect(|text| log_line("client -> server", text));
                let reply = text.filter(|_| options.filtering()).and_then(|text| intercept(text, pending, options));
                reply.inspect(|reply| sinks.record(&format!("<-- {reply}")))
            }
        };
        let sent = match reply {
            Some(reply) => sinks.to_client(format!("{reply}\n").as_bytes()),
            None => upstream.write_all(&line).and_then(|()| upstream.write_all(b"\n")).and_then(|()| upstream.flush()),
        };
        if sent.is_err() {
            break; // the client or the upstream is gone (then its output loop ends the proxy)
        }
    }
    // Closing the upstream's input is how a stdio server is asked to exit.
    drop(upstream);
}

/// Looks at a client line while filters are on: notes `tools/list` ids, and returns the reply
/// for what must not reach the upstream.
fn intercept(text: &str, pending: &Mutex<HashSet<String>>, options: &ProxyOptions) -> Option<String> {
    let message: Value = serde_json::from_str(text).ok()?;
    if let Value::Array(items) = &message {
        let touches_tools = items.iter().filter_map(request).any(|(method, _)| method.starts_with("tools/"));
        return touches_tools.then(|| {
            let error = ErrorObject::invalid_request()
                .with_data(json!("batches with tools/ requests are not passed through a filtering proxy"));
            response(None, error)
        });
    }
    match request(&message)? {
        ("tools/list", id) => {
            pending.lock().unwrap_or_else(|e| e.into_inner()).insert(canonical(id));
            None
        }
        ("tools/call", id) => {
            let name = message["params"]["name"].as_str()?;
            if options.allowed(name) {
                return None;
            }
            let error = ErrorObject::invalid_params(format!("unknown tool: {name}")).with_data(json!({ "name": name }));
            Some(response(Some(id), error))
        }
        _ => None,
    }
}

/// An error response, its members in the conventional order (as the server writes them).
fn response(id: Option<&Value>, error: ErrorObject) -> String {
    let id = id.map_or("null".into(), canonical);
    let mut text =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{},"message":{}"#, error.code, json!(error.message));
    if let Some(data) = &error.data {
        text.push_str(&format!(r#","data":{data}"#));
    }
    text + "}}"
}

/// An id as a set key: `"a"` and `"\u0061"` are the same request.
fn canonical(id: &Value) -> String {
    id.to_string()
}

/// If `line` answers a pending `tools/list`, the response with filtered tools removed.
fn filter_list(line: &str, pending: &Mutex<HashSet<String>>, options: &ProxyOptions) -> Option<String> {
    let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
    // Most lines reply to nothing pending: they are not parsed at all.
    if pending.is_empty() {
        return None;
    }
    let mut message: Value = serde_json::from_str(line).ok()?;
    if message.get("method").is_some() || !pending.remove(&canonical(message.get("id")?)) {
        return None;
    }
    drop(pending);
    let tools = message.pointer_mut("/result/tools")?.as_array_mut()?;
    tools.retain(|tool| tool["name"].as_str().is_some_and(|name| options.allowed(name)));
    Some(message.to_string())
}
