//! Building a `serde_json::Value` from text on the scanner's grammar, in one pass that only
//! allocates what the value holds, and over a previous value's allocations where the shape
//! repeats (tool arguments); or strictly, stopping at a member named twice (`strict.rs`).

use serde_json::{Map, Value};

use crate::wire::scanner::{MAX_DEPTH, Scanner, Syntax};

/// About the most that `value` holds in memory, counted as [`Scanner::weight`] counts what a
/// text would decode into, its strings' text and keys included: what a value kept for a
/// while (a task's input, an answer it waits for) is bounded by.
pub fn weigh(value: &Value) -> usize {
    use crate::wire::scanner::{ARRAY, ELEMENT, MEMBER, NODE, STRING};
    match value {
        Value::String(text) => STRING + text.len(),
        Value::Array(items) if !items.is_empty() => {
            ARRAY + items.iter().map(|item| ELEMENT + weigh(item)).sum::<usize>()
        }
        Value::Object(members) if !members.is_empty() => {
            let each = |(key, item): (&String, &Value)| MEMBER + key.len() + weigh(item);
            NODE + members.iter().map(each).sum::<usize>()
        }
        _ => 0,
    }
}

/// Decodes `text` into a `Value`, exactly as `serde_json::from_str` does, in one pass that
/// only allocates what the value holds. Escaped strings and numbers that are not plain
/// integers are handed to serde_json, so every decision about them stays its own.
pub fn decode(text: &str) -> Result<Value, Syntax> {
    let mut scanner = Scanner::new(text);
    let value = scanner.decode(0, None)?;
    scanner.end()?;
    Ok(value)
}

/// A member named twice, where strict decoding stopped: its name, and the byte offset past its
/// key and the whitespace after it (where serde_json stops too, so positions agree).
pub(super) type Twice = (String, usize);

/// Decodes `text` as [`decode`] does, but stops at the first member an object names twice
/// (after unescaping), at any depth: `Err(Some(..))` says which and where, `Err(None)` that
/// `decode` itself refuses the text.
pub(super) fn decode_unique(text: &str) -> Result<Value, Option<Twice>> {
    let mut twice = None;
    let mut scanner = Scanner::new(text);
    match scanner.decode(0, Some(&mut twice)).and_then(|value| scanner.end().map(|()| value)) {
        Ok(value) => Ok(value),
        Err(Syntax) => Err(twice),
    }
}

/// The widest object whose members [`decode_into`] writes over; a wider one is built afresh.
const REUSED: usize = 16;

impl Scanner<'_> {
    /// Writes the value here over `slot`; false when an object's members (or a nested one's)
    /// are not exactly `slot`'s, and `slot` must be rebuilt. Every member the result keeps is
    /// overwritten, so nothing of the old value survives a `true`.
    fn decode_into(&mut self, slot: &mut Value, depth: u32) -> Result<bool, Syntax> {
        match (self.peek(), slot) {
            (Some(b'{'), Value::Object(map)) if depth < MAX_DEPTH && map.len() <= REUSED => {
                // The members written, by address: one named twice must count once, or a
                // member the text never named would survive (one call's argument in the next).
                let mut written = [std::ptr::null::<Value>(); REUSED];
                let (mut seen, mut same) = (0, true);
                self.object(|key, s| {
                    match map.get_mut(key.ok_or(Syntax)?.as_ref()) {
                        Some(value) if same && !written[..seen].contains(&&raw const *value) => {
                            written[seen] = value;
                            seen += 1;
                            same = s.decode_into(value, depth + 1)?;
                        }
                        _ => {
                            same = false;
                            s.value()?;
                        }
                    }
                    Ok(())
                })?;
                Ok(same && seen == map.len())
            }
            (Some(b'['), Value::Array(items)) if depth < MAX_DEPTH => {
                let (mut n, mut same) = (0, true);
                self.items(b'[', b']', |s| {
                    match items.get_mut(n) {
                        _ if !same => drop(s.value()?),
                        Some(item) => same = s.decode_into(item, depth + 1)?,
                        None => items.push(s.decode(depth + 1, None)?),
                    }
                    n += 1;
                    Ok(())
                })?;
                items.truncate(n);
                Ok(same)
            }
            (Some(b'"'), Value::String(text)) => {
                let decoded = self.key()?;
                text.clear();
                text.push_str(&decoded);
                Ok(true)
            }
            (_, slot) => {
                *slot = self.decode(depth, None)?;
                Ok(true)
            }
        }
    }

    /// Recursion is bounded by `MAX_DEPTH`, which keeps the stack small at any input. With
    /// `twice`, a member named twice ends decoding and is noted there; without, the last one
    /// wins, as in serde_json.
    fn decode(
        &mut self,
        depth: u32,
        mut twice: Option<&mut Option<Twice>>,
    ) -> Result<Value, Syntax> {
        let open = self.peek().ok_or(Syntax)?;
        if matches!(open, b'{' | b'[') && depth == MAX_DEPTH {
            return Err(Syntax);
        }
        Ok(match open {
            b'{' => {
                let mut map = Map::new();
                self.items(b'{', b'}', |s| {
                    let key = s.key()?;
                    // Judged before the colon, as serde_json judges it: the first problem in
                    // the text is the one reported.
                    if let Some(twice) = twice.as_deref_mut()
                        && map.contains_key(key.as_ref())
                    {
                        // Where serde_json stops: past the whitespace, and past a `}` there.
                        let closes = s.peek() == Some(b'}');
                        *twice = Some((key.into_owned(), s.offset() + usize::from(closes)));
                        return Err(Syntax);
                    }
                    s.expect(b':')?;
                    let value = s.decode(depth + 1, twice.as_deref_mut())?;
                    map.insert(key.into_owned(), value);
                    Ok(())
                })?;
                Value::Object(map)
            }
            b'[' => {
                let mut items = Vec::new();
                self.items(b'[', b']', |s| {
                    items.push(s.decode(depth + 1, twice.as_deref_mut())?);
                    Ok(())
                })?;
                Value::Array(items)
            }
            b'"' => Value::String(self.key()?.into_owned()),
            _ => {
                let raw = self.value()?;
                // A short unsigned integer cannot overflow; everything else is serde_json's.
                if raw.len() <= 18 && raw.bytes().all(|b| b.is_ascii_digit()) {
                    Value::from(raw.parse::<u64>().map_err(|_| Syntax)?)
                } else {
                    serde_json::from_str(raw).map_err(|_| Syntax)?
                }
            }
        })
    }
}

/// Decodes `text` into `slot`, as [`decode`] would, reusing the strings, arrays and maps
/// `slot` already holds wherever the new value has the same shape: repeated tool calls then
/// decode their arguments without allocating, as long as no object in them has more than
/// `REUSED` (16) members (a wider one is built afresh each time). On error `slot` is left
/// `null`.
pub fn decode_into(text: &str, slot: &mut Value) -> Result<(), Syntax> {
    let mut scanner = Scanner::new(text);
    let reused = scanner.decode_into(slot, 0).and_then(|same| scanner.end().map(|()| same));
    match reused {
        Ok(true) => Ok(()),
        // Another shape: `slot` is partly written, so the value is built afresh.
        Ok(false) => decode(text).map(|value| *slot = value),
        Err(Syntax) => {
            *slot = Value::Null;
            Err(Syntax)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::scanner::tests::{VALID, random_texts};
    use crate::wire::scanner::{ARRAY, ELEMENT, MEMBER, NODE, STRING};

    #[test]
    fn a_value_weighs_what_its_text_would_decode_into() {
        use serde_json::json;
        assert_eq!(weigh(&json!([])), 0);
        assert_eq!(weigh(&json!([0, 1])), ARRAY + 2 * ELEMENT);
        assert_eq!(weigh(&json!({"ab": "cd"})), NODE + MEMBER + 2 + STRING + 2);
        // The scanner counts the same containers as it reads the text (strings' own text
        // aside, which the text already holds).
        let text = r#"{"a":[[1],{"b":"c"}],"d":{}}"#;
        let mut scanner = Scanner::new(text);
        scanner.value().unwrap();
        let texts = "a".len() + "b".len() + "c".len() + "d".len();
        assert_eq!(weigh(&decode(text).unwrap()), scanner.weight() + texts);
    }

    /// Random JSON-like text, and mutations of valid JSON: decoding must give what serde_json
    /// gives, afresh and over the previous text's value.
    #[test]
    fn agrees_with_serde_json_on_random_text() {
        let mut previous = String::new();
        for text in random_texts(&VALID, 20_000) {
            assert_eq!(decode(&text).ok(), serde_json::from_str::<Value>(&text).ok(), "{text:?}");
            let mut slot = decode(&previous).unwrap_or(Value::Null);
            let reused = decode_into(&text, &mut slot).ok().map(|()| slot);
            assert_eq!(reused, decode(&text).ok(), "{previous:?} then {text:?}");
            previous = text;
        }
    }

    #[test]
    fn an_object_of_up_to_16_members_is_decoded_over_in_place() {
        let text = |n: usize, v: &str| {
            let members: Vec<_> = (0..n).map(|i| format!(r#""k{i:02}":"{v}""#)).collect();
            format!("{{{}}}", members.join(","))
        };
        let reused = |n: usize| {
            let mut slot = decode(&text(n, "first value")).unwrap();
            let before = slot["k00"].as_str().unwrap().as_ptr();
            decode_into(&text(n, "other value"), &mut slot).unwrap();
            assert_eq!(slot, decode(&text(n, "other value")).unwrap());
            slot["k00"].as_str().unwrap().as_ptr() == before
        };
        assert!(reused(REUSED), "a string of an object of {REUSED} members is written over");
        // Built afresh while the old value lives, so at another address.
        assert!(!reused(REUSED + 1), "a wider object is built afresh");
    }

    #[test]
    fn decodes_as_serde_json_does() {
        let cases = [
            r#"{"name":"World","n":[0,-0,1,-7,18446744073709551615,18446744073709551616,-9223372036854775809]}"#,
            r#"{"f":[1.5,2e3,-0.0,1e400,0.1,123456789012345678901234567890],"s":"\u00e9\n\ud83d\ude00","e":{}}"#,
            r#" [ true , false , null , [ ] , { "a" : { "b" : [ "c" ] } } ] "#,
            r#"{"a":1,"a":2}"#,
            r#""\ud800""#,
            "007",
            "[1,]",
        ];
        for case in cases {
            assert_eq!(decode(case).ok(), serde_json::from_str::<Value>(case).ok(), "{case}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(decode(&deep(128)).is_ok() && decode(&deep(129)).is_err());
        // One slot through a run of values of the same, then other, shapes.
        let run = [
            r#"{"name":"World"}"#,
            r#"{"name":"Bob"}"#,
            r#"{"name":"x","extra":1}"#,
            r#"{"extra":1}"#,
            r#"{"name":1}"#,
            r#"{"a":[1,2,3]}"#,
            r#"{"a":[4]}"#,
            r#"{"a":[5,6,7,8]}"#,
            r#"{"a":[]}"#,
            r#"{"a":[{"b":1}]}"#,
            r#"{"a":[{"c":1}]}"#,
            r#"{"a":[{"c":"long text"},{"c":2}]}"#,
            r#"{"a":{"b":1},"a":{"b":2}}"#,
            r#"{"a":{"b":1},"a":{"b":2}}"#,
            // A member named twice writes one member: the other must not survive.
            r#"{"a":1,"b":2}"#,
            r#"{"a":3,"a":4}"#,
            r#"{"a":{"x":1,"y":2}}"#,
            r#"{"a":{"x":3,"x":4}}"#,
            r#"{"a":5,"b":6}"#,
            r#"{"b":7,"b":8}"#,
            r#"{"n\u0061me":"\u00e9"}"#,
            r#"{"name":"\u00e9"}"#,
            r#"{"name":"World""#,
            r#"{"name":"World"}"#,
        ];
        let mut slot = Value::Null;
        for text in run {
            let reused = decode_into(text, &mut slot).ok().map(|()| slot.clone());
            assert_eq!(reused, serde_json::from_str::<Value>(text).ok(), "{text}");
        }
        let mut nested = decode(&format!("{{\"a\":{}}}", deep(127))).unwrap();
        assert!(decode_into(&format!("{{\"a\":{}}}", deep(128)), &mut nested).is_err());
    }
}
