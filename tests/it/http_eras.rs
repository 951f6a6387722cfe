//! Both eras over HTTP: legacy sessions live and die by their id (expiry, the cap, batches
//! only in 2025-03-26 sessions); modern requests are stateless and their headers must match
//! the body (`Mcp-Param-*` too, nested; an invalid `x-mcp-header` refuses its tool);
//! `input_required` state signed by one process is accepted by another.

use std::io::Write;
use std::time::Duration;

use baremcp::HttpOptions;
use serde_json::json;

use crate::http_harness::{
    Reply, connect, default_server, everything, initialize, modern, post, post_text, raw,
    read_reply, start, start_with,
};

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
    // No session: 400; an unknown one: 404 (each with the request's id); an unsupported
    // version header: 400.
    let missing = post(addr, call, &[]);
    assert_eq!((missing.status, missing.json()["id"].clone()), (400, json!(2)));
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
    // `Content-Length: 0` is no body: Python's `requests` sends it on every DELETE.
    let delete = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\n{with}\r\n\r\n");
    let empty = delete.replace("\r\n\r\n", "\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(raw(addr, empty.as_bytes()).unwrap().status, 204);
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
fn refusals_of_a_request_whose_id_was_read_echo_it() {
    let server = start(HttpOptions { max_sessions: 1, ..HttpOptions::default() });
    let addr = server.addr;
    let refused = |reply: Reply| (reply.status, reply.json()["id"].clone());
    // An unsupported MCP-Protocol-Version in a legacy session.
    let session = initialize(addr, "2025-11-25");
    let with = format!("Mcp-Session-Id: {session}");
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let reply = post(addr, ping, &[&with, "MCP-Protocol-Version: 1999-01-01"]);
    assert_eq!(refused(reply), (400, json!("p")));
    // A listen from a client that takes no event stream.
    let request = crate::http_streams::listen_taking_json(addr);
    assert_eq!(refused(raw(addr, request.as_bytes()).unwrap()), (406, json!(7)));
    // An initialize while the one session is in use (its GET stream is open).
    let mut conn = connect(addr);
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    conn.get_mut().write_all(get.as_bytes()).unwrap();
    assert_eq!(crate::http_harness::read_head(&mut conn).0, 200);
    assert_eq!(refused(post(addr, crate::http_harness::INITIALIZE, &[])), (503, json!(1)));
}

#[test]
fn an_id_that_cannot_be_read_is_null_before_2025_11_25_and_left_out_from_it_on() {
    let server = default_server();
    let addr = server.addr;
    // `None`: no `id` member; `Some(null)`: `"id":null`, the only form up to 2025-06-18.
    let id_of = |reply: &Reply| {
        let body = reply.json();
        assert!(body["error"]["code"].is_i64(), "{reply:?}");
        body.as_object().unwrap().get("id").cloned()
    };
    let bodies = ["{not json", "[]", "[1,2]", r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#];
    for (header, id) in [
        (None, Some(json!(null))),
        (Some("2024-11-05"), Some(json!(null))),
        (Some("2025-06-18"), Some(json!(null))),
        (Some("2025-11-25"), None),
        (Some("2026-07-28"), None),
    ] {
        let version = header.map(|v| format!("MCP-Protocol-Version: {v}"));
        let extra: Vec<&str> = version.iter().map(String::as_str).collect();
        for body in bodies {
            let reply = post(addr, body, &extra);
            assert_eq!((reply.status, id_of(&reply)), (400, id.clone()), "{header:?} {body}");
        }
        // Not UTF-8: a parse error, written the same way.
        let mut bytes = post_text(addr, "xy", &extra).into_bytes();
        let at = bytes.len() - 2;
        bytes[at] = 0xff;
        let reply = raw(addr, &bytes).unwrap();
        assert_eq!((reply.status, id_of(&reply)), (400, id.clone()), "{header:?} not UTF-8");
    }
    // A legacy session's own revision says so too, with no header: a batch refused by the
    // dispatching loop.
    for (version, id) in [("2025-06-18", Some(json!(null))), ("2025-11-25", None)] {
        let session = format!("Mcp-Session-Id: {}", initialize(addr, version));
        let reply = post(addr, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, &[&session]);
        assert_eq!((reply.status, id_of(&reply)), (400, id), "{version}");
    }
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
    let reply = post(addr, notes, &[&format!("Mcp-Session-Id: {old}")]);
    assert_eq!((reply.status, reply.header("content-type")), (202, None));
    // The same pipelined with a ping: the connection thread writes the 202, as the loop does.
    let mut conn = connect(addr);
    let with = format!("Mcp-Session-Id: {old}");
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    let both = post_text(addr, notes, &[&with]) + &post_text(addr, ping, &[&with]);
    conn.get_mut().write_all(both.as_bytes()).unwrap();
    let reply = read_reply(&mut conn).unwrap();
    assert_eq!((reply.status, reply.header("content-type"), reply.body.as_str()), (202, None, ""));
    assert_eq!(read_reply(&mut conn).unwrap().json()["id"], 9);
    let new = initialize(addr, "2025-11-25");
    let reply = post(addr, batch, &[&format!("Mcp-Session-Id: {new}")]);
    assert_eq!((reply.status, reply.json()["error"]["code"].clone()), (400, json!(-32600)));
}

#[test]
fn a_message_no_notification_nor_response_is_refused_with_400_and_no_id() {
    let server = default_server();
    let addr = server.addr;
    let with = format!("Mcp-Session-Id: {}", initialize(addr, "2025-11-25"));
    // What the server can take is accepted: a notification, a response to a request of its
    // own (none waits: it is ignored, as stdio ignores it).
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let response = r#"{"jsonrpc":"2.0","id":"q","result":{}}"#;
    for taken in [notification, response] {
        assert_eq!(post(addr, taken, &[&with]).status, 202, "{taken}");
    }
    // What it cannot take gets an HTTP error (2025-11-25 transports): a JSON-RPC error with no
    // id says why.
    let refused = [
        r#"{"foo":1}"#,
        r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":5}"#,
        r#"{"jsonrpc":"2.0","id":"q","result":{},"error":{"code":1,"message":"m"}}"#,
    ];
    let headers = [with.as_str(), "MCP-Protocol-Version: 2026-07-28"];
    for (body, header) in refused.iter().flat_map(|b| headers.iter().map(move |h| (b, h))) {
        let reply = post(addr, body, &[header]);
        let error = reply.json();
        assert_eq!(
            (reply.status, &error["id"], &error["error"]["code"]),
            (400, &json!(null), &json!(-32600)),
            "{body} {header}"
        );
    }
    // A malformed answer to the server's own request is refused too, yet the handler waiting
    // for it hears of it (as on stdio) rather than waiting on.
    let session = with.trim_start_matches("Mcp-Session-Id: ");
    let (mut stream, question) = crate::http_harness::ask_sampling(addr, session);
    let both = json!({"jsonrpc": "2.0", "id": question["id"], "result": {}, "error": {"code": 1, "message": "m"}});
    assert_eq!(post(addr, &both.to_string(), &[&with]).status, 400);
    let result = crate::http_harness::next_event(&mut stream);
    assert_eq!(result["id"], 9, "{result}");
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
    // A value that is not UTF-8 is opaque (RFC 9110 §5.5): a field no one reads costs
    // nothing, a mirrored one matches nothing (a header mismatch, with the request's id).
    let obs_text = |field: &str| {
        let text = post_text(addr, &call, &[v, "Mcp-Method: tools/call", field]);
        let bytes: Vec<u8> = text.bytes().map(|b| if b == b'~' { 0xe9 } else { b }).collect();
        raw(addr, &bytes).unwrap()
    };
    assert_eq!(obs_text("Mcp-Name: test_simple_text\r\nX-Note: caf~").status, 200);
    assert_eq!(code(&obs_text("Mcp-Name: test_simple_t~xt")), (400, -32020, json!(7)));
    for method in ["initialize", "ping", "unknown/method"] {
        let reply = post(addr, &modern(method, json!({})), &[v, &format!("Mcp-Method: {method}")]);
        assert_eq!(code(&reply), (404, -32601, json!(7)), "{method}");
    }
    // Without a session, a notification sent as 2026-07-28 is accepted (the revision defines
    // none on HTTP) and a response is not (its clients send none).
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
    assert_eq!(post(addr, notification, &[v, "Mcp-Method: notifications/progress"]).status, 202);
    let response = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
    assert_eq!(post(addr, response, &[v, "Mcp-Method: tools/call"]).status, 400);
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
fn a_modern_request_with_a_member_twice_or_a_version_no_string_hears_what_stdio_says() {
    let server = default_server();
    let addr = server.addr;
    let meta = |version: &str| {
        format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":{version},"io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        )
    };
    let answer = |method: &str, params: &str, version: &str| {
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{{params}}}}}"#);
        let headers =
            [&*format!("MCP-Protocol-Version: {version}"), &format!("Mcp-Method: {method}")];
        let reply = post(addr, &body, &[headers[0], headers[1], "Mcp-Name: test_simple_text"]);
        let error = &reply.json()["error"];
        (reply.status, error["code"].as_i64(), error["message"].clone(), reply.json()["id"].clone())
    };
    let good = meta(r#""2026-07-28""#);
    let twice = "params must not name a member twice";
    for (method, params) in [
        ("tools/list", format!(r#""cursor":"a","cursor":"b",{good}"#)),
        ("tools/list", format!("{good},{good}")),
        ("tools/call", format!(r#""name":"test_simple_text","name":"test_simple_text",{good}"#)),
        (
            "tools/call",
            format!(r#""name":"test_simple_text","arguments":{{}},"arguments":{{}},{good}"#),
        ),
    ] {
        let got = answer(method, &params, "2026-07-28");
        assert_eq!(got, (400, Some(-32602), json!(twice), json!(7)), "{params}");
    }
    // A version that is no string is a bad parameter (-32602), not a header mismatch, whatever
    // the header says.
    let not_a_string = "_meta io.modelcontextprotocol/protocolVersion must be a string";
    for (version, header) in
        [("5", "5"), ("null", "2026-07-28"), (r#"["2026-07-28"]"#, "2026-07-28")]
    {
        let got = answer("tools/list", &meta(version), header);
        assert_eq!(got, (400, Some(-32602), json!(not_a_string), json!(7)), "{version}");
    }
}

#[test]
fn input_required_state_signed_by_one_process_is_accepted_by_another_with_the_same_secret() {
    let a = start_with(HttpOptions::default(), || everything().state_secret("shared"));
    let b = start_with(HttpOptions::default(), || everything().state_secret("shared"));
    let c = start_with(HttpOptions::default(), || everything().state_secret("other"));
    let (mut call, headers) = elicitation_call();
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

#[test]
fn input_required_state_brought_back_after_its_ttl_is_refused() {
    let server = start_with(HttpOptions::default(), || {
        everything().state_secret("k").state_ttl(std::time::Duration::ZERO)
    });
    let (mut call, headers) = elicitation_call();
    let first = post(server.addr, &call.to_string(), &headers).json();
    call["params"]["requestState"] = first["result"]["requestState"].clone();
    call["params"]["inputResponses"] = json!({"elicitation-1": {"action": "decline"}});
    // Good for the second it was made in (expiry is counted in whole seconds), no longer.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let late = post(server.addr, &call.to_string(), &headers).json();
    assert_eq!(late["error"]["code"], -32602, "{late}");
    assert_eq!(late["error"]["message"], "invalid requestState: it has expired");
}

/// A 2026-07-28 call of `test_elicitation` from a client that can elicit, and its headers.
fn elicitation_call() -> (serde_json::Value, [&'static str; 3]) {
    let headers = [
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Method: tools/call",
        "Mcp-Name: test_elicitation",
    ];
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_elicitation", "arguments": {"message": "who?"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}});
    (call, headers)
}

/// A tool whose arguments are mirrored into headers: one nested (`o.deep`), one integer.
fn mirroring() -> baremcp::Server {
    let mut server = baremcp::Server::new("mirroring", "1");
    let schema = json!({"type": "object", "properties": {
        "o": {"type": "object", "properties": {
            "deep": {"type": "string", "x-mcp-header": "Deep"}
        }},
        "n": {"type": "integer", "x-mcp-header": "N"}
    }});
    let tool =
        baremcp::Tool::new("mirror", "Mirrors", schema, |_, _| Ok(baremcp::ToolOutput::text("ok")));
    server.add_tool(tool).unwrap();
    server
}

#[test]
fn a_nested_mirrored_argument_is_checked_and_each_refusal_says_why() {
    let server = start_with(HttpOptions::default(), mirroring);
    let heads = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: mirror"];
    // `arguments` as written (numbers past what serde_json holds stay as they are).
    let call = |arguments: &str, header: Option<&str>| {
        let body = modern("tools/call", json!({"name": "mirror", "arguments": "ARGS"}))
            .replace(r#""ARGS""#, arguments);
        let reply = post(server.addr, &body, &[&heads[..], header.as_slice()].concat());
        let message = reply.json()["error"]["message"].as_str().map(str::to_owned);
        (reply.status, reply.json()["error"]["code"].as_i64(), message)
    };
    let ok = (200, None, None);
    let refused = |why: &str| (400, Some(-32020), Some(why.to_owned()));
    let deep = r#"{"o":{"deep":"us"}}"#;
    assert_eq!(call(deep, Some("Mcp-Param-Deep: us")), ok);
    assert_eq!(
        call(deep, None),
        refused("the mcp-param-deep header is required: arguments.o.deep is set")
    );
    assert_eq!(
        call(deep, Some("Mcp-Param-Deep: eu")),
        refused("mcp-param-deep does not match arguments.o.deep")
    );
    // Absent or null along the path: no header, and none may come.
    for arguments in [r#"{}"#, r#"{"o":null}"#, r#"{"o":{}}"#, r#"{"o":{"deep":null}}"#] {
        assert_eq!(call(arguments, None), ok, "{arguments}");
        assert_eq!(
            call(arguments, Some("Mcp-Param-Deep: us")),
            refused("mcp-param-deep is sent but arguments.o.deep is not"),
            "{arguments}"
        );
    }
    assert_eq!(
        call(r#"{"o":{"deep":"x"}}"#, Some("Mcp-Param-Deep: =?base64?//4=?=")),
        refused("mcp-param-deep is not valid UTF-8 once decoded")
    );
    assert_eq!(call(r#"{"n":9007199254740991}"#, Some("Mcp-Param-N: 9007199254740991")), ok);
    let beyond = "arguments.n is out of the safe integer range a header carries \
                  (-(2^53-1) to 2^53-1)";
    for n in ["1e400", "9007199254740992", "-9007199254740992"] {
        let arguments = format!(r#"{{"n":{n}}}"#);
        assert_eq!(call(&arguments, Some(&format!("Mcp-Param-N: {n}"))), refused(beyond), "{n}");
        assert_eq!(call(&arguments, None), refused(beyond), "{n}");
    }
}

/// A tool whose `x-mcp-header` annotation breaks a rule of the Streamable HTTP transport is
/// refused at registration (clients would drop it, and the transport could not check it),
/// with each annotation at fault at its pointer; a nested one reached through `properties`
/// alone is registered.
#[test]
fn an_invalid_x_mcp_header_refuses_the_tool() {
    use baremcp::{Error, Server, Tool, ToolOutput};
    use serde_json::Value;
    let add = |properties: Value| {
        let noop = |_: &Value, _: &mut baremcp::Context| Ok(ToolOutput::text(""));
        let schema = json!({"type": "object", "properties": properties});
        Server::new("s", "1").add_tool(Tool::new("t", "T", schema, noop))
    };
    let refused = |properties: Value| match add(properties.clone()) {
        Err(Error::ParamHeader { tool, problems }) if tool == "t" => problems,
        other => panic!("{properties}: {other:?}"),
    };
    let header = |kind: Value, name: Value| json!({"type": kind, "x-mcp-header": name});
    for (kind, name, why) in [
        (json!("number"), json!("N"), "must be on an integer, string or boolean property"),
        (json!("object"), json!("N"), "must be on an integer, string or boolean property"),
        (json!("array"), json!("N"), "must be on an integer, string or boolean property"),
        (json!(["string", "integer"]), json!("N"), "must be on an integer, string or boolean"),
        (json!("string"), json!(""), "must not be empty"),
        (json!("string"), json!("a:b"), "\"a:b\" holds a character a header name may not"),
        (json!("string"), json!("a\nb"), "holds a character a header name may not"),
        (json!("string"), json!("é"), "holds a character a header name may not"),
        (json!("string"), json!(["N"]), "must be a string (the NAME of Mcp-Param-NAME)"),
    ] {
        let problems = refused(json!({"p": header(kind.clone(), name.clone())}));
        assert_eq!(problems.len(), 1, "{kind} {name}: {problems:?}");
        assert_eq!(problems[0].pointer, "/properties/p/x-mcp-header");
        assert!(problems[0].message.contains(why), "{kind} {name}: {problems:?}");
    }
    let twice = json!({"a": header(json!("string"), json!("Dup")), "b": header(json!("boolean"), json!("dup"))});
    let problems = refused(twice);
    assert_eq!(problems[0].pointer, "/properties/b/x-mcp-header");
    let in_items = json!({"l": {"type": "array", "items": header(json!("string"), json!("L"))}});
    let problems = refused(in_items);
    assert_eq!(problems[0].pointer, "/properties/l/items/x-mcp-header");
    let error = add(json!({"n": header(json!("number"), json!("N"))})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool \"t\": inputSchema has an invalid x-mcp-header: /properties/n/x-mcp-header: must be \
         on an integer, string or boolean property (\"type\" naming one of them, optionally with \
         \"null\"): \"type\" is \"number\""
    );
    let nested = json!({"o": {"type": "object", "properties": {
        "d": header(json!(["string", "null"]), json!("D"))
    }}});
    assert!(add(nested).is_ok());
}
