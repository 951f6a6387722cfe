//! The serving loop: read a line, serve it, write the replies, and before waiting for more,
//! flush and look at watched files.
//!
//! [`serve_line`] is the core: one line already read (a message or a batch), a `Session`, and
//! a `Conn` whose outbox collects the replies and the notifications they caused. The stdio
//! loop ([`Server::serve`], [`Server::serve_stdio`]) is one driver of it; another transport
//! gives each message to `serve_line` with its own session and output.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use serde_json::json;

use crate::conn::Conn;
use crate::dispatch;
use crate::jsonrpc::{self, ErrorObject, Frame, Id, Message, Payload, Reply};
use crate::outbox::Outbox;
use crate::request::Request;
use crate::server::Server;
use crate::session::Session;
use crate::transport::{self, Line, RawFd};

/// How often [`Server::serve_stdio`] looks at subscribed files while the client is quiet.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

impl Server {
    /// Serves MCP over newline-delimited JSON-RPC until `reader` ends.
    ///
    /// Returns `Ok` at end of input and an error only when reading or writing fails (a
    /// closed output shows up as `ErrorKind::BrokenPipe`). Subscribed files (`--root` files,
    /// [`crate::Resource::watch_file`]) are looked at whenever the loop is about to wait for
    /// input; [`Server::serve_stdio`] also looks while it waits.
    pub fn serve(&self, reader: &mut dyn BufRead, writer: &mut dyn Write) -> io::Result<()> {
        run(self, reader, writer, None)
    }

    /// Serves on this process's stdin and stdout, as [`Server::serve`] does. While the client
    /// is quiet and a subscription names a file, the file is looked at every half second, so
    /// its change is notified without waiting for the client's next message. The input buffer
    /// is larger than std's 8 KiB so a burst of pipelined requests is read in few system calls.
    ///
    /// A closed stdout is the client going away, as much as a closed stdin: both end with
    /// `Ok`. An error is a real one.
    pub fn serve_stdio(&self) -> io::Result<()> {
        let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
        let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
        match run(self, &mut input, &mut output, Some(0)) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            result => result,
        }
    }
}

/// The stdio loop; `input` is the reader's file descriptor when it can be polled.
fn run(server: &Server, reader: &mut dyn BufRead, writer: &mut dyn Write, input: Option<RawFd>) -> io::Result<()> {
    let mut session = Session::default();
    let max_line = server.max_message_bytes;
    let mut conn = Conn::new(reader, Outbox::new(writer), max_line);
    let mut line = Vec::new();
    loop {
        match conn.next_line(&mut line)? {
            Line::Eof => return conn.out.flush(),
            Line::TooLong => {
                log::warn!("discarded a line longer than {max_line} bytes");
                conn.out.response(Id::in_head(&line).as_ref(), &Err(ErrorObject::too_large()));
            }
            Line::Complete => serve_line(server, &line, &mut session, &mut conn),
        }
        // Flush before the loop could wait for input, so no reply ever waits on the client;
        // replies to lines that already arrived share one write.
        if conn.input_waiting() {
            conn.out.check()?;
        } else {
            before_waiting(server, &mut session, &mut conn, input)?;
        }
    }
}

/// Flushes before the loop waits for input. While files are watched, it looks at them first
/// and, when `input` can be polled, again every [`WATCH_INTERVAL`] until input arrives.
fn before_waiting(server: &Server, session: &mut Session, conn: &mut Conn, input: Option<RawFd>) -> io::Result<()> {
    loop {
        if session.watches_files() {
            session.look_at_files(|uri| server.file_stamp(uri));
            session.notify_updates(&mut conn.out);
        }
        conn.out.flush()?;
        match input {
            Some(fd) if session.watches_files() && !transport::readable_within(fd, WATCH_INTERVAL) => {}
            _ => return Ok(()),
        }
    }
}

/// Serves one complete input line (a message or a batch): its replies, then the update
/// notifications it caused, go to `conn.out`, unflushed. A blank line is skipped.
pub(crate) fn serve_line(server: &Server, line: &[u8], session: &mut Session, conn: &mut Conn) {
    let text = match std::str::from_utf8(line) {
        Ok(text) if text.trim_ascii().is_empty() => return,
        Ok(text) => text,
        Err(_) => return conn.out.response(None, &Err(ErrorObject::parse_error())),
    };
    log::debug!("<- {text}");
    match jsonrpc::parse_line(text) {
        Frame::Single(message) => {
            if let Some((id, reply)) = serve_message(server, message, session, conn) {
                conn.out.response(id.as_ref(), &reply);
                // A small result buffer is reused, so a tool call allocates none.
                if let Ok(Payload::Json(mut buf)) = reply
                    && buf.capacity() <= 64 * 1024
                {
                    buf.clear();
                    session.spare = buf;
                }
            }
        }
        Frame::Batch(items) => serve_batch(server, &items, session, conn),
    }
    if !session.updated.is_empty() {
        session.notify_updates(&mut conn.out);
    }
}

/// JSON-RPC batches exist only in MCP 2025-03-26; elsewhere a batch is one invalid request.
fn serve_batch(server: &Server, items: &[&str], session: &mut Session, conn: &mut Conn) {
    match batch_replies(server, items, session, conn) {
        Ok(replies) => conn.out.batch(&replies),
        Err(error) => conn.out.response(None, &Err(error)),
    }
}

/// The replies to a batch's requests, written and joined by commas (empty when none is due),
/// or the error of a batch that is refused.
pub(crate) fn batch_replies(
    server: &Server,
    items: &[&str],
    session: &mut Session,
    conn: &mut Conn,
) -> Result<Vec<u8>, ErrorObject> {
    if items.is_empty() || session.legacy_version != Some("2025-03-26") {
        let why = if items.is_empty() { "empty batch" } else { "batches need protocol version 2025-03-26" };
        return Err(ErrorObject::invalid_request().with_data(json!(why)));
    }
    // Replies are written as they are made, so none is held as a `Value` beside the others.
    // Once they reach the line limit the remaining requests are not run (each gets an error
    // with its id instead): the reply stays within that limit plus one reply and
    // `MAX_BATCH` short errors, whatever the batch asks for.
    let max = server.max_message_bytes;
    let mut replies = Vec::new();
    for item in items {
        let reply = match jsonrpc::parse_message(item) {
            Message::Request { id, .. } if replies.len() >= max => {
                Some((Some(id), Err(ErrorObject::batch_reply_too_large(max))))
            }
            message => serve_message(server, message, session, conn),
        };
        if let Some((id, reply)) = reply {
            if !replies.is_empty() {
                replies.push(b',');
            }
            // Writing to a `Vec` cannot fail.
            let _ = jsonrpc::write_response(&mut replies, id.as_ref(), &reply, b"}");
        }
    }
    Ok(replies)
}

/// One message: a request gets its reply (unless cancelled, or left open), a notification
/// changes the session, a stray response is ignored. Over HTTP each request is served here
/// with the output of its own response.
pub(crate) fn serve_message<'a>(
    server: &Server,
    message: Message<'a>,
    session: &mut Session,
    conn: &mut Conn,
) -> Option<(Option<Id<'a>>, Reply)> {
    match message {
        Message::Request { id, method, params } => {
            let started = Request::started();
            let mut request = match Request::new(&id, &method, &params) {
                Ok(request) => request,
                Err(error) => return Some((Some(id), Err(error))),
            };
            // Tool panics are caught closer to the tool; this net catches the rest, so no
            // request can take the process down.
            let dispatched =
                panic::catch_unwind(AssertUnwindSafe(|| dispatch::dispatch(server, session, &mut request, conn)));
            let reply = dispatched.unwrap_or_else(|_| Some(Err(ErrorObject::internal())));
            // A request cancelled while its handler waited gets no response at all.
            if session.finish_request() {
                log::debug!("{method} id={id} cancelled: no response");
                return None;
            }
            let reply = reply?;
            if let Some(started) = started {
                request.log_completion(&reply, started.elapsed().as_micros());
            }
            drop(request);
            Some((Some(id), reply))
        }
        Message::Notification { method, params } => {
            session.notification(&method, &params);
            None
        }
        Message::Response { id } => {
            log::debug!(
                "ignored a response to {} (no request of ours is pending)",
                id.map_or("null".into(), |i| i.to_string())
            );
            None
        }
        Message::BadResponse { id } => {
            log::debug!("ignored a malformed response to {}", id.map_or("null".into(), |i| i.to_string()));
            None
        }
        Message::BadNotification => {
            log::debug!("ignored a malformed notification");
            None
        }
        Message::Invalid { id, error } => Some((id, Err(error))),
    }
}
