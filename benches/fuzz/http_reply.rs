//! The HTTP fuzzer's reader of what the server wrote on one connection: responses framed as
//! RFC 9112 says (status line, fields, then a body by `Content-Length`, chunks, or the close;
//! none after `HEAD`, `1xx`, `204`, `304`), read strictly, each field checked as it is read.

/// One response read off the connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub status: u16,
    /// Lowercase names, values as sent (trimmed).
    pub headers: Vec<(String, String)>,
    /// The body, chunks joined.
    pub body: Vec<u8>,
    /// Interim (`1xx`) responses before it.
    pub interim: Vec<u16>,
    /// A chunked body that had not ended when reading stopped (an open event stream).
    pub open: bool,
    /// Where its bytes start and end on the connection.
    pub start: usize,
    pub end: usize,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Whether it announces that the connection closes after it.
    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|c| c.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")))
    }

    pub fn is_stream(&self) -> bool {
        self.header("content-type").is_some_and(|t| t.starts_with("text/event-stream"))
    }
}

/// How the bytes after the last whole response end.
#[derive(Clone, Debug, PartialEq)]
pub enum Tail {
    /// Nothing after it.
    Clean,
    /// A response begun and not finished.
    Partial(String),
    /// Bytes that are no response (the reason, and where they start).
    Bad(String, usize),
}

/// Reads the responses in `bytes`, the `i`-th answering a request that was a `HEAD` when
/// `heads[i]` (its response has no body, whatever its fields say). `eof`: the server closed
/// the connection after these bytes (a body delimited by the close is then whole).
pub fn read_replies(bytes: &[u8], heads: &[bool], eof: bool) -> (Vec<Reply>, Tail) {
    let mut replies = Vec::new();
    let mut at = 0;
    let mut interim = Vec::new();
    while at < bytes.len() {
        let head_request = heads.get(replies.len()).copied().unwrap_or(false);
        match read_one(bytes, at, head_request, eof) {
            Step::Reply(mut reply) if (100..200).contains(&reply.status) => {
                interim.push(reply.status);
                at = reply.end;
                if reply.status == 101 {
                    return (replies, Tail::Bad("101 switching protocols".into(), reply.start));
                }
                reply.interim.clear();
            }
            Step::Reply(mut reply) => {
                reply.interim = std::mem::take(&mut interim);
                at = reply.end;
                let open = reply.open;
                replies.push(reply);
                if open {
                    return (replies, Tail::Clean);
                }
            }
            Step::Partial(why) => return (replies, Tail::Partial(why)),
            Step::Bad(why) => return (replies, Tail::Bad(why, at)),
        }
    }
    // An interim response with no final one yet: the request is as good as unanswered.
    (replies, Tail::Clean)
}

enum Step {
    Reply(Reply),
    Partial(String),
    Bad(String),
}

/// One CRLF-ended line from `at`: its text and where the next starts. `Err(true)`: no line
/// end yet; `Err(false)`: a bare LF.
fn crlf_line(bytes: &[u8], at: usize) -> Result<(&[u8], usize), bool> {
    let len = bytes[at..].iter().position(|&b| b == b'\n').ok_or(true)?;
    let text = &bytes[at..at + len];
    let text = text.strip_suffix(b"\r").ok_or(false)?;
    Ok((text, at + len + 1))
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `HTTP/1.x NNN reason`: the status.
fn status_line(line: &[u8]) -> Result<u16, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a status line that is not text")?;
    let rest = text
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| text.strip_prefix("HTTP/1.0 "))
        .ok_or_else(|| format!("not a status line: {:?}", excerpt(line)))?;
    let (code, reason) = rest.split_at(rest.len().min(3));
    let status: u16 = code
        .parse()
        .ok()
        .filter(|s| (100..600).contains(s) && code.len() == 3)
        .ok_or_else(|| format!("a bad status code: {text:?}"))?;
    if !(reason.is_empty() || reason.starts_with(' '))
        || reason.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
    {
        return Err(format!("a bad reason phrase: {text:?}"));
    }
    Ok(status)
}

/// One field line: lowercase name and trimmed value.
fn field(line: &[u8]) -> Result<(String, String), String> {
    let colon = line.iter().position(|&b| b == b':').ok_or("a field without a colon")?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().all(|&b| is_token(b)) {
        return Err(format!("a bad field name: {:?}", excerpt(line)));
    }
    if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(format!("a control byte in a field value: {:?}", excerpt(line)));
    }
    let value = String::from_utf8_lossy(value).trim_matches([' ', '\t']).to_string();
    Ok((String::from_utf8_lossy(name).to_ascii_lowercase(), value))
}

/// How the body of a response with these fields is delimited (RFC 9112 §6.3).
enum Delimit {
    Empty,
    Length(usize),
    Chunked,
    Close,
}

fn delimit(
    status: u16,
    headers: &[(String, String)],
    head_request: bool,
) -> Result<Delimit, String> {
    let values = |name: &str| -> Vec<&str> {
        headers.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
    };
    let (lengths, codings) = (values("content-length"), values("transfer-encoding"));
    if lengths.len() > 1 {
        return Err("two content-length fields".into());
    }
    if !lengths.is_empty() && !codings.is_empty() {
        return Err("content-length and transfer-encoding together".into());
    }
    if codings.len() > 1 || codings.first().is_some_and(|c| *c != "chunked") {
        return Err(format!("a transfer coding other than chunked: {codings:?}"));
    }
    let length = match lengths.first() {
        Some(l) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            Some(l.parse::<usize>().map_err(|_| "a content-length too large")?)
        }
        Some(l) => return Err(format!("a malformed content-length: {l:?}")),
        None => None,
    };
    if (status == 204 || status == 304 || status < 200) && length.is_some_and(|n| n > 0) {
        return Err(format!("a {status} with a body length"));
    }
    Ok(if head_request || status == 204 || status == 304 || status < 200 {
        Delimit::Empty
    } else if !codings.is_empty() {
        Delimit::Chunked
    } else if let Some(n) = length {
        Delimit::Length(n)
    } else {
        Delimit::Close
    })
}

fn read_one(bytes: &[u8], start: usize, head_request: bool, eof: bool) -> Step {
    let cut = |what: &str| Step::Partial(format!("{what} cut off"));
    let (line, mut at) = match crlf_line(bytes, start) {
        Ok(found) => found,
        Err(true) if bytes.len() - start < 16 && b"HTTP/1.".starts_with(&bytes[start..]) => {
            return cut("a status line");
        }
        Err(true) if bytes[start..].starts_with(b"HTTP/1.") => return cut("a status line"),
        Err(_) => return Step::Bad(format!("not a response: {:?}", excerpt(&bytes[start..]))),
    };
    let status = match status_line(line) {
        Ok(status) => status,
        Err(why) => return Step::Bad(why),
    };
    let mut headers = Vec::new();
    loop {
        match crlf_line(bytes, at) {
            Ok((line, next)) => {
                at = next;
                if line.is_empty() {
                    break;
                }
                match field(line) {
                    Ok(f) => headers.push(f),
                    Err(why) => return Step::Bad(why),
                }
            }
            Err(true) => return cut("a response head"),
            Err(false) => return Step::Bad("a field line ended by a bare LF".into()),
        }
    }
    let mut reply = Reply {
        status,
        headers,
        body: Vec::new(),
        interim: Vec::new(),
        open: false,
        start,
        end: at,
    };
    let delimit = match delimit(status, &reply.headers, head_request) {
        Ok(d) => d,
        Err(why) => return Step::Bad(why),
    };
    match delimit {
        Delimit::Empty => {}
        Delimit::Length(n) if bytes.len() - at >= n => {
            reply.body = bytes[at..at + n].to_vec();
            reply.end = at + n;
        }
        Delimit::Length(n) => {
            return cut(&format!("a body of {n} bytes ({} came)", bytes.len() - at));
        }
        Delimit::Close if eof || reply.is_stream() => {
            // An HTTP/1.0 event stream ends with the connection: open until then.
            reply.body = bytes[at..].to_vec();
            reply.end = bytes.len();
            reply.open = !eof;
        }
        Delimit::Close => return cut("a body delimited by the close"),
        Delimit::Chunked => match chunks(bytes, at, &mut reply.body) {
            Ok(end) => reply.end = end,
            Err(None) if reply.is_stream() => {
                reply.open = true;
                reply.end = bytes.len();
            }
            Err(None) => return cut("a chunked body"),
            Err(Some(why)) => return Step::Bad(why),
        },
    }
    Step::Reply(reply)
}

/// A chunked body from `at`: where it ends, or `Err(None)` when cut off, `Err(Some(why))`
/// when malformed.
fn chunks(bytes: &[u8], mut at: usize, body: &mut Vec<u8>) -> Result<usize, Option<String>> {
    loop {
        let (line, next) = match crlf_line(bytes, at) {
            Ok(found) => found,
            Err(true) => return Err(None),
            Err(false) => return Err(Some("a chunk-size line ended by a bare LF".into())),
        };
        let size = std::str::from_utf8(line)
            .ok()
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| Some(format!("a bad chunk size: {:?}", excerpt(line))))?;
        at = next;
        if size == 0 {
            // No trailer fields are sent: the empty line ends the body.
            return match crlf_line(bytes, at) {
                Ok((b"", next)) => Ok(next),
                Ok(_) | Err(false) => Err(Some("trailer fields after the last chunk".into())),
                Err(true) => Err(None),
            };
        }
        if bytes.len() < at + size + 2 {
            return Err(None);
        }
        body.extend_from_slice(&bytes[at..at + size]);
        if &bytes[at + size..at + size + 2] != b"\r\n" {
            return Err(Some("chunk data not followed by CRLF".into()));
        }
        at += size + 2;
    }
}

/// The first bytes of `bytes`, for a message.
pub fn excerpt(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned()
}

/// The events of an event-stream body: each `data` line's text, in order. `Err`: a line the
/// format does not have, or an event without its blank line.
pub fn events(body: &[u8], open: bool) -> Result<Vec<Vec<u8>>, String> {
    let text = std::str::from_utf8(body).map_err(|_| "an event stream that is not UTF-8")?;
    let mut data = Vec::new();
    let complete = match text.rfind("\n\n") {
        Some(at) => &text[..at + 2],
        None if text.is_empty() || open => "",
        None => return Err(format!("an event stream cut mid-event: {text:?}")),
    };
    if !open && complete.len() != text.len() {
        return Err("an event stream that ends mid-event".into());
    }
    for event in complete.split("\n\n").filter(|e| !e.is_empty()) {
        for line in event.split('\n') {
            if let Some(d) = line.strip_prefix("data: ") {
                data.push(d.as_bytes().to_vec());
            } else if !(line.starts_with(':') || line.starts_with("event: ")) {
                return Err(format!("an event-stream line of no known field: {line:?}"));
            }
        }
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    // Imported in the test itself: the soak compiles this module without the test harness.
    #[test]
    fn responses_are_read_strictly() {
        use super::*;
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 204 No Content\r\n\r\n";
        let (replies, tail) = read_replies(ok, &[false, false], false);
        assert_eq!((replies.len(), tail), (2, Tail::Clean));
        // A HEAD response's body is the next response's first bytes: not a response.
        let (replies, tail) = read_replies(ok, &[true, false], false);
        assert_eq!(replies.len(), 1);
        assert!(matches!(tail, Tail::Bad(_, 38)), "{tail:?}");
        let sse = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n: stream open\n\n\r\n";
        let (replies, tail) = read_replies(sse, &[false], false);
        assert_eq!((replies[0].open, tail), (true, Tail::Clean));
        assert_eq!(events(&replies[0].body, true), Ok(vec![]));
        let interim =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n";
        let (replies, _) = read_replies(interim, &[false], false);
        assert_eq!((replies[0].status, replies[0].interim.clone()), (202, vec![100]));
        let both = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(read_replies(both, &[false], false).1, Tail::Bad(..)));
        let cut = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab";
        assert!(matches!(read_replies(cut, &[false], false).1, Tail::Partial(_)));
    }
}
