//! The small rules of HTTP's grammar (RFC 9110, RFC 9112) the request reader reads by:
//! the version, absolute-form targets, a field value's whitespace, a list's elements, numbers,
//! and chunk-size lines (token characters: `util/token.rs`).

pub(super) use crate::util::token::{is_token, token_lowered};

/// `value` without the spaces and tabs around it (RFC 9110 §5.5: a field value's optional
/// whitespace).
pub(super) fn trim_whitespace(value: &[u8]) -> &[u8] {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = value.iter().position(|b| !blank(b)).unwrap_or(value.len());
    let end = value.iter().rposition(|b| !blank(b)).map_or(start, |last| last + 1);
    &value[start..end]
}

/// The parts of `text` between `separator`s (an ASCII byte), as `str::split` gives them
/// without the `memchr` it sets up for each: header values are short.
pub(super) fn parts(text: &str, separator: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let now = rest?;
        let at = now.bytes().position(|b| b == separator);
        rest = at.map(|at| &now[at + 1..]);
        Some(at.map_or(now, |at| &now[..at]))
    })
}

/// The major and minor version of an `HTTP-version` (RFC 9112 §2.3: `HTTP/` DIGIT `.` DIGIT).
pub(super) fn http_version(version: &str) -> Option<(u8, u8)> {
    match *version.as_bytes() {
        [b'H', b'T', b'T', b'P', b'/', major @ b'0'..=b'9', b'.', minor @ b'0'..=b'9'] => {
            Some((major - b'0', minor - b'0'))
        }
        _ => None,
    }
}

/// An absolute-form target (`http://authority/path?query`, or `https`), split into its
/// authority and the rest as an origin-form target (`/` when it has no path); `None` for any
/// other form. The authority must be a host and port, without user information.
pub(super) fn absolute_form(target: &str) -> Result<Option<(&str, &str)>, &'static str> {
    let scheme = ["http://", "https://"].into_iter().find(|scheme| {
        target.get(..scheme.len()).is_some_and(|start| start.eq_ignore_ascii_case(scheme))
    });
    let Some(scheme) = scheme else { return Ok(None) };
    let after = &target[scheme.len()..];
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let authority = &after[..end];
    let fit = |b: u8| b > b' ' && b != 0x7f && b != b'@';
    if authority.is_empty() || !authority.bytes().all(fit) {
        return Err("malformed absolute-form target");
    }
    let rest = &after[end..];
    Ok(Some((authority, if rest.starts_with('/') { rest } else { "/" })))
}

/// `1*DIGIT` in `radix`, leading zeros and all. A number too large for a `usize` is
/// `usize::MAX`: it is over any body limit all the same, so it is refused as too large.
pub(super) fn number(digits: &[u8], radix: u32) -> Option<usize> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0usize, |n, &b| {
        let digit = char::from(b).to_digit(radix)?;
        Some(n.saturating_mul(radix as usize).saturating_add(digit as usize))
    })
}

/// A chunk-size line, exactly as RFC 9112 §7.1 has it: `1*HEXDIG`, then extensions
/// `*( BWS ";" BWS name [ BWS "=" BWS value ] )`, which are checked and ignored. Anything
/// looser (a sign, other whitespace) lets a proxy in front see other chunks than we do.
pub(super) fn chunk_size(line: &[u8]) -> Option<usize> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let size = number(&line[..digits], 16)?;
    let mut rest = &line[digits..];
    while !rest.is_empty() {
        rest = after_token(bws(bws(rest).strip_prefix(b";")?))?;
        if let Some(value) = bws(rest).strip_prefix(b"=") {
            let value = bws(value);
            rest = after_token(value).or_else(|| after_quoted(value))?;
        }
    }
    Some(size)
}

/// `s` after its optional whitespace (BWS: spaces and tabs).
fn bws(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    &s[n..]
}

/// `s` after the token it starts with; `None` when it starts with none.
fn after_token(s: &[u8]) -> Option<&[u8]> {
    let n = s.iter().take_while(|&&b| is_token(b)).count();
    (n > 0).then_some(&s[n..])
}

/// `s` after the quoted-string it starts with (RFC 9110 §5.6.4); `None` when it starts with
/// none, or one never closed.
fn after_quoted(s: &[u8]) -> Option<&[u8]> {
    let text = |b: &u8| *b == b'\t' || (b' '..=b'~').contains(b) || *b >= 0x80;
    let mut rest = s.strip_prefix(b"\"")?;
    loop {
        match rest {
            [b'"', after @ ..] => return Some(after),
            [b'\\', b, after @ ..] if text(b) => rest = after,
            [b, after @ ..] if *b != b'\\' && text(b) => rest = after,
            _ => return None,
        }
    }
}
