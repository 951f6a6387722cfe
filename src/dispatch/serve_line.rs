//! Serving one line already read: a message or a batch, with a `Session`, into a `Conn` whose
//! outbox collects the replies and the notifications they caused. This is the core every
//! transport drives: the stdio loop line by line, HTTP message by message.

use std::panic::{self, AssertUnwindSafe};

use serde_json::json;

use crate::conn::connection::Conn;
use crate::conn::session::Session;
use crate::dispatch::method_table;
use crate::dispatch::request::Request;
use crate::registry::server::Server;
use crate::wire::jsonrpc::{self, ErrorObject, Frame, Id, Message, Payload, Reply};

/// The log target: the name `RUST_LOG` filters by (README, Logging), kept when files move.
const LOG: &str = "baremcp::serve";

/// Serves one complete input line (a message or a batch): its replies, then the update
/// notifications it caused, go to `conn.out`, unflushed. A blank line is skipped.
pub(crate) fn serve_line(server: &Server, line: &[u8], session: &mut Session, conn: &mut Conn) {
    let text = match std::str::from_utf8(line) {
        Ok(text) if text.trim_ascii().is_empty() => return,
        Ok(text) => text,
        Err(_) => return conn.out.response(None, &Err(ErrorObject::parse_error())),
    };
    log::debug!(target: LOG, "<- {text}");
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
        let why = if items.is_empty() {
            "empty batch"
        } else {
            "batches need protocol version 2025-03-26"
        };
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

/// One message: a request gets its reply (unless cancelled, or left open), an invalid message
/// its error; the rest the session takes in. Over HTTP each request is served here with the
/// output of its own response.
pub(crate) fn serve_message<'a>(
    server: &Server,
    message: Message<'a>,
    session: &mut Session,
    conn: &mut Conn,
) -> Option<(Option<Id<'a>>, Reply)> {
    let (id, method, params) = match message {
        Message::Request { id, method, params } => (id, method, params),
        // Matched after requests, so that a call's message is not moved through the session.
        message => {
            return match session.take_in(message) {
                Some(Message::Invalid { id, error }) => Some((id, Err(error))),
                _ => None,
            };
        }
    };
    let started = Request::started();
    let mut request = match Request::new(&id, &method, &params) {
        Ok(request) => request,
        Err(error) => return Some((Some(id), Err(error))),
    };
    // Tool panics are caught closer to the tool; this net catches the rest, so no request can
    // take the process down.
    let dispatched = panic::catch_unwind(AssertUnwindSafe(|| {
        method_table::dispatch(server, session, &mut request, conn)
    }));
    let reply = dispatched.unwrap_or_else(|_| Some(Err(ErrorObject::internal())));
    // A request cancelled while its handler waited gets no response at all.
    if session.finish_request() {
        log::debug!(target: LOG, "{method} id={id} cancelled: no response");
        return None;
    }
    let reply = reply?;
    if let Some(started) = started {
        request.log_completion(&reply, started.elapsed().as_micros());
    }
    drop(request);
    Some((Some(id), reply))
}
