//! The one dispatching loop behind the HTTP endpoint. It runs on the thread that called
//! `serve_http`, owns the `Server` (so handlers need not be `Send` or `Sync`) and every
//! session's protocol state, and takes its work from the connection threads over a channel:
//! requests with the sink their answers go to, client notifications and responses, and the
//! standalone GET streams of legacy sessions.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::conn::connection::{Conn, Inbox};
use crate::conn::outbox::Outbox;
use crate::conn::principal::Principal;
use crate::conn::session::{FileRounds, Session};
use crate::dispatch::lifecycle;
use crate::dispatch::serve_line::{
    Served, batch_replies, keep_buffer, listen_ended, serve_message,
};
use crate::registry::server::Server;
use crate::transport::http::direct::{Claim, Direct, DirectLine, Rest, Unsent};
use crate::transport::http::parser::Head;
use crate::transport::http::readiness::Readiness;
use crate::transport::http::session_table::{Sessions, Use, session_tag};
use crate::transport::telemetry::observer::{Arrival, Observer};
use crate::util::queue::{Receiver, Recv, Refused, Seen, Sender};
use crate::util::sort::sort;
use crate::wire::carried::Parsed;
use crate::wire::era;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{self, ErrorObject, Frame, Id, Message, Payload, Reply, UnreadId};
use crate::wire::params::{MetaMembers, ParamsField};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::dispatcher";

/// How often the loop wakes with no work: expiry, watched files, the stop flag.
pub const TICK: Duration = Duration::from_millis(250);

/// Work for the dispatching loop.
#[allow(clippy::large_enum_variant)] // calls are most of it: a box each would cost an allocation
pub enum Inbound {
    /// Boxed: moved through the queue and the loop's match, a call is a few hundred bytes.
    Call(Box<Call>),
    /// A client notification or response, already answered with 202.
    Message { session: Option<String>, body: String },
    /// A legacy session's GET stream: server messages unrelated to a request go here.
    Stream { session: String, sink: Sink },
}

/// What watches keep-alive connections between requests (`park.rs`): the loop waits on it
/// and the queue at once.
pub trait Watcher {
    /// The next work within a [`TICK`], from `rx` or from the connections watched.
    fn next(&mut self, rx: &Receiver<Inbound>, readiness: &Readiness) -> Recv<Inbound>;
    /// Whether a tick came since the last call: its waits have no timeout to end them (that
    /// would cost a kernel timer on each), a ticker does.
    fn ticked(&mut self) -> bool;
    /// After a call whose connection's line is `line`: what became of it, if a connection
    /// watched brought it.
    fn settle(&mut self, line: &DirectLine);
}

/// One POSTed request (or batch).
pub struct Call {
    /// Who sent it, when authentication is configured.
    pub principal: Option<Arc<Principal>>,
    /// The legacy session it belongs to, kept in use (not expired, not evicted) until the
    /// request is answered; `None` for 2026-07-28 requests.
    pub session: Option<Use>,
    pub body: String,
    /// The body's parse on the connection's side, when it is one request: not parsed again.
    pub parsed: Option<Box<Parsed>>,
    pub sink: Sink,
    pub modern: bool,
    /// The client accepts `text/event-stream`: notifications and server requests may
    /// precede the response.
    pub sse: bool,
    /// When it was read, and the trace context of its HTTP headers.
    pub arrival: Arrival,
    /// How the loop writes the response itself, when its connection thread lets it.
    pub direct: Option<Direct>,
}

impl Call {
    /// The body as its connection parsed it (read back from the positions it kept), or
    /// parsed now when it kept none.
    fn frame<'m, 'a: 'm>(&'a self, meta: &'m mut Option<MetaMembers<'a>>) -> Frame<'m> {
        match self.parsed.as_ref().and_then(|parsed| parsed.message(&self.body, meta)) {
            Some(message) => Frame::Single(message),
            None => jsonrpc::parse_line(&self.body),
        }
    }
}

/// What a connection thread writes for its request.
pub enum Out {
    /// A notification or server request, as one line of JSON.
    Event(String),
    /// The response with its HTTP status; `None` when there is none (a cancelled request, a
    /// batch of notifications).
    Done(Option<(u16, Vec<u8>)>),
    /// The rest of a response the loop began to write itself (see `direct`).
    Rest(Rest),
}

impl From<Unsent> for Out {
    fn from(unsent: Unsent) -> Out {
        match unsent {
            Unsent::Done(done) => Out::Done(done),
            Unsent::Rest(rest) => Out::Rest(rest),
        }
    }
}

/// Where a request's (or stream's) messages go: a bounded queue to its connection thread.
/// A full queue means the client does not read: the stream is given up, never waited on.
#[derive(Clone)]
pub struct Sink {
    tx: Sender<Out>,
    closed: Arc<AtomicBool>,
    /// The request the loop may answer itself: anything sent hands it back first.
    claim: Option<Claim>,
}

impl Sink {
    pub fn new(tx: Sender<Out>, closed: Arc<AtomicBool>, claim: Option<Claim>) -> Sink {
        Sink { tx, closed, claim }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }

    fn send(&self, out: Out) -> bool {
        if self.is_closed() {
            return false;
        }
        // The response ends the stream, so it always fits: what is bounded is the events
        // before it.
        let bytes = match &out {
            Out::Event(line) => line.len(),
            Out::Done(_) | Out::Rest(_) => 0,
        };
        if let Some(claim) = &self.claim {
            claim.attach();
        }
        match self.tx.send_sized(out, bytes).map(drop) {
            Ok(()) => true,
            Err(Refused::Full) => {
                log::warn!(target: LOG, "a client does not read its stream: closing it");
                self.closed.store(true, Ordering::Relaxed);
                false
            }
            Err(Refused::Closed) => {
                self.closed.store(true, Ordering::Relaxed);
                false
            }
        }
    }
}

/// Collects what an `Outbox` writes and sends each complete line as an event on flush.
struct SinkWriter<'a> {
    sink: Option<&'a Sink>,
    buf: Vec<u8>,
}

impl Write for SinkWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let buf = std::mem::take(&mut self.buf);
        let Some(sink) = self.sink else { return Ok(()) };
        for line in buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if !sink.send(Out::Event(String::from_utf8_lossy(line).into_owned())) {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
        }
        Ok(())
    }
}

/// A legacy session's protocol state and its standalone stream.
#[derive(Default)]
struct Legacy {
    state: Session,
    stream: Option<Sink>,
}

pub struct Dispatcher<'s> {
    server: &'s Server,
    rx: Receiver<Inbound>,
    /// How long a legacy handler waits for its client's answer (`--ask-timeout-secs`).
    ask_timeout: Duration,
    sessions: HashMap<String, Legacy>,
    /// Open 2026-07-28 `subscriptions/listen` streams, each with its own state, and how it
    /// arrived (its trace context resolved), to be recorded once when it ends.
    listens: Vec<(Session, Sink, Opened)>,
    table: Arc<Sessions>,
    readiness: &'s Readiness,
    /// Each request's duration, and its span.
    observer: Observer,
    last_look: Instant,
    /// Where the next tick's look at watched files starts.
    files: FileRounds,
    /// What a 2026-07-28 call's fresh session lends from the last one, as a stdio session keeps
    /// it: the result buffer and small arguments whose allocations the next call reuses.
    lent: Session,
    /// Where a response the loop writes itself is put together.
    scratch: Vec<u8>,
    /// What watches keep-alive connections with the queue, where they can be watched.
    watcher: Option<Box<dyn Watcher>>,
}

impl<'s> Dispatcher<'s> {
    pub fn new(
        server: &'s Server,
        rx: Receiver<Inbound>,
        table: Arc<Sessions>,
        readiness: &'s Readiness,
        observer: Observer,
        ask_timeout: Duration,
    ) -> Self {
        Dispatcher {
            server,
            rx,
            ask_timeout,
            sessions: HashMap::new(),
            listens: Vec::new(),
            table,
            readiness,
            observer,
            last_look: Instant::now(),
            files: FileRounds::default(),
            lent: Session::default(),
            scratch: Vec::new(),
            watcher: None,
        }
    }

    /// Waits on the connections `watcher` watches too.
    pub fn watching(mut self, watcher: Option<Box<dyn Watcher>>) -> Self {
        self.watcher = watcher;
        self
    }

    /// Gives the span exporter, if any, a moment to send what is queued.
    pub fn finish(self) {
        self.observer.finish();
    }

    /// Serves until `done` says so (checked every tick) or every sender is gone.
    pub fn run(&mut self, mut done: impl FnMut(&mut Self) -> bool) {
        loop {
            let next = match &mut self.watcher {
                Some(watcher) => watcher.next(&self.rx, self.readiness),
                None => self.rx.recv_timeout(TICK),
            };
            let next = match next {
                Recv::Item(work) => Some(work),
                Recv::TimedOut => None,
                Recv::Closed => return,
            };
            // Busy from here until the work is done: `/readyz` watches how long.
            if next.is_some() {
                self.readiness.busy();
            }
            match next {
                Some(Inbound::Call(call)) => {
                    let claim = call.direct.as_ref().map(|direct| direct.claim.clone());
                    self.call(call);
                    if let (Some(watcher), Some(claim)) = (&mut self.watcher, claim) {
                        watcher.settle(claim.line());
                    }
                }
                Some(Inbound::Message { session, body }) => self.message(session, &body),
                Some(Inbound::Stream { session, sink }) => {
                    // The newest GET stream receives; an older one ends (its sink is dropped).
                    self.sessions.entry(session).or_default().stream = Some(sink);
                }
                None => {}
            }
            self.readiness.idle();
            // A watcher's ticker says when a tick is due (the clock would read a hair short of
            // `TICK` when it wakes the loop); without one, the clock.
            let due = match &mut self.watcher {
                Some(watcher) => watcher.ticked(),
                None => self.last_look.elapsed() >= TICK,
            };
            if due {
                self.last_look = Instant::now();
                self.tick();
                if done(self) {
                    return;
                }
            }
        }
    }

    /// Ends every stream: listen streams get their completion result, GET streams end.
    pub fn end_streams(&mut self) {
        for (session, sink, opened) in self.listens.drain(..) {
            for id in session.streams() {
                let result = Ok(lifecycle::listen_complete(self.server, id));
                let version = session.stream_version(id);
                let result = shown_end(self.server, id, version, &opened, result);
                let mut body = Vec::new();
                Outbox::new(&mut body).response(Some(id), &result);
                sink.send(Out::Done(Some((200, body))));
                self.observer.listen_ended(id, &opened.0, version, &result);
            }
        }
        for legacy in self.sessions.values_mut() {
            legacy.stream = None;
        }
    }

    /// Expiry, closed listen streams, watched files.
    fn tick(&mut self) {
        self.table.expire();
        let table = &self.table;
        self.sessions.retain(|id, _| table.contains(id));
        let (observer, server) = (&mut self.observer, self.server);
        self.listens.retain(|(session, sink, opened)| {
            // A client that closes its stream cancels the subscription (the spec's way): it
            // ended well, with nothing more to say.
            let gone = sink.is_closed();
            for id in session.streams().filter(|_| gone) {
                let version = session.stream_version(id);
                let ended = shown_end(server, id, version, opened, Ok(Payload::Json(Vec::new())));
                observer.listen_ended(id, &opened.0, version, &ended);
            }
            !gone
        });
        let sessions = self.sessions.values_mut().map(|l| &mut l.state);
        self.files.look(sessions.chain(self.listens.iter_mut().map(|(s, _, _)| s)));
        // Each session watches the files it subscribed to itself, so it tells only its own
        // subscribers: a change is told once to each, whenever each looks.
        self.notify();
    }

    /// A client notification (or response nobody waits for) outside a wait.
    fn message(&mut self, session: Option<String>, body: &str) {
        log::debug!(target: LOG, "<- {}", crate::util::shown::escaped(body, false));
        let Some(legacy) = session.and_then(|id| self.sessions.get_mut(&id)) else { return };
        let observer = &self.observer;
        // The connection thread sends requests as calls: what needs a reply cannot be here.
        let mut handle = |message: Message| {
            let began = Instant::now();
            // Borrowed from the body: cloned without allocating, but for an escaped name.
            let method = match &message {
                Message::Notification { method, .. } => Some(method.clone()),
                _ => None,
            };
            drop(legacy.state.take_in(message));
            if let Some(method) = method {
                observer.notified(&method, began.elapsed());
            }
        };
        match jsonrpc::parse_line(body) {
            Frame::Single(message) => handle(message),
            Frame::Batch(items) => {
                items.iter().for_each(|item| handle(jsonrpc::parse_message(item)))
            }
        }
    }

    fn call(&mut self, call: Box<Call>) {
        if call.sink.is_closed() {
            log::info!(
                target: LOG,
                "dropped a request whose client went away before it was served",
            );
            return;
        }
        log::debug!(target: LOG, "<- {}", crate::util::shown::escaped(&call.body, false));
        let legacy_id = call.session.as_ref().map(|s| s.id.as_str()).filter(|_| !call.modern);
        let mut legacy = legacy_id.and_then(|id| self.sessions.remove(id)).unwrap_or_default();
        if legacy_id.is_none() {
            lend(&mut self.lent, &mut legacy.state);
        }
        let mut meta = None;
        let frame = call.frame(&mut meta);
        let mut waiter = Waiter {
            rx: &self.rx,
            table: &self.table,
            session: legacy_id,
            sink: &call.sink,
            sse: call.sse,
            modern: call.modern,
            readiness: self.readiness,
            timeout: self.ask_timeout,
            notified: Vec::new(),
        };
        let mut events = SinkWriter { sink: Some(&call.sink), buf: Vec::new() };
        let mut conn = Conn::with_inbox(&mut waiter, Outbox::new(&mut events))
            .with_principal(call.principal.as_deref())
            .with_trace(call.arrival.trace.as_ref());
        let (observer, arrival, tag) =
            (&mut self.observer, &call.arrival, legacy_id.map(session_tag));
        let mut watch = |served: &Served| observer.served(served, arrival, tag);
        let (server, state) = (self.server, &mut legacy.state);
        let (status, body) = match frame {
            Frame::Single(message) => {
                let reply = serve_message(server, message, state, &mut conn, Some(&mut watch));
                let _ = conn.out.flush();
                match reply {
                    Some((id, reply)) => {
                        let answer =
                            (status_of(call.modern, &reply), response(id.as_ref(), &reply));
                        keep_buffer(state, reply);
                        answer
                    }
                    None => (200, None),
                }
            }
            Frame::Batch(items) => {
                let replies = batch_replies(server, &items, state, &mut conn, Some(&mut watch));
                let _ = conn.out.flush();
                match replies {
                    Ok(replies) if replies.is_empty() => (202, None),
                    Ok(replies) => {
                        let mut body = Vec::new();
                        Outbox::new(&mut body).batch(&replies);
                        (200, Some(body))
                    }
                    Err(error) => (400, response_as(None, state.unread, &Err(error))),
                }
            }
        };
        drop(conn);
        for (method, took) in waiter.notified.drain(..) {
            self.observer.notified(&method, took);
        }
        if legacy_id.is_none() {
            lend(&mut legacy.state, &mut self.lent);
        }
        let updated = std::mem::take(&mut legacy.state.updated);
        if let Some(id) = legacy_id {
            if legacy.state.legacy_version.is_none() {
                // `initialize` failed: the id it was given is not a session.
                self.table.forget(id);
            } else if self.table.contains(id) {
                self.sessions.insert(id.to_string(), legacy);
            }
        } else if call.modern && body.is_none() && legacy.state.streams().next().is_some() {
            // `subscriptions/listen`: the request stays open as a stream.
            let opened = opened(&call);
            self.listens.push((legacy.state, call.sink.clone(), opened));
            self.broadcast(updated);
            return;
        }
        // Out of use before the client can see the answer and act on it.
        call.session.as_ref().map(Use::release);
        let done = body.map(|b| (status, b));
        match &call.direct {
            Some(direct) if !call.sink.is_closed() => {
                let made = legacy_id.filter(|id| direct.announce && self.table.contains(id));
                let closing = self.readiness.closing.load(Ordering::Relaxed);
                if let Some(unsent) = direct.answer(done, made, closing, &mut self.scratch) {
                    call.sink.send(unsent.into());
                }
            }
            _ => drop(call.sink.send(Out::Done(done))),
        }
        self.broadcast(updated);
    }

    /// Resources that changed go to every session subscribed to them: legacy sessions on
    /// their GET stream, listen streams on theirs.
    fn broadcast(&mut self, mut updated: Vec<String>) {
        if updated.is_empty() {
            return;
        }
        sort(&mut updated);
        updated.dedup();
        for session in self.sessions.values_mut().map(|l| &mut l.state) {
            session.updated.extend(updated.iter().cloned());
        }
        for (session, _, _) in &mut self.listens {
            session.updated.extend(updated.iter().cloned());
        }
        self.notify();
    }

    /// Sends each session's queued updates to its subscribers: legacy sessions on their GET
    /// stream, listen streams on theirs.
    fn notify(&mut self) {
        let targets = self
            .sessions
            .values_mut()
            .map(|l| (&mut l.state, l.stream.as_ref()))
            .chain(self.listens.iter_mut().map(|(s, k, _)| (s, Some(&*k))));
        for (session, sink) in targets.filter(|(s, _)| !s.updated.is_empty()) {
            let mut writer = SinkWriter { sink, buf: Vec::new() };
            let mut out = Outbox::new(&mut writer);
            session.notify_updates(&mut out);
            let _ = out.flush();
        }
    }
}

/// Moves what one session lends the next (its result buffer and kept arguments: allocations,
/// no state; and whether requests are logged, which the logger answers the same for all)
/// from `from` to `to`.
fn lend(from: &mut Session, to: &mut Session) {
    to.spare = std::mem::take(&mut from.spare);
    to.arguments = from.arguments.take();
    to.requests_logged = from.requests_logged;
}

/// How a `subscriptions/listen` call arrived, with the trace context its span and log line
/// will name when it ends (`_meta`'s, else its header's: read again, a listen is rare), and
/// who opened it. Its protocol version is its session's to say (`Session::stream_version`).
fn opened(call: &Call) -> Opened {
    let mut meta = None;
    let from_meta = match call.frame(&mut meta) {
        Frame::Single(Message::Request { params: ParamsField::Object(params), .. }) => {
            era::trace_context(params.meta)
        }
        _ => None,
    };
    let Arrival { received, transport, .. } = call.arrival;
    let trace = from_meta.or_else(|| call.arrival.trace.clone());
    (Arrival { received, trace, transport }, call.principal.clone())
}

/// How a listen stream arrived and who opened it ([`opened`]).
type Opened = (Arrival, Option<Arc<Principal>>);

/// `reply`, ending a listen stream of `version`, shown to `on_reply` ([`listen_ended`]).
fn shown_end(
    server: &Server,
    id: &Id,
    version: Option<&'static str>,
    opened: &Opened,
    reply: Reply,
) -> Reply {
    let version = version.unwrap_or(era::MODERN_VERSIONS[0]);
    let took = opened.0.received.elapsed();
    listen_ended(server, id, version, opened.1.as_deref(), reply, took)
}

/// One response as JSON bytes (logged at debug level by the outbox).
fn response(id: Option<&Id>, reply: &Reply) -> Option<Vec<u8>> {
    response_as(id, UnreadId::Null, reply)
}

/// [`response`], with an id that could not be read written as `unread` says.
fn response_as(id: Option<&Id>, unread: UnreadId, reply: &Reply) -> Option<Vec<u8>> {
    // Room for the envelope around a result already in JSON, so that it is not grown by
    // doubling (a third of the loop's allocator work went to that).
    let room = match reply {
        Ok(Payload::Json(json)) => json.len() + 64,
        _ => 256,
    };
    let mut body = Vec::with_capacity(room);
    let mut out = Outbox::new(&mut body);
    out.unread = unread;
    out.response(id, reply);
    Some(body)
}

/// 2026-07-28 maps some errors to HTTP statuses: an unknown method is 404, a missing client
/// capability or an unsupported version 400. Legacy errors travel in a 200.
fn status_of(modern: bool, reply: &Reply) -> u16 {
    match reply {
        Err(error) if modern && error.code == ErrorCode::METHOD_NOT_FOUND => 404,
        Err(error)
            if modern
                && matches!(
                    error.code,
                    ErrorCode::HEADER_MISMATCH
                        | ErrorCode::MISSING_CLIENT_CAPABILITY
                        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                ) =>
        {
            400
        }
        _ => 200,
    }
}

/// Whether queued work is a client message (a response or notification) of `session`.
fn of_session(session: &str) -> impl Fn(&Inbound) -> bool {
    move |work| matches!(work, Inbound::Message { session: Some(s), .. } if s == session)
}

/// The client messages a waiting legacy handler can use: those of its own session, taken out
/// of the loop's queue. The rest stays there, in order, within the queue's bounds (in items
/// and bytes), where a request whose client leaves can still be withdrawn.
struct Waiter<'d> {
    rx: &'d Receiver<Inbound>,
    table: &'d Sessions,
    session: Option<&'d str>,
    sink: &'d Sink,
    sse: bool,
    modern: bool,
    readiness: &'d Readiness,
    /// How long to wait for the client's answer (`--ask-timeout-secs`).
    timeout: Duration,
    /// The notifications taken in from here, for `/metrics` once the request is served: the
    /// observer is the request's own until then.
    notified: Vec<(String, Duration)>,
}

impl Inbox for Waiter<'_> {
    fn next(&mut self) -> Option<String> {
        // Without an event stream the server's request cannot reach the client.
        let session = self.session.filter(|_| self.sse)?;
        let ours = of_session(session);
        let deadline = Instant::now() + self.timeout;
        let mut seen = Seen::default();
        loop {
            // With its stream gone, the client cannot see the question, nor the result; with
            // its session deleted, its answer cannot reach us; a closing server (its drain
            // over) waits for no one (the handler hears `Disconnected` and finishes the
            // request).
            if self.sink.is_closed() || self.readiness.drained() {
                return None;
            }
            if !self.table.contains(session) {
                log::info!(
                    target: LOG,
                    "session {} ended while a request waited on its client",
                    session_tag(session),
                );
                return None;
            }
            match self.rx.recv_matching(&mut seen, &ours, TICK) {
                Recv::Item(Inbound::Message { body, .. }) => return Some(body),
                // Only a message of this session is taken.
                Recv::Item(_) => return None,
                Recv::TimedOut if Instant::now() >= deadline => {
                    log::warn!(
                        target: LOG,
                        "gave up waiting for the client's answer after {}s (--ask-timeout-secs)",
                        self.timeout.as_secs(),
                    );
                    return None;
                }
                Recv::TimedOut => {}
                Recv::Closed => return None,
            }
        }
    }

    fn can_ask(&self) -> bool {
        self.sse
    }

    /// A message of this session already in the loop's queue (a cancellation the client
    /// posted while the handler ran), without waiting.
    fn ready(&mut self) -> Option<String> {
        let ours = of_session(self.session?);
        match self.rx.recv_matching(&mut Seen::default(), ours, Duration::ZERO) {
            Recv::Item(Inbound::Message { body, .. }) => Some(body),
            _ => None,
        }
    }

    fn closed(&self) -> bool {
        // Legacy: "disconnection SHOULD NOT be interpreted as the client cancelling".
        self.modern && self.sink.is_closed()
    }

    fn notified(&mut self, method: &str, took: Duration) {
        self.notified.push((method.to_string(), took));
    }
}

/// The error a connection thread answers for a request it refuses before dispatch.
pub fn error_body(id: Option<&Id>, error: ErrorObject) -> Vec<u8> {
    response(id, &Err(error)).unwrap_or_default()
}

/// [`error_body`] of a refusal of `head`'s request: an id it could not read is left out when
/// its `MCP-Protocol-Version` names 2025-11-25 or later ([`era::unread_id`]), else `null`.
pub fn refusal_body(head: &Head, id: Option<&Id>, error: ErrorObject) -> Vec<u8> {
    let unread = era::unread_id(head.header("mcp-protocol-version"));
    response_as(id, unread, &Err(error)).unwrap_or_default()
}

#[cfg(test)]
#[path = "main_loop_tests.rs"]
mod tests;
