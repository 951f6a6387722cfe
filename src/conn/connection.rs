//! The connection: where input comes from (the reader, or lines set aside while a handler
//! ran), where output goes (the outbox), and the server's own requests to a legacy client
//! (elicitation, sampling, roots), answered on the same stream.
//!
//! The loop is single-threaded, so input is read only between requests, while a handler
//! waits for a client response, and when a handler asks whether it was cancelled (what is
//! already here). Then client requests are queued and served after the current one, in
//! order; notifications are handled at once (a cancel of the request in flight ends a wait);
//! the awaited response is handed to the handler.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::conn::outbox::Outbox;
use crate::conn::principal::Principal;
use crate::conn::session::Session;
use crate::util::poll::{RawFd, readable_within};
use crate::util::shown::Clipped;
use crate::util::trace_context::TraceContext;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{self, ErrorObject, Frame, Id, Message};
use crate::wire::lines::{Line, LineReader};
use crate::wire::params::ParamsField;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::conn";

/// Why asking the client for input did not produce an answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientError {
    /// The client did not declare the capability this needs (`elicitation`, `sampling`,
    /// `roots`): in `initialize` (legacy) or in this request's `_meta` (2026-07-28). In
    /// 2026-07-28 the request then fails with -32021 whatever the handler returns.
    Unsupported(&'static str),
    /// 2026-07-28: the answer is not in this request yet. Return; the client retries with it.
    InputRequired,
    /// The client answered with a JSON-RPC error.
    Rejected(ErrorObject),
    /// The request was cancelled while waiting; nothing more is sent for it.
    Cancelled,
    /// The client's input ended while waiting.
    Disconnected,
    /// Over HTTP, the request's `Accept` header rules out an event stream: a legacy server's
    /// request reaches its client only on the event stream answering the call (Streamable
    /// HTTP, 2025-03-26 to 2025-11-25), so nothing was asked.
    NoEventStream,
    /// The answer does not have the shape MCP defines.
    Invalid(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Unsupported(what) => write!(f, "the client does not support {what}"),
            ClientError::InputRequired => f.write_str("waiting for the client's input"),
            ClientError::Rejected(error) => write!(f, "the client refused: {error}"),
            ClientError::Cancelled => f.write_str("the request was cancelled"),
            ClientError::Disconnected => f.write_str("the client went away"),
            ClientError::NoEventStream => f.write_str(
                "the request's Accept header rules out an event stream, so the server cannot \
                 ask the client",
            ),
            ClientError::Invalid(why) => write!(f, "the client's answer is invalid: {why}"),
        }
    }
}

impl std::error::Error for ClientError {}

/// The client's answer to a request of the server's, as the handler gets it.
type Answer = Result<Value, ClientError>;

/// A line read during a wait, to be handled after the current request.
enum Queued {
    Line(Vec<u8>),
    /// An over-long line: its first bytes, for its id.
    TooLong(Vec<u8>),
}

/// Whether the next line is whole in `reader`'s buffer (or the input has ended), after at
/// most one read, made only when the input on `fd` is readable now, so that it cannot wait.
/// A line the client has only begun is left for the loop: reading on would hold the handler
/// until the client ends it. Elsewhere than unix readiness cannot be known: never. A failed
/// read is returned: the next one may not fail again (a reset socket reads as ended).
fn whole_after_one_read(reader: &mut dyn BufRead, fd: Option<RawFd>) -> io::Result<bool> {
    if !(cfg!(unix) && fd.is_some_and(|fd| readable_within(fd, Duration::ZERO))) {
        return Ok(false);
    }
    // A buffer that still holds a line's first bytes is handed back without a read.
    match reader.fill_buf() {
        Ok(buffered) => Ok(buffered.is_empty() || memchr::memchr(b'\n', buffered).is_some()),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
    }
}

/// While a handler waits on the client, at most this many lines are kept for later (and at
/// most the line limit in bytes); past either bound a line is replied to at once instead.
pub(crate) const MAX_QUEUED: usize = 1024;

/// Where client messages come from while a handler waits, when they are not lines of one
/// stream: over HTTP, each arrives in its own POST, and the dispatching loop hands over only
/// those of the waiting request's session.
pub(crate) trait Inbox {
    /// The next client message (a response or a notification), or `None` when no answer can
    /// come any more (the client went away, the wait timed out, the server is stopping).
    fn next(&mut self) -> Option<String>;
    /// A client message that is already here, without waiting.
    fn ready(&mut self) -> Option<String>;
    /// Whether a request of the server's can reach the client: over HTTP only on the event
    /// stream answering the call, which its `Accept` header may rule out.
    fn can_ask(&self) -> bool;
    /// Whether the request's client stopped listening, which cancels it (2026-07-28 over HTTP).
    fn closed(&self) -> bool;
    /// A notification was taken in while a request was served (from [`Inbox::next`] or
    /// [`Inbox::ready`], or in the request's batch): what the transport counts of
    /// notifications it reads itself.
    fn notified(&mut self, method: &str, took: Duration);
}

enum Input<'io> {
    Lines { reader: &'io mut dyn BufRead, lines: LineReader },
    Messages(&'io mut dyn Inbox),
}

pub(crate) struct Conn<'io> {
    input: Input<'io>,
    pub out: Outbox<'io>,
    queue: VecDeque<Queued>,
    /// The bytes of the lines in `queue`, bounded by `max_line` as the count is by
    /// [`MAX_QUEUED`].
    queued_bytes: usize,
    max_line: usize,
    /// Ids of the server's requests: `baremcp-1`, `baremcp-2`, ...
    next_request: u64,
    eof: bool,
    /// Why the input ended while a handler ran, if a read failed (waiting on the client, or
    /// reading ahead): the loop's next read reports the error, once the lines queued before
    /// it are served.
    read_error: Option<io::Error>,
    /// Who sends the input, when the transport authenticated it (HTTP).
    principal: Option<&'io Principal>,
    /// The trace context the transport carried beside the input (HTTP's `traceparent`).
    trace: Option<&'io TraceContext>,
    /// The input's descriptor, when it can be polled (stdio): lines the client sends while a
    /// handler runs are read when the handler asks whether it was cancelled.
    input_fd: Option<RawFd>,
}

impl<'io> Conn<'io> {
    pub fn new(reader: &'io mut dyn BufRead, out: Outbox<'io>, max_line: usize) -> Conn<'io> {
        let input = Input::Lines { reader, lines: LineReader::new(max_line) };
        Conn {
            input,
            out,
            queue: VecDeque::new(),
            queued_bytes: 0,
            max_line,
            next_request: 0,
            eof: false,
            read_error: None,
            principal: None,
            trace: None,
            input_fd: None,
        }
    }

    /// A connection whose client messages come from `inbox` (one request over HTTP).
    pub fn with_inbox(inbox: &'io mut dyn Inbox, out: Outbox<'io>) -> Conn<'io> {
        let input = Input::Messages(inbox);
        Conn {
            input,
            out,
            queue: VecDeque::new(),
            queued_bytes: 0,
            max_line: 0,
            next_request: 0,
            eof: false,
            read_error: None,
            principal: None,
            trace: None,
            input_fd: None,
        }
    }

    /// The same connection, its input sent by `principal`.
    pub fn with_principal(mut self, principal: Option<&'io Principal>) -> Conn<'io> {
        self.principal = principal;
        self
    }

    /// The same connection, its input read from descriptor `fd` (stdio), which can be polled.
    pub fn with_input_fd(mut self, fd: Option<RawFd>) -> Conn<'io> {
        self.input_fd = fd;
        self
    }

    /// The same connection, its input carried with `trace` (HTTP's `traceparent` header).
    pub fn with_trace(mut self, trace: Option<&'io TraceContext>) -> Conn<'io> {
        self.trace = trace;
        self
    }

    /// The trace context that came beside the input: a request's own `_meta` comes first.
    pub fn trace(&self) -> Option<&'io TraceContext> {
        self.trace
    }

    /// Who sends the input: `None` when the transport authenticates no one (stdio).
    pub fn principal(&self) -> Option<&'io Principal> {
        self.principal
    }

    /// Whether the client stopped listening for the request being served.
    pub fn closed(&self) -> bool {
        matches!(&self.input, Input::Messages(inbox) if inbox.closed())
    }

    /// The next input line into `line`: queued lines first, then the reader, or once the
    /// input ended, the error a read failed with while a handler ran.
    pub fn next_line(&mut self, line: &mut Vec<u8>) -> io::Result<Line> {
        match self.queue.pop_front() {
            Some(Queued::Line(bytes)) => {
                self.queued_bytes -= bytes.len();
                *line = bytes;
                Ok(Line::Complete)
            }
            Some(Queued::TooLong(head)) => {
                *line = head;
                Ok(Line::TooLong)
            }
            None if self.eof => self.read_error.take().map_or(Ok(Line::Eof), Err),
            None => match &mut self.input {
                Input::Lines { reader, lines } => lines.read(*reader, line),
                Input::Messages(_) => Ok(Line::Eof),
            },
        }
    }

    /// True when the next line is already whole in the reader's buffer (pipelined): output
    /// may wait for it, because the loop will not block before writing again. Lines set
    /// aside while a handler ran do not count: they came during a handler slow enough to
    /// look, and the next may be as slow, so what is written waits for no handler.
    pub fn input_waiting(&self) -> bool {
        matches!(&self.input, Input::Lines { lines, .. } if lines.next_is_here())
            && self.queue.is_empty()
    }

    /// Whether lines set aside while a handler ran wait to be served.
    pub fn set_aside(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Whether a request of the server's can reach the client now: not over HTTP when the
    /// request's `Accept` rules out the event stream that would carry it.
    pub fn can_ask(&self) -> bool {
        !matches!(&self.input, Input::Messages(inbox) if !inbox.can_ask())
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
        // Nothing would carry the question: the handler hears why, not that the client left.
        if !self.can_ask() {
            return Err(ClientError::NoEventStream);
        }
        session.waiting_on(current);
        let ours = self.send_request(method, params, current)?;
        let mut warned = false;
        loop {
            let line = self.read_while_waiting(&ours)?;
            if let Some(answer) =
                self.take_while_waiting(line, Some(&ours), session, Some(&mut warned))
            {
                return answer;
            }
            if session.is_cancelled() {
                return Err(ClientError::Cancelled);
            }
        }
    }

    /// Reads what the client has sent while the handler of `current` runs, without waiting
    /// for more: lines that are whole in the reader's buffer (after one read, if the input
    /// is readable now) while the queue has room, or over HTTP the messages of the request's
    /// session that wait in the loop's queue. As during [`Conn::ask`], notifications are
    /// taken in at once (a cancellation of `current` is seen now) and requests wait their
    /// turn.
    pub fn read_ahead(&mut self, session: &mut Session, current: &Id) {
        let mut noted = false;
        while !self.eof {
            // The queue takes every line read here: it may pass its byte bound by one.
            let room = self.queue.len() < MAX_QUEUED && self.queued_bytes < self.max_line;
            let mut line = Vec::new();
            let read = match &mut self.input {
                Input::Lines { reader, lines } => {
                    if !room {
                        return;
                    }
                    let whole = match lines.next_is_here() {
                        true => Ok(true),
                        false => whole_after_one_read(*reader, self.input_fd),
                    };
                    match whole {
                        Ok(true) => lines.read(*reader, &mut line),
                        Ok(false) => return,
                        Err(error) => Err(error),
                    }
                }
                // Over HTTP a session sends only responses and notifications this way.
                Input::Messages(inbox) => match inbox.ready() {
                    Some(text) => {
                        line = text.into_bytes();
                        Ok(Line::Complete)
                    }
                    None => return,
                },
            };
            // Only now, as noting it copies the id: a handler may ask at every step.
            if !std::mem::replace(&mut noted, true) {
                session.waiting_on(current);
            }
            match read {
                Ok(Line::Complete) => drop(self.take_while_waiting(line, None, session, None)),
                Ok(Line::TooLong) if !self.drops_response(&line) => {
                    self.queue.push_back(Queued::TooLong(line))
                }
                Ok(Line::TooLong) => {}
                Ok(Line::Eof) => self.eof = true,
                // Kept for the loop, as while waiting on the client: the loop's own next read
                // may not meet it again, and would take a reset connection for a clean end.
                Err(error) => {
                    self.eof = true;
                    self.read_error = Some(error);
                }
            }
        }
    }

    /// Writes the server's request and flushes it; returns its id, `"baremcp-N"`, never the
    /// id of the request being served.
    fn send_request(
        &mut self,
        method: &str,
        params: Value,
        current: &Id,
    ) -> Result<Id<'static>, ClientError> {
        self.next_request += 1;
        let mut id_text = format!("\"baremcp-{}\"", self.next_request);
        if id_text == current.as_json() {
            self.next_request += 1;
            id_text = format!("\"baremcp-{}\"", self.next_request);
        }
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id_text},"method":{},"params":{params}}}"#,
            json!(method)
        );
        self.out.raw_line(&request);
        self.out.flush().map_err(|_| ClientError::Disconnected)?;
        Id::from_raw(&id_text).map(Id::into_owned).ok_or(ClientError::Disconnected)
    }

    /// The next whole line read while a handler waits for the answer to `ours`. An over-long
    /// line on the way is queued by its head (or refused, past the queue's bound), but for a
    /// response, which gets no reply: the answer to `ours` is an invalid one, another is
    /// dropped. The end of input is the client gone, and so is a failed read (its error kept
    /// for the loop, which returns it).
    fn read_while_waiting(&mut self, ours: &Id) -> Result<Vec<u8>, ClientError> {
        loop {
            let mut line = Vec::new();
            let read = match &mut self.input {
                Input::Lines { reader, lines } => lines.read(*reader, &mut line),
                Input::Messages(inbox) => Ok(inbox.next().map_or(Line::Eof, |text| {
                    line = text.into_bytes();
                    Line::Complete
                })),
            };
            match read {
                Ok(Line::Complete) => return Ok(line),
                Ok(Line::TooLong) if self.drops_response(&line) => {
                    // Its id is read from its head, as a request's is for its error.
                    if Id::in_head(&line).is_some_and(|id| id == *ours) {
                        let max = self.max_line;
                        let why = format!("longer than the {max} bytes a message may take");
                        return Err(ClientError::Invalid(why));
                    }
                }
                Ok(Line::TooLong) if self.queue.len() < MAX_QUEUED => {
                    self.queue.push_back(Queued::TooLong(line))
                }
                Ok(Line::TooLong) => {
                    self.refuse(Id::in_head(&line).as_ref(), ErrorObject::too_large())
                }
                Ok(Line::Eof) => {
                    self.eof = true;
                    return Err(ClientError::Disconnected);
                }
                Err(error) => {
                    self.eof = true;
                    self.read_error = Some(error);
                    return Err(ClientError::Disconnected);
                }
            }
        }
    }

    /// Takes one line read while a handler waits: the response to `ours` ends the wait (its
    /// answer is returned); what gets no reply the session takes in at once, as between
    /// requests; requests and invalid messages wait in the queue for their turn, or past its
    /// bounds are replied to now (`warned`: whether that was logged yet). Without `warned`
    /// they always wait: [`Conn::read_ahead`] reads only while the queue has room.
    fn take_while_waiting(
        &mut self,
        line: Vec<u8>,
        ours: Option<&Id>,
        session: &mut Session,
        warned: Option<&mut bool>,
    ) -> Option<Result<Value, ClientError>> {
        let frame = match std::str::from_utf8(&line) {
            Ok(text) if text.trim_ascii().is_empty() => return None,
            Ok(text) => {
                log::debug!(target: LOG, "<- {}", crate::util::shown::escaped(text, false));
                match jsonrpc::parse_line(text) {
                    Frame::Single(Message::Response { id: Some(id) }) if Some(&id) == ours => {
                        return Some(answer(text));
                    }
                    Frame::Single(Message::BadResponse { id: Some(id) }) if Some(&id) == ours => {
                        return Some(Err(ClientError::Invalid(BAD_RESPONSE.into())));
                    }
                    Frame::Single(Message::Notification { method, params })
                        if method == "notifications/cancelled" =>
                    {
                        // Timed only where notifications are counted (HTTP).
                        let began = matches!(self.input, Input::Messages(_)).then(Instant::now);
                        if self.withdraw(&params, session) {
                            if let Some(began) = began {
                                self.notified(&method, began);
                            }
                            return None;
                        }
                        let cancel = Message::Notification { method, params };
                        Frame::Single(self.take_in(session, cancel)?)
                    }
                    Frame::Single(message) => Frame::Single(self.take_in(session, message)?),
                    // Only a session that has batches looks into one: elsewhere it is refused
                    // whole in its turn.
                    Frame::Batch(items) if session.takes_batches() => {
                        match self.look_into_batch(&items, ours, session) {
                            // What is left waits its turn in order, as a batch of its own.
                            Some((found, rest)) => {
                                if !rest.is_empty() {
                                    self.take_while_waiting(rest, None, session, warned);
                                }
                                return found;
                            }
                            None => Frame::Batch(items),
                        }
                    }
                    batch => batch,
                }
            }
            // Not UTF-8: a parse error, in its turn.
            Err(_) => {
                Frame::Single(Message::Invalid { id: None, error: ErrorObject::parse_error() })
            }
        };
        match warned {
            Some(warned) if !self.has_room(&line) => {
                if !std::mem::replace(warned, true) {
                    log::warn!(
                        target: LOG,
                        "{MAX_QUEUED} lines or {} bytes wait already: replying at once",
                        self.max_line,
                    );
                }
                self.refuse_frame(frame, session);
            }
            _ => self.enqueue(line),
        }
        None
    }

    /// Takes out of a batch read during a wait what would be taken at once as a message of
    /// its own: the response to `ours` (its answer is returned) and cancellations. `None` when
    /// nothing was, else the answer found and the rest of the batch (`[]` left out: empty).
    fn look_into_batch(
        &mut self,
        items: &[&str],
        ours: Option<&Id>,
        session: &mut Session,
    ) -> Option<(Option<Answer>, Vec<u8>)> {
        let (mut found, mut rest, mut took) = (None, Vec::new(), false);
        for item in items {
            let taken = match jsonrpc::parse_message(item) {
                Message::Response { id: Some(id) } if found.is_none() && Some(&id) == ours => {
                    found = Some(answer(item));
                    true
                }
                Message::BadResponse { id: Some(id) } if found.is_none() && Some(&id) == ours => {
                    found = Some(Err(ClientError::Invalid(BAD_RESPONSE.into())));
                    true
                }
                Message::Notification { method, params } if method == "notifications/cancelled" => {
                    if !self.withdraw(&params, session) {
                        self.take_in(session, Message::Notification { method, params });
                    }
                    true
                }
                _ => false,
            };
            took |= taken;
            if !taken {
                rest.push(if rest.is_empty() { b'[' } else { b',' });
                rest.extend_from_slice(item.as_bytes());
            }
        }
        if !rest.is_empty() {
            rest.push(b']');
        }
        took.then_some((found, rest))
    }

    /// Has `session` take in `message` as between requests (`None`: taken in; else what waits
    /// for its turn or a reply), telling a transport that counts notifications (HTTP,
    /// [`Inbox::notified`]) of one taken in while a request is served.
    pub(crate) fn take_in<'m>(
        &mut self,
        session: &mut Session,
        message: Message<'m>,
    ) -> Option<Message<'m>> {
        let counted = match &message {
            Message::Notification { method, .. } if matches!(self.input, Input::Messages(_)) => {
                Some((method.clone(), Instant::now()))
            }
            _ => None,
        };
        let waits = session.take_in(message);
        if let (None, Some((method, began))) = (&waits, counted) {
            self.notified(&method, began);
        }
        waits
    }

    /// Tells the transport a notification it handed over was taken in (`began`: when).
    fn notified(&mut self, method: &str, began: Instant) {
        if let Input::Messages(inbox) = &mut self.input {
            inbox.notified(method, began.elapsed());
        }
    }

    /// A cancellation of a request that waits in the queue, not yet begun, withdraws it: it
    /// is never served and gets no response. True when one was withdrawn.
    fn withdraw(&mut self, params: &ParamsField, session: &Session) -> bool {
        let cancelled = params.object().and_then(|p| p.request_id).and_then(Id::from_raw);
        let Some(id) = cancelled.filter(|id| session.in_flight() != Some(id)) else {
            return false;
        };
        let waiting = |queued: &Queued| match queued {
            // The id is read from the line's first bytes, as for an over-long line.
            Queued::Line(line) => Id::in_head(line).is_some_and(|queued| queued == id),
            Queued::TooLong(_) => false,
        };
        let Some(Queued::Line(line)) =
            self.queue.iter().position(waiting).and_then(|at| self.queue.remove(at))
        else {
            return false;
        };
        self.queued_bytes -= line.len();
        log::debug!(target: LOG, "withdrew request {}: cancelled before it began", Clipped(id.as_json()));
        true
    }

    /// Whether `line` may wait in the queue: within [`MAX_QUEUED`] lines and `max_line` bytes
    /// (an empty queue takes any line, which is already within the line limit).
    fn has_room(&self, line: &[u8]) -> bool {
        self.queue.is_empty()
            || self.queue.len() < MAX_QUEUED && self.queued_bytes + line.len() <= self.max_line
    }

    fn enqueue(&mut self, line: Vec<u8>) {
        self.queued_bytes += line.len();
        self.queue.push_back(Queued::Line(line));
    }

    /// Replies to a line read during a wait that cannot be queued: each request with "server
    /// busy" and its id, each invalid message with its own error; notifications (in a batch)
    /// are handled as any other during a wait.
    fn refuse_frame(&mut self, frame: Frame, session: &mut Session) {
        let mut text = Vec::new();
        let mut refuse = |message: Message| {
            let (id, error) = match session.take_in(message) {
                Some(Message::Request { id, .. }) => (Some(id), ErrorObject::busy()),
                Some(Message::Invalid { id, error }) => (id, error),
                _ => return,
            };
            if !text.is_empty() {
                text.push(b',');
            }
            // Writing to a `Vec` cannot fail.
            let unread = session.unread;
            let _ = jsonrpc::write_response_as(&mut text, id.as_ref(), unread, &Err(error), b"}");
        };
        let batch = matches!(frame, Frame::Batch(_));
        match frame {
            Frame::Single(message) => refuse(message),
            Frame::Batch(items) => {
                items.iter().for_each(|item| refuse(jsonrpc::parse_message(item)))
            }
        }
        if batch {
            self.out.batch(&text);
        } else if !text.is_empty() {
            self.out.raw_line(&String::from_utf8_lossy(&text));
        }
        self.out.push();
    }

    /// Whether an over-long line (`head`: its first bytes) is a response from the client,
    /// which is never replied to, even when it cannot be read: it is dropped (logged here).
    pub fn drops_response(&self, head: &[u8]) -> bool {
        let response = jsonrpc::response_in_head(head);
        if response {
            let id = Id::in_head(head).map_or("null".into(), |id| id.to_string());
            log::warn!(
                target: LOG,
                "discarded a response to {id} longer than {} bytes",
                self.max_line,
            );
        }
        response
    }

    /// Replies at once to a line that cannot be queued, with the id it could read (if any).
    fn refuse(&mut self, id: Option<&Id>, error: ErrorObject) {
        self.out.response(id, &Err(error));
        self.out.push();
    }
}

/// Why a malformed answer to the server's request is invalid.
const BAD_RESPONSE: &str = "not one JSON-RPC 2.0 response (a member named twice, result and error both, or a wrong jsonrpc)";

/// The result of a client response, or its error as the handler sees it.
fn answer(text: &str) -> Result<Value, ClientError> {
    let mut message: Value = serde_json::from_str(text)
        .map_err(|_| ClientError::Invalid("unreadable response".into()))?;
    // Taken out, not copied: a result can be as large as a message.
    if let Some(result) = message.get_mut("result") {
        return Ok(result.take());
    }
    let mut error = message["error"].take();
    Err(ClientError::Rejected(ErrorObject {
        code: ErrorCode(error["code"].as_i64().unwrap_or(0)),
        message: error["message"].as_str().unwrap_or("").to_string(),
        data: error.get_mut("data").map(Value::take),
    }))
}
