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
        Response { status, headers: Vec::new(), body: Vec::new(), close: false, head_only: false }
    }

    pub fn json(status: u16, body: Vec<u8>) -> Response {
        let mut response = Response::new(status);
        response.headers.push(("Content-Type", "application/json".into()));
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

    /// Writes status line, headers and body in one `writev`.
    pub fn write(&self, w: &mut dyn Write, minor: u8, keep_alive_secs: u64) -> io::Result<()> {
        let mut out = status_line(self.status, minor);
        for (name, value) in &self.headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        let no_body = self.status == 204 || self.status < 200;
        if !no_body {
            out.extend_from_slice(format!("Content-Length: {}\r\n", self.body.len()).as_bytes());
        }
        connection_header(&mut out, self.close, minor, keep_alive_secs);
        out.extend_from_slice(b"\r\n");
        let body: &[u8] = if no_body || self.head_only { &[] } else { &self.body };
        write_all(w, &mut [IoSlice::new(&out), IoSlice::new(body)])?;
        w.flush()
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

fn status_line(status: u16, minor: u8) -> Vec<u8> {
    format!("HTTP/1.{minor} {status} {}\r\n", reason(status)).into_bytes()
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
        out.extend_from_slice(format!("Keep-Alive: timeout={keep_alive_secs}\r\n").as_bytes());
    }
}

/// A Server-Sent Events response: chunked on HTTP/1.1, delimited by closing on HTTP/1.0.
pub struct Sse {
    chunked: bool,
}

impl Sse {
    /// Writes the response head and a first comment, so the first byte leaves at once
    /// (proxies give up on a response whose first byte is slow).
    pub fn start(
        w: &mut dyn Write,
        minor: u8,
        headers: &[(&'static str, String)],
    ) -> io::Result<Sse> {
        let mut out = status_line(200, minor);
        out.extend_from_slice(
            b"Content-Type: text/event-stream\r\nCache-Control: no-cache, no-transform\r\nX-Accel-Buffering: no\r\n",
        );
        for (name, value) in headers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        let chunked = minor == 1;
        if chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        } else {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        w.write_all(&out)?;
        let sse = Sse { chunked };
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
        self.chunked
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
