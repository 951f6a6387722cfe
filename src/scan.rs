//! A strict JSON scanner for what every message needs: the members of one object, each as the
//! raw JSON text of its value. It validates everything it passes over (RFC 8259 grammar,
//! nesting at most 128 deep, no recursion) and builds nothing, so finding `id`, `method` and
//! the `params` members costs one pass over the line. Values that are used are decoded later
//! with serde_json.

use std::borrow::Cow;

/// The text is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax;

/// Nesting deeper than this is refused, as serde_json does.
const MAX_DEPTH: u32 = 128;

pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    pub fn new(text: &'a str) -> Scanner<'a> {
        Scanner { text, bytes: text.as_bytes(), pos: 0 }
    }

    /// The first non-whitespace byte, without consuming it.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// Succeeds when only whitespace is left.
    pub fn end(&mut self) -> Result<(), Syntax> {
        if self.peek().is_none() { Ok(()) } else { Err(Syntax) }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

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
    /// Keys with escapes are decoded.
    pub fn object(
        &mut self,
        mut member: impl FnMut(Cow<'a, str>, &mut Scanner<'a>) -> Result<(), Syntax>,
    ) -> Result<(), Syntax> {
        self.expect(b'{')?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let key = self.key()?;
            self.expect(b':')?;
            member(key, self)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Syntax),
            }
        }
    }

    /// Calls `element(raw_value)` for each element of the array that starts here.
    pub fn array(&mut self, mut element: impl FnMut(&'a str)) -> Result<(), Syntax> {
        self.expect(b'[')?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            element(self.value()?);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(Syntax),
            }
        }
    }

    fn key(&mut self) -> Result<Cow<'a, str>, Syntax> {
        if self.peek() != Some(b'"') {
            return Err(Syntax);
        }
        let start = self.pos;
        let escaped = self.string()?;
        let raw = &self.text[start..self.pos];
        if escaped {
            serde_json::from_str(raw).map(Cow::Owned).map_err(|_| Syntax)
        } else {
            Ok(Cow::Borrowed(&raw[1..raw.len() - 1]))
        }
    }

    /// Skips one value, however nested, and returns its text.
    pub fn value(&mut self) -> Result<&'a str, Syntax> {
        self.skip_ws();
        let start = self.pos;
        // One bit per open container, set for an object: an explicit stack instead of
        // recursion, so no input can exhaust the call stack.
        let (mut objects, mut depth) = (0u128, 0u32);
        loop {
            // A value starts here.
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b'{' | b'[') if depth == MAX_DEPTH => return Err(Syntax),
                Some(&open @ (b'{' | b'[')) => {
                    self.pos += 1;
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        objects = (objects << 1) | u128::from(open == b'{');
                        depth += 1;
                        if open == b'{' {
                            self.key()?;
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
                            self.key()?;
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
    fn string(&mut self) -> Result<bool, Syntax> {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = 0x8080_8080_8080_8080;
        let zero_at = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
        self.pos += 1;
        let mut escaped = false;
        loop {
            while let Some(chunk) = self.bytes.get(self.pos..self.pos + 8) {
                let word = u64::from_le_bytes([
                    chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
                ]);
                // Flags `"`, `\` and bytes below 0x20. The lowest flag is always exact.
                let special = zero_at(word ^ (ONES * u64::from(b'"')))
                    | zero_at(word ^ (ONES * u64::from(b'\\')))
                    | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
                if special != 0 {
                    self.pos += special.trailing_zeros() as usize / 8;
                    break;
                }
                self.pos += 8;
            }
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

/// Whether `text` is one JSON value and nothing else.
pub fn is_json(text: &str) -> bool {
    let mut scanner = Scanner::new(text);
    scanner.value().and_then(|_| scanner.end()).is_ok()
}

#[cfg(test)]
mod tests {
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
        ];
        for case in cases {
            assert_eq!(is_json(case), serde_accepts(case), "{case:?}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(is_json(&deep(128)) && !is_json(&deep(129)));
        assert!(!is_json(&"[".repeat(100_000)));
    }

    /// Random JSON-like text, and mutations of valid JSON: the scanner must accept exactly
    /// what serde_json accepts.
    #[test]
    fn agrees_with_serde_json_on_random_text() {
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
        let valid = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}"#,
            r#"[{"a":[1,2.5e-3,-0,{"b":"\u00e9\n"}]},null,true]"#,
        ];
        for round in 0..20_000 {
            let text = if round % 2 == 0 {
                (0..(next() % 24)).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect::<String>()
            } else {
                let base = valid[(next() % 2) as usize];
                let mut chars: Vec<char> = base.chars().collect();
                for _ in 0..=(next() % 3) {
                    let at = (next() % chars.len() as u64) as usize;
                    match next() % 3 {
                        0 => {
                            chars.remove(at);
                        }
                        1 => chars
                            .insert(at, alphabet[(next() % alphabet.len() as u64) as usize].chars().next().unwrap()),
                        _ => {
                            let other = (next() % chars.len() as u64) as usize;
                            chars.swap(at, other)
                        }
                    }
                }
                chars.into_iter().collect()
            };
            assert_eq!(is_json(&text), serde_accepts(&text), "{text:?}");
        }
    }

    #[test]
    fn reports_members_with_their_exact_text() {
        let mut seen = Vec::new();
        let text = r#" { "id" : 7 , "n\u0061me":"x" ,"p":{"q":[1, 2]} } "#;
        let mut scanner = Scanner::new(text);
        scanner
            .object(|key, s| {
                seen.push((key.into_owned(), s.value()?));
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
