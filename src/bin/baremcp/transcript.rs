//! The transcript format: one scenario per file, `#` comment lines (`# args: FLAGS` names
//! extra server arguments), `--> ` lines the client sends, `<-- ` lines the server must
//! write, and `-->~ ` lines of raw bytes with escapes (`\\ \r \n \t \xHH`) and no implied
//! newline; `-->| end of input` is where the client closed the server's input, and only
//! server lines may follow it. `$NAME` in args and sent lines stands for a variable's value
//! (`$$` for a `$`); in what the server writes, the value (plain or percent-encoded) is put
//! back as `$NAME`, so a transcript does not depend on where files live.
//!
//! Expected lines may use placeholders for values that vary between runs: `"<any>"`,
//! `"<string>"`, `"<number>"`, `"<integer>"`, `"<boolean>"`, `"<null>"`, `"<object>"` and
//! `"<array>"` (a JSON string that is exactly one of those).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::decimal::decimal;
use super::manifest::printable;
use baremcp::__private::{
    RawPart, escape_token, json_equal, percent_encode_path, raw_at, raw_parts, sort_by,
};
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
    /// [`END_OF_INPUT`]: the client closed the server's input here, so what the server
    /// writes only once its input ends can be expected in its place below.
    EndOfInput,
}

/// The line that says the client closed the server's input.
pub const END_OF_INPUT: &str = "-->| end of input";

#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub entries: Vec<Entry>,
    /// From the `# args:` header, variables substituted.
    pub args: Vec<String>,
    /// The variables its `# args:` and client lines use, longest value first: the ones
    /// [`mask`] puts back in what the server writes.
    pub vars: Vars,
}

/// Values for `$NAME` placeholders.
pub type Vars = Vec<(String, String)>;

/// The shortest value [`mask`] puts back, in characters: a shorter one (`1`, `/`, `ab`) is
/// too likely to be found where it was never meant.
const MASKED_CHARS: usize = 4;

/// Parses a transcript, taking `$NAME` values from `known`; an unknown line, a bad escape,
/// a variable not in `known` or a client line after the end of input is an error naming the
/// line.
pub fn parse(text: &str, known: &Vars) -> Result<Transcript, String> {
    let mut entries = Vec::new();
    let mut args = Vec::new();
    let mut vars = Vars::new();
    // The line of the end of input, once there was one: nothing is sent after it.
    let mut ended = None;
    for (n, line) in text.lines().enumerate() {
        let at = |why: String| format!("line {}: {why}", n + 1);
        if let Some(end) = ended
            && (line.starts_with("--> ") || line.starts_with("-->~ ") || line == END_OF_INPUT)
        {
            return Err(at(format!("nothing is sent after the end of input at line {end}")));
        }
        let mut expand = |text: &str, escapes| expand(text, known, &mut vars, escapes).map_err(at);
        if let Some(rest) = line.strip_prefix("# args:") {
            args = (rest.split_whitespace())
                .map(|a| expand(a, false).map(|a| String::from_utf8_lossy(&a).into_owned()))
                .collect::<Result<_, _>>()?;
        }
        entries.push(if let Some(raw) = line.strip_prefix("-->~ ") {
            Entry::Send { line: line.to_string(), bytes: expand(raw, true)? }
        } else if let Some(sent) = line.strip_prefix("--> ") {
            let mut bytes = expand(sent, false)?;
            bytes.push(b'\n');
            Entry::Send { line: line.to_string(), bytes }
        } else if let Some(expected) = line.strip_prefix("<-- ") {
            Entry::Expect(expected.to_string())
        } else if line == END_OF_INPUT {
            ended = Some(n + 1);
            Entry::EndOfInput
        } else if line.is_empty() || line.starts_with('#') {
            Entry::Note(line.to_string())
        } else {
            return Err(at(format!(
                "not a transcript line (# comment, -->, -->~, <-- or {END_OF_INPUT})"
            )));
        });
    }
    // Longer values first, so one that contains another is masked whole; those of one length
    // in the order the file first uses them.
    let mut ordered: Vec<_> = vars.into_iter().enumerate().collect();
    sort_by(&mut ordered, |(n, a), (m, b)| (b.1.len(), n) < (a.1.len(), m));
    let vars = ordered.into_iter().map(|(_, var)| var).collect();
    Ok(Transcript { entries, args, vars })
}

/// The text of `entries`, one line each: what [`parse`] reads them from.
pub fn render(entries: &[Entry]) -> String {
    let line = |entry: &Entry| match entry {
        Entry::Note(line) | Entry::Send { line, .. } => format!("{line}\n"),
        Entry::Expect(line) => format!("<-- {line}\n"),
        Entry::EndOfInput => format!("{END_OF_INPUT}\n"),
    };
    entries.iter().map(line).collect()
}

/// The bytes `text` stands for: `$NAME` is the value of `NAME` in `known` (and is added to
/// `used`), `$$` is `$`, and with `escapes`, `\` starts an escape. A `$` followed by
/// anything else is itself.
fn expand(text: &str, known: &Vars, used: &mut Vars, escapes: bool) -> Result<Vec<u8>, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let name = || &text[i + 1..i + 1 + name_len(bytes, i + 1)];
        i += match bytes[i] {
            b'$' if bytes.get(i + 1) == Some(&b'$') => {
                out.push(b'$');
                2
            }
            b'$' if !name().is_empty() => {
                let name = name();
                let Some((_, value)) = known.iter().find(|(known, _)| known == name) else {
                    return Err(format!("${name} is not set (write $$ for a literal $)"));
                };
                out.extend_from_slice(value.as_bytes());
                if !used.iter().any(|(used, _)| used == name) {
                    used.push((name.to_string(), value.clone()));
                }
                1 + name.len()
            }
            b'\\' if escapes => {
                let (byte, len) = unescape(text, i)?;
                out.push(byte);
                len
            }
            byte => {
                out.push(byte);
                1
            }
        };
    }
    Ok(out)
}

/// The length of the variable name at `bytes[at..]`: an uppercase letter, then uppercase
/// letters, digits and `_`. 0 when there is none. (Not `_` first: `$_id` is a common key,
/// and every shell sets `_`.)
fn name_len(bytes: &[u8], at: usize) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    if !rest.first().is_some_and(u8::is_ascii_uppercase) {
        return 0;
    }
    rest.iter().take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_').count()
}

/// The escape at `raw[i..]` (which starts with `\`): its byte and its length.
fn unescape(raw: &str, i: usize) -> Result<(u8, usize), String> {
    Ok(match raw.as_bytes().get(i + 1) {
        Some(b'r') => (b'\r', 2),
        Some(b'n') => (b'\n', 2),
        Some(b't') => (b'\t', 2),
        Some(b'\\') => (b'\\', 2),
        Some(b'x') => {
            let hex = raw.get(i + 2..i + 4).and_then(|h| u8::from_str_radix(h, 16).ok());
            (hex.ok_or("\\x needs two hex digits")?, 4)
        }
        _ => return Err(format!("unknown escape at byte {i} (use \\\\ \\r \\n \\t \\xHH)")),
    })
}

/// Puts `$NAME` back where a server wrote a variable's value, percent-encoded or plain (as
/// JSON writes it). Only where it can be told apart from other text: inside a JSON string,
/// not next to a letter, digit or `_`, and only values of at least [`MASKED_CHARS`]
/// characters (an empty one never), so what is masked stays JSON and means the value.
pub fn mask(text: &str, vars: &Vars) -> String {
    let forms: Vec<(String, &str)> = (vars.iter())
        .filter(|(_, value)| value.chars().count() >= MASKED_CHARS)
        .flat_map(|(name, value)| {
            let json = serde_json::to_string(value).unwrap_or_default();
            let json = json.get(1..json.len().saturating_sub(1)).unwrap_or_default().to_string();
            [(json, name.as_str()), (percent_encode_path(value.as_bytes()), name.as_str())]
        })
        .collect();
    if forms.is_empty() {
        return text.to_string();
    }
    // Letters past ASCII count as word characters too: no Unicode tables for a boundary.
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii();
    let mut out = String::with_capacity(text.len());
    let (mut rest, mut in_string, mut after_word) = (text, false, false);
    while let Some(c) = rest.chars().next() {
        let found = (in_string && !after_word)
            .then(|| {
                forms.iter().find(|(form, _)| {
                    rest.starts_with(form.as_str()) && !rest[form.len()..].starts_with(word)
                })
            })
            .flatten();
        if let Some((form, name)) = found {
            out.push('$');
            out.push_str(name);
            rest = &rest[form.len()..];
            after_word = true;
            continue;
        }
        // An escape is one unit, never split by a mask, and is no letter beside one.
        let len = match c {
            '\\' if in_string => {
                let chars = if rest[1..].starts_with('u') { 6 } else { 2 };
                rest.char_indices().nth(chars).map_or(rest.len(), |(i, _)| i)
            }
            _ => c.len_utf8(),
        };
        in_string ^= c == '"';
        after_word = word(c);
        out.push_str(&rest[..len]);
        rest = &rest[len..];
    }
    out
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

/// How a line the proxy saw is written back, so that it replays as the same bytes: as `-->`
/// text when it can be, else as `-->~` bytes with escapes (a client line that is not UTF-8
/// or ends in `\r`). A `$` that would read as a variable or as `$$` is written `$$`.
pub fn client_line(bytes: &[u8]) -> String {
    let line = match std::str::from_utf8(bytes) {
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
    };
    let mut escaped = String::with_capacity(line.len());
    for (i, c) in line.char_indices() {
        escaped.push(c);
        let next = line.as_bytes().get(i + 1);
        if c == '$' && (next == Some(&b'$') || name_len(line.as_bytes(), i + 1) > 0) {
            escaped.push('$');
        }
    }
    escaped
}

/// A JSON message and the text it was read from. serde_json holds fractions, exponents and
/// integers past 64 bits as `f64`, so where those compare equal the texts decide.
#[derive(Debug)]
pub struct Json {
    pub text: String,
    pub value: Value,
}

impl Json {
    pub fn parse(text: &str) -> serde_json::Result<Json> {
        Ok(Json { value: serde_json::from_str(text)?, text: text.to_string() })
    }

    /// A response: an id and no method (which, as JSON-RPC allows, may come in any order
    /// among the responses owed).
    pub fn is_response(&self) -> bool {
        self.value.get("method").is_none() && self.value.get("id").is_some()
    }
}

/// Where `actual` first differs from `expected` (a JSON Pointer and what differs), or
/// `None` when they match. Placeholders match by type; numbers compare by exact value.
pub fn first_difference(expected: &Json, actual: &Json) -> Option<String> {
    difference_at(expected, actual, "")
}

/// [`first_difference`] of the values at `pointer` in both (a missing one differs).
pub fn difference_at(expected: &Json, actual: &Json, pointer: &str) -> Option<String> {
    let (Some(e), Some(a)) = (expected.value.pointer(pointer), actual.value.pointer(pointer))
    else {
        return Some(format!("at {pointer}: missing"));
    };
    let raws = (raw_at(&expected.text, pointer), raw_at(&actual.text, pointer));
    diff(e, a, &mut pointer.to_string(), raws)
}

/// A container's parts as written: [`raw_parts`].
type Parts<'t> = Vec<RawPart<'t>>;

/// An object's members as written, by name (of a member named twice, the last, as a
/// `Value` keeps it).
type Members<'t> = HashMap<Cow<'t, str>, &'t str>;

fn by_name(raw: Option<&str>) -> Option<Members<'_>> {
    Some(raw_parts(raw?)?.into_iter().filter_map(|(name, raw)| Some((name?, raw))).collect())
}

fn member<'t>(members: &Option<Members<'t>>, key: &str) -> Option<&'t str> {
    members.as_ref()?.get(key).copied()
}

/// Whether comparing `value` may need its text as written: a number serde_json holds as an
/// `f64`, or a container that may hold one.
fn wants_text(value: &Value) -> bool {
    value.is_f64() || value.is_array() || value.is_object()
}

/// The text of item `i` among `parts`.
fn item<'t>(parts: &Option<Parts<'t>>, i: usize) -> Option<&'t str> {
    Some(parts.as_ref()?.get(i)?.1)
}

/// Whether `actual` (written as `raw`) matches `placeholder`, or `None` when that is no
/// placeholder but a string like any other.
fn placeholder_matches(placeholder: &str, actual: &Value, raw: Option<&str>) -> Option<bool> {
    Some(match placeholder {
        "<any>" => true,
        "<string>" => actual.is_string(),
        "<number>" => actual.is_number(),
        "<integer>" => {
            actual.is_i64()
                || actual.is_u64()
                || actual.is_f64() && raw.is_some_and(|t| !t.contains(['.', 'e', 'E']))
        }
        "<boolean>" => actual.is_boolean(),
        "<null>" => actual.is_null(),
        "<object>" => actual.is_object(),
        "<array>" => actual.is_array(),
        _ => return None,
    })
}

/// The value at `path` of both sides, with its text as written in each (`None` if not
/// found), so that a number serde_json holds as an `f64` compares as written. Each container
/// is split into its parts once, however many numbers it holds.
fn diff(
    expected: &Value,
    actual: &Value,
    path: &mut String,
    raws: (Option<&str>, Option<&str>),
) -> Option<String> {
    // The server chose the names in the path: shown escaped, never raw on a terminal.
    let here = |path: &str, what: String| {
        Some(format!("at {}: {what}", printable(if path.is_empty() { "/" } else { path })))
    };
    // A number as written: serde_json's `f64` shows `1e20` as `100000000000000000000.0`.
    let written =
        |raw: Option<&str>, value: &Value| raw.map_or_else(|| value.to_string(), str::to_string);
    let parts = || (raws.0.and_then(raw_parts), raws.1.and_then(raw_parts));
    if let Value::String(placeholder) = expected
        && let Some(matches) = placeholder_matches(placeholder, actual, raws.1)
    {
        return match matches {
            true => None,
            false => here(path, format!("expected {placeholder}, got {}", written(raws.1, actual))),
        };
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            if let Some(key) = e.keys().find(|k| !a.contains_key(*k)) {
                return here(path, format!("missing member {key:?}"));
            }
            if let Some(key) = a.keys().find(|k| !e.contains_key(*k)) {
                return here(path, format!("unexpected member {key:?}"));
            }
            // Split once, and only when a member's text is wanted.
            let mut members = None;
            for (key, value) in e {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_token(key));
                let raws = match wants_text(value) || wants_text(&a[key]) {
                    true => {
                        let (e, a) =
                            members.get_or_insert_with(|| (by_name(raws.0), by_name(raws.1)));
                        (member(e, key), member(a, key))
                    }
                    false => (None, None),
                };
                let found = diff(value, &a[key], path, raws);
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
            let parts = parts();
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                let found = diff(e, a, path, (item(&parts.0, i), item(&parts.1, i)));
                path.truncate(len);
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        // 64-bit integers compare as such; any other number as written, exactly: two
        // spellings of one value may read as different `f64`s (`5e180`, `5000000e174`).
        (Value::Number(_), Value::Number(_))
            if match expected.is_f64() || actual.is_f64() {
                true => decimal(&written(raws.0, expected)) == decimal(&written(raws.1, actual)),
                false => json_equal(expected, actual),
            } =>
        {
            None
        }
        (Value::Number(_), Value::Number(_)) => here(
            path,
            format!("expected {}, got {}", written(raws.0, expected), written(raws.1, actual)),
        ),
        _ if json_equal(expected, actual) => None,
        _ => here(path, format!("expected {expected}, got {actual}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn first_difference(expected: &Value, actual: &Value) -> Option<String> {
        let json = |v: &Value| Json::parse(&v.to_string()).unwrap();
        super::first_difference(&json(expected), &json(actual))
    }

    fn differs(expected: &str, actual: &str) -> Option<String> {
        super::first_difference(&Json::parse(expected).unwrap(), &Json::parse(actual).unwrap())
    }

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

    /// Numbers compare by their exact value, also where serde_json holds them as `f64`.
    #[test]
    fn numbers_compare_exactly() {
        let big = r#"{"a":[{"n":100000000000000000000}]}"#;
        assert_eq!(
            differs(big, r#"{"a":[{"n":100000000000000000001}]}"#),
            Some("at /a/0/n: expected 100000000000000000000, got 100000000000000000001".into())
        );
        assert_eq!(differs(big, r#" {"a": [ {"n": 1e20 } ] } "#), None);
        assert_eq!(
            differs(r#"[0.1]"#, r#"[0.10000000000000001]"#).unwrap(),
            "at /0: expected 0.1, got 0.10000000000000001"
        );
        for (e, a) in [
            ("1", "1.0"),
            ("-0", "0.0"),
            ("10e-1", "1"),
            ("1.50", "15E-1"),
            ("0", "0e99999999999999999999"),
        ] {
            assert_eq!(differs(e, a), None, "{e} {a}");
        }
        assert!(differs("-1", "1").is_some());
        // One value, two spellings that serde_json reads as different `f64`s.
        assert_eq!(differs("5e180", "5000000e174"), None);
        assert_eq!(differs("5.395e74", "5395000000e65"), None);
        assert!(differs("1e-99999", "2e-99999").is_some());
        // Exponents past 64 bits are exact too: no exponent saturates.
        let (tiny, tinier) = ("1e-99999999999999999998", "1e-99999999999999999999");
        assert!(differs(tiny, tinier).is_some());
        assert!(differs("1e-99999999999999999999999999999999999999999", tinier).is_some());
        for (e, a) in [
            (tiny, "10e-99999999999999999999"),
            ("0.001e-9223372036854775806", "1E-9223372036854775809"),
            ("-1.5e-0099999999999999999999", "-15000e-100000000000000000003"),
        ] {
            assert_eq!(differs(e, a), None, "{e} {a}");
        }
        // Keys with `/` and `~` are found in the text; the last of a doubled member counts.
        assert!(differs(r#"{"a/b~":1e20}"#, r#"{"a/b~":100000000000000000001}"#).is_some());
        assert_eq!(differs(r#"{"n":1e20}"#, r#"{"n":1,"n":100000000000000000000}"#), None);
        assert_eq!(differs(r#"{"n":"<integer>"}"#, r#"{"n":-100000000000000000000}"#), None);
        assert!(differs(r#"{"n":"<integer>"}"#, r#"{"n":1e20}"#).is_some());
        let id = |text| Json::parse(text).unwrap();
        let (want, got) =
            (id(r#"{"id":18446744073709551616}"#), id(r#"{"id":18446744073709551617,"result":1}"#));
        assert!(difference_at(&want, &got, "/id").is_some());
        assert_eq!(difference_at(&want, &id(r#"{"id":18446744073709551616.0}"#), "/id"), None);
    }

    #[test]
    fn parses_and_renders_lines() {
        let vars = vec![("ROOT".to_string(), "/srv/x".to_string())];
        let text = "# args: --root $ROOT\n--> {\"a\":\"$ROOT\"}\n-->~ x\\r\\n\n<-- {}\n";
        let t = parse(text, &vars).unwrap();
        assert_eq!(t.args, ["--root", "/srv/x"]);
        assert_eq!(t.vars, vars);
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
        assert_eq!(render(&t.entries), text);
        assert!(parse("what\n", &vars).is_err());
        assert_eq!(mask("\"file:///srv/x/a\"", &vars), "\"file://$ROOT/a\"");
        assert_eq!(client_line(b"{}"), "--> {}");
        assert_eq!(client_line(b"{\"a\":\"\xff\"}\r"), "-->~ {\"a\":\"\\xFF\"}\\r\\n");
    }

    /// Longer values are masked first; values of one length in the order the file first
    /// uses them.
    #[test]
    fn variables_are_ordered_by_length_then_first_use() {
        let var = |name: &str, value: &str| (name.to_string(), value.to_string());
        let known = vec![var("S", "1"), var("Y", "ab"), var("L", "abc"), var("X", "cd")];
        let t = parse("--> $S $Y $L $X\n", &known).unwrap();
        assert_eq!(t.vars, [var("L", "abc"), var("Y", "ab"), var("X", "cd"), var("S", "1")]);
        let t = parse("--> $X $Y\n", &known).unwrap();
        assert_eq!(t.vars, [var("X", "cd"), var("Y", "ab")]);
    }

    /// Only `# args:` and client lines use variables; `$$` is a `$`, and so is a `$` that
    /// starts no name; a variable not known is an error naming it.
    #[test]
    fn variables_come_from_args_and_client_lines_only() {
        let known = vec![("A".to_string(), "1".to_string()), ("B_2".into(), String::new())];
        let t = parse("# uses $A and $NOPE\n<-- {\"$A\":\"$NOPE\"}\n", &known).unwrap();
        assert_eq!(t.vars, []);
        let t = parse("--> $A$B_2|$$A|$$$|$a|$1|$_id|$\n-->~ $$B_2\\x24A\n", &known).unwrap();
        let sent: Vec<&[u8]> = (t.entries.iter())
            .map(|e| match e {
                Entry::Send { bytes, .. } => bytes.as_slice(),
                _ => b"",
            })
            .collect();
        assert_eq!(sent, [&b"1|$A|$$|$a|$1|$_id|$\n"[..], b"$B_2$A"]);
        assert_eq!(t.vars, [("A".to_string(), "1".to_string()), ("B_2".into(), String::new())]);
        assert_eq!(
            parse("# x\n--> {\"home\":\"$NOPE\"}\n", &known).unwrap_err(),
            "line 2: $NOPE is not set (write $$ for a literal $)"
        );
        assert_eq!(
            parse("# args: --root $NOPE\n", &known).unwrap_err(),
            "line 1: $NOPE is not set (write $$ for a literal $)"
        );
    }

    /// What the proxy records replays as the bytes it saw.
    #[test]
    fn client_lines_read_back_as_recorded() {
        let known = vec![("HOME".to_string(), "/root".to_string())];
        for bytes in [&b"echo $HOME $$ $$$A $_ $a $"[..], b"$HOME\xff\r", b"$", b"$$"] {
            let line = client_line(bytes);
            let t = parse(&line, &known).unwrap();
            let Entry::Send { bytes: sent, .. } = &t.entries[0] else { panic!("{line}") };
            assert_eq!(sent.strip_suffix(b"\n").unwrap(), bytes, "{line}");
            assert_eq!(t.vars, []);
        }
        assert_eq!(client_line(b"$HOME $x $$"), "--> $$HOME $x $$$");
    }

    /// Masking finds a value only where it can be told apart, and keeps JSON JSON.
    #[test]
    fn masking_needs_a_long_value_inside_a_string_with_edges() {
        let vars = |pairs: &[(&str, &str)]| -> Vars {
            pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
        };
        let line = r#"{"id":1,"a":"1 / ab","p":"/root/x /rootfs home/root"}"#;
        assert_eq!(mask(line, &vars(&[("E", ""), ("ONE", "1"), ("S", "/"), ("AB", "ab")])), line);
        assert_eq!(
            mask(line, &vars(&[("HOME", "/root")])),
            r#"{"id":1,"a":"1 / ab","p":"$HOME/x /rootfs home/root"}"#
        );
        // In an object key too; not in a number; an escape before is a boundary.
        assert_eq!(
            mask(r#"{"1234":1234,"t":"a\n1234"}"#, &vars(&[("N", "1234")])),
            r#"{"$N":1234,"t":"a\n$N"}"#
        );
        // The value as JSON writes it, and percent-encoded; never from inside an escape.
        assert_eq!(
            mask(
                r#"["say \"hi\" now","file:///a%20b/c","\\a b\\","x\u1234"]"#,
                &vars(&[("Q", "say \"hi\""), ("P", "/a b"), ("U", "u1234")])
            ),
            r#"["$Q now","file://$P/c","\\a b\\","x\u1234"]"#
        );
    }

    /// Escapes round-trip through `client_line` and `parse`; a bad one names its byte.
    #[test]
    fn escapes_round_trip_and_bad_ones_are_named() {
        let bytes = b"a\\b\tc\nd\re\x00\xff";
        let line = client_line(bytes);
        assert_eq!(line, "-->~ a\\\\b\\tc\\nd\\re\\x00\\xFF\\n");
        assert_eq!(
            parse(&line, &Vec::new()).unwrap().entries[0],
            Entry::Send { line: line.clone(), bytes: [&bytes[..], b"\n"].concat() }
        );
        assert_eq!(
            parse("-->~ ok\\q\n", &Vec::new()).unwrap_err(),
            "line 1: unknown escape at byte 2 (use \\\\ \\r \\n \\t \\xHH)"
        );
        assert_eq!(
            parse("-->~ \\xZ1", &Vec::new()).unwrap_err(),
            "line 1: \\x needs two hex digits"
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
