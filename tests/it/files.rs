//! `--root` safety, scale and watching: a secret file beside the root is never served however
//! it is asked for, a large tree lists completely, in order, page by page, and a subscribed
//! file's changes are notified, by the library loop and by the binary while the client is
//! quiet.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use baremcp::{FileRoot, Server};
use serde_json::{Value, json};

/// Sends `requests` (after a legacy initialize) and returns the replies.
pub(crate) fn ask(server: &Server, requests: &[Value]) -> Vec<Value> {
    let mut input = String::from(
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}\n",
    );
    for request in requests {
        input.push_str(&request.to_string());
        input.push('\n');
    }
    let mut output = Vec::new();
    server.serve(&mut input.as_bytes(), &mut output).unwrap();
    String::from_utf8(output)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
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
    server.add_directory(FileRoot::new(&root, true, 1 << 20).unwrap()).unwrap();
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
        // A path without a scheme is no URI at all: refused as such, before any lookup.
        let code = if uri.starts_with("file:") { -32002 } else { -32602 };
        assert_eq!(reply["error"]["code"], code, "{uri} was served: {reply}");
        assert!(!reply.to_string().contains("TOP SECRET"), "{uri} leaked the secret");
    }
    // The listing does not show the escaping links, and the root itself still works.
    let listed = ask(&server, &[json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list"})]);
    let names: Vec<&str> = listed[0]["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ok.txt"]);
    let ok = ask(
        &server,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": format!("file://{r}/ok.txt")}}),
        ],
    );
    assert_eq!(ok[0]["result"]["contents"][0]["text"], "fine");
}

/// A root with `.env` and `.ssh/id_rsa`, and links to them under plain names, as the library
/// serves it: a page at a time when `page_size` is given.
fn links_to_hidden(name: &str, include_hidden: bool, page_size: usize) -> (Server, String) {
    let root = crate::scratch(name);
    std::fs::create_dir_all(root.join(".ssh")).unwrap();
    std::fs::write(root.join(".env"), "SECRET=1").unwrap();
    std::fs::write(root.join(".ssh/id_rsa"), "KEY").unwrap();
    std::fs::write(root.join("ok.txt"), "fine").unwrap();
    symlink(".env", root.join("config")).unwrap();
    symlink(".ssh", root.join("keys")).unwrap();
    symlink("config", root.join("config2")).unwrap();
    let mut server = Server::new("t", "1").page_size(page_size);
    server.add_directory(FileRoot::new(&root, include_hidden, 1 << 20).unwrap()).unwrap();
    (server, root.display().to_string())
}

/// Every name `resources/list` shows, page after page, and what completing each of
/// `prefixes` suggests.
fn shown(server: &Server, r: &str, prefixes: &[&str]) -> (Vec<String>, Vec<Value>) {
    let mut names = Vec::new();
    let mut params = json!({});
    loop {
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params});
        let reply = ask(server, &[list]).remove(0);
        for listing in reply["result"]["resources"].as_array().unwrap() {
            names.push(format!("{} {}", listing["name"].as_str().unwrap(), listing["size"]));
        }
        match reply["result"]["nextCursor"].as_str() {
            Some(next) => params = json!({"cursor": next}),
            None => break,
        }
    }
    let template = json!({"type": "ref/resource", "uri": format!("file://{r}/{{+path}}")});
    let completions = prefixes
        .iter()
        .map(|value| {
            let params = json!({"ref": template, "argument": {"name": "path", "value": value}});
            let complete = json!({"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": params});
            ask(server, &[complete]).remove(0)["result"]["completion"]["values"].clone()
        })
        .collect();
    (names, completions)
}

/// A symlink shows no more than what it leads to: links to a dot-file or into a dot-directory
/// are neither listed (on any page), completed, read nor watched, unless hidden files are
/// served, and then all of these serve them alike.
#[test]
fn a_link_to_a_hidden_file_is_as_hidden_as_the_file() {
    let (server, r) = links_to_hidden("links-to-hidden", false, 1);
    let (names, completions) = shown(&server, &r, &["", "keys/", "c"]);
    assert_eq!(names, ["ok.txt 4"]);
    assert_eq!(completions, [json!(["ok.txt"]), json!([]), json!([])]);
    for path in ["config", "config2", "keys/id_rsa"] {
        let uri = format!("file://{r}/{path}");
        for method in ["resources/read", "resources/subscribe"] {
            let request =
                json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"uri": uri}});
            let reply = ask(&server, &[request]).remove(0);
            assert_eq!(reply["error"]["code"], -32002, "{method} {path}: {reply}");
        }
    }
    // A 2026-07-28 stream naming a link is told nothing when the hidden file changes, while
    // one naming a served file is (so the look did happen).
    let (config, ok) = (format!("file://{r}/config"), format!("file://{r}/ok.txt"));
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let filter = json!({"resourceSubscriptions": [config, ok]});
    let line = |value: Value| format!("{value}\n").into_bytes();
    let edit = r.clone();
    let chunks: Vec<Chunk> = vec![
        (
            Box::new(|| {}),
            [
                line(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})),
                line(json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"notifications": filter, "_meta": meta}})),
            ]
            .concat(),
        ),
        (
            Box::new(move || {
                std::fs::write(format!("{edit}/.env"), "SECRET=2, longer").unwrap();
                std::fs::write(format!("{edit}/ok.txt"), "fine, longer").unwrap();
            }),
            line(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})),
        ),
    ];
    let mut output = Vec::new();
    server.serve(&mut BufReader::new(Chunks(chunks)), &mut output).unwrap();
    let told: Vec<String> = String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["method"] == "notifications/resources/updated")
        .map(|v| v["params"]["uri"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(told, [ok]);

    let (server, r) = links_to_hidden("links-to-hidden-served", true, 1);
    let (names, completions) = shown(&server, &r, &["keys/", "c"]);
    assert_eq!(names, [".env 8", ".ssh/id_rsa 3", "config 8", "config2 8", "ok.txt 4"]);
    // `keys/` is a link to a directory, which listing and completion do not follow.
    assert_eq!(completions, [json!([]), json!(["config", "config2"])]);
    let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": format!("file://{r}/keys/id_rsa")}});
    assert_eq!(ask(&server, &[read]).remove(0)["result"]["contents"][0]["text"], "KEY");
}

/// Listing and completion agree on a symlink to a directory inside the root: neither follows
/// it (each file is shown once, under its real path), nor a link back up, while a read through
/// it still serves the file it names.
#[test]
fn a_link_to_a_directory_is_neither_listed_nor_completed_into() {
    let root = crate::scratch("links-to-directories");
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/a.txt"), "A").unwrap();
    symlink("notes", root.join("alias")).unwrap();
    symlink("..", root.join("notes/back")).unwrap();
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    let r = root.display().to_string();
    let prefixes = ["", "a", "alias/", "notes/", "notes/back/", "notes/back/notes/"];
    let (names, completions) = shown(&server, &r, &prefixes);
    assert_eq!(names, ["notes/a.txt 1"]);
    let expected = json!([["notes/"], [], [], ["notes/a.txt"], [], []]);
    assert_eq!(Value::Array(completions), expected);
    let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": format!("file://{r}/alias/a.txt")}});
    assert_eq!(ask(&server, &[read]).remove(0)["result"]["contents"][0]["text"], "A");
}

/// A root inside another (given before or after it) would list its files twice, under the
/// same URIs: the library refuses it, naming both, and the binary does not start.
#[test]
fn a_root_inside_another_is_refused_naming_both() {
    let base = crate::scratch("nested-roots");
    std::fs::create_dir_all(base.join("root/sub")).unwrap();
    std::fs::create_dir_all(base.join("root2")).unwrap();
    std::fs::write(base.join("root/sub/c.md"), "c").unwrap();
    let (outer, inner) = (base.join("root"), base.join("root/sub"));
    let said = format!(
        "directory {inner:?} is inside directory {outer:?}, also served: serve only one (the \
         inner one's files would be listed twice)"
    );
    for (first, second) in [(&inner, &outer), (&outer, &inner)] {
        let mut server = Server::new("t", "1");
        server.add_directory(FileRoot::new(first, false, 1 << 20).unwrap()).unwrap();
        let refused =
            server.add_directory(FileRoot::new(second, false, 1 << 20).unwrap()).unwrap_err();
        let nested = baremcp::Error::NestedDirectory { inner: inner.clone(), outer: outer.clone() };
        assert_eq!(refused, nested);
        assert_eq!(refused.to_string(), said);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
            .args([
                OsStr::new("--root"),
                first.as_os_str(),
                OsStr::new("--root"),
                second.as_os_str(),
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr, format!("baremcp: --root {}: {said}\n", second.display()));
    }
    // A sibling whose name merely starts the same is no nesting.
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&outer, false, 1 << 20).unwrap()).unwrap();
    server.add_directory(FileRoot::new(&base.join("root2"), false, 1 << 20).unwrap()).unwrap();
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
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = json!({});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let reply = ask(
            &server,
            &[json!({"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": params})],
        )
        .remove(0);
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

/// One piece of input, and what happens to the world just before it arrives.
type Chunk = (Box<dyn FnOnce()>, Vec<u8>);

/// Input that arrives in chunks: the loop waits for input between them, as it would for a
/// client.
struct Chunks(Vec<Chunk>);

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Ok(0);
        }
        let (before, chunk) = self.0.remove(0);
        before();
        assert!(chunk.len() <= buf.len(), "a chunk must fit the reader's buffer");
        buf[..chunk.len()].copy_from_slice(&chunk);
        Ok(chunk.len())
    }
}

/// Subscribes to `uri` (the file `file`), edits the file, removes it, unsubscribes and
/// recreates it, with a message between steps; returns what the server wrote: ids of replies
/// (marked when an error) and `updated URI` for notifications.
fn watched_session(server: &Server, uri: &str, file: &Path) -> Vec<String> {
    let line = |value: Value| format!("{value}\n").into_bytes();
    let (edit, remove, back) = (file.to_path_buf(), file.to_path_buf(), file.to_path_buf());
    let chunks: Vec<Chunk> = vec![
        (
            Box::new(|| {}),
            [
                line(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})),
                line(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": uri}})),
            ]
            .concat(),
        ),
        (Box::new(|| {}), line(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))),
        (Box::new(move || std::fs::write(edit, "two, longer").unwrap()), line(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))),
        (Box::new(move || std::fs::remove_file(remove).unwrap()), line(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))),
        (
            Box::new(|| {}),
            line(json!({"jsonrpc": "2.0", "id": 5, "method": "resources/unsubscribe", "params": {"uri": uri}})),
        ),
        (Box::new(move || std::fs::write(back, "back").unwrap()), line(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}))),
    ];
    let mut output = Vec::new();
    server.serve(&mut BufReader::new(Chunks(chunks)), &mut output).unwrap();
    String::from_utf8(output)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let what = if v["error"].is_null() { "" } else { " error" };
            v["id"].as_u64().map_or_else(
                || {
                    format!(
                        "{} {}",
                        v["method"].as_str().unwrap(),
                        v["params"]["uri"].as_str().unwrap()
                    )
                },
                |id| format!("{id}{what}"),
            )
        })
        .collect()
}

/// What `watched_session` must see: nothing while the file is unchanged; a change and a
/// removal each noticed after the reply to the message that came with them; a file that went
/// can still be unsubscribed, and then nothing is notified.
fn expected(uri: &str) -> Vec<String> {
    let updated = format!("notifications/resources/updated {uri}");
    ["1", "2", "3", &updated, "4", &updated, "5", "6"].map(String::from).to_vec()
}

#[test]
fn a_subscribed_root_file_that_changes_is_notified_when_the_loop_next_waits() {
    let root = crate::scratch("watched");
    let file = root.join("notes.md");
    std::fs::write(&file, "one").unwrap();
    let uri = format!("file://{}", file.display());
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    assert_eq!(watched_session(&server, &uri, &file), expected(&uri));
}

/// Each look at watched files looks at 256 at most, the next ones in turn: 300 changed files
/// are each told once, over two looks.
#[test]
fn watched_files_are_looked_at_a_bounded_number_at_a_time() {
    let root = crate::scratch("many-watched");
    let files: Vec<_> = (0..300).map(|n| root.join(format!("f{n:03}"))).collect();
    files.iter().for_each(|f| std::fs::write(f, "one").unwrap());
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    let line = |value: Value| format!("{value}\n").into_bytes();
    let mut first = line(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
    );
    for (n, file) in files.iter().enumerate() {
        let uri = format!("file://{}", file.display());
        first.extend(line(
            json!({"jsonrpc": "2.0", "id": n + 1, "method": "resources/subscribe", "params": {"uri": uri}}),
        ));
    }
    let edited = files.clone();
    let chunks: Vec<Chunk> = vec![
        (Box::new(|| {}), first),
        (
            Box::new(move || edited.iter().for_each(|f| std::fs::write(f, "two, longer").unwrap())),
            line(json!({"jsonrpc": "2.0", "id": 1000, "method": "ping"})),
        ),
        (Box::new(|| {}), line(json!({"jsonrpc": "2.0", "id": 1001, "method": "ping"}))),
    ];
    let mut output = Vec::new();
    let mut input = BufReader::with_capacity(1 << 20, Chunks(chunks));
    server.serve(&mut input, &mut output).unwrap();
    let output = String::from_utf8(output).unwrap();
    let lines: Vec<Value> = output.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let at = |id: u64| lines.iter().position(|l| l["id"] == id).unwrap();
    let told = |from: usize, to: usize| -> Vec<&str> {
        lines[from..to].iter().map(|l| l["params"]["uri"].as_str().unwrap()).collect()
    };
    let (first, second) = (told(at(1000) + 1, at(1001)), told(at(1001) + 1, lines.len()));
    assert_eq!((first.len(), second.len()), (256, 44));
    let all: std::collections::BTreeSet<&str> = first.into_iter().chain(second).collect();
    assert_eq!(all.len(), 300, "each change told once");
}

/// A `file://` URI whose path is too long for the system to open is not found, before any
/// file system call (the one just short enough is served).
#[test]
fn a_file_uri_too_long_to_open_is_not_found() {
    let root = crate::scratch("path-max");
    std::fs::create_dir_all(root.join("d")).unwrap();
    std::fs::write(root.join("f"), "found").unwrap();
    let mut server = Server::new("t", "1");
    server.add_directory(FileRoot::new(&root, false, 1 << 20).unwrap()).unwrap();
    // The path is the root's, `/d/..` k times and `/f`; 4096 bytes or more is too long.
    let longest = (4095 - root.as_os_str().len() - 2) / 5;
    let read = |id: usize, k: usize| {
        let uri = format!("file://{}{}/f", root.display(), "/d/..".repeat(k));
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
    };
    let replies = ask(&server, &[read(1, longest), read(2, longest + 1)]);
    assert_eq!(replies[0]["result"]["contents"][0]["text"], "found");
    assert_eq!(replies[1]["error"]["code"], -32002, "{}", replies[1]);
    assert_eq!(replies[1]["error"]["message"], "resource not found");
}

#[test]
fn a_manifest_path_resource_is_watched_like_a_root_file() {
    let dir = crate::scratch("watched-manifest");
    let file = dir.join("today.md");
    std::fs::write(&file, "one").unwrap();
    let manifest = dir.join("manifest.json");
    let declared =
        json!({"resources": [{"uri": "notes://today", "name": "today", "path": "today.md"}]});
    std::fs::write(&manifest, declared.to_string()).unwrap();
    let server = crate::app::manifest::load(&manifest).unwrap().into_server().unwrap();
    assert_eq!(watched_session(&server, "notes://today", &file), expected("notes://today"));
}

/// A resource's watched file that is missing when subscribed is watched all the same: its
/// appearing is a change.
#[test]
fn a_watched_file_missing_when_subscribed_is_told_when_it_appears() {
    let file = crate::scratch("watched-missing").join("later.md");
    let mut server = Server::new("t", "1");
    let gone = |_: &mut baremcp::Context| Err(baremcp::ReadError::NotFound);
    server
        .add_resource(baremcp::Resource::new("notes://later", "later", gone).watch_file(&file))
        .unwrap();
    assert_eq!(watched_session(&server, "notes://later", &file), expected("notes://later"));
}

#[test]
fn the_binary_notifies_a_changed_file_while_the_client_is_quiet() {
    let root = crate::scratch("watched-binary");
    let file = root.join("a.txt");
    std::fs::write(&file, "one").unwrap();
    let uri = format!("file://{}", file.display());
    let mut child = crate::serving([OsStr::new("--root"), root.as_os_str()]).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines, received) = mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        stdout.lines().map_while(Result::ok).try_for_each(|l| lines.send(l))
    });
    let send =
        |stdin: &mut std::process::ChildStdin, value: Value| writeln!(stdin, "{value}").unwrap();
    let next = || -> Value {
        serde_json::from_str(&received.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap()
    };

    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
    );
    assert_eq!(next()["result"]["capabilities"]["resources"], json!({"subscribe": true}));
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": uri}}),
    );
    assert_eq!(next()["id"], 1);
    // No message follows the change: the server must notice it by itself. (The size changes
    // too: a file's times may not move within the same clock tick.)
    std::fs::write(&file, "two, longer").unwrap();
    let updated = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}});
    assert_eq!(next(), updated);
    // A 2026-07-28 stream that names the file is told too, with its subscription id.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let filter = json!({"resourceSubscriptions": [uri]});
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {"notifications": filter, "_meta": meta}}),
    );
    assert_eq!(next()["method"], "notifications/subscriptions/acknowledged");
    std::fs::remove_file(&file).unwrap();
    assert_eq!(next(), updated);
    assert_eq!(
        next()["params"],
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 2}, "uri": uri})
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_huge_sparse_file_is_refused_cleanly_whatever_the_size_limit() {
    let root = crate::scratch("huge-sparse");
    let huge = root.join("huge.bin");
    std::fs::File::create(&huge).unwrap().set_len(1 << 40).unwrap();
    let uri = format!("file://{}", huge.display());
    let requests = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    ];
    // 2 TiB allowed, 512 MiB of address space: the file cannot fit, and the server must say
    // so rather than abort.
    let args = [
        OsStr::new("--root"),
        root.as_os_str(),
        OsStr::new("--max-resource-bytes"),
        OsStr::new("2199023255552"),
    ];
    let mut child = crate::serving_limited(512 * 1024, args).unwrap();
    let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let replies: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 3, "{replies:?}");
    assert_eq!(replies[1]["error"]["code"], -32602, "{}", replies[1]);
    assert!(
        replies[1]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("cannot read: not enough memory for "),
        "{}",
        replies[1]
    );
    assert_eq!(replies[2], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    // Sparse, so it takes no disk, but no tool walking the target directory should meet it.
    std::fs::remove_file(&huge).unwrap();
}

#[test]
fn a_manifest_file_swapped_for_a_fifo_is_refused_without_waiting() {
    let dir = crate::scratch("manifest-fifo");
    let file = dir.join("today.md");
    std::fs::write(&file, "one").unwrap();
    let manifest = dir.join("manifest.json");
    let declared =
        json!({"resources": [{"uri": "notes://today", "name": "today", "path": "today.md"}]});
    std::fs::write(&manifest, declared.to_string()).unwrap();
    let (send, replies) = mpsc::channel();
    // A server is not Send: it is built, and the file swapped, on the thread that serves.
    std::thread::spawn(move || {
        let server = crate::app::manifest::load(&manifest).unwrap().into_server().unwrap();
        // Checked as a regular file when loaded; a FIFO by the time it is read.
        std::fs::remove_file(&file).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(&file).status().unwrap().success());
        let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "notes://today"}});
        let _ = send.send(ask(&server, &[read]));
    });
    let replies =
        replies.recv_timeout(Duration::from_secs(5)).expect("the read waited on the FIFO");
    assert_eq!(replies[0]["error"]["code"], -32002, "{}", replies[0]);
}
