//! Mutations of one line: bytes flipped, set, inserted, deleted; truncation and splicing;
//! members twice; deep nesting; huge strings and numbers around the line limit; lone
//! surrogates and invalid UTF-8; ids of every kind; other methods, cancels, modern `_meta`;
//! escaped member names; whitespace; lines past the limit.

use super::json::{self, Decoded};
use super::rng::Rng;
use super::spans::{Spans, body, find, spans, splice, with_newline};

/// The `_meta` a 2026-07-28 request carries, with every client capability.
pub const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}"#;

/// Method names: every one the server knows, and some it does not.
pub const METHODS: &[&str] = &[
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
pub const IDS: &[&str] = &[
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

/// Mutates one line (as sent, with its newline if it had one). `pool` gives other lines to
/// splice with; `limit` is the server's line limit, so sizes straddle it.
pub fn mutate_line(rng: &mut Rng, line: &[u8], pool: &[Vec<u8>], limit: usize) -> Vec<u8> {
    let (text, newline) = body(line);
    let mut text = text.to_vec();
    let structure = spans(&text);
    let s = structure.as_ref();
    // One row per kind. A kind that needs what the line lacks (bytes, a pool) falls through
    // to the last row; one that finds nothing to work on leaves the line as it is.
    match rng.below(22) {
        0 if !text.is_empty() => flip_bit(rng, &mut text),
        1 if !text.is_empty() => set_byte(rng, &mut text),
        2 => insert_byte(rng, &mut text),
        3 if !text.is_empty() => delete_bytes(rng, &mut text),
        // Truncation, with or without the newline.
        4 => {
            text.truncate(rng.below(text.len() + 1));
            return with_newline(text, rng.one_in(2));
        }
        5 if !pool.is_empty() => splice_other(rng, &mut text, pool),
        6 | 7 => member_twice(rng, &mut text, s),
        8 => envelope_member_twice(rng, &mut text, s),
        9 => nest_deep(rng, &mut text, s),
        10 => grow_string(rng, &mut text, s, limit),
        11 => replace_value(rng, &mut text, s, limit),
        12 | 13 => break_encoding(rng, &mut text, s),
        14 | 15 => replace_id(rng, &mut text, s),
        16 => replace_method(rng, &mut text, s),
        17 => text = cancel(rng),
        18 => add_meta(&mut text),
        19 => escape_key(rng, &mut text, s),
        20 => whitespace(rng, &mut text),
        _ => overlong(rng, &mut text, limit),
    }
    with_newline(text, newline || rng.below(16) != 0)
}

fn flip_bit(rng: &mut Rng, text: &mut [u8]) {
    let at = rng.below(text.len());
    text[at] ^= 1 << rng.below(8);
}

fn set_byte(rng: &mut Rng, text: &mut [u8]) {
    let at = rng.below(text.len());
    text[at] = *rng.pick(b"{}[]\":,\\ 0-+.eEtfn\x00\x7f\xff\xc3\xed\r");
}

fn insert_byte(rng: &mut Rng, text: &mut Vec<u8>) {
    let at = rng.below(text.len() + 1);
    text.insert(at, *rng.pick(b"{}[]\":,\\ 0-.e\x01\xff\xc0\x80\r\t"));
}

fn delete_bytes(rng: &mut Rng, text: &mut Vec<u8>) {
    let at = rng.below(text.len());
    let n = 1 + rng.below(8.min(text.len() - at));
    text.drain(at..at + n);
}

/// The start of this line, the end of another.
fn splice_other(rng: &mut Rng, text: &mut Vec<u8>, pool: &[Vec<u8>]) {
    let other: &Vec<u8> = rng.pick(pool);
    let (other, _) = body(other);
    let (a, b) = (rng.below(text.len() + 1), rng.below(other.len() + 1));
    *text = [&text[..a], &other[b..]].concat();
}

/// A member twice: as it is, or with another value.
fn member_twice(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    let Some(s) = s.filter(|s| !s.members.is_empty()) else { return };
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
    *text = splice(text, at, at, &glue);
}

/// A well-known member twice, to make envelopes and params ambiguous.
fn envelope_member_twice(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    let Some(s) = s.filter(|s| !s.members.is_empty()) else { return };
    let targets: Vec<_> = s
        .members
        .iter()
        .filter(|m| ["method", "id", "params", "name", "jsonrpc", "uri"].contains(&m.2.as_str()))
        .collect();
    let Some(&&(_, end, ref key)) = (!targets.is_empty()).then(|| rng.pick(&targets)) else {
        return;
    };
    let value = match key.as_str() {
        "method" => format!("\"{}\"", rng.pick(METHODS)),
        "id" => rng.pick(IDS).to_string(),
        "name" => (*rng.pick(&["\"secret_tool\"", "\"calculate\"", "\"hello\"", "\"\\ud800\""]))
            .to_string(),
        _ => rng.pick(VALUES).to_string(),
    };
    *text = splice(text, end, end, format!(",{}:{value}", json_string(key)).as_bytes());
}

/// Deep nesting around a value, or around the whole line.
fn nest_deep(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    let n = *rng.pick(&[2, 127, 128, 129, 130, 1000, 100_000]);
    let objects = rng.one_in(2);
    match s.filter(|s| !s.values.is_empty() && rng.below(4) != 0) {
        Some(s) => {
            let &(start, end) = rng.pick(&s.values);
            let nested = nest(&text[start..end], n, objects);
            *text = splice(text, start, end, &nested);
        }
        None => *text = nest(text, n, objects),
    }
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

/// A huge string, sized around the line limit.
fn grow_string(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>, limit: usize) {
    let Some(s) = s.filter(|s| !s.strings.is_empty()) else { return };
    let &(start, end) = rng.pick(&s.strings);
    let size = match rng.below(4) {
        0 => limit.saturating_sub(text.len()).saturating_sub(4),
        1 => limit.saturating_sub(text.len()) + 1,
        2 => rng.below(limit.min(1 << 20)),
        _ => 100 + rng.below(5000),
    };
    let fill = *rng.pick(&["x", "é", "\\u0041", "\\\\", " "]);
    let big = fill.repeat(size / fill.len().max(1));
    *text = splice(text, start + 1, end - 1, big.as_bytes());
}

/// A value swapped for a huge number or one that stresses what reads it.
fn replace_value(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>, limit: usize) {
    let Some(s) = s.filter(|s| !s.values.is_empty()) else { return };
    let &(start, end) = rng.pick(&s.values);
    let value = if rng.one_in(3) {
        let digits = 1 + rng.below(limit.min(4096));
        format!("{}{}", if rng.one_in(2) { "-" } else { "" }, "9".repeat(digits))
    } else {
        rng.pick(VALUES).to_string()
    };
    *text = splice(text, start, end, value.as_bytes());
}

/// Lone surrogates and invalid UTF-8 inside a string (a key or a value).
fn break_encoding(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    let Some(s) = s.filter(|s| !s.strings.is_empty() || !s.members.is_empty()) else { return };
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
        *text = splice(text, at, at, insert);
    }
}

/// An id of another kind, or no id.
fn replace_id(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    let Some(s) = s else { return };
    let ids: Vec<_> = s.members.iter().filter(|m| m.2 == "id").collect();
    let Some(&&(start, end, _)) = (!ids.is_empty()).then(|| rng.pick(&ids)) else { return };
    let replacement =
        if rng.one_in(6) { String::new() } else { format!("\"id\":{}", rng.pick(IDS)) };
    *text = splice(text, start, end, replacement.as_bytes());
    if replacement.is_empty() {
        // Drop a comma left dangling: `{,` or `,,` or `,}`.
        let fixed =
            String::from_utf8_lossy(text).replace("{,", "{").replace(",,", ",").replace(",}", "}");
        if std::str::from_utf8(text).is_ok() {
            *text = fixed.into_bytes();
        }
    }
}

/// Another method.
fn replace_method(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    if let Some(&(start, end, _)) = s.and_then(|s| s.members.iter().find(|m| m.2 == "method")) {
        let method = format!("\"method\":\"{}\"", rng.pick(METHODS));
        *text = splice(text, start, end, method.as_bytes());
    }
}

/// A cancel of an id of any kind, in place of the line.
fn cancel(rng: &mut Rng) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"fuzz"}}}}"#,
        rng.pick(IDS)
    )
    .into_bytes()
}

/// Modern `_meta` into params.
fn add_meta(text: &mut Vec<u8>) {
    if let Some(at) = find(text, br#""params":{"#) {
        let at = at + br#""params":{"#.len();
        *text = splice(text, at, at, format!("{META},").as_bytes());
    }
}

/// Escaped spellings of member names (`"\u0069d"` is `"id"`).
fn escape_key(rng: &mut Rng, text: &mut Vec<u8>, s: Option<&Spans>) {
    let Some(s) = s.filter(|s| !s.members.is_empty()) else { return };
    let &(start, _, ref key) = rng.pick(&s.members);
    let Some(first) = key.chars().next() else { return };
    let escaped =
        format!("\"\\u{:04x}{}\"", first as u32, &key[first.len_utf8()..].replace('"', "\\\""));
    let (key_end, _) = json::string(text, start)
        .unwrap_or((start, Decoded { text: String::new(), lone_surrogate: false }));
    if key_end > start {
        *text = splice(text, start, key_end, escaped.as_bytes());
    }
}

/// Whitespace and line endings.
fn whitespace(rng: &mut Rng, text: &mut Vec<u8>) {
    match rng.below(4) {
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
    }
}

/// A line longer than the limit, or a small array spliced in anywhere.
fn overlong(rng: &mut Rng, text: &mut Vec<u8>, limit: usize) {
    if rng.one_in(3) {
        text.resize(limit + 1 + rng.below(64), b' ');
    } else {
        let at = rng.below(text.len() + 1);
        *text = splice(text, at, at, b"[1,2]");
    }
}

/// `text` as a JSON string.
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
