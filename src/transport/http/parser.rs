//! Reading HTTP/1.1 requests: one head, within size limits and a deadline, and how it frames
//! its body (read by `body.rs`).
//!
//! Only what an MCP endpoint needs is accepted: origin-form targets (and the absolute form,
//! which RFC 9112 makes a server take), `Content-Length` or chunked bodies (never both: that
//! is how requests are smuggled past proxies), no obs-fold.

use std::io::{self, BufRead, BufReader};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::transport::http::grammar::{
    absolute_form, http_version, is_token, number, parts, token_lowered, trim_whitespace,
};
use crate::transport::http::guard::valid_host;
use crate::transport::http::socket::Socket;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::wire";

/// The whole request head (request line and headers) may not be longer than this.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
pub const MAX_HEADERS: usize = 64;

/// How a request is read: its size limits and its timeouts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_body: usize,
    /// From a request's first byte to its last (head and body): slow senders are cut off.
    pub deadline: Duration,
    /// How long a kept-alive connection may sit with no request.
    pub idle: Duration,
}

/// One request head. Header names are lowercased; values are trimmed of whitespace.
#[derive(Debug)]
pub struct Head {
    /// The method and the target's path (without the query), as ranges of `text`.
    method: Range<usize>,
    path: Range<usize>,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor: u8,
    /// Every header's name and value, one after another: one buffer for the head rather than
    /// two strings for each of its headers.
    text: String,
    /// Each header's name and value, as ranges of `text`, in the order sent.
    fields: Vec<Field>,
    /// For each of the [`known`] names, its first field's index in `fields` plus one (0:
    /// none): found as the head is read, so looking one up is no search.
    known: Known,
    pub body: BodyKind,
    /// When the request's first byte arrived: the deadline runs from here.
    pub started: Instant,
    /// Whether the connection stays open after this request: read once from `Connection`.
    pub keep_alive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    None,
    Length(usize),
    Chunked,
}

/// Why no request could be read.
#[derive(Debug)]
pub enum ReadError {
    /// The connection ended, idled out or the server is stopping, before a request began:
    /// close without a word.
    Closed,
    /// Answer with this status and close the connection.
    Status(u16, &'static str),
}

impl Head {
    /// The first value of header `name` (lowercase). Inlined: a literal name is matched to
    /// its [`known`] slot as the code is compiled, and any other is searched for.
    #[inline(always)]
    pub fn header(&self, name: &str) -> Option<&str> {
        match known(name.as_bytes()) {
            Some((k, _)) => self.known[k].checked_sub(1).map(|i| self.value(usize::from(i))),
            None => self.search(name),
        }
    }

    /// The first value of header `name`, looked for field by field.
    #[inline(never)]
    fn search(&self, name: &str) -> Option<&str> {
        let at = self.fields.iter().position(|(n, _)| named(&self.text, n, name))?;
        Some(self.value(at))
    }

    /// The value of the field at `at`.
    fn value(&self, at: usize) -> &str {
        &self.text[self.fields[at].1.clone()]
    }

    /// The values of list field `name` (lowercase) as one list: its lines joined with commas,
    /// as RFC 9110 §5.3 reads them.
    pub fn list<'a>(&'a self, name: &'a str) -> Option<std::borrow::Cow<'a, str>> {
        // A known name absent is known so without a look at every field.
        if known(name.as_bytes()).is_some_and(|(k, _)| self.known[k] == 0) {
            return None;
        }
        let mut values = self.values(name);
        let first = values.next()?;
        Some(match values.next() {
            None => first.into(),
            Some(second) => {
                let mut all = format!("{first}, {second}");
                values.for_each(|more| all.extend([", ", more]));
                all.into()
            }
        })
    }

    /// Whether list field `name` (lowercase) has `element` (any case) among its elements.
    pub fn list_has(&self, name: &str, element: &str) -> bool {
        let list = self.list(name);
        list.is_some_and(|list| parts(&list, b',').any(|e| e.trim().eq_ignore_ascii_case(element)))
    }

    /// Every value of header `name` (lowercase), in the order sent.
    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        let text = &self.text;
        self.fields.iter().filter(move |(n, _)| named(text, n, name)).map(|(_, v)| &text[v.clone()])
    }

    /// The request's method, as sent (methods are case-sensitive).
    pub fn method(&self) -> &str {
        &self.text[self.method.clone()]
    }

    /// The target's path, without the query.
    pub fn path(&self) -> &str {
        &self.text[self.path.clone()]
    }

    /// A `GET` or a `HEAD`: what answers one answers the other (RFC 9110 §9.1).
    pub fn is_read(&self) -> bool {
        self.method() == "GET" || self.method() == "HEAD"
    }

    /// A head of these fields (names and values as ranges of `text`), whose body is not known
    /// yet.
    fn of(
        (method, path, minor): (Range<usize>, Range<usize>, u8),
        (text, fields, known): (String, Vec<Field>, Known),
        started: Instant,
    ) -> Head {
        let (body, keep_alive) = (BodyKind::None, false);
        let mut head = Head { method, path, minor, text, fields, known, body, started, keep_alive };
        head.keep_alive = head.reads_keep_alive();
        head
    }

    /// What `Connection` says of the connection after this request.
    fn reads_keep_alive(&self) -> bool {
        let has = |word: &str| self.list_has("connection", word);
        // `close` wins in either version (RFC 9112 §9.3); HTTP/1.0 stays open only when asked.
        !has("close") && (self.minor == 1 || has("keep-alive"))
    }
}

/// The names looked up most, by index: what [`Head::header`] finds without a search. With
/// each, whether its field names one thing, so that a second line of it could be read
/// differently by a proxy and by this server (RFC 9110 §5.3 makes only list fields
/// combinable): a head with two is refused (`Host`'s own check says more).
///
/// A table rather than a `match`: LLVM compiles that into a tree of byte compares, 1.4 KB
/// of code a request runs through a dozen times. A literal name still finds its slot as the
/// code is compiled.
#[inline(always)]
fn known(name: &[u8]) -> Option<(usize, bool)> {
    let k = KNOWN.iter().position(|(known, _)| *known == name)?;
    Some((k, KNOWN[k].1))
}

const KNOWN: [(&[u8], bool); 13] = [
    (b"host", false),
    (b"origin", true),
    (b"authorization", true),
    (b"content-type", true),
    (b"mcp-session-id", true),
    (b"mcp-protocol-version", true),
    (b"mcp-method", true),
    (b"mcp-name", true),
    (b"content-length", false),
    (b"accept", false),
    (b"traceparent", false),
    (b"connection", false),
    (b"expect", false),
];

const HOST: usize = 0;
/// A second `Host` field's slot in [`Known`], after the [`known`] names' own.
const HOST_AGAIN: usize = 13;

/// Where each [`known`] name's first field is (its index plus one; 0: absent), and `Host`'s second.
type Known = [u8; 14];

/// Adds one header line (`line`, its line ending cut) to a head's text, fields and
/// [`known`] ones. Not inlined: in the loop that reads the head, its byte loops would run
/// out of registers.
#[inline(never)]
fn field(
    all: &mut Vec<u8>,
    fields: &mut Vec<Field>,
    found: &mut Known,
    line: &[u8],
) -> Result<(), ReadError> {
    if line[0] == b' ' || line[0] == b'\t' {
        return Err(bad("folded header lines are not accepted"));
    }
    if fields.len() == MAX_HEADERS {
        return Err(ReadError::Status(431, "too many header fields"));
    }
    // The name is the token characters up to the colon: checked, lowercased and copied with one
    // table look-up a byte.
    let name_at = all.len();
    all.reserve(line.len());
    for &b in line {
        match token_lowered(b) {
            0 => break,
            lowered => all.push(lowered),
        }
    }
    let end = all.len() - name_at;
    if end == 0 || line.get(end) != Some(&b':') {
        let colon = line.contains(&b':');
        return Err(bad(if colon { "malformed header name" } else { "header without a colon" }));
    }
    let mut value = &line[end + 1..];
    // Bytes past ASCII that are not UTF-8 are obs-text, opaque (RFC 9110 §5.5): kept as U+FFFD,
    // so that the value matches nothing it is compared with (a mirrored `Mcp-Name` is then a
    // header mismatch, with the request's id) and a field no one reads costs nothing.
    let lossy;
    if !value.is_ascii() && std::str::from_utf8(value).is_err() {
        lossy = String::from_utf8_lossy(value);
        value = lossy.as_bytes();
    }
    // The value goes in before the checks below, which it would fail before (a CR in it).
    let value_at = all.len();
    all.extend_from_slice(trim_whitespace(value));
    let name = &all[name_at..value_at];
    let index = known(name);
    // Every `Mcp-*` field names one thing too (`Mcp-Param-*` are named by the tools): those
    // are rare, so an earlier one is looked for.
    let again = |name: &[u8]| {
        name.starts_with(b"mcp-")
            && fields.iter().any(|(at, _): &(Range<usize>, _)| all[at.clone()] == *name)
    };
    let twice = match index {
        Some((k, single)) => single && found[k] != 0,
        None => again(name),
    };
    if twice {
        return Err(bad("a field that names one thing is sent twice"));
    }
    fields.push((name_at..value_at, value_at..all.len()));
    // At most `MAX_HEADERS` (64) fields, and one more for an absolute-form target.
    match index {
        Some((k, _)) if found[k] == 0 => found[k] = fields.len() as u8,
        Some((HOST, _)) => found[HOST_AGAIN] = fields.len() as u8,
        _ => {}
    }
    Ok(())
}

/// What [`Reader::request_line`] reads: method, path, minor version, and the authority of an
/// absolute-form target.
type RequestLine<'l> = (&'l str, &'l str, u8, Option<String>);

impl Head {
    /// Names the request's host by `authority`, in place of any `Host` field: RFC 9112
    /// §3.2.2 has an absolute-form target's authority win.
    fn name_host(&mut self, authority: &str) {
        let value_at = self.text.len();
        self.text.push_str(authority);
        let value = value_at..self.text.len();
        match self.known[HOST].checked_sub(1) {
            Some(i) => self.fields[usize::from(i)].1 = value,
            None => {
                let name_at = self.text.len();
                self.text.push_str("host");
                self.fields.push((name_at..self.text.len(), value));
                self.known[HOST] = self.fields.len() as u8;
            }
        }
    }
}

/// Whether the header name at `at` of `text` is `name`. Lengths first: a head is looked up a
/// score of times, and most names differ in length.
fn named(text: &str, at: &Range<usize>, name: &str) -> bool {
    at.len() == name.len() && text.as_bytes()[at.clone()] == *name.as_bytes()
}

/// A buffered connection whose reads give up at a deadline, and at once when `stop` is set
/// while no request is under way.
pub struct Reader {
    pub inner: BufReader<Socket>,
    /// The request being read is a `HEAD`: known from its request line's first bytes (`HEAD `),
    /// even when the line is refused, so that a refusal has no body (RFC 9110 §9.3.2).
    pub head_request: bool,
    /// The socket's read timeout as last set (zero: never set): set again only when it
    /// changes, which saves a system call per request.
    timeout: Duration,
    /// Where head lines are read, kept from one request to the next.
    line: Vec<u8>,
    /// The last head's buffers (its text and field ranges), emptied: the next head fills
    /// them rather than allocating its own.
    spare: (Vec<u8>, Vec<Field>),
}

/// A header's name and value, as ranges of its head's text.
type Field = (Range<usize>, Range<usize>);

/// Reads wake up this often to look at the stop flag and the deadline.
const SLICE: Duration = Duration::from_millis(250);

impl Reader {
    pub fn new(socket: Socket) -> Reader {
        Reader {
            inner: BufReader::with_capacity(16 * 1024, socket),
            head_request: false,
            timeout: Duration::ZERO,
            line: Vec::new(),
            spare: (Vec::new(), Vec::new()),
        }
    }

    /// Fills the buffer, waiting until `deadline` at most. `Ok(false)`: the peer closed.
    pub(super) fn fill(
        &mut self,
        deadline: Instant,
        stop: Option<&AtomicBool>,
    ) -> Result<bool, Waited> {
        loop {
            if !self.inner.buffer().is_empty() {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Waited::TimedOut);
            }
            // A request already on its way (its bytes in the socket) is read, to be answered
            // (with `Connection: close`): closing on it would reset the connection instead.
            if stop.is_some_and(|s| s.load(Ordering::Relaxed)) && !self.inner.get_ref().has_input()
            {
                return Err(Waited::Stopped);
            }
            let timeout = (deadline - now).min(SLICE);
            if timeout != self.timeout
                && self.inner.get_ref().set_read_timeout(Some(timeout)).is_ok()
            {
                self.timeout = timeout;
            }
            let waits = self.inner.get_ref().reads_wait();
            match self.inner.fill_buf() {
                Ok([]) => return Ok(false),
                Ok(_) => return Ok(true),
                // The dispatching loop reads only what has come (see `park`): a request it took
                // for whole but is not is refused as one not sent in time, never waited on.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && !waits => {
                    return Err(Waited::TimedOut);
                }
                Err(e)
                    if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Ok(false),
            }
        }
    }

    /// Reads one line (through `\n`) of at most `room` bytes into `line`, without the line
    /// ending; the bytes it took, line ending included, for a caller that counts a limit.
    pub(super) fn line(
        &mut self,
        line: &mut Vec<u8>,
        room: usize,
        deadline: Instant,
    ) -> Result<usize, LineError> {
        line.clear();
        loop {
            match self.fill(deadline, None) {
                Ok(true) => {}
                Ok(false) => return Err(LineError::Closed),
                Err(_) => return Err(LineError::TimedOut),
            }
            let buf = self.inner.buffer();
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            if line.len() + take > room {
                return Err(LineError::TooLong);
            }
            line.extend_from_slice(&buf[..take]);
            self.inner.consume(take);
            if done {
                let read = line.len();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(read);
            }
        }
    }

    /// Reads a request head. Waits up to `limits.idle` for its first byte (ending early when
    /// `stop` is set), then up to `limits.deadline` for the rest.
    pub fn head(&mut self, limits: &Limits, stop: &AtomicBool) -> Result<Head, ReadError> {
        self.head_request = false;
        // A request already in the buffer (as the loop reads one) needs no idle deadline.
        let filled = match self.inner.buffer().is_empty() {
            true => self.fill(Instant::now() + limits.idle, Some(stop)),
            false => Ok(true),
        };
        match filled {
            Ok(true) => {}
            Err(Waited::TimedOut) => {
                let idle = limits.idle.as_secs();
                log::debug!(target: LOG, "a keep-alive connection was closed after {idle} s idle");
                return Err(ReadError::Closed);
            }
            Ok(false) | Err(_) => return Err(ReadError::Closed),
        }
        let started = Instant::now();
        let deadline = started + limits.deadline;
        let mut room = MAX_HEAD_BYTES;
        // The last head's line buffer, given back below: a head reads into it without growing.
        let mut line = std::mem::take(&mut self.line);
        // RFC 9112 §2.2: empty lines before the request line are ignored.
        loop {
            match self.line(&mut line, room, deadline) {
                // The bytes read, a CR included: the limit is on the head as sent.
                Ok(read) => room -= read,
                Err(e) => {
                    // A request line cut short or too long says whether it is a HEAD already.
                    let start = if line.is_empty() { self.inner.buffer() } else { &line };
                    self.head_request = start.starts_with(b"HEAD ");
                    return Err(e.in_request_line());
                }
            }
            if !line.is_empty() {
                break;
            }
        }
        if line.starts_with(b"PRI * HTTP/2") {
            return Err(ReadError::Status(505, "http/2 is not served here: use http/1.1"));
        }
        let (method, path, minor, authority) = self.request_line(&line)?;
        // The method and path open the head's text, before the fields.
        let (mut all, fields) = std::mem::take(&mut self.spare);
        all.extend_from_slice(method.as_bytes());
        let method = 0..all.len();
        all.extend_from_slice(path.as_bytes());
        let path = method.end..all.len();
        let fields = self.fields(&mut line, room, deadline, (all, fields))?;
        let mut head = Head::of((method, path, minor), fields, started);
        head.body = body_kind(&head, limits.max_body)?;
        if minor == 1 && head.header("host").is_none() {
            return Err(bad("missing host header"));
        }
        // RFC 9112 §3.2: which of two hosts is meant is anyone's guess (a proxy's and ours).
        if head.known[HOST_AGAIN] != 0 {
            return Err(bad("more than one host header"));
        }
        // RFC 9112 §3.2: an invalid value is a 400 too, even under an absolute-form target.
        if head.header("host").is_some_and(|host| !valid_host(host)) {
            return Err(bad("invalid host header"));
        }
        if let Some(authority) = authority {
            if !valid_host(&authority) {
                return Err(bad("malformed absolute-form target"));
            }
            head.name_host(&authority);
        }
        self.line = line;
        Ok(head)
    }

    /// Reads a head's header fields (after its request line, with `room` bytes of the head
    /// left), into one text (names lowercased) and the fields' ranges in it: bytes checked to
    /// be text once at the end, one pass for the head rather than one a line.
    fn fields(
        &mut self,
        line: &mut Vec<u8>,
        room: usize,
        deadline: Instant,
        (mut all, mut fields): (Vec<u8>, Vec<Field>),
    ) -> Result<(String, Vec<Field>, Known), ReadError> {
        all.reserve(512);
        fields.reserve(16);
        let mut found = Known::default();
        let read = self.field_lines(line, (room, deadline), &mut all, &mut fields, &mut found);
        // RFC 9110 §5.5: a CR or NUL in a value is read differently by different parsers.
        // Looked for once, in the text read so far (names, all tokens, hold neither), also
        // when a later line failed: the earlier fault is the one reported.
        if memchr::memchr2(b'\r', 0, &all).is_some() {
            return Err(bad("cr or nul in a header value"));
        }
        read?;
        // Every line is text (its value made so), and each was cut next to ASCII bytes: so is
        // the whole.
        let all = String::from_utf8(all).map_err(|_| bad("header is not text"))?;
        Ok((all, fields, found))
    }

    /// The loop of [`Reader::fields`]: each line onto `all`, `fields` and `found`, to the
    /// empty one.
    fn field_lines(
        &mut self,
        line: &mut Vec<u8>,
        (mut room, deadline): (usize, Instant),
        all: &mut Vec<u8>,
        fields: &mut Vec<Field>,
        found: &mut Known,
    ) -> Result<(), ReadError> {
        loop {
            // A line whole in the buffer (nearly always) is read where it lies; one that is
            // not, gathered into `line` first.
            let buf = self.inner.buffer();
            // What to consume after, and the bytes read, a CR included.
            let (text, used, read) = match memchr::memchr(b'\n', buf) {
                Some(at) if at < room => {
                    let text = &buf[..at];
                    (text.strip_suffix(b"\r").unwrap_or(text), at + 1, at + 1)
                }
                _ => {
                    let read = self.line(line, room, deadline).map_err(LineError::status)?;
                    (&line[..], 0, read)
                }
            };
            room -= read;
            if text.is_empty() {
                self.inner.consume(used);
                return Ok(());
            }
            let added = field(all, fields, found, text);
            self.inner.consume(used);
            added?;
        }
    }

    /// Takes back the buffers of a head that is done with, for the next.
    pub fn recycle(&mut self, head: Head) {
        let (mut text, mut fields) = (head.text.into_bytes(), head.fields);
        // A head the size of the usual ones is kept; a large one's buffer is let go.
        if text.capacity() <= 4096 && fields.capacity() <= 64 {
            text.clear();
            fields.clear();
            self.spare = (text, fields);
        }
    }

    /// The request line's method, path (without the query), HTTP minor version and, for an
    /// absolute-form target, its authority; whether it is a `HEAD` is known as soon as its
    /// method is.
    fn request_line<'l>(&mut self, line: &'l [u8]) -> Result<RequestLine<'l>, ReadError> {
        // Known from the line's first bytes, whatever is wrong after them.
        self.head_request = line.starts_with(b"HEAD ");
        let text = std::str::from_utf8(line).map_err(|_| bad("request line is not text"))?;
        // Not `' '`: that pattern sets up a `memchr` for each of three short parts.
        let mut parts = text.split([' ']);
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("malformed request line"));
        };
        if method.is_empty() || !method.bytes().all(is_token) {
            return Err(bad("malformed method"));
        }
        let minor = match http_version(version) {
            // RFC 9110 §2.5: a later minor version of 1 is read as the highest one served.
            Some((1, minor)) => minor.min(1),
            Some(_) => return Err(ReadError::Status(505, "only http/1.1 and http/1.0 are served")),
            None => return Err(bad("malformed request line")),
        };
        // RFC 9112 §3.2.2: a server MUST accept the absolute form (`http://host/path`).
        let (authority, target) = match absolute_form(target).map_err(bad)? {
            Some((authority, rest)) => (Some(authority.to_string()), rest),
            None => (None, target),
        };
        if !target.starts_with('/') || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad("the request target must be a path"));
        }
        let path = target.split(['?', '#']).next().unwrap_or("/");
        Ok((method, path, minor, authority))
    }
}

pub(super) enum Waited {
    TimedOut,
    Stopped,
}

pub(super) enum LineError {
    Closed,
    TimedOut,
    TooLong,
}

impl LineError {
    /// In a chunked body a line too long is a malformed chunk, not a large head.
    pub(super) fn in_body(self) -> ReadError {
        match self {
            LineError::TooLong => bad("malformed chunk"),
            other => other.status(),
        }
    }

    /// A request line too long is a target longer than served: 414 (RFC 9112 §3), where
    /// a header line too long is 431.
    fn in_request_line(self) -> ReadError {
        match self {
            LineError::TooLong => ReadError::Status(414, "request line too long"),
            other => other.status(),
        }
    }

    pub(super) fn status(self) -> ReadError {
        match self {
            LineError::Closed => ReadError::Closed,
            LineError::TimedOut => ReadError::Status(408, "the request was not sent in time"),
            LineError::TooLong => ReadError::Status(431, "request head too large"),
        }
    }
}

pub(super) fn bad(why: &'static str) -> ReadError {
    ReadError::Status(400, why)
}

/// How the body is framed. Both `Content-Length` and `Transfer-Encoding`, or two different
/// lengths, could be read differently by a proxy in front: refused.
fn body_kind(head: &Head, max_body: usize) -> Result<BodyKind, ReadError> {
    let length = head.header("content-length");
    // Several fields of one name are one comma-separated list (RFC 9110 §5.3): `chunked` then
    // `identity` is not chunked, whichever field a proxy in front looks at.
    let mut fields = head.values("transfer-encoding").peekable();
    if fields.peek().is_some() {
        // Empty elements (`, chunked`) are no coding (RFC 9110 §5.6.1.2).
        let elements = fields.flat_map(|v| v.split(',').map(|c| c.trim_matches([' ', '\t'])));
        let codings = elements.filter(|coding| !coding.is_empty());
        if head.minor == 0 {
            // HTTP/1.0 has no transfer codings: its framing is faulty (RFC 9112 §6.1), and
            // the connection closes after the refusal, as after any framing error.
            return Err(bad("transfer-encoding in an HTTP/1.0 request"));
        }
        if length.is_some() {
            return Err(bad("content-length and transfer-encoding together"));
        }
        return transfer_codings(codings);
    }
    let Some(first) = length else {
        return Ok(BodyKind::None);
    };
    if head.values("content-length").any(|l| l != first) {
        return Err(bad("conflicting content-length headers"));
    }
    let n = number(first.as_bytes(), 10).ok_or_else(|| bad("malformed content-length"))?;
    if n > max_body {
        return Err(ReadError::Status(413, "body larger than --max-message-bytes"));
    }
    Ok(BodyKind::Length(n))
}

/// A `Transfer-Encoding` list's framing (RFC 9112 §6.1, §6.3): a body is read only when
/// chunked is its last coding, applied once; no other coding is served.
fn transfer_codings<'c>(codings: impl Iterator<Item = &'c str>) -> Result<BodyKind, ReadError> {
    let chunked = |c: &str| c.eq_ignore_ascii_case("chunked");
    let (mut count, mut chunks, mut last_chunked) = (0, 0, false);
    for coding in codings {
        (count, last_chunked) = (count + 1, chunked(coding));
        chunks += usize::from(last_chunked);
    }
    // Each a 400: where the body ends cannot be known, and the connection closes (§6.3).
    if count == 0 {
        return Err(bad("empty transfer-encoding"));
    }
    if !last_chunked {
        return Err(bad("chunked is not the final transfer-encoding"));
    }
    if chunks > 1 {
        return Err(bad("chunked is applied more than once"));
    }
    // Chunked, under a coding not served (`gzip, chunked`): RFC 9112 §6.1 says 501.
    if count > 1 {
        return Err(ReadError::Status(501, "only the chunked transfer-encoding is served"));
    }
    Ok(BodyKind::Chunked)
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
