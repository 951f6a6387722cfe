//! The HTTP load run and the slow-tool check, against a `baremcp --http` process.
//!
//! Load: every client keeps one connection for its calls and one open stream. Even clients
//! are legacy sessions (initialize, `resources/subscribe`, the session's GET stream); odd ones
//! send 2026-07-28 requests (a `subscriptions/listen` stream). Each makes `calls` `tools/call
//! hello` requests with a name of its own, and checks every reply's id and greeting; every
//! tenth call it also sends what connection threads answer alone (a notification → 202, a
//! header that disagrees with the body → 400, an unknown session → 404), checked likewise.
//! Half way through, the watched file changes: every stream must carry that news.
//!
//! Slow tool: while one connection waits on a tool that sleeps, others still get their 202
//! and 4xx answers at once.

// Each program that includes this file uses part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::client::{Conn, Stream};

const LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

/// Starts `binary` with `args` plus `--http 127.0.0.1:0` and returns it with the address it
/// says it serves (its first info line). Its stderr is drained by a thread, warnings and
/// errors passed on to ours.
pub fn spawn(binary: &Path, args: &[&str]) -> Result<(Child, SocketAddr), String> {
    let mut command = Command::new(binary);
    command.args(args);
    serve(command)
}

/// [`spawn`] of a command already given its arguments (and, if need be, its environment).
pub fn serve(mut command: Command) -> Result<(Child, SocketAddr), String> {
    let binary = PathBuf::from(command.get_program());
    let mut child = command
        .args(["--http", "127.0.0.1:0"])
        // The address line, and no per-request lines: they would cost the server time.
        .env("RUST_LOG", "warn,baremcp::http=info,baremcp::http::connection=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", binary.display()))?;
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            return Err(format!(
                "{} exited before it served: {}",
                binary.display(),
                child.wait().unwrap()
            ));
        }
        if let Some(rest) = line.split("serving MCP at http://").nth(1) {
            let addr = rest.trim_end().trim_end_matches("/mcp");
            break addr.parse().map_err(|e| format!("bad address {addr:?}: {e}"))?;
        }
    };
    std::thread::spawn(move || {
        for line in stderr
            .lines()
            .map_while(Result::ok)
            // And the profiling runtime's, of an instrumented build (`pgo.rs`).
            .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("LLVM Profile"))
        {
            eprintln!("server: {line}");
        }
    });
    Ok((child, addr))
}

/// A scratch folder for a server's `--root`, removed when dropped. Its path is canonical: the
/// server compares a watched file's path with its canonical root, and a temporary folder may
/// be reached through a link (macOS's `/var`).
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let fail = |e: std::io::Error| format!("the scratch folder {}: {e}", dir.display());
        std::fs::create_dir_all(&dir).map_err(fail)?;
        Ok(Scratch(std::fs::canonicalize(&dir).map_err(fail)?))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The load run against `command` (a `baremcp` not yet given `--root` or `--http`) serving
/// `dir`, with a file in it to watch and as many connections as the clients need; the
/// server is stopped after, and must exit 0.
pub fn load_run(
    mut command: Command,
    dir: &Path,
    clients: usize,
    calls: usize,
) -> Result<Report, String> {
    let watched = dir.join("watched.txt");
    std::fs::write(&watched, "first\n").map_err(|e| format!("{}: {e}", watched.display()))?;
    let connections = (2 * clients + 16).to_string();
    let root = dir.to_str().ok_or("the scratch path is not UTF-8")?;
    command.args(["--root", root, "--max-connections", &connections]);
    let (server, addr) = serve(command)?;
    let uri = format!("file://{}", watched.display());
    let plan = Plan { clients, calls, uri, watched, pid: Some(server.id()) };
    let report = run(addr, &plan);
    let stopped = stop(server);
    let report = report?;
    stopped.map(|()| report)
}

/// Peak resident memory of process `pid` so far, in KiB (`VmHWM`).
pub fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The nanoseconds each thread of process `pid` has run (`/proc/PID/task/TID/schedstat`),
/// by thread id: finer than `/proc/PID/stat`'s clock ticks, which short slices need. `None`
/// where that cannot be read (off Linux, or a kernel without schedstats): the bench then runs
/// without CPU figures rather than stopping.
pub fn cpu_ns(pid: u32) -> Option<HashMap<u64, u64>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let threads: HashMap<u64, u64> = tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            Some((tid, stat.split_whitespace().next()?.parse().ok()?))
        })
        .collect();
    // A live process has a thread: none read is no reading.
    (!threads.is_empty()).then_some(threads)
}

/// Stops a server with SIGTERM and waits for it: it must exit 0 within ten seconds.
pub fn stop(mut child: Child) -> Result<(), String> {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return if status.success() {
                Ok(())
            } else {
                Err(format!("the server exited with {status}"))
            };
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            return Err("the server did not stop within 10 s of SIGTERM".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub struct Plan {
    pub clients: usize,
    pub calls: usize,
    /// A file under the server's `--root`: changed half way through the run.
    pub watched: PathBuf,
    /// Its URI.
    pub uri: String,
    /// The server's process id, for its peak memory.
    pub pid: Option<u32>,
}

#[derive(Debug)]
pub struct Report {
    /// `tools/call` requests answered and checked.
    pub calls: usize,
    /// 202 and 4xx answers checked.
    pub others: usize,
    pub elapsed: Duration,
    /// Latency of every call, sorted.
    pub latencies: Vec<Duration>,
    /// Streams that carried the change of the watched file (of `clients`).
    pub streams_told: usize,
    /// Server peak memory (KiB) with every stream open before the calls, and at the end.
    pub peak_before: Option<u64>,
    pub peak_after: Option<u64>,
}

impl Report {
    pub fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }

    /// The `q` quantile of the call latencies (0.5: median).
    pub fn quantile(&self, q: f64) -> Duration {
        let last = self.latencies.len().saturating_sub(1);
        self.latencies.get((last as f64 * q).round() as usize).copied().unwrap_or_default()
    }
}

fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}})
}

/// `tools/call hello` with `name`, in either era.
pub fn hello(id: u64, name: &str, modern: bool) -> String {
    let mut params = json!({"name": "hello", "arguments": {"name": name}});
    if modern {
        params["_meta"] = modern_meta();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The headers a 2026-07-28 request must carry.
pub fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers
}

/// Whether `reply` answers request `id` with `Hello, {name}!`.
pub fn greets(reply: &Value, id: u64, name: &str) -> bool {
    reply["id"] == id && reply["result"]["content"][0]["text"] == format!("Hello, {name}!")
}

/// Runs the load; `Err` names the first reply that was missing or wrong.
pub fn run(addr: SocketAddr, plan: &Plan) -> Result<Report, String> {
    let done = Arc::new(AtomicUsize::new(0));
    let told: Arc<Vec<AtomicUsize>> =
        Arc::new((0..plan.clients).map(|_| AtomicUsize::new(0)).collect());
    let closing = Arc::new(AtomicBool::new(false));
    let problems = Arc::new(Mutex::new(Vec::<String>::new()));

    // Streams first, so the peak before the calls counts every connection.
    let mut streams = Vec::new();
    let mut conns = Vec::new();
    for client in 0..plan.clients {
        let (conn, stream, session) = open(addr, client, &plan.uri)
            .map_err(|e| format!("client {client}: opening its stream: {e}"))?;
        let socket = stream.conn().socket().map_err(|e| e.to_string())?;
        let (told, closing, problems, uri) =
            (told.clone(), closing.clone(), problems.clone(), plan.uri.clone());
        let reader = std::thread::spawn(move || {
            read_stream(stream, client, &uri, &told[client], &closing, &problems)
        });
        streams.push((socket, reader));
        conns.push((conn, session));
    }
    let peak_before = plan.pid.and_then(peak_kib);

    let started = Instant::now();
    let workers: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(client, (conn, session))| {
            let (done, calls) = (done.clone(), plan.calls);
            std::thread::spawn(move || calls_of(conn, client, session, calls, &done))
        })
        .collect();
    let total = plan.clients * plan.calls;
    let mut changed = false;
    while workers.iter().any(|w| !w.is_finished()) {
        if !changed && done.load(Ordering::Relaxed) >= total / 2 {
            std::fs::write(&plan.watched, format!("changed at {}\n", done.load(Ordering::Relaxed)))
                .map_err(|e| e.to_string())?;
            changed = true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = started.elapsed();
    let mut latencies = Vec::with_capacity(total);
    let mut others = 0;
    for (client, worker) in workers.into_iter().enumerate() {
        let (mut mine, extra) =
            worker.join().map_err(|_| format!("client {client} panicked"))??;
        latencies.append(&mut mine);
        others += extra;
    }
    latencies.sort();
    if !changed {
        std::fs::write(&plan.watched, "changed at the end\n").map_err(|e| e.to_string())?;
    }
    // The server looks at watched files a few times a second.
    let waited = Instant::now();
    while told.iter().any(|t| t.load(Ordering::Relaxed) == 0)
        && waited.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let peak_after = plan.pid.and_then(peak_kib);
    closing.store(true, Ordering::Relaxed);
    for (socket, reader) in streams {
        let _ = socket.shutdown(std::net::Shutdown::Both);
        let _ = reader.join();
    }
    if let Some(problem) = problems.lock().unwrap().first() {
        return Err(problem.clone());
    }
    let streams_told = told.iter().filter(|t| t.load(Ordering::Relaxed) > 0).count();
    Ok(Report {
        calls: latencies.len(),
        others,
        elapsed,
        latencies,
        streams_told,
        peak_before,
        peak_after,
    })
}

/// Opens client `client`'s calls connection and its stream; legacy clients also get their
/// session id.
fn open(
    addr: SocketAddr,
    client: usize,
    uri: &str,
) -> Result<(Conn, Stream, Option<String>), String> {
    let err = |e: std::io::Error| e.to_string();
    let mut conn = Conn::open(addr, "/mcp").map_err(err)?;
    if client % 2 == 1 {
        let id = listen_id(client);
        let listen = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
            "notifications": {"resourceSubscriptions": [uri]}, "_meta": modern_meta()}});
        let stream = Conn::open(addr, "/mcp")
            .and_then(|c| {
                c.open_stream(
                    "POST",
                    &listen.to_string(),
                    &modern_headers("subscriptions/listen", None),
                )
            })
            .map_err(err)?;
        return Ok((conn, stream, None));
    }
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "http_load", "version": "1"}}});
    let reply = conn.post(&init.to_string(), &[]).map_err(err)?;
    let session = reply
        .header("mcp-session-id")
        .ok_or(format!("initialize: no session id: {reply:?}"))?
        .to_string();
    let with = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", LEGACY)];
    let initialized = conn
        .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &with)
        .map_err(err)?;
    if initialized.status != 202 {
        return Err(format!("notifications/initialized: {initialized:?}"));
    }
    let subscribe =
        json!({"jsonrpc": "2.0", "id": 0, "method": "resources/subscribe", "params": {"uri": uri}});
    let reply = conn.post(&subscribe.to_string(), &with).map_err(err)?;
    if reply.message()["result"] != json!({}) {
        return Err(format!("resources/subscribe: {:?}", reply.message()));
    }
    let stream =
        Conn::open(addr, "/mcp").and_then(|c| c.open_stream("GET", "", &with)).map_err(err)?;
    Ok((conn, stream, Some(session)))
}

/// The JSON-RPC id of client `client`'s listen request (its subscription id).
fn listen_id(client: usize) -> u64 {
    1_000_000 + client as u64
}

/// Reads a client's stream until it is closed: it must say the watched file changed, and say
/// nothing else (the listen stream first acknowledges, every message tagged with its id).
fn read_stream(
    mut stream: Stream,
    client: usize,
    uri: &str,
    told: &AtomicUsize,
    closing: &AtomicBool,
    problems: &Mutex<Vec<String>>,
) {
    let modern = client % 2 == 1;
    let mut first = true;
    loop {
        let message = match stream.next() {
            Ok(Some(message)) => message,
            Ok(None) | Err(_) if closing.load(Ordering::Relaxed) => return,
            Ok(None) => {
                return problems
                    .lock()
                    .unwrap()
                    .push(format!("client {client}: its stream ended early"));
            }
            Err(e) => {
                return problems
                    .lock()
                    .unwrap()
                    .push(format!("client {client}: its stream broke: {e}"));
            }
        };
        let tag = &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
        let ok = match (modern, first, message["method"].as_str()) {
            (true, true, Some("notifications/subscriptions/acknowledged")) => {
                *tag == listen_id(client)
            }
            (true, false, Some("notifications/resources/updated")) => {
                *tag == listen_id(client) && message["params"]["uri"] == uri
            }
            (false, _, Some("notifications/resources/updated")) => message["params"]["uri"] == uri,
            _ => false,
        };
        if !ok {
            return problems
                .lock()
                .unwrap()
                .push(format!("client {client}: unexpected on its stream: {message}"));
        }
        if message["method"] == "notifications/resources/updated" {
            told.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
    }
}

/// One client's calls on its keep-alive connection; returns their latencies and the count of
/// other answers checked.
fn calls_of(
    mut conn: Conn,
    client: usize,
    session: Option<String>,
    calls: usize,
    done: &AtomicUsize,
) -> Result<(Vec<Duration>, usize), String> {
    let modern = session.is_none();
    let session = session.unwrap_or_default();
    let legacy_headers = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", LEGACY)];
    let call_headers =
        if modern { modern_headers("tools/call", Some("hello")) } else { legacy_headers.to_vec() };
    let mut latencies = Vec::with_capacity(calls);
    let mut others = 0;
    for k in 1..=calls as u64 {
        let name = format!("c{client}-{k}");
        let started = Instant::now();
        let reply = conn
            .post(&hello(k, &name, modern), &call_headers)
            .map_err(|e| format!("{name}: {e}"))?;
        latencies.push(started.elapsed());
        if reply.status != 200 || !greets(&reply.message(), k, &name) {
            return Err(format!(
                "{name}: wrong reply {} {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            ));
        }
        done.fetch_add(1, Ordering::Relaxed);
        if k % 10 != 0 {
            continue;
        }
        // What a connection thread answers without the dispatching loop, in the same mix.
        let (status, code, reply) = if modern {
            let headers = modern_headers("tools/call", Some("goodbye"));
            (400, -32020, conn.post(&hello(k, &name, true), &headers))
        } else if k % 20 == 0 {
            let headers =
                [("Mcp-Session-Id", "0123456789abcdef"), ("MCP-Protocol-Version", LEGACY)];
            (404, -32001, conn.post(&hello(k, &name, false), &headers))
        } else {
            let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": k}});
            (202, 0, conn.post(&cancelled.to_string(), &legacy_headers))
        };
        let reply = reply.map_err(|e| format!("{name} (expecting {status}): {e}"))?;
        let message = reply.json();
        let right = reply.status == status
            && (status == 202 || (message["error"]["code"] == code && message["id"] == k));
        if !right {
            return Err(format!(
                "{name}: expected {status}, got {} {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            ));
        }
        others += 1;
    }
    Ok((latencies, others))
}

/// A manifest serving one tool, `slow`, that sleeps `secs` seconds.
pub fn slow_manifest(secs: u64) -> String {
    json!({
        "server": {"name": "slow", "version": "1.0.0"},
        "tools": [{"name": "slow", "description": "Sleeps", "run": {"argv": ["sleep", secs.to_string()], "timeoutMs": 60_000}}]
    })
    .to_string()
}

#[derive(Debug)]
pub struct Slow {
    /// How long the slow call took.
    pub slow: Duration,
    /// Each answer given meanwhile: what it was, and how long it took.
    pub answers: Vec<(&'static str, Duration)>,
}

/// Against a server of [`slow_manifest`]: one connection calls `slow`; meanwhile, others get
/// a 202 for a notification, and 400, 404, 405 and 415 for what is wrong, each at once.
pub fn slow_tool(addr: SocketAddr) -> Result<Slow, String> {
    let err = |e: std::io::Error| e.to_string();
    // The session must exist before: `initialize` itself waits for the loop.
    let mut conn = Conn::open(addr, "/mcp").map_err(err)?;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "slow", "version": "1"}}});
    let reply = conn.post(&init.to_string(), &[]).map_err(err)?;
    let session = reply.header("mcp-session-id").ok_or("no session id")?.to_string();

    let started = Instant::now();
    let mut slow_conn = Conn::open(addr, "/mcp").map_err(err)?;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}, "_meta": modern_meta()}});
    slow_conn
        .send_post(&call.to_string(), &modern_headers("tools/call", Some("slow")))
        .map_err(err)?;
    let slow = std::thread::spawn(move || {
        let reply = slow_conn.reply();
        (started.elapsed(), reply)
    });
    // Long enough for the call to reach the loop and start its command.
    std::thread::sleep(Duration::from_millis(300));

    let with = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", LEGACY)];
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let fresh = || Conn::open(addr, "/mcp").map_err(err);
    let mut answers = Vec::new();
    let mut check = |what: &'static str,
                     status: u16,
                     reply: std::io::Result<super::client::Reply>,
                     took: Duration| {
        let reply = reply.map_err(|e| format!("{what}: {e}"))?;
        if reply.status != status {
            return Err(format!("{what}: expected {status}, got {reply:?}"));
        }
        answers.push((what, took));
        Ok(())
    };
    let t = Instant::now();
    let r = conn.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &with);
    check("202 for a notification in a session", 202, r, t.elapsed())?;
    let t = Instant::now();
    let r = fresh()?.post(ping, &[]);
    check("400 for a request without a session", 400, r, t.elapsed())?;
    let t = Instant::now();
    let r = fresh()?.post(ping, &[("Mcp-Session-Id", "0123456789abcdef")]);
    check("404 for an unknown session", 404, r, t.elapsed())?;
    let t = Instant::now();
    let r = fresh()?.post(&hello(3, "x", true), &modern_headers("tools/call", Some("not-hello")));
    check("400 for a header that disagrees with the body", 400, r, t.elapsed())?;
    let t = Instant::now();
    let r = fresh().and_then(|mut c| {
        c.send("GET", b"", &[("Accept", "text/event-stream"), ("MCP-Protocol-Version", MODERN)])
            .map_err(err)?;
        Ok(c.reply())
    })?;
    check("405 for a 2026-07-28 GET", 405, r, t.elapsed())?;
    let t = Instant::now();
    let mut c = fresh()?;
    let r =
        c.send("POST", ping.as_bytes(), &[("Content-Type", "text/plain")]).and_then(|()| c.reply());
    check("415 for a body that is not JSON", 415, r, t.elapsed())?;
    let all_answered = started.elapsed();

    let (slow_took, reply) = slow.join().map_err(|_| "the slow call's thread panicked")?;
    let reply = reply.map_err(|e| format!("slow call: {e}"))?;
    let message = reply.message();
    if reply.status != 200 || message["id"] != 1 || message["result"]["isError"] == true {
        return Err(format!("slow call: {reply:?}"));
    }
    if all_answered >= slow_took {
        return Err(format!(
            "the answers took {all_answered:?}, not less than the slow call ({slow_took:?})"
        ));
    }
    Ok(Slow { slow: slow_took, answers })
}
