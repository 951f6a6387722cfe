//! Streamable HTTP as HTTP: Host, Origin, path, method and media types checked first; every
//! limit's status (sizes, malformed and smuggled requests, chunked bodies, slow senders);
//! pipelining, HTTP/1.0 and `Expect: 100-continue`; closing with input unread (lingering); the
//! connection cap, idle keep-alives, and notifications bounded in bytes while the loop is busy.

use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use baremcp::HttpOptions;
use serde_json::json;

use crate::http_harness::{
    INITIALIZE, connect, default_server, initialize, modern, one_tool, post, post_text, raw,
    read_reply, send_post, start, start_with, still_serving,
};

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
    // An empty port is a port (RFC 3986 `port = *DIGIT`): the name is judged.
    assert_eq!(send(request("localhost:", "")), 200);
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
    // With `Content-Length: 0` nothing is left unread: the connection serves on after it.
    let mut conn = connect(addr);
    let empty = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n"
    );
    conn.get_mut().write_all(empty.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 415);
    let elsewhere = format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    conn.get_mut().write_all(elsewhere.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 404);
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
    let coded = |codings: &str| {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: {codings}\r\n\r\n"
        );
        raw(addr, head.as_bytes()).unwrap().status
    };
    // Chunked not last: where the body ends is unknown, 400 (RFC 9112 §6.3); a coding under
    // chunked is one not served, 501 (§6.1).
    assert_eq!(coded("gzip"), 400);
    assert_eq!(coded("gzip, chunked"), 501);
    // HTTP/1.0 has no transfer codings: chunked there is faulty framing (RFC 9112 §6.1), so
    // 400 and the connection closes, what follows unread (a ping here).
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let then = format!("{:x}\r\n{ping}\r\n0\r\n\r\n{}", ping.len(), post_text(addr, ping, &[]));
    let mut conn = connect(addr);
    let old = format!(
        "POST /mcp HTTP/1.0\r\nHost: {addr}\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{then}"
    );
    conn.get_mut().write_all(old.as_bytes()).unwrap();
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!(reply.status, 400);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("HTTP/1.0"), "{reply:?}");
    assert!(read_reply(&mut conn).is_none(), "the connection closes");
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
fn an_invalid_host_or_framing_is_400_and_closes_even_where_any_host_is_allowed() {
    let server = start(HttpOptions { allow_hosts: vec!["*".into()], ..HttpOptions::default() });
    let addr = server.addr;
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let refused = |host: &str, framing: &str| {
        // A ping pipelined after it: never read, as the connection closes.
        let then = post_text(addr, ping, &[]);
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost:{host}\r\nContent-Type: application/json\r\n{framing}\r\n0\r\n\r\n{then}"
        );
        let mut conn = connect(addr);
        conn.get_mut().write_all(head.as_bytes()).unwrap();
        let reply = read_reply(&mut conn).unwrap();
        assert_eq!(reply.header("connection"), Some("close"), "{host:?}");
        assert!(read_reply(&mut conn).is_none(), "{host:?}: the connection closes");
        (reply.status, reply.json()["error"]["message"].as_str().unwrap().to_string())
    };
    // RFC 9112 §3.2: a Host that is not `uri-host [":" port]` is a 400, before any allow-list.
    let chunked = "Transfer-Encoding: chunked\r\n";
    for host in [" a b", "", " x@y", " localhost/evil", " [::1", " a,b"] {
        assert_eq!(refused(host, chunked), (400, "invalid host header".into()), "{host:?}");
    }
    // RFC 9112 §6.3: chunked not the final coding leaves the body's end unknown.
    let not_final = (400, "chunked is not the final transfer-encoding".to_string());
    assert_eq!(refused(" a", "Transfer-Encoding: chunked, identity\r\n"), not_final);
    assert_eq!(refused(" a", "Transfer-Encoding: chunked, gzip\r\n"), not_final);
    let twice = (400, "chunked is applied more than once".to_string());
    assert_eq!(refused(" a", &chunked.repeat(2)), twice);
    let empty = (400, "empty transfer-encoding".to_string());
    assert_eq!(refused(" a", "Transfer-Encoding:\r\n"), empty);
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
    let mut bytes = String::new();
    for (body, method) in [(&first, "tools/list"), (&second, "server/discover")] {
        bytes += &post_text(addr, body, &[v, &format!("Mcp-Method: {method}")]);
    }
    conn.get_mut().write_all(bytes.as_bytes()).unwrap();
    let one = read_reply(&mut conn).unwrap();
    let two = read_reply(&mut conn).unwrap();
    assert!(one.json()["result"]["tools"].is_array());
    assert!(two.json()["result"]["supportedVersions"].is_array());
    // HTTP/1.0: answered, then closed; the status line names the version served (RFC 9110
    // §6.2), the body has its length.
    let old = format!(
        "POST /mcp HTTP/1.0\r\nContent-Type: application/json\r\n{v}\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{first}",
        first.len()
    );
    let mut conn = connect(addr);
    conn.get_mut().write_all(old.as_bytes()).unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(
        answer.contains("\r\nConnection: close\r\n") && answer.contains("\r\nContent-Length: ")
    );
    // Expect: 100-continue gets its interim response first, alone, in a list, or on a line
    // of its own beside another expectation (list fields combine).
    for expect in
        ["Expect: 100-continue", "Expect: foo, 100-Continue", "Expect: foo\r\nExpect: 100-continue"]
    {
        let mut conn = connect(addr);
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{expect}\r\nContent-Type: application/json\r\n{v}\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
            first.len()
        );
        conn.get_mut().write_all(head.as_bytes()).unwrap();
        let mut line = String::new();
        conn.read_line(&mut line).unwrap();
        assert_eq!(line, "HTTP/1.1 100 Continue\r\n", "{expect}");
        conn.read_line(&mut line).unwrap();
        conn.get_mut().write_all(first.as_bytes()).unwrap();
        assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    }
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

#[test]
fn a_refused_body_is_read_and_dropped_so_that_its_client_reads_the_refusal() {
    // A client that writes its whole body before it reads (Python's `http.client` does) must
    // be able to finish writing: a server closing on unread input resets the connection.
    let server = start(HttpOptions { max_body: 1 << 20, ..HttpOptions::default() });
    let addr = server.addr;
    let body = "x".repeat(8 << 20);
    for (content_type, length, status) in
        [("text/plain", 1000, 415), ("text/plain", 8 << 20, 413), ("application/json", 500, 414)]
    {
        let mut conn = connect(addr);
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\n\
             Content-Length: {length}\r\n\r\n"
        );
        conn.get_mut().write_all(head.as_bytes()).unwrap();
        let sent = conn.get_mut().write_all(body.as_bytes());
        assert!(sent.is_ok(), "{status}: {sent:?}");
        let mut reply = read_reply(&mut conn).unwrap();
        if length == 500 {
            // A body longer than it said: 400 (not JSON), then what follows it is read as
            // the next request's request line, too long (414), closing.
            assert_eq!((reply.status, reply.header("connection")), (400, None));
            reply = read_reply(&mut conn).unwrap();
        }
        assert_eq!((reply.status, reply.header("connection")), (status, Some("close")));
        assert!(read_reply(&mut conn).is_none(), "then the server closes");
    }
    still_serving(addr);
}

#[test]
fn a_client_that_goes_on_sending_after_a_refusal_is_cut_off() {
    let server = start(HttpOptions { max_body: 1000, ..HttpOptions::default() });
    let addr = server.addr;
    let mut conn = connect(addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: 100000000000\r\n\r\n"
    );
    conn.get_mut().write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let chunk = [b'x'; 64 * 1024];
    let cut = loop {
        if let Err(e) = conn.get_mut().write_all(&chunk) {
            break e;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never cut off");
    };
    // Five seconds of lingering, then a reset.
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(4) && took < Duration::from_secs(12), "{took:?} {cut}");
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
