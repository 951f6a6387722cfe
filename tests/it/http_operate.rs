//! What operators ask of an HTTP server: `/healthz` and `/readyz` for anyone (even while a
//! handler holds the loop), `/metrics` behind the endpoint's checks and counting what
//! happened, the HTTP `traceparent` header as the fallback of `_meta`'s, spans sent to a
//! collector, session ids prefixed for a balancer, and the options refused before serving.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use baremcp::{HttpOptions, Tool, ToolOutput};
use serde_json::{Value, json};

use crate::http_harness::{Killed, Reply, connect, initialize, modern, one_tool, post, raw};
use crate::http_harness::{default_server, start, start_with};
use crate::http_harness::{post_text, read_head, read_reply, spawn_http, spawn_reporting};

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const OTHER_TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// A GET of `path` with `Host: host` and `extra` header lines.
fn get(addr: SocketAddr, method: &str, path: &str, host: &str, extra: &[&str]) -> Reply {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for line in extra {
        request.push_str(line);
        request.push_str("\r\n");
    }
    request.push_str("Connection: close\r\n\r\n");
    raw(addr, request.as_bytes()).expect("a response")
}

/// The value of the sample line that starts with `series` in a `/metrics` text.
fn sample(text: &str, series: &str) -> Option<String> {
    let prefix = format!("{series} ");
    text.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::to_string)
}

#[test]
fn probes_answer_anyone_and_metrics_is_guarded_and_counts_tool_calls() {
    let dir = crate::scratch("http-operate-metrics");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "scraper s3cret-token\n").unwrap();
    let (child, addr) =
        spawn_http(env!("CARGO_BIN_EXE_baremcp"), &["--auth-token-file".as_ref(), tokens.as_ref()]);
    let _child = Killed(child);
    let local = addr.to_string();
    let bearer = "Authorization: Bearer s3cret-token";

    // The probes: any Host, no token, nothing but the status said.
    let health = get(addr, "GET", "/healthz", "lb.internal", &[]);
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    assert_eq!(health.header("content-type"), Some("text/plain; charset=utf-8"));
    let ready = get(addr, "GET", "/readyz", "10.0.0.5:8081", &[]);
    assert_eq!((ready.status, ready.body.as_str()), (200, "ready\n"));
    // HEAD: the head a GET gets, no body (the next bytes are the next response's).
    let mut conn = connect(addr);
    let request = "HEAD /healthz HTTP/1.1\r\nHost: lb.internal\r\n\r\nGET /healthz HTTP/1.1\r\n\
                   Host: lb.internal\r\nConnection: close\r\n\r\n";
    conn.get_mut().write_all(request.as_bytes()).unwrap();
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Length: 3\r\n"), "{head}");
    assert_eq!(read_reply(&mut conn).map(|r| r.body).as_deref(), Some("ok\n"));
    let posted = get(addr, "POST", "/readyz", "lb.internal", &["Content-Length: 0"]);
    assert_eq!((posted.status, posted.header("allow")), (405, Some("GET, HEAD")));

    // `/metrics`: the endpoint's Host check and token.
    assert_eq!(get(addr, "GET", "/metrics", "lb.internal", &[bearer]).status, 403);
    assert_eq!(get(addr, "GET", "/metrics", &local, &[]).status, 401);

    let session = {
        let reply = post(addr, crate::http_harness::INITIALIZE, &[bearer]);
        reply.header("mcp-session-id").expect("a session").to_string()
    };
    let in_session = format!("Mcp-Session-Id: {session}");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(addr, initialized, &[bearer, &in_session]).status, 202);
    for i in 0..3 {
        let call = json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
            "params": {"name": "hello", "arguments": {"name": "ops"}}});
        let reply = post(addr, &call.to_string(), &[bearer, &in_session]);
        assert_eq!(reply.json()["result"]["content"][0]["text"], "Hello, ops!", "{reply:?}");
    }
    let unknown = r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"nope"}}"#;
    post(addr, unknown, &[bearer, &in_session]);
    // Bodies that are no JSON-RPC message: refused for what they are, not for their headers.
    assert_eq!(post(addr, "{not json", &[bearer]).status, 400);
    let old = r#"{"jsonrpc":"1.0","id":21,"method":"ping"}"#;
    assert_eq!(post(addr, old, &[bearer, &in_session]).status, 400);

    let scraped = get(addr, "GET", "/metrics", &local, &[bearer]);
    assert_eq!(scraped.status, 200, "{scraped:?}");
    assert_eq!(scraped.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    let text = &scraped.body;
    let operations = "mcp_server_operation_duration_seconds_count";
    let count = |labels: &str| sample(text, &format!("{operations}{{{labels}}}"));
    let hello = r#"mcp_method_name="tools/call",gen_ai_tool_name="hello""#;
    assert_eq!(count(hello).as_deref(), Some("3"), "{text}");
    assert_eq!(count(r#"mcp_method_name="initialize""#).as_deref(), Some("1"), "{text}");
    // An unknown tool names no label: its name is the client's text.
    let unknown = r#"mcp_method_name="tools/call",error_type="-32602""#;
    assert_eq!(count(unknown).as_deref(), Some("1"), "{text}");
    let initialized = r#"mcp_method_name="notifications/initialized""#;
    assert_eq!(count(initialized).as_deref(), Some("1"), "{text}");
    assert_eq!(sample(text, "baremcp_http_sessions").as_deref(), Some("1"));
    let connections = sample(text, "baremcp_http_connections").unwrap().parse::<i64>().unwrap();
    assert!(connections >= 1, "this one, and those not yet seen closing: {connections}");
    let refusals =
        |reason: &str| sample(text, &format!("baremcp_http_refusals_total{{reason=\"{reason}\"}}"));
    assert_eq!(refusals("host").as_deref(), Some("1"));
    assert_eq!(refusals("unauthorized").as_deref(), Some("1"));
    assert_eq!(refusals("method_not_allowed").as_deref(), Some("1"));
    assert_eq!(refusals("not_found").as_deref(), Some("0"));
    assert_eq!(refusals("invalid_message").as_deref(), Some("2"), "{text}");
    assert_eq!(refusals("header_mismatch").as_deref(), Some("0"), "{text}");
}

/// Set to let [`hold`]'s handler return.
static RELEASE: AtomicBool = AtomicBool::new(false);

/// A server whose tool `hold` keeps the dispatching loop until [`RELEASE`] (30 s at most).
fn hold() -> baremcp::Server {
    one_tool(Tool::new("hold", "Holds the loop", json!({"type": "object"}), |_, _| {
        let started = Instant::now();
        while !RELEASE.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(ToolOutput::text("released"))
    }))
}

#[test]
fn healthz_answers_while_a_handler_holds_the_loop_and_readyz_says_it_stalled() {
    let server = start_with(HttpOptions { ready_stall_secs: 1, ..HttpOptions::default() }, hold);
    let addr = server.addr;
    let probe = |path| get(addr, "GET", path, "lb.internal", &[]);
    assert_eq!(probe("/readyz").status, 200);
    let call = modern("tools/call", json!({"name": "hold"}));
    let held = std::thread::spawn(move || {
        post(
            addr,
            &call,
            &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: hold"],
        )
    });
    let waiting = Instant::now();
    let stalled = loop {
        let ready = probe("/readyz");
        if ready.status == 503 {
            break ready;
        }
        assert!(waiting.elapsed() < Duration::from_secs(10), "/readyz never said the loop stalled");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(stalled.body, "stalled\n");
    // Alive all the same: the connection threads answer without the loop.
    assert_eq!(probe("/healthz").status, 200);
    RELEASE.store(true, Ordering::Relaxed);
    let reply = held.join().unwrap();
    assert_eq!(reply.json()["result"]["content"][0]["text"], "released");
    // The reply can reach the client a moment before the loop marks itself idle.
    let released = Instant::now();
    while probe("/readyz").status != 200 {
        assert!(released.elapsed() < Duration::from_secs(5), "an idle loop is ready");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_probes_answer_when_every_connection_is_taken() {
    let server = start(HttpOptions { max_connections: 2, ..HttpOptions::default() });
    let addr = server.addr;
    // Two idle clients hold both connections (read as keep-alive connections for 15 s).
    let held: Vec<_> = (0..2).map(|_| connect(addr)).collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    while get(addr, "GET", "/mcp", "localhost", &[]).status != 503 {
        assert!(Instant::now() < deadline, "the two connections were never counted");
        std::thread::sleep(Duration::from_millis(20));
    }
    let health = get(addr, "GET", "/healthz", "lb.internal", &[]);
    assert_eq!((health.status, health.body.as_str()), (200, "ok\n"));
    assert_eq!(get(addr, "GET", "/readyz", "lb.internal", &[]).status, 200);
    let refused = get(addr, "GET", "/metrics", "localhost", &[]);
    assert_eq!(refused.status, 503, "only the probes are answered past the cap");
    assert_eq!(refused.header("retry-after"), Some("1"));
    // A HEAD refused past the cap gets the head alone.
    let mut head = connect(addr);
    head.get_mut()
        .write_all(format!("HEAD /mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    assert_eq!(read_head(&mut head).0, 503);
    let mut rest = Vec::new();
    head.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "a HEAD answer carried {:?}", String::from_utf8_lossy(&rest));
    // A client that says nothing past the cap is refused within about a second.
    let mut silent = connect(addr);
    let started = Instant::now();
    assert_eq!(read_reply(&mut silent).expect("a refusal").status, 503);
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    drop(held);
}

/// A server whose tool `trace` says the trace id its handler sees.
fn tracer() -> baremcp::Server {
    one_tool(Tool::new("trace", "Names its trace", json!({"type": "object"}), |_, cx| {
        let seen = cx.trace().map_or("none".to_string(), |t| t.trace_id_hex());
        Ok(ToolOutput::text(seen))
    }))
}

#[test]
fn the_traceparent_header_is_the_fallback_of_meta_s() {
    let server = start_with(HttpOptions::default(), tracer);
    let seen = |meta: Option<&str>, header: Option<&str>| -> String {
        let mut call: Value =
            serde_json::from_str(&modern("tools/call", json!({"name": "trace"}))).unwrap();
        if let Some(traceparent) = meta {
            call["params"]["_meta"]["traceparent"] = json!(traceparent);
        }
        let header = header.map(|h| format!("traceparent: {h}"));
        let mut extra = vec!["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call"];
        extra.push("Mcp-Name: trace");
        extra.extend(header.as_deref());
        let reply = post(server.addr, &call.to_string(), &extra);
        reply.json()["result"]["content"][0]["text"].as_str().unwrap().to_string()
    };
    assert_eq!(seen(None, None), "none");
    assert_eq!(seen(None, Some(TRACEPARENT)), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(
        seen(Some(OTHER_TRACEPARENT), Some(TRACEPARENT)),
        "0af7651916cd43dd8448eb211c80319c"
    );
    assert_eq!(seen(None, Some("00-zz-00f067aa0ba902b7-01")), "none", "an invalid one is ignored");

    // The request's log line names it too (on stderr, which the harness collects).
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.args(["--http", "127.0.0.1:0", "--log-level", "info"]);
    let (child, addr, log) = spawn_reporting(command);
    let _child = Killed(child);
    let call = modern("tools/call", json!({"name": "hello", "arguments": {"name": "t"}}));
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: hello"];
    let traced = format!("traceparent: {TRACEPARENT}");
    assert_eq!(post(addr, &call, &[headers[0], headers[1], headers[2], &traced]).status, 200);
    // The line is written before the response; the reading thread may lag behind it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let line = loop {
        let written = log.lock().unwrap().clone();
        if let Some(line) = written.lines().find(|l| l.contains("baremcp::request: tools/call")) {
            break line.to_string();
        }
        assert!(Instant::now() < deadline, "no request line in:\n{written}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(line.ends_with(" trace_id=4bf92f3577b34da6a3ce929d0e0e4736"), "{line}");
}

#[test]
fn session_ids_carry_their_prefix_and_bad_options_refuse_to_start() {
    let prefixed =
        HttpOptions { session_id_prefix: Some("p8081".into()), ..HttpOptions::default() };
    let server = start(prefixed);
    let session = initialize(server.addr, "2025-11-25");
    assert!(session.starts_with("p8081.") && session.len() == 6 + 32, "{session}");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let listed = post(server.addr, list, &[&format!("Mcp-Session-Id: {session}")]);
    assert_eq!(listed.status, 200, "{listed:?}");

    for (flag, value, said) in [
        ("--session-id-prefix", "p 1", "--session-id-prefix \"p 1\": 1 to 16 letters"),
        ("--session-id-prefix", "seventeen-chars-x", "--session-id-prefix"),
        ("--http-path", "/metrics", "--http-path /metrics: that path is served for operators"),
        ("--http-path", "/readyz?x", "--http-path \"/readyz?x\": a path starting with /"),
        ("--http-path", "/mcp/../readyz", "--http-path \"/mcp/../readyz\": a path starting"),
        (
            "--otlp-endpoint",
            "https://127.0.0.1:4318",
            "--otlp-endpoint https://127.0.0.1:4318: must",
        ),
        // Past these, every connection would overflow the clock or the gauge it is read by.
        ("--request-timeout-secs", "18446744073709551615", "at most 1000000000"),
        ("--idle-timeout-secs", "9223372036854775807", "--idle-timeout-secs 92"),
        ("--max-connections", "9223372036854775808", "--max-connections 9223372036854775808:"),
    ] {
        let refused = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
            .args(["--http", "127.0.0.1:0", flag, value])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(said), "{flag} {value}: {stderr}");
        assert!(!stderr.contains("serving MCP"), "refused before serving: {stderr}");
    }
}

/// A collector on loopback: answers 200 to each POST and hands its body over.
fn collector() -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (bodies, received) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = Vec::new();
            let mut chunk = [0u8; 65536];
            let body = loop {
                let Ok(n @ 1..) = stream.read(&mut chunk) else { return };
                request.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&request).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break body.to_string();
                    }
                }
            };
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            if bodies.send(body).is_err() {
                return;
            }
        }
    });
    (url, received)
}

/// A server whose tool `greet` says hello.
fn greeter() -> baremcp::Server {
    one_tool(Tool::new("greet", "Greets", json!({"type": "object"}), |_, _| {
        Ok(ToolOutput::text("hi"))
    }))
}

/// A span's attribute, as text.
fn attribute<'v>(span: &'v Value, key: &str) -> Option<&'v str> {
    let found = span["attributes"].as_array()?.iter().find(|a| a["key"] == key)?;
    found["value"]["stringValue"].as_str()
}

#[test]
fn each_request_becomes_a_span_in_its_caller_s_trace() {
    let (url, bodies) = collector();
    let options = HttpOptions { otlp_endpoint: Some(url), ..HttpOptions::default() };
    let server = start_with(options, greeter);
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: greet"];
    let traced = format!("traceparent: {TRACEPARENT}");
    let call = modern("tools/call", json!({"name": "greet"}));
    // Two `tracestate` lines are one list, in the order sent.
    let (rojo, congo) = ("tracestate: rojo=00f067aa0ba902b7", "tracestate: congo=t61rcWkgMzE");
    let sent = [headers[0], headers[1], headers[2], &traced, rojo, congo];
    assert_eq!(post(server.addr, &call, &sent).status, 200);
    let unknown = modern("tools/call", json!({"name": "nope"}));
    let nope = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: nope"];
    post(server.addr, &unknown, &nope);
    // Stopping gives the exporter its moment to send what is queued.
    drop(server);
    let mut spans = Vec::new();
    while spans.len() < 2 {
        let body = bodies.recv_timeout(Duration::from_secs(10)).expect("the spans are sent");
        let export: Value = serde_json::from_str(&body).unwrap();
        let resource = &export["resourceSpans"][0];
        assert_eq!(resource["resource"]["attributes"][0]["value"]["stringValue"], "one-tool");
        spans.extend(resource["scopeSpans"][0]["spans"].as_array().unwrap().iter().cloned());
    }
    let greet = &spans[0];
    assert_eq!(greet["name"], "tools/call greet");
    assert_eq!(greet["kind"], 2);
    assert_eq!(greet["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736", "the header's trace");
    assert_eq!(greet["parentSpanId"], "00f067aa0ba902b7");
    assert_eq!(greet["traceState"], "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE");
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("jsonrpc.request.id", "7"),
        ("network.transport", "tcp"),
        ("gen_ai.tool.name", "greet"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2026-07-28"),
    ] {
        assert_eq!(attribute(greet, key), Some(value), "{key}: {greet}");
    }
    assert!(greet.get("status").is_none(), "{greet}");
    let failed = &spans[1];
    assert_eq!(failed["name"], "tools/call", "an unknown tool names no span");
    assert!(failed.get("parentSpanId").is_none(), "no caller: a trace of its own");
    assert_eq!(attribute(failed, "error.type"), Some("-32602"));
    assert_eq!(failed["status"]["code"], 2);
}

/// Keep-alive clients sending back to back through a stop: each connection ends after a
/// response that says `Connection: close`, never with a request read and left unanswered
/// (the dispatching loop may have promised keep-alive just before the stop).
#[test]
fn a_stop_ends_busy_connections_after_a_response_that_says_so() {
    let list = |addr| {
        let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"];
        post_text(addr, &modern("tools/list", json!({})), &headers)
    };
    clients_through_a_stop(list, false, |reply| assert_eq!(reply.status, 200, "{reply:?}"));
}

/// The same when each answer is an event stream (progress comes before it) and each client
/// keeps one request queued behind the one being answered: a stream that starts once the
/// server is stopping says `Connection: close` too, so the connection ends with it rather
/// than carrying request after request until the stop gives up on it.
#[test]
fn a_stop_ends_pipelining_connections_after_an_event_stream_that_says_so() {
    let progress = |addr| {
        let params = json!({"name": "test_tool_with_progress", "arguments": {}});
        let mut call: Value = serde_json::from_str(&modern("tools/call", params)).unwrap();
        call["params"]["_meta"]["progressToken"] = json!("p");
        let headers = [
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: test_tool_with_progress",
        ];
        post_text(addr, &call.to_string(), &headers)
    };
    clients_through_a_stop(progress, true, |reply| {
        assert_eq!(reply.header("content-type"), Some("text/event-stream"));
        assert_eq!(reply.events().last().unwrap()["id"], 7, "{reply:?}");
    });
}

/// Four clients send `request(addr)` over and over, each on one keep-alive connection (with
/// one more always sent ahead when `queued`), while the server stops; `check` looks at every
/// answer. Each connection must end right after an answer that says `Connection: close`.
fn clients_through_a_stop(request: fn(SocketAddr) -> String, queued: bool, check: fn(&Reply)) {
    let server = default_server();
    let addr = server.addr;
    let clients: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let request = request(addr);
                let mut conn = connect(addr);
                if queued {
                    conn.get_mut().write_all(request.as_bytes()).unwrap();
                }
                let started = Instant::now();
                while started.elapsed() < Duration::from_secs(20) {
                    let sent = conn.get_mut().write_all(request.as_bytes());
                    let Some(reply) = sent.ok().and_then(|()| read_reply(&mut conn)) else {
                        return Err("the connection ended after an answer that did not say so");
                    };
                    check(&reply);
                    if reply.header("connection") == Some("close") {
                        // A request queued behind it is not read: HTTP has the client send
                        // it again, elsewhere.
                        return Ok(read_reply(&mut conn).is_none());
                    }
                }
                Err("the server never stopped")
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    server.stop();
    for client in clients {
        assert_eq!(client.join().unwrap(), Ok(true), "closed after saying so");
    }
}

/// Waits up to 10 s for a line of `log` that contains `text`.
fn logged(log: &std::sync::Mutex<String>, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let written = log.lock().unwrap().clone();
        if let Some(line) = written.lines().find(|l| l.contains(text)) {
            return line.to_string();
        }
        assert!(Instant::now() < deadline, "no line with {text:?} in:\n{written}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `subscriptions/listen` stream is a request too: it is logged, timed (for as long as it
/// was open) and traced once, when it ends, whether its client left or the server stopped.
#[test]
fn a_listen_stream_is_recorded_once_when_it_ends() {
    let (url, bodies) = collector();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.args(["--http", "127.0.0.1:0", "--log-level", "info", "--sse-keepalive-secs", "1"]);
    command.args(["--otlp-endpoint", &url]);
    let (child, addr, log) = spawn_reporting(command);
    let pid = child.id().to_string();
    let _child = Killed(child);
    let listen = |id: u32| {
        let mut body: Value =
            serde_json::from_str(&modern("subscriptions/listen", json!({"notifications": {}})))
                .unwrap();
        body["id"] = json!(id);
        body["params"]["_meta"]["traceparent"] = json!(TRACEPARENT);
        let mut conn = connect(addr);
        let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen"];
        crate::http_harness::send_post(&mut conn, addr, &body.to_string(), &headers);
        assert_eq!(read_head(&mut conn).0, 200);
        let ack = crate::http_harness::next_event(&mut conn);
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        conn
    };
    let kept = listen(8);
    let left = listen(9);
    std::thread::sleep(Duration::from_millis(300));
    drop(left);
    let line = logged(&log, "baremcp::request: subscriptions/listen id=9 ");
    assert!(line.ends_with(" ok trace_id=4bf92f3577b34da6a3ce929d0e0e4736"), "{line}");
    let micros: u64 = line.split(' ').find_map(|w| w.strip_suffix("us")?.parse().ok()).unwrap();
    assert!(micros >= 300_000, "open for as long as it was: {line}");
    let scraped = get(addr, "GET", "/metrics", &addr.to_string(), &[]).body;
    let count =
        r#"mcp_server_operation_duration_seconds_count{mcp_method_name="subscriptions/listen"}"#;
    assert_eq!(sample(&scraped, count).as_deref(), Some("1"), "{scraped}");

    // The stop ends the other one with its completion result, recorded as well.
    let stopped = std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(stopped.success());
    let mut kept = kept;
    let end = crate::http_harness::next_event(&mut kept);
    assert_eq!((&end["id"], &end["result"]["resultType"]), (&json!(8), &json!("complete")));
    logged(&log, "baremcp::request: subscriptions/listen id=8 ");
    let mut spans = Vec::new();
    while spans.len() < 2 {
        let body = bodies.recv_timeout(Duration::from_secs(10)).expect("the spans are sent");
        let export: Value = serde_json::from_str(&body).unwrap();
        let sent = &export["resourceSpans"][0]["scopeSpans"][0]["spans"];
        spans.extend(sent.as_array().unwrap().iter().cloned());
    }
    for span in &spans {
        assert_eq!(span["name"], "subscriptions/listen", "{span}");
        assert_eq!(span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736", "{span}");
    }
    let ids: Vec<_> = spans.iter().filter_map(|s| attribute(s, "jsonrpc.request.id")).collect();
    assert_eq!(ids, ["9", "8"]);
    let written = log.lock().unwrap().clone();
    assert_eq!(written.matches("subscriptions/listen id=").count(), 2, "once each:\n{written}");
}
