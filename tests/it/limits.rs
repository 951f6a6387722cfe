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
    format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#)
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
    let input = [listen(a), listen(b), cancel(c), listen(a), cancel(a), listen(a), listen(b)].join("\n");
    let want = [acknowledged(a), acknowledged(b), already_open(a), acknowledged(a), already_open(b)].join("\n");
    assert_eq!(serve(&[], &input), want + "\n");
}
