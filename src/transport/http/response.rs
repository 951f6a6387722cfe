//! Writing HTTP/1.1 responses: fixed-length bodies, and Server-Sent Events streams. A body
//! or event is written from where it lies, beside its head or framing (one `writev`), never
//! copied next to it first: a client that does not read pins one copy, not three.

use std::io::{self, IoSlice, Write};

/// The reason phrase of a status code.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// A response with a fixed-length body (JSON when there is one).
pub struct Response {
    pub status: u16,
    /// Written before `headers`, without a string of its own: most responses have one.
    content_type: Option<&'static str>,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// The connection closes after it.
    pub close: bool,
    /// It answers a HEAD request: the head alone, with the `Content-Length` a GET would get
    /// (RFC 9110 §9.3.2), so the next response on the connection is read from its start.
    pub head_only: bool,
}

impl Response {
    pub fn new(status: u16) -> Response {
        Response {
            status,
            content_type: None,
            headers: Vec::new(),
            body: Vec::new(),
            close: false,
            head_only: false,
        }
    }

    pub fn json(status: u16, body: Vec<u8>) -> Response {
        let mut response = Response::new(status);
        response.content_type = Some("application/json");
        response.body = body;
        response
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    pub fn closing(mut self) -> Response {
        self.close = true;
        self
    }

    /// What ends a request the dispatching loop answered: its JSON response with its status,
    /// or `None`: 202 without a body.
    pub fn answer(done: Option<(u16, Vec<u8>)>) -> Response {
        match done {
            Some((status, body)) => Response::json(status, body),
            None => Response::new(202),
        }
    }

    /// What [`Response::answer`] was made from: `None` for a 202 without a body.
    pub fn into_done(self) -> Option<(u16, Vec<u8>)> {
        self.content_type.map(|_| (self.status, self.body))
    }

    /// Writes status line, headers and body in one `writev`.
    pub fn write(&self, w: &mut dyn Write, minor: u8, keep_alive_secs: u64) -> io::Result<()> {
        let mut out = Vec::with_capacity(256);
        let body = self.head(&mut out, minor, keep_alive_secs);
        write_all(w, &mut [IoSlice::new(&out), IoSlice::new(body)])?;
        w.flush()
    }

    /// Appends the whole response to `out`: for a writer that must send it in one piece.
    pub fn render(&self, out: &mut Vec<u8>, minor: u8, keep_alive_secs: u64) {
        let body = self.head(out, minor, keep_alive_secs);
        out.extend_from_slice(body);
    }

    /// Appends the head to `out`; the body that follows it.
    fn head(&self, out: &mut Vec<u8>, minor: u8, keep_alive_secs: u64) -> &[u8] {
        status_line(out, self.status);
        if let Some(media) = self.content_type {
            out.extend_from_slice(b"Content-Type: ");
            out.extend_from_slice(media.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        header_lines(out, &self.headers);
        let no_body = self.status == 204 || self.status < 200;
        if !no_body {
            out.extend_from_slice(b"Content-Length: ");
            decimal(out, self.body.len() as u64);
            out.extend_from_slice(b"\r\n");
        }
        connection_header(out, self.close, minor, keep_alive_secs);
        out.extend_from_slice(b"\r\n");
        if no_body || self.head_only { &[] } else { &self.body }
    }
}

/// Writes every part, in as few calls as the writer takes (`writev` on a socket).
fn write_all(w: &mut dyn Write, mut parts: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut parts, 0);
    while !parts.is_empty() {
        match w.write_vectored(parts) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut parts, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Appends the status line: `HTTP/1.1` to HTTP/1.0 requests too, the highest version served
/// (RFC 9110 §6.2; what a 1.0 client cannot read, chunks and persistence, is not sent it).
/// Built by hand, as is the rest of the head: `format!` cost a tenth of a connection thread's
/// instructions.
fn status_line(out: &mut Vec<u8>, status: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    decimal(out, status.into());
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// `name: value` lines.
fn header_lines(out: &mut Vec<u8>, headers: &[(&'static str, String)]) {
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// Appends `n` in decimal.
fn decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn connection_header(out: &mut Vec<u8>, close: bool, minor: u8, keep_alive_secs: u64) {
    if close {
        out.extend_from_slice(b"Connection: close\r\n");
    } else {
        if minor == 0 {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
        // Clients then close an idle connection before the server does, so a reused
        // connection is never one the server is closing.
        out.extend_from_slice(b"Keep-Alive: timeout=");
        decimal(out, keep_alive_secs);
        out.extend_from_slice(b"\r\n");
    }
}

/// A Server-Sent Events response: chunked on HTTP/1.1, delimited by closing on HTTP/1.0.
pub struct Sse {
    chunked: bool,
    /// Its head said `Connection: close`: the connection ends with the stream.
    close: bool,
}

impl Sse {
    /// Writes the response head and a first comment, so the first byte leaves at once
    /// (proxies give up on a response whose first byte is slow). `close`: the connection
    /// ends with the stream, and the head says so (RFC 9112 §9.6); HTTP/1.0 streams always
    /// end it.
    pub fn start(
        w: &mut dyn Write,
        minor: u8,
        headers: &[(&'static str, String)],
        close: bool,
    ) -> io::Result<Sse> {
        let mut out = Vec::with_capacity(256);
        status_line(&mut out, 200);
        out.extend_from_slice(
            b"Content-Type: text/event-stream\r\nCache-Control: no-cache, no-transform\r\nX-Accel-Buffering: no\r\n",
        );
        header_lines(&mut out, headers);
        let chunked = minor == 1;
        if chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        }
        let close = close || !chunked;
        if close {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        w.write_all(&out)?;
        let sse = Sse { chunked, close };
        sse.comment(w, "stream open")?;
        Ok(sse)
    }

    /// One `message` event holding one JSON-RPC message (a single line of JSON).
    pub fn event(&self, w: &mut dyn Write, json: &[u8]) -> io::Result<()> {
        self.chunk(w, [b"event: message\ndata: ", json.trim_ascii_end(), b"\n\n"])
    }

    /// A comment line: keeps proxies from closing an idle stream.
    pub fn comment(&self, w: &mut dyn Write, text: &str) -> io::Result<()> {
        self.chunk(w, [b": ", text.as_bytes(), b"\n\n"])
    }

    /// Ends the stream; on HTTP/1.1 the connection can then carry the next request.
    pub fn end(&self, w: &mut dyn Write) -> io::Result<()> {
        if self.chunked {
            w.write_all(b"0\r\n\r\n")?;
        }
        w.flush()
    }

    pub fn reusable(&self) -> bool {
        !self.close
    }

    /// Writes `parts` as one piece of the stream: one chunk on HTTP/1.1.
    fn chunk(&self, w: &mut dyn Write, [a, b, c]: [&[u8]; 3]) -> io::Result<()> {
        let (size, end): (String, &[u8]) = if self.chunked {
            (format!("{:x}\r\n", a.len() + b.len() + c.len()), b"\r\n")
        } else {
            (String::new(), b"")
        };
        let parts = [size.as_bytes(), a, b, c, end];
        write_all(w, &mut parts.map(IoSlice::new))?;
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_is_written_byte_for_byte() {
        let mut out = Vec::new();
        let response = Response::json(404, b"{}".to_vec()).header("Retry-After", "5");
        response.write(&mut out, 1, 120).unwrap();
        let expected = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\
            Retry-After: 5\r\nContent-Length: 2\r\nKeep-Alive: timeout=120\r\n\r\n{}";
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        let mut out = Vec::new();
        Response::new(204).closing().write(&mut out, 0, 0).unwrap();
        assert_eq!(out, b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        for n in [0, 7, 10, 65_536, u64::MAX] {
            let mut text = Vec::new();
            decimal(&mut text, n);
            assert_eq!(text, n.to_string().as_bytes());
        }
    }
}
