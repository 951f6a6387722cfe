//! A strict JSON scanner for what every message needs: the members of one object, each as the
//! raw JSON text of its value. It validates everything it passes over (RFC 8259 grammar, at
//! any depth, no recursion) and builds nothing, so finding `id`, `method` and the `params`
//! members costs one pass over the line. Valid JSON the server will not take (nesting deeper
//! than 128) is still scanned to its end and only noted, so the message's `id` can be read and
//! the error sent to it. Values that are used are decoded later (`value.rs`, serde_json).

use std::borrow::Cow;

use crate::wire::json_string::plain_len;

/// The most a message may make the server allocate to decode its values, besides their text
/// ([`Scanner::weight`]; a message past it is refused). Small values cost many times their
/// text (a one-member object 100 times, nested arrays 90), so a message at the line limit
/// could take gigabytes, if only while it is served; no message under 2 MiB comes near this.
pub const MAX_DECODED_BYTES: usize = 256 << 20;

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
    /// About the most that decoding the values scanned so far would allocate (see
    /// [`Scanner::weight`]).
    weight: usize,
}

// What decoding into `serde_json::Value`s allocates, at most, besides the text itself (the
// figures of a 64-bit build with glibc's allocator; each is rounded up).
/// An element of an array: a 32-byte `Value` in a buffer grown by doubling, so up to twice that.
pub(crate) const ELEMENT: usize = 64;
/// An array with elements: its buffer's first allocation (four `Value`s) and the allocator's
/// header.
pub(crate) const ARRAY: usize = 144;
/// An object with members: its first `BTreeMap` node (eleven keys and values, and links).
pub(crate) const NODE: usize = 608;
/// A member of an object: its share of the nodes (half full at worst, past the first) and its
/// key's allocation.
pub(crate) const MEMBER: usize = 152;
/// A string's allocation, besides its text.
pub(crate) const STRING: usize = 24;

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, bytes: text.as_bytes(), pos: 0, nested: 0, too_deep: false, weight: 0 }
    }

    /// About the most that decoding the containers scanned so far into `serde_json::Value`s
    /// would allocate besides their text: array buffers, map nodes, a value for each element, a
    /// share of a node and a key for each member, an allocation for each string. Small values
    /// make it many times the text (`{"":0}` is 7 bytes that take about 670, `[[]]` 4 that take
    /// about 180), which is why a message is refused past a bound of it.
    pub fn weight(&self) -> usize {
        self.weight
    }

    /// Whether the text scanned so far nests deeper than [`MAX_DEPTH`] (as serde_json counts,
    /// from the start of the text): valid JSON, but more than the server takes.
    pub fn too_deep(&self) -> bool {
        self.too_deep
    }

    /// How many bytes of the text are behind the position.
    pub(super) fn offset(&self) -> usize {
        self.pos
    }

    /// The text from byte `start` to the position.
    #[inline]
    pub(super) fn since(&self, start: usize) -> &'a str {
        &self.text[start..self.pos]
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
    pub(super) fn skip_ws(&mut self) {
        // Compact JSON has no whitespace: one comparison settles the common case.
        if self.bytes.get(self.pos).is_some_and(|&b| b > b' ') {
            return;
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    pub(super) fn expect(&mut self, byte: u8) -> Result<(), Syntax> {
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
    pub(super) fn items(
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
    fn rest(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Scanner<'a>) -> Result<(), Syntax>,
    ) -> Result<(), Syntax> {
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
    pub(super) fn key(&mut self) -> Result<Cow<'a, str>, Syntax> {
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
            if depth > 0 && objects & 1 == 0 {
                self.weight += ELEMENT;
            }
            match self.bytes.get(self.pos) {
                Some(&open @ (b'{' | b'[')) => {
                    self.pos += 1;
                    self.too_deep |= depth + self.nested >= MAX_DEPTH;
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        self.weight += if open == b'{' { NODE + MEMBER } else { ARRAY };
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
                    self.weight += STRING;
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
                            self.weight += MEMBER;
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
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1
                        }
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

/// Whether `text` is one JSON value and nothing else.
pub fn is_json(text: &str) -> bool {
    let mut scanner = Scanner::new(text);
    scanner.value().and_then(|_| scanner.end()).is_ok()
}

/// The text of the value at JSON Pointer `pointer` in the JSON `text`, as written (of a
/// member named twice, the last, as a `serde_json::Value` keeps it): where a `Value` holds a
/// number as an `f64`, what the number was.
pub fn raw_at<'t>(text: &'t str, pointer: &str) -> Option<&'t str> {
    let mut raw = Scanner::new(text).value().ok()?;
    for token in pointer.split('/').skip(1) {
        let key = token.replace("~1", "/").replace("~0", "~");
        let parts = raw_parts(raw)?;
        raw = match raw.starts_with('[') {
            true => parts.get(key.parse::<usize>().ok()?)?.1,
            false => parts.iter().rev().find(|(name, _)| name.as_deref() == Some(&*key))?.1,
        };
    }
    Some(raw)
}

/// A part of a JSON array or object as written: its name (a member's), its text.
pub type RawPart<'t> = (Option<Cow<'t, str>>, &'t str);

/// The parts of `raw`, one JSON array or object as written (no space around it): each item,
/// or each member with its name (both of a member named twice, in order; a name that is no
/// `str` is `None`), in one pass. `None` for any other value.
pub fn raw_parts(raw: &str) -> Option<Vec<RawPart<'_>>> {
    let mut scanner = Scanner::new(raw);
    let mut parts = Vec::new();
    match scanner.peek()? {
        b'[' => scanner.array(|item| parts.push((None, item))).ok()?,
        b'{' => scanner
            .object(|name, scanner| {
                parts.push((name, scanner.value()?));
                Ok(())
            })
            .ok()?,
        _ => return None,
    }
    Some(parts)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    }

    #[test]
    fn finds_a_value_as_written_at_a_pointer() {
        let text = r#" {"a": [1, {"b~/c": 1e400, "b~/c": 100000000000000000001}], "d": -0.10} "#;
        assert_eq!(raw_at(text, "/a/1/b~0~1c"), Some("100000000000000000001"));
        assert_eq!(raw_at(text, "/d"), Some("-0.10"));
        assert_eq!(raw_at(text, "/a/0"), Some("1"));
        assert_eq!(raw_at(text, "").map(str::len), Some(text.trim().len()));
        assert_eq!(raw_at(text, "/a/2"), None);
        assert_eq!(raw_at(text, "/e"), None);
        assert_eq!(raw_at(text, "/d/0"), None);
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
            "{", "}", "[", "]", ",", ":", " ", "\"", "\\", "a", "é", "0", "1", "-", ".", "e", "+",
            "true", "false", "null", "\"k\"", "\\u00e9", "\\n", "\t", "\u{1}", "12", "\"s\"",
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
                        1 => {
                            chars.insert(at, alphabet[pick(alphabet.len())].chars().next().unwrap())
                        }
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
        for text in random_texts(&VALID, 20_000) {
            assert_eq!(is_json(&text), serde_accepts(&text), "{text:?}");
        }
    }

    /// Valid texts the random ones are mutated from.
    pub(crate) const VALID: [&str; 2] = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}"#,
        r#"[{"a":[1,2.5e-3,-0,{"b":"\u00e9\n"}]},null,true]"#,
    ];

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
            [
                ("id".to_string(), "7"),
                ("name".to_string(), "\"x\""),
                ("p".to_string(), r#"{"q":[1, 2]}"#)
            ]
        );
    }
}
