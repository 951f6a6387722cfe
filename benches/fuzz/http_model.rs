//! The HTTP fuzzer's model of the request reader: what docs/http.md and RFC 9112 say
//! the bytes of one connection are — which requests, where each ends, and with which statuses
//! each may be refused — written apart from the server's parser so that the two are compared.
//!
//! Where docs/http.md leaves a choice open (a byte RFC 9110 lets a server refuse or accept, a
//! size within a line ending of a bound), the model says both: the request as read, and the
//! refusals it may get instead.

use super::http_host::{absolute_form, valid_host};

/// The request head, request line and fields (docs/errors-and-bounds.md, HTTP bounds).
pub const MAX_HEAD: usize = 16 * 1024;
pub const MAX_FIELDS: usize = 64;
/// A chunk-size line, its line end included (the server's own bound; past it, 400).
const MAX_CHUNK_LINE: usize = 1024;

/// One request read whole.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub method: String,
    /// The target's path, without query or fragment.
    pub path: String,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    /// Lowercase names; values read lossily, trimmed of spaces and tabs.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Where its bytes start and end in the connection's stream.
    pub start: usize,
    pub end: usize,
}

impl Request {
    /// The first value of field `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The lines of list field `name` joined with commas (RFC 9110 §5.3).
    pub fn list(&self, name: &str) -> Option<String> {
        let values: Vec<&str> =
            self.headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect();
        (!values.is_empty()).then(|| values.join(", "))
    }

    pub fn count(&self, name: &str) -> usize {
        self.headers.iter().filter(|(n, _)| n == name).count()
    }

    /// Whether the client asked to close after it (RFC 9112 §9.3).
    pub fn wants_close(&self) -> bool {
        let connection = self.list("connection").unwrap_or_default().to_ascii_lowercase();
        let has = |word: &str| connection.split(',').any(|t| t.trim() == word);
        has("close") || (self.minor == 0 && !has("keep-alive"))
    }
}

/// What one stretch of a connection's bytes is.
#[derive(Clone, Debug, PartialEq)]
pub enum Framed {
    /// A request read whole; the server may still refuse it with one of `refusals` (and
    /// close) where the rules leave a choice.
    Whole { request: Request, refusals: Vec<u16> },
    /// Malformed or too large: one of `statuses`, then the connection closes. When the
    /// fault is in the body, the server may refuse on what the head says first (`head`).
    /// `head_method`: the refused request's request line was read (text of three parts) and
    /// its method is `HEAD`, so the refusal has no body (RFC 9110 §9.3.2).
    Refused { statuses: Vec<u16>, why: String, head: Option<Request>, head_method: bool },
    /// The bytes end before the request does. The server waits (then `408`), or may have
    /// refused it already with one of `refusals`, or on what its head says (`head`, when the
    /// head is whole). `head_method` as for `Refused`.
    Cut { refusals: Vec<u16>, head: Option<Request>, head_method: bool },
}

impl Framed {
    /// Whether the response to this item has no body: it answers a `HEAD`.
    pub fn answers_head(&self) -> bool {
        match self {
            Framed::Whole { request, .. } => request.method == "HEAD",
            Framed::Refused { head: Some(request), .. } => request.method == "HEAD",
            Framed::Cut { head: Some(request), .. } => request.method == "HEAD",
            Framed::Refused { head_method, .. } | Framed::Cut { head_method, .. } => *head_method,
        }
    }
}

/// Why a head is refused, as docs/errors-and-bounds.md lists it, with the statuses that fit.
struct Faults {
    /// Certain: the request is refused.
    sure: Vec<(u16, String)>,
    /// A choice the rules leave open.
    maybe: Vec<u16>,
    /// The request line was read (text of three parts) and says `HEAD`.
    head_method: bool,
}

impl Faults {
    fn sure(&mut self, status: u16, why: impl Into<String>) {
        self.sure.push((status, why.into()));
    }

    fn refused(&self) -> Framed {
        let mut statuses: Vec<u16> = self.sure.iter().map(|(s, _)| *s).collect();
        statuses.extend(&self.maybe);
        statuses.sort_unstable();
        statuses.dedup();
        let why = self.sure.iter().map(|(_, w)| w.as_str()).collect::<Vec<_>>().join("; ");
        Framed::Refused { statuses, why, head: None, head_method: self.head_method }
    }

    fn maybe_list(&self) -> Vec<u16> {
        let mut maybe = self.maybe.clone();
        maybe.sort_unstable();
        maybe.dedup();
        maybe
    }
}

/// Every request in `bytes`, in order, up to the first that is refused or cut off.
pub fn frame_all(bytes: &[u8], max_body: usize) -> Vec<Framed> {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        // Empty lines between requests are skipped (RFC 9112 §2.2); at the end they are
        // nothing.
        let mut skip = at;
        loop {
            if bytes[skip..].starts_with(b"\r\n") {
                skip += 2;
            } else if bytes[skip..].starts_with(b"\n") {
                skip += 1;
            } else {
                break;
            }
        }
        if skip >= bytes.len() {
            return out;
        }
        let framed = frame_one(bytes, at, max_body);
        let next = match &framed {
            Framed::Whole { request, .. } => Some(request.end),
            _ => None,
        };
        out.push(framed);
        match next {
            Some(end) => at = end,
            None => return out,
        }
    }
}

/// The line starting at `at`: its text (without `\n` and one `\r` before it) and where the
/// next starts; `None` when no `\n` comes.
fn line_at(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let len = bytes[at..].iter().position(|&b| b == b'\n')?;
    let text = &bytes[at..at + len];
    Some((text.strip_suffix(b"\r").unwrap_or(text), at + len + 1))
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Reads the request starting at `start`.
fn frame_one(bytes: &[u8], start: usize, max_body: usize) -> Framed {
    let mut faults = Faults { sure: Vec::new(), maybe: Vec::new(), head_method: false };
    let mut at = start;
    let mut lines = 0usize;
    let mut request_line: Option<Vec<u8>> = None;
    let mut fields: Vec<Vec<u8>> = Vec::new();
    loop {
        let Some((text, next)) = line_at(bytes, at) else {
            // A request line cut short says whether it is a HEAD already.
            if request_line.is_none() {
                faults.head_method = bytes[at..].starts_with(b"HEAD ");
            }
            return head_cut_off(faults, bytes.len() - start, lines, request_line.is_none());
        };
        lines += 1;
        let raw = next - start;
        // A request line too long is 414 (RFC 9112 §3); a field line, 431.
        let too_long = if request_line.is_none() { 414 } else { 431 };
        if raw > MAX_HEAD + lines {
            faults.sure(too_long, "request head too large");
            if request_line.is_none() {
                faults.head_method = text.starts_with(b"HEAD ");
            }
            return faults.refused();
        } else if raw > MAX_HEAD {
            faults.maybe.push(too_long);
        }
        at = next;
        match &request_line {
            None if text.is_empty() => continue,
            None => {
                request_line = Some(text.to_vec());
                check_request_line(text, &mut faults);
                // The server knows a HEAD by the line's first bytes, whatever follows.
                faults.head_method = text.starts_with(b"HEAD ");
            }
            Some(_) if text.is_empty() => break,
            Some(_) => {
                if fields.len() == MAX_FIELDS {
                    faults.sure(431, "too many header fields");
                }
                check_field(text, &mut faults);
                if names_one_thing_again(text, &fields) {
                    // Refused as it is read, before the rest of the head.
                    faults.sure(400, "a field that names one thing, twice");
                }
                fields.push(text.to_vec());
            }
        }
        if !faults.sure.is_empty() {
            return faults.refused();
        }
    }
    let request_line = request_line.unwrap_or_default();
    let mut request = head_of(&request_line, &fields, start);
    let kind = body_kind(&request, max_body, &mut faults);
    check_fields(&request, &fields, &mut faults);
    if !faults.sure.is_empty() {
        return faults.refused();
    }
    let end = match kind {
        Kind::None => at,
        Kind::Length(n) if bytes.len() - at >= n => {
            request.body = bytes[at..at + n].to_vec();
            at + n
        }
        Kind::Length(_) => {
            return Framed::Cut {
                refusals: faults.maybe_list(),
                head: Some(request),
                head_method: false,
            };
        }
        Kind::Chunked => match chunked(bytes, at, max_body, &mut request.body) {
            Chunks::End(end, refusals) => {
                faults.maybe.extend(refusals);
                end
            }
            Chunks::Cut(mut refusals) => {
                refusals.extend(faults.maybe_list());
                return Framed::Cut { refusals, head: Some(request), head_method: false };
            }
            Chunks::Bad(statuses, why) => {
                let mut statuses = statuses;
                statuses.extend(faults.maybe_list());
                return Framed::Refused { statuses, why, head: Some(request), head_method: false };
            }
        },
    };
    request.end = end;
    Framed::Whole { request, refusals: faults.maybe_list() }
}

/// A head cut off after `raw` bytes in `lines` lines: refused already when it is too long (414
/// while in its request line), or when a line read so far was refused; else it waits.
fn head_cut_off(mut faults: Faults, raw: usize, lines: usize, request_line: bool) -> Framed {
    let too_long = if request_line { 414 } else { 431 };
    if raw > MAX_HEAD + lines + 2 {
        faults.sure(too_long, "request head too large");
    }
    if !faults.sure.is_empty() {
        return faults.refused();
    }
    let mut refusals = faults.maybe_list();
    if raw > MAX_HEAD {
        refusals.push(too_long);
    }
    Framed::Cut { refusals, head: None, head_method: faults.head_method }
}

/// One `Host` on HTTP/1.1, at most one on 1.0, each valid, as an absolute-form target's
/// authority is (checked once the head is whole).
fn check_fields(request: &Request, fields: &[Vec<u8>], faults: &mut Faults) {
    let text = |line: &Vec<u8>| String::from_utf8_lossy(line).into_owned();
    let sent = fields.iter().map(text).filter_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("host").then(|| value.trim_matches([' ', '\t']).to_string())
    });
    if sent.chain(request.header("host").map(String::from)).any(|host| !valid_host(&host)) {
        faults.sure(400, "invalid host header");
    }
    if request.minor == 1 && request.count("host") == 0 {
        faults.sure(400, "missing host header");
    }
    if request.count("host") > 1 {
        faults.sure(400, "more than one host header");
    }
}

/// Whether field line `text` names one thing (`Origin`, `Authorization`, `Content-Type`,
/// any `Mcp-*`) and an earlier line of `fields` has its name: docs/http.md refuses the second.
fn names_one_thing_again(text: &[u8], fields: &[Vec<u8>]) -> bool {
    let name = |line: &[u8]| {
        let end = line.iter().position(|&b| b == b':').unwrap_or(line.len());
        line[..end].to_ascii_lowercase()
    };
    let this = name(text);
    let single = [&b"origin"[..], b"authorization", b"content-type"];
    (single.contains(&this.as_slice()) || this.starts_with(b"mcp-"))
        && fields.iter().any(|field| name(field) == this)
}

/// `method SP target SP version`, as RFC 9112 §3 has it, the target in origin form.
fn check_request_line(text: &[u8], faults: &mut Faults) {
    if text.starts_with(b"PRI * HTTP/2") {
        faults.sure(505, "http/2");
        faults.maybe.push(400);
        return;
    }
    let parts: Vec<&[u8]> = text.split(|&b| b == b' ').collect();
    let [method, target, version] = parts[..] else {
        faults.sure(400, "malformed request line");
        return;
    };
    if method.is_empty() || !method.iter().all(|&b| is_token(b)) {
        faults.sure(400, "malformed method");
    }
    // The server reads the version first: a bad authority is one fault among others.
    let target = match absolute_form(target) {
        Ok(Some((authority, rest))) => {
            if authority.iter().any(|&b| b >= 0x80) {
                // Not text (refused), or text no host matches (refused later, or not).
                faults.maybe.push(400);
            }
            rest
        }
        Ok(None) => target,
        Err(()) => {
            faults.sure(400, "a malformed absolute-form target");
            b"/"
        }
    };
    if !target.starts_with(b"/") || target.iter().any(|&b| b <= b' ' || b == 0x7f) {
        faults.sure(400, "the target must be a path");
    } else if target.iter().any(|&b| b >= 0x80) {
        // Not an origin-form character (RFC 3986), though a server may take it.
        faults.maybe.push(400);
    }
    // `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3); a later minor version is read as HTTP/1.1
    // (RFC 9110 §2.5).
    match *version {
        [b'H', b'T', b'T', b'P', b'/', b'1', b'.', b'0'..=b'9'] => {}
        [b'H', b'T', b'T', b'P', b'/', b'0'..=b'9', b'.', b'0'..=b'9'] => {
            faults.sure(505, "a version other than 1.0 and 1.1");
            faults.maybe.push(400);
        }
        _ => faults.sure(400, "malformed version"),
    }
}

/// `name: value`: no whitespace before the colon, no obs-fold, no CR or NUL in the value
/// (docs/errors-and-bounds.md, HTTP bounds); other control bytes and bytes past ASCII are the server's choice.
fn check_field(text: &[u8], faults: &mut Faults) {
    if text[0] == b' ' || text[0] == b'\t' {
        faults.sure(400, "folded header line");
        return;
    }
    let Some(colon) = text.iter().position(|&b| b == b':') else {
        faults.sure(400, "header without a colon");
        return;
    };
    let (name, value) = (&text[..colon], &text[colon + 1..]);
    if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
        faults.sure(400, "malformed header name");
    }
    if value.iter().any(|&b| b == b'\r' || b == 0) {
        faults.sure(400, "cr or nul in a header value");
    } else if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b >= 0x7f) {
        faults.maybe.push(400);
    }
}

/// The request as the head says it: method, path, version, fields.
fn head_of(request_line: &[u8], fields: &[Vec<u8>], start: usize) -> Request {
    let text = String::from_utf8_lossy(request_line);
    let mut parts = text.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let mut target = parts.next().unwrap_or("");
    let authority = match absolute_form(target.as_bytes()) {
        Ok(Some((authority, rest))) => {
            target = std::str::from_utf8(rest).unwrap_or("/");
            Some(String::from_utf8_lossy(authority).into_owned())
        }
        _ => None,
    };
    let path = target.split(['?', '#']).next().unwrap_or("").to_string();
    let version = parts.next().unwrap_or("");
    let minor = u8::from(version.starts_with("HTTP/1.") && version != "HTTP/1.0");
    let mut headers: Vec<(String, String)> = fields
        .iter()
        .map(|line| {
            let text = String::from_utf8_lossy(line);
            let (name, value) = text.split_once(':').unwrap_or((&text, ""));
            (name.to_ascii_lowercase(), value.trim_matches([' ', '\t']).to_string())
        })
        .collect();
    // The target's authority names the host in place of `Host` (RFC 9112 §3.2.2); HTTP/1.1
    // still needs the field.
    if let Some(authority) = authority {
        match headers.iter_mut().find(|(name, _)| name == "host") {
            Some((_, value)) => *value = authority,
            None if minor == 0 => headers.push(("host".into(), authority)),
            None => {}
        }
    }
    Request { method, path, minor, headers, body: Vec::new(), start, end: start }
}

enum Kind {
    None,
    Length(usize),
    Chunked,
}

/// How the body is framed (RFC 9112 §6; docs/errors-and-bounds.md, HTTP bounds): `Content-Length` or chunked, never
/// both; chunked only on HTTP/1.1 and only alone.
fn body_kind(request: &Request, max_body: usize, faults: &mut Faults) -> Kind {
    let lengths: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n == "content-length")
        .map(|(_, v)| v.as_str())
        .collect();
    let codings: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n == "transfer-encoding")
        .map(|(_, v)| v.as_str())
        .collect();
    if !codings.is_empty() && !lengths.is_empty() {
        faults.sure(400, "content-length and transfer-encoding together");
        faults.maybe.push(501);
        return Kind::None;
    }
    if !codings.is_empty() {
        let elements: Vec<String> = codings
            .iter()
            .flat_map(|v| v.split(','))
            .map(|e| e.trim_matches([' ', '\t']).to_ascii_lowercase())
            .filter(|e| !e.is_empty())
            .collect();
        // RFC 9112 §6.3: chunked not last (or twice) leaves the body's end unknown, 400; a
        // coding under chunked is one not served, 501 (§6.1).
        let chunks = elements.iter().filter(|e| *e == "chunked").count();
        if request.minor == 0 || elements.last().is_none_or(|e| e != "chunked") || chunks > 1 {
            faults.sure(400, "transfer-encoding on HTTP/1.0, without chunked last, or twice");
            return Kind::None;
        }
        if elements.len() > 1 {
            faults.sure(501, "a transfer coding other than chunked");
            return Kind::None;
        }
        // `, chunked` is one coding: empty list elements are none (RFC 9110 §5.6.1.2).
        return Kind::Chunked;
    }
    let Some(first) = lengths.first() else { return Kind::None };
    let numbers: Vec<Option<usize>> = lengths
        .iter()
        .flat_map(|v| v.split(','))
        .map(|e| e.trim_matches([' ', '\t']))
        .map(|e| {
            (!e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())).then(|| {
                e.bytes()
                    .fold(0usize, |n, b| n.saturating_mul(10).saturating_add((b - b'0') as usize))
            })
        })
        .collect();
    let Some(Some(n)) = numbers.first().copied() else {
        faults.sure(400, "malformed content-length");
        return Kind::None;
    };
    if numbers.iter().any(|m| *m != Some(n)) {
        faults.sure(400, "conflicting or malformed content-length");
        return Kind::None;
    }
    if (numbers.len() > 1 && lengths.iter().any(|l| l != first)) || first.contains(',') {
        // The same length said in two ways: RFC 9110 §8.6 lets a server take it or refuse.
        faults.maybe.push(400);
    }
    if n > max_body {
        faults.sure(413, "body larger than the limit");
        return Kind::None;
    }
    Kind::Length(n)
}

enum Chunks {
    /// The body ended at this offset (after its trailer section); the server may refuse it
    /// with these instead.
    End(usize, Vec<u16>),
    /// Cut off; the server may have refused it already with these.
    Cut(Vec<u16>),
    Bad(Vec<u16>, String),
}

/// A chunked body from `at` (RFC 9112 §7.1): chunks of `1*HEXDIG *(BWS ";" BWS name [BWS "="
/// BWS value])` lines, data, CRLF; a last chunk of size 0; trailer lines up to an empty one.
/// A chunk-size line over 1 KiB and a trailer section over the head's size are the server's
/// own bounds: it may refuse them.
fn chunked(bytes: &[u8], mut at: usize, max_body: usize, body: &mut Vec<u8>) -> Chunks {
    let bad = |why: &str| Chunks::Bad(vec![400], why.to_string());
    let mut maybe = Vec::new();
    loop {
        let Some((line, next)) = line_at(bytes, at) else {
            if bytes.len() - at > MAX_CHUNK_LINE {
                maybe.push(400);
            }
            return Chunks::Cut(maybe);
        };
        if next - at > MAX_CHUNK_LINE {
            maybe.push(400);
        }
        let Some(size) = chunk_size(line) else { return bad("malformed chunk size") };
        at = next;
        if size == 0 {
            break;
        }
        if body.len().saturating_add(size) > max_body {
            return Chunks::Bad(vec![413], "chunked body larger than the limit".into());
        }
        let data_end = at.saturating_add(size);
        if bytes.len() < data_end {
            return Chunks::Cut(maybe);
        }
        body.extend_from_slice(&bytes[at..data_end]);
        let rest = &bytes[data_end..];
        at = if rest.starts_with(b"\r\n") {
            data_end + 2
        } else if rest.starts_with(b"\n") {
            data_end + 1
        } else if rest.is_empty() || rest == b"\r" {
            return Chunks::Cut(maybe);
        } else {
            return bad("chunk data not followed by a line end");
        };
    }
    // The trailer section: lines up to an empty one, read and ignored.
    let trailers = at;
    loop {
        if at - trailers > MAX_HEAD {
            maybe.extend([431, 400]);
        }
        let Some((line, next)) = line_at(bytes, at) else { return Chunks::Cut(maybe) };
        at = next;
        if line.is_empty() {
            return Chunks::End(at, maybe);
        }
    }
}

/// A chunk-size line's size, saturating (too large for a `usize` is over any limit); `None`
/// when it is not `1*HEXDIG` followed by well-formed extensions.
pub fn chunk_size(line: &[u8]) -> Option<usize> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return None;
    }
    let size = line[..digits].iter().fold(0usize, |n, &b| {
        n.saturating_mul(16).saturating_add((b as char).to_digit(16).unwrap_or(0) as usize)
    });
    let mut rest = &line[digits..];
    let bws = |s: &[u8]| -> usize { s.iter().take_while(|&&b| b == b' ' || b == b'\t').count() };
    let token = |s: &[u8]| -> usize { s.iter().take_while(|&&b| is_token(b)).count() };
    while !rest.is_empty() {
        rest = &rest[bws(rest)..];
        rest = rest.strip_prefix(b";")?;
        rest = &rest[bws(rest)..];
        let name = token(rest);
        if name == 0 {
            return None;
        }
        rest = &rest[name..];
        let after = &rest[bws(rest)..];
        if let Some(value) = after.strip_prefix(b"=") {
            let value = &value[bws(value)..];
            let n = token(value);
            rest = if n > 0 { &value[n..] } else { quoted(value)? };
        }
    }
    Some(size)
}

/// The bytes after the quoted-string `s` starts with (RFC 9110 §5.6.4).
fn quoted(s: &[u8]) -> Option<&[u8]> {
    let qdtext = |b: u8| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80;
    let mut i = 1;
    if s.first() != Some(&b'"') {
        return None;
    }
    while let Some(&b) = s.get(i) {
        match b {
            b'"' => return Some(&s[i + 1..]),
            b'\\' if s.get(i + 1).is_some_and(|&n| qdtext(n)) => i += 2,
            b'\\' => return None,
            b if qdtext(b) => i += 1,
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statuses(bytes: &[u8]) -> Vec<u16> {
        match frame_all(bytes, 1000).pop() {
            Some(Framed::Refused { statuses, .. }) => statuses,
            Some(Framed::Whole { .. }) => vec![200],
            Some(Framed::Cut { .. }) => vec![0],
            None => vec![],
        }
    }

    #[test]
    fn the_model_reads_requests_as_the_readme_says() {
        let get = b"GET /mcp HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(statuses(get), [200]);
        let two = [&get[..], b"\r\n", get].concat();
        assert_eq!(frame_all(&two, 1000).len(), 2);
        assert_eq!(statuses(b"GET /mcp HTTP/1.1\r\n\r\n"), [400]);
        assert_eq!(statuses(b"GET /mcp HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n"), [400]);
        assert_eq!(statuses(b"GET /mcp HTTP/2.0\r\nHost: a\r\n\r\n"), [400, 505]);
        assert_eq!(statuses(b"GET mcp HTTP/1.1\r\nHost: a\r\n\r\n"), [400]);
        assert_eq!(statuses(b"GET http://b/mcp HTTP/1.1\r\nHost: a\r\n\r\n"), [200]);
        assert_eq!(statuses(b"GET http://u@b/mcp HTTP/1.1\r\nHost: a\r\n\r\n"), [400]);
        assert_eq!(statuses(b"GET /mcp HTTP/1.2\r\nHost: a\r\n\r\n"), [200]);
        assert_eq!(statuses(b"GET /mcp HTTP/1.10\r\nHost: a\r\n\r\n"), [400]);
        assert_eq!(statuses(b"GET /mcp HTTP/01.1\r\nHost: a\r\n\r\n"), [400]);
        // A field naming one thing, twice: refused there, whatever comes after.
        let twice =
            format!("GET /mcp HTTP/1.1\r\nOrigin: a\r\norigin: b\r\nX: {}", "a".repeat(20_000));
        assert_eq!(statuses(twice.as_bytes()), [400]);
        assert_eq!(
            statuses(b"GET /mcp HTTP/1.1\r\nHost: a\r\nMcp-Param-A: 1\r\nMcp-Param-B: 2\r\n\r\n"),
            [200]
        );
        assert_eq!(statuses(b"GET http://u@b/mcp HTTP/2.0\r\nHost: a\r\n\r\n"), [400, 505]);
        let not_text = b"GET http://\xff/mcp HTTP/1.1\r\nHost: a\r\n\r\n";
        assert_eq!(statuses(not_text), [400]);
        let Framed::Whole { request, .. } =
            &frame_all(b"GET HTTP://b:1?x HTTP/1.1\r\nHost: a\r\n\r\n", 9)[0]
        else {
            panic!("an absolute-form target is read")
        };
        assert_eq!((request.path.as_str(), request.header("host")), ("/", Some("b:1")));
        assert_eq!(statuses(b"GET /mcp HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n"), [400]);
        let post = |fields: &str, body: &str| {
            format!("POST /mcp HTTP/1.1\r\nHost: a\r\n{fields}\r\n{body}").into_bytes()
        };
        assert_eq!(statuses(&post("Content-Length: 5\r\n", "abcde")), [200]);
        assert_eq!(statuses(&post("Content-Length: 5\r\n", "abc")), [0]);
        assert_eq!(statuses(&post("Content-Length: 5000\r\n", "")), [413]);
        assert_eq!(statuses(&post("Content-Length: 5\r\nContent-Length: 6\r\n", "")), [400]);
        let smuggle = post("Content-Length: 4\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n");
        assert_eq!(statuses(&smuggle), [400, 501]);
        assert_eq!(statuses(&post("Transfer-Encoding: gzip\r\n", "")), [400]);
        assert_eq!(statuses(&post("Transfer-Encoding: gzip, chunked\r\n", "")), [501]);
        assert_eq!(statuses(&post("Transfer-Encoding:\r\n", "")), [400]);
        assert_eq!(statuses(b"GET / HTTP/1.1\r\nHost: a,b\r\n\r\n"), [400]);
        let chunked = |body: &str| post("Transfer-Encoding: chunked\r\n", body);
        assert_eq!(statuses(&chunked("3;x=\"y\"\r\nabc\r\n0\r\nT: 1\r\n\r\n")), [200]);
        assert_eq!(statuses(&chunked("zz\r\nabc\r\n0\r\n\r\n")), [400]);
        let empty_element = post("Transfer-Encoding: , chunked,\r\n", "0\r\n\r\n");
        assert_eq!(statuses(&empty_element), [200]);
        assert_eq!(statuses(&chunked("3\r\nabcX0\r\n\r\n")), [400]);
        assert_eq!(statuses(&chunked("7d0\r\n")), [413]);
        let many = format!("GET /mcp HTTP/1.1\r\nHost: a\r\n{}\r\n", "X: b\r\n".repeat(70));
        assert_eq!(statuses(many.as_bytes()), [431]);
        let big = format!("GET /mcp HTTP/1.1\r\nHost: a\r\nX: {}\r\n\r\n", "a".repeat(20_000));
        assert_eq!(statuses(big.as_bytes()), [431]);
        // A refused HEAD has no body once its request line was read.
        let answers_head = |bytes: &[u8]| frame_all(bytes, 1000)[0].answers_head();
        assert!(answers_head(many.replacen("GET", "HEAD", 1).as_bytes()));
        assert!(answers_head(b"HEAD /mcp HTTP/1.1\r\nHost: a\r\nX: \xff\r\n\r\n"));
        assert!(answers_head(b"HEAD /mcp HTTP/2.0\r\nHost: a\r\n\r\n"));
        assert!(answers_head(b"HEAD mcp HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(answers_head(b"HEAD /mcp  HTTP/1.1\r\nHost: a\r\n\r\n"));
        assert!(!answers_head(b"HEAD\t/mcp HTTP/1.1\r\nHost: a\r\n\r\n"));
        let long = format!("\r\nHEAD /{} HTTP/1.1\r\n\r\n", "a".repeat(20_000));
        assert!(answers_head(long.as_bytes()), "a request line too long");
        assert!(answers_head(b"HEAD /mcp HT"), "a request line cut short");
        assert!(!answers_head(b"HEA"));
        let Framed::Whole { request, .. } = &frame_all(&chunked("3\r\nabc\r\n0\r\n\r\n"), 9)[0]
        else {
            panic!("not read")
        };
        assert_eq!((request.body.as_slice(), request.path.as_str()), (&b"abc"[..], "/mcp"));
        assert_eq!(chunk_size(b"5f ; x = y"), Some(0x5f));
        assert_eq!(chunk_size(b"5f;"), None);
    }
}
