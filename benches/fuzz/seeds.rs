//! Seeds: the client lines of the golden transcripts, with the flags each was recorded with.

use std::path::Path;

/// One transcript's client side.
#[derive(Clone, Debug)]
pub struct Seed {
    pub name: String,
    /// From `# args:`, `$FIXTURES` substituted.
    pub args: Vec<String>,
    /// What the client sends, one entry per `-->` / `-->~` line.
    pub chunks: Vec<Vec<u8>>,
}

fn unescape(raw: &str) -> Vec<u8> {
    let (bytes, mut out, mut i) = (raw.as_bytes(), Vec::new(), 0);
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'r')) => out.push(b'\r'),
            (b'\\', Some(b'n')) => out.push(b'\n'),
            (b'\\', Some(b't')) => out.push(b'\t'),
            (b'\\', Some(b'\\')) => out.push(b'\\'),
            (b'\\', Some(b'x')) => {
                out.push(
                    raw.get(i + 2..i + 4)
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .unwrap_or(b'?'),
                );
                i += 2;
            }
            (b, _) => {
                out.push(b);
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    out
}

/// Every transcript under `fixtures/transcripts` (recursively) and `fixtures/replay`.
pub fn load_seeds(fixtures: &Path) -> Vec<Seed> {
    let real = std::fs::canonicalize(fixtures).unwrap_or_else(|_| fixtures.to_path_buf());
    let real = real.to_string_lossy().trim_end_matches('/').to_string();
    let mut files = Vec::new();
    let mut dirs = vec![fixtures.join("transcripts"), fixtures.join("replay")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut seeds = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let text = text.replace("$FIXTURES", &real);
        let mut seed = Seed {
            name: path.strip_prefix(fixtures).unwrap_or(&path).display().to_string(),
            args: Vec::new(),
            chunks: Vec::new(),
        };
        for line in text.lines() {
            if let Some(args) = line.strip_prefix("# args:") {
                seed.args = args.split_whitespace().map(String::from).collect();
            } else if let Some(raw) = line.strip_prefix("-->~ ") {
                seed.chunks.push(unescape(raw));
            } else if let Some(sent) = line.strip_prefix("--> ") {
                seed.chunks.push(format!("{sent}\n").into_bytes());
            }
        }
        if !seed.chunks.is_empty() {
            seeds.push(seed);
        }
    }
    seeds
}

/// A seed's args only make sense for the built-in server when they come from its own
/// transcripts (not `library/` or `everything/`, which are other servers).
pub fn serves_builtin(seed: &Seed) -> bool {
    seed.name.starts_with("transcripts/") && seed.name.matches('/').count() == 1
}
