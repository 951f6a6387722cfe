//! Tidy checks: formatting, a `//!` line atop every source file, and the README's method
//! table agreeing with the dispatch `match`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn rustfmt_is_clean() {
    let out = Command::new(env!("CARGO")).args(["fmt", "--check"]).current_dir(crate::root()).output().unwrap();
    assert!(out.status.success(), "run `cargo fmt`:\n{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn every_file_says_what_it_owns() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "examples"] {
        let dir = crate::root().join(dir);
        if dir.exists() {
            rust_files(&dir, &mut files);
        }
    }
    let missing: Vec<_> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).unwrap().starts_with("//! "))
        .map(|f| f.strip_prefix(crate::root()).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a leading `//!` line: {missing:?}");
}

/// The method names the dispatch `match` handles, read from its source.
fn dispatched() -> BTreeSet<String> {
    let source = std::fs::read_to_string(crate::root().join("src/dispatch.rs")).unwrap();
    let body = &source[source.find("let reply = match req.method {").expect("the dispatch match")..];
    let body = &body[..body.find("other => ").unwrap()];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix('"').and_then(|l| l.split_once("\" =>")).map(|(m, _)| m.to_string()))
        .collect()
}

/// The method names in the README's method table (rows of the `## Methods` section).
fn documented() -> BTreeSet<String> {
    let readme = std::fs::read_to_string(crate::root().join("README.md")).unwrap();
    let section = &readme[readme.find("\n## Methods").expect("a ## Methods section")..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)];
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `").and_then(|l| l.split_once('`')).map(|(m, _)| m.to_string()))
        .collect()
}

#[test]
fn readme_method_table_matches_the_dispatch() {
    let (code, docs) = (dispatched(), documented());
    assert!(code.len() >= 6, "parsed too few methods from dispatch.rs: {code:?}");
    assert_eq!(code, docs, "README ## Methods must list exactly the dispatched methods");
}

/// The `src/` files each `src/` file names through a `crate::` path (in `use` lines and in
/// code), as paths relative to `src/`. A path names the deepest file it reaches, so
/// `crate::methods::tools::call` is an edge to `methods/tools.rs` and `crate::Server` one to
/// `lib.rs`. `mod` declarations and `super::` paths are not edges: a parent holds its
/// children, and layering is about who calls whom across the crate.
fn crate_imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = crate::root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let module_file = |segments: &[&str]| -> Option<String> {
        (1..=segments.len()).rev().find_map(|n| {
            let dir = segments[..n].join("/");
            [format!("{dir}.rs"), format!("{dir}/mod.rs")].into_iter().find(|f| src.join(f).is_file())
        })
    };
    let mut graph = BTreeMap::new();
    for file in files.iter().filter(|f| !f.starts_with(src.join("bin"))) {
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        let source = std::fs::read_to_string(file).unwrap();
        let code: String = source.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let mut edges = BTreeSet::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            // `crate::{a::X, b}`: each top-level member of the group is its own path.
            let paths: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => {
                    let (mut depth, mut end) = (0, group.len());
                    for (i, c) in group.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => {
                                end = i;
                                break;
                            }
                            '}' => depth -= 1,
                            _ => {}
                        }
                    }
                    let mut members = Vec::new();
                    let (mut depth, mut start) = (0, 0);
                    for (i, c) in group[..end].char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            ',' if depth == 0 => {
                                members.push(&group[start..i]);
                                start = i + 1;
                            }
                            _ => {}
                        }
                    }
                    members.push(&group[start..end]);
                    members
                }
                None => vec![rest],
            };
            for path in paths {
                // Leading identifiers up to the first thing that is not a path segment.
                let mut segments = Vec::new();
                for segment in path.trim().split("::") {
                    let segment = segment.trim_start();
                    let ident = segment.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                    if !ident.is_empty() {
                        segments.push(ident);
                    }
                    if ident.is_empty() || ident.len() != segment.len() {
                        break;
                    }
                }
                let target = module_file(&segments).unwrap_or_else(|| "lib.rs".to_string());
                if target != name {
                    edges.insert(target);
                }
            }
        }
        graph.insert(name, edges);
    }
    graph
}

/// One import circle in `graph`, as the files around it, if there is any.
fn import_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    // Depth-first search; a file met again while still on the path closes a circle.
    fn visit<'a>(
        file: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|f| *f == file) {
            let mut circle: Vec<String> = path[at..].iter().map(|f| f.to_string()).collect();
            circle.push(file.to_string());
            return Some(circle);
        }
        if !done.insert(file) {
            return None;
        }
        path.push(file);
        for next in graph.get(file).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|file| visit(file, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_circle_among_src_files() {
    let graph = crate_imports();
    assert!(
        graph.get("server.rs").is_some_and(|e| e.contains("files.rs")),
        "the import scan found too little: {graph:?}"
    );
    if let Some(circle) = import_circle(&graph) {
        panic!("src/ files import each other in a circle (layers must point one way): {}", circle.join(" -> "));
    }
    let mut mixed = BTreeMap::new();
    mixed.insert("a.rs".to_string(), BTreeSet::from(["b.rs".to_string()]));
    mixed.insert("b.rs".to_string(), BTreeSet::from(["a.rs".to_string()]));
    assert!(import_circle(&mixed).is_some(), "the circle finder must find a two-file circle");
}

/// The runtime dependencies are a fixed list, kept in ARCHITECTURE.md: adding one is a
/// decision to write down there, not a line slipped into Cargo.toml.
#[test]
fn runtime_dependencies_are_the_documented_ones() {
    let manifest = std::fs::read_to_string(crate::root().join("Cargo.toml")).unwrap();
    // `[dependencies]` with `name = ...` lines, as written here, or `[dependencies.name]`
    // tables, as `cargo package` writes the copy in a published crate.
    let mut named = BTreeSet::new();
    let mut in_table = false;
    for line in manifest.lines() {
        if let Some(header) = line.strip_prefix('[') {
            in_table = header == "dependencies]";
            if let Some(name) = header.strip_prefix("dependencies.") {
                named.insert(name.trim_end_matches(']'));
            }
        } else if in_table && let Some((name, _)) = line.split_once(" = ") {
            named.insert(name.trim());
        }
    }
    let documented: BTreeSet<&str> = ["env_logger", "lexopt", "log", "memchr", "serde", "serde_json"].into();
    assert_eq!(named, documented, "update ARCHITECTURE.md's dependency list and this test together");
    let architecture = std::fs::read_to_string(crate::root().join("ARCHITECTURE.md")).unwrap();
    for name in documented {
        assert!(architecture.contains(&format!("`{name}`")), "ARCHITECTURE.md does not name {name}");
    }
}
