//! The documentation as a user reads it: every relative link in README.md, CHANGELOG.md and
//! docs/ resolves (anchors included), the README's stdio quickstarts run as written and print
//! what they show, the messages they show are valid against the MCP schema of their
//! revision, and the README's program is `examples/minimal.rs`. (The client configurations
//! are `clients`; the HTTP quickstart's curl and SDK programs run in `tests/interop/`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The text of `file` (relative to the repository) under the heading `heading` (its full
/// line, `## ...`), up to the next heading of the same or a higher level.
pub fn section(file: &str, heading: &str) -> String {
    let text = std::fs::read_to_string(crate::root().join(file)).unwrap();
    let level = heading.len() - heading.trim_start_matches('#').len();
    let mut lines = text.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "{file} has no heading `{heading}`");
    let mut out = format!("{heading}\n");
    let mut in_fence = false;
    for line in lines {
        in_fence ^= line.starts_with("```");
        let hashes = line.len() - line.trim_start_matches('#').len();
        if !in_fence && hashes > 0 && hashes <= level && line[hashes..].starts_with(' ') {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The fenced blocks of `text` in the language `lang`, in order.
pub fn blocks(text: &str, lang: &str) -> Vec<String> {
    fenced(text).into_iter().filter(|(l, _)| l == lang).map(|(_, b)| b).collect()
}

/// Every fenced block of `text`: its language and its body.
fn fenced(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.to_string(), String::new())),
            (Some(_), Some("")) => found.push(open.take().unwrap()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    found
}

/// Runs a shell block in `dir` with this build's `baremcp` first on `PATH`, as a user who
/// installed it would.
fn run_sh(block: &str, dir: &Path) -> Output {
    run_sh_with_input(block, dir, "")
}

/// [`run_sh`] with `input` on the block's stdin.
fn run_sh_with_input(block: &str, dir: &Path, input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let bin = Path::new(env!("CARGO_BIN_EXE_baremcp")).parent().unwrap();
    let cargo = Path::new(env!("CARGO")).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        cargo.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .args(["-ec", block])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The Markdown files whose links must resolve: README.md, CHANGELOG.md and docs/**.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![crate::root().join("README.md"), crate::root().join("CHANGELOG.md")];
    crate::tidy::files_ending(&crate::root().join("docs"), "md", &mut files);
    files
}

/// What the crate's package holds (Cargo.toml's `include`), where documentation may link.
const PACKAGED: [&str; 11] = [
    "README.md",
    "ARCHITECTURE.md",
    "CHANGELOG.md",
    "LICENSE",
    "Cargo.toml",
    "docs",
    "src",
    "examples",
    "benches",
    "fixtures",
    "tests/it",
];

/// `text` without its fenced blocks and code spans, where a `](` is not a link.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            let spans: Vec<&str> = line.split('`').collect();
            out.extend(spans.iter().step_by(2).copied());
            out.push('\n');
        }
    }
    out
}

/// The targets of the inline links `[text](target)` in `text`.
fn links(text: &str) -> Vec<String> {
    prose(text)
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.find(')').map(|end| rest[..end].to_string()))
        .collect()
}

/// The anchors GitHub gives the headings of a Markdown file: the heading's text in lower
/// case, code marks and punctuation other than `-` and `_` dropped, each space a `-`; a
/// repeated one gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        let hashes = line.len() - line.trim_start_matches('#').len();
        if in_fence || hashes == 0 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes + 1..]
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        for n in 1.. {
            if !seen.contains(&unique) {
                break;
            }
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

#[test]
fn every_relative_link_resolves_anchors_included() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(crate::root()).unwrap().display().to_string();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) =
                link.split_once('#').map_or((&link[..], None), |(p, a)| (p, Some(a)));
            let target =
                if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
            if !target.exists() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            // The packaged crate's tests check these links too, so a link stays inside what
            // Cargo.toml's `include` packages (not `.ci/` or `tests/interop/`).
            let inside = std::fs::canonicalize(&target).unwrap();
            let inside = inside.strip_prefix(crate::root()).unwrap_or(&inside);
            if !PACKAGED.iter().any(|p| inside.starts_with(p)) {
                broken.push(format!("{name}: {link}: outside the package"));
            }
            if let Some(anchor) = anchor {
                let headings = std::fs::read_to_string(&target).map(|t| anchors(&t));
                if !headings.is_ok_and(|h| h.contains(anchor)) {
                    broken.push(format!("{name}: {link}: no such heading"));
                }
            }
        }
    }
    assert!(checked > 50, "found too few links to check: {checked}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_anchor_rules_are_githubs() {
    let text = "# A `code` title: with, punctuation\n## Same\n## Same\n```\n# not a heading\n```\n";
    let expected = ["a-code-title-with-punctuation", "same", "same-1"];
    assert_eq!(anchors(text), expected.iter().map(|s| s.to_string()).collect());
    assert_eq!(links("[a](x.md) `[b](y.md)` [c](z.md#h)"), ["x.md", "z.md#h"]);
}

#[test]
fn readme_is_a_front_door_of_at_most_300_lines() {
    let readme = std::fs::read_to_string(crate::root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines; reference text belongs in docs/");
}

#[test]
fn the_readme_library_program_is_examples_minimal() {
    let section = section("README.md", "## Write a tool in Rust");
    let program = &blocks(&section, "rust")[0];
    let minimal = std::fs::read_to_string(crate::root().join("examples/minimal.rs")).unwrap();
    // examples/minimal.rs is compiled by `cargo test`, so the README's program compiles too.
    assert!(
        *program == minimal,
        "README's program differs from examples/minimal.rs:\n{}",
        crate::diff(&minimal, program)
    );
}

/// Runs the shell block of a README quickstart that pipes messages into a server (the one
/// that starts with `printf`) in `dir`, and checks that it prints the text block shown.
fn quickstart_prints_what_it_shows(heading: &str, dir: &Path) -> Output {
    let section = section("README.md", heading);
    let piped = blocks(&section, "sh").into_iter().find(|b| b.starts_with("printf")).unwrap();
    let shown = blocks(&section, "text").remove(0);
    let out = run_sh(&piped, dir);
    assert!(out.status.success(), "{heading}: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout.clone()).unwrap(), shown, "{heading}");
    out
}

#[test]
fn the_by_hand_session_prints_what_the_readme_shows() {
    quickstart_prints_what_it_shows("## Connect a client", &crate::scratch("quickstart-by-hand"));
}

#[test]
fn the_manifest_quickstart_checks_and_serves_as_shown() {
    let dir = crate::scratch("quickstart-manifest");
    let section = section("README.md", "## Wrap a command with a manifest");
    std::fs::write(dir.join("tools.json"), &blocks(&section, "json")[0]).unwrap();
    let block = blocks(&section, "sh").remove(0);
    let (check, piped) = block.split_once('\n').unwrap();
    assert_eq!(check, "baremcp check tools.json");
    let checked = run_sh(check, &dir);
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stdout));
    let out = run_sh(piped, &dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), blocks(&section, "text")[0]);
}

#[test]
fn the_rust_quickstart_runs_as_shown() {
    crate::library::example("minimal");
    quickstart_prints_what_it_shows("## Write a tool in Rust", crate::root());
}

#[test]
fn the_transcripts_page_records_a_session_and_replays_it() {
    // The page's recipe with `my-server --flag` as baremcp serving a folder, and a client
    // session on the proxy's stdin.
    let dir = crate::scratch("docs-transcripts");
    let tree = crate::fixture("tree");
    let section = section("docs/transcripts.md", "## Recording and replaying any MCP server");
    let block = blocks(&section, "sh").remove(0);
    // Two commands and the comment that says what the proxy stands in for.
    assert_eq!(block.matches("my-server --flag").count(), 3, "{block}");
    let block = block.replace("my-server --flag", &format!("baremcp --root {}", tree.display()));
    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#,
    ];
    let out = run_sh_with_input(&block, &dir, &(session.join("\n") + "\n"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    // The proxy forwarded both replies, then replay passed the recording.
    assert!(stdout.ends_with("session.txt: ok\n1 passed, 0 failed\n"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("{")).count(), 2, "{stdout}");
    let recorded = std::fs::read_to_string(dir.join("session.txt")).unwrap();
    assert_eq!(recorded.lines().filter(|l| l.starts_with("--> ")).count(), 3, "{recorded}");
}

/// The MCP schema of `revision` with its root a reference to the definition `def`.
fn spec_schema(revision: &str, def: &str) -> baremcp::schema::Schema {
    let path = crate::fixture(&format!("spec/{revision}/schema.json"));
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(schema["$defs"].get(def).is_some(), "{revision} defines no {def}");
    schema["$ref"] = json!(format!("#/$defs/{def}"));
    baremcp::schema::Schema::compile(&schema).unwrap_or_else(|e| panic!("{revision}: {e:?}"))
}

/// The name of the definition of `revision` whose `method` is `method` (`CallToolRequest`).
fn definition_of(revision: &str, method: &str) -> String {
    let path = crate::fixture(&format!("spec/{revision}/schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let defs = schema["$defs"].as_object().unwrap();
    let named: Vec<&String> = defs
        .iter()
        .filter(|(_, d)| d["properties"]["method"]["const"] == method)
        .map(|(n, _)| n)
        .collect();
    assert_eq!(named.len(), 1, "{revision}: {method} is defined by {named:?}");
    named[0].clone()
}

/// Each message quoted in a shell block (`'{"jsonrpc":...}'`): what a user sends.
fn quoted_messages(block: &str) -> Vec<Value> {
    block
        .split("'{\"jsonrpc\"")
        .skip(1)
        .map(|rest| {
            let text = format!("{{\"jsonrpc\"{}", &rest[..rest.find('\'').unwrap()]);
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
        })
        .collect()
}

#[test]
fn every_message_the_quickstarts_show_is_valid_for_its_revision() {
    // The check has teeth: the `initialize` the README once showed, without `capabilities` and
    // `clientInfo`, is refused.
    let bare = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
    assert!(spec_schema("2025-11-25", "InitializeRequest").validate(&bare).is_err());
    let readme = std::fs::read_to_string(crate::root().join("README.md")).unwrap();
    let blocks = fenced(&readme);
    let mut checked = 0;
    for (i, (lang, block)) in blocks.iter().enumerate() {
        let sent = if lang == "sh" { quoted_messages(block) } else { continue };
        // The lines the README shows in reply, in the text block right after.
        let replies: Vec<Value> = match blocks.get(i + 1) {
            Some((next, shown)) if next == "text" => {
                shown.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
            }
            _ => Vec::new(),
        };
        for message in &sent {
            let modern = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
                .as_str()
                .is_some();
            let revision = if modern { "2026-07-28" } else { "2025-11-25" };
            let method = message["method"].as_str().unwrap();
            let def = definition_of(revision, method);
            let verdict = spec_schema(revision, &def).validate(message);
            assert!(verdict.is_ok(), "{message} is no valid {def} of {revision}: {verdict:?}");
            checked += 1;
            let Some(reply) = replies.iter().find(|r| r.get("id") == message.get("id")) else {
                continue;
            };
            let result_def = def.replace("Request", "Result");
            let verdict = spec_schema(revision, &result_def).validate(&reply["result"]);
            assert!(verdict.is_ok(), "{reply} is no valid {result_def}: {verdict:?}");
            checked += 1;
        }
    }
    // Three stdio quickstarts of three messages each (one with four), the curl request, and
    // the replies shown to seven of them.
    assert!(checked >= 19, "checked only {checked} messages");
}

#[test]
fn the_http_page_s_vs_code_block_reaches_a_server_that_takes_tokens() {
    let section = section("docs/http.md", "## Remote clients");
    let config: Value = serde_json::from_str(&blocks(&section, "json")[0]).unwrap();
    let server = &config["servers"]["baremcp"];
    assert_eq!(server["type"], "http");
    assert_eq!(server["url"], "http://127.0.0.1:8080/mcp", "the README's address");
    let dir = crate::scratch("http-docs-token");
    std::fs::write(dir.join("tokens"), "s3cret-token\n").unwrap();
    let tokens = dir.join("tokens");
    let (mut child, addr) = crate::http_harness::spawn_http(
        env!("CARGO_BIN_EXE_baremcp"),
        &["--auth-token-file".as_ref(), tokens.as_os_str()],
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let header = server["headers"]["Authorization"].as_str().unwrap();
    let with = format!("Authorization: {}", header.replace("TOKEN", "s3cret-token"));
    let answered = crate::http_harness::post(addr, body, &[&with]);
    let refused = crate::http_harness::post(addr, body, &[]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!((answered.status, refused.status), (200, 401), "{answered:?}");
}
