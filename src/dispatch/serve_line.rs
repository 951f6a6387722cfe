//! Serving one line already read: a message or a batch, with a `Session`, into a `Conn` whose
//! outbox collects the replies and the notifications they caused. This is the core every
//! transport drives: the stdio loop line by line, HTTP message by message.

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::conn::connection::Conn;
use crate::conn::principal::Principal;
use crate::conn::session::Session;
use crate::dispatch::method_table;
use crate::dispatch::request::Request;
use crate::registry::intercept::{Intercepted, OnReply};
use crate::registry::server::Server;
use crate::util::shown::Clipped;
use crate::wire::era::Era;
use crate::wire::jsonrpc::{self, ErrorObject, Frame, Id, Message, Payload, Reply};
use crate::wire::params::ParamsField;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::serve";

/// A request that got its reply, as a transport that measures sees it (HTTP's metrics and
/// spans): borrowed, so seeing it costs nothing.
pub(crate) struct Served<'r> {
    pub method: &'r str,
    pub id: &'r Id<'r>,
    /// `tools/call` of a registered tool: its name, and whether its result is an error.
    pub tool: Option<(&'r str, bool)>,
    /// The protocol version the request was served under, when one is known.
    pub version: Option<&'r str>,
    /// The request's `_meta` as raw JSON text (where its trace context is).
    pub meta: Option<&'r str>,
    pub reply: &'r Reply,
}

/// What a transport that measures is shown of each request served; `None` on stdio.
pub(crate) type Watch<'w, 'f> = Option<&'w mut (dyn FnMut(&Served) + 'f)>;

/// Serves one complete input line (a message or a batch): its replies, then the update
/// notifications it caused, go to `conn.out`, unflushed. A blank line is skipped.
pub(crate) fn serve_line(server: &Server, line: &[u8], session: &mut Session, conn: &mut Conn) {
    // An id that cannot be read is written as the revision in force says, before and after
    // this line (which may be the `initialize` that sets it).
    conn.out.unread = session.unread;
    serve_text(server, line, session, conn);
    conn.out.unread = session.unread;
}

fn serve_text(server: &Server, line: &[u8], session: &mut Session, conn: &mut Conn) {
    let text = match std::str::from_utf8(line) {
        Ok(text) if text.trim_ascii().is_empty() => return,
        Ok(text) => text,
        Err(_) => return conn.out.response(None, &Err(ErrorObject::parse_error())),
    };
    log::debug!(target: LOG, "<- {}", crate::util::shown::escaped(text, false));
    match jsonrpc::parse_line(text) {
        Frame::Single(message) => {
            if let Some((id, reply)) = serve_message(server, message, session, conn, None) {
                conn.out.response(id.as_ref(), &reply);
                keep_buffer(session, reply);
            }
        }
        Frame::Batch(items) => serve_batch(server, &items, session, conn),
    }
    if !session.updated.is_empty() {
        session.notify_updates(&mut conn.out);
    }
    if !session.ended.is_empty() {
        listens_ended(server, session, conn.principal());
    }
}

/// JSON-RPC batches exist only in MCP 2025-03-26; elsewhere a batch is one invalid request.
fn serve_batch(server: &Server, items: &[&str], session: &mut Session, conn: &mut Conn) {
    match batch_replies(server, items, session, conn, None) {
        Ok(replies) => conn.out.batch(&replies),
        Err(error) => conn.out.response(None, &Err(error)),
    }
}

/// The replies to a batch's requests, written and joined by commas (empty when none is due),
/// or the error of a batch that is refused; `watch` sees each request served.
pub(crate) fn batch_replies(
    server: &Server,
    items: &[&str],
    session: &mut Session,
    conn: &mut Conn,
    mut watch: Watch<'_, '_>,
) -> Result<Vec<u8>, ErrorObject> {
    if items.is_empty() || !session.takes_batches() {
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
            message => serve_message(server, message, session, conn, watch.as_deref_mut()),
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

/// A small result buffer (at most 4 KiB: a session kept for a while holds it, and a server
/// may hold a thousand sessions), written out, goes back to `session`: the next tool call
/// writes its result there and allocates none.
pub(crate) fn keep_buffer(session: &mut Session, reply: Reply) {
    if let Ok(Payload::Json(mut buf)) = reply
        && buf.capacity() <= 4 << 10
    {
        buf.clear();
        session.spare = buf;
    }
}

/// One message: a request gets its reply (unless cancelled, or left open), an invalid message
/// its error; the rest the session takes in. Over HTTP each request is served here with the
/// output of its own response, and `watch` sees it when it is answered.
pub(crate) fn serve_message<'a>(
    server: &Server,
    message: Message<'a>,
    session: &mut Session,
    conn: &mut Conn,
    watch: Watch<'_, '_>,
) -> Option<(Option<Id<'a>>, Reply)> {
    let (id, method, params) = match message {
        Message::Request { id, method, params } => (id, method, params),
        // Matched after requests, so that a call's message is not moved through the session.
        message => {
            // Through the connection, which tells a transport that counts notifications (HTTP)
            // of those in a batch too.
            return match conn.take_in(session, message) {
                Some(Message::Invalid { id, error }) => Some((id, Err(error))),
                _ => None,
            };
        }
    };
    // The clock is read for the completion log line, or for an `on_reply` hook.
    let logged = session.requests_logged.get(Request::logged).then(Instant::now);
    let started = logged.or_else(|| server.hooks.on_reply.as_ref().map(|_| Instant::now()));
    let mut request = match Request::new(&id, &method, &params) {
        Ok(request) => request,
        Err(error) => {
            let reply = Err(error);
            if let Some(watch) = watch {
                let version = session.legacy_version;
                watch(&Served {
                    method: &method,
                    id: &id,
                    tool: None,
                    version,
                    meta: None,
                    reply: &reply,
                });
            }
            return Some((Some(id), reply));
        }
    };
    // Tool panics are caught closer to the tool; this net catches the rest (an interceptor
    // hook's too), so no request can take the process down.
    let dispatched = panic::catch_unwind(AssertUnwindSafe(|| {
        if let Some(on_request) = &server.hooks.on_request
            && let Err(refused) = on_request(&intercepted(&request, conn.principal()))
        {
            return Some(Err(refused));
        }
        method_table::dispatch(server, session, &mut request, conn)
    }));
    let reply = dispatched.unwrap_or_else(|_| Some(Err(ErrorObject::internal())));
    // A request cancelled while its handler waited gets no response at all.
    if session.finish_request() {
        log::debug!(target: LOG, "{} id={} cancelled: no response", Clipped(&method), Clipped(id.as_json()));
        return None;
    }
    let mut reply = reply?;
    if let Some(started) = started {
        let elapsed = started.elapsed();
        if logged.is_some() {
            request.log_completion(&reply, elapsed.as_micros(), conn.trace());
        }
        if let Some(on_reply) = &server.hooks.on_reply {
            reply = show_reply(on_reply, &intercepted(&request, conn.principal()), reply, elapsed);
        }
    }
    if let Some(watch) = watch {
        let version = match request.era() {
            Era::Modern(version) => Some(version),
            Era::Legacy => session.legacy_version,
        };
        watch(&Served {
            method: request.method,
            id: request.id,
            tool: request.tool.as_ref().map(|(name, is_error)| (name.as_ref(), *is_error)),
            version,
            meta: request.params.meta,
            reply: &reply,
        });
    }
    drop(request);
    Some((Some(id), reply))
}

/// The request as the interceptor hooks see it.
fn intercepted<'r>(request: &'r Request, principal: Option<&'r Principal>) -> Intercepted<'r> {
    Intercepted {
        method: request.method,
        id: request.id,
        params: request.params.raw,
        era: request.era(),
        principal,
    }
}

/// Shows `on_reply` the reply, as JSON text: a result still held as a value is serialized
/// here, once, and sent as that text. A panic in the hook is contained (the panic hook has
/// reported it); the reply goes out all the same.
fn show_reply(on_reply: &OnReply, request: &Intercepted, reply: Reply, took: Duration) -> Reply {
    let reply = match reply {
        Ok(Payload::Value(value)) => match serde_json::to_vec(&value) {
            Ok(json) => Ok(Payload::Json(json)),
            Err(_) => Ok(Payload::Value(value)),
        },
        other => other,
    };
    let shown = match &reply {
        Ok(Payload::Json(json)) => Ok(std::str::from_utf8(json).unwrap_or_default()),
        Ok(Payload::Value(_)) => Ok(""),
        Err(error) => Err(error),
    };
    if panic::catch_unwind(AssertUnwindSafe(|| on_reply(request, shown, took))).is_err() {
        let (method, id) = (Clipped(request.method), Clipped(request.id.as_json()));
        log::error!(target: LOG, "the on_reply hook panicked on {method} id={id}");
    }
    reply
}

/// Records the streams whose client ended them (a cancel, or stdio's input ending) as every
/// request is recorded when answered, once: its `baremcp::request` line, `ok` with no
/// response sent, its duration how long it was open (as over HTTP: `Observer::listen_ended`),
/// and `on_reply` shown it ([`listen_ended`]).
pub(crate) fn listens_ended(server: &Server, session: &mut Session, principal: Option<&Principal>) {
    for (id, stream) in session.ended.drain(..) {
        let (took, reply) = (stream.opened.elapsed(), Ok(Payload::Json(Vec::new())));
        if Request::logged()
            && let Ok(request) = Request::new(&id, "subscriptions/listen", &ParamsField::Absent)
        {
            request.log_completion(&reply, took.as_micros(), stream.trace.as_ref());
        }
        // `subscriptions/listen` is a 2026-07-28 method: a stream is of that era.
        let Era::Modern(version) = stream.era else { continue };
        // Nothing is sent: its client ended it.
        let _unsent = listen_ended(server, &id, version, principal, reply, took);
    }
}

/// Shows `on_reply` a `subscriptions/listen` stream's end, once, as every request is shown
/// its reply: `reply` is the result the server ended it with, or no text when its client
/// ended it (no response is sent then), `took` how long it was open. Its `params` are not
/// kept while it is open: the hook sees `None`.
pub(crate) fn listen_ended(
    server: &Server,
    id: &Id,
    version: &'static str,
    principal: Option<&Principal>,
    reply: Reply,
    took: Duration,
) -> Reply {
    let Some(on_reply) = &server.hooks.on_reply else { return reply };
    let method = "subscriptions/listen";
    let request = Intercepted { method, id, params: None, era: Era::Modern(version), principal };
    show_reply(on_reply, &request, reply, took)
}

/// Serves `lines` on one session, as stdio would, for tests that look at what the session
/// keeps afterwards; returns what was written.
#[cfg(test)]
pub(crate) fn serve_lines(server: &Server, session: &mut Session, lines: &[&str]) -> String {
    let mut written = Vec::new();
    let mut input: &[u8] = b"";
    let mut conn = Conn::new(&mut input, crate::conn::outbox::Outbox::new(&mut written), 1 << 24);
    for line in lines {
        serve_line(server, line.as_bytes(), session, &mut conn);
    }
    drop(conn);
    String::from_utf8(written).unwrap_or_default()
}
