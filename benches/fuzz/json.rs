//! The fuzzer's own JSON reader, independent of the server's scanner so the two can be
//! compared: the grammar of RFC 8259 with no depth limit (iterative, so any nesting is read
//! without recursion), lone surrogate escapes accepted as the grammar allows, every member of
//! an object kept in order (duplicates included) with the raw text of its value, and an
//! optional lenient mode (`NaN`, `Infinity`, `-Infinity`, as Python's `json` reads them) for
//! the proxy's differential readings.

/// How much the reader accepts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Opts {
    /// Also read `NaN`, `Infinity` and `-Infinity` as numbers.
    pub lenient: bool,
}

pub const STRICT: Opts = Opts { lenient: false };
pub const LENIENT: Opts = Opts { lenient: true };

/// A string's decoded text; a lone surrogate becomes U+FFFD and is noted.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub text: String,
    pub lone_surrogate: bool,
}

fn ws(s: &[u8], i: &mut usize) {
    while matches!(s.get(*i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        *i += 1;
    }
}

fn hex4(s: &[u8], i: usize) -> Option<u32> {
    let digits = s.get(i..i + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

/// Reads the string starting at `s[i] == '"'`; returns where it ends and its decoded text.
/// Bytes that are not UTF-8 are decoded lossily (the caller decides whether they are allowed).
pub fn string(s: &[u8], i: usize) -> Result<(usize, Decoded), ()> {
    if s.get(i) != Some(&b'"') {
        return Err(());
    }
    let mut raw = Vec::new();
    let mut lone = false;
    let mut j = i + 1;
    loop {
        match *s.get(j).ok_or(())? {
            b'"' => break,
            b'\\' => {
                let escaped = *s.get(j + 1).ok_or(())?;
                j += 2;
                let c = match escaped {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let unit = hex4(s, j).ok_or(())?;
                        j += 4;
                        if (0xD800..0xDC00).contains(&unit) {
                            let low = (s.get(j) == Some(&b'\\') && s.get(j + 1) == Some(&b'u'))
                                .then(|| hex4(s, j + 2))
                                .flatten()
                                .filter(|low| (0xDC00..0xE000).contains(low));
                            match low {
                                Some(low) => {
                                    j += 6;
                                    char::from_u32(
                                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                                    )
                                    .ok_or(())?
                                }
                                None => {
                                    lone = true;
                                    '\u{FFFD}'
                                }
                            }
                        } else if (0xDC00..0xE000).contains(&unit) {
                            lone = true;
                            '\u{FFFD}'
                        } else {
                            char::from_u32(unit).ok_or(())?
                        }
                    }
                    _ => return Err(()),
                };
                let mut buf = [0; 4];
                raw.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            b if b < 0x20 => return Err(()),
            b => {
                raw.push(b);
                j += 1;
            }
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    Ok((j + 1, Decoded { text, lone_surrogate: lone }))
}

fn number(s: &[u8], mut i: usize, opts: Opts) -> Result<usize, ()> {
    if opts.lenient {
        for word in [&b"NaN"[..], b"Infinity", b"-Infinity"] {
            if s[i..].starts_with(word) {
                return Ok(i + word.len());
            }
        }
    }
    if s.get(i) == Some(&b'-') {
        i += 1;
    }
    match s.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return Err(()),
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !s.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(());
        }
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !s.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(());
        }
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    Ok(i)
}

/// A scalar at `s[i]` (not an object or array): where it ends.
fn scalar(s: &[u8], i: usize, opts: Opts) -> Result<usize, ()> {
    match s.get(i) {
        Some(b'"') => string(s, i).map(|(end, _)| end),
        Some(b't') if s[i..].starts_with(b"true") => Ok(i + 4),
        Some(b'f') if s[i..].starts_with(b"false") => Ok(i + 5),
        Some(b'n') if s[i..].starts_with(b"null") => Ok(i + 4),
        Some(_) => number(s, i, opts),
        None => Err(()),
    }
}

/// Skips one value starting at `i` (after whitespace); returns where it ends and the deepest
/// nesting inside it (`1` for `[]`). Iterative: any depth is read without recursion.
pub fn skip(s: &[u8], mut i: usize, opts: Opts) -> Result<(usize, usize), ()> {
    let mut stack: Vec<u8> = Vec::new();
    let mut deepest = 0;
    loop {
        ws(s, &mut i);
        match s.get(i) {
            Some(&open @ (b'{' | b'[')) => {
                i += 1;
                deepest = deepest.max(stack.len() + 1);
                ws(s, &mut i);
                let close = if open == b'{' { b'}' } else { b']' };
                if s.get(i) == Some(&close) {
                    i += 1;
                } else {
                    stack.push(open);
                    if open == b'{' {
                        i = key(s, i)?;
                    }
                    continue;
                }
            }
            _ => i = scalar(s, i, opts)?,
        }
        // A value ended: close what it completes, or go on to the next member or item.
        loop {
            let Some(&top) = stack.last() else { return Ok((i, deepest)) };
            ws(s, &mut i);
            match (s.get(i), top) {
                (Some(b','), _) => {
                    i += 1;
                    if top == b'{' {
                        ws(s, &mut i);
                        i = key(s, i)?;
                    }
                    break;
                }
                (Some(b'}'), b'{') | (Some(b']'), b'[') => {
                    i += 1;
                    stack.pop();
                }
                _ => return Err(()),
            }
        }
    }
}

/// A member name and its colon; returns where the value starts.
fn key(s: &[u8], i: usize) -> Result<usize, ()> {
    let (mut j, _) = string(s, i)?;
    ws(s, &mut j);
    if s.get(j) != Some(&b':') {
        return Err(());
    }
    Ok(j + 1)
}

/// The whole text is one JSON value (with whitespace around it): its deepest nesting.
pub fn whole(s: &[u8], opts: Opts) -> Result<usize, ()> {
    let (mut end, depth) = skip(s, 0, opts)?;
    ws(s, &mut end);
    if end == s.len() { Ok(depth) } else { Err(()) }
}

/// A value read to a bounded depth: containers below it are kept as raw text.
#[derive(Clone, Debug)]
pub enum Node<'a> {
    Object(Vec<(Decoded, Node<'a>)>),
    Array(Vec<Node<'a>>),
    String(Decoded),
    /// A number, literal, or a container deeper than the reading went.
    Other(&'a [u8]),
}

impl Node<'_> {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(d) => Some(&d.text),
            _ => None,
        }
    }
}

/// Reads the value at `i` (after whitespace) into a tree `depth` levels deep; returns the
/// tree, its raw text and where it ends.
pub fn tree(
    s: &[u8],
    mut i: usize,
    depth: usize,
    opts: Opts,
) -> Result<(Node<'_>, &[u8], usize), ()> {
    ws(s, &mut i);
    let start = i;
    if depth == 0 || !matches!(s.get(i), Some(b'{' | b'[')) {
        if s.get(i) == Some(&b'"') {
            let (end, d) = string(s, i)?;
            return Ok((Node::String(d), &s[start..end], end));
        }
        let (end, _) = skip(s, i, opts)?;
        return Ok((Node::Other(&s[start..end]), &s[start..end], end));
    }
    let object = s[i] == b'{';
    i += 1;
    ws(s, &mut i);
    let close = if object { b'}' } else { b']' };
    let (mut members, mut items) = (Vec::new(), Vec::new());
    if s.get(i) == Some(&close) {
        i += 1;
    } else {
        loop {
            ws(s, &mut i);
            let name = if object {
                let (j, name) = string(s, i)?;
                i = j;
                ws(s, &mut i);
                if s.get(i) != Some(&b':') {
                    return Err(());
                }
                i += 1;
                Some(name)
            } else {
                None
            };
            let (node, _, end) = tree(s, i, depth - 1, opts)?;
            i = end;
            match name {
                Some(name) => members.push((name, node)),
                None => items.push(node),
            }
            ws(s, &mut i);
            match s.get(i) {
                Some(b',') => i += 1,
                Some(&c) if c == close => {
                    i += 1;
                    break;
                }
                _ => return Err(()),
            }
        }
    }
    let node = if object { Node::Object(members) } else { Node::Array(items) };
    Ok((node, &s[start..i], i))
}

/// A whole text read as a tree: `None` unless it is exactly one value.
pub fn parse(s: &[u8], depth: usize, opts: Opts) -> Option<Node<'_>> {
    let (node, _, mut end) = tree(s, 0, depth, opts).ok()?;
    ws(s, &mut end);
    (end == s.len()).then_some(node)
}

/// The top-level members of an object text, each with the raw text of its value.
pub fn members(s: &[u8], opts: Opts) -> Option<Vec<(Decoded, &[u8])>> {
    let mut i = 0;
    ws(s, &mut i);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut out = Vec::new();
    ws(s, &mut i);
    if s.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        ws(s, &mut i);
        let (j, name) = string(s, i).ok()?;
        i = j;
        ws(s, &mut i);
        if s.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        ws(s, &mut i);
        let start = i;
        let (end, _) = skip(s, i, opts).ok()?;
        out.push((name, &s[start..end]));
        i = end;
        ws(s, &mut i);
        match s.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

/// The raw text of each item of an array text.
pub fn items(s: &[u8], opts: Opts) -> Option<Vec<&[u8]>> {
    let mut i = 0;
    ws(s, &mut i);
    if s.get(i) != Some(&b'[') {
        return None;
    }
    i += 1;
    let mut out = Vec::new();
    ws(s, &mut i);
    if s.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        ws(s, &mut i);
        let start = i;
        let (end, _) = skip(s, i, opts).ok()?;
        out.push(&s[start..end]);
        i = end;
        ws(s, &mut i);
        match s.get(i) {
            Some(b',') => i += 1,
            Some(b']') => return Some(out),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        for good in
            ["1", "-0", "1.5e+3", "\"a\\ud800\"", "[[],{}]", "{\"a\":{\"b\":[1,2,null]}}", " true "]
        {
            assert!(whole(good.as_bytes(), STRICT).is_ok(), "{good}");
        }
        for bad in ["01", "1.", "[1,]", "{\"a\" 1}", "\"\u{1}\"", "NaN", "[", "{}x", "\"\\x\""] {
            assert!(whole(bad.as_bytes(), STRICT).is_err(), "{bad}");
        }
        assert!(whole(b"[NaN,-Infinity]", LENIENT).is_ok());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(whole(deep.as_bytes(), STRICT), Ok(100_000));
        let m = members(br#"{"id":1,"\u0069d":"x","k":[1,{"a":2}]}"#, STRICT).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].0.text, "id");
        assert_eq!(m[2].1, br#"[1,{"a":2}]"#);
        assert!(string(br#""\udc00""#, 0).unwrap().1.lone_surrogate);
        assert_eq!(string(br#""\ud83d\ude00""#, 0).unwrap().1.text, "\u{1F600}");
    }
}
