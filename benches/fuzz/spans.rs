//! Where a line's members, values and strings are, and the byte edits the mutations and the
//! targets make with them (splice, find, the line's newline).

use super::json::{self, LENIENT};

/// The structure of a line, for mutations that need to know where members are.
pub struct Spans {
    /// (start, end) of each object member (`"key":value`), with the key's decoded text.
    pub members: Vec<(usize, usize, String)>,
    /// (start, end) of each value.
    pub values: Vec<(usize, usize)>,
    /// (start, end) of each string value.
    pub strings: Vec<(usize, usize)>,
}

/// The members, values and strings of a line that parses (leniently), or `None`.
pub fn spans(line: &[u8]) -> Option<Spans> {
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

/// `line` with `start..end` replaced by `with`.
pub fn splice(line: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    [&line[..start], with, &line[end..]].concat()
}

/// The message part of a line (without its `\n`) and whether it had one.
pub fn body(line: &[u8]) -> (&[u8], bool) {
    match line.strip_suffix(b"\n") {
        Some(body) => (body, true),
        None => (line, false),
    }
}

/// A message part back into a line, with its `\n` when `newline`.
pub fn with_newline(mut body: Vec<u8>, newline: bool) -> Vec<u8> {
    if newline {
        body.push(b'\n');
    }
    body
}

/// Where `needle` first occurs in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
