//! HTTP rules the hostile campaign of issue 25 checked: HEAD answered without a body on every
//! path, `Allow` on every 405, CORS for the origins `--allow-origin` names, and who a caller
//! is (a JWT subject, a named static token) bound to legacy sessions and to `requestState`.
//! Session ids stay out of the logs.

use std::io::Write;
use std::net::SocketAddr;

use baremcp::HttpOptions;
use serde_json::{Value, json};

use crate::http_harness::{
    Killed, connect, initialize, modern, post, raw, read_head, read_reply, start,
};

/// Unpadded base64url, as JWTs write their parts.
fn b64url(bytes: &[u8]) -> String {
    baremcp::encoding::base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

/// The `Authorization` header of an HS256 JWT for `sub`, signed with the server's secret.
fn bearer_jwt(sub: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let claims = json!({"sub": sub, "exp": now.as_secs() + 600});
    let signing =
        format!("{}.{}", b64url(br#"{"alg":"HS256"}"#), b64url(claims.to_string().as_bytes()));
    let mac =
        baremcp::__private::hs256(b"jwt-secret-of-thirty-two-bytes-at-least", signing.as_bytes());
    format!("Authorization: Bearer {signing}.{}", b64url(&mac))
}

/// A server authenticating with the token file `tokens` and HS256 JWTs, with RFC 9728
/// metadata.
fn authenticated(name: &str, tokens: &str) -> crate::http_harness::Running {
    let dir = crate::scratch(name);
    std::fs::write(dir.join("tokens"), tokens).unwrap();
    std::fs::write(dir.join("secret"), "jwt-secret-of-thirty-two-bytes-at-least").unwrap();
    start(HttpOptions {
        auth_token_file: Some(dir.join("tokens")),
        jwt_secret_file: Some(dir.join("secret")),
        resource_metadata_url: Some(
            "https://mcp.example/.well-known/oauth-protected-resource/mcp".into(),
        ),
        authorization_servers: vec!["https://auth.example".into()],
        ..HttpOptions::default()
    })
}

/// Sends `request` on `conn` and reads the answer's head; its `Content-Length`.
fn head_answer(conn: &mut std::io::BufReader<std::net::TcpStream>, request: &str) -> (u16, usize) {
    conn.get_mut().write_all(request.as_bytes()).unwrap();
    let (status, head) = read_head(conn);
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_string))
        .map_or(0, |n| n.trim().parse().unwrap());
    (status, length)
}

#[test]
fn head_gets_no_body_on_any_path_and_the_connection_stays_in_step() {
    let server = authenticated("http-head", "ann token-ann\n");
    let addr = server.addr;
    let mut conn = connect(addr);
    let auth = "Authorization: Bearer token-ann";
    let paths = [
        (format!("HEAD /mcp HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n\r\n"), 405),
        (format!("HEAD /mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n"), 401),
        (format!("HEAD /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n"), 404),
        (
            format!("HEAD /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: https://evil.example\r\n\r\n"),
            403,
        ),
        (
            format!("HEAD /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: {addr}\r\n\r\n"),
            200,
        ),
    ];
    for (request, expected) in &paths {
        let (status, length) = head_answer(&mut conn, request);
        assert_eq!(status, *expected, "{request}");
        assert!(length > 0, "a HEAD answer says how long the GET answer is: {request}");
    }
    // Had any of them carried its body, this would read it as the next status line.
    let get = format!("GET /elsewhere HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    conn.get_mut().write_all(get.as_bytes()).unwrap();
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["message"], "no such endpoint: MCP is served at /mcp");
}

#[test]
fn a_head_refused_while_its_head_is_read_gets_no_body_either() {
    let server = authenticated("http-head-refused", "ann token-ann\n");
    let addr = server.addr;
    // A NUL in a header value, a version not served, a target that is not a path: each
    // refused once the request line said HEAD.
    let cases = [
        (
            format!("HEAD /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/\0plain\r\n\r\n")
                .into_bytes(),
            400,
        ),
        (format!("HEAD /mcp HTTP/2.0\r\nHost: {addr}\r\n\r\n").into_bytes(), 505),
        (format!("HEAD mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes(), 400),
        // A request line past what is read: 414 (RFC 9112 §3), not 431 as a long field is.
        (
            format!("HEAD /{} HTTP/1.1\r\nHost: {addr}\r\n\r\n", "a".repeat(20_000)).into_bytes(),
            414,
        ),
    ];
    for (bytes, expected) in cases {
        let mut conn = connect(addr);
        conn.get_mut().write_all(&bytes).unwrap();
        let (status, head) = read_head(&mut conn);
        assert_eq!(status, expected, "{head}");
        // Each status has its reason phrase (RFC 9110 §15).
        assert!(!head.contains(" Unknown"), "{head}");
        // The connection closes after the refusal: whatever follows the head is a body.
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut conn, &mut rest).unwrap();
        assert!(rest.is_empty(), "a HEAD answer carried {:?}", String::from_utf8_lossy(&rest));
    }
}

#[test]
fn metadata_answers_get_and_head_and_names_them_in_its_405() {
    let server = authenticated("http-metadata-allow", "token-x\n");
    let addr = server.addr;
    let request = |method: &str| {
        let path = "/.well-known/oauth-protected-resource/mcp";
        raw(addr, format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap()
    };
    for method in ["POST", "DELETE", "PUT"] {
        let refused = request(method);
        assert_eq!(refused.status, 405, "{method}");
        assert_eq!(refused.header("allow"), Some("GET, HEAD"), "{method}");
    }
    assert_eq!(request("GET").json()["resource"], "https://mcp.example/mcp");
}

/// A 2026-07-28 `test_elicitation` call by `auth`, with `state` and an answer when retried.
fn elicit(addr: SocketAddr, auth: &str, state: Option<&Value>) -> Value {
    let headers = [
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: test_elicitation",
        auth,
    ];
    let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_elicitation", "arguments": {"message": "who?"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}});
    if let Some(state) = state {
        call["params"]["requestState"] = state.clone();
        call["params"]["inputResponses"] = json!({"elicitation-1": {"action": "accept",
            "content": {"username": "ann", "email": "a@example.com"}}});
    }
    post(addr, &call.to_string(), &headers).json()
}

#[test]
fn request_state_is_refused_to_another_caller() {
    let server = authenticated("http-state-principal", "ann token-ann\nbob token-bob\n");
    let addr = server.addr;
    for (ann, bob) in [
        (bearer_jwt("ann"), bearer_jwt("bob")),
        ("Authorization: Bearer token-ann".into(), "Authorization: Bearer token-bob".into()),
        // A JWT whose subject is ann is not the holder of the token named ann.
        (bearer_jwt("ann"), "Authorization: Bearer token-ann".into()),
    ] {
        let first = elicit(addr, &ann, None);
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        let state = &first["result"]["requestState"];
        let replayed = elicit(addr, &bob, Some(state));
        assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
        assert_eq!(
            replayed["error"]["message"], "invalid requestState: it belongs to another caller",
            "{replayed}"
        );
        let retried = elicit(addr, &ann, Some(state));
        assert_eq!(retried["result"]["resultType"], "complete", "{retried}");
    }
}

/// A 2026-07-28 request declaring the tasks extension, sent with `auth`.
fn with_tasks(addr: SocketAddr, auth: &str, method: &str, params: Value) -> Value {
    let mut message: Value = serde_json::from_str(&modern(method, params)).unwrap();
    let extension = json!({"io.modelcontextprotocol/tasks": {}});
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"] =
        extension;
    let mut headers = vec!["MCP-Protocol-Version: 2026-07-28", auth];
    let method_header = format!("Mcp-Method: {method}");
    headers.push(&method_header);
    let params = &message["params"];
    let name = params["name"].as_str().or(params["taskId"].as_str());
    let name = name.map(|n| format!("Mcp-Name: {n}"));
    headers.extend(name.as_deref());
    post(addr, &message.to_string(), &headers).json()
}

#[test]
fn a_task_is_found_only_by_the_caller_that_started_it() {
    let server = authenticated("http-task-owner", "ann token-ann\nbob token-bob\n");
    let addr = server.addr;
    let (ann, bob) = ("Authorization: Bearer token-ann", "Authorization: Bearer token-bob");
    let call = json!({"name": "slow_compute", "arguments": {"seconds": 30}});
    let started = with_tasks(addr, ann, "tools/call", call);
    let id = started["result"]["taskId"].as_str().expect("a task").to_string();
    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let refused = with_tasks(addr, bob, method, json!({"taskId": id}));
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        assert!(refused["error"]["message"].as_str().unwrap().starts_with("unknown task"));
    }
    let got = with_tasks(addr, ann, "tasks/get", json!({"taskId": id}));
    assert_eq!(got["result"]["status"], "working", "{got}");
    let cancelled = with_tasks(addr, ann, "tasks/cancel", json!({"taskId": id}));
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    // The call that became a task is counted as a call of its tool.
    let scrape = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n{ann}\r\n\r\n");
    let metrics = raw(addr, scrape.as_bytes()).unwrap().body;
    let series = "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",\
                  gen_ai_tool_name=\"slow_compute\"} 1";
    assert!(metrics.contains(series), "{metrics}");
}

#[test]
fn each_static_token_is_its_own_principal_for_sessions() {
    let server = authenticated("http-token-sessions", "# two users\nann token-ann\ntoken-bob\n");
    let addr = server.addr;
    let init = crate::http_harness::INITIALIZE;
    let as_ann = "Authorization: Bearer token-ann";
    let as_bob = "Authorization: Bearer token-bob";
    let opened = post(addr, init, &[as_ann]);
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = format!("Mcp-Session-Id: {}", opened.header("mcp-session-id").unwrap());
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    assert_eq!(post(addr, ping, &[as_bob, &session]).status, 404, "bob cannot use ann's");
    let delete = |auth: &str| {
        let request =
            format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{auth}\r\n{session}\r\n\r\n");
        raw(addr, request.as_bytes()).unwrap().status
    };
    assert_eq!(delete(as_bob), 404, "bob cannot delete ann's");
    assert_eq!(post(addr, ping, &[as_ann, &session]).json()["id"], 2);
    assert_eq!(delete(as_ann), 204);
}

#[test]
fn an_allowed_origin_gets_cors_and_a_preflight_answer() {
    let server = start(HttpOptions {
        allow_origins: vec!["https://app.example".into()],
        ..HttpOptions::default()
    });
    let addr = server.addr;
    let preflight = |origin: &str| {
        let request = format!(
            "OPTIONS /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: {origin}\r\n\
             Access-Control-Request-Method: POST\r\n\
             Access-Control-Request-Headers: content-type, Authorization, mcp-protocol-version, \
             mcp-param-region, x-evil\r\n\r\n"
        );
        raw(addr, request.as_bytes()).unwrap()
    };
    let answer = preflight("https://app.example");
    assert_eq!(answer.status, 204, "{answer:?}");
    assert_eq!(answer.header("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(answer.header("access-control-allow-methods"), Some("GET, POST, DELETE"));
    assert_eq!(
        answer.header("access-control-allow-headers"),
        Some("content-type, Authorization, mcp-protocol-version, mcp-param-region")
    );
    assert!(answer.header("access-control-max-age").is_some());
    assert_eq!(preflight("https://evil.example").status, 403);
    // A loopback page is served, but a browser lets it read nothing: it is not listed.
    assert_eq!(preflight("http://localhost:3000").status, 405);

    let list = modern("tools/list", json!({}));
    let v = "MCP-Protocol-Version: 2026-07-28";
    let m = "Mcp-Method: tools/list";
    let allowed = post(addr, &list, &[v, m, "Origin: https://app.example"]);
    assert_eq!(allowed.status, 200);
    let named = |reply: &crate::http_harness::Reply, name: &str| {
        reply.headers.iter().filter(|(n, _)| n == name).count()
    };
    assert_eq!(named(&allowed, "access-control-allow-origin"), 1, "{allowed:?}");
    assert_eq!(allowed.header("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(allowed.header("vary"), Some("Origin"));
    assert_eq!(
        allowed.header("access-control-expose-headers"),
        Some("Mcp-Session-Id, WWW-Authenticate")
    );
    let local = post(addr, &list, &[v, m, "Origin: http://localhost:3000"]);
    assert_eq!((local.status, local.header("access-control-allow-origin")), (200, None));
    assert_eq!(post(addr, &list, &[v, m, "Origin: https://evil.example"]).status, 403);
    // A legacy session's id is readable by the page.
    let opened = post(addr, crate::http_harness::INITIALIZE, &["Origin: https://app.example"]);
    assert!(opened.header("mcp-session-id").is_some());
    assert_eq!(opened.header("access-control-allow-origin"), Some("https://app.example"));
    assert_eq!(named(&opened, "access-control-allow-origin"), 1, "{opened:?}");
    // An event stream's head carries them too.
    let session = format!("Mcp-Session-Id: {}", opened.header("mcp-session-id").unwrap());
    let progress = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"t"}}}"#;
    let streamed = post(addr, progress, &[&session, "Origin: https://app.example"]);
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    assert_eq!(named(&streamed, "access-control-allow-origin"), 1, "{streamed:?}");
    assert_eq!(streamed.header("vary"), Some("Origin"));
}

#[test]
fn logs_name_a_session_by_a_short_prefix_only() {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"));
    command.args(["--http", "127.0.0.1:0", "--log-level", "info"]);
    let (child, addr, log) = crate::http_harness::spawn_reporting(command);
    let server = Killed(child);
    let session = initialize(addr, "2025-11-25");
    let delete =
        format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {session}\r\n\r\n");
    assert_eq!(raw(addr, delete.as_bytes()).unwrap().status, 204);
    // A thread reads the lines off the pipe. The DELETE's are written before its answer;
    // the access line of `initialize`, which the loop answered itself, when its connection
    // thread next wakes (within a tick).
    let (tagged, ended) = (
        format!("session={}", &session[..8]),
        format!("session {} ended by the client", &session[..8]),
    );
    let logged = || {
        let log = log.lock().unwrap();
        log.contains(&tagged) && log.contains(&ended)
    };
    let started = std::time::Instant::now();
    while !logged() && started.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(server);
    let log = log.lock().unwrap().clone();
    assert!(log.contains(&tagged), "{log}");
    assert!(log.contains(&ended), "{log}");
    assert!(!log.contains(&session), "the whole id is in the log:\n{log}");
}
