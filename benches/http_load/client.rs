//! A small HTTP/1.1 client over `std::net` for the load run, the bench and their tests: one
//! keep-alive connection, whole responses (JSON bodies, or chunked event streams read to
//! their end), and open event streams read one event at a time.

// Each program that includes this file uses part of it.
#![allow(dead_code)]

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// One response: status, headers (lowercase names), body (chunks joined).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The JSON-RPC messages of an event-stream body.
    pub fn events(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    }

    /// The one JSON-RPC message that answers a request: the body, or an event stream's last
    /// message.
    pub fn message(&self) -> Value {
        if self.header("content-type") == Some("text/event-stream") {
            self.events().pop().unwrap_or(Value::Null)
        } else {
            self.json()
        }
    }
}

fn broken(why: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.into())
}

/// One keep-alive connection to an MCP endpoint.
pub struct Conn {
    reader: BufReader<TcpStream>,
    host: String,
    path: String,
    /// The request, built in one buffer so it leaves in one write.
    out: Vec<u8>,
}

impl Conn {
    pub fn open(addr: SocketAddr, path: &str) -> io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn {
            reader: BufReader::new(stream),
            host: addr.to_string(),
            path: path.into(),
            out: Vec::new(),
        })
    }

    pub fn set_read_timeout(&self, timeout: Duration) -> io::Result<()> {
        self.reader.get_ref().set_read_timeout(Some(timeout))
    }

    /// Sends a request; `headers` are `(name, value)` pairs besides Host and the length.
    pub fn send(&mut self, method: &str, body: &[u8], headers: &[(&str, &str)]) -> io::Result<()> {
        self.out.clear();
        write!(self.out, "{method} {} HTTP/1.1\r\nHost: {}\r\n", self.path, self.host)?;
        for (name, value) in headers {
            write!(self.out, "{name}: {value}\r\n")?;
        }
        if method == "POST" {
            write!(self.out, "Content-Length: {}\r\n", body.len())?;
        }
        self.out.extend_from_slice(b"\r\n");
        self.out.extend_from_slice(body);
        self.reader.get_mut().write_all(&self.out)
    }

    /// A POST of JSON that accepts both JSON and event streams, read to its end.
    pub fn post(&mut self, body: &str, headers: &[(&str, &str)]) -> io::Result<Reply> {
        self.send_post(body, headers)?;
        self.reply()
    }

    pub fn send_post(&mut self, body: &str, headers: &[(&str, &str)]) -> io::Result<()> {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.send("POST", body.as_bytes(), &all)
    }

    /// Reads a response head: status and headers.
    pub fn head(&mut self) -> io::Result<(u16, Vec<(String, String)>)> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| broken(line.clone()))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            let (name, value) =
                trimmed.split_once(':').ok_or_else(|| broken(trimmed.to_string()))?;
            headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
        }
        if status == 100 {
            return self.head();
        }
        Ok((status, headers))
    }

    /// Reads one whole response.
    pub fn reply(&mut self) -> io::Result<Reply> {
        let (status, headers) = self.head()?;
        let mut reply = Reply { status, headers, body: Vec::new() };
        if reply.header("transfer-encoding") == Some("chunked") {
            while let Some(chunk) = self.chunk()? {
                reply.body.extend_from_slice(&chunk);
            }
        } else if let Some(length) = reply.header("content-length") {
            let length: usize = length.parse().map_err(|_| broken("bad content-length"))?;
            reply.body.resize(length, 0);
            self.reader.read_exact(&mut reply.body)?;
        } else if !matches!(status, 202 | 204 | 304) {
            self.reader.read_to_end(&mut reply.body)?;
        }
        Ok(reply)
    }

    /// One chunk of a chunked body; `None` after the last.
    fn chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let size = usize::from_str_radix(line.trim(), 16)
            .map_err(|_| broken(format!("bad chunk size {line:?}")))?;
        let mut chunk = vec![0; size + 2];
        self.reader.read_exact(&mut chunk)?;
        chunk.truncate(size);
        Ok((size > 0).then_some(chunk))
    }

    /// Opens an event stream: sends the request and reads the head; `Err` unless it is a
    /// 200 event stream.
    pub fn open_stream(
        mut self,
        method: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> io::Result<Stream> {
        let mut all = vec![("Accept", "application/json, text/event-stream")];
        if method == "POST" {
            all.push(("Content-Type", "application/json"));
        }
        all.extend_from_slice(headers);
        self.send(method, body.as_bytes(), &all)?;
        let (status, headers) = self.head()?;
        let sse = headers.iter().any(|(n, v)| n == "content-type" && v == "text/event-stream");
        let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v == "chunked");
        if status != 200 || !sse || !chunked {
            return Err(broken(format!("not a chunked event stream: {status} {headers:?}")));
        }
        Ok(Stream { conn: self, pending: Vec::new(), ended: false })
    }

    /// Closes both directions at once, whoever else holds a handle to the socket.
    pub fn shutdown(&self) {
        let _ = self.reader.get_ref().shutdown(Shutdown::Both);
    }

    /// A handle to the socket, to shut it down from another thread.
    pub fn socket(&self) -> io::Result<TcpStream> {
        self.reader.get_ref().try_clone()
    }
}

/// An open event stream (chunked), read one message at a time.
pub struct Stream {
    conn: Conn,
    /// Bytes of the stream not yet split into events.
    pending: Vec<u8>,
    ended: bool,
}

impl Stream {
    /// The next JSON-RPC message; `Ok(None)` when the stream ended cleanly. Comments
    /// (keep-alives) are skipped.
    pub fn next(&mut self) -> io::Result<Option<Value>> {
        loop {
            if let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.pending.drain(..end + 2).collect();
                let text = String::from_utf8_lossy(&event);
                if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return serde_json::from_str(data)
                        .map(Some)
                        .map_err(|e| broken(format!("bad event data: {e}")));
                }
                continue;
            }
            if self.ended {
                return Ok(None);
            }
            match self.conn.chunk()? {
                Some(chunk) => self.pending.extend_from_slice(&chunk),
                None => self.ended = true,
            }
        }
    }

    pub fn conn(&self) -> &Conn {
        &self.conn
    }
}
