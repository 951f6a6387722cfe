//! Keep-alive connections parked with the dispatching loop between requests (Linux): calls on
//! them wake no connection thread, and every request the loop does not read itself, every
//! end of a connection and every wait on a client still reaches its thread.

use std::io::{BufRead, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::http_harness::{
    Killed, ask_sampling, connect, default_server, initialize, modern, next_event, post_text,
    read_head, read_reply, send_post, spawn_reporting,
};

/// The headers of a 2026-07-28 `tools/list`.
const LIST: [&str; 2] = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"];

/// A connection whose first call was answered, left alone long enough for its thread to hear
/// so and park it (a thread looks at its socket every 250 ms while the loop answers).
fn parked(addr: SocketAddr) -> std::io::BufReader<TcpStream> {
    let mut conn = connect(addr);
    list_on(&mut conn, addr);
    std::thread::sleep(Duration::from_millis(400));
    conn
}

/// A new legacy session, and a connection parked after a `ping` in it.
fn parked_in_session(addr: SocketAddr) -> (String, std::io::BufReader<TcpStream>) {
    let session = initialize(addr, "2025-11-25");
    let mut conn = connect(addr);
    let with = format!("Mcp-Session-Id: {session}");
    send_post(&mut conn, addr, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &[&with]);
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    std::thread::sleep(Duration::from_millis(400));
    (session, conn)
}

/// A `tools/list` on `conn`, answered in full.
fn list_on(conn: &mut std::io::BufReader<TcpStream>, addr: SocketAddr) {
    send_post(conn, addr, &modern("tools/list", json!({})), &LIST);
    let reply = read_reply(conn).expect("a response");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.json()["result"]["tools"].is_array());
}

/// The voluntary context switches of the threads of process `pid` whose name begins `prefix`.
fn switches(pid: u32, prefix: &str) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().map_while(Result::ok) {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !name.starts_with(prefix) {
            continue;
        }
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let line = status.lines().find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"));
        total += line.and_then(|n| n.trim().parse::<u64>().ok()).unwrap_or(0);
    }
    total
}

#[test]
fn calls_on_a_kept_alive_connection_wake_no_connection_thread() {
    // Without a log line a request, so that every `write` counted below is the server's own.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.args(["--http", "127.0.0.1:0"]);
    command.env("RUST_LOG", "warn,baremcp::http=info,baremcp::http::connection=warn");
    let (child, addr, _) = spawn_reporting(command);
    let pid = child.id();
    let _child = Killed(child);
    let mut conn = parked(addr);
    // The connection's thread is named for its peer ("http 127.0.0.1:…", cut to 15 bytes).
    let before = switches(pid, "http 127.0.0.1");
    let wrote = writes(pid);
    let started = Instant::now();
    let calls = 300;
    for _ in 0..calls {
        list_on(&mut conn, addr);
    }
    let slept = switches(pid, "http 127.0.0.1") - before;
    // A thread woken by each call sleeps again after it: at least one switch a call. A parked
    // one wakes only to look at the time, once a second.
    let ticks = 4 * (started.elapsed().as_secs() + 1) + 10;
    assert!(slept <= ticks, "the connection thread slept {slept} times over {calls} calls");
    // Nor does the loop ring its own bell (an `eventfd` write) when it queues a request it
    // read itself: a call costs a read, a send and a wait, as on one thread.
    let wrote = writes(pid) - wrote;
    assert!(wrote < calls / 10, "{wrote} writes over {calls} calls");
}

#[test]
fn a_token_not_verified_yet_is_checked_on_its_connection_thread_not_the_loop() {
    let dir = crate::scratch("http-park-jwt");
    let secret = dir.join("secret");
    std::fs::write(&secret, "park-secret-of-thirty-two-bytes-at-least\n").unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.args(["--http", "127.0.0.1:0", "--jwt-secret-file"]).arg(&secret);
    command.args(["--jwt-audience", "https://mcp.example/mcp"]);
    let (child, addr, _) = spawn_reporting(command);
    let pid = child.id();
    let _child = Killed(child);
    let b64url = |bytes: &[u8]| {
        baremcp::encoding::base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let token = |sub: &str, key: &[u8]| {
        let claims =
            json!({"sub": sub, "aud": "https://mcp.example/mcp", "exp": now.as_secs() + 600});
        let signing =
            format!("{}.{}", b64url(br#"{"alg":"HS256"}"#), b64url(claims.to_string().as_bytes()));
        let mac = baremcp::__private::hs256(key, signing.as_bytes());
        format!("Authorization: Bearer {signing}.{}", b64url(&mac))
    };
    let list = modern("tools/list", json!({}));
    let call = |conn: &mut std::io::BufReader<TcpStream>, auth: &str| {
        send_post(conn, addr, &list, &[LIST[0], LIST[1], auth]);
        read_reply(conn).expect("a response").status
    };
    let ann = token("ann", b"park-secret-of-thirty-two-bytes-at-least");
    let mut conn = connect(addr);
    assert_eq!(call(&mut conn, &ann), 200);
    std::thread::sleep(Duration::from_millis(400));
    // Verified once: the loop serves the same token again without waking the thread.
    let before = switches(pid, "http 127.0.0.1");
    for _ in 0..50 {
        assert_eq!(call(&mut conn, &ann), 200);
    }
    let quiet = switches(pid, "http 127.0.0.1") - before;
    assert!(quiet <= 10, "the connection thread slept {quiet} times over 50 known tokens");
    // Each new token goes to the connection's thread to be checked; the connection serves
    // on, and parks again.
    let before = switches(pid, "http 127.0.0.1");
    for n in 0..30 {
        assert_eq!(
            call(
                &mut conn,
                &token(&format!("user-{n}"), b"park-secret-of-thirty-two-bytes-at-least")
            ),
            200
        );
    }
    let woken = switches(pid, "http 127.0.0.1") - before;
    assert!(woken >= 30, "the connection thread slept {woken} times over 30 new tokens");
    assert_eq!(call(&mut conn, &ann), 200);
    // A bad one too (refused, and closed: its body is left unread).
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(call(&mut conn, &token("eve", b"wrong-secret")), 401);
}

/// How many `write`s (not `send`s) process `pid` has made.
fn writes(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines().find_map(|l| l.strip_prefix("syscw:")).and_then(|n| n.trim().parse().ok()).unwrap()
}

#[test]
fn the_keeper_sleeps_while_no_connection_is_parked() {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.args(["--http", "127.0.0.1:0"]);
    let (child, addr, _) = spawn_reporting(command);
    let pid = child.id();
    let _child = Killed(child);
    let over = |pause: Duration| {
        let before = switches(pid, "http keeper");
        std::thread::sleep(pause);
        switches(pid, "http keeper") - before
    };
    // A parked connection starts the keeper, which looks every 25 ms while it is parked.
    let conn = parked(addr);
    let watching = over(Duration::from_millis(500));
    assert!(watching >= 5, "the keeper woke {watching} times over 500 ms with a connection parked");
    // Gone, and its thread with it: the keeper sleeps, but for a look at the server each second.
    drop(conn);
    std::thread::sleep(Duration::from_millis(300));
    let idle = over(Duration::from_millis(1500));
    assert!(idle <= 3, "the keeper woke {idle} times over 1.5 s with nothing parked");
    // And watches again as soon as the next connection parks.
    let _conn = parked(addr);
    let watching = over(Duration::from_millis(500));
    assert!(
        watching >= 5,
        "the keeper woke {watching} times over 500 ms after a connection parked"
    );
}

#[test]
fn every_kind_of_request_on_a_parked_connection_is_served() {
    let server = default_server();
    let addr = server.addr;
    let list = modern("tools/list", json!({}));
    let whole = post_text(addr, &list, &LIST);
    let mut conn = parked(addr);
    // Not all come: its thread waits for the rest.
    let (head, body) = whole.split_at(whole.len() - 10);
    conn.get_mut().write_all(head.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    conn.get_mut().write_all(body.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    std::thread::sleep(Duration::from_millis(400));
    // More than the loop's one read takes (its connection's 16 KiB buffer), all sent at once:
    // its thread reads on from where the loop stopped.
    let long = "n".repeat(40 << 10);
    let prompt = "test_prompt_with_arguments";
    let get =
        modern("prompts/get", json!({"name": prompt, "arguments": {"arg1": long, "arg2": "b"}}));
    let named = format!("Mcp-Name: {prompt}");
    send_post(&mut conn, addr, &get, &[LIST[0], "Mcp-Method: prompts/get", &named]);
    let reply = read_reply(&mut conn).unwrap();
    let text = reply.json()["result"]["messages"][0]["content"]["text"].to_string();
    assert!(reply.status == 200 && text.contains(&long), "{}", reply.status);
    std::thread::sleep(Duration::from_millis(400));
    // Two at once: answered in order.
    conn.get_mut().write_all(format!("{whole}{whole}").as_bytes()).unwrap();
    for _ in 0..2 {
        assert!(read_reply(&mut conn).unwrap().json()["result"]["tools"].is_array());
    }
    std::thread::sleep(Duration::from_millis(400));
    // A chunked body.
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\n{}\r\n{}\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{list}\r\n0\r\n\r\n",
        LIST[0],
        LIST[1],
        list.len()
    );
    conn.get_mut().write_all(chunked.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    std::thread::sleep(Duration::from_millis(400));
    // `Expect: 100-continue`: the interim response first.
    let expecting = whole.replacen("\r\n", "\r\nExpect: 100-continue\r\n", 1);
    let (head, body) = expecting.split_at(expecting.find("\r\n\r\n").unwrap() + 4);
    conn.get_mut().write_all(head.as_bytes()).unwrap();
    let mut line = String::new();
    conn.read_line(&mut line).unwrap();
    assert_eq!(line, "HTTP/1.1 100 Continue\r\n");
    conn.read_line(&mut line).unwrap();
    conn.get_mut().write_all(body.as_bytes()).unwrap();
    assert_eq!(read_reply(&mut conn).unwrap().status, 200);
    std::thread::sleep(Duration::from_millis(400));
    // Refused by the loop without closing (a header that disagrees with the body), then
    // served again.
    send_post(&mut conn, addr, &list, &[LIST[0], "Mcp-Method: tools/call"]);
    assert_eq!(read_reply(&mut conn).unwrap().status, 400);
    list_on(&mut conn, addr);
    // A listen: its stream opens on the connection, and keeps it.
    let listen = modern(
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": ["test://static-text"]}}),
    );
    std::thread::sleep(Duration::from_millis(400));
    send_post(&mut conn, addr, &listen, &[LIST[0], "Mcp-Method: subscriptions/listen"]);
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream"), "{head}");
}

#[test]
fn a_parked_connection_its_client_closes_is_closed_and_counted_out() {
    let server = default_server();
    let addr = server.addr;
    let open = || {
        let scrape = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        let reply = crate::http_harness::raw(addr, scrape.as_bytes()).unwrap();
        let line = reply.body.lines().find_map(|l| l.strip_prefix("baremcp_http_connections "));
        line.unwrap().parse::<u32>().unwrap()
    };
    let conn = parked(addr);
    // Counted with the scrape's own connection.
    assert_eq!(open(), 2);
    drop(conn);
    let started = Instant::now();
    while open() != 1 {
        assert!(started.elapsed() < Duration::from_secs(5), "the connection was not counted out");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_handler_waiting_on_its_client_hears_the_answer_sent_on_a_parked_connection() {
    let server = default_server();
    let addr = server.addr;
    let (session, mut other) = parked_in_session(addr);
    let with = format!("Mcp-Session-Id: {session}");
    let (mut stream, question) = ask_sampling(addr, &session);
    // Soon: the connection goes back to its thread once the loop has been on the handler for
    // 50 ms, not when its thread next looks for itself (a second).
    let started = Instant::now();
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "fine"}, "model": "m"}});
    send_post(&mut other, addr, &answer.to_string(), &[&with]);
    assert_eq!(read_reply(&mut other).unwrap().status, 202);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(200), "the answer took {took:?}");
    assert_eq!(next_event(&mut stream)["result"]["content"][0]["text"], "LLM response: fine");
}

#[test]
fn a_stopping_server_closes_its_parked_connections_at_once() {
    let server = default_server();
    let addr = server.addr;
    let mut conn = parked(addr);
    let started = Instant::now();
    server.stop();
    assert!(read_reply(&mut conn).is_none(), "closed without a word");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "closed after {took:?}");
    drop(server);
}

/// A server whose one tool reports progress at once, then works for a second.
fn progressing() -> baremcp::Server {
    crate::http_harness::one_tool(baremcp::Tool::new(
        "progressing",
        "Reports progress, then works",
        json!({"type": "object"}),
        |_, cx| {
            cx.progress(0.0, Some(1.0), Some("begun"));
            std::thread::sleep(Duration::from_secs(1));
            Ok(baremcp::ToolOutput::text("done"))
        },
    ))
}

#[test]
fn an_event_before_the_response_leaves_a_parked_connection_at_once() {
    let server = crate::http_harness::start_with(baremcp::HttpOptions::default(), progressing);
    let addr = server.addr;
    let (session, mut conn) = parked_in_session(addr);
    let with = format!("Mcp-Session-Id: {session}");
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progressing","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    let sent = Instant::now();
    send_post(&mut conn, addr, call, &[&with]);
    let (status, head) = read_head(&mut conn);
    assert_eq!(status, 200);
    assert!(head.contains("text/event-stream"), "{head}");
    assert_eq!(next_event(&mut conn)["method"], "notifications/progress");
    // Its thread is rung with the event: not left parked until the keeper looks, nor until
    // the handler ends (1 s).
    let took = sent.elapsed();
    assert!(took < Duration::from_millis(200), "the first event took {took:?}");
    assert_eq!(next_event(&mut conn)["id"], 3);
}

/// A server whose one tool works for `WORK`.
fn working() -> baremcp::Server {
    crate::http_harness::one_tool(baremcp::Tool::new(
        "work",
        "Works a while",
        json!({"type": "object"}),
        |_, _| {
            std::thread::sleep(WORK.with(|w| w.get()));
            Ok(baremcp::ToolOutput::text("worked"))
        },
    ))
}

thread_local! {
    /// How long `work` works: set by each test on the thread that builds its server.
    static WORK: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::from_millis(20)) };
}

/// Calls `work` on connections of their own (which close, so never park) from `clients`
/// threads at once, until `stop` is set or five seconds pass.
fn keep_busy(
    addr: SocketAddr,
    clients: usize,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<()>> {
    let call = modern("tools/call", json!({"name": "work", "arguments": {}}));
    (0..clients)
        .map(|_| {
            let (call, stop) = (call.clone(), stop.clone());
            std::thread::spawn(move || {
                let started = Instant::now();
                let headers =
                    [LIST[0], "Mcp-Method: tools/call", "Mcp-Name: work", "Connection: close"];
                while !stop.load(std::sync::atomic::Ordering::Relaxed)
                    && started.elapsed() < Duration::from_secs(5)
                {
                    let reply = crate::http_harness::post(addr, &call, &headers);
                    assert_eq!(reply.status, 200, "{reply:?}");
                }
            })
        })
        .collect()
}

#[test]
fn a_parked_connection_is_served_while_the_queue_never_empties() {
    let server = crate::http_harness::start_with(baremcp::HttpOptions::default(), working);
    let addr = server.addr;
    let mut conn = parked(addr);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Two clients keep a call in the loop's queue at every moment, each a short one.
    let busy = keep_busy(addr, 2, &stop);
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    list_on(&mut conn, addr);
    let took = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.into_iter().for_each(|client| client.join().unwrap());
    assert!(took < Duration::from_secs(1), "the parked connection's call took {took:?}");
}

/// A server whose one tool works for two seconds.
fn working_long() -> baremcp::Server {
    WORK.with(|w| w.set(Duration::from_secs(2)));
    working()
}

#[test]
fn a_request_that_came_before_the_idle_timeout_is_answered_however_busy_the_loop() {
    let options = baremcp::HttpOptions { idle_timeout_secs: 1, ..Default::default() };
    let server = crate::http_harness::start_with(options, working_long);
    let addr = server.addr;
    let mut conn = connect(addr);
    list_on(&mut conn, addr);
    let answered = Instant::now();
    // The loop is taken by a long call just before the request comes, which comes just
    // before the connection would have idled out.
    std::thread::sleep(Duration::from_millis(850));
    let call = modern("tools/call", json!({"name": "work", "arguments": {}}));
    let long = std::thread::spawn(move || {
        let headers = [LIST[0], "Mcp-Method: tools/call", "Mcp-Name: work"];
        crate::http_harness::post(addr, &call, &headers).status
    });
    std::thread::sleep(
        (answered + Duration::from_millis(930)).saturating_duration_since(Instant::now()),
    );
    send_post(&mut conn, addr, &modern("tools/list", json!({})), &LIST);
    let reply = read_reply(&mut conn).expect("an answer, not a reset");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(long.join().unwrap(), 200);
}

#[test]
fn a_slow_handler_holds_up_a_refusal_on_a_parked_connection_by_a_moment_at_most() {
    let server = crate::http_harness::start_with(baremcp::HttpOptions::default(), working_long);
    let addr = server.addr;
    let mut conn = parked(addr);
    let call = modern("tools/call", json!({"name": "work", "arguments": {}}));
    let long = std::thread::spawn(move || {
        let headers = [LIST[0], "Mcp-Method: tools/call", "Mcp-Name: work"];
        crate::http_harness::post(addr, &call, &headers).status
    });
    // Just after the call takes the loop: a thread looking for itself every tick, when the
    // loop has been on one message for a tick, would answer 250 ms later at the least.
    std::thread::sleep(Duration::from_millis(30));
    // Refused by the connection's own checks (a header that disagrees with the body): its
    // thread answers once the keeper gives the connection back, not after the handler.
    let started = Instant::now();
    send_post(&mut conn, addr, &modern("tools/list", json!({})), &[LIST[0], "Mcp-Method: ping"]);
    assert_eq!(read_reply(&mut conn).unwrap().status, 400);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(200), "the refusal took {took:?}");
    assert_eq!(long.join().unwrap(), 200);
}
