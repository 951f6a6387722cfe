//! Event streams: notifications before a response, a legacy server request answered by a later
//! POST, listen streams with keep-alives and resource updates, a legacy GET stream, and
//! handlers freed when their stream closes or their session is deleted.

use std::io::{BufRead, Write};
use std::net::Shutdown;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baremcp::HttpOptions;
use serde_json::json;

use crate::http_harness::{
    ask_sampling, connect, default_server, initialize, modern, next_event, one_tool, post, raw,
    read_head, read_reply, send_post, start, start_on, start_with, still_serving,
};

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
    // The connection carries the next request after the stream ended: answered by the loop
    // itself (small), through the connection thread (too large for the loop to write: a long
    // id), as a stream again, and by the loop again, each in its turn.
    send_post(&mut conn, addr, r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#, &[&with]);
    assert_eq!(read_reply(&mut conn).unwrap().json()["id"], 6);
    let long = "i".repeat(70_000);
    let ping = json!({"jsonrpc": "2.0", "id": long, "method": "ping"}).to_string();
    send_post(&mut conn, addr, &ping, &[&with]);
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["id"], long.as_str());
    send_post(&mut conn, addr, &call.replace(":5,", ":7,"), &[&with]);
    let events = read_reply(&mut conn).unwrap().events();
    assert_eq!((events.len(), &events[3]["id"]), (4, &json!(7)));
    send_post(&mut conn, addr, r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#, &[&with]);
    assert_eq!(read_reply(&mut conn).unwrap().json()["id"], 8);
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

/// A legacy call from a client that takes JSON alone cannot carry the server's request (it
/// goes on the call's event stream): the handler hears so at once, not that the client left.
#[test]
fn a_legacy_handler_cannot_ask_a_client_that_takes_json_alone() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let calls = [
        ("test_sampling", json!({"prompt": "hi"})),
        ("test_elicitation", json!({"message": "who?"})),
    ];
    for (tool, arguments) in calls {
        let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}).to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json\r\nMcp-Session-Id: {session}\r\n\
             Content-Length: {}\r\n\r\n{call}",
            call.len()
        );
        let reply = raw(addr, request.as_bytes()).unwrap();
        assert_eq!(reply.header("content-type"), Some("application/json"), "{reply:?}");
        let result = &reply.json()["result"];
        assert_eq!(result["isError"], true, "{reply:?}");
        assert_eq!(
            result["content"][0]["text"],
            "the request's Accept header rules out an event stream, so the server cannot ask \
             the client"
        );
    }
}

/// A tool that says whether the client may be asked for a sample.
fn asks() -> baremcp::Server {
    let mut server = baremcp::Server::new("asks", "1");
    let supports = |_: &serde_json::Value, cx: &mut baremcp::Context| {
        Ok(baremcp::ToolOutput::text(cx.client_supports("sampling").to_string()))
    };
    let tool = baremcp::Tool::new("supports", "s", json!({"type": "object"}), supports);
    server.add_tool(tool).unwrap();
    server
}

/// What `client_supports` says agrees with what asking would do: no to a legacy request that
/// takes JSON alone, yes to one that takes an event stream.
#[test]
fn a_legacy_client_that_takes_json_alone_is_not_said_to_support_questions() {
    let server = crate::http_harness::start_with(HttpOptions::default(), asks);
    let (addr, session) = (server.addr, initialize(server.addr, "2025-11-25"));
    let call =
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "supports"}})
            .to_string();
    for (accept, says) in
        [("application/json", "false"), ("application/json, text/event-stream", "true")]
    {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: {accept}\r\nMcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{call}",
            call.len()
        );
        let reply = raw(addr, request.as_bytes()).unwrap();
        let result = match reply.header("content-type") {
            Some("application/json") => reply.json()["result"].clone(),
            _ => reply.events().last().unwrap()["result"].clone(),
        };
        assert_eq!(result["content"][0]["text"], says, "{accept}: {reply:?}");
    }
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
fn a_listen_stream_the_server_ends_at_stop_gets_a_completion_naming_it() {
    let server = default_server();
    let addr = server.addr;
    let listen = modern("subscriptions/listen", json!({"notifications": {}}));
    let mut conn = listening(addr, &listen);
    server.stop();
    // Like every message on the stream, the response that closes it names it (the
    // SubscriptionsListenResult schema requires the member).
    let end = next_event(&mut conn);
    assert_eq!((&end["id"], &end["result"]["resultType"]), (&json!(7), &json!("complete")));
    let meta = &end["result"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/subscriptionId"], 7, "{end}");
    assert!(meta["io.modelcontextprotocol/serverInfo"].is_object(), "{end}");
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

/// Set by the `wait_for_cancel` tool once its handler sees the cancellation: one flag per
/// test, as tests run at once.
static SAW_CANCEL: AtomicBool = AtomicBool::new(false);
static SAW_LEGACY_CANCEL: AtomicBool = AtomicBool::new(false);

/// A server whose one tool works until it is cancelled (for at most five seconds).
fn cancellable() -> baremcp::Server {
    cancellable_noting(&SAW_CANCEL)
}

fn cancellable_legacy() -> baremcp::Server {
    cancellable_noting(&SAW_LEGACY_CANCEL)
}

fn cancellable_noting(saw: &'static AtomicBool) -> baremcp::Server {
    one_tool(baremcp::Tool::new(
        "wait_for_cancel",
        "Works until cancelled",
        json!({"type": "object"}),
        move |_, cx| {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(5) {
                if cx.is_cancelled() {
                    saw.store(true, Ordering::Relaxed);
                    return Ok(baremcp::ToolOutput::text("cancelled"));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(baremcp::ToolOutput::text("finished"))
        },
    ))
}

/// Waits (three seconds at most) until `saw` is set, from `since`.
fn await_cancel(saw: &AtomicBool, since: Instant) {
    while !saw.load(Ordering::Relaxed) {
        assert!(since.elapsed() < Duration::from_secs(3), "the handler never saw the cancellation");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A connection on which a 2026-07-28 call of `tool` (without arguments) has been under way
/// for 300 ms.
fn calling(addr: std::net::SocketAddr, tool: &str) -> std::io::BufReader<std::net::TcpStream> {
    let call = modern("tools/call", json!({"name": tool, "arguments": {}}));
    let name = format!("Mcp-Name: {tool}");
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", &name];
    let mut conn = connect(addr);
    send_post(&mut conn, addr, &call, &headers);
    std::thread::sleep(Duration::from_millis(300));
    conn
}

/// A server whose one tool sleeps four seconds, deaf to cancellation.
fn sleepy() -> baremcp::Server {
    one_tool(baremcp::Tool::new("sleep", "Sleeps", json!({"type": "object"}), |_, _| {
        std::thread::sleep(Duration::from_secs(4));
        Ok(baremcp::ToolOutput::text("slept"))
    }))
}

#[test]
fn a_client_that_leaves_sees_its_connection_closed_before_its_handler_ends() {
    let server = start_with(HttpOptions::default(), sleepy);
    let addr = server.addr;
    let mut conn = calling(addr, "sleep");
    conn.get_ref().shutdown(Shutdown::Write).unwrap();
    let left = Instant::now();
    // The server ends the connection (no response: the client left) while the handler, which
    // holds a hold on the socket to answer it, still sleeps.
    conn.get_ref().set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    assert_eq!(
        std::io::Read::read_to_end(conn.get_mut(), &mut rest).map(|_| rest.len()).ok(),
        Some(0)
    );
    assert!(left.elapsed() < Duration::from_millis(3000), "closed after {:?}", left.elapsed());
    drop(conn);
    still_serving(addr);
}

#[test]
fn a_client_that_half_closes_after_a_quick_request_still_reads_its_answer() {
    let server = default_server();
    let addr = server.addr;
    let list = modern("tools/list", json!({}));
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"];
    for _ in 0..20 {
        let mut conn = connect(addr);
        send_post(&mut conn, addr, &list, &headers);
        conn.get_ref().shutdown(Shutdown::Write).unwrap();
        let reply = read_reply(&mut conn).expect("an answer before the close");
        assert_eq!(
            (reply.status, reply.json()["result"]["resultType"].clone()),
            (200, json!("complete"))
        );
    }
}

#[test]
fn closing_a_modern_request_s_stream_cancels_it() {
    let server = start_with(HttpOptions::default(), cancellable);
    let addr = server.addr;
    let conn = calling(addr, "wait_for_cancel");
    let closed = Instant::now();
    drop(conn);
    await_cancel(&SAW_CANCEL, closed);
    // The next request is served at once, not after the five seconds.
    let list = modern("tools/list", json!({}));
    let reply = post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"]);
    assert_eq!(reply.status, 200);
    assert!(closed.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_legacy_cancellation_posted_while_the_handler_runs_is_seen_by_it() {
    let server = start_with(HttpOptions::default(), cancellable_legacy);
    let addr = server.addr;
    let session = initialize(addr, "2025-11-25");
    let with = format!("Mcp-Session-Id: {session}");
    let call = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"wait_for_cancel","arguments":{}}}"#;
    let mut conn = connect(addr);
    send_post(&mut conn, addr, call, &[&with]);
    std::thread::sleep(Duration::from_millis(300));
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}"#;
    let posted = Instant::now();
    assert_eq!(post(addr, cancel, &[&with]).status, 202);
    await_cancel(&SAW_LEGACY_CANCEL, posted);
    // The cancelled call gets no JSON-RPC response: its POST is answered with an event
    // stream that ends without one.
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!(
        (reply.status, reply.header("content-type")),
        (200, Some("text/event-stream")),
        "{reply:?}"
    );
    assert!(reply.events().is_empty(), "{reply:?}");
    assert!(posted.elapsed() < Duration::from_secs(3), "{:?}", posted.elapsed());
    // Taken in while the handler ran, the cancel counts in `/metrics` as any notification.
    assert_eq!(notifications_counted(addr, "notifications/cancelled"), 1);
}

/// How many `method` notifications `/metrics` has counted.
fn notifications_counted(addr: std::net::SocketAddr, method: &str) -> u64 {
    let scrape = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let metrics = raw(addr, scrape.as_bytes()).unwrap().body;
    let series =
        format!("mcp_server_operation_duration_seconds_count{{mcp_method_name=\"{method}\"}} ");
    let count = metrics.lines().find_map(|l| l.strip_prefix(&series));
    count.map_or(0, |n| n.parse().unwrap())
}

#[test]
fn notifications_in_a_legacy_batch_are_counted() {
    let server = default_server();
    let addr = server.addr;
    let session = initialize(addr, "2025-03-26");
    let with = format!("Mcp-Session-Id: {session}");
    let changed = r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#;
    assert_eq!(post(addr, &format!("[{changed},{changed}]"), &[&with]).status, 202);
    assert_eq!(post(addr, changed, &[&with]).status, 202);
    // A `202` says the loop has them queued, not that it took them in yet: `/metrics` counts
    // them once it has.
    let started = Instant::now();
    let counted = loop {
        let counted = notifications_counted(addr, "notifications/roots/list_changed");
        if counted >= 3 || started.elapsed() > Duration::from_secs(5) {
            break counted;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(counted, 3);
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
    let streams: Vec<_> = (0..3).map(|_| listening(addr, &listen)).collect();
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
fn a_listen_that_cannot_take_an_event_stream_is_refused_at_once() {
    let server = default_server();
    let addr = server.addr;
    let request = listen_taking_json(addr);
    let reply = raw(addr, request.as_bytes()).expect("an answer, not a stream held open");
    assert_eq!(reply.status, 406);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("text/event-stream"));
    still_serving(addr);
}

#[test]
fn a_stream_for_a_client_that_asked_to_close_says_so() {
    let server = default_server();
    let addr = server.addr;
    let listen = modern("subscriptions/listen", json!({"notifications": {}}));
    let mut conn = connect(addr);
    let headers = [
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: subscriptions/listen",
        "Connection: close",
    ];
    send_post(&mut conn, addr, &listen, &headers);
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream"), "{head}");
    assert!(head.lines().any(|l| l.eq_ignore_ascii_case("connection: close")), "{head}");
}

/// A connection with a `subscriptions/listen` (`listen`, its body) open, acknowledged.
/// Past `--max-streams-per-peer`, a `subscriptions/listen` is refused (`429`) with its own id.
/// Loopback peers are not counted: served on this machine's address on its default route,
/// when it has one.
#[test]
fn a_listen_past_the_stream_cap_is_refused_with_its_id() {
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    // Connecting a UDP socket sends nothing: it only picks the route (TEST-NET-1, RFC 5737).
    let local = probe.connect("192.0.2.1:9").and_then(|()| probe.local_addr());
    let Some(ip) =
        local.ok().map(|a| a.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
    else {
        return println!("skipped: no address but loopback");
    };
    let options = HttpOptions {
        max_streams_per_peer: 1,
        allow_hosts: vec!["*".into()],
        allow_unauthenticated: true,
        ..HttpOptions::default()
    };
    let listener = std::net::TcpListener::bind((ip, 0)).unwrap();
    let server = start_on(listener, options, crate::http_harness::everything);
    let addr = server.addr;
    let listen = modern("subscriptions/listen", json!({"notifications": {}}));
    let _open = listening(addr, &listen);
    let second = listen.replace(r#""id":7"#, r#""id":"second""#);
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen"];
    let reply = post(addr, &second, &headers);
    assert_eq!((reply.status, reply.header("retry-after")), (429, Some("5")), "{reply:?}");
    let body = reply.json();
    assert_eq!(body["id"], "second", "{body}");
    assert_eq!(body["error"]["message"], "too many streams open from this address");
}

fn listening(addr: std::net::SocketAddr, listen: &str) -> std::io::BufReader<std::net::TcpStream> {
    let mut conn = connect(addr);
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen"];
    send_post(&mut conn, addr, listen, &headers);
    assert_eq!(read_head(&mut conn).0, 200);
    assert_eq!(next_event(&mut conn)["method"], "notifications/subscriptions/acknowledged");
    conn
}

/// A `subscriptions/listen` request (id 7) from a client that takes JSON alone, no event
/// stream.
pub(crate) fn listen_taking_json(addr: std::net::SocketAddr) -> String {
    let listen = modern("subscriptions/listen", json!({"notifications": {}}));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{listen}",
        listen.len()
    )
}
