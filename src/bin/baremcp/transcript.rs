//! The transcript format: one scenario per file, `#` comment lines (`# args: FLAGS` names
//! extra server arguments), `--> ` lines the client sends, `<-- ` lines the server must
//! write, and `-->~ ` lines of raw bytes with escapes (`\\ \r \n \t \xHH`) and no implied
//! newline. `$NAME` in args and sent lines stands for a variable's value; in what the server
//! writes, the value (plain or percent-encoded) is put back as `$NAME`, so a transcript does
//! not depend on where files live.
//!
//! Expected lines may use placeholders for values that vary between runs: `"<any>"`,
//! `"<string>"`, `"<number>"`, `"<integer>"`, `"<boolean>"`, `"<null>"`, `"<object>"` and
//! `"<array>"` (a JSON string that is exactly one of those).

use serde_json::Value;

use baremcp::__private::{escape_token, json_equal, percent_encode_path};
use baremcp::Id;

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A comment or blank line, kept as written.
    Note(String),
    /// A client line: as written, and the bytes it sends (variables substituted).
    Send { line: String, bytes: Vec<u8> },
    /// An expected server line (after `<-- `).
    Expect(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    /// From the `# args:` header, variables substituted.
    pub args: Vec<String>,
}

/// Values for `$NAME` placeholders.
pub type Vars = Vec<(String, String)>;

/// Parses a transcript; an unknown line or a bad escape is an error naming the line.
pub fn parse(text: &str, vars: &Vars) -> Result<Transcript, String> {
    let mut entries = Vec::new();
    let mut args = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = |why: &str| format!("line {}: {why}", n + 1);
        if let Some(rest) = line.strip_prefix("# args:") {
            args = rest.split_whitespace().map(|a| substitute(a, vars)).collect();
        }
        entries.push(if let Some(raw) = line.strip_prefix("-->~ ") {
            Entry::Send {
                line: line.to_string(),
                bytes: unescape(&substitute(raw, vars)).map_err(|e| at(&e))?,
            }
        } else if let Some(sent) = line.strip_prefix("--> ") {
            Entry::Send {
                line: line.to_string(),
                bytes: format!("{}\n", substitute(sent, vars)).into_bytes(),
            }
        } else if let Some(expected) = line.strip_prefix("<-- ") {
            Entry::Expect(expected.to_string())
        } else if line.is_empty() || line.starts_with('#') {
            Entry::Note(line.to_string())
        } else {
            return Err(at("not a transcript line (# comment, -->, -->~ or <--)"));
        });
    }
    Ok(Transcript { entries, args })
}

fn substitute(text: &str, vars: &Vars) -> String {
    vars.iter()
        .fold(text.to_string(), |text, (name, value)| text.replace(&format!("${name}"), value))
}

/// Puts `$NAME` back where a server wrote a variable's value, percent-encoded or plain.
pub fn mask(text: &str, vars: &Vars) -> String {
    vars.iter().fold(text.to_string(), |text, (name, value)| {
        let encoded = percent_encode_path(value.as_bytes());
        text.replace(&encoded, &format!("${name}")).replace(value.as_str(), &format!("${name}"))
    })
}

/// Decodes `-->~` escapes.
pub fn unescape(raw: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let (byte, used) = match bytes.get(i + 1) {
            Some(b'r') => (b'\r', 2),
            Some(b'n') => (b'\n', 2),
            Some(b't') => (b'\t', 2),
            Some(b'\\') => (b'\\', 2),
            Some(b'x') => {
                let hex = raw.get(i + 2..i + 4).and_then(|h| u8::from_str_radix(h, 16).ok());
                (hex.ok_or("\\x needs two hex digits")?, 4)
            }
            _ => return Err(format!("unknown escape at byte {i} (use \\\\ \\r \\n \\t \\xHH)")),
        };
        out.push(byte);
        i += used;
    }
    Ok(out)
}

/// A line's method and id (the id's raw text, when it is a string or an integer), when
/// it is a JSON object; `(None, None)` when it is not.
pub fn method_and_id(line: &[u8]) -> (Option<String>, Option<Id<'static>>) {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(message)) => {
            (message.get("method").and_then(Value::as_str).map(str::to_owned), Id::in_head(line))
        }
        _ => (None, None),
    }
}

/// How a line the proxy saw is written back: as `-->`/`<--` text when it can be, else as
/// `-->~` bytes with escapes (a client line that is not UTF-8 or ends in `\r`).
pub fn client_line(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.contains(['\r', '\n']) => format!("--> {text}"),
        _ => {
            let mut out = String::from("-->~ ");
            for &b in bytes {
                match b {
                    b'\\' => out.push_str("\\\\"),
                    b'\r' => out.push_str("\\r"),
                    b'\n' => out.push_str("\\n"),
                    b'\t' => out.push_str("\\t"),
                    0x20..=0x7e => out.push(b as char),
                    _ => out.push_str(&format!("\\x{b:02X}")),
                }
            }
            out.push_str("\\n");
            out
        }
    }
}

/// Where `actual` first differs from `expected` (a JSON Pointer and what differs), or
/// `None` when they match. Placeholders match by type; numbers compare by value.
pub fn first_difference(expected: &Value, actual: &Value) -> Option<String> {
    let mut path = String::new();
    diff(expected, actual, &mut path)
}

fn diff(expected: &Value, actual: &Value, path: &mut String) -> Option<String> {
    let here = |path: &str, what: String| {
        Some(format!("at {}: {what}", if path.is_empty() { "/" } else { path }))
    };
    if let Value::String(placeholder) = expected {
        let matches = match placeholder.as_str() {
            "<any>" => Some(true),
            "<string>" => Some(actual.is_string()),
            "<number>" => Some(actual.is_number()),
            "<integer>" => Some(actual.is_i64() || actual.is_u64()),
            "<boolean>" => Some(actual.is_boolean()),
            "<null>" => Some(actual.is_null()),
            "<object>" => Some(actual.is_object()),
            "<array>" => Some(actual.is_array()),
            _ => None,
        };
        if let Some(matches) = matches {
            return if matches {
                None
            } else {
                here(path, format!("expected {placeholder}, got {actual}"))
            };
        }
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            if let Some(key) = e.keys().find(|k| !a.contains_key(*k)) {
                return here(path, format!("missing member {key:?}"));
            }
            if let Some(key) = a.keys().find(|k| !e.contains_key(*k)) {
                return here(path, format!("unexpected member {key:?}"));
            }
            for (key, value) in e {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_token(key));
                let found = diff(value, &a[key], path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return here(path, format!("expected {} items, got {}", e.len(), a.len()));
            }
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                let found = diff(e, a, path);
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        _ if json_equal(expected, actual) => None,
        _ => here(path, format!("expected {expected}, got {actual}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_and_values() {
        let expected = json!({"id": 1, "result": {"pid": "<integer>", "at": "<string>", "x": "<any>", "n": 1.0}});
        assert_eq!(
            first_difference(
                &expected,
                &json!({"id": 1, "result": {"pid": 42, "at": "now", "x": [1], "n": 1}})
            ),
            None
        );
        assert_eq!(
            first_difference(
                &expected,
                &json!({"id": 1, "result": {"pid": "42", "at": "now", "x": null, "n": 1}})
            ),
            Some("at /result/pid: expected <integer>, got \"42\"".into())
        );
        assert_eq!(
            first_difference(&json!({"a": [1, 2]}), &json!({"a": [1, 3]})),
            Some("at /a/1: expected 2, got 3".into())
        );
        assert_eq!(
            first_difference(&json!({"a": 1}), &json!({"a": 1, "b": 2})),
            Some("at /: unexpected member \"b\"".into())
        );
    }

    #[test]
    fn parses_and_renders_lines() {
        let vars = vec![("ROOT".to_string(), "/srv/x".to_string())];
        let t = parse("# args: --root $ROOT\n--> {\"a\":\"$ROOT\"}\n-->~ x\\r\\n\n<-- {}\n", &vars)
            .unwrap();
        assert_eq!(t.args, ["--root", "/srv/x"]);
        assert_eq!(
            t.entries[1],
            Entry::Send {
                line: "--> {\"a\":\"$ROOT\"}".into(),
                bytes: b"{\"a\":\"/srv/x\"}\n".to_vec()
            }
        );
        assert_eq!(
            t.entries[2],
            Entry::Send { line: "-->~ x\\r\\n".into(), bytes: b"x\r\n".to_vec() }
        );
        assert!(parse("what\n", &vars).is_err());
        assert_eq!(mask("file:///srv/x/a", &vars), "file://$ROOT/a");
        assert_eq!(client_line(b"{}"), "--> {}");
        assert_eq!(client_line(b"{\"a\":\"\xff\"}\r"), "-->~ {\"a\":\"\\xFF\"}\\r\\n");
    }

    /// Escapes round-trip through `client_line` and `unescape`; a bad one names its byte.
    #[test]
    fn escapes_round_trip_and_bad_ones_are_named() {
        let bytes = b"a\\b\tc\nd\re\x00\xff";
        let line = client_line(bytes);
        assert_eq!(line, "-->~ a\\\\b\\tc\\nd\\re\\x00\\xFF\\n");
        assert_eq!(
            unescape(line.strip_prefix("-->~ ").unwrap()).unwrap(),
            [&bytes[..], b"\n"].concat()
        );
        assert_eq!(
            unescape("ok\\q").unwrap_err(),
            "unknown escape at byte 2 (use \\\\ \\r \\n \\t \\xHH)"
        );
        assert_eq!(unescape("\\xZ1").unwrap_err(), "\\x needs two hex digits");
        assert_eq!(
            parse("-->~ \\q\n", &Vec::new()).unwrap_err(),
            "line 1: unknown escape at byte 0 (use \\\\ \\r \\n \\t \\xHH)"
        );
        assert_eq!(
            first_difference(&json!({"a": 1, "b": 2}), &json!({"a": 1})),
            Some("at /: missing member \"b\"".into())
        );
        assert_eq!(first_difference(&json!(["<null>"]), &json!([null])), None);
        assert_eq!(
            first_difference(&json!({"a/b": [1]}), &json!({"a/b": [1, 2]})),
            Some("at /a~1b: expected 1 items, got 2".into())
        );
    }
}
