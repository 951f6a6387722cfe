//! `--root` safety and scale: a secret file beside the root is never served however it is
//! asked for, and a large tree lists completely, in order, page by page.

use std::os::unix::fs::symlink;

use baremcp::{FileRoot, Server};
use serde_json::{Value, json};

/// Sends `requests` (after a legacy initialize) and returns the replies.
fn ask(server: &Server, requests: &[Value]) -> Vec<Value> {
    let mut input = String::from(
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n",
    );
    for request in requests {
        input.push_str(&request.to_string());
        input.push('\n');
    }
    let mut output = Vec::new();
    server.serve(&mut input.as_bytes(), &mut output).unwrap();
    String::from_utf8(output).unwrap().lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_file_outside_the_root_is_never_served() {
    let base = crate::scratch("outside");
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(base.join("secret.txt"), "TOP SECRET").unwrap();
    std::fs::write(root.join("ok.txt"), "fine").unwrap();
    symlink(base.join("secret.txt"), root.join("link")).unwrap();
    symlink("../../secret.txt", root.join("sub/relative-link")).unwrap();
    symlink(&base, root.join("sub/up")).unwrap();

    let mut server = Server::new("t", "1");
    server.add_root(FileRoot::new(&root, true, 1 << 20).unwrap());
    let r = root.display().to_string();
    let b = base.display().to_string();
    let attempts = [
        format!("file://{b}/secret.txt"),
        format!("file://{r}/../secret.txt"),
        format!("file://{r}/sub/../../secret.txt"),
        format!("file://{r}/%2e%2e/secret.txt"),
        format!("file://{r}/%2E%2E%2Fsecret.txt"),
        format!("file://{r}%2f..%2fsecret.txt"),
        format!("file://{r}/./../secret.txt"),
        format!("file://{r}//../secret.txt"),
        format!("file://{r}/link"),
        format!("file://{r}/sub/relative-link"),
        format!("file://{r}/sub/up/secret.txt"),
        format!("file://{r}/ok.txt%00/../../secret.txt"),
        format!("file://localhost{b}/secret.txt"),
        format!("{b}/secret.txt"),
        format!("file:{b}/secret.txt"),
        "file:///proc/self/root/etc/passwd".to_string(),
        format!("file://{r}/ok.txt/../../secret.txt"),
    ];
    let requests: Vec<Value> = attempts
        .iter()
        .enumerate()
        .map(|(i, uri)| json!({"jsonrpc": "2.0", "id": i + 1, "method": "resources/read", "params": {"uri": uri}}))
        .collect();
    let replies = ask(&server, &requests);
    assert_eq!(replies.len(), attempts.len());
    for (uri, reply) in attempts.iter().zip(&replies) {
        assert_eq!(reply["error"]["code"], -32002, "{uri} was served: {reply}");
        assert!(!reply.to_string().contains("TOP SECRET"), "{uri} leaked the secret");
    }
    // The listing does not show the escaping links, and the root itself still works.
    let listed = ask(&server, &[json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"})]);
    let names: Vec<&str> =
        listed[0]["result"]["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ok.txt"]);
    let ok = ask(
        &server,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": format!("file://{r}/ok.txt")}}),
        ],
    );
    assert_eq!(ok[0]["result"]["contents"][0]["text"], "fine");
}

#[test]
fn a_large_tree_lists_completely_in_pages() {
    let root = crate::scratch("large-tree");
    let mut expected = Vec::new();
    for d in 0..25 {
        let dir = root.join(format!("d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f:03}.txt")), "x").unwrap();
            expected.push(format!("d{d:02}/f{f:03}.txt"));
        }
    }
    expected.sort();
    let mut server = Server::new("t", "1");
    server.add_root(FileRoot::new(&root, false, 1 << 20).unwrap());
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = json!({});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let reply =
            ask(&server, &[json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params})]).remove(0);
        let page = reply["result"]["resources"].as_array().unwrap();
        assert!(page.len() <= 1000, "a page holds at most 1000 files by default");
        names.extend(page.iter().map(|r| r["name"].as_str().unwrap().to_string()));
        pages += 1;
        match reply["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, expected);
}
