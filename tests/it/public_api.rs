//! The library's public API, listed from its source and compared with `tests/public-api.txt`,
//! so that the surface changes only on purpose: a change shows up as a diff of that file
//! (refreshed with `UPDATE_EXPECT=1`), to be read and noted in CHANGELOG.md.
//!
//! The listing is read from the source as rustfmt lays it out, without a compiler: the
//! crate root's `pub use` and `pub mod` lines say what is reachable; each reachable item's
//! declaration is found in its file, with its public fields or variants; every `impl` block
//! anywhere in the library whose type is reachable adds its `pub` functions and constants
//! (inherent) or its line (trait impls); `#[macro_export]` macros are at the root. Items
//! under `#[doc(hidden)]` are listed as such: hidden is still reachable. Impls written by a
//! macro (`Describe` for the integers and containers) are not seen here; the type table's
//! tests in `typed.rs` hold those.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's source files, by module path (`registry::tool` for `src/registry/tool.rs`).
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
            if path.is_dir() {
                if prefix.is_empty() && name == "bin" {
                    continue;
                }
                walk(&path, &format!("{prefix}{name}::"), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = match name.as_str() {
                    "mod" => prefix.trim_end_matches("::").to_string(),
                    "lib" if prefix.is_empty() => String::new(),
                    _ => format!("{prefix}{name}"),
                };
                out.insert(module, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&crate::root().join("src"), "", &mut out);
    out
}

/// Source with comments and test modules cut away, so that only code is read.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| match l.find(" // ") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with the insides of string and character literals blanked (same length), so that
/// a brace or a `pub` in a literal is not taken for code.
fn mask(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        let raw = bytes[i] == b'r' && matches!(bytes.get(i + 1), Some(b'#' | b'"'));
        let raw =
            raw && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if raw {
            let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
            if bytes.get(i + 1 + hashes) == Some(&b'"') {
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = start + text[start..].find(&close).unwrap_or(text.len() - start);
                out[start..end].fill(b' ');
                i = end + close.len();
                continue;
            }
        }
        match bytes[i] {
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                out[i + 1..j.min(bytes.len())].fill(b' ');
                i = j + 1;
            }
            // A character literal ('{', '\''), not a lifetime ('a).
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => {
                out[i + 1] = b' ';
                i += 3;
            }
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                let end = i + 3 + text[i + 3..].find('\'').unwrap_or(0);
                out[i + 1..end].fill(b' ');
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).unwrap()
}

/// Text from `at` to the end of the item's head: up to the `{` or `;` that ends it, outside
/// brackets, joined into one line.
fn head(text: &str, at: usize) -> String {
    let masked = mask(text);
    let mut depth = 0i32;
    let mut end = text.len();
    for (i, c) in masked[at..].char_indices() {
        match c {
            '(' | '[' | '<' => depth += 1,
            ')' | ']' => depth -= 1,
            '>' if !masked[at..at + i].ends_with('-') => depth -= 1,
            '{' | ';' if depth <= 0 => {
                end = at + i;
                break;
            }
            _ => {}
        }
    }
    let joined = text[at..end].split_whitespace().collect::<Vec<_>>().join(" ");
    joined.replace("( ", "(").replace(" )", ")").replace(",)", ")").replace(", >", ">")
}

/// The body `{ ... }` that opens at or after `at`, without its braces.
fn body(text: &str, at: usize) -> &str {
    let masked = mask(text);
    let open = at + masked[at..].find('{').unwrap();
    let mut depth = 0;
    for (i, c) in masked[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    &text[open + 1..]
}

/// `pub use a::b::{C, D as E};` lines of a module: (path it points to, name it gives).
fn reexports(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) =
        rest.find("\npub use ").or_else(|| rest.strip_prefix("pub use ").map(|_| 0))
    {
        let start = at + rest[at..].find("pub use ").unwrap() + "pub use ".len();
        let end = start + rest[start..].find(';').unwrap();
        let spec = rest[start..end].split_whitespace().collect::<Vec<_>>().join(" ");
        let spec =
            spec.replace(":: ", "::").replace("{ ", "{").replace(" }", "}").replace(", ", ",");
        let (base, names) = match spec.split_once("::{") {
            Some((base, names)) => (base.to_string(), names.trim_end_matches('}').to_string()),
            None => match spec.rsplit_once("::") {
                Some((base, name)) => (base.to_string(), name.to_string()),
                None => (String::new(), spec.clone()),
            },
        };
        for name in names.split(',').filter(|n| !n.is_empty()) {
            let (item, alias) = name.split_once(" as ").unwrap_or((name, name));
            out.push((format!("{base}::{item}"), alias.to_string()));
        }
        rest = &rest[end..];
    }
    out
}

/// What the crate makes reachable: public path → (module it is defined in, its name there).
fn reachable(modules: &BTreeMap<String, String>) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let mut visit = vec![(String::new(), "baremcp".to_string(), false)];
    while let Some((module, public, hidden)) = visit.pop() {
        let text = code(&modules[&module]);
        let mark = |path: String| if hidden { format!("{path} #[doc(hidden)]") } else { path };
        for (target, alias) in reexports(&text) {
            let target = target.trim_start_matches("crate::").trim_start_matches("super::");
            let target = if target.starts_with("serde_json::") || module.is_empty() {
                target.to_string()
            } else if modules.contains_key(&format!("{module}::{}", first(target))) {
                format!("{module}::{target}")
            } else {
                target.to_string()
            };
            let (in_module, name) = target.rsplit_once("::").unwrap();
            if modules.contains_key(&target) {
                visit.push((target.clone(), format!("{public}::{alias}"), hidden));
            } else {
                out.insert(mark(format!("{public}::{alias}")), (in_module.into(), name.into()));
            }
        }
        for line in text.lines().filter(|l| l.starts_with("pub mod ")) {
            let name = line["pub mod ".len()..].trim_end_matches([';', ' ', '{']).to_string();
            let hidden = hidden || text[..text.find(line).unwrap()].ends_with("#[doc(hidden)]\n");
            let child = if module.is_empty() { name.clone() } else { format!("{module}::{name}") };
            if modules.contains_key(&child) {
                visit.push((child, format!("{public}::{name}"), hidden));
            } else {
                // An inline module: its `pub use` lines are in the parent's text.
                let at = text.find(line).unwrap();
                let inner: String =
                    body(&text, at).lines().map(|l| format!("\n{}", l.trim_start())).collect();
                for (target, alias) in reexports(&inner) {
                    let target = target.trim_start_matches("crate::");
                    let (in_module, item) = target.rsplit_once("::").unwrap();
                    out.insert(
                        if hidden {
                            format!("{public}::{name}::{alias} #[doc(hidden)]")
                        } else {
                            format!("{public}::{name}::{alias}")
                        },
                        (in_module.into(), item.into()),
                    );
                }
            }
        }
        // Items defined in a public module itself.
        if !module.is_empty() || public == "baremcp" {
            for (kind, name, _) in items(&text) {
                if kind != "mod" && kind != "macro" {
                    out.insert(mark(format!("{public}::{name}")), (module.clone(), name));
                }
            }
        }
    }
    out
}

fn first(path: &str) -> &str {
    path.split("::").next().unwrap()
}

/// `pub` items declared at the top level of a file: (kind, name, offset).
fn items(text: &str) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        for kind in ["struct", "enum", "trait", "fn", "type", "const", "mod"] {
            if let Some(rest) = line.strip_prefix(&format!("pub {kind} ")) {
                let name: String =
                    rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                out.push((kind.to_string(), name, offset));
            }
        }
        offset += line.len();
    }
    out
}

/// The lines an item contributes: its head, then its public fields or its variants.
fn describe(path: &str, text: &str, name: &str) -> Vec<String> {
    let Some((kind, _, at)) = items(text).into_iter().find(|(_, n, _)| n == name) else {
        return vec![format!("{path} (not found in the source)")];
    };
    // The attributes that are part of the API: derives and `#[non_exhaustive]`.
    let attributes: Vec<&str> = text[..at]
        .lines()
        .rev()
        .map(str::trim)
        .take_while(|l| l.starts_with("#["))
        .filter(|l| l.starts_with("#[derive") || l.starts_with("#[non_exhaustive"))
        .collect();
    let attributes: String = attributes.iter().rev().map(|a| format!("{a} ")).collect();
    let mut lines = vec![format!("{path}: {attributes}{}", head(text, at))];
    if kind == "struct" || kind == "enum" || kind == "trait" {
        let declared = head(text, at);
        if text[at + declared.len().min(text.len() - at)..].trim_start().starts_with('{')
            || text[at..].find('{') < text[at..].find(';')
        {
            let inner = body(text, at);
            let mut depth = 0;
            for line in inner.lines() {
                let trimmed = line.trim();
                let top = depth == 0;
                depth += line.matches(['{', '(']).count() as i32;
                depth -= line.matches(['}', ')']).count() as i32;
                if !top || trimmed.is_empty() || trimmed.starts_with('#') {
                    continue;
                }
                let member = match kind.as_str() {
                    "struct" if trimmed.starts_with("pub ") => trimmed.trim_end_matches(','),
                    "enum" => trimmed.trim_end_matches([',', '{', '(', ' ']),
                    "trait" if trimmed.starts_with("fn ") || trimmed.starts_with("const ") => {
                        let at = inner.find(line).unwrap();
                        let hidden = inner[..at].trim_end().ends_with("#[doc(hidden)]");
                        let hidden = if hidden { " #[doc(hidden)]" } else { "" };
                        let indent = line.len() - line.trim_start().len();
                        lines.push(format!("{path}::{}{hidden}", head(inner, at + indent)));
                        continue;
                    }
                    _ => continue,
                };
                lines.push(format!("{path}::{member}"));
            }
        }
    }
    lines
}

/// The first identifier of `text` (after `&`).
fn ident(text: &str) -> String {
    text.trim_start_matches('&').chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// `pub fn` and `pub const` heads of inherent impls, and the heads of trait impls, of each
/// reachable type (or of a reachable trait, for any type), anywhere in the library. `types`
/// maps a name to its public path and a hidden mark.
fn impls(
    modules: &BTreeMap<String, String>,
    types: &BTreeMap<String, (String, &str)>,
) -> Vec<String> {
    let mut out = Vec::new();
    for text in modules.values() {
        let text = code(text);
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            if line.starts_with("impl") {
                let declared = head(&text, offset);
                let after = declared.trim_start_matches("impl");
                // `impl<T> Name<T>`: what is implemented follows the generics.
                let after = match after.strip_prefix('<') {
                    Some(generic) => &generic[generic.find("> ").map_or(0, |i| i + 2)..],
                    None => after.trim_start(),
                };
                let (implemented, self_type) = match after.split_once(" for ") {
                    Some((trait_, self_type)) => (Some(trait_), self_type),
                    None => (None, after),
                };
                let local_trait =
                    implemented.filter(|t| !t.contains("::")).and_then(|t| types.get(&ident(t)));
                if let Some((public, hidden)) = types.get(&ident(self_type)).or(local_trait) {
                    if implemented.is_some() {
                        out.push(format!("{public}: {declared}{hidden}"));
                    } else {
                        let inner = body(&text, offset);
                        let mut at = 0;
                        for member in inner.split_inclusive('\n') {
                            let trimmed = member.trim_start();
                            if member.starts_with("    pub fn ")
                                || member.starts_with("    pub const ")
                            {
                                let indent = member.len() - trimmed.len();
                                out.push(format!("{public}::{}{hidden}", head(inner, at + indent)));
                            }
                            at += member.len();
                        }
                    }
                }
            }
            offset += line.len();
        }
    }
    out
}

/// The module a `use` path written in `module` points into, as a module path.
fn absolute(module: &str, target: &str) -> String {
    if let Some(rest) = target.strip_prefix("crate::") {
        return rest.to_string();
    }
    let mut base: Vec<&str> = module.split("::").filter(|m| !m.is_empty()).collect();
    let mut rest = target;
    while let Some(after) = rest.strip_prefix("super::") {
        base.pop();
        rest = after;
    }
    base.push(rest);
    base.join("::")
}

/// Where item `name`, reachable as module `module`'s, is declared: following `pub use`.
fn resolve(
    modules: &BTreeMap<String, String>,
    module: &str,
    name: &str,
) -> Option<(String, String)> {
    let text = code(modules.get(module)?);
    if items(&text).iter().any(|(_, n, _)| n == name) {
        return Some((module.to_string(), name.to_string()));
    }
    let (target, _) = reexports(&text).into_iter().find(|(_, alias)| alias == name)?;
    let target = absolute(module, &target);
    let (in_module, item) = target.rsplit_once("::")?;
    resolve(modules, in_module, item)
}

/// The whole listing, one line per item, sorted.
fn listing() -> String {
    let modules = modules();
    let reachable = reachable(&modules);
    let mut lines = BTreeSet::new();
    let mut types = BTreeMap::new();
    for (public, (module, name)) in &reachable {
        let path = public.trim_end_matches(" #[doc(hidden)]");
        let hidden = if public.ends_with("#[doc(hidden)]") { " #[doc(hidden)]" } else { "" };
        let (module, name) =
            resolve(&modules, module, name).unwrap_or((module.clone(), name.clone()));
        let (module, name) = (&module, &name);
        match modules.get(module) {
            Some(text) => {
                for line in describe(path, &code(text), name) {
                    lines.insert(format!("{line}{hidden}"));
                }
                types.entry(name.clone()).or_insert_with(|| (path.to_string(), hidden));
            }
            // A re-export from another crate (serde_json's `Value`).
            None => {
                lines.insert(format!("{path}: pub use {module}::{name}{hidden}"));
            }
        }
    }
    lines.extend(impls(&modules, &types));
    for text in modules.values() {
        let mut rest = text.as_str();
        while let Some(at) = rest.find("#[macro_export]\nmacro_rules! ") {
            let start = at + "#[macro_export]\nmacro_rules! ".len();
            let name: String =
                rest[start..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let hidden =
                if rest[..at].ends_with("#[doc(hidden)]\n") { " #[doc(hidden)]" } else { "" };
            lines.insert(format!("baremcp::{name}!: macro_rules! {name}{hidden}"));
            rest = &rest[start..];
        }
    }
    lines.into_iter().map(|line| line + "\n").collect()
}

#[test]
fn the_public_api_is_the_listed_one() {
    let path: PathBuf = crate::root().join("tests/public-api.txt");
    let actual = listing();
    if crate::updating() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "the public API changed: if on purpose, run `UPDATE_EXPECT=1 cargo test --test it \
         public_api`, read `git diff tests/public-api.txt`, and note removals and renames in \
         CHANGELOG.md\n{}",
        crate::diff(&expected, &actual)
    );
}

#[test]
fn no_lexopt_type_is_in_the_public_api() {
    let listing = listing();
    assert!(!listing.contains("lexopt"), "{listing}");
    assert!(
        listing.contains("baremcp::Server::pub fn add_tool("),
        "not read from the source: {listing}"
    );
}
