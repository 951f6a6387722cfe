//! What the HTTP tests share: a server on a thread of its own (on port 0, stopped through its
//! stop flag when dropped) or the binary as a process, and a raw HTTP/1.1 client over loopback
//! sockets that reads responses, event streams and heads as they come.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use baremcp::HttpOptions;
use serde_json::{Value, json};

/// The `examples/everything` fixture set (as `everything.rs` builds it).
pub fn everything() -> baremcp::Server {
    crate::everything::server(&[])
}

/// A server serving on a thread of its own, stopped (and waited for) when dropped.
pub struct Running {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    /// Asks the server to stop, as a signal would, without waiting for it.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The `everything` fixture set served with `options`.
pub fn start(options: HttpOptions) -> Running {
    start_with(options, everything)
}

/// A server built by `build` on its serving thread.
pub fn start_with(options: HttpOptions, build: fn() -> baremcp::Server) -> Running {
    start_on(TcpListener::bind("127.0.0.1:0").unwrap(), options, build)
}

/// A server built by `build` serving on `listener`.
pub fn start_on(
    listener: TcpListener,
    options: HttpOptions,
    build: fn() -> baremcp::Server,
) -> Running {
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        // Built on the serving thread: the server never crosses threads.
        let server = build();
        server.serve_http_on(vec![listener], &options, flag).unwrap();
    });
    Running { addr, stop, thread: Some(thread) }
}

/// The `everything` fixture set served with the default options.
pub fn default_server() -> Running {
    start(HttpOptions::default())
}

/// One response, read off a connection: status, headers (lowercase names), body (chunks
/// joined).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// A header's value, by its lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {:?}", self.body))
    }

    /// The JSON-RPC messages of an event stream.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }
}

/// A connection to `addr` whose reads give up after ten seconds.
pub fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(stream)
}

/// Reads one response; `None` when the connection closed first.
pub fn read_reply(conn: &mut BufReader<TcpStream>) -> Option<Reply> {
    let mut line = String::new();
    if conn.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let status: u16 = line.split(' ').nth(1)?.parse().ok()?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        conn.read_line(&mut line).ok()?;
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':')?;
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut reply = Reply { status, headers, body: String::new() };
    if status == 100 {
        return read_reply(conn);
    }
    if reply.header("transfer-encoding") == Some("chunked") {
        loop {
            line.clear();
            conn.read_line(&mut line).ok()?;
            let size = usize::from_str_radix(line.trim(), 16).ok()?;
            let mut chunk = vec![0; size + 2];
            conn.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            reply.body.push_str(std::str::from_utf8(&chunk[..size]).ok()?);
        }
    } else if let Some(length) = reply.header("content-length") {
        let mut body = vec![0; length.parse().ok()?];
        conn.read_exact(&mut body).ok()?;
        reply.body = String::from_utf8(body).ok()?;
    } else if status != 204 && status != 202 {
        conn.read_to_string(&mut reply.body).ok()?;
    }
    Some(reply)
}

/// A POST of `body` with the usual headers plus `extra` (`Name: value` lines).
pub fn post(addr: SocketAddr, body: &str, extra: &[&str]) -> Reply {
    let mut conn = connect(addr);
    send_post(&mut conn, addr, body, extra);
    read_reply(&mut conn).expect("a response")
}

/// Writes a POST (as [`post`] does) on `conn`, without reading the response.
pub fn send_post(conn: &mut BufReader<TcpStream>, addr: SocketAddr, body: &str, extra: &[&str]) {
    conn.get_mut().write_all(post_text(addr, body, extra).as_bytes()).unwrap();
}

/// A POST of `body` with the `extra` header lines, as it goes on the wire.
pub fn post_text(addr: SocketAddr, body: &str, extra: &[&str]) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.push_str(body);
    head
}

/// Sends raw bytes on a fresh connection and reads one response (or `None`: closed).
pub fn raw(addr: SocketAddr, bytes: &[u8]) -> Option<Reply> {
    let mut conn = connect(addr);
    conn.get_mut().write_all(bytes).unwrap();
    read_reply(&mut conn)
}

/// A 2025-11-25 `initialize` with sampling and elicitation.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;

/// Opens a legacy session speaking `version`; returns its id.
pub fn initialize(addr: SocketAddr, version: &str) -> String {
    let reply = post(addr, &INITIALIZE.replace("2025-11-25", version), &[]);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.header("mcp-session-id").expect("a session id").to_string()
}

/// A 2026-07-28 request (id 7) for `method` with `params` and their `_meta`.
pub fn modern(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string()
}

/// The server still answers a plain request: whatever the test did, others are served.
pub fn still_serving(addr: SocketAddr) {
    let reply = post(
        addr,
        &modern("tools/list", json!({})),
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"],
    );
    assert_eq!(reply.status, 200, "{reply:?}");
}

/// Reads one SSE event's JSON off a stream whose head was already read.
pub fn next_event(conn: &mut BufReader<TcpStream>) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(conn.read_line(&mut line).unwrap() > 0, "stream ended");
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            return serde_json::from_str(data).unwrap();
        }
    }
}

/// Reads a response head (status and headers) only.
pub fn read_head(conn: &mut BufReader<TcpStream>) -> (u16, String) {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        conn.read_line(&mut line).unwrap();
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    (head.split(' ').nth(1).unwrap().parse().unwrap(), head)
}

/// Calls `test_sampling` (id 9) in legacy session `session` of an `everything` server: the
/// open event stream, and the server's question on it.
pub fn ask_sampling(addr: SocketAddr, session: &str) -> (BufReader<TcpStream>, Value) {
    let call = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}"#;
    let mut conn = connect(addr);
    send_post(&mut conn, addr, call, &[&format!("Mcp-Session-Id: {session}")]);
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream"));
    let question = next_event(&mut conn);
    assert_eq!(question["method"], "sampling/createMessage");
    (conn, question)
}

/// A server with only `tool`.
pub fn one_tool(tool: baremcp::Tool) -> baremcp::Server {
    let mut server = baremcp::Server::new("one-tool", "1.0.0");
    server.add_tool(tool).unwrap();
    server
}

/// A server process, killed when dropped (a failed assertion included).
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `command` (a server told `--http 127.0.0.1:0`) started, with the address it says it serves
/// at, and its stderr as a thread reads it to the end (so a chatty server never blocks on a
/// full pipe). The kernel picks the port as the server binds it: a port picked here and let go
/// could be taken by another test's connection in between.
pub fn spawn_reporting(
    mut command: std::process::Command,
) -> (std::process::Child, SocketAddr, Arc<std::sync::Mutex<String>>) {
    // The binary says where it serves at its default level; `examples/everything` at info.
    if !command.get_envs().any(|(name, _)| name == "RUST_LOG") {
        command.env("RUST_LOG", "warn,baremcp::http=info");
    }
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let collected = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.split("serving MCP at http://").nth(1) {
                let _ = tx.send(at.split('/').next().unwrap_or_default().to_string());
            }
            let mut log = collected.lock().unwrap_or_else(|e| e.into_inner());
            log.push_str(&line);
            log.push('\n');
        }
    });
    let Ok(at) = rx.recv_timeout(Duration::from_secs(20)) else {
        let _ = child.kill();
        let log = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
        panic!("the server did not say where it serves:\n{log}");
    };
    (child, at.parse().unwrap(), log)
}

/// `program --http 127.0.0.1:0 args…` started, and its address once it serves.
pub fn spawn_http(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&std::ffi::OsStr],
) -> (std::process::Child, SocketAddr) {
    let mut command = std::process::Command::new(program);
    command.args(["--http", "127.0.0.1:0"]).args(args);
    let (child, addr, _) = spawn_reporting(command);
    (child, addr)
}
