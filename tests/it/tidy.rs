//! Tidy checks: a `//!` line atop every source file, the method table of docs/protocol.md
//! agreeing with the dispatch `match`, the layers' imports pointing down with no circle,
//! distinct file names, short files and functions, where `unsafe` code is, the runtime
//! dependencies, and docs/cli.md's logging table naming every log target.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    files_ending(dir, "rs", out);
}

/// The files under `dir` (at any depth) whose extension is `extension`.
pub fn files_ending(dir: &Path, extension: &str, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_ending(&path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

#[test]
fn every_file_says_what_it_owns() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "examples", "benches"] {
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
    let source =
        std::fs::read_to_string(crate::root().join("src/dispatch/method_table.rs")).unwrap();
    let body =
        &source[source.find("let reply = match req.method {").expect("the dispatch match")..];
    let body = &body[..body.find("other => ").unwrap()];
    body.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix('"')
                .and_then(|l| l.split_once("\" =>"))
                .map(|(m, _)| m.to_string())
        })
        .collect()
}

/// The method names in the method table of docs/protocol.md (rows of its `## Methods`).
fn documented() -> BTreeSet<String> {
    crate::docs::section("docs/protocol.md", "## Methods")
        .lines()
        .filter_map(|l| {
            l.strip_prefix("| `").and_then(|l| l.split_once('`')).map(|(m, _)| m.to_string())
        })
        .collect()
}

#[test]
fn the_documented_method_table_matches_the_dispatch() {
    let (code, docs) = (dispatched(), documented());
    assert!(code.len() >= 6, "parsed too few methods from dispatch.rs: {code:?}");
    assert_eq!(code, docs, "docs/protocol.md ## Methods must list exactly the dispatched methods");
}

/// The layer folders of `src/`, bottom to top. A folder's files import only folders of a lower
/// rank (the inner lists share a rank and import neither way); ARCHITECTURE.md draws the same
/// stack.
const LAYERS: [&[&str]; 6] = [
    &["util"],
    &["crypto", "wire", "schema"],
    &["conn"],
    &["registry"],
    &["dispatch"],
    &["transport"],
];

/// A file's module path under `src/`: `wire/scanner.rs` is `[wire, scanner]`, `wire/mod.rs`
/// is `[wire]`, `lib.rs` is `[]`.
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let mut path: Vec<String> = stem.split('/').map(String::from).collect();
    if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
        path.pop();
    }
    path
}

/// The library files (paths relative to `src/`) each library file names through a `crate::`
/// or `super::` path, in `use` lines and in code (comments are skipped). A path names the
/// deepest file it reaches: `crate::wire::scanner::Scanner` is an edge to `wire/scanner.rs`,
/// `super::Cx` in `schema/validate/array.rs` one to `schema/validate.rs`, and
/// `crate::Server` one to `lib.rs`. A parent reaching into its own children (`mod` lines and
/// their bare paths) is not an edge: a parent holds its children, and layering is about who
/// calls whom.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = crate::root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let module_file = |segments: &[String]| -> Option<String> {
        (1..=segments.len()).rev().find_map(|n| {
            let dir = segments[..n].join("/");
            [format!("{dir}.rs"), format!("{dir}/mod.rs")]
                .into_iter()
                .find(|f| src.join(f).is_file())
        })
    };
    let mut graph = BTreeMap::new();
    for file in files.iter().filter(|f| !f.starts_with(src.join("bin"))) {
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        let module = module_of(&name);
        let source = std::fs::read_to_string(file).unwrap();
        // Unit tests (a file's last module) are not layering: they may use anything.
        let code: String = source
            .lines()
            .take_while(|l| *l != "#[cfg(test)]")
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut edges = BTreeSet::new();
        for (at, _) in code.match_indices(['c', 's']) {
            let rest = &code[at..];
            let before = code[..at].chars().next_back();
            // `$crate::` in a macro is a path in the crate that expands it, not an import.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            // Where the path starts: the crate root, or the parent of this file's module
            // (`super::super::` climbs one more each time).
            let (base, mut rest) = if let Some(rest) = rest.strip_prefix("crate::") {
                (Vec::new(), rest)
            } else if rest.starts_with("super::") {
                let mut base = module.clone();
                let mut rest = rest;
                while let Some(after) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = after;
                }
                (base, rest)
            } else {
                continue;
            };
            if rest.starts_with("self::") {
                rest = &rest["self::".len()..];
            }
            for path in group_members(rest) {
                let mut segments = base.clone();
                for segment in path.trim().split("::") {
                    let segment = segment.trim_start();
                    let ident = segment
                        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or("");
                    if !ident.is_empty() && ident != "self" {
                        segments.push(ident.to_string());
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

/// The paths a `use` group names: `{a::X, b}` is two paths, each its own member; a path
/// without braces is itself.
fn group_members(rest: &str) -> Vec<&str> {
    let Some(group) = rest.strip_prefix('{') else { return vec![rest] };
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
    let graph = imports();
    let reaches = |from: &str, to: &str| graph.get(from).is_some_and(|e| e.contains(to));
    assert!(
        reaches("registry/server.rs", "registry/files.rs")
            && reaches("schema/validate/array.rs", "schema/validate.rs"),
        "the import scan found too little: {graph:?}"
    );
    if let Some(circle) = import_circle(&graph) {
        panic!(
            "src/ files import each other in a circle (layers must point one way): {}",
            circle.join(" -> ")
        );
    }
    let mut mixed = BTreeMap::new();
    mixed.insert("a.rs".to_string(), BTreeSet::from(["b.rs".to_string()]));
    mixed.insert("b.rs".to_string(), BTreeSet::from(["a.rs".to_string()]));
    assert!(import_circle(&mixed).is_some(), "the circle finder must find a two-file circle");
}

/// Every library file lives in a layer folder (`lib.rs` aside), and imports only its own
/// folder and the folders below it; none reaches the crate root's re-exports (`crate::Server`),
/// which would hide the real edge.
#[test]
fn layers_point_down() {
    let rank = |file: &str| {
        let folder = file.split('/').next().unwrap_or_default();
        LAYERS.iter().position(|layer| layer.contains(&folder))
    };
    let mut wrong = Vec::new();
    for (file, edges) in imports() {
        if file == "lib.rs" {
            continue;
        }
        let Some(from) = rank(&file) else {
            wrong.push(format!("{file} is in no layer folder"));
            continue;
        };
        for target in edges {
            let folder = |f: &str| f.split('/').next().unwrap_or_default().to_string();
            match rank(&target) {
                _ if folder(&target) == folder(&file) => {}
                Some(to) if to < from => {}
                _ => wrong.push(format!("{file} -> {target}")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not point down the layers {LAYERS:?}:\n{}",
        wrong.join("\n")
    );
}

/// Levenshtein distance, for names that are too alike.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            previous = here;
        }
    }
    row[b.len()]
}

/// No two files of one crate (the library, the binary) are named alike: the same name in two
/// folders, or names a letter or a plural apart (`task.rs` beside `tasks.rs`) make a reader
/// open the wrong one.
#[test]
fn file_names_are_distinct() {
    let src = crate::root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut alike = Vec::new();
    for binary in [false, true] {
        let stems: Vec<(String, String)> = files
            .iter()
            .filter(|f| f.starts_with(src.join("bin")) == binary)
            .map(|f| {
                (f.file_stem().unwrap().to_string_lossy().into_owned(), f.display().to_string())
            })
            .filter(|(stem, _)| !matches!(stem.as_str(), "mod" | "lib" | "main"))
            .collect();
        for (i, (a, path_a)) in stems.iter().enumerate() {
            for (b, path_b) in &stems[i + 1..] {
                if distance(a, b) <= 1 {
                    alike.push(format!("{path_a} ~ {path_b}"));
                }
            }
        }
    }
    assert!(alike.is_empty(), "files named alike:\n{}", alike.join("\n"));
    assert_eq!(
        (distance("task", "tasks"), distance("wire", "wire"), distance("era", "error")),
        (1, 0, 3)
    );
}

/// Files stay readable in one sitting, and so do functions: no source file over 700 lines, no
/// function over 100 lines unless it is a table (marked by a `// tidy: table` line above it).
#[test]
fn files_and_functions_stay_short() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "examples", "benches"] {
        rust_files(&crate::root().join(dir), &mut files);
    }
    let mut long = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = source.lines().collect();
        let name = file.strip_prefix(crate::root()).unwrap().display().to_string();
        if lines.len() > 700 {
            long.push(format!("{name}: {} lines", lines.len()));
        }
        for (start, length) in functions(&lines) {
            let marked = lines[..start]
                .iter()
                .rev()
                .take_while(|l| is_preamble(l))
                .any(|l| l.contains("tidy: table"));
            if length > 100 && !marked {
                long.push(format!("{name}:{}: a function of {length} lines", start + 1));
            }
        }
    }
    assert!(long.is_empty(), "split these by the steps they mix:\n{}", long.join("\n"));
}

/// Lines that may stand above a function's signature: its docs, attributes, comments.
fn is_preamble(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("//") || line.starts_with("#[")
}

/// Where each function starts (a line index) and how many lines it spans, signature through the
/// `}` at its own indentation. Declarations without a body are skipped.
fn functions(lines: &[&str]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let mut words = trimmed.split_whitespace().skip_while(|w| {
            matches!(*w, "pub" | "const" | "unsafe" | "async" | "extern" | "\"C\"")
                || w.starts_with("pub(")
        });
        if words.next() != Some("fn") {
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        let Some(open) = lines[i..]
            .iter()
            .position(|l| l.trim_end().ends_with('{') || l.trim_end().ends_with(';'))
        else {
            continue;
        };
        if lines[i + open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = lines[i + open..].iter().position(|l| l.trim_end() == close) {
            found.push((i, open + end + 1));
        }
    }
    found
}

/// The `unsafe` code is where ARCHITECTURE.md lists it, and nowhere else.
#[test]
fn unsafe_code_stays_where_it_is_listed() {
    let src = crate::root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let found: BTreeSet<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .any(|l| !l.trim_start().starts_with("//") && l.contains("unsafe"))
        })
        .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
        .collect();
    let listed: BTreeSet<String> = [
        "bin/baremcp/catalog/libm.rs",
        "bin/baremcp/process_group.rs",
        "transport/http/signals.rs",
        "transport/http/socket.rs",
        "util/poll.rs",
    ]
    .map(String::from)
    .into();
    assert_eq!(
        found, listed,
        "update ARCHITECTURE.md's list of unsafe code and this test together"
    );
    let architecture = std::fs::read_to_string(crate::root().join("ARCHITECTURE.md")).unwrap();
    for file in &listed {
        assert!(architecture.contains(file.as_str()), "ARCHITECTURE.md does not list {file}");
    }
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
    let documented: BTreeSet<&str> =
        ["env_logger", "lexopt", "log", "memchr", "serde", "serde_json"].into();
    assert_eq!(
        named, documented,
        "update ARCHITECTURE.md's dependency list and this test together"
    );
    let architecture = std::fs::read_to_string(crate::root().join("ARCHITECTURE.md")).unwrap();
    for name in documented {
        assert!(
            architecture.contains(&format!("`{name}`")),
            "ARCHITECTURE.md does not name {name}"
        );
    }
}

/// ARCHITECTURE.md stays a map a newcomer reads in one sitting, and names every folder of
/// `src/`.
#[test]
fn architecture_names_every_folder() {
    let architecture = std::fs::read_to_string(crate::root().join("ARCHITECTURE.md")).unwrap();
    assert!(architecture.lines().count() <= 150, "ARCHITECTURE.md is over 150 lines");
    let mut folders = Vec::new();
    let mut stack = vec![crate::root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path.strip_prefix(crate::root()).unwrap().display().to_string());
                stack.push(path);
            }
        }
    }
    assert!(folders.len() >= 8, "found too few folders: {folders:?}");
    // A folder is named by its path (`src/transport/`, or within a longer one), or by its
    // name with a slash inside its parent's entry (`http/` under `src/transport/`).
    let missing: Vec<&String> = folders
        .iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap();
            !architecture.contains(&format!("`{f}/"))
                && !architecture.contains(&format!("`{name}/`"))
        })
        .collect();
    assert!(missing.is_empty(), "ARCHITECTURE.md does not name {missing:?}");
}

/// The log targets the sources name (each file's `const LOG: &str = "..."`).
fn log_targets_in_src() -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&crate::root().join("src"), &mut files);
    let mut targets = BTreeSet::new();
    for file in files {
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            if let Some(rest) = line.trim().strip_prefix("const LOG: &str = \"") {
                targets.insert(rest.split('"').next().unwrap().to_string());
            }
        }
    }
    targets
}

#[test]
fn the_logging_table_names_every_log_target() {
    // docs/cli.md says a module not in its table logs nothing: a target missing there is a
    // log line nobody knows to ask for.
    let code = log_targets_in_src();
    let docs: BTreeSet<String> = crate::docs::section("docs/cli.md", "## Logging")
        .lines()
        .filter_map(|l| {
            l.strip_prefix("| `baremcp").and_then(|l| l.split_once('`')).map(|(t, _)| t)
        })
        .map(|t| format!("baremcp{t}"))
        .collect();
    assert!(code.len() >= 10, "found too few log targets in src: {code:?}");
    assert_eq!(code, docs, "docs/cli.md ## Logging must list exactly the targets in src");
}
