//! The server's bounds and the cases no golden transcript can hold (lone-surrogate ids, which
//! `replay` cannot read as JSON; thousands of lines): each served in process from a string.

/// The `_meta` every 2026-07-28 request here carries.
const MODERN: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// Serves `input` with the built-in catalog and the command-line flags `args`; the output.
fn serve(args: &[&str], input: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let server = crate::transcripts::server_for(&args);
    let mut out = Vec::new();
    server.serve(&mut input.as_bytes(), &mut out).expect("serve over buffers cannot fail");
    String::from_utf8(out).expect("the server writes UTF-8")
}

fn listen(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{{}},{MODERN}}}}}"#
    )
}

fn cancel(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
    )
}

fn acknowledged(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{{"_meta":{{"io.modelcontextprotocol/subscriptionId":{id}}},"notifications":{{}}}}}}"#
    )
}

fn already_open(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"a subscription with this id is already open"}}}}"#
    )
}

/// Distinct lone surrogates are distinct ids: each opens its own stream, is echoed as sent
/// (a `Value` would make it `null`), and a cancel ends only its own.
#[test]
fn lone_surrogate_ids_are_told_apart_and_echoed() {
    let (a, b, c) = (r#""\ud800""#, r#""\udc00""#, r#""\udfff""#);
    let input =
        [listen(a), listen(b), cancel(c), listen(a), cancel(a), listen(a), listen(b)].join("\n");
    let want =
        [acknowledged(a), acknowledged(b), already_open(a), acknowledged(a), already_open(b)]
            .join("\n");
    assert_eq!(serve(&[], &input), want + "\n");
}

fn listen_to(id: u32, uris: &[String]) -> String {
    let uris = serde_json::to_string(uris).unwrap();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{{"resourceSubscriptions":{uris}}},{MODERN}}}}}"#
    )
}

/// The replies to requests (lines with an `id` and no `method`), in order.
fn replies(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|m| m.get("method").is_none())
        .collect()
}

/// At most 1 024 streams are open at once: one more is refused with its id, and once one
/// closes another may open.
#[test]
fn open_streams_are_capped() {
    let mut input: Vec<String> = (0..1025).map(|n| listen(&n.to_string())).collect();
    input.extend([cancel("7"), listen("7"), listen("9999")]);
    let out = serve(&[], &input.join("\n"));
    let acks = out.lines().filter(|l| l.contains("acknowledged")).count();
    assert_eq!(acks, 1025, "1024 streams, then 7 again after its cancel");
    let refused =
        r#"{"code":-32602,"message":"too many open subscriptions/listen streams (at most 1024)"}"#;
    assert!(out.contains(&format!(r#"{{"jsonrpc":"2.0","id":1024,"error":{refused}}}"#)), "{out}");
    assert!(
        out.ends_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":9999,\"error\":{refused}}}\n")),
        "{out}"
    );
}

/// A URI longer than 8 KiB cannot be subscribed, and what one session's subscriptions keep
/// (legacy and each stream's) totals at most 256 KiB: past either a subscribe or a listen is
/// refused, and a cancel gives its bytes back.
#[test]
fn resource_subscriptions_are_capped_in_bytes() {
    let root = crate::fixture("tree").canonicalize().unwrap();
    let hello = format!("file://{}/hello.txt", root.display());
    // A URI of exactly `len` bytes.
    let sized = |n: usize, len: usize| {
        let uri = format!("file:///nowhere/{n}/");
        uri.clone() + &"x".repeat(len - uri.len())
    };
    let subscribe = |id: u32, uri: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/subscribe","params":{{"uri":"{uri}"}}}}"#
        )
    };
    // Each subscription keeps about 3 × its URI + its stream's id + 512 bytes, and a stream
    // its id + 128: one stream of 11 of these fills the 256 KiB to within 28 bytes.
    let full: Vec<String> = (0..11).map(|n| sized(n, 7768)).collect();
    let input = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#.to_string(),
        subscribe(1, &sized(0, 8193)),
        listen_to(2, &[sized(0, 8193)]),
        listen_to(3, &full),
        subscribe(4, &hello),
        cancel("3"),
        subscribe(5, &hello),
        listen_to(6, &full),
        listen_to(7, &full[1..]),
    ];
    let out = serve(&["--root", root.to_str().unwrap()], &input.join("\n"));
    let replies = replies(&out);
    let errors: Vec<_> =
        replies.iter().map(|r| (r["id"].clone(), r["error"]["message"].clone())).collect();
    use serde_json::json;
    let too_long = json!("resource uri too long to subscribe: 8193 bytes (at most 8192)");
    let too_large =
        json!("resource subscriptions too large (they would keep more than 262144 bytes)");
    assert_eq!(
        errors,
        [
            (json!(0), json!(null)),
            (json!(1), too_long.clone()),
            (json!(2), too_long),
            (json!(4), too_large.clone()),
            (json!(5), json!(null)),
            (json!(6), too_large),
        ],
        "{out}"
    );
    assert_eq!(out.lines().filter(|l| l.contains("acknowledged")).count(), 2, "streams 3 and 7");
}

/// Opening and closing thousands of streams whose ids have escapes costs a lookup each, not a
/// walk over the others decoding each open id (10 000 such listens took over 6 s in a
/// release build).
#[test]
fn stream_ids_are_found_without_a_scan() {
    let ids: Vec<String> = (0..1000).map(|n| format!(r#""\u0073{n}""#)).collect();
    let mut input = Vec::new();
    for round in 0..10 {
        input.extend(ids.iter().map(|id| listen(id)));
        if round < 9 {
            input.extend(ids.iter().map(|id| cancel(id)));
        }
    }
    let started = std::time::Instant::now();
    let out = serve(&[], &input.join("\n"));
    assert_eq!(out.lines().count(), 10_000, "every listen acknowledged, none refused");
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
}

/// A batch holds at most 1 024 messages: one more and it is refused whole, before any runs.
#[test]
fn batches_hold_at_most_1024_messages() {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#;
    let batch = |n: usize| {
        let pings: Vec<String> =
            (1..=n).map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)).collect();
        format!("[{}]", pings.join(","))
    };
    let out = serve(&[], &[init.to_string(), batch(1024), batch(1025)].join("\n"));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[1].matches(r#""result":{}"#).count(), 1024);
    assert_eq!(
        lines[2],
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request","data":"a batch holds at most 1024 messages"}}"#
    );
}

/// While a handler waits on the client, at most 1 024 lines wait with it: the rest are
/// answered at once ("server busy", with their ids), and the queued ones in order after it.
#[test]
fn lines_read_during_a_wait_are_bounded() {
    let mut input = vec![
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"ask_twice"}}"#.to_string(),
    ];
    input.extend((1..=1100).map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#)));
    input.push(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call"}}"#
            .to_string(),
    );
    let server = crate::library_server::server(&[]);
    let mut out = Vec::new();
    server.serve(&mut input.join("\n").as_bytes(), &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let busy: Vec<u64> = replies(&out)
        .iter()
        .filter(|r| r["error"]["message"].as_str().is_some_and(|m| m.starts_with("server busy")))
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(busy, (1025..=1100).collect::<Vec<_>>());
    let served = out.matches(r#""result":{}"#).count();
    assert_eq!(served, 1024, "the queued pings are served after the cancelled call");
}
