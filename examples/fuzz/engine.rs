//! The fuzzer's engine, shared by the soak (`examples/fuzz/main.rs`) and the bounded run in
//! `cargo test` (`tests/it/fuzz.rs`): a seeded PRNG, the golden transcripts as seeds,
//! mutations, the oracle (what the README promises a client), and the targets it drives:
//! the server binary (built-in catalog, `--root`, `--manifest`), `baremcp proxy` with its tool
//! filters (differentially: what the filter decided against what the upstream saw), and
//! `baremcp check` against `--manifest` on mutated manifests.
//!
//! Everything is deterministic for a given seed: the same seed makes the same inputs.

#![allow(dead_code)] // the soak and the test each use their own part

#[path = "json.rs"]
pub mod json;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use json::{Decoded, LENIENT, Node, Opts, STRICT};

// ---------------------------------------------------------------------------------------
// The PRNG

/// xorshift64*: small, fast, and the same sequence everywhere for a seed.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so nearby seeds start far apart (and 0 is usable).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------------------
// Seeds: the client lines of the golden transcripts

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

// ---------------------------------------------------------------------------------------
// Mutations

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}"#;

const INIT_2025_03_26: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"elicitation":{},"sampling":{},"roots":{}}}}"#;

const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "notifications/cancelled",
    "notifications/initialized",
    "notifications/progress",
    "nope",
    "",
];

/// Ids of every kind: readable ones (strings, integers of any size, escapes, lone
/// surrogates) and ones that are not ids.
const IDS: &[&str] = &[
    "0",
    "-0",
    "7",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890123456789012345678901234567890",
    r#""a""#,
    r#""\u0061""#,
    r#""""#,
    r#""\ud800""#,
    r#""\udc00""#,
    r#""\udfff""#,
    r#""\ud800\udc00""#,
    r#""baremcp-1""#,
    r#""a\"b\\c""#,
    r#""\u0000""#,
    r#""é""#,
    "1.0",
    "1e2",
    "-0.0",
    "null",
    "true",
    "[]",
    "{}",
    "[1]",
];

/// Values that stress what reads them.
const VALUES: &[&str] = &[
    "1e400",
    "-1e400",
    "1E-400",
    "0.1",
    "-0",
    "18446744073709551616",
    "123456789012345678901234567890",
    r#""\ud800""#,
    r#""\udfff\ud800""#,
    r#""\u0000""#,
    r#""%2e%2e/%2f""#,
    r#""../../../../etc/passwd""#,
    r#""file:///etc/passwd""#,
    "null",
    "true",
    "[]",
    "{}",
    r#"{"":{"":{}}}"#,
    r#""{name}""#,
    r#""$(id); rm -rf /""#,
    r#""-rf""#,
    r#""\n\r\t""#,
];

/// The structure of a line, for mutations that need to know where members are.
struct Spans {
    /// (start, end) of each object member (`"key":value`), with the key's decoded text.
    members: Vec<(usize, usize, String)>,
    /// (start, end) of each value.
    values: Vec<(usize, usize)>,
    /// (start, end) of each string value.
    strings: Vec<(usize, usize)>,
}

fn spans(line: &[u8]) -> Option<Spans> {
    let mut out = Spans { members: Vec::new(), values: Vec::new(), strings: Vec::new() };
    // Bounded recursion: a line already nested deeper is mutated as bytes instead.
    fn walk(s: &[u8], i: usize, depth: usize, out: &mut Spans) -> Result<usize, ()> {
        let mut i = i;
        while matches!(s.get(i), Some(b' ' | b'\t' | b'\r')) {
            i += 1;
        }
        let start = i;
        let end = match s.get(i) {
            Some(&open @ (b'{' | b'[')) if depth < 48 => {
                i += 1;
                let close = if open == b'{' { b'}' } else { b']' };
                loop {
                    while matches!(s.get(i), Some(b' ' | b'\t' | b'\r')) {
                        i += 1;
                    }
                    if s.get(i) == Some(&close) {
                        break i + 1;
                    }
                    if open == b'{' {
                        let member_start = i;
                        let (j, key) = json::string(s, i)?;
                        i = j;
                        while matches!(s.get(i), Some(b' ' | b'\t' | b'\r')) {
                            i += 1;
                        }
                        if s.get(i) != Some(&b':') {
                            return Err(());
                        }
                        i = walk(s, i + 1, depth + 1, out)?;
                        out.members.push((member_start, i, key.text));
                    } else {
                        i = walk(s, i, depth + 1, out)?;
                    }
                    while matches!(s.get(i), Some(b' ' | b'\t' | b'\r')) {
                        i += 1;
                    }
                    match s.get(i) {
                        Some(b',') => i += 1,
                        Some(&c) if c == close => break i + 1,
                        _ => return Err(()),
                    }
                }
            }
            Some(b'"') => {
                let (end, _) = json::string(s, i)?;
                out.strings.push((start, end));
                end
            }
            _ => json::skip(s, i, LENIENT)?.0,
        };
        out.values.push((start, end));
        Ok(end)
    }
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    walk(body, 0, 0, &mut out).ok()?;
    Some(out)
}

fn splice(line: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    [&line[..start], with, &line[end..]].concat()
}

/// The message part of a line (without its `\n`) and whether it had one.
fn body(line: &[u8]) -> (&[u8], bool) {
    match line.strip_suffix(b"\n") {
        Some(body) => (body, true),
        None => (line, false),
    }
}

fn with_newline(mut body: Vec<u8>, newline: bool) -> Vec<u8> {
    if newline {
        body.push(b'\n');
    }
    body
}

/// Nests `inner` `n` levels deep in arrays or objects.
fn nest(inner: &[u8], n: usize, objects: bool) -> Vec<u8> {
    let (open, close): (&[u8], &[u8]) = if objects { (br#"{"a":"#, b"}") } else { (b"[", b"]") };
    let mut out = Vec::with_capacity(inner.len() + n * (open.len() + 1));
    for _ in 0..n {
        out.extend_from_slice(open);
    }
    out.extend_from_slice(inner);
    for _ in 0..n {
        out.extend_from_slice(close);
    }
    out
}

/// Mutates one line (as sent, with its newline if it had one). `pool` gives other lines to
/// splice with; `limit` is the server's line limit, so sizes straddle it.
pub fn mutate_line(rng: &mut Rng, line: &[u8], pool: &[Vec<u8>], limit: usize) -> Vec<u8> {
    let (text, newline) = body(line);
    let mut text = text.to_vec();
    let structure = spans(&text);
    match rng.below(22) {
        // Bytes: flip, set, insert, delete.
        0 if !text.is_empty() => {
            let at = rng.below(text.len());
            text[at] ^= 1 << rng.below(8);
        }
        1 if !text.is_empty() => {
            let at = rng.below(text.len());
            text[at] = *rng.pick(b"{}[]\":,\\ 0-+.eEtfn\x00\x7f\xff\xc3\xed\r");
        }
        2 => {
            let at = rng.below(text.len() + 1);
            text.insert(at, *rng.pick(b"{}[]\":,\\ 0-.e\x01\xff\xc0\x80\r\t"));
        }
        3 if !text.is_empty() => {
            let at = rng.below(text.len());
            let n = 1 + rng.below(8.min(text.len() - at));
            text.drain(at..at + n);
        }
        // Truncation (with or without the newline).
        4 => {
            text.truncate(rng.below(text.len() + 1));
            return with_newline(text, rng.one_in(2));
        }
        // Splicing with another line.
        5 if !pool.is_empty() => {
            let other: &Vec<u8> = rng.pick(pool);
            let (other, _) = body(other);
            let (a, b) = (rng.below(text.len() + 1), rng.below(other.len() + 1));
            text = [&text[..a], &other[b..]].concat();
        }
        // A member twice: as it is, or with another value.
        6 | 7 => {
            if let Some(s) = structure.as_ref().filter(|s| !s.members.is_empty()) {
                let &(start, end, _) = rng.pick(&s.members);
                let mut copy = text[start..end].to_vec();
                if rng.one_in(2) {
                    let colon = copy.iter().position(|&b| b == b':').unwrap_or(0);
                    copy.truncate(colon + 1);
                    copy.extend_from_slice(rng.pick(VALUES).as_bytes());
                }
                let (at, glue) = if rng.one_in(2) {
                    (end, [&b","[..], &copy].concat())
                } else {
                    (start, [&copy[..], b","].concat())
                };
                text = splice(&text, at, at, &glue);
            }
        }
        // A well-known member twice, to make envelopes and params ambiguous.
        8 => {
            if let Some(s) = structure.as_ref().filter(|s| !s.members.is_empty()) {
                let targets: Vec<_> = s
                    .members
                    .iter()
                    .filter(|m| {
                        ["method", "id", "params", "name", "jsonrpc", "uri"].contains(&m.2.as_str())
                    })
                    .collect();
                if let Some(&&(_, end, ref key)) = (!targets.is_empty()).then(|| rng.pick(&targets))
                {
                    let value = match key.as_str() {
                        "method" => format!("\"{}\"", rng.pick(METHODS)),
                        "id" => rng.pick(IDS).to_string(),
                        "name" => (*rng.pick(&[
                            "\"secret_tool\"",
                            "\"calculate\"",
                            "\"hello\"",
                            "\"\\ud800\"",
                        ]))
                        .to_string(),
                        _ => rng.pick(VALUES).to_string(),
                    };
                    text = splice(
                        &text,
                        end,
                        end,
                        format!(",{}:{value}", json_string(key)).as_bytes(),
                    );
                }
            }
        }
        // Deep nesting around a value, or around the whole line.
        9 => {
            let n = *rng.pick(&[2, 127, 128, 129, 130, 1000, 100_000]);
            let objects = rng.one_in(2);
            match structure.as_ref().filter(|s| !s.values.is_empty() && rng.below(4) != 0) {
                Some(s) => {
                    let &(start, end) = rng.pick(&s.values);
                    let nested = nest(&text[start..end], n, objects);
                    text = splice(&text, start, end, &nested);
                }
                None => text = nest(&text, n, objects),
            }
        }
        // Huge strings and numbers, sized around the line limit.
        10 => {
            if let Some(s) = structure.as_ref().filter(|s| !s.strings.is_empty()) {
                let &(start, end) = rng.pick(&s.strings);
                let size = match rng.below(4) {
                    0 => limit.saturating_sub(text.len()).saturating_sub(4),
                    1 => limit.saturating_sub(text.len()) + 1,
                    2 => rng.below(limit.min(1 << 20)),
                    _ => 100 + rng.below(5000),
                };
                let fill = *rng.pick(&["x", "é", "\\u0041", "\\\\", " "]);
                let big = fill.repeat(size / fill.len().max(1));
                text = splice(&text, start + 1, end - 1, big.as_bytes());
            }
        }
        11 => {
            if let Some(s) = structure.as_ref().filter(|s| !s.values.is_empty()) {
                let &(start, end) = rng.pick(&s.values);
                let value = if rng.one_in(3) {
                    let digits = 1 + rng.below(limit.min(4096));
                    format!("{}{}", if rng.one_in(2) { "-" } else { "" }, "9".repeat(digits))
                } else {
                    rng.pick(VALUES).to_string()
                };
                text = splice(&text, start, end, value.as_bytes());
            }
        }
        // Lone surrogates and invalid UTF-8 inside a string (a key or a value).
        12 | 13 => {
            if let Some(s) =
                structure.as_ref().filter(|s| !s.strings.is_empty() || !s.members.is_empty())
            {
                let at = if s.members.is_empty() || rng.one_in(2) {
                    s.strings.get(rng.below(s.strings.len())).map(|&(start, _)| start + 1)
                } else {
                    let &(start, _, _) = rng.pick(&s.members);
                    Some(start + 1)
                };
                if let Some(at) = at {
                    const BAD: [&[u8]; 9] = [
                        br"\ud800",
                        br"\udc00",
                        br"\udfff",
                        br"\ud800\u0041",
                        b"\xff",
                        b"\xc0\x80",
                        b"\xed\xa0\x80",
                        b"\xf4\x90\x80\x80",
                        b"\xe2\x82",
                    ];
                    let insert = rng.pick(&BAD);
                    text = splice(&text, at, at, insert);
                }
            }
        }
        // Ids of every kind, or no id.
        14 | 15 => {
            if let Some(s) = structure.as_ref() {
                let ids: Vec<_> = s.members.iter().filter(|m| m.2 == "id").collect();
                if let Some(&&(start, end, _)) = (!ids.is_empty()).then(|| rng.pick(&ids)) {
                    let replacement = if rng.one_in(6) {
                        String::new()
                    } else {
                        format!("\"id\":{}", rng.pick(IDS))
                    };
                    text = splice(&text, start, end, replacement.as_bytes());
                    if replacement.is_empty() {
                        // Drop a comma left dangling: `{,` or `,,` or `,}`.
                        let fixed = String::from_utf8_lossy(&text)
                            .replace("{,", "{")
                            .replace(",,", ",")
                            .replace(",}", "}");
                        if std::str::from_utf8(&text).is_ok() {
                            text = fixed.into_bytes();
                        }
                    }
                }
            }
        }
        // Another method, or a cancel of an id.
        16 => {
            if let Some(&(start, end, _)) =
                structure.as_ref().and_then(|s| s.members.iter().find(|m| m.2 == "method"))
            {
                let method = format!("\"method\":\"{}\"", rng.pick(METHODS));
                text = splice(&text, start, end, method.as_bytes());
            }
        }
        17 => {
            text = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"fuzz"}}}}"#,
                rng.pick(IDS)
            )
            .into_bytes();
        }
        // Modern `_meta` into params.
        18 => {
            if let Some(at) = find(&text, br#""params":{"#) {
                let at = at + br#""params":{"#.len();
                text = splice(&text, at, at, format!("{META},").as_bytes());
            }
        }
        // Escaped spellings of member names (`"\u0069d"` is `"id"`).
        19 => {
            if let Some(s) = structure.as_ref().filter(|s| !s.members.is_empty()) {
                let &(start, _, ref key) = rng.pick(&s.members);
                if let Some(first) = key.chars().next() {
                    let escaped = format!(
                        "\"\\u{:04x}{}\"",
                        first as u32,
                        &key[first.len_utf8()..].replace('"', "\\\"")
                    );
                    let (key_end, _) = json::string(&text, start)
                        .unwrap_or((start, Decoded { text: String::new(), lone_surrogate: false }));
                    if key_end > start {
                        text = splice(&text, start, key_end, escaped.as_bytes());
                    }
                }
            }
        }
        // Whitespace and line endings.
        20 => match rng.below(4) {
            0 => text.push(b'\r'),
            1 => {
                const PREFIXES: [&[u8]; 5] = [b" ", b"\t", b"\r", b"\x0c", b"\xef\xbb\xbf"];
                let prefix = rng.pick(&PREFIXES);
                text.splice(0..0, prefix.iter().copied());
            }
            2 => text.clear(),
            _ => {
                const SUFFIXES: [&[u8]; 5] = [b" x", b"}", b",", b" {}", b"\x00"];
                let suffix = rng.pick(&SUFFIXES);
                text.extend_from_slice(suffix);
            }
        },
        // A line longer than the limit.
        _ => {
            if rng.one_in(3) {
                text.resize(limit + 1 + rng.below(64), b' ');
            } else {
                let at = rng.below(text.len() + 1);
                text = splice(&text, at, at, b"[1,2]");
            }
        }
    }
    with_newline(text, newline || rng.below(16) != 0)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A batch of the given lines' messages, as one line.
fn batch_of(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(body(line).0);
    }
    out.extend_from_slice(b"]\n");
    out
}

/// A whole session mutated: lines mutated, dropped, repeated, reordered, batched, a
/// 2025-03-26 `initialize` put in front (so batches are answered), the last newline cut.
pub fn mutate_session(
    rng: &mut Rng,
    seed: &[Vec<u8>],
    pool: &[Vec<u8>],
    limit: usize,
) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = seed.to_vec();
    let rounds = 1 + rng.below(6);
    for _ in 0..rounds {
        if lines.is_empty() {
            lines.push(rng.pick(pool).clone());
        }
        let at = rng.below(lines.len());
        match rng.below(12) {
            0 => {
                lines.remove(at);
            }
            1 => {
                let copy = lines[at].clone();
                let n = 1 + rng.below(3);
                for _ in 0..n {
                    lines.insert(at, copy.clone());
                }
            }
            2 => {
                let other = rng.below(lines.len());
                lines.swap(at, other);
            }
            3 => lines.insert(at, rng.pick(pool).clone()),
            4 => {
                // A batch of a few neighbours.
                let n = 1 + rng.below(4.min(lines.len() - at));
                let parts: Vec<&[u8]> = lines[at..at + n].iter().map(Vec::as_slice).collect();
                let joined = batch_of(&parts);
                lines.splice(at..at + n, [joined]);
            }
            5 => {
                // A batch bomb: one request repeated up to the line limit.
                let (item, _) = body(&lines[at]);
                if !item.is_empty() && item.len() < limit {
                    let count = (limit / (item.len() + 1)).clamp(1, 100_000);
                    let count = if rng.one_in(2) { count } else { 1 + rng.below(count) };
                    let parts: Vec<&[u8]> = std::iter::repeat_n(item, count).collect();
                    lines[at] = batch_of(&parts);
                }
            }
            6 => lines.insert(0, format!("{INIT_2025_03_26}\n").into_bytes()),
            7 => {
                // Two lines in one write, or one line cut in two.
                if at + 1 < lines.len() && rng.one_in(2) {
                    let next = lines.remove(at + 1);
                    let (a, _) = body(&lines[at]);
                    lines[at] = [a, b"\n", &next].concat();
                } else {
                    let cut = rng.below(lines[at].len() + 1);
                    let rest = lines[at].split_off(cut);
                    lines.insert(at + 1, rest);
                }
            }
            _ => {
                let mutated = mutate_line(rng, &lines[at], pool, limit);
                lines[at] = mutated;
            }
        }
    }
    // Mutations compound; past twice the limit a line only costs time.
    for line in &mut lines {
        line.truncate(2 * limit + 4096);
    }
    if rng.one_in(8)
        && let Some(last) = lines.last_mut()
        && last.ends_with(b"\n")
    {
        last.pop();
    }
    lines
}

// ---------------------------------------------------------------------------------------
// The oracle: what a client may expect for each line it sends

/// Which response a line may get.
#[derive(Clone, Debug, PartialEq)]
pub enum Want {
    /// Exactly one response with this raw id (`None`: `null`).
    One(Option<String>),
    /// At most one response, with this id or `null`.
    Maybe(Option<String>),
    /// No response (a notification, a response, a blank line).
    Nothing,
    /// A batch: one `null` error, one array matching the items, or nothing when no item
    /// needs an answer.
    Batch(Vec<Want>),
    /// Exactly one response, `null` or this id: a request whose id is readable but that a
    /// bug not fixed yet answers with `null` (the class says which), or one where either is
    /// right (class `""`: a line too long to read, whose id is near its start).
    OneOrNull(String, &'static str),
    /// No response, or one `null` error: a notification a bug not fixed yet answers.
    SilentOrNull(&'static str),
}

/// Whether a raw id is one the server echoes (`Id::from_raw`): a string or an integer.
fn readable_id(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    raw.starts_with(b"\"") || (!digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
}

/// Bugs listed in issue 20 that other branches fix: while one is pending here, the oracle
/// accepts the old answer for exactly the inputs the bug concerns (and counts them), so
/// the bounded run stays green until the fix lands. The final tree keeps this empty.
pub const PENDING: &[(&str, &str)] = &[
    // Empty: every class issue 20 listed is fixed. While a fix is in flight elsewhere, its
    // class goes here as ("class", "owner: what the fix does"); the classes the oracle knows
    // are notification-answered, limit-as-parse-error, batch-amplification, proxy-ambiguous,
    // proxy-duplicate-ids, proxy-id-rewritten, proxy-id-text and validation-budget.
];

pub fn pending(class: &str) -> bool {
    PENDING.iter().any(|(c, _)| *c == class)
}

/// Facts about a line that the pending classes key on.
struct Facts {
    depth: usize,
    lone_surrogate_key: bool,
}

fn has_lone_surrogate_escape(text: &[u8]) -> bool {
    text.windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}

/// The answer one message (a line, or an item of a batch) may get.
fn want_message(text: &[u8], facts: &Facts) -> Want {
    let Some(members) = json::members(text, STRICT) else {
        // Valid JSON that is not an object: an invalid request without an id.
        return Want::One(None);
    };
    let ids: Vec<&[u8]> = members
        .iter()
        .filter(|(k, _)| k.text == "id" && !k.lone_surrogate)
        .map(|(_, v)| *v)
        .collect();
    let methods: Vec<&[u8]> = members
        .iter()
        .filter(|(k, _)| k.text == "method" && !k.lone_surrogate)
        .map(|(_, v)| *v)
        .collect();
    let id = (ids.len() == 1 && readable_id(ids[0]))
        .then(|| String::from_utf8_lossy(ids[0]).into_owned());
    if methods.is_empty() {
        return Want::Maybe(id);
    }
    if ids.is_empty() {
        return if pending("notification-answered") {
            Want::SilentOrNull("notification-answered")
        } else {
            Want::Nothing
        };
    }
    let Some(id) = id else { return Want::One(None) };
    let listen = json::string(methods[0], 0).is_ok_and(|(_, m)| m.text == "subscriptions/listen");
    if listen {
        return Want::Maybe(Some(id));
    }
    if (facts.depth > 128 || facts.lone_surrogate_key) && pending("limit-as-parse-error") {
        return Want::OneOrNull(id, "limit-as-parse-error");
    }
    Want::One(Some(id))
}

/// What one line (without its `\n`) may get, for a server with line limit `limit`.
pub fn want_line(line: &[u8], limit: usize) -> Want {
    if line.len() > limit {
        return null_or_prefix_id(line);
    }
    let Ok(text) = std::str::from_utf8(line) else { return Want::One(None) };
    if text.trim_ascii().is_empty() {
        return Want::Nothing;
    }
    let Ok(depth) = json::whole(line, STRICT) else { return Want::One(None) };
    let facts = Facts { depth, lone_surrogate_key: has_lone_surrogate_escape(line) };
    match json::items(line, STRICT) {
        Some(items) if items.is_empty() => Want::One(None),
        Some(items) => {
            let wants = items
                .iter()
                .map(|item| {
                    let depth = json::whole(item, STRICT).unwrap_or(0);
                    want_message(
                        item,
                        &Facts { depth, lone_surrogate_key: facts.lone_surrogate_key },
                    )
                })
                .collect();
            Want::Batch(wants)
        }
        None => want_message(line, &facts),
    }
}

/// The id named once among the top-level members in a line's first 4 KiB, when it is a
/// readable one: what a reader that gives up on the rest of the line can still answer.
pub fn prefix_id(line: &[u8]) -> Option<String> {
    let prefix = String::from_utf8_lossy(&line[..line.len().min(4096)]).into_owned();
    let s = prefix.as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while matches!(s.get(*i), Some(b' ' | b'\t' | b'\r')) {
            *i += 1;
        }
    };
    ws(&mut i);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut ids = Vec::new();
    loop {
        ws(&mut i);
        let Ok((j, key)) = json::string(s, i) else { break };
        i = j;
        ws(&mut i);
        if s.get(i) != Some(&b':') {
            break;
        }
        i += 1;
        ws(&mut i);
        let Ok((end, _)) = json::skip(s, i, STRICT) else { break };
        if key.text == "id" && !key.lone_surrogate {
            ids.push(&s[i..end]);
        }
        i = end;
        ws(&mut i);
        if s.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    match ids[..] {
        [id] if readable_id(id) => Some(String::from_utf8_lossy(id).into_owned()),
        _ => None,
    }
}

/// The id named once among a line's top-level members, read as far as the line parses
/// (bytes read lossily): what a reader that holds the whole line can answer with.
pub fn lenient_id(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let mut ids = Vec::new();
    let s = text.as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while matches!(s.get(*i), Some(b' ' | b'\t' | b'\r')) {
            *i += 1;
        }
    };
    ws(&mut i);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        ws(&mut i);
        let Ok((j, key)) = json::string(s, i) else { break };
        i = j;
        ws(&mut i);
        if s.get(i) != Some(&b':') {
            break;
        }
        i += 1;
        ws(&mut i);
        let Ok((end, _)) = json::skip(s, i, STRICT) else { break };
        if key.text == "id" && !key.lone_surrogate {
            ids.push(String::from_utf8_lossy(&s[i..end]).into_owned());
        }
        i = end;
        ws(&mut i);
        if s.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    match &ids[..] {
        [id] if readable_id(id.as_bytes()) => Some(id.clone()),
        _ => None,
    }
}

/// A line whose id a reader that decodes ids (rather than keeping their text) would change
/// or lose: escapes or lone surrogates anywhere, an id past 64 bits, or a fractional one.
fn odd_line(line: &[u8]) -> bool {
    let id = find(line, b"\"id\":").map(|at| &line[at + 5..]).map(|rest| {
        let end = rest.iter().position(|&b| b == b',' || b == b'}').unwrap_or(rest.len());
        String::from_utf8_lossy(&rest[..end]).into_owned()
    });
    has_lone_surrogate_escape(line)
        || id.is_some_and(|id| {
            id.contains('\\')
                || (!id.starts_with('"')
                    && (id.trim_start_matches('-').len() > 18
                        || id.contains(['.', 'e', 'E'])
                        || id == "-0"))
        })
}

/// One response: `null`, or the id a reader may take from the start of the line.
fn null_or_prefix_id(line: &[u8]) -> Want {
    prefix_id(line).map_or(Want::One(None), |id| Want::OneOrNull(id, ""))
}

/// Splits a byte stream as the server does: on `\n`, a last line without it included.
pub fn split_lines(input: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// One line the server wrote, checked for shape: a response (or an array of them), a
/// notification, or a request of the server's own.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// A response's raw id (`None`: null) and its error code, if it is an error.
    Response(Option<String>, Option<i64>),
    Array(Vec<(Option<String>, Option<i64>)>),
    Notification(String),
    ServerRequest(String, String),
}

fn check_response(members: &[(Decoded, &[u8])]) -> Result<(Option<String>, Option<i64>), String> {
    let get = |name: &str| members.iter().find(|(k, _)| k.text == name).map(|(_, v)| *v);
    let id = get("id").ok_or("a response without an id")?;
    if !(id == b"null" || readable_id(id)) {
        return Err(format!(
            "a response whose id is not a string, an integer or null: {}",
            String::from_utf8_lossy(id)
        ));
    }
    let id = (id != b"null").then(|| String::from_utf8_lossy(id).into_owned());
    match (get("result"), get("error")) {
        (Some(_), None) => Ok((id, None)),
        (None, Some(error)) => {
            let fields = json::members(error, STRICT).ok_or("an error that is not an object")?;
            let field = |name: &str| fields.iter().find(|(k, _)| k.text == name).map(|(_, v)| *v);
            let code = field("code").and_then(|c| std::str::from_utf8(c).ok()?.parse::<i64>().ok());
            let code = code.ok_or("an error without an integer code")?;
            if !field("message").is_some_and(|m| m.starts_with(b"\"")) {
                return Err("an error without a string message".into());
            }
            Ok((id, Some(code)))
        }
        _ => Err("a response needs exactly one of result and error".into()),
    }
}

/// Checks one line the server wrote.
pub fn check_out(line: &[u8]) -> Result<Out, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a line that is not UTF-8".to_string())?;
    json::whole(line, STRICT).map_err(|()| "a line that is not JSON".to_string())?;
    fn one(text: &[u8]) -> Result<Vec<(Decoded, &[u8])>, String> {
        let members = json::members(text, STRICT).ok_or("a message that is not an object")?;
        let mut names: Vec<&str> = members.iter().map(|(k, _)| k.text.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("a message that names {:?} twice", w[0]));
        }
        if !members.iter().any(|(k, v)| k.text == "jsonrpc" && *v == br#""2.0""#) {
            return Err("a message without \"jsonrpc\":\"2.0\"".into());
        }
        Ok(members)
    }
    if let Some(items) = json::items(line, STRICT) {
        if items.is_empty() {
            return Err("an empty batch reply".into());
        }
        let replies = items
            .iter()
            .map(|item| check_response(&one(item)?))
            .collect::<Result<Vec<_>, String>>()?;
        return Ok(Out::Array(replies));
    }
    let members = one(line)?;
    let method = members.iter().find(|(k, _)| k.text == "method").map(|(_, v)| *v);
    let id = members.iter().find(|(k, _)| k.text == "id").map(|(_, v)| *v);
    match (method, id) {
        (Some(method), None) => {
            let method = json::string(method, 0)
                .map_err(|()| format!("a notification whose method is not a string: {text}"))?;
            Ok(Out::Notification(method.1.text))
        }
        (Some(method), Some(id)) => {
            let method = json::string(method, 0)
                .map_err(|()| "a request whose method is not a string".to_string())?;
            Ok(Out::ServerRequest(String::from_utf8_lossy(id).into_owned(), method.1.text))
        }
        (None, _) => {
            let (id, code) = check_response(&members)?;
            Ok(Out::Response(id, code))
        }
    }
}

fn id_text(id: &Option<String>) -> &str {
    id.as_deref().unwrap_or("null")
}

fn single_matches(want: &Want, id: &Option<String>) -> bool {
    match want {
        Want::One(w) => w == id,
        Want::Maybe(w) => id.is_none() || w == id,
        Want::OneOrNull(w, _) => id.is_none() || id.as_deref() == Some(w),
        Want::SilentOrNull(_) => id.is_none(),
        Want::Nothing | Want::Batch(_) => false,
    }
}

fn may_be_silent(want: &Want) -> bool {
    match want {
        Want::Maybe(_) | Want::Nothing | Want::SilentOrNull(_) => true,
        Want::Batch(items) => items.iter().all(may_be_silent),
        Want::One(_) | Want::OneOrNull(..) => false,
    }
}

/// Whether a batch reply's entries match the items' wants, in order.
fn array_matches(wants: &[Want], got: &[(Option<String>, Option<i64>)]) -> bool {
    // The ordered match costs items × entries when many items may go unanswered: past a
    // few thousand, entries are counted per id instead.
    if wants.len() > 2000 {
        let outs: Vec<Out> =
            got.iter().map(|(id, code)| Out::Response(id.clone(), *code)).collect();
        return match_as_multiset(wants, &outs, &[]).is_ok();
    }
    // Positions in `got` reachable after each want.
    let mut reach = vec![0usize];
    for want in wants {
        let mut next = Vec::new();
        for &j in &reach {
            if may_be_silent(want) {
                next.push(j);
            }
            if j < got.len() && single_matches(want, &got[j].0) {
                next.push(j + 1);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            return false;
        }
        reach = next;
    }
    reach.contains(&got.len())
}

fn consumes(want: &Want, out: &Out) -> bool {
    match (want, out) {
        (Want::Batch(_), Out::Response(None, Some(_))) => true,
        (Want::Batch(items), Out::Array(got)) => array_matches(items, got),
        (_, Out::Response(id, _)) => single_matches(want, id),
        _ => false,
    }
}

/// Matches the responses, in order, against the lines' wants (notifications from the
/// server are skipped). Returns why not, naming the first line that went wrong.
pub fn match_in_order(wants: &[Want], outs: &[Out]) -> Result<(), String> {
    if wants.len() > 5000 {
        return match_as_multiset(wants, outs, &[]);
    }
    let responses: Vec<&Out> =
        outs.iter().filter(|o| matches!(o, Out::Response(..) | Out::Array(_))).collect();
    let mut reach = vec![0usize];
    for (n, want) in wants.iter().enumerate() {
        let mut next = Vec::new();
        for &j in &reach {
            if may_be_silent(want) {
                next.push(j);
            }
            if j < responses.len() && consumes(want, responses[j]) {
                next.push(j + 1);
            }
        }
        next.sort_unstable();
        next.dedup();
        if next.is_empty() {
            let got = reach.iter().filter_map(|&j| responses.get(j)).next();
            return Err(format!(
                "line {}: wanted {want:?}, got {}",
                n + 1,
                got.map_or("no more responses".into(), |o| format!("{o:?}"))
            ));
        }
        reach = next;
    }
    if !reach.contains(&responses.len()) {
        let from = reach.iter().max().copied().unwrap_or(0);
        return Err(format!(
            "responses nobody asked for: {:?}",
            &responses[from..responses.len().min(from + 3)]
        ));
    }
    Ok(())
}

/// The same as counts per id, for targets whose replies may come in any order (the proxy
/// answers filtered calls itself; a waiting handler's queued requests are served later).
/// `cancelled` ids may go unanswered.
pub fn match_as_multiset(wants: &[Want], outs: &[Out], cancelled: &[String]) -> Result<(), String> {
    type Counts = HashMap<Option<String>, usize>;
    let (mut least, mut most): (Counts, Counts) = Default::default();
    fn bump(counts: &mut Counts, id: &Option<String>) {
        *counts.entry(id.clone()).or_default() += 1;
    }
    for want in wants {
        let items = match want {
            Want::Batch(items) => {
                bump(&mut most, &None);
                items.as_slice()
            }
            other => std::slice::from_ref(other),
        };
        for item in items {
            match item {
                Want::One(id) => {
                    if !matches!(want, Want::Batch(_))
                        && !id.as_ref().is_some_and(|id| cancelled.contains(id))
                    {
                        bump(&mut least, id);
                    }
                    bump(&mut most, id);
                    if id.is_some() {
                        bump(&mut most, &None);
                    }
                }
                Want::OneOrNull(id, _) | Want::Maybe(Some(id)) => {
                    bump(&mut most, &Some(id.clone()));
                    bump(&mut most, &None);
                }
                Want::Maybe(None) | Want::SilentOrNull(_) => bump(&mut most, &None),
                Want::Nothing | Want::Batch(_) => {}
            }
        }
    }
    let mut got: HashMap<Option<String>, usize> = HashMap::new();
    // The proxy's documented stand-in for a reply over its limit: -32603 with a null id.
    let mut stand_ins = 0;
    for out in outs {
        match out {
            Out::Response(None, Some(-32603)) => stand_ins += 1,
            Out::Response(id, _) => *got.entry(id.clone()).or_default() += 1,
            Out::Array(items) => {
                items.iter().for_each(|(id, _)| *got.entry(id.clone()).or_default() += 1)
            }
            _ => {}
        }
    }
    for (id, &n) in &least {
        let have = got.get(id).copied().unwrap_or(0);
        if have + stand_ins < n {
            return Err(format!("id {}: wanted {n} response(s), got {have}", id_text(id)));
        }
        stand_ins -= n.saturating_sub(have);
    }
    *got.entry(None).or_default() += stand_ins;
    for (id, &n) in &got {
        let allowed = most.get(id).copied().unwrap_or(0);
        if n > allowed {
            return Err(format!("id {}: {n} response(s), at most {allowed} expected", id_text(id)));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Running a process

/// What one run of a process did.
#[derive(Debug, Default)]
pub struct Run {
    /// Each stdout line checked (or why it is not a valid message), with its first bytes.
    pub outs: Vec<Result<Out, String>>,
    pub excerpts: Vec<String>,
    /// The whole stdout, for content checks (capped).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: Option<i32>,
    pub hung: bool,
    /// The process stopped reading before the end of its input.
    pub write_failed: bool,
    /// Peak resident memory in KiB, read when the sentinel's reply arrived.
    pub peak_kib: Option<u64>,
    pub sentinel_seen: bool,
    /// A stdout line longer than the cap.
    pub huge_line: Option<usize>,
}

pub const SENTINEL_ID: &str = "\"fuzz-sentinel\"";
const SENTINEL: &[u8] = b"\n{\"jsonrpc\":\"2.0\",\"id\":\"fuzz-sentinel\",\"method\":\"ping\"}\n";
/// A reply line longer than this is amplification, whatever the limits.
pub const OUTPUT_LINE_CAP: usize = 64 << 20;
const KEPT_STDOUT: usize = 4 << 20;

fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `command` with `input` on its stdin (then the sentinel ping, when asked), reading
/// everything it writes; ends it (its whole process group) past `deadline`.
pub fn run(command: &mut Command, input: &[u8], sentinel: bool, deadline: Duration) -> Run {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let mut child = match command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return Run { outs: vec![Err(format!("cannot start: {e}"))], ..Run::default() },
    };
    let pid = child.id();
    let (seen_tx, seen_rx) = mpsc::channel::<()>();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let mut ok = stdin.write_all(&input).is_ok();
        if sentinel && ok {
            ok = stdin.write_all(SENTINEL).and_then(|()| stdin.flush()).is_ok();
            // Keep the input open until the sentinel's reply is read, so the process is
            // measured alive, with everything before it done.
            let _ = seen_rx.recv_timeout(deadline);
        }
        ok
    });
    let stdout = child.stdout.take().unwrap();
    let (out_tx, out_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::with_capacity(1 << 16, stdout);
        let mut run = Run::default();
        let mut line = Vec::new();
        loop {
            line.clear();
            let mut too_long = 0usize;
            let mut ended = false;
            loop {
                let chunk = match reader.fill_buf() {
                    Ok(chunk) => chunk,
                    Err(_) => {
                        ended = true;
                        break;
                    }
                };
                if chunk.is_empty() {
                    ended = true;
                    break;
                }
                let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                    Some(at) => (at, true),
                    None => (chunk.len(), false),
                };
                if too_long > 0 || line.len() + take > OUTPUT_LINE_CAP {
                    too_long += take + line.len();
                    line.clear();
                } else {
                    line.extend_from_slice(&chunk[..take]);
                }
                reader.consume(take + usize::from(done));
                if done {
                    break;
                }
            }
            if too_long > 0 {
                run.huge_line = Some(too_long);
            } else if !line.is_empty() {
                if run.stdout.len() < KEPT_STDOUT {
                    run.stdout.extend_from_slice(&line[..line.len().min(KEPT_STDOUT)]);
                    run.stdout.push(b'\n');
                }
                let out = check_out(&line);
                if sentinel && matches!(&out, Ok(Out::Response(Some(id), _)) if id == SENTINEL_ID) {
                    run.peak_kib = peak_kib(pid);
                    run.sentinel_seen = true;
                    let _ = seen_tx.send(());
                }
                run.excerpts
                    .push(String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned());
                run.outs.push(out);
            }
            if ended {
                break;
            }
        }
        let _ = out_tx.send(run);
    });
    let mut stderr = child.stderr.take().unwrap();
    let (err_tx, err_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut kept, mut buf) = (Vec::new(), [0u8; 8192]);
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            if kept.len() < 1 << 20 {
                kept.extend_from_slice(&buf[..n]);
            }
        }
        let _ = err_tx.send(kept);
    });
    let mut hung = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < deadline => {
                std::thread::sleep(Duration::from_millis(1))
            }
            _ => {
                hung = true;
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{pid}")])
                    .stderr(Stdio::null())
                    .status();
                let _ = child.kill();
                break child.wait().ok();
            }
        }
    };
    // Children of the process may still hold its pipes: end them too.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
    let mut run = out_rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    run.stderr = err_rx.recv_timeout(Duration::from_secs(5)).unwrap_or_default();
    run.write_failed = !writer.join().unwrap_or(false);
    run.hung = hung;
    run.code = status.and_then(|s| s.code());
    run
}

// ---------------------------------------------------------------------------------------
// Targets and the driver

/// A broken promise, with what reproduces it.
#[derive(Clone, Debug)]
pub struct Violation {
    pub target: String,
    pub class: String,
    pub detail: String,
    /// The command line (after the binary).
    pub args: Vec<String>,
    pub input: Vec<u8>,
}

impl Violation {
    /// The reproducer as text: the command, and the input with escapes, as a transcript
    /// would write it.
    pub fn describe(&self) -> String {
        let mut input = String::new();
        for line in self.input.split_inclusive(|&b| b == b'\n') {
            input.push_str("-->~ ");
            for &b in &line[..line.len().min(2000)] {
                match b {
                    b'\\' => input.push_str("\\\\"),
                    b'\r' => input.push_str("\\r"),
                    b'\n' => input.push_str("\\n"),
                    b'\t' => input.push_str("\\t"),
                    0x20..=0x7e => input.push(b as char),
                    _ => input.push_str(&format!("\\x{b:02X}")),
                }
            }
            if line.len() > 2000 {
                input.push_str(&format!(" ... ({} more bytes)", line.len() - 2000));
            }
            input.push('\n');
            if input.len() > 20_000 {
                input.push_str("... (cut; see the .bin file)\n");
                break;
            }
        }
        format!(
            "target: {}\nclass: {}\ndetail: {}\nargs: {}\ninput ({} bytes):\n{input}",
            self.target,
            self.class,
            self.detail,
            self.args.join(" "),
            self.input.len()
        )
    }
}

/// Where the fuzzer runs and for how long.
pub struct Config {
    /// The `baremcp` binary.
    pub bin: PathBuf,
    /// The repository's `fixtures/`.
    pub fixtures: PathBuf,
    /// A directory the fuzzer may fill (roots, manifests, logs).
    pub scratch: PathBuf,
    pub seed: u64,
    /// Stop after this many cases...
    pub cases: u64,
    /// ...or this much time, whichever comes first.
    pub time: Duration,
    /// Print progress every this often (`None`: quiet).
    pub progress: Option<Duration>,
    /// Write each violation's reproducer here as soon as it is found.
    pub out: Option<PathBuf>,
}

#[derive(Debug, Default)]
pub struct Report {
    pub cases: u64,
    /// Lines sent, over every target.
    pub messages: u64,
    pub elapsed: Duration,
    pub violations: Vec<Violation>,
    /// Cases that passed only because a pending class (see [`PENDING`]) widened the oracle.
    pub tolerated: BTreeMap<String, u64>,
    /// One reproducer of each tolerated class, for the notes.
    pub tolerated_examples: BTreeMap<String, Violation>,
    pub per_target: BTreeMap<&'static str, u64>,
    /// Time spent per target.
    pub time_per_target: BTreeMap<&'static str, Duration>,
    /// The slowest case of each target, with what reproduces it.
    pub slowest: BTreeMap<&'static str, (Duration, Violation)>,
}

impl Report {
    pub fn summary(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut out = format!(
            "{} cases, {} messages in {:.1} s: {:.0} messages/s, {:.0} cases/s; {} violation(s)",
            self.cases,
            self.messages,
            secs,
            self.messages as f64 / secs,
            self.cases as f64 / secs,
            self.violations.len()
        );
        for (target, n) in &self.per_target {
            let time = self.time_per_target.get(target).copied().unwrap_or_default();
            let slowest = self.slowest.get(target).map_or(0.0, |(t, _)| t.as_secs_f64());
            out.push_str(&format!(
                "\n  {target}: {n} cases in {:.1} s (slowest {slowest:.2} s)",
                time.as_secs_f64()
            ));
        }
        for (class, n) in &self.tolerated {
            let why = PENDING.iter().find(|(c, _)| c == class).map_or("", |(_, why)| why);
            out.push_str(&format!("\n  tolerated (pending fix) {class}: {n} case(s) — {why}"));
        }
        out
    }
}

/// Files and state set up once per run.
struct World {
    bin: PathBuf,
    seeds: Vec<Seed>,
    builtin: Vec<usize>,
    pool: Vec<Vec<u8>>,
    root: PathBuf,
    root_seeds: Vec<Seed>,
    proxy_manifest: PathBuf,
    proxy_log: PathBuf,
    proxy_ran: PathBuf,
    manifests: Vec<(String, Vec<u8>)>,
    /// Each test group of the JSON Schema Test Suite: the schema and its instances, as text.
    schemas: Vec<(String, Vec<String>)>,
    manifest_dir: PathBuf,
    fixtures_tree: String,
}

/// A file served only by mistake: its content must never reach a client.
const MARKER: &str = "MARKER-OF-A-FILE-NEVER-SERVED";

fn setup(config: &Config) -> std::io::Result<World> {
    let seeds = load_seeds(&config.fixtures);
    let builtin = (0..seeds.len()).filter(|&i| serves_builtin(&seeds[i])).collect();
    let pool: Vec<Vec<u8>> = seeds.iter().flat_map(|s| s.chunks.iter().cloned()).collect();
    let fixtures = std::fs::canonicalize(&config.fixtures)?;
    let fixtures_tree = format!("{}/tree", fixtures.display());
    std::fs::create_dir_all(&config.scratch)?;
    let scratch = std::fs::canonicalize(&config.scratch)?;

    // A root with everything a read must refuse beside what it may serve.
    let top = scratch.join("files");
    let _ = std::fs::remove_dir_all(&top);
    let root = top.join("root");
    std::fs::create_dir_all(root.join("sub/deep"))?;
    std::fs::create_dir_all(root.join(".dot"))?;
    std::fs::write(top.join("secret.txt"), format!("{MARKER} outside\n"))?;
    std::fs::write(root.join("inside.txt"), "inside\n")?;
    std::fs::write(root.join("sub/deep/leaf.txt"), "leaf\n")?;
    std::fs::write(root.join("blob.bin"), [0u8, 159, 146, 150, 255])?;
    std::fs::write(root.join(".hidden.txt"), format!("{MARKER} hidden\n"))?;
    std::fs::write(root.join(".dot/inner.txt"), format!("{MARKER} dot-dir\n"))?;
    std::os::unix::fs::symlink("../secret.txt", root.join("link-out"))?;
    std::os::unix::fs::symlink("..", root.join("dir-out"))?;
    std::os::unix::fs::symlink(".hidden.txt", root.join("link-hidden"))?;
    std::os::unix::fs::symlink("inside.txt", root.join("link-in"))?;
    let _ = Command::new("mkfifo").arg(root.join("pipe")).status();
    let root_seeds: Vec<Seed> = seeds
        .iter()
        .filter(|s| s.args.iter().any(|a| a == "--root"))
        .map(|s| {
            let mut s = s.clone();
            let swap = |b: &Vec<u8>| {
                String::from_utf8_lossy(b)
                    .replace(&fixtures_tree, &root.to_string_lossy())
                    .into_bytes()
            };
            s.chunks = s.chunks.iter().map(swap).collect();
            s
        })
        .collect();

    // The proxy's upstream: a manifest whose filtered tool leaves a trace when it runs.
    let proxy_dir = scratch.join("proxy");
    std::fs::create_dir_all(&proxy_dir)?;
    let proxy_ran = proxy_dir.join("ran.log");
    let proxy_manifest = proxy_dir.join("upstream.json");
    let ran = proxy_ran.to_string_lossy();
    let manifest = format!(
        r#"{{"server":{{"name":"upstream","version":"1"}},"tools":[
{{"name":"echo","description":"allowed","inputSchema":{{"type":"object"}},"run":{{"argv":["printf","%s","ok"]}}}},
{{"name":"secret_tool","description":"filtered","inputSchema":{{"type":"object"}},"run":{{"argv":["sh","-c","echo secret_tool >> \"$0\"","{ran}"]}}}},
{{"name":"other_secret","description":"filtered","inputSchema":{{"type":"object"}},"run":{{"argv":["sh","-c","echo other_secret >> \"$0\"","{ran}"]}}}}]}}"#
    );
    std::fs::write(&proxy_manifest, manifest)?;

    // Manifests to mutate, in a directory with what their relative paths name.
    let manifest_dir = scratch.join("manifests");
    let _ = std::fs::remove_dir_all(&manifest_dir);
    std::fs::create_dir_all(manifest_dir.join("scripts"))?;
    let mut manifests = Vec::new();
    for entry in std::fs::read_dir(fixtures.join("manifests"))?.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            manifests.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path)?,
            ));
        }
    }
    manifests.sort();
    for entry in std::fs::read_dir(fixtures.join("manifests/scripts"))?.flatten() {
        std::fs::copy(entry.path(), manifest_dir.join("scripts").join(entry.file_name()))?;
    }
    Ok(World {
        bin: config.bin.clone(),
        seeds,
        builtin,
        pool,
        root,
        root_seeds,
        proxy_log: proxy_dir.join("upstream-saw.log"),
        proxy_ran,
        proxy_manifest,
        manifests,
        manifest_dir,
        fixtures_tree,
        schemas: load_schemas(&fixtures.join("json-schema-test-suite")),
    })
}

fn load_schemas(suite: &Path) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    for draft in ["draft2020-12", "draft7"] {
        if let Ok(entries) = std::fs::read_dir(suite.join(draft)) {
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json")),
            );
        }
    }
    files.sort();
    let mut groups = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let Ok(serde_json::Value::Array(list)) = serde_json::from_str::<serde_json::Value>(&text)
        else {
            continue;
        };
        for group in list {
            let instances = group["tests"].as_array().map_or_else(Vec::new, |tests| {
                tests.iter().map(|t| t["data"].to_string()).collect()
            });
            groups.push((group["schema"].to_string(), instances));
        }
    }
    groups
}

/// Instances that make a validator work: many unique items, long strings, deep nesting.
fn hard_instance(rng: &mut Rng) -> String {
    let n = 1 + rng.below(5000);
    match rng.below(5) {
        0 => format!("[{}]", (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",")),
        1 => format!(
            "[{}]",
            (0..n).map(|i| format!("[{i},{{\"a\":[{i}]}}]")).collect::<Vec<_>>().join(",")
        ),
        2 => format!("\"{}\"", "a".repeat(n * 100)),
        3 => format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        _ => {
            format!("{{{}}}", (0..n).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>().join(","))
        }
    }
}

/// Runs the fuzzer until its budget is spent.
pub fn fuzz(config: &Config) -> Report {
    let started = Instant::now();
    let mut report = Report::default();
    let world = match setup(config) {
        Ok(world) => world,
        Err(e) => {
            report.violations.push(Violation {
                target: "setup".into(),
                class: "setup".into(),
                detail: e.to_string(),
                args: Vec::new(),
                input: Vec::new(),
            });
            return report;
        }
    };
    let mut rng = Rng::new(config.seed);
    let mut last_progress = Instant::now();
    while report.cases < config.cases && started.elapsed() < config.time {
        let case_seed = rng.next();
        let mut case_rng = Rng::new(case_seed);
        let target = match rng.below(20) {
            0..=10 => Target::Serve,
            11..=13 => Target::Root,
            14..=15 => Target::ProxyCalls,
            16..=17 => Target::ProxyLists,
            18 => Target::Manifest,
            _ => Target::Validate,
        };
        let case_started = Instant::now();
        let case = make_case(&world, target, &mut case_rng);
        let outcome = judge(&world, target, &case);
        let took = case_started.elapsed();
        *report.time_per_target.entry(target.name()).or_default() += took;
        if report.slowest.get(target.name()).is_none_or(|(t, _)| *t < took) {
            let v = Violation {
                target: target.name().into(),
                class: "slowest".into(),
                detail: format!("took {:.2} s", took.as_secs_f64()),
                args: case.args.clone(),
                input: case.input.clone(),
            };
            report.slowest.insert(target.name(), (took, v));
        }
        report.cases += 1;
        report.messages += outcome.messages;
        *report.per_target.entry(target.name()).or_default() += 1;
        for class in outcome.tolerated {
            *report.tolerated.entry(class.to_string()).or_default() += 1;
            if let Some(v) = outcome.strict_failure.as_ref().filter(|v| v.class == class) {
                report.tolerated_examples.entry(class.to_string()).or_insert_with(|| v.clone());
            }
        }
        if let Some(v) = outcome.violation {
            let v = minimize(&world, target, v);
            if config.progress.is_some() {
                eprintln!("--- violation {}:\n{}", report.violations.len() + 1, v.describe());
            }
            if let Some(dir) = &config.out {
                let _ = write_reproducer(&v, dir, config.seed, report.violations.len());
            }
            report.violations.push(v);
        }
        if let Some(every) = config.progress
            && last_progress.elapsed() >= every
        {
            last_progress = Instant::now();
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "[{secs:>6.0} s] {} cases, {} messages ({:.0}/s), {} violation(s)",
                report.cases,
                report.messages,
                report.messages as f64 / secs,
                report.violations.len()
            );
        }
    }
    report.elapsed = started.elapsed();
    report
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    /// The binary with a seed's own flags (catalog, `--root` fixtures, `--manifest`).
    Serve,
    /// `--root` over a directory with things that must never be served.
    Root,
    /// `proxy --allow-tools`: mutated calls; the upstream logs what it receives.
    ProxyCalls,
    /// `proxy --deny-tools`: an upstream answering `tools/list` with mutated replies.
    ProxyLists,
    /// Mutated manifests: `check` and `--manifest` must agree and never crash.
    Manifest,
    /// `validate --jsonl`: the JSON Schema Test Suite's schemas and instances, mutated, and
    /// instances that make validation work hard.
    Validate,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Serve => "serve",
            Target::Root => "root",
            Target::ProxyCalls => "proxy-calls",
            Target::ProxyLists => "proxy-lists",
            Target::Manifest => "manifest",
            Target::Validate => "validate",
        }
    }
}

#[derive(Default)]
struct Outcome {
    messages: u64,
    violation: Option<Violation>,
    tolerated: Vec<&'static str>,
    strict_failure: Option<Violation>,
}

/// The case's input and command line, made from its own PRNG.
struct Case {
    args: Vec<String>,
    input: Vec<u8>,
    limit: usize,
    sentinel: bool,
    /// For the proxy targets: the upstream's canned replies.
    replies: Vec<u8>,
}

fn make_case(world: &World, target: Target, rng: &mut Rng) -> Case {
    let limits = [1 << 20, 1 << 16, 4096, 16 << 20];
    let choices = if rng.one_in(20) { 4 } else { 3 };
    let limit = *rng.pick(&limits[..choices]);
    let mut case = Case {
        args: Vec::new(),
        input: Vec::new(),
        limit,
        sentinel: rng.below(4) != 0,
        replies: Vec::new(),
    };
    let session =
        |rng: &mut Rng, seed: &Seed| mutate_session(rng, &seed.chunks, &world.pool, limit).concat();
    match target {
        Target::Serve => {
            let seed = &world.seeds[*rng.pick(&world.builtin)];
            case.args = seed.args.clone();
            // Lines from any transcript (other servers' included) make good input too.
            let seed = if rng.one_in(5) { rng.pick(&world.seeds) } else { seed };
            case.input = session(rng, seed);
            // The manifest's `slow` tool takes its 300 ms timeout on every call: a batch of
            // thousands is slow, not stuck. Past a few, the name is swapped for an unknown one.
            let mut slow = 0;
            let mut at = 0;
            while let Some(found) = find(&case.input[at..], b"\"slow\"") {
                at += found + 1;
                slow += 1;
                if slow > 10 {
                    case.input[at..at + 4].copy_from_slice(b"nope");
                }
            }
        }
        Target::Root => {
            case.args = vec!["--root".into(), world.root.to_string_lossy().into_owned()];
            if rng.one_in(4) {
                case.args.extend(["--max-resource-bytes".into(), "16".into()]);
            }
            if rng.one_in(4) {
                case.args.extend(["--page-size".into(), "2".into()]);
            }
            let seed = rng.pick(&world.root_seeds).chunks.clone();
            let mut lines = mutate_session(rng, &seed, &world.pool, limit);
            for _ in 0..1 + rng.below(6) {
                lines.insert(rng.below(lines.len() + 1), root_request(rng, &world.root));
            }
            case.input = lines.concat();
        }
        Target::ProxyCalls => {
            case.args = vec!["--allow-tools".into(), "echo".into()];
            let mut lines = vec![format!("{INIT_2025_03_26}\n").into_bytes()];
            for n in 0..2 + rng.below(6) {
                lines.push(proxy_call(rng, n));
            }
            let pool: Vec<Vec<u8>> = lines.clone();
            let mut lines = mutate_session(rng, &lines, &pool, limit);
            if rng.one_in(3) {
                lines.insert(0, format!("{INIT_2025_03_26}\n").into_bytes());
            }
            case.input = lines.concat();
        }
        Target::ProxyLists => {
            case.args = vec!["--deny-tools".into(), "secret_tool,other_secret".into()];
            let n = 1 + rng.below(6);
            let mut input = Vec::new();
            let mut replies = Vec::new();
            for k in 0..n {
                let id = *rng.pick(&[
                    "1",
                    "\"a\"",
                    "\"\\u0061\"",
                    "18446744073709551616",
                    "-0",
                    "\"\\ud800\"",
                ]);
                let id = if id == "1" { (k + 1).to_string() } else { id.to_string() };
                input.extend_from_slice(
                    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n")
                        .as_bytes(),
                );
                let reply = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"echo","inputSchema":{{"type":"object"}}}},{{"name":"secret_tool","inputSchema":{{"type":"object"}}}},{{"name":"other_secret"}}],"nextCursor":"c"}}}}"#
                );
                let pool = vec![reply.clone().into_bytes()];
                let mut reply = reply.into_bytes();
                for _ in 0..1 + rng.below(3) {
                    reply = mutate_reply(rng, &reply, &pool);
                }
                // The upstream is a shell loop: a NUL or a newline would not survive it.
                reply.retain(|&b| b != 0 && b != b'\n');
                replies.extend_from_slice(&reply);
                replies.push(b'\n');
            }
            case.input = input;
            case.replies = replies;
        }
        Target::Validate => {
            let (schema, instances) = rng.pick(&world.schemas).clone();
            let mut schema = schema.into_bytes();
            if rng.one_in(2) {
                schema = mutate_line(rng, &schema, &[], 1 << 16);
            }
            if rng.one_in(4) {
                // Schemas that make validation work: unique items, patterns, nesting.
                let hard: &[&str] = &[
                    r#"{"uniqueItems":true}"#,
                    r#"{"items":{"uniqueItems":true},"uniqueItems":true}"#,
                    r#"{"pattern":"^(a|a?)+$"}"#,
                    r#"{"pattern":"(x+x+)+y"}"#,
                    r##"{"$defs":{"a":{"items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}"##,
                    r#"{"anyOf":[{"items":{"anyOf":[{"type":"array"},{"type":"integer"}]}},{"contains":{"const":1}}]}"#,
                ];
                schema = rng.pick(hard).as_bytes().to_vec();
            }
            let mut lines: Vec<Vec<u8>> = instances.into_iter().map(String::into_bytes).collect();
            for _ in 0..rng.below(3) {
                if !lines.is_empty() {
                    let at = rng.below(lines.len());
                    lines[at] = mutate_line(rng, &lines[at], &[], 1 << 16);
                }
            }
            if rng.one_in(2) {
                lines.push(hard_instance(rng).into_bytes());
            }
            // Lines are the unit here: a newline inside a mutated instance makes two.
            case.args = vec![String::from_utf8_lossy(&schema).into_owned()];
            case.input = lines.iter().flat_map(|l| [body(l).0, b"\n"].concat()).collect();
        }
        Target::Manifest => {
            let (_, text) = rng.pick(&world.manifests);
            let mut text = text.clone();
            for _ in 0..1 + rng.below(4) {
                text = mutate_line(rng, &text, &[], 1 << 16);
            }
            case.input = text;
        }
    }
    case
}

/// A `resources/read` (or subscribe, or completion) of a path made of pieces that try to
/// leave the root or reach what it hides.
fn root_request(rng: &mut Rng, root: &Path) -> Vec<u8> {
    const PIECES: &[&str] = &[
        "..",
        "%2e%2e",
        "%2E%2E",
        ".%2e",
        "%2f",
        "%2F",
        "%252e%252e",
        ".",
        "",
        "secret.txt",
        "inside.txt",
        ".hidden.txt",
        ".dot",
        "inner.txt",
        "link-out",
        "dir-out",
        "link-hidden",
        "link-in",
        "pipe",
        "sub",
        "deep",
        "leaf.txt",
        "%00",
        "blob.bin",
        "%ff",
        "%",
        "%zz",
        "%+0",
        "%-1",
        "files",
        "root",
        "\\u002e\\u002e",
        "x%2f..%2f..",
    ];
    let mut path = String::new();
    for _ in 0..1 + rng.below(5) {
        path.push('/');
        let piece: &&str = rng.pick(PIECES);
        path.push_str(piece);
    }
    let base = match rng.below(6) {
        0 => String::from("file://"),
        1 => format!("file://{}", root.parent().unwrap().display()),
        2 => format!("file:{}", root.display()),
        _ => format!("file://{}", root.display()),
    };
    let id = rng.below(1000);
    let uri = format!("{base}{path}");
    let line = match rng.below(5) {
        0 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/subscribe","params":{{"uri":"{uri}"}}}}"#
        ),
        1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"completion/complete","params":{{"ref":{{"type":"ref/resource","uri":"file://{}/{{+path}}"}},"argument":{{"name":"path","value":"{}"}}}}}}"#,
            root.display(),
            path.trim_start_matches('/')
        ),
        2 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{{META},"uri":"{uri}"}}}}"#
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        ),
    };
    format!("{line}\n").into_bytes()
}

/// A `tools/call` or `tools/list` aimed at the filter.
fn proxy_call(rng: &mut Rng, n: usize) -> Vec<u8> {
    let id = n + 1;
    let name =
        *rng.pick(&["echo", "secret_tool", "other_secret", "secret\\u005ftool", "ech\\u006f"]);
    let meta = if rng.one_in(3) { format!(",{META}") } else { String::new() };
    let line = match rng.below(8) {
        0 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{}}}"#,
            if meta.is_empty() {
                String::new()
            } else {
                format!(r#","params":{{{}}}"#, &meta[1..])
            }
        ),
        1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
        2 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{"x":"\xff"}}{meta}}}}}"#
        ),
        3 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","method":"tools/call","params":{{"name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
        4 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo"}},"params":{{"name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
        _ => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}{meta}}}}}"#
        ),
    };
    raw_ff(format!("{line}\n").as_bytes())
}

/// Mutates a `tools/list` reply toward ambiguity: members twice, escapes, bytes.
fn mutate_reply(rng: &mut Rng, reply: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let text = String::from_utf8_lossy(reply).into_owned();
    let mutated = match rng.below(8) {
        0 => text.replacen(r#""name":"secret_tool""#, r#""name":"echo","name":"secret_tool""#, 1),
        1 => text.replacen(r#""name":"secret_tool""#, r#""name":"secret\u005ftool""#, 1),
        2 => text.replacen(r#""result":{"#, r#""result":{"tools":[],"x":"\xff","#, 1),
        3 => text.replacen(r#","result":"#, r#","result":{"tools":[]},"result":"#, 1),
        4 => {
            let at = text.rfind('}').unwrap_or(0);
            let mut t = text.clone();
            t.insert_str(at, r#","result":{"tools":[{"name":"secret_tool"}]}"#);
            t
        }
        5 => text.replacen(
            r#""inputSchema":{"type":"object"}"#,
            r#""inputSchema":{"type":"object"},"x":NaN"#,
            1,
        ),
        _ => return mutate_line(rng, reply, pool, 1 << 16),
    };
    raw_ff(mutated.as_bytes())
}

/// `\xff` written in the templates above (four characters) becomes the byte itself.
fn raw_ff(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(b"\\xff") {
            out.push(0xff);
            i += 4;
        } else {
            out.push(text[i]);
            i += 1;
        }
    }
    out
}

/// Address space a fuzzed process may take: an amplification shows as a failed allocation
/// (reported) rather than as a machine out of memory.
const ADDRESS_SPACE_KIB: u64 = 4 << 20;

fn command(world: &World, args: &[String]) -> Command {
    let mut command = Command::new("sh");
    command
        .args(["-c", &format!("ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\"")])
        .arg(&world.bin)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("BAREMCP_STATE_SECRET");
    command
}

/// Runs a case and judges what happened.
fn judge(world: &World, target: Target, case: &Case) -> Outcome {
    let mut outcome =
        Outcome { messages: split_lines(&case.input).len() as u64, ..Outcome::default() };
    let violation = |class: &str, detail: String, args: &[String]| Violation {
        target: target.name().into(),
        class: class.into(),
        detail,
        args: args.to_vec(),
        input: case.input.clone(),
    };
    match target {
        Target::Serve | Target::Root => {
            let mut args = case.args.clone();
            args.extend(["--max-message-bytes".into(), case.limit.to_string()]);
            let deadline =
                Duration::from_secs(if args.iter().any(|a| a == "--manifest") { 30 } else { 15 });
            let run = run(&mut command(world, &args), &case.input, case.sentinel, deadline);
            let mut wants: Vec<Want> =
                split_lines(&case.input).iter().map(|l| want_line(l, case.limit)).collect();
            if case.sentinel {
                wants.push(Want::One(Some(SENTINEL_ID.into())));
            }
            let (found, tolerated, strict) = judge_server(&run, &wants, case, true, case.sentinel);
            outcome.tolerated = tolerated;
            outcome.strict_failure = strict.map(|(class, detail)| violation(&class, detail, &args));
            if target == Target::Root && find(&run.stdout, MARKER.as_bytes()).is_some() {
                outcome.violation = Some(violation(
                    "root-escape",
                    "a file the root must hide was served".into(),
                    &args,
                ));
            } else if let Some((class, detail)) = found {
                outcome.violation = Some(violation(&class, detail, &args));
            }
        }
        Target::ProxyCalls => {
            let _ = std::fs::remove_file(&world.proxy_log);
            let _ = std::fs::remove_file(&world.proxy_ran);
            let mut args =
                vec!["proxy".to_string(), "--max-message-bytes".into(), case.limit.to_string()];
            args.extend(case.args.iter().cloned());
            args.extend([
                "--".into(),
                "sh".into(),
                "-c".into(),
                r#"tee -a "$0" | "$1" --manifest "$2" --max-message-bytes "$3""#.into(),
                world.proxy_log.to_string_lossy().into_owned(),
                world.bin.to_string_lossy().into_owned(),
                world.proxy_manifest.to_string_lossy().into_owned(),
                case.limit.to_string(),
            ]);
            let run = run(&mut command(world, &args), &case.input, false, Duration::from_secs(15));
            // A filtering proxy refuses what it cannot judge itself: a line that is not JSON
            // gets at most one reply, with null or the id it could read there (as a line with
            // no id is a notification to it).
            let wants: Vec<Want> = split_lines(&case.input)
                .iter()
                .map(|l| match want_line(l, case.limit) {
                    Want::One(None) => Want::Maybe(lenient_id(l)),
                    want => want,
                })
                .collect();
            let (mut found, tolerated, strict) = judge_server(&run, &wants, case, false, false);
            outcome.tolerated = tolerated;
            outcome.strict_failure = strict.map(|(class, detail)| violation(&class, detail, &args));
            // An upstream still busy 2 s after its input closed is ended, as documented: its
            // replies and exit status are lost, by design.
            if find(&run.stderr, b"did not exit within").is_some() {
                found = None;
            }
            // Replies whose ids the proxy rewrote (escapes decoded, lone surrogates as null,
            // huge integers as floats) cannot be matched while that fix is pending.
            if found
                .as_ref()
                .is_some_and(|(class, _)| class == "responses" || class == "not-json-rpc")
                && pending("proxy-id-text")
                && split_lines(&case.input).iter().any(|l| odd_line(l))
            {
                outcome.tolerated.push("proxy-id-text");
                outcome.strict_failure =
                    found.take().map(|(class, detail)| violation(&class, detail, &args));
            }
            let saw = std::fs::read(&world.proxy_log).unwrap_or_default();
            let ran = std::fs::read_to_string(&world.proxy_ran).unwrap_or_default();
            let filtered = ["secret_tool", "other_secret"];
            if !ran.is_empty() {
                outcome.violation = Some(violation(
                    "proxy-bypass",
                    format!("the upstream ran a filtered tool: {}", ran.trim()),
                    &args,
                ));
            } else if let Some(line) =
                split_lines(&saw).into_iter().find(|l| calls_filtered(l, &filtered, STRICT))
            {
                outcome.violation = Some(violation(
                    "proxy-bypass",
                    format!(
                        "forwarded a call that a strict reader takes for a filtered tool: {}",
                        String::from_utf8_lossy(line)
                    ),
                    &args,
                ));
            } else if let Some(line) =
                split_lines(&saw).into_iter().find(|l| calls_filtered(l, &filtered, LENIENT))
            {
                let v = violation(
                    "proxy-ambiguous",
                    format!(
                        "forwarded a call that some reader (duplicates, bad UTF-8, NaN) takes for a filtered tool: {}",
                        String::from_utf8_lossy(line)
                    ),
                    &args,
                );
                if pending("proxy-ambiguous") {
                    outcome.tolerated.push("proxy-ambiguous");
                    outcome.strict_failure = Some(v);
                } else {
                    outcome.violation = Some(v);
                }
            } else if let Some((class, detail)) = found {
                outcome.violation = Some(violation(&class, detail, &args));
            }
        }
        Target::ProxyLists => {
            let replies = world.proxy_log.with_extension("replies");
            let _ = std::fs::write(&replies, &case.replies);
            let mut args = vec!["proxy".to_string()];
            args.extend(case.args.iter().cloned());
            args.extend([
                "--".into(),
                "sh".into(),
                "-c".into(),
                r#"while IFS= read -r line; do IFS= read -r reply <&3 || exit 0; printf '%s\n' "$reply"; done 3<"$0""#
                    .into(),
                replies.to_string_lossy().into_owned(),
            ]);
            let run = run(&mut command(world, &args), &case.input, false, Duration::from_secs(15));
            let ids: Vec<Vec<u8>> = split_lines(&case.input)
                .iter()
                .filter_map(|l| member(l, "id").map(<[u8]>::to_vec))
                .collect();
            for line in split_lines(&run.stdout) {
                let strict = lists_filtered(line, &ids, STRICT);
                let lenient = lists_filtered(line, &ids, LENIENT);
                let mut input = case.input.clone();
                input.extend_from_slice(b"\n# upstream replies:\n");
                input.extend_from_slice(&case.replies);
                let v = |class: &str, detail: String| Violation {
                    input: input.clone(),
                    ..violation(class, detail, &args)
                };
                // A client that reuses an id while it is in flight, or an upstream that
                // answers one id twice, breaks JSON-RPC, but the filter must still hold.
                let canonical = |id: &[u8]| String::from_utf8_lossy(id).replace("\\u0061", "a");
                let mut asked: Vec<String> = ids.iter().map(|id| canonical(id)).collect();
                asked.sort();
                let answered: Vec<String> = split_lines(&case.replies)
                    .iter()
                    .filter_map(|r| member(r, "id"))
                    .map(canonical)
                    .collect();
                let reused = asked.windows(2).any(|w| w[0] == w[1])
                    || answered.iter().any(|a| answered.iter().filter(|b| *b == a).count() > 1);
                if strict && reused && pending("proxy-duplicate-ids") {
                    outcome.tolerated.push("proxy-duplicate-ids");
                    let detail = format!(
                        "the client was shown a filtered tool: {}",
                        String::from_utf8_lossy(line)
                    );
                    outcome.strict_failure = Some(v("proxy-duplicate-ids", detail));
                } else if strict {
                    outcome.violation = Some(v(
                        "proxy-bypass",
                        format!(
                            "the client was shown a filtered tool: {}",
                            String::from_utf8_lossy(line)
                        ),
                    ));
                    break;
                } else if lenient {
                    let found = v(
                        "proxy-ambiguous",
                        format!(
                            "some reader of this reply sees a filtered tool: {}",
                            String::from_utf8_lossy(line)
                        ),
                    );
                    if pending("proxy-ambiguous") {
                        outcome.tolerated.push("proxy-ambiguous");
                        outcome.strict_failure = Some(found);
                    } else {
                        outcome.violation = Some(found);
                        break;
                    }
                }
            }
            if outcome.violation.is_none() && run.hung {
                outcome.violation = Some(violation(
                    "hang",
                    "the proxy did not finish after its input ended".into(),
                    &args,
                ));
            }
        }
        Target::Validate => {
            let path = world.manifest_dir.join("schema.json");
            if std::fs::write(&path, case.args[0].as_bytes()).is_err() {
                return outcome;
            }
            let args =
                vec!["validate".to_string(), "--jsonl".into(), path.to_string_lossy().into_owned()];
            let started = Instant::now();
            let run = run(&mut command(world, &args), &case.input, false, Duration::from_secs(30));
            let took = started.elapsed();
            let lines = split_lines(&case.input).len();
            let verdicts: Vec<&[u8]> = split_lines(&run.stdout);
            let well_formed = verdicts.iter().all(|v| {
                json::members(v, STRICT).is_some_and(|m| {
                    m.iter().any(|(k, v)| k.text == "valid" && (*v == b"true" || *v == b"false"))
                        && m.iter().any(|(k, v)| k.text == "errors" && v.starts_with(b"["))
                })
            });
            let all_valid = verdicts.iter().all(|v| find(v, br#""valid":true"#).is_some());
            let mut input = format!("schema: {}\n", case.args[0]).into_bytes();
            input.extend_from_slice(&case.input);
            let v = |class: &str, detail: String| Violation {
                input: input.clone(),
                ..violation(class, detail, &args)
            };
            outcome.violation = if run.hung {
                Some(v("hang", "validate did not finish within 30 s".into()))
            } else if let Some(at) = find(&run.stderr, b"panicked") {
                Some(v(
                    "panic",
                    String::from_utf8_lossy(&run.stderr[at.saturating_sub(100)..]).into_owned(),
                ))
            } else if !matches!(run.code, Some(0..=2)) {
                Some(v(
                    "exit-code",
                    format!("exit {:?}: {}", run.code, String::from_utf8_lossy(&run.stderr)),
                ))
            } else if run.code == Some(2) && (run.stderr.is_empty() || !run.stdout.is_empty()) {
                Some(v("exit-code", "exit 2 must say why on stderr and print no verdict".into()))
            } else if run.code != Some(2) && (verdicts.len() != lines || !well_formed) {
                Some(v(
                    "verdicts",
                    format!(
                        "{lines} instance line(s), {} verdict line(s), well formed: {well_formed}",
                        verdicts.len()
                    ),
                ))
            } else if run.code != Some(2) && (run.code == Some(0)) != all_valid {
                Some(v("exit-code", format!("exit {:?} but all valid: {all_valid}", run.code)))
            } else if took > Duration::from_secs(10) {
                let found = v("slow", format!("validation took {:.1} s", took.as_secs_f64()));
                if pending("validation-budget") {
                    outcome.tolerated.push("validation-budget");
                    outcome.strict_failure = Some(found);
                    None
                } else {
                    Some(found)
                }
            } else {
                None
            };
        }
        Target::Manifest => {
            let path = world.manifest_dir.join("mutated.json");
            if std::fs::write(&path, &case.input).is_err() {
                return outcome;
            }
            let file = path.to_string_lossy().into_owned();
            let check_args = vec!["check".to_string(), file.clone()];
            let check = run(&mut command(world, &check_args), b"", false, Duration::from_secs(10));
            let serve_args = vec!["--manifest".to_string(), file];
            let init = format!(
                "{INIT_2025_03_26}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}}\n"
            );
            let serve = run(
                &mut command(world, &serve_args),
                init.as_bytes(),
                false,
                Duration::from_secs(10),
            );
            outcome.messages = 2;
            let panicked = |r: &Run| find(&r.stderr, b"panicked").is_some();
            let found = if check.hung || serve.hung {
                Some(("hang", "check or --manifest did not finish".to_string()))
            } else if panicked(&check) || panicked(&serve) {
                Some((
                    "panic",
                    format!(
                        "{}{}",
                        String::from_utf8_lossy(&check.stderr),
                        String::from_utf8_lossy(&serve.stderr)
                    ),
                ))
            } else if !matches!(check.code, Some(0 | 2)) {
                Some(("exit-code", format!("check exited with {:?}", check.code)))
            } else if check.code != serve.code {
                Some((
                    "check-disagrees",
                    format!(
                        "check exited {:?} but --manifest {:?}: {}",
                        check.code,
                        serve.code,
                        String::from_utf8_lossy(&serve.stderr)
                    ),
                ))
            } else if check.code == Some(2) && check.stderr.is_empty() && check.stdout.is_empty() {
                Some((
                    "silent-refusal",
                    "check refused the manifest without saying why".to_string(),
                ))
            } else if check.code == Some(0) && !serve.outs.iter().all(|o| o.is_ok()) {
                Some(("bad-output", format!("{:?}", serve.outs)))
            } else {
                None
            };
            if let Some((class, detail)) = found {
                outcome.violation = Some(violation(class, detail, &serve_args));
            }
        }
    }
    outcome
}

/// The invariants every server run must keep; returns the first broken one, the pending
/// classes that widened the oracle, and (when the case passed only thanks to them) what the
/// strict oracle said.
#[allow(clippy::type_complexity)]
fn judge_server(
    run: &Run,
    wants: &[Want],
    case: &Case,
    in_order: bool,
    sentinel: bool,
) -> (Option<(String, String)>, Vec<&'static str>, Option<(String, String)>) {
    let mut tolerated = Vec::new();
    let peak_bound_kib = (8 << 10) + 4 * (case.limit as u64 >> 10);
    let has_batch = wants.iter().any(|w| matches!(w, Want::Batch(_)));
    let found = |class: &str, detail: String| Some((class.to_string(), detail));
    if let Some(len) = run.huge_line {
        if has_batch && pending("batch-amplification") {
            tolerated.push("batch-amplification");
            return (
                None,
                tolerated,
                found("batch-amplification", format!("a reply line of {len} bytes")),
            );
        }
        return (
            found("amplification", format!("a reply line of {len} bytes (cap {OUTPUT_LINE_CAP})")),
            tolerated,
            None,
        );
    }
    if run.hung {
        return (
            found(
                "hang",
                format!(
                    "still running {} after its input ended (sentinel seen: {})",
                    "past the deadline", run.sentinel_seen
                ),
            ),
            tolerated,
            None,
        );
    }
    if let Some(at) = find(&run.stderr, b"panicked") {
        let from = at.saturating_sub(200);
        return (
            found(
                "panic",
                String::from_utf8_lossy(&run.stderr[from..(at + 400).min(run.stderr.len())])
                    .into_owned(),
            ),
            tolerated,
            None,
        );
    }
    if let Some(at) = find(&run.stderr, b"memory allocation of") {
        let detail =
            String::from_utf8_lossy(&run.stderr[at..(at + 200).min(run.stderr.len())]).into_owned();
        if has_batch && pending("batch-amplification") {
            tolerated.push("batch-amplification");
            return (None, tolerated, found("batch-amplification", detail));
        }
        return (found("memory", detail), tolerated, None);
    }
    if run.write_failed {
        return (
            found(
                "died-early",
                format!("stopped reading its input before the end; exit {:?}", run.code),
            ),
            tolerated,
            None,
        );
    }
    if run.code != Some(0) {
        return (
            found(
                "exit-code",
                format!(
                    "exit status {:?} at end of input; stderr: {}",
                    run.code,
                    String::from_utf8_lossy(&run.stderr[..run.stderr.len().min(500)])
                ),
            ),
            tolerated,
            None,
        );
    }
    for (out, excerpt) in run.outs.iter().zip(&run.excerpts) {
        match out {
            // The filtering proxy re-serializes a `tools/list` reply: a huge integer id
            // comes back as a float (finding F6).
            Err(why)
                if !in_order
                    && why.starts_with("a response whose id is not")
                    && pending("proxy-id-rewritten") =>
            {
                tolerated.push("proxy-id-rewritten");
                return (None, tolerated, found("proxy-id-rewritten", format!("{why}: {excerpt}")));
            }
            Err(why) => {
                return (found("not-json-rpc", format!("{why}: {excerpt}")), tolerated, None);
            }
            Ok(Out::ServerRequest(id, method)) => {
                return (
                    found(
                        "server-request",
                        format!("the server asked {method} ({id}) though nothing it serves asks"),
                    ),
                    tolerated,
                    None,
                );
            }
            Ok(_) => {}
        }
    }
    if let Some(peak) = run.peak_kib
        && peak > peak_bound_kib
    {
        let detail = format!(
            "peak memory {peak} KiB over {peak_bound_kib} KiB (8 MiB + 4 × the {} byte line limit)",
            case.limit
        );
        if has_batch && pending("batch-amplification") {
            tolerated.push("batch-amplification");
            return (None, tolerated, found("batch-amplification", detail));
        }
        return (found("memory", detail), tolerated, None);
    }
    if sentinel && !run.sentinel_seen {
        return (
            found("no-answer", "the ping sent after the input was never answered".into()),
            tolerated,
            None,
        );
    }
    let outs: Vec<Out> = run.outs.iter().filter_map(|o| o.clone().ok()).collect();
    let (verdict, classes) = judge_replies(wants, &outs, in_order, &[]);
    tolerated.extend(classes);
    match verdict {
        Ok(None) => (None, tolerated, None),
        Ok(Some(strict_why)) => {
            let class = tolerated.first().copied().unwrap_or("pending");
            (None, tolerated, found(class, strict_why))
        }
        Err(why) => (found("responses", why), tolerated, None),
    }
}

/// Matches replies against wants: `Ok(None)` when they match strictly, `Ok(Some(why))` when
/// they match only with the pending classes' widening (returned too), `Err(why)` when not.
#[allow(clippy::type_complexity)]
pub fn judge_replies(
    wants: &[Want],
    outs: &[Out],
    in_order: bool,
    cancelled: &[String],
) -> (Result<Option<String>, String>, Vec<&'static str>) {
    let check = |wants: &[Want]| {
        if in_order {
            match_in_order(wants, outs)
        } else {
            match_as_multiset(wants, outs, cancelled)
        }
    };
    let strict_wants: Vec<Want> = wants.iter().map(strict).collect();
    match (check(&strict_wants), check(wants)) {
        (Ok(()), _) => (Ok(None), Vec::new()),
        (Err(strict_why), Ok(())) => (Ok(Some(strict_why)), widened_classes(wants)),
        (Err(_), Err(why)) => (Err(why), Vec::new()),
    }
}

/// The want without any pending widening.
fn strict(want: &Want) -> Want {
    match want {
        Want::OneOrNull(id, class) if !class.is_empty() => Want::One(Some(id.clone())),
        Want::SilentOrNull(_) => Want::Nothing,
        Want::Batch(items) => Want::Batch(items.iter().map(strict).collect()),
        other => other.clone(),
    }
}

fn widened_classes(wants: &[Want]) -> Vec<&'static str> {
    let mut classes = Vec::new();
    for want in wants {
        match want {
            Want::OneOrNull(_, class) | Want::SilentOrNull(class) if !class.is_empty() => {
                classes.push(*class)
            }
            Want::Batch(items) => classes.extend(widened_classes(items)),
            _ => {}
        }
    }
    classes.sort_unstable();
    classes.dedup();
    classes
}

/// The raw value of a top-level member (first of its name).
fn member<'a>(line: &'a [u8], name: &str) -> Option<&'a [u8]> {
    json::members(line, STRICT)?.into_iter().find(|(k, _)| k.text == name).map(|(_, v)| v)
}

/// Each reading a lenient or careless reader might make of a line: bytes as UTF-8 or
/// lossily, and for a duplicated member the first or the last.
fn readings(line: &[u8], opts: Opts) -> Vec<Node<'static>> {
    let mut texts = vec![line.to_vec()];
    if std::str::from_utf8(line).is_err() {
        texts = vec![String::from_utf8_lossy(line).into_owned().into_bytes()];
    }
    let mut out = Vec::new();
    for text in texts {
        let text: &'static [u8] = Box::leak(text.into_boxed_slice());
        if let Some(node) = json::parse(text, 6, opts) {
            out.push(node);
        }
    }
    out
}

/// The value of `name` in an object under a duplicate policy: first or last.
fn get<'n, 'a>(node: &'n Node<'a>, name: &str, last: bool) -> Option<&'n Node<'a>> {
    let Node::Object(members) = node else { return None };
    let mut found = members.iter().filter(|(k, _)| k.text == name).map(|(_, v)| v);
    if last { found.next_back() } else { found.next() }
}

/// Whether any reading of a forwarded line calls one of `filtered`.
fn calls_filtered(line: &[u8], filtered: &[&str], opts: Opts) -> bool {
    let strict_only = opts == STRICT;
    // The strict reading is of what serde_json (which the proxy uses) reads too; JSON it
    // refuses (lone surrogates, nesting past 128, numbers past f64) is the lenient part.
    if strict_only && !serde_reads(line) {
        return false;
    }
    readings(line, opts).iter().any(|node| {
        let messages: Vec<&Node> = match node {
            Node::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        messages.iter().any(|message| {
            let policies: &[bool] = if strict_only { &[false] } else { &[false, true] };
            policies.iter().any(|&last| {
                let method = get(message, "method", last).and_then(Node::as_str);
                let name = get(message, "params", last)
                    .and_then(|p| get(p, "name", last))
                    .and_then(Node::as_str);
                // A strict reader refuses a message with a member twice at the top or in
                // params, without `"jsonrpc":"2.0"`, or without an id (a notification).
                let clean = !strict_only
                    || (no_duplicates(message)
                        && get(message, "params", false).is_none_or(no_duplicates)
                        && get(message, "jsonrpc", false).and_then(Node::as_str) == Some("2.0")
                        && readable(get(message, "id", false)));
                clean && method == Some("tools/call") && name.is_some_and(|n| filtered.contains(&n))
            })
        })
    })
}

/// An id as MCP has them (a string or an integer); JSON-RPC also allows fractions and null,
/// which a lenient peer reads.
fn readable(id: Option<&Node>) -> bool {
    match id {
        Some(Node::String(_)) => true,
        Some(Node::Other(raw)) => readable_id(raw),
        _ => false,
    }
}

fn serde_reads(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line).is_ok()
}

fn no_duplicates(node: &Node) -> bool {
    let Node::Object(members) = node else { return true };
    let mut names: Vec<&str> = members.iter().map(|(k, _)| k.text.as_str()).collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// Whether any reading of a line the client got lists a filtered tool in a reply to one of
/// its `tools/list` requests.
fn lists_filtered(line: &[u8], ids: &[Vec<u8>], opts: Opts) -> bool {
    let canonical = |raw: &[u8]| -> String {
        match json::string(raw, 0) {
            Ok((_, d)) => format!("s:{}", d.text),
            Err(()) => format!(
                "n:{}",
                String::from_utf8_lossy(raw).trim_start_matches('-').trim_start_matches('0')
            ),
        }
    };
    let asked: Vec<String> = ids.iter().map(|id| canonical(id)).collect();
    let strict_only = opts == STRICT;
    if strict_only && !serde_reads(line) {
        return false;
    }
    readings(line, opts).iter().any(|node| {
        let messages: Vec<&Node> = match node {
            Node::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        messages.iter().any(|message| {
            let policies: &[bool] = if strict_only { &[false] } else { &[false, true] };
            policies.iter().any(|&last| {
                let id = match get(message, "id", last) {
                    Some(Node::String(d)) => format!("s:{}", d.text),
                    Some(Node::Other(raw)) => canonical(raw),
                    _ => return false,
                };
                let result = get(message, "result", last);
                let tools = result.and_then(|r| get(r, "tools", last));
                let Some(Node::Array(tools)) = tools else { return false };
                // A strict reader refuses members twice in the envelope, the result or a tool.
                let clean = !strict_only
                    || (no_duplicates(message)
                        && result.is_some_and(no_duplicates)
                        && tools.iter().all(no_duplicates)
                        && get(message, "jsonrpc", false).and_then(Node::as_str) == Some("2.0")
                        && readable(get(message, "id", false)));
                clean
                    && asked.contains(&id)
                    && tools.iter().any(|t| {
                        get(t, "name", last)
                            .and_then(Node::as_str)
                            .is_some_and(|n| n == "secret_tool" || n == "other_secret")
                    })
            })
        })
    })
}

/// Shrinks a violation's input: whole lines first, then each line's bytes from the end,
/// while the same class still shows.
fn minimize(world: &World, target: Target, violation: Violation) -> Violation {
    // A hang costs its whole deadline per try: keep it as found.
    if !matches!(target, Target::Serve | Target::Root | Target::ProxyCalls)
        || violation.class == "hang"
    {
        return violation;
    }
    let started = Instant::now();
    let args: Vec<String> = {
        // Drop the flags `judge` adds back.
        let mut args = violation.args.clone();
        if let Some(at) = args.iter().position(|a| a == "--max-message-bytes")
            && target != Target::ProxyCalls
        {
            args.drain(at..at + 2);
        }
        args
    };
    let limit = violation
        .args
        .iter()
        .position(|a| a == "--max-message-bytes")
        .and_then(|at| violation.args.get(at + 1)?.parse().ok())
        .unwrap_or(1 << 20);
    let case_args = if target == Target::ProxyCalls {
        vec!["--allow-tools".to_string(), "echo".to_string()]
    } else {
        args
    };
    let fails = |input: &[u8]| {
        let case = Case {
            args: case_args.clone(),
            input: input.to_vec(),
            limit,
            sentinel: false,
            replies: Vec::new(),
        };
        let outcome = judge(world, target, &case);
        outcome.violation.is_some_and(|v| v.class == violation.class)
    };
    let mut lines: Vec<Vec<u8>> =
        violation.input.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if !fails(&lines.concat()) {
        // Needs the sentinel (memory) or is flaky: keep it whole.
        return violation;
    }
    let mut tries = 0;
    let mut chunk = lines.len().div_ceil(2).max(1);
    let budget = |tries: u32| tries < 60 && started.elapsed() < Duration::from_secs(30);
    while chunk >= 1 && budget(tries) {
        let mut at = 0;
        while at < lines.len() && budget(tries) {
            let mut fewer = lines.clone();
            fewer.drain(at..(at + chunk).min(lines.len()));
            tries += 1;
            if !fewer.is_empty() && fails(&fewer.concat()) {
                lines = fewer;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    Violation {
        input: lines.concat(),
        detail: format!("{} (minimized)", violation.detail),
        ..violation
    }
}

/// Appends each violation to `path` (a Markdown file), with its reproducer written beside
/// it as raw bytes.
pub fn write_reproducers(
    violations: &[Violation],
    dir: &Path,
    seed: u64,
) -> std::io::Result<Vec<PathBuf>> {
    violations.iter().enumerate().map(|(n, v)| write_reproducer(v, dir, seed, n)).collect()
}

/// Writes one violation as `violation-SEED-N-TARGET-CLASS.txt` (described) and `.bin` (the
/// input's raw bytes); returns the `.txt` path.
pub fn write_reproducer(
    v: &Violation,
    dir: &Path,
    seed: u64,
    n: usize,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let base = dir.join(format!("violation-{seed}-{n}-{}-{}", v.target, v.class));
    std::fs::write(base.with_extension("bin"), &v.input)?;
    std::fs::write(base.with_extension("txt"), v.describe())?;
    Ok(base.with_extension("txt"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oracle_reads_lines_as_the_readme_says() {
        let limit = 100;
        assert_eq!(
            want_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, limit),
            Want::One(Some("1".into()))
        );
        assert_eq!(
            want_line(br#"{"jsonrpc":"2.0","id":"\u0061","method":"ping"}"#, limit),
            Want::One(Some(r#""\u0061""#.into()))
        );
        let silent = if pending("notification-answered") {
            Want::SilentOrNull("notification-answered")
        } else {
            Want::Nothing
        };
        assert_eq!(want_line(br#"{"jsonrpc":"2.0","method":"x"}"#, limit), silent);
        assert_eq!(
            want_line(br#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#, limit),
            Want::One(None)
        );
        assert_eq!(
            want_line(br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#, limit),
            Want::One(None)
        );
        assert_eq!(want_line(b"not json", limit), Want::One(None));
        assert_eq!(want_line(b"\xff", limit), Want::One(None));
        assert_eq!(want_line(b"  \r", limit), Want::Nothing);
        assert_eq!(want_line(&[b' '; 101], limit), Want::One(None));
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"x","method":"ping","params":{{"a":"{}"}}}}"#,
            "y".repeat(200)
        );
        assert_eq!(want_line(long.as_bytes(), limit), Want::OneOrNull(r#""x""#.into(), ""));
        assert_eq!(prefix_id(br#"{"id":1,"id":2,"method":"x"}"#), None);
        assert_eq!(prefix_id(br#"{"method":"x","id":-7,"params":{"a":"cut"#), Some("-7".into()));
        assert_eq!(want_line(b"[]", limit), Want::One(None));
        assert_eq!(
            want_line(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#, limit),
            Want::Maybe(Some("4".into()))
        );
        let outs = [
            check_out(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap(),
            check_out(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#)
                .unwrap(),
            check_out(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
            )
            .unwrap(),
        ];
        let wants = [Want::One(Some("1".into())), Want::Nothing, Want::One(None)];
        assert_eq!(match_in_order(&wants, &outs), Ok(()));
        assert!(match_in_order(&wants[..2], &outs).is_err());
        assert!(match_in_order(&[Want::One(Some("2".into())), Want::One(None)], &outs).is_err());
        assert!(check_out(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#).is_err());
        assert!(check_out(br#"{"jsonrpc":"2.0","id":1,"id":1,"result":{}}"#).is_err());
        assert!(check_out(br#"{"id":1,"result":{}}"#).is_err());
        assert_eq!(match_as_multiset(&wants, &[outs[2].clone(), outs[0].clone()], &[]), Ok(()));
    }

    #[test]
    fn the_proxy_readings_see_every_ambiguity() {
        let filtered = ["secret_tool"];
        let calls = |line: &[u8], opts| calls_filtered(line, &filtered, opts);
        let plain =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret_tool"}}"#;
        assert!(calls(plain, STRICT));
        let twice = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"secret_tool"}}"#;
        assert!(!calls(twice, STRICT) && calls(twice, LENIENT));
        let bad_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"secret_tool\",\"x\":\"\xff\"}}";
        assert!(!calls(bad_utf8, STRICT) && calls(bad_utf8, LENIENT));
        let nan = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret\u005ftool","x":NaN}}"#;
        assert!(!calls(nan, STRICT) && calls(nan, LENIENT));
        assert!(!calls(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
            LENIENT
        ));
        let ids = vec![b"1".to_vec()];
        let listed = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"},{"name":"secret_tool"}]}}"#;
        assert!(lists_filtered(listed, &ids, STRICT));
        assert!(!lists_filtered(listed, &[b"2".to_vec()], LENIENT));
        let twice = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]},"result":{"tools":[{"name":"secret_tool"}]}}"#;
        assert!(!lists_filtered(twice, &ids, STRICT) && lists_filtered(twice, &ids, LENIENT));
        let no_version = br#"{"id":1,"method":"tools/call","params":{"name":"secret_tool"}}"#;
        assert!(!calls(no_version, STRICT) && calls(no_version, LENIENT));
    }

    #[test]
    fn mutations_are_deterministic() {
        let seed = vec![
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"W"}}}"#
                .to_vec(),
        ];
        let run = |s| {
            let mut rng = Rng::new(s);
            (0..50)
                .map(|_| mutate_session(&mut rng, &seed, &seed, 4096).concat())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }
}
