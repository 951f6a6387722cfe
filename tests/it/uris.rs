//! Resource URIs are URIs (MCP's schema says `format: "uri"` of each): a client's that is not
//! one is refused wherever the server receives it, before anything echoes it, and a
//! resource or template that is not one is refused at registration and by `baremcp check`.

use baremcp::{Contents, Error, FileRoot, Resource, ResourceTemplate, Server};
use serde_json::{Value, json};

use crate::files::ask;

fn request(id: u32, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn a_client_uri_that_is_not_a_uri_is_refused_in_read_subscribe_and_listen() {
    let root = crate::scratch("uris-raw");
    std::fs::write(root.join("with space.md"), "spaced").unwrap();
    std::fs::write(root.join("\u{e9}.md"), "accented").unwrap();
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    server.add_resource(Resource::new("mem://a", "a", |_| Ok(Contents::Text("a".into())))).unwrap();
    let r = root.display().to_string();
    let at = r.len() + 8;
    let refused = [
        (format!("file://{r}/with space.md"), format!("a raw space at byte {}", at + 4)),
        (format!("file://{r}/\u{e9}.md"), format!("a non-ASCII character ('\u{e9}') at byte {at}")),
        (format!("file://{r}/a\tb"), format!("a control character ('\\t') at byte {}", at + 1)),
        (format!("file://{r}/a<b"), format!("a raw `<` at byte {}", at + 1)),
        (
            format!("file://{r}/a%2"),
            format!("a `%` not followed by two hex digits at byte {}", at + 1),
        ),
        ("mem://a b".to_string(), "a raw space at byte 7".to_string()),
    ];
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    for (uri, why) in refused {
        let message = format!("uri is not a valid uri: {why}; percent-encode it");
        let params = json!({ "uri": uri });
        let listen =
            json!({"notifications": {"resourceSubscriptions": ["mem://a", uri]}, "_meta": meta});
        let replies = ask(
            &server,
            &[
                request(1, "resources/read", params.clone()),
                request(2, "resources/subscribe", params.clone()),
                request(3, "resources/unsubscribe", params),
                request(4, "subscriptions/listen", listen),
            ],
        );
        assert_eq!(replies.len(), 4, "{uri:?}: {replies:?}");
        for reply in &replies[..3] {
            let error = json!({"code": -32602, "message": message, "data": {"uri": uri}});
            assert_eq!(reply["error"], error, "{uri:?}");
        }
        let listen = format!("notifications.resourceSubscriptions[1] is not a valid uri: {why}");
        let error = json!({"code": -32602, "message": format!("{listen}; percent-encode it"), "data": {"uri": uri}});
        assert_eq!(replies[3]["error"], error, "{uri:?}");
    }
    // Spelled as the listing spells them, the same files are served.
    let replies = ask(&server, &[request(1, "resources/list", json!({}))]);
    let listed: Vec<&str> = replies[0]["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str().filter(|u| u.starts_with("file:")))
        .collect();
    assert_eq!(listed, [format!("file://{r}/with%20space.md"), format!("file://{r}/%C3%A9.md")]);
    let reads: Vec<Value> = listed
        .iter()
        .enumerate()
        .map(|(i, uri)| request(i as u32, "resources/read", json!({"uri": uri})))
        .collect();
    let texts: Vec<Value> =
        ask(&server, &reads).iter().map(|r| r["result"]["contents"][0]["text"].clone()).collect();
    assert_eq!(texts, ["spaced", "accented"]);
}

#[test]
fn a_resource_or_template_that_is_not_a_uri_is_refused_at_registration() {
    let resource = |uri: &str| Resource::new(uri, "r", |_| Ok(Contents::Text(String::new())));
    let cases = [
        ("relative/path", "no scheme: a uri starts with one, as `file:` or `https:`"),
        ("mf://has space", "a raw space at byte 8; percent-encode it"),
        ("mf://x/\u{e9}", "a non-ASCII character ('\u{e9}') at byte 7; percent-encode it"),
    ];
    for (uri, why) in cases {
        let refused = Server::new("t", "1").add_resource(resource(uri)).unwrap_err();
        assert_eq!(refused, Error::Uri { uri: uri.into(), why: why.into() });
        assert_eq!(refused.to_string(), format!("resource uri {uri:?} is not a valid uri: {why}"));
    }
    let template =
        |text: &str| ResourceTemplate::new(text, "t", |_, _| Ok(Contents::Text(String::new())));
    let cases = [
        ("mf://a b/{x}", "not a uri template: a raw space; percent-encode it"),
        (
            "{x}/plain",
            "not a uri template: no scheme: a uri starts with one, as `file:` or `https:`",
        ),
        ("mf://a/it's/{x}", "not a uri template: a raw `'` in \"mf://a/it's/\"; percent-encode it"),
    ];
    for (text, why) in cases {
        let refused = Server::new("t", "1").add_template(template(text)).unwrap_err();
        assert_eq!(refused, Error::Template { template: text.into(), why: why.into() });
    }
    let mut server = Server::new("t", "1");
    server.add_resource(resource("mf://a/it's%20fine")).unwrap();
    server.add_template(template("mf://a/{x}/{+rest}?q=1#top")).unwrap();
    // A `{+var}` that opens the template may bring the scheme itself (RFC 6570 reserved
    // expansion keeps its `:` and `/`).
    server.add_template(template("{+base}/readme")).unwrap();
}

#[test]
fn check_reports_a_manifest_resource_or_template_that_is_not_a_uri() {
    let manifest = crate::scratch("uris-check").join("uris.json");
    std::fs::write(
        &manifest,
        r#"{"resources": [
  {"uri": "relative/path", "name": "a", "text": "a"},
  {"uri": "mf://has space", "name": "b", "text": "b"}
], "resourceTemplates": [{"uriTemplate": "mf://a b/{x}", "name": "t", "run": {"argv": ["echo"]}}]}"#,
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["check", &manifest.to_string_lossy()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for problem in [
        "/resources/0/uri: not a valid uri: no scheme: a uri starts with one, as `file:` or `https:`",
        "/resources/1/uri: not a valid uri: a raw space at byte 8; percent-encode it",
        "/resourceTemplates/0/uriTemplate: not a uri template: a raw space; percent-encode it",
    ] {
        assert!(stderr.contains(problem), "{problem}\n{stderr}");
    }
}

/// A `{+var}` value is expanded with its `%XX` passed through (RFC 6570 reserved expansion):
/// completion sends a `%` as `%25`, so the expanded URI names the value completed.
#[test]
fn completion_of_a_reserved_variable_expands_to_the_value_it_names() {
    let root = crate::scratch("uris-complete");
    std::fs::write(root.join("%2F.txt"), "percent").unwrap();
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    let values = || baremcp::Completer::values(["a%2Fb", "c"]);
    let reserved =
        ResourceTemplate::new("mf://r/{+p}", "r", |_, _| Ok(Contents::Text(String::new())));
    server.add_template(reserved.complete("p", values())).unwrap();
    let simple = ResourceTemplate::new("mf://s/{p}", "s", |_, _| Ok(Contents::Text(String::new())));
    server.add_template(simple.complete("p", values())).unwrap();
    let r = root.display().to_string();
    let complete = |uri: String, name: &str, value: &str| {
        let params = json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": name, "value": value}});
        let reply = ask(&server, &[request(1, "completion/complete", params)]).remove(0);
        reply["result"]["completion"]["values"].clone()
    };
    let root_template = format!("file://{r}/{{+path}}");
    assert_eq!(complete(root_template.clone(), "path", ""), json!(["%252F.txt"]));
    assert_eq!(complete(root_template.clone(), "path", "%25"), json!(["%252F.txt"]));
    assert_eq!(complete(root_template, "path", "%2F"), json!([]));
    let read = request(1, "resources/read", json!({"uri": format!("file://{r}/%252F.txt")}));
    assert_eq!(ask(&server, &[read])[0]["result"]["contents"][0]["text"], "percent");
    // A name whose `[`, `#` or space reserved expansion would keep is sent as listing spells
    // it, and reads.
    for (name, sent) in
        [("a[1].txt", "a%5B1%5D.txt"), ("b#c#d.txt", "b%23c%23d.txt"), ("e f", "e%20f")]
    {
        std::fs::write(root.join(name), name).unwrap();
        let prefix = &name[..1];
        assert_eq!(complete(format!("file://{r}/{{+path}}"), "path", prefix), json!([sent]));
        let read = request(1, "resources/read", json!({"uri": format!("file://{r}/{sent}")}));
        assert_eq!(ask(&server, &[read])[0]["result"]["contents"][0]["text"], name);
    }
    assert_eq!(complete("mf://r/{+p}".into(), "p", "a%25"), json!(["a%252Fb"]));
    // A simple `{p}` expansion encodes `%` itself: its values are sent as they are.
    assert_eq!(complete("mf://s/{p}".into(), "p", "a%"), json!(["a%2Fb"]));
}
