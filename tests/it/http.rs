//! Streamable HTTP over raw loopback sockets: every status the endpoint gives, malformed
//! HTTP, both eras, event streams, authentication, and a server that keeps serving others
//! whatever one connection does. Each test runs its own server (the `everything` fixture
//! set) on a thread, on port 0, and stops it through the stop flag.

/// The `examples/everything` fixture set (as `everything.rs` builds it).
fn everything() -> baremcp::Server {
    crate::everything::server(&[])
}

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use baremcp::HttpOptions;
use serde_json::{Value, json};

struct Running {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn start(options: HttpOptions) -> Running {
    start_with(options, everything)
}

/// A server built by `build` on its serving thread.
fn start_with(options: HttpOptions, build: fn() -> baremcp::Server) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
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

fn default_server() -> Running {
    start(HttpOptions::default())
}

/// One response, read off a connection: status, headers (lowercase names), body (chunks
/// joined).
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {:?}", self.body))
    }

    /// The JSON-RPC messages of an event stream.
    fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }
}

fn connect(addr: SocketAddr) -> BufReader<TcpStream> {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(stream)
}

/// Reads one response; `None` when the connection closed first.
fn read_reply(conn: &mut BufReader<TcpStream>) -> Option<Reply> {
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
fn post(addr: SocketAddr, body: &str, extra: &[&str]) -> Reply {
    let mut conn = connect(addr);
    send_post(&mut conn, addr, body, extra);
    read_reply(&mut conn).expect("a response")
}

fn send_post(conn: &mut BufReader<TcpStream>, addr: SocketAddr, body: &str, extra: &[&str]) {
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
    conn.get_mut().write_all(head.as_bytes()).unwrap();
}

/// Sends raw bytes on a fresh connection and reads one response (or `None`: closed).
fn raw(addr: SocketAddr, bytes: &[u8]) -> Option<Reply> {
    let mut conn = connect(addr);
    conn.get_mut().write_all(bytes).unwrap();
    read_reply(&mut conn)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;

fn initialize(addr: SocketAddr, version: &str) -> String {
    let reply = post(addr, &INITIALIZE.replace("2025-11-25", version), &[]);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.header("mcp-session-id").expect("a session id").to_string()
}

fn modern(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string()
}

/// The server still answers a plain request: whatever the test did, others are served.
fn still_serving(addr: SocketAddr) {
    let reply = post(
        addr,
        &modern("tools/list", json!({})),
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"],
    );
    assert_eq!(reply.status, 200, "{reply:?}");
}

#[test]
fn legacy_sessions_live_and_die_by_their_id() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    assert!(session.len() >= 32 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let with = format!("Mcp-Session-Id: {session}");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, initialized, &[&with]).status, 202);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}"#;
    let reply = post(addr, call, &[&with, "MCP-Protocol-Version: 2025-03-26"]);
    assert_eq!((reply.status, reply.header("content-type")), (200, Some("application/json")));
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "This is a simple text response for testing."
    );
    // No session: 400; an unknown one: 404; an unsupported version header: 400.
    assert_eq!(post(addr, call, &[]).status, 400);
    let unknown = post(addr, call, &["Mcp-Session-Id: 0123456789abcdef"]);
    assert_eq!((unknown.status, unknown.json()["id"].clone()), (404, json!(2)));
    assert_eq!(post(addr, call, &[&with, "MCP-Protocol-Version: 1999-01-01"]).status, 400);
    // A GET without a session (legacy) is 400; DELETE ends the session; then it is 404.
    let get = |extra: &str| {
        raw(
            addr,
            format!(
                "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n{extra}\r\n"
            )
            .as_bytes(),
        )
        .unwrap()
    };
    assert_eq!(get("").status, 400);
    assert_eq!(get("MCP-Protocol-Version: 2026-07-28\r\n").status, 405);
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{with}\r\n\r\n");
    assert_eq!(raw(addr, delete.as_bytes()).unwrap().status, 204);
    assert_eq!(raw(addr, delete.as_bytes()).unwrap().status, 404);
    assert_eq!(post(addr, call, &[&with]).status, 404);
    assert_eq!(post(addr, initialized, &[&with]).status, 404);
}

#[test]
fn idle_sessions_expire_and_the_cap_evicts_the_least_recently_used() {
    let server =
        start(HttpOptions { session_idle_secs: 1, max_sessions: 2, ..HttpOptions::default() });
    let addr = server.addr;
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let first = initialize(addr, "2025-11-25");
    let second = initialize(addr, "2025-11-25");
    assert_eq!(post(addr, ping, &[&format!("Mcp-Session-Id: {first}")]).status, 200);
    let third = initialize(addr, "2025-11-25");
    // `second` was the least recently used.
    assert_eq!(post(addr, ping, &[&format!("Mcp-Session-Id: {second}")]).status, 404);
    assert_eq!(post(addr, ping, &[&format!("Mcp-Session-Id: {third}")]).status, 200);
    std::thread::sleep(Duration::from_millis(1300));
    assert_eq!(post(addr, ping, &[&format!("Mcp-Session-Id: {first}")]).status, 404);
}

#[test]
fn batches_only_in_2025_03_26_sessions() {
    let server = default_server();
    let addr = server.addr;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let old = initialize(addr, "2025-03-26");
    let reply = post(addr, batch, &[&format!("Mcp-Session-Id: {old}")]);
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json(),
        json!([{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}])
    );
    let notes = r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
    assert_eq!(post(addr, notes, &[&format!("Mcp-Session-Id: {old}")]).status, 202);
    let new = initialize(addr, "2025-11-25");
    let reply = post(addr, batch, &[&format!("Mcp-Session-Id: {new}")]);
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32600)));
}

#[test]
fn modern_requests_are_stateless_and_their_headers_must_match_the_body() {
    let server = default_server();
    let addr = server.addr;
    let v = "MCP-Protocol-Version: 2026-07-28";
    let list = modern("tools/list", json!({}));
    let reply = post(addr, &list, &[v, "Mcp-Method: tools/list", "Mcp-Session-Id: ignored"]);
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["resultType"], "complete");
    assert!(reply.header("mcp-session-id").is_none());
    let code = |reply: &Reply| {
        (reply.status, reply.json()["error"]["code"].as_i64().unwrap(), reply.json()["id"].clone())
    };
    assert_eq!(code(&post(addr, &list, &["Mcp-Method: tools/list"])), (400, -32020, json!(7)));
    assert_eq!(code(&post(addr, &list, &[v])), (400, -32020, json!(7)));
    assert_eq!(code(&post(addr, &list, &[v, "Mcp-Method: TOOLS/LIST"])), (400, -32020, json!(7)));
    let v999 = list.replace("\"2026-07-28\"", "\"v999.0.0\"");
    assert_eq!(
        code(&post(addr, &v999, &["MCP-Protocol-Version: v999.0.0", "Mcp-Method: tools/list"])),
        (400, -32022, json!(7))
    );
    assert_eq!(code(&post(addr, &v999, &[v, "Mcp-Method: tools/list"])), (400, -32020, json!(7)));
    let no_caps = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    assert_eq!(
        code(&post(addr, no_caps, &[v, "Mcp-Method: server/discover"])),
        (400, -32602, json!(7))
    );
    let no_meta = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}"#;
    assert_eq!(
        code(&post(addr, no_meta, &[v, "Mcp-Method: server/discover"])),
        (400, -32602, json!(7))
    );
    let call = modern("tools/call", json!({"name": "test_simple_text", "arguments": {}}));
    assert_eq!(code(&post(addr, &call, &[v, "Mcp-Method: tools/call"])), (400, -32020, json!(7)));
    assert_eq!(
        code(&post(addr, &call, &[v, "Mcp-Method: tools/call", "Mcp-Name: other"])),
        (400, -32020, json!(7))
    );
    let named = post(
        addr,
        &call,
        &[v, "Mcp-Method: tools/call", "Mcp-Name: =?base64?dGVzdF9zaW1wbGVfdGV4dA==?="],
    );
    assert_eq!(named.status, 200);
    for method in ["initialize", "ping", "unknown/method"] {
        let reply = post(addr, &modern(method, json!({})), &[v, &format!("Mcp-Method: {method}")]);
        assert_eq!(code(&reply), (404, -32601, json!(7)), "{method}");
    }
    let task = modern("tasks/get", json!({"taskId": "abc"}));
    assert_eq!(
        code(&post(addr, &task, &[v, "Mcp-Method: tasks/get", "Mcp-Name: other"])),
        (400, -32020, json!(7))
    );
    assert_eq!(code(&post(addr, &task, &[v, "Mcp-Method: tasks/get"])), (400, -32020, json!(7)));
    // Arguments mirrored into Mcp-Param-* headers (x-mcp-header) must match them.
    let custom = modern(
        "tools/call",
        json!({"name": "test_custom_header", "arguments": {"region": "Hello"}}),
    );
    let named = [v, "Mcp-Method: tools/call", "Mcp-Name: test_custom_header"];
    for (header, status) in [
        ("Mcp-Param-Region: =?base64?SGVsbG8=?=", 200),
        ("Mcp-Param-Region: Hello", 200),
        ("mcp-param-region: =?base64?SGVsbG8?=", 400),
        ("Mcp-Param-Region: =?base64?SGVs*G8=?=", 400),
        ("Mcp-Param-Region: Goodbye", 400),
        ("X-Nothing: 1", 400),
    ] {
        let reply = post(addr, &custom, &[named[0], named[1], named[2], header]);
        assert_eq!(reply.status, status, "{header}: {reply:?}");
        if status == 400 {
            assert_eq!(reply.json()["error"]["code"], -32020, "{header}");
        }
    }
    let missing =
        modern("tools/call", json!({"name": "test_sampling", "arguments": {"prompt": "hi"}}));
    let reply = post(addr, &missing, &[v, "Mcp-Method: tools/call", "Mcp-Name: test_sampling"]);
    assert_eq!(code(&reply), (400, -32021, json!(7)));
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{v}\r\n\r\n");
    assert_eq!(raw(addr, delete.as_bytes()).unwrap().status, 405);
}

#[test]
fn host_origin_path_method_and_media_type_are_checked_first() {
    let server = default_server();
    let addr = server.addr;
    let port = addr.port();
    let send = |head: String| raw(addr, head.as_bytes()).unwrap().status;
    let body = INITIALIZE;
    let request = |host: &str, extra: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    assert_eq!(send(request("evil.example.com", "Origin: http://evil.example.com\r\n")), 403);
    assert_eq!(send(request(&format!("evil.example.com:{port}"), "")), 403);
    assert_eq!(
        send(request(&format!("localhost:{port}"), "Origin: http://evil.example.com\r\n")),
        403
    );
    assert_eq!(send(request(&format!("localhost:{port}"), "Origin: null\r\n")), 403);
    assert_eq!(
        send(request(
            &format!("localhost:{port}"),
            &format!("Origin: http://localhost:{port}\r\n")
        )),
        200
    );
    assert_eq!(send(request(&format!("[::1]:{port}"), "")), 200);
    assert_eq!(send(request(&format!("127.0.0.1:{port}"), "")).to_string(), "200");
    let other_path = format!("POST /other HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(send(other_path), 404);
    let put = raw(
        addr,
        format!("PUT /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n").as_bytes(),
    )
    .unwrap();
    assert_eq!((put.status, put.header("allow")), (405, Some("GET, POST, DELETE")));
    let text = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    assert_eq!(send(text), 415);
    let html = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/html\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
    );
    assert_eq!(send(html), 406);
    let no_length =
        format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\r\n");
    assert_eq!(send(no_length), 411);
    let not_json = "{not json";
    let reply = post(addr, not_json, &[]);
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32700)));
}

#[test]
fn limits_give_their_status_and_the_server_keeps_serving() {
    let server =
        start(HttpOptions { max_body: 1000, request_timeout_secs: 1, ..HttpOptions::default() });
    let addr = server.addr;
    let big = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
    );
    // Refused on its Content-Length alone, before a byte of the body is sent.
    assert_eq!(raw(addr, big.as_bytes()).unwrap().status, 413);
    let huge_head =
        format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nX-Big: {}\r\n\r\n", "a".repeat(20_000));
    assert_eq!(raw(addr, huge_head.as_bytes()).unwrap().status, 431);
    let many = format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\n{}\r\n", "X-A: b\r\n".repeat(100));
    assert_eq!(raw(addr, many.as_bytes()).unwrap().status, 431);
    let smuggle = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    );
    assert_eq!(raw(addr, smuggle.as_bytes()).unwrap().status, 400);
    let gzip = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n"
    );
    assert_eq!(raw(addr, gzip.as_bytes()).unwrap().status, 501);
    for bad in [
        "GARBAGE\r\n\r\n",
        "GET /mcp\r\n\r\n",
        "GET mcp HTTP/1.1\r\n\r\n",
        "GET /mcp HTTP/1.1\r\n folded: x\r\n\r\n",
    ] {
        assert_eq!(raw(addr, bad.as_bytes()).unwrap().status, 400, "{bad:?}");
    }
    assert_eq!(raw(addr, b"GET /mcp HTTP/1.1\r\nBad Name: x\r\n\r\n").unwrap().status, 400);
    assert_eq!(raw(addr, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap().status, 505);
    assert_eq!(raw(addr, b"GET /mcp HTTP/1.1\r\n\r\n").unwrap().status, 400, "no Host");
    let chunked = |chunks: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{chunks}"
        )
    };
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let bad_size = chunked("zz\r\nabc\r\n0\r\n\r\n");
    assert_eq!(raw(addr, bad_size.as_bytes()).unwrap().status, 400);
    let no_crlf = chunked(&format!("{:x}\r\n{ping}XX0\r\n\r\n", ping.len()));
    assert_eq!(raw(addr, no_crlf.as_bytes()).unwrap().status, 400);
    let too_long = chunked(&format!("{:x}\r\n{}\r\n0\r\n\r\n", 2000, "a".repeat(2000)));
    assert_eq!(raw(addr, too_long.as_bytes()).unwrap().status, 413);
    // A good chunked body is read (a legacy ping without a session: 400 from the session rule).
    let good = chunked(&format!(
        "{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
        10,
        &ping[..10],
        ping.len() - 10,
        &ping[10..]
    ));
    assert_eq!(raw(addr, good.as_bytes()).unwrap().status, 400);
    // A slow sender is cut off at the deadline with 408.
    let started = Instant::now();
    let mut slow = connect(addr);
    slow.get_mut().write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes()).unwrap();
    assert_eq!(read_reply(&mut slow).unwrap().status, 408);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Gone mid-body: nothing to answer, nothing broken.
    let mut gone = connect(addr);
    gone.get_mut()
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"js").as_bytes())
        .unwrap();
    drop(gone);
    still_serving(addr);
}

#[test]
fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let server = default_server();
    let addr = server.addr;
    let mut conn = connect(addr);
    let v = "MCP-Protocol-Version: 2026-07-28";
    let first = modern("tools/list", json!({}));
    let second = modern("server/discover", json!({}));
    let mut bytes = Vec::new();
    for (body, method) in [(&first, "tools/list"), (&second, "server/discover")] {
        bytes.extend_from_slice(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{v}\r\nMcp-Method: {method}\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
    }
    conn.get_mut().write_all(&bytes).unwrap();
    let one = read_reply(&mut conn).unwrap();
    let two = read_reply(&mut conn).unwrap();
    assert!(one.json()["result"]["tools"].is_array());
    assert!(two.json()["result"]["supportedVersions"].is_array());
    // HTTP/1.0: answered, then closed.
    let old = format!(
        "POST /mcp HTTP/1.0\r\nContent-Type: application/json\r\n{v}\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{first}",
        first.len()
    );
    let mut conn = connect(addr);
    conn.get_mut().write_all(old.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    assert!(read_reply(&mut conn).is_none());
    // Expect: 100-continue gets its interim response first.
    let mut conn = connect(addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nExpect: 100-continue\r\nContent-Type: application/json\r\n{v}\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
        first.len()
    );
    conn.get_mut().write_all(head.as_bytes()).unwrap();
    let mut line = String::new();
    conn.read_line(&mut line).unwrap();
    assert_eq!(line, "HTTP/1.1 100 Continue\r\n");
    conn.read_line(&mut line).unwrap();
    conn.get_mut().write_all(first.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
}

#[test]
fn notifications_before_the_response_make_an_event_stream() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let with = format!("Mcp-Session-Id: {session}");
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"t"}}}"#;
    let mut conn = connect(addr);
    send_post(&mut conn, addr, call, &[&with]);
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.header("x-accel-buffering"), Some("no"));
    let events = reply.events();
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[3]["id"], 5);
    // The connection carries the next request after the stream ended.
    send_post(&mut conn, addr, r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#, &[&with]);
    assert_eq!(read_reply(&mut conn).unwrap().json()["id"], 6);
}

/// Reads one SSE event's JSON off a stream whose head was already read.
fn next_event(conn: &mut BufReader<TcpStream>) -> Value {
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
fn read_head(conn: &mut BufReader<TcpStream>) -> (u16, String) {
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
fn ask_sampling(addr: SocketAddr, session: &str) -> (BufReader<TcpStream>, Value) {
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

#[test]
fn a_legacy_server_request_is_answered_by_a_later_post() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let with = format!("Mcp-Session-Id: {session}");
    let (mut conn, question) = ask_sampling(addr, &session);
    // Other clients get their refusals and 202s while the handler waits.
    assert_eq!(
        post(addr, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &["Mcp-Session-Id: unknown"])
            .status,
        404
    );
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "fine"}, "model": "m"}});
    assert_eq!(post(addr, &answer.to_string(), &[&with]).status, 202);
    let result = next_event(&mut conn);
    assert_eq!(result["id"], 9);
    assert_eq!(result["result"]["content"][0]["text"], "LLM response: fine");
}

#[test]
fn listen_streams_stay_open_with_keep_alives_and_closing_them_is_harmless() {
    let server = start(HttpOptions { sse_keepalive_secs: 1, ..HttpOptions::default() });
    let addr = server.addr;
    let listen = modern(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["test://static-text"]}}),
    );
    let mut conn = connect(addr);
    send_post(
        &mut conn,
        addr,
        &listen,
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen"],
    );
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream") && head.contains("X-Accel-Buffering: no"));
    let ack = next_event(&mut conn);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7);
    let mut saw_comment = false;
    let started = Instant::now();
    while !saw_comment && started.elapsed() < Duration::from_secs(5) {
        let mut line = String::new();
        conn.read_line(&mut line).unwrap();
        saw_comment = line.contains(": keep-alive");
    }
    assert!(saw_comment, "no keep-alive comment");
    conn.get_mut().shutdown(Shutdown::Both).unwrap();
    drop(conn);
    still_serving(addr);
}

#[test]
fn a_legacy_get_stream_opens_at_once() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let mut conn = connect(addr);
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    conn.get_mut().write_all(get.as_bytes()).unwrap();
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream"));
    let wrong = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    assert_eq!(raw(addr, wrong.as_bytes()).unwrap().status, 406);
    drop(conn);
    still_serving(addr);
}

#[test]
fn the_connection_cap_answers_503_with_retry_after() {
    let server = start(HttpOptions { max_connections: 2, ..HttpOptions::default() });
    let addr = server.addr;
    let held: Vec<_> = (0..2).map(|_| connect(addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut third = connect(addr);
    let reply = read_reply(&mut third).unwrap();
    assert_eq!((reply.status, reply.header("retry-after")), (503, Some("1")));
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    still_serving(addr);
}

fn b64url(bytes: &[u8]) -> String {
    baremcp::encoding::base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

#[test]
fn bearer_tokens_and_jwts_guard_the_endpoint() {
    let dir = crate::scratch("http-auth");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "# comment\nfirst-token\n").unwrap();
    let secret = dir.join("secret");
    std::fs::write(&secret, "jwt-secret\n").unwrap();
    let server = start(HttpOptions {
        auth_token_file: Some(tokens.clone()),
        jwt_secret_file: Some(secret),
        jwt_audience: Some("https://mcp.example/mcp".into()),
        resource_metadata_url: Some(
            "https://mcp.example/.well-known/oauth-protected-resource/mcp".into(),
        ),
        authorization_servers: vec!["https://auth.example".into()],
        ..HttpOptions::default()
    });
    let addr = server.addr;
    let list = modern("tools/list", json!({}));
    let v = "MCP-Protocol-Version: 2026-07-28";
    let m = "Mcp-Method: tools/list";
    let none = post(addr, &list, &[v, m]);
    assert_eq!(none.status, 401);
    let challenge = none.header("www-authenticate").unwrap();
    assert!(
        challenge.starts_with("Bearer ") && !challenge.contains("invalid_token"),
        "{challenge}"
    );
    assert!(challenge.contains(
        r#"resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#
    ));
    let wrong = post(addr, &list, &[v, m, "Authorization: Bearer second-token"]);
    assert!(wrong.header("www-authenticate").unwrap().contains(r#"error="invalid_token""#));
    assert_eq!(post(addr, &list, &[v, m, "Authorization: Bearer first-token"]).status, 200);
    // The file is read again when it changes.
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(&tokens, "second-token\n").unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(post(addr, &list, &[v, m, "Authorization: Bearer second-token"]).status, 200);
    assert_eq!(post(addr, &list, &[v, m, "Authorization: Bearer first-token"]).status, 401);
    // HS256 JWTs: good, expired, wrong audience, alg none.
    let jwt = |claims: Value, alg: &str, key: &[u8]| {
        let signing = format!(
            "{}.{}",
            b64url(json!({"alg": alg}).to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let mac = baremcp::__private::hs256(key, signing.as_bytes());
        format!("Authorization: Bearer {signing}.{}", b64url(&mac))
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let aud = "https://mcp.example/mcp";
    let good = jwt(json!({"sub": "ann", "exp": now + 600, "aud": aud}), "HS256", b"jwt-secret");
    assert_eq!(post(addr, &list, &[v, m, &good]).status, 200);
    for bad in [
        jwt(json!({"exp": now - 600, "aud": aud}), "HS256", b"jwt-secret"),
        jwt(json!({"exp": now + 600, "aud": "https://other/mcp"}), "HS256", b"jwt-secret"),
        jwt(json!({"exp": now + 600, "aud": aud}), "none", b"jwt-secret"),
        jwt(json!({"exp": now + 600, "aud": aud}), "HS256", b"other-secret"),
    ] {
        assert_eq!(post(addr, &list, &[v, m, &bad]).status, 401, "{bad}");
    }
    // RFC 9728 metadata, served without a token.
    let metadata = raw(
        addr,
        format!("GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(metadata.status, 200);
    assert_eq!(metadata.json()["resource"], "https://mcp.example/mcp");
    assert_eq!(metadata.json()["authorization_servers"], json!(["https://auth.example"]));
}

#[test]
fn a_non_loopback_address_needs_authentication() {
    let server = everything();
    let options = HttpOptions { listen: vec!["0.0.0.0:0".into()], ..HttpOptions::default() };
    let error = server.serve_http(&options).unwrap_err();
    assert!(
        error.to_string().contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{error}"
    );
}

#[test]
fn input_required_state_signed_by_one_process_is_accepted_by_another_with_the_same_secret() {
    let a = start_with(HttpOptions::default(), || everything().state_secret("shared"));
    let b = start_with(HttpOptions::default(), || everything().state_secret("shared"));
    let c = start_with(HttpOptions::default(), || everything().state_secret("other"));
    let headers = [
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: test_elicitation",
    ];
    let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_elicitation", "arguments": {"message": "who?"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}});
    let first = post(a.addr, &call.to_string(), &headers).json();
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(first["result"]["inputRequests"]["elicitation-1"]["method"], "elicitation/create");
    call["params"]["requestState"] = first["result"]["requestState"].clone();
    call["params"]["inputResponses"] = json!({"elicitation-1": {"action": "accept", "content": {"username": "ann", "email": "a@example.com"}}});
    let retried = post(b.addr, &call.to_string(), &headers).json();
    assert_eq!(retried["result"]["resultType"], "complete", "{retried}");
    assert!(
        retried["result"]["content"][0]["text"].as_str().unwrap().contains("action=accept"),
        "{retried}"
    );
    let refused = post(c.addr, &call.to_string(), &headers).json();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

/// A free loopback port (bound, then let go).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `program --http 127.0.0.1:PORT args…` started, and its address once it accepts.
fn spawn_http(
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&std::ffi::OsStr],
) -> (std::process::Child, SocketAddr) {
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let child = std::process::Command::new(program)
        .arg("--http")
        .arg(addr.to_string())
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, addr)
}

/// Sends SIGTERM and returns the exit status, which must come within five seconds (the
/// child is killed if not).
fn terminate(mut child: std::process::Child) -> std::process::ExitStatus {
    std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let stopping = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if stopping.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("no exit within 5 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_binary_stops_gracefully_on_sigterm_and_refuses_unsafe_binds() {
    let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &[]);
    let list = modern("tools/list", json!({}));
    let reply = post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]);
    assert_eq!(reply.json()["result"]["tools"][0]["name"], "hello");
    // An idle keep-alive connection does not hold the stop up.
    let _idle = connect(addr);
    let status = terminate(child);
    assert!(status.success(), "{status}");

    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("refusing to listen on 0.0.0.0:0 without authentication"), "{stderr}");
}

/// Set by the `wait_for_cancel` tool once its handler sees the cancellation.
static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// A server whose one tool works until it is cancelled (for at most five seconds).
fn cancellable() -> baremcp::Server {
    one_tool(baremcp::Tool::new(
        "wait_for_cancel",
        "Works until cancelled",
        json!({"type": "object"}),
        |_, cx| {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(5) {
                if cx.is_cancelled() {
                    SAW_CANCEL.store(true, Ordering::Relaxed);
                    return Ok(baremcp::ToolOutput::text("cancelled"));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(baremcp::ToolOutput::text("finished"))
        },
    ))
}

/// A server with only `tool`.
fn one_tool(tool: baremcp::Tool) -> baremcp::Server {
    let mut server = baremcp::Server::new("one-tool", "1.0.0");
    server.add_tool(tool).unwrap();
    server
}

#[test]
fn closing_a_modern_request_s_stream_cancels_it() {
    let server = start_with(HttpOptions::default(), cancellable);
    let addr = server.addr;
    let call = modern("tools/call", json!({"name": "wait_for_cancel", "arguments": {}}));
    let headers =
        ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: wait_for_cancel"];
    let mut conn = connect(addr);
    send_post(&mut conn, addr, &call, &headers);
    std::thread::sleep(Duration::from_millis(300));
    let closed = Instant::now();
    drop(conn);
    while !SAW_CANCEL.load(Ordering::Relaxed) {
        assert!(
            closed.elapsed() < Duration::from_secs(3),
            "the handler never saw the cancellation"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The next request is served at once, not after the five seconds.
    let list = modern("tools/list", json!({}));
    let reply = post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]);
    assert_eq!(reply.status, 200);
    assert!(closed.elapsed() < Duration::from_secs(3));
}

#[test]
fn sighup_rereads_the_token_file_even_when_it_looks_unchanged() {
    let dir = crate::scratch("http-sighup");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "token-aaa\n").unwrap();
    let stamp = std::fs::metadata(&tokens).unwrap().modified().unwrap();
    let (mut child, addr) =
        spawn_http(env!("CARGO_BIN_EXE_baremcp"), &["--auth-token-file".as_ref(), tokens.as_ref()]);
    let list = modern("tools/list", json!({}));
    let call = |token: &str| {
        let auth = format!("Authorization: Bearer {token}");
        post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list", &auth])
            .status
    };
    assert_eq!(call("token-aaa"), 200);
    // Same size, same modification time: only SIGHUP tells the server to look again.
    std::fs::write(&tokens, "token-bbb\n").unwrap();
    std::fs::File::options().write(true).open(&tokens).unwrap().set_modified(stamp).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(call("token-bbb"), 401);
    std::process::Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(call("token-bbb"), 200);
    assert_eq!(call("token-aaa"), 401);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_its_timeout() {
    let server = start(HttpOptions { idle_timeout_secs: 1, ..HttpOptions::default() });
    let addr = server.addr;
    let mut conn = connect(addr);
    let list = modern("tools/list", json!({}));
    send_post(
        &mut conn,
        addr,
        &list,
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"],
    );
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!((reply.status, reply.header("keep-alive")), (200, Some("timeout=1")));
    // Still open within the timeout: a second request on it is served.
    std::thread::sleep(Duration::from_millis(300));
    send_post(
        &mut conn,
        addr,
        &list,
        &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"],
    );
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    let idle = Instant::now();
    assert!(read_reply(&mut conn).is_none(), "the server closed it, sending nothing");
    let waited = idle.elapsed();
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(5), "{waited:?}");
    still_serving(addr);
}

/// Set by the test that calls `sleep` once it has seen what it waits for.
static WAKE_SLEEPY: AtomicBool = AtomicBool::new(false);

/// A server whose one tool blocks the dispatching loop, looking at nothing, until the test
/// says (or 20 s pass): so the test does not race a fixed sleep on a loaded machine.
fn sleepy() -> baremcp::Server {
    one_tool(baremcp::Tool::new(
        "sleep",
        "Sleeps until woken",
        json!({"type": "object"}),
        |_, _| {
            let started = Instant::now();
            while !WAKE_SLEEPY.load(Ordering::Relaxed)
                && started.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(baremcp::ToolOutput::text("slept"))
        },
    ))
}

#[test]
fn notifications_waiting_for_a_busy_loop_are_bounded_in_bytes() {
    let server = start_with(HttpOptions::default(), sleepy);
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let with_session = format!("Mcp-Session-Id: {session}");
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{}}}"#;
    let mut busy = connect(addr);
    send_post(&mut busy, addr, call, &[&with_session]);
    std::thread::sleep(Duration::from_millis(200));
    // 1 MiB notifications while the loop sleeps: 202 until 64 MiB wait, then 503, never a
    // 202 for a message that will not be read.
    let pad = "x".repeat(1 << 20);
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"pad":"{pad}"}}}}"#
    );
    let mut conn = connect(addr);
    let mut statuses = Vec::new();
    for _ in 0..70 {
        send_post(&mut conn, addr, &note, &[&with_session]);
        let reply = read_reply(&mut conn).unwrap();
        statuses.push(reply.status);
        if reply.status != 202 {
            break;
        }
    }
    WAKE_SLEEPY.store(true, Ordering::Relaxed);
    let accepted = statuses.iter().filter(|&&s| s == 202).count();
    assert_eq!(statuses.last(), Some(&503), "{statuses:?}");
    assert!((60..=64).contains(&accepted), "{accepted} accepted");
    let done = read_reply(&mut busy).unwrap();
    assert!(done.body.contains("slept"), "{done:?}");
    // Drained: notifications are accepted again.
    let started = Instant::now();
    loop {
        send_post(&mut conn, addr, &note, &[&with_session]);
        if read_reply(&mut conn).unwrap().status == 202 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "still refused");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `baremcp --http unix:PATH args…` started (not waited for).
fn spawn_unix(path: &std::path::Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .arg("--http")
        .arg(format!("unix:{}", path.display()))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until a server accepts on the unix socket at `path`.
fn wait_for_unix(path: &std::path::Path) {
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(path).is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "no server on {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_unix_socket_serves_replaces_a_stale_file_and_is_removed_at_stop() {
    use std::os::unix::net::UnixStream;
    let dir = crate::scratch("http-unix");
    let path = dir.join("mcp.sock");
    let spawn = || spawn_unix(&path, &[]);
    let wait_for_socket = || wait_for_unix(&path);
    let list = modern("tools/list", json!({}));
    let call = || {
        let mut stream = UnixStream::connect(&path).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{list}",
            list.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply
    };
    // A socket file whose server was killed is stale: the next server replaces it.
    let mut killed = spawn();
    wait_for_socket();
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(path.exists(), "a killed server leaves its socket file");
    let child = spawn();
    wait_for_socket();
    let reply = call();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains(r#""name":"hello""#), "{reply}");
    // One in use is not taken over.
    let second = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .arg("--http")
        .arg(format!("unix:{}", path.display()))
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&second.stderr).contains("in use"), "{second:?}");
    assert!(call().starts_with("HTTP/1.1 200"));
    // SIGTERM: exit 0, and the file is gone.
    let status = terminate(child);
    assert!(status.success(), "{status}");
    assert!(!path.exists(), "the socket file is removed at stop");
}

/// A server on the files of `target/tmp/http-watch` (the test makes the folder first).
fn watching() -> baremcp::Server {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("http-watch")
        .canonicalize()
        .unwrap();
    let mut server = baremcp::Server::new("watching", "1.0.0");
    server.add_directory(baremcp::FileRoot::new(&dir, false, 1 << 20).unwrap()).unwrap();
    server
}

#[test]
fn each_listen_stream_hears_of_a_change_once() {
    let dir = crate::scratch("http-watch");
    let file = dir.join("a.txt");
    std::fs::write(&file, "one").unwrap();
    let server = start_with(HttpOptions::default(), watching);
    let addr = server.addr;
    let uri = format!("file://{}", file.display());
    let listen =
        modern("subscriptions/listen", json!({"notifications": {"resourceSubscriptions": [uri]}}));
    let streams: Vec<_> = (0..3)
        .map(|_| {
            let mut conn = connect(addr);
            send_post(
                &mut conn,
                addr,
                &listen,
                &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen"],
            );
            assert_eq!(read_head(&mut conn).0, 200);
            assert_eq!(next_event(&mut conn)["method"], "notifications/subscriptions/acknowledged");
            conn
        })
        .collect();
    std::thread::sleep(Duration::from_millis(600));
    std::fs::write(&file, "two, longer").unwrap();
    for mut conn in streams {
        let update = next_event(&mut conn);
        assert_eq!(
            (update["method"].as_str(), update["params"]["uri"].as_str()),
            (Some("notifications/resources/updated"), Some(uri.as_str()))
        );
        // Nothing more within a second: no second copy of the same change.
        conn.get_mut().set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut line = String::new();
        while conn.read_line(&mut line).is_ok_and(|n| n > 0) {
            assert!(!line.starts_with("data: "), "a second event: {line}");
            line.clear();
        }
    }
}

#[test]
fn deleting_a_session_frees_a_handler_waiting_on_its_client() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let with = format!("Mcp-Session-Id: {session}");
    let (mut conn, _) = ask_sampling(addr, &session);
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{with}\r\n\r\n");
    assert_eq!(raw(addr, delete.as_bytes()).unwrap().status, 204);
    // The handler hears its client is gone, and everyone else is served again at once.
    let started = Instant::now();
    still_serving(addr);
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let result = next_event(&mut conn);
    assert_eq!(result["id"], 9);
}

#[test]
fn sigterm_ends_a_wait_on_the_client_and_the_process_exits_at_once() {
    let (child, addr) = spawn_http(crate::library::example("everything"), &[]);
    let session = initialize(addr, "2025-11-25");
    let _asking = ask_sampling(addr, &session);
    // The question is never answered: the signal, not the 300 s wait, ends it.
    let status = terminate(child);
    assert!(status.success(), "{status}");
}

#[test]
fn a_stopping_server_leaves_the_socket_file_of_its_successor_alone() {
    use std::os::unix::net::UnixStream;
    let dir = crate::scratch("http-unix-successor");
    let path = dir.join("mcp.sock");
    let spawn = || spawn_unix(&path, &["--request-timeout-secs", "2"]);
    let serves = || wait_for_unix(&path);
    let old = spawn();
    serves();
    // A half-sent request keeps the old server draining (until its 2 s request timeout).
    let mut slow = UnixStream::connect(&path).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n").unwrap();
    std::process::Command::new("kill").args(["-TERM", &old.id().to_string()]).status().unwrap();
    // Its listener closes at once: a successor takes the path while it drains.
    std::thread::sleep(Duration::from_millis(300));
    let new = spawn();
    serves();
    assert!(terminate(old).success());
    assert!(path.exists(), "the old server removed its successor's socket file");
    serves();
    assert!(terminate(new).success());
    assert!(!path.exists());
}
