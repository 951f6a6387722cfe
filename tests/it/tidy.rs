//! Tidy checks: formatting, a `//!` line atop every source file, and the README's method
//! table agreeing with the dispatch `match`.

use std::collections::BTreeSet;
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
