//! The connection: where input comes from (the reader, or lines set aside while a handler
//! waited on the client), where output goes (the outbox), and the server's own requests to
//! a legacy client (elicitation, sampling, roots), answered on the same stream.
//!
//! The loop is single-threaded, so input is read only between requests and while a handler
//! waits for a client response. During such a wait, client requests are queued and served
//! after the current one, in order; notifications are handled at once (a cancel of the
//! request in flight ends the wait); the awaited response is handed to the handler.

use std::collections::VecDeque;
use std::io::{self, BufRead, Write};

use serde_json::{Value, json};

use crate::context::ClientError;
use crate::dispatch;
use crate::jsonrpc::{self, ErrorObject, Frame, Id, Message, Reply};
use crate::server::Session;
use crate::transport::{Line, LineReader};

/// A line read during a wait, to be handled after the current request.
enum Queued {
    Line(Vec<u8>),
    TooLong,
}

pub(crate) struct Conn<'io> {
    reader: &'io mut dyn BufRead,
    lines: LineReader,
    pub out: Outbox<'io>,
    queue: VecDeque<Queued>,
    /// Ids of the server's requests: `baremcp-1`, `baremcp-2`, ...
    next_request: u64,
    eof: bool,
}

impl<'io> Conn<'io> {
    pub fn new(reader: &'io mut dyn BufRead, out: Outbox<'io>, max_line: usize) -> Conn<'io> {
        Conn { reader, lines: LineReader::new(max_line), out, queue: VecDeque::new(), next_request: 0, eof: false }
    }

    /// The next input line into `line`: queued lines first, then the reader.
    pub fn next_line(&mut self, line: &mut Vec<u8>) -> io::Result<Line> {
        match self.queue.pop_front() {
            Some(Queued::Line(bytes)) => {
                *line = bytes;
                Ok(Line::Complete)
            }
            Some(Queued::TooLong) => Ok(Line::TooLong),
            None if self.eof => Ok(Line::Eof),
            None => self.lines.read(self.reader, line),
        }
    }

    /// True when the next line is already here (queued, or whole in the reader's buffer):
    /// output may wait for it, because the loop will not block before writing again.
    pub fn input_waiting(&self) -> bool {
        self.lines.next_is_here() || !self.queue.is_empty()
    }

    /// Sends `method` to the client and reads input until the response arrives. `current`
    /// is the client request being served, so that its cancellation ends the wait and its
    /// id is never reused for ours.
    pub fn ask(
        &mut self,
        method: &str,
        params: Value,
        session: &mut Session,
        current: &Id,
    ) -> Result<Value, ClientError> {
        // Cancels are read only during waits, so the request in flight is noted only here.
        session.in_flight = Some(current.clone().into_owned());
        self.next_request += 1;
        let mut id_text = format!("\"baremcp-{}\"", self.next_request);
        if id_text == current.as_json() {
            self.next_request += 1;
            id_text = format!("\"baremcp-{}\"", self.next_request);
        }
        let ours = Id::from_raw(&id_text).ok_or(ClientError::Disconnected)?;
        let request = format!(r#"{{"jsonrpc":"2.0","id":{id_text},"method":{},"params":{params}}}"#, json!(method));
        self.out.raw_line(&request);
        self.out.flush().map_err(|_| ClientError::Disconnected)?;
        loop {
            let mut line = Vec::new();
            match self.lines.read(self.reader, &mut line) {
                Ok(Line::Complete) => {}
                Ok(Line::TooLong) => {
                    self.queue.push_back(Queued::TooLong);
                    continue;
                }
                Ok(Line::Eof) | Err(_) => {
                    self.eof = true;
                    return Err(ClientError::Disconnected);
                }
            }
            let Ok(text) = std::str::from_utf8(&line) else {
                self.queue.push_back(Queued::Line(line));
                continue;
            };
            if text.trim_ascii().is_empty() {
                continue;
            }
            log::debug!("<- {text}");
            match jsonrpc::parse_line(text) {
                Frame::Single(Message::Response { id: Some(id) }) if id == ours => return answer(text),
                Frame::Single(Message::Response { id }) => {
                    log::debug!("ignored a response to {}", id.map_or("null".into(), |i| i.to_string()));
                }
                Frame::Single(Message::Notification { method, params }) => {
                    dispatch::notification(session, &method, &params);
                    if session.cancelled {
                        return Err(ClientError::Cancelled);
                    }
                }
                _ => self.queue.push_back(Queued::Line(line)),
            }
        }
    }
}

/// The result of a client response, or its error as the handler sees it.
fn answer(text: &str) -> Result<Value, ClientError> {
    let message: Value = serde_json::from_str(text).map_err(|_| ClientError::Invalid("unreadable response".into()))?;
    if let Some(result) = message.get("result") {
        return Ok(result.clone());
    }
    let error = &message["error"];
    Err(ClientError::Rejected(ErrorObject {
        code: error["code"].as_i64().unwrap_or(0),
        message: error["message"].as_str().unwrap_or("").to_string(),
        data: error.get("data").cloned(),
    }))
}

/// Everything the server writes goes through here: one message per line, logged at debug
/// level, with the first write error kept so handlers need not thread `io::Result` through.
pub(crate) struct Outbox<'w> {
    writer: &'w mut dyn Write,
    scratch: Vec<u8>,
    error: Option<io::Error>,
}

impl<'w> Outbox<'w> {
    pub fn new(writer: &'w mut dyn Write) -> Self {
        Outbox { writer, scratch: Vec::new(), error: None }
    }

    pub fn response(&mut self, id: Option<&Id>, reply: &Reply) {
        self.send(|w| jsonrpc::write_response(w, id, reply, b"}\n"));
    }

    /// Writes one message that is already JSON text, newline-terminated.
    pub fn raw_line(&mut self, json: &str) {
        self.send(|w| w.write_all(json.as_bytes()).and_then(|()| w.write_all(b"\n")));
    }

    pub fn notification(&mut self, method: &str, params: &Value) {
        self.send(|w| jsonrpc::write_notification(w, method, params));
    }

    pub fn batch(&mut self, replies: &[(Option<Id>, Reply)]) {
        if replies.is_empty() {
            return;
        }
        self.send(|w| {
            w.write_all(b"[")?;
            for (i, (id, reply)) in replies.iter().enumerate() {
                if i > 0 {
                    w.write_all(b",")?;
                }
                jsonrpc::write_response(w, id.as_ref(), reply, b"}")?;
            }
            w.write_all(b"]\n")
        });
    }

    /// Writes one message. At debug level it is staged in a scratch buffer so the exact line
    /// can be logged; otherwise it goes straight to the writer.
    fn send(&mut self, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        if self.error.is_some() {
            return;
        }
        let result = if log::log_enabled!(log::Level::Debug) {
            self.scratch.clear();
            write(&mut self.scratch).and_then(|()| {
                log::debug!("-> {}", String::from_utf8_lossy(self.scratch.trim_ascii_end()));
                self.writer.write_all(&self.scratch)
            })
        } else {
            write(&mut *self.writer)
        };
        if let Err(e) = result {
            self.error = Some(e);
        }
    }

    /// Hands everything written so far to the client; returns the first write error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.check()?;
        self.writer.flush()
    }

    /// The first write error, if any, without flushing.
    pub fn check(&mut self) -> io::Result<()> {
        self.error.take().map_or(Ok(()), Err)
    }

    /// Flushes a message the client should see while the handler is still at work; an
    /// error is kept for the loop.
    pub fn push(&mut self) {
        if let Err(e) = self.flush() {
            self.error = Some(e);
        }
    }
}
