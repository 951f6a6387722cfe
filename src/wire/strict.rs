//! Reading a line exactly as every strict reader reads it, for a program that passes on only
//! what it has judged (a filtering proxy): JSON with a member named twice means one thing to a
//! reader that keeps the first and another to one that keeps the last, so it is refused, as
//! are bytes that are not UTF-8. And, for a line refused, the envelope members that decide who
//! hears of it.

use std::fmt;

use serde_json::Value;

use crate::wire::jsonrpc::Id;
use crate::wire::scanner::{self, Scanner};
use crate::wire::value;

/// Why [`read_strict`] refused a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictError {
    /// The bytes are not UTF-8.
    NotUtf8,
    /// An object names `member` twice (after unescaping: `"name"` and `"n\u0061me"` are one
    /// member). `line` and `column` are where reading stopped, as serde_json counts them: from
    /// 1, and the column in bytes.
    NamedTwice {
        /// The member's name, unescaped.
        member: String,
        /// The line, from 1.
        line: usize,
        /// The byte column past the key and the whitespace after it.
        column: usize,
    },
    /// Not JSON, or JSON that no `serde_json::Value` holds (a string with a lone surrogate,
    /// nesting deeper than 128): serde_json's words for it, position included.
    Invalid(String),
}

impl fmt::Display for StrictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StrictError::NotUtf8 => f.write_str("the message is not UTF-8"),
            StrictError::NamedTwice { member, line, column } => {
                write!(f, "the member {member:?} is named twice at line {line} column {column}")
            }
            StrictError::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for StrictError {}

/// Decodes one message as every strict reader would read it, or says why it cannot: it must
/// be UTF-8 and JSON a `Value` holds (nesting at most 128 deep), and no object in it, at any
/// depth, may name a member twice. What a lenient reader makes of anything else is its own
/// guess, so a program judging messages for another reader refuses it.
///
/// ```
/// use baremcp::__private::{StrictError, read_strict};
///
/// let call = br#"{"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}"#;
/// let refused = read_strict(call).unwrap_err();
/// assert!(matches!(&refused, StrictError::NamedTwice { member, .. } if member == "name"));
/// assert_eq!(refused.to_string(), r#"the member "name" is named twice at line 1 column 55"#);
/// assert_eq!(read_strict(br#"{"id":1}"#).unwrap()["id"], 1);
/// ```
pub fn read_strict(line: &[u8]) -> Result<Value, StrictError> {
    let text = std::str::from_utf8(line).map_err(|_| StrictError::NotUtf8)?;
    value::decode_unique(text).map_err(|twice| match twice {
        Some((member, at)) => {
            let start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
            let line = 1 + text[..start].matches('\n').count();
            StrictError::NamedTwice { member, line, column: at - start }
        }
        // serde_json decides the same, and has the words and the position for it.
        None => StrictError::Invalid(match serde_json::from_str::<Value>(text) {
            Err(e) => e.to_string(),
            Ok(_) => "not JSON".into(),
        }),
    })
}

/// The members of a message's top level that decide who hears of it when it is refused:
/// read as baremcp's server reads them, however ambiguous the rest (a member named twice
/// inside, a lone surrogate, deep nesting).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// The message is a JSON object (not an array or a scalar).
    pub object: bool,
    /// It names `id`, once or more.
    pub names_id: bool,
    /// Its id, when it names exactly one `id` and that is a string or an integer: the text
    /// as written, since a client matches replies by it (`"\u0061"` is not `"a"` to it).
    pub id: Option<Id<'static>>,
    /// It names `method`.
    pub names_method: bool,
}

impl Outline {
    /// The outline of one line, its bytes that are not UTF-8 replaced first (so that a
    /// message can still be answered); `None` when the line is not JSON at all.
    pub fn read(line: &[u8]) -> Option<Outline> {
        let text = String::from_utf8_lossy(line);
        let mut scanner = Scanner::new(&text);
        if scanner.peek() != Some(b'{') {
            return scanner::is_json(&text).then(Outline::default);
        }
        let (mut outline, mut ids) = (Outline { object: true, ..Outline::default() }, Vec::new());
        // A key that is no `str` (a lone surrogate) names neither member.
        scanner
            .object(|key, s| {
                let value = s.value()?;
                match key.as_deref() {
                    Some("id") => ids.push(value),
                    Some("method") => outline.names_method = true,
                    _ => {}
                }
                Ok(())
            })
            .and_then(|()| scanner.end())
            .ok()?;
        outline.names_id = !ids.is_empty();
        outline.id = match ids[..] {
            [raw] => Id::from_raw(raw).map(Id::into_owned),
            _ => None,
        };
        Some(outline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        read_strict(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn a_member_named_twice_is_refused_at_any_depth_and_however_spelled() {
        let cases = [
            (r#"{"a":1,"a":2}"#, r#""a" is named twice at line 1 column 10"#),
            (r#"{"a":{"b":[{"c":1,"c":2}]}}"#, r#""c" is named twice at line 1 column 21"#),
            (r#"[{"x":[]},{"y":{"z":0,"z":0}}]"#, r#""z" is named twice at line 1 column 25"#),
            (r#"{"name":1,"n\u0061me":2}"#, r#""name" is named twice at line 1 column 21"#),
            // Past the key and the whitespace after it, where serde_json stops too.
            ("{\"a\":1, \"a\" \n : 2}", r#""a" is named twice at line 2 column 1"#),
            // The first problem in the text is the one reported.
            (r#"{"a":1,"a":[1,}"#, r#""a" is named twice at line 1 column 10"#),
            (r#"{"a":[1,],"a":1}"#, "trailing comma at line 1 column 9"),
            // Columns count bytes, as serde_json's do.
            (r#"{"é":1,"é":2}"#, r#""é" is named twice at line 1 column 12"#),
            // Or past a `}` right after the key.
            ("{\"a\":1,\"a\"\n}", r#""a" is named twice at line 2 column 1"#),
        ];
        for (text, why) in cases {
            assert!(refusal(text).ends_with(why), "{text}: {}", refusal(text));
        }
        // The same name in two objects is no ambiguity.
        assert!(read_strict(br#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#).is_ok());
    }

    #[test]
    fn what_no_value_holds_is_refused_in_serde_jsons_words() {
        assert_eq!(read_strict(b"{\"a\":\"\xff\"}"), Err(StrictError::NotUtf8));
        // Keys and values with a lone surrogate are grammatical, but no `String` holds them.
        for text in [r#"{"\ud800":1}"#, r#"{"\ud800":1,"\ud800":1}"#, r#"["\udc00"]"#] {
            let error = read_strict(text.as_bytes()).unwrap_err();
            let serde = serde_json::from_str::<Value>(text).unwrap_err().to_string();
            assert_eq!(error, StrictError::Invalid(serde), "{text}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(read_strict(deep(128).as_bytes()).is_ok());
        assert_eq!(refusal(&deep(129)), "recursion limit exceeded at line 1 column 128");
        assert_eq!(refusal(r#"{"a":1,}"#), "trailing comma at line 1 column 8");
    }

    #[test]
    fn outlines_read_the_top_level_only() {
        let outline = |text: &str| Outline::read(text.as_bytes());
        let id = |raw: &str| Id::from_raw(raw).map(Id::into_owned);
        let request = outline(r#"{"jsonrpc":"2.0","id":"\u0061","method":"x","p":{"id":2}}"#);
        assert_eq!(
            request,
            Some(Outline {
                object: true,
                names_id: true,
                id: id(r#""\u0061""#),
                names_method: true
            })
        );
        let ambiguous = outline(r#"{"id":-0,"\ud800":1,"params":{"a":1,"a":["\udc00"]}}"#);
        assert_eq!(ambiguous.and_then(|o| o.id), id("-0"));
        let notification = Outline { object: true, ..Outline::default() };
        assert_eq!(outline(r#"{"result":{}}"#), Some(notification));
        for (text, names_id) in [(r#"{"id":1,"id":1}"#, true), (r#"{"id":null}"#, true)] {
            let o = outline(text).unwrap();
            assert_eq!((o.names_id, o.id), (names_id, None), "{text}");
        }
        assert_eq!(outline("[1, 2]"), Some(Outline::default()));
        assert_eq!(outline(r#""\ud800""#), Some(Outline::default()));
        assert_eq!(outline(r#"{"id":1,}"#), None);
        assert_eq!(outline("not json"), None);
        // Bytes that are not UTF-8 are replaced, so the id is still read.
        let lossy = Outline::read(b"{\"id\":7,\"x\":\"\xff\"}");
        assert_eq!(lossy.and_then(|o| o.id), id("7"));
    }
}
