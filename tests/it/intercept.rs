//! The interceptor hooks, `Server::on_request` and `Server::on_reply`: what they see of each
//! request and reply, refusing a request, panics in them, over stdio and over HTTP (both go
//! through the one place where a request is dispatched).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use baremcp::{Era, ErrorCode, ErrorObject, HttpOptions, Server, Tool, ToolOutput};
use serde_json::{Value, json};

/// What the hooks saw, one line each.
type Seen = Arc<Mutex<Vec<String>>>;

/// A server with one tool, `secret`, which `on_request` refuses; both hooks write to `seen`.
fn hooked(seen: &Seen) -> Server {
    let (before, after) = (seen.clone(), seen.clone());
    let mut server = Server::new("hooked", "1")
        .on_request(move |request| {
            let era = match request.era {
                Era::Legacy => "legacy".to_string(),
                Era::Modern(version) => version.to_string(),
            };
            let params = request.params.unwrap_or("-");
            before
                .lock()
                .unwrap()
                .push(format!("{} {} {era} {params}", request.method, request.id));
            match request.params {
                Some(params) if params.contains(r#""name":"secret""#) => {
                    Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, "secret is not for you"))
                }
                _ => Ok(()),
            }
        })
        .on_reply(move |request, reply, took| {
            assert!(took < Duration::from_secs(60));
            let reply = match reply {
                Ok(result) => format!("ok {result}"),
                Err(error) => format!("error {} {}", error.code, error.message),
            };
            after.lock().unwrap().push(format!("-> {} {reply}", request.id));
        });
    let open = json!({"type": "object"});
    server.add_tool(Tool::new("echo", "e", open.clone(), |_, _| Ok("echoed".into()))).unwrap();
    server.add_tool(Tool::new("secret", "s", open, |_, _| Ok(ToolOutput::text("leaked")))).unwrap();
    server
}

fn take(seen: &Seen) -> Vec<String> {
    std::mem::take(&mut *seen.lock().unwrap())
}

#[test]
fn hooks_see_each_request_and_reply_and_may_refuse_on_stdio() {
    let seen = Seen::default();
    let server = hooked(&seen);
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"secret"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ]
    .join("\n");
    let mut output = Vec::new();
    server.serve(&mut input.as_bytes(), &mut output).unwrap();
    let output = String::from_utf8(output).unwrap();
    let lines: Vec<Value> = output.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[1]["result"]["content"][0]["text"], "echoed");
    assert_eq!(
        lines[2],
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "secret is not for you"}})
    );
    // params that are not an object are answered before any hook.
    assert_eq!(lines[4]["error"]["code"], -32602);
    let seen = take(&seen);
    let modern_params = r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#;
    assert_eq!(
        seen[..seen.len() - 1],
        [
            r#"initialize 1 legacy {"protocolVersion":"2025-11-25"}"#.to_string(),
            format!("-> 1 ok {}", lines[0]["result"]),
            r#"tools/call "a" legacy {"name":"echo"}"#.into(),
            r#"-> "a" ok {"content":[{"type":"text","text":"echoed"}]}"#.into(),
            r#"tools/call 3 legacy {"name":"secret"}"#.into(),
            "-> 3 error -32602 secret is not for you".into(),
            "ping 4 legacy -".into(),
            "-> 4 ok {}".into(),
            format!("tools/call 6 2026-07-28 {modern_params}"),
        ]
    );
    assert!(seen.last().unwrap().starts_with(r#"-> 6 ok {"_meta":"#), "{seen:?}");
}

#[test]
fn a_panicking_hook_is_an_internal_error_and_the_server_serves_on() {
    let server = Server::new("p", "1")
        .on_request(|request| match request.method {
            "ping" => panic!("the hook fails"),
            _ => Ok(()),
        })
        .on_reply(|request, _, _| assert_ne!(request.method, "initialize", "the hook fails too"));
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n\
                 {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
    let mut output = Vec::new();
    server.serve(&mut input.as_bytes(), &mut output).unwrap();
    let lines: Vec<Value> = String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The reply whose on_reply panicked still goes out.
    assert_eq!(lines[0]["result"]["serverInfo"]["name"], "p");
    assert_eq!(lines[1]["error"]["code"], -32603);
}

/// One POST of a 2026-07-28 `tools/call`, on its own connection: the status line and body.
fn post_call(addr: std::net::SocketAddr, id: u64, tool: &str) -> (String, Value) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.lines().next().unwrap().to_string();
    (status, serde_json::from_str(body).unwrap_or_else(|_| panic!("{response}")))
}

/// A hooked server over HTTP on a port of its own: its address, its stop flag, its thread.
fn serve_hooked(
    seen: &Seen,
) -> (std::net::SocketAddr, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, log) = (stop.clone(), seen.clone());
    let serving = std::thread::spawn(move || {
        // Built on the serving thread: the server and its hooks never cross threads.
        let server = hooked(&log);
        server.serve_http_on(vec![listener], &HttpOptions::default(), flag).unwrap();
    });
    (addr, stop, serving)
}

#[test]
fn hooks_see_http_requests_too() {
    let seen = Seen::default();
    let (addr, stop, serving) = serve_hooked(&seen);
    let (status, echoed) = post_call(addr, 1, "echo");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(echoed["result"]["content"][0]["text"], "echoed");
    let (_, refused) = post_call(addr, 2, "secret");
    assert_eq!(refused["error"], json!({"code": -32602, "message": "secret is not for you"}));
    stop.store(true, Ordering::Relaxed);
    serving.join().unwrap();
    let seen = take(&seen);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen[0].starts_with(r#"tools/call 1 2026-07-28 {"_meta":{"#), "{seen:?}");
    assert!(seen[0].ends_with(r#","name":"echo"}"#), "{seen:?}");
    assert!(seen[1].starts_with(r#"-> 1 ok {"_meta":"#), "{seen:?}");
    assert!(seen[2].starts_with("tools/call 2 2026-07-28"), "{seen:?}");
    assert_eq!(seen[3], "-> 2 error -32602 secret is not for you");
}

/// A 2026-07-28 `subscriptions/listen` with id `id`.
fn listen(id: Value) -> String {
    let mut body: Value = serde_json::from_str(&crate::http_harness::modern(
        "subscriptions/listen",
        json!({"notifications": {}}),
    ))
    .unwrap();
    body["id"] = id;
    body.to_string()
}

/// `on_reply` sees a `subscriptions/listen` stream once, when it ends: no text when its client
/// ended it (cancelled, or the input closed), its params not kept while it was open.
#[test]
fn on_reply_sees_a_listen_stream_end_on_stdio() {
    let seen = Seen::default();
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1"}}"#;
    let input = [listen(json!("s1")), listen(json!(2)), cancel.into(), cancel.into()].join("\n");
    let mut output = Vec::new();
    hooked(&seen).serve(&mut input.as_bytes(), &mut output).unwrap();
    let seen = take(&seen);
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen[0].starts_with(r#"subscriptions/listen "s1" 2026-07-28 {"#), "{seen:?}");
    assert!(seen[1].starts_with("subscriptions/listen 2 2026-07-28 {"), "{seen:?}");
    assert_eq!(seen[2..], [r#"-> "s1" ok "#, "-> 2 ok "], "cancelled, then at the end of input");
}

/// Input that fails rather than ends is the client gone too: its stream's end is shown.
#[test]
fn on_reply_sees_a_listen_stream_end_when_the_input_fails() {
    struct Fails(std::io::Cursor<Vec<u8>>);
    impl std::io::Read for Fails {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(std::io::ErrorKind::ConnectionReset.into()),
                n => Ok(n),
            }
        }
    }
    let seen = Seen::default();
    let input = Fails(std::io::Cursor::new(format!("{}\n", listen(json!(7))).into_bytes()));
    let mut output = Vec::new();
    let served = hooked(&seen).serve(&mut std::io::BufReader::new(input), &mut output);
    assert_eq!(served.map_err(|e| e.kind()), Err(std::io::ErrorKind::ConnectionReset));
    let seen = take(&seen);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[1], "-> 7 ok ", "{seen:?}");
}

/// Over HTTP too: a stream its client closes (no text) and one the server ends at its stop
/// (the completion result it sends).
#[test]
fn on_reply_sees_a_listen_stream_end_over_http() {
    use crate::http_harness::{connect, next_event, read_head, send_post};
    let seen = Seen::default();
    let (addr, stop, serving) = serve_hooked(&seen);
    let open = |id: u32| {
        let mut conn = connect(addr);
        let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen"];
        send_post(&mut conn, addr, &listen(json!(id)), &headers);
        assert_eq!(read_head(&mut conn).0, 200);
        let ack = next_event(&mut conn);
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        conn
    };
    let (mut kept, left) = (open(8), open(9));
    drop(left);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !seen.lock().unwrap().iter().any(|s| s.starts_with("-> 9")) {
        assert!(std::time::Instant::now() < deadline, "{seen:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let end = next_event(&mut kept);
    assert_eq!(end["result"]["resultType"], "complete");
    serving.join().unwrap();
    let seen = take(&seen);
    let replies: Vec<&String> = seen.iter().filter(|s| s.starts_with("->")).collect();
    assert_eq!(replies.len(), 2, "once each: {seen:?}");
    assert_eq!(replies[0], "-> 9 ok ");
    let shown = replies[1].strip_prefix("-> 8 ok ").unwrap();
    assert_eq!(serde_json::from_str::<Value>(shown).unwrap(), end["result"], "what was sent");
}
