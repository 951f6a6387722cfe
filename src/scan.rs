//! A strict JSON scanner for what every message needs: the members of one object, each as the
//! raw JSON text of its value. It validates everything it passes over (RFC 8259 grammar, at
//! any depth, no recursion) and builds nothing, so finding `id`, `method` and the `params`
//! members costs one pass over the line. Valid JSON the server will not take (nesting deeper
//! than 128) is still scanned to its end and only noted, so the message's `id` can be read and
//! the error sent to it. Values that are used are decoded later with serde_json.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The text is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax;

/// Nesting deeper than this is refused (as serde_json does): noted by the scanner, an error
/// for [`decode`].
pub const MAX_DEPTH: u32 = 128;

pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// How many objects the position is inside of, through [`Scanner::object`].
    nested: u32,
    /// A value scanned so far nests deeper than [`MAX_DEPTH`].
    too_deep: bool,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, bytes: text.as_bytes(), pos: 0, nested: 0, too_deep: false }
    }

    /// Whether the text scanned so far nests deeper than [`MAX_DEPTH`] (as serde_json counts,
    /// from the start of the text): valid JSON, but more than the server takes.
    pub fn too_deep(&self) -> bool {
        self.too_deep
    }

    /// The first non-whitespace byte, without consuming it.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// Succeeds when only whitespace is left.
    pub fn end(&mut self) -> Result<(), Syntax> {
        if self.peek().is_none() { Ok(()) } else { Err(Syntax) }
    }

    #[inline]
    fn skip_ws(&mut self) {
        // Compact JSON has no whitespace: one comparison settles the common case.
        if self.bytes.get(self.pos).is_some_and(|&b| b > b' ') {
            return;
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Result<(), Syntax> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Syntax)
        }
    }

    /// Calls `member(key, scanner)` for each member of the object that starts here; `member`
    /// must consume the value (with [`Scanner::value`], or [`Scanner::object`] to look inside).
    /// Keys with escapes are decoded; a key that is no `str` (a lone surrogate: valid JSON)
    /// is `None`.
    pub fn object(
        &mut self,
        member: impl FnMut(Option<Cow<'a, str>>, &mut Scanner<'a>) -> Result<(), Syntax>,
    ) -> Result<(), Syntax> {
        self.expect(b'{')?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        self.object_after(0, member)
    }

    /// As [`Scanner::object`], when the caller has recognised the object's opening (and any
    /// members, through the comma after them) as the next `head` bytes: the members after it.
    #[inline]
    pub fn object_after(
        &mut self,
        head: usize,
        mut member: impl FnMut(Option<Cow<'a, str>>, &mut Scanner<'a>) -> Result<(), Syntax>,
    ) -> Result<(), Syntax> {
        self.pos += head;
        self.nested += 1;
        let members = self.rest(b'}', |s| {
            let key = s.member_key()?;
            s.expect(b':')?;
            member(key, s)
        });
        self.nested -= 1;
        members
    }

    /// Calls `element(raw_value)` for each element of the array that starts here.
    pub fn array(&mut self, mut element: impl FnMut(&'a str)) -> Result<(), Syntax> {
        self.items(b'[', b']', |s| s.value().map(&mut element))
    }

    /// The container that starts here with `open`: `item` consumes each entry, the commas
    /// between them and the `close` are checked here.
    #[inline]
    fn items(
        &mut self,
        open: u8,
        close: u8,
        item: impl FnMut(&mut Scanner<'a>) -> Result<(), Syntax>,
    ) -> Result<(), Syntax> {
        self.expect(open)?;
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        self.rest(close, item)
    }

    /// The entries of a container from the first one after its opening (or after a comma) to
    /// its `close`.
    #[inline]
    fn rest(&mut self, close: u8, mut item: impl FnMut(&mut Scanner<'a>) -> Result<(), Syntax>) -> Result<(), Syntax> {
        loop {
            item(self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(byte) if byte == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Syntax),
            }
        }
    }

    /// A string at this position (a key, or a string value being decoded), unescaped.
    #[inline(always)]
    fn key(&mut self) -> Result<Cow<'a, str>, Syntax> {
        self.member_key()?.ok_or(Syntax)
    }

    /// A member's key here, unescaped; `None` when its escapes make no `str`.
    #[inline(always)]
    fn member_key(&mut self) -> Result<Option<Cow<'a, str>>, Syntax> {
        if self.peek() != Some(b'"') {
            return Err(Syntax);
        }
        self.unescaped()
    }

    /// A key that is only passed over: checked, not decoded.
    #[inline(always)]
    fn skip_key(&mut self) -> Result<(), Syntax> {
        if self.peek() != Some(b'"') {
            return Err(Syntax);
        }
        self.string().map(drop)
    }

    /// The string value here, unescaped; `None` (the value skipped) when it is not a string
    /// or its escapes do not decode.
    pub fn string_value(&mut self) -> Result<Option<Cow<'a, str>>, Syntax> {
        if self.peek() == Some(b'"') { self.unescaped() } else { self.value().map(|_| None) }
    }

    /// The string at its opening quote here, borrowed when it has no escapes; `None` when its
    /// escapes do not decode (a lone surrogate is grammatical JSON but no `str`).
    #[inline(always)]
    fn unescaped(&mut self) -> Result<Option<Cow<'a, str>>, Syntax> {
        let start = self.pos;
        Ok(if self.string()? {
            serde_json::from_str(&self.text[start..self.pos]).ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(&self.text[start + 1..self.pos - 1]))
        })
    }

    /// Skips one value, however nested, and returns its text.
    pub fn value(&mut self) -> Result<&'a str, Syntax> {
        self.skip_ws();
        let start = self.pos;
        // Most members are a string or a number: those skip the container machinery.
        match self.bytes.get(start) {
            Some(b'"') => {
                self.string()?;
                return Ok(&self.text[start..self.pos]);
            }
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                return Ok(&self.text[start..self.pos]);
            }
            _ => {}
        }
        // One bit per open container, set for an object: an explicit stack instead of
        // recursion, so no input can exhaust the call stack. The innermost 128 levels are in
        // `objects`; deeper input (never valid for the server, but still JSON to scan to its
        // end) spills the outer levels, 128 at a time.
        let (mut objects, mut depth, mut spilled) = (0u128, 0u32, Vec::new());
        loop {
            // A value starts here.
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(&open @ (b'{' | b'[')) => {
                    self.pos += 1;
                    self.too_deep |= depth + self.nested >= MAX_DEPTH;
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        if depth % MAX_DEPTH == 0 && depth > 0 {
                            spilled.push(objects);
                        }
                        objects = (objects << 1) | u128::from(open == b'{');
                        depth += 1;
                        if open == b'{' {
                            self.skip_key()?;
                            self.expect(b':')?;
                        }
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(Syntax),
            }
            // A value ended: close containers until one continues.
            loop {
                if depth == 0 {
                    return Ok(&self.text[start..self.pos]);
                }
                let in_object = objects & 1 == 1;
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if in_object {
                            self.skip_key()?;
                            self.expect(b':')?;
                        }
                        break;
                    }
                    Some(b'}') if in_object => {}
                    Some(b']') if !in_object => {}
                    _ => return Err(Syntax),
                }
                self.pos += 1;
                objects >>= 1;
                depth -= 1;
                if depth % MAX_DEPTH == 0 && depth > 0 {
                    objects = spilled.pop().ok_or(Syntax)?;
                }
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Syntax> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Syntax)
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<(), Syntax> {
        if self.bytes[self.pos] == b'-' {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(Syntax),
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(Syntax);
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(Syntax);
            }
        }
        Ok(())
    }

    /// Skips a string (at its opening quote); returns whether it has escapes. The text is
    /// already UTF-8, so only quotes, escapes and control characters need a look, and eight
    /// bytes are checked at a time for those.
    #[inline(always)]
    fn string(&mut self) -> Result<bool, Syntax> {
        self.pos += 1;
        let mut escaped = false;
        loop {
            self.pos += plain_len(&self.bytes[self.pos..]);
            match self.bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    self.pos += 1;
                    match self.bytes.get(self.pos) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.pos += 1,
                        Some(b'u') => {
                            let hex = self.bytes.get(self.pos + 1..self.pos + 5).ok_or(Syntax)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(Syntax);
                            }
                            self.pos += 5;
                        }
                        _ => return Err(Syntax),
                    }
                }
                Some(0..=0x1f) | None => return Err(Syntax),
                Some(_) => self.pos += 1,
            }
        }
    }
}

/// How many bytes from the start need no escaping in a JSON string: the index of the first
/// `"`, `\` or control byte (or the length), found eight bytes at a time.
#[inline(always)]
pub fn plain_len(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_at = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut at = 0;
    loop {
        let word = match bytes[at..].first_chunk::<8>() {
            Some(chunk) => u64::from_le_bytes(*chunk),
            // Fewer than eight bytes left: one at a time (a padded copy would call memcpy).
            None => {
                let rest = &bytes[at..];
                return at + rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(rest.len());
            }
        };
        // Flags `"`, `\` and bytes below 0x20. The lowest flag is always exact.
        let special = zero_at(word ^ (ONES * u64::from(b'"')))
            | zero_at(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
        if special != 0 {
            return at + special.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
}

/// Decodes `text` into a `Value`, exactly as `serde_json::from_str` does, in one pass that
/// only allocates what the value holds. Escaped strings and numbers that are not plain
/// integers are handed to serde_json, so every decision about them stays its own.
pub fn decode(text: &str) -> Result<Value, Syntax> {
    let mut scanner = Scanner::new(text);
    let value = scanner.decode(0)?;
    scanner.end()?;
    Ok(value)
}

impl Scanner<'_> {
    /// Writes the value here over `slot`; false when an object's members (or a nested one's)
    /// are not exactly `slot`'s, and `slot` must be rebuilt. Every member the result keeps is
    /// overwritten, so nothing of the old value survives a `true`.
    fn decode_into(&mut self, slot: &mut Value, depth: u32) -> Result<bool, Syntax> {
        match (self.peek(), slot) {
            (Some(b'{'), Value::Object(map)) if depth < MAX_DEPTH => {
                let (mut seen, mut same) = (0, true);
                self.object(|key, s| {
                    match map.get_mut(key.ok_or(Syntax)?.as_ref()) {
                        Some(value) if same => {
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
                        None => items.push(s.decode(depth + 1)?),
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
                *slot = self.decode(depth)?;
                Ok(true)
            }
        }
    }

    /// Recursion is bounded by `MAX_DEPTH`, which keeps the stack small at any input.
    fn decode(&mut self, depth: u32) -> Result<Value, Syntax> {
        let open = self.peek().ok_or(Syntax)?;
        if matches!(open, b'{' | b'[') && depth == MAX_DEPTH {
            return Err(Syntax);
        }
        Ok(match open {
            b'{' => {
                let mut map = Map::new();
                self.object(|key, s| {
                    let key = key.ok_or(Syntax)?;
                    let value = s.decode(depth + 1)?;
                    map.insert(key.into_owned(), value);
                    Ok(())
                })?;
                Value::Object(map)
            }
            b'[' => {
                let mut items = Vec::new();
                self.items(b'[', b']', |s| {
                    items.push(s.decode(depth + 1)?);
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
/// decode their arguments without allocating. On error `slot` is left `null`.
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

/// Whether `text` is one JSON value and nothing else.
pub fn is_json(text: &str) -> bool {
    let mut scanner = Scanner::new(text);
    scanner.value().and_then(|_| scanner.end()).is_ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    }

    #[test]
    fn agrees_with_serde_json_on_handwritten_cases() {
        let cases = [
            "0",
            "-0",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "1E-7",
            "-",
            "--1",
            "1.5e300",
            "tru",
            "true",
            "nul",
            "null ",
            " [ ] ",
            "[1,]",
            "[,1]",
            "{}",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{1:2}",
            "{\"a\":1 \"b\":2}",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"\\x\"",
            "\"a\tb\"",
            "\"\\ud800\"",
            "\"é🐲\"",
            "\"\\/\"",
            "[[[[]]]]",
            "[1] [2]",
            "{\"a\":[1,{\"b\":[true,false,null]}]}",
            "\"unterminated",
            "",
            "   ",
            "[1,2",
            "{\"a\":1",
            "\"12345678\\\"90123456\"",
            "\"1234567\u{1}\"",
            "{\"\\ud800\":1}",
            "[{\"a\":{\"\\udc00\\ud800\":[]}}]",
        ];
        for case in cases {
            assert_eq!(is_json(case), serde_accepts(case), "{case:?}");
        }
        assert!(!is_json(&"[".repeat(100_000)));
    }

    /// Nesting past the limit is still JSON: scanned to its end, at any depth, and noted.
    #[test]
    fn scans_deep_json_and_notes_it() {
        // `n` arrays each holding an object: 2n levels.
        let deep = |n: usize| format!("{}1{}", "[{\"k\":".repeat(n), "}]".repeat(n));
        let too_deep = |text: &str| {
            let mut scanner = Scanner::new(text);
            scanner.value().and_then(|_| scanner.end()).map(|()| scanner.too_deep())
        };
        assert_eq!(too_deep(&deep(64)), Ok(false));
        for n in [65, 128, 129, 1000] {
            assert_eq!(too_deep(&deep(n)), Ok(true), "{n}");
        }
        // A wrong closer deep down is still a syntax error, as is one level too few.
        let wrong = deep(300).replacen("}]", "]]", 1);
        assert_eq!(too_deep(&wrong), Err(Syntax));
        assert_eq!(too_deep(&deep(300)[1..]), Err(Syntax));
        // Members count the objects around them, as serde_json counts the whole text: here
        // two objects and `n` arrays, the innermost empty.
        let member = |n: usize| format!(r#"{{"a":{{"b":{}}}}}"#, "[".repeat(n) + &"]".repeat(n));
        for (n, deeper) in [(126, false), (127, true)] {
            let text = member(n);
            let mut scanner = Scanner::new(&text);
            scanner.object(|_, s| s.object(|_, s| s.value().map(drop))).unwrap();
            assert_eq!(scanner.too_deep(), deeper, "{n}");
        }
        let arrays = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(too_deep(&arrays(128)), Ok(false));
        assert_eq!(too_deep(&arrays(129)), Ok(true));
    }

    /// Text near JSON, `count` pieces: half random runs of JSON tokens, half one of `valid`
    /// with one to three characters removed, inserted or swapped. The same every run.
    pub(crate) fn random_texts(valid: &[&str], count: usize) -> Vec<String> {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet: &[&str] = &[
            "{", "}", "[", "]", ",", ":", " ", "\"", "\\", "a", "é", "0", "1", "-", ".", "e", "+", "true", "false",
            "null", "\"k\"", "\\u00e9", "\\n", "\t", "\u{1}", "12", "\"s\"",
        ];
        let mut pick = move |n: usize| (next() % n as u64) as usize;
        (0..count)
            .map(|round| {
                if round % 2 == 0 {
                    return (0..pick(24)).map(|_| alphabet[pick(alphabet.len())]).collect();
                }
                let mut chars: Vec<char> = valid[pick(valid.len())].chars().collect();
                for _ in 0..=pick(3) {
                    let at = pick(chars.len());
                    match pick(3) {
                        0 => drop(chars.remove(at)),
                        1 => chars.insert(at, alphabet[pick(alphabet.len())].chars().next().unwrap()),
                        _ => {
                            let other = pick(chars.len());
                            chars.swap(at, other)
                        }
                    }
                }
                chars.into_iter().collect()
            })
            .collect()
    }

    /// Random JSON-like text, and mutations of valid JSON: the scanner must accept exactly
    /// what serde_json accepts.
    #[test]
    fn agrees_with_serde_json_on_random_text() {
        let valid = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}"#,
            r#"[{"a":[1,2.5e-3,-0,{"b":"\u00e9\n"}]},null,true]"#,
        ];
        let mut previous = String::new();
        for text in random_texts(&valid, 20_000) {
            assert_eq!(is_json(&text), serde_accepts(&text), "{text:?}");
            assert_eq!(decode(&text).ok(), serde_json::from_str::<Value>(&text).ok(), "{text:?}");
            // Decoding over the previous text's value gives the same as decoding afresh.
            let mut slot = decode(&previous).unwrap_or(Value::Null);
            let reused = decode_into(&text, &mut slot).ok().map(|()| slot);
            assert_eq!(reused, decode(&text).ok(), "{previous:?} then {text:?}");
            previous = text;
        }
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

    #[test]
    fn reports_members_with_their_exact_text() {
        let mut seen = Vec::new();
        let text = r#" { "id" : 7 , "n\u0061me":"x" ,"p":{"q":[1, 2]} } "#;
        let mut scanner = Scanner::new(text);
        scanner
            .object(|key, s| {
                seen.push((key.unwrap().into_owned(), s.value()?));
                Ok(())
            })
            .unwrap();
        scanner.end().unwrap();
        assert_eq!(
            seen,
            [("id".to_string(), "7"), ("name".to_string(), "\"x\""), ("p".to_string(), r#"{"q":[1, 2]}"#)]
        );
    }
}
