//! One connection thread: reads requests off one socket, refuses what it can on its own
//! (limits, Host/Origin, authentication, HTTP method, media types, the era's header rules,
//! unknown sessions, client notifications → 202), hands the rest to the dispatching loop,
//! and writes what comes back: one JSON body, or an event stream when notifications or
//! server requests come before the response.

use std::collections::HashMap;
use std::io::Write;
use std::net::{IpAddr, Shutdown};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::conn::principal::Principal;
use crate::transport::http::body_budget::BodyBudget;
use crate::transport::http::cors;
use crate::transport::http::direct::{Claim, Direct, DirectLine};
use crate::transport::http::guard::Guard;
use crate::transport::http::headers;
use crate::transport::http::main_loop::{Inbound, Out, error_body, refusal_body};
use crate::transport::http::negotiation;
use crate::transport::http::parser::{BodyKind, Head, Limits, ReadError, Reader};
use crate::transport::http::peer_table::{Kind, Peers, Slot};
use crate::transport::http::probes;
use crate::transport::http::readiness::Readiness;
use crate::transport::http::response::Response;
use crate::transport::http::session_table::{Sessions, session_tag};
use crate::transport::http::socket::{Socket, Stream};
use crate::transport::telemetry::observer::Arrival;
use crate::transport::telemetry::server_metrics::{Refusal, ServerMetrics};
use crate::util::log_answer::LogAnswer;
use crate::util::queue::{Receiver, Sender, Ticket};
use crate::util::trace_context::TraceContext;
use crate::wire::carried::Parsed;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{self, ErrorObject, Frame, Id, Message};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::connection";

/// How often a waiting connection looks whether its client is still there.
pub(super) const POLL: Duration = Duration::from_millis(250);
/// A write that takes longer than this ends the connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// What every connection thread shares.
pub struct Shared {
    pub guard: Guard,
    pub table: Arc<Sessions>,
    /// What each peer holds open.
    pub peers: Arc<Peers>,
    /// To the dispatching loop; bodies count against its byte bound while they wait.
    pub tx: Sender<Inbound>,
    pub limits: Limits,
    /// The bytes of the bodies being read, across connections.
    pub bodies: BodyBudget,
    pub path: String,
    pub keepalive: Duration,
    /// Set when the server closes: finish the current request (and one already sent after a
    /// response that said the connection stays open), then close.
    pub stop: Arc<AtomicBool>,
    /// Draining, closing, stalled: what `/readyz` answers.
    pub readiness: Arc<Readiness>,
    /// What `/metrics` serves; connection threads count connections, streams and refusals.
    pub metrics: Arc<ServerMetrics>,
    /// RFC 9728 metadata: the paths it is served at, and the document.
    pub metadata: Option<(Vec<String>, Vec<u8>)>,
    /// Tools whose arguments are mirrored into `Mcp-Param-{Name}` headers (`x-mcp-header`):
    /// tool name → each header and the property path of its argument. Read from the
    /// registry before serving; the tool list never changes while it serves.
    pub param_headers: HashMap<String, Vec<crate::registry::param_header::ParamHeader>>,
    /// Where connections wait between requests, watched by the dispatching loop (`park.rs`,
    /// Linux); `None` where it cannot watch them.
    pub dock: Option<Arc<dyn Dock>>,
}

/// Where a connection thread leaves its connection between requests, for the dispatching
/// loop to watch.
pub trait Dock: Send + Sync {
    /// Parks `exchange` and sleeps until it comes back: the connection, and where to take it up.
    fn park(&self, exchange: Box<Exchange>) -> (Box<Exchange>, Resume);
    /// Gives back the connections whose threads should have them (`idle`: those idle too);
    /// whether any connection is parked.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn sweep(&self, shared: &Shared, idle: bool) -> bool;
    /// Sleeps up to `timeout`, or until a connection parks, while none is parked.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn doze(&self, timeout: Duration);
}

/// Serves one connection from `peer` (at `ip`, for TCP) until it closes, idles out or
/// breaks a rule. Between requests the dispatching loop may watch it instead (`park`).
pub fn serve(shared: Arc<Shared>, stream: Stream, peer: String, ip: Option<IpAddr>) {
    stream.set_nodelay();
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let writer = Socket::new(stream);
    let reader = Reader::new(writer.clone());
    let mut exchange = Box::new(Exchange {
        shared,
        reader,
        writer,
        peer,
        ip,
        cors: None,
        received: Instant::now(),
        listening: false,
        requests: false,
        line: None,
        line_tried: false,
        answered: None,
        parks: false,
        on_loop: false,
        unsent: Vec::new(),
        handoff: None,
        id: String::new(),
        logs: LogAnswer::default(),
    });
    let mut resume = Resume::Read;
    loop {
        let (head, started, outcome) = match resume {
            Resume::Read => match exchange.read() {
                Ok(read) => read,
                Err(ReadError::Closed) => return,
                Err(ReadError::Status(status, why)) => return exchange.refused(status, why),
            },
            Resume::Expired => return,
            Resume::Refused(status, why) => return exchange.refused(status, why),
            Resume::Request(begun) => {
                let (head, started, step) = *begun;
                let outcome = exchange.take_up(&head, step);
                (head, started, outcome)
            }
        };
        if !exchange.after(head, started, outcome) {
            return;
        }
        resume = Resume::Read;
        if let Some(dock) = exchange.parking() {
            (exchange, resume) = dock.park(exchange);
        }
    }
}

/// Where a connection thread takes up its connection again when the dispatching loop gives
/// it back (`park`, Linux: elsewhere the thread only ever reads on).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) enum Resume {
    /// Read the next request: none of it was read.
    Read,
    /// Close: the connection sat idle for `--idle-timeout-secs`.
    Expired,
    /// Refuse the head the loop began to read, and close.
    Refused(u16, &'static str),
    /// Finish a request the loop took this far: its head, when it was read, what is left.
    Request(Begun),
}

/// A request the dispatching loop began: its head, when it was read, and what is left.
pub(super) type Begun = Box<(Head, Instant, Step)>;

/// What is left of a request the dispatching loop began (see [`Resume`]).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(super) enum Step {
    /// Route its message: a listen, whose stream is the thread's to hold.
    Message { principal: Option<Arc<Principal>>, text: String, sse_ok: bool },
    /// Write what the loop sends back for it.
    Pump {
        handed: Handed,
        sse_ok: bool,
        headers: Vec<(&'static str, String)>,
        name: Option<String>,
        claim: Option<Claim>,
    },
    /// Write the bytes of its response the socket did not take, then go on as after it.
    Finish(Outcome, Vec<u8>),
    /// Serve it from its head on: its token's signature is yet to be checked.
    Request,
}

pub(super) struct Exchange {
    pub shared: Arc<Shared>,
    pub reader: Reader,
    pub writer: Socket,
    pub peer: String,
    ip: Option<IpAddr>,
    /// The request's `Origin` when `--allow-origin` names it: its responses get CORS headers.
    cors: Option<String>,
    /// When the request's head had been read.
    pub received: Instant,
    /// The request is a `subscriptions/listen`: its event stream is counted as one.
    pub listening: bool,
    /// The body holds a request: its POST is answered with an event stream or JSON even when
    /// no response comes (a cancelled request), never `202`.
    pub requests: bool,
    /// How the loop writes responses itself, made at the first request it may (`None` before,
    /// and where it cannot).
    pub line: Option<Arc<DirectLine>>,
    /// Whether `line` was tried for: without a descriptor for it, not tried again.
    line_tried: bool,
    /// When the loop wrote the last response itself: the connection thread learns it later.
    pub answered: Option<Instant>,
    /// The loop wrote the last response itself: a client of plain calls, whose connection the
    /// loop may watch between requests.
    parks: bool,
    /// The dispatching loop is reading this request (`park`): nothing may wait, so responses
    /// go to `unsent`, and what would wait is left in `handoff` for the thread.
    pub on_loop: bool,
    /// What the loop wrote for the request, for it to send.
    pub unsent: Vec<u8>,
    /// The rest of a request begun on the loop that its thread must finish.
    pub handoff: Option<Step>,
    /// Whether request lines are logged (at info; off, debug is too).
    logs: LogAnswer,
    /// The id of the request being served, as its JSON text (empty: none, or a batch), so that
    /// a refusal after its body went to the loop still names it; a buffer kept, so keeping it
    /// allocates nothing.
    id: String,
}

/// What one request came to: the status, the session it used, and whether the connection
/// can carry another request.
pub(super) type Outcome = (u16, Option<String>, bool);

impl Exchange {
    /// Reads the next request and answers it (or, on the loop, goes as far as it may).
    pub(super) fn read(&mut self) -> Result<(Head, Instant, Outcome), ReadError> {
        let head = self.reader.head(&self.shared.limits, &self.shared.stop)?;
        let started = Instant::now();
        self.received = started;
        let outcome = self.request(&head);
        Ok((head, started, outcome))
    }

    /// Refuses a head that could not be read, and closes.
    fn refused(&mut self, status: u16, why: &str) {
        self.shared.metrics.refused(Refusal::of_status(status));
        log::info!(target: LOG, "{} - - {status} ({why})", self.peer);
        let mut response = refusal(status, why).closing();
        response.head_only = self.reader.head_request;
        let _ = response.write(&mut self.writer, 1, 0);
        self.writer.linger(&self.shared.stop);
    }

    /// Finishes what the loop left of a request.
    fn take_up(&mut self, head: &Head, step: Step) -> Outcome {
        // What the loop wrote before it stopped (a `100 Continue`) goes first.
        if !self.unsent.is_empty() {
            let unsent = std::mem::take(&mut self.unsent);
            let _ = self.writer.write_all(&unsent);
        }
        match step {
            Step::Message { principal, text, sse_ok } => {
                self.message(head, principal, text, sse_ok)
            }
            Step::Pump { handed, sse_ok, headers, name, claim } => {
                self.pump(head, handed, sse_ok, headers, name, claim)
            }
            Step::Finish((status, name, reuse), rest) => {
                let written = self.writer.write_all(&rest).is_ok();
                (status, name, reuse && written)
            }
            Step::Request => self.request(head),
        }
    }

    /// Logs a request, then keeps the connection for the next (true) or closes it.
    pub(super) fn after(&mut self, head: Head, started: Instant, outcome: Outcome) -> bool {
        let (status, session, reuse) = outcome;
        let answered = self.answered.take();
        self.parks = answered.is_some();
        let took = answered.unwrap_or_else(Instant::now) - started;
        // A balancer asks its probes every second or so: their lines are for debugging.
        let level =
            if probes::is_probe(head.path()) { log::Level::Debug } else { log::Level::Info };
        if self.logs.get(|| log::log_enabled!(target: LOG, log::Level::Info)) {
            log::log!(
                target: LOG,
                level,
                "{} {} {} {status} session={} {}ms",
                self.peer,
                head.method(),
                head.path(),
                session.as_deref().map_or("-", session_tag),
                took.as_millis()
            );
        }
        // Stopping, a connection whose last response said it stays open is not closed at
        // once: a request the client sent on it in the meantime is read, and answered with
        // `Connection: close` (the dispatching loop may have written that response before
        // the stop, while the connection thread only learns of it now). With none under way,
        // reading the next head ends it at once.
        if !reuse || !head.keep_alive {
            self.writer.linger(&self.shared.stop);
            return false;
        }
        self.reader.recycle(head);
        true
    }

    /// Where the dispatching loop may watch the connection until its next request: its last
    /// response the loop wrote itself, and nothing of the next has been read.
    fn parking(&self) -> Option<Arc<dyn Dock>> {
        let idle = self.reader.inner.buffer().is_empty() && self.line.is_some();
        let dock = self.shared.dock.as_ref().filter(|_| self.parks && idle);
        dock.filter(|_| !self.shared.stop.load(Ordering::Relaxed)).cloned()
    }

    fn request(&mut self, head: &Head) -> Outcome {
        self.id.clear();
        let shared = self.shared.clone();
        // An unread body would be taken for the next request: refusals close instead.
        let unread = unread(head);
        let host_ok = match head.header("host") {
            Some(host) => shared.guard.host_allowed(host),
            None => head.minor == 0,
        };
        self.cors = None;
        // Before the Host check: balancers and orchestrators probe with a Host of their own.
        if let Some(answer) = probes::probe(head.path(), &shared.readiness) {
            return self.read_only(head, answer, unread);
        }
        if !host_ok {
            return self.refuse(head, Refusal::Host, 403, "host not allowed", unread);
        }
        // Metadata is public: it carries `Access-Control-Allow-Origin: *`, for any page, so
        // it is answered before the Origin check (it reads nothing and changes nothing).
        if let Some((paths, document)) = &shared.metadata
            && paths.iter().any(|p| p == head.path())
        {
            let response =
                Response::json(200, document.clone()).header("Access-Control-Allow-Origin", "*");
            return self.read_only(head, response, unread);
        }
        if let Some(origin) = head.header("origin")
            && !shared.guard.origin_allowed(origin)
        {
            return self.refuse(head, Refusal::Origin, 403, "origin not allowed", unread);
        }
        // `/metrics` passes the endpoint's checks: Host, Origin, authentication.
        let metrics = head.path() == probes::METRICS;
        if head.path() != shared.path && !metrics {
            let why = format!("no such endpoint: MCP is served at {}", shared.path);
            return self.refuse(head, Refusal::NotFound, 404, &why, unread);
        }
        self.cors =
            head.header("origin").filter(|o| shared.guard.cors_allowed(o)).map(String::from);
        // A browser's preflight carries no credentials: answered before authentication.
        if head.method() == "OPTIONS"
            && head.header("access-control-request-method").is_some()
            && let Some(origin) = self.cors.take()
        {
            return self.send(head, cors::preflight(head, &origin), None, unread);
        }
        let authorization = head.header("authorization");
        let authorized = match self.on_loop {
            true => shared.guard.authorize_known(authorization),
            false => Some(shared.guard.authorize(authorization)),
        };
        let Some(authorized) = authorized else {
            // A signature to check: its thread checks it, not the loop every client waits on.
            self.handoff = Some(Step::Request);
            return (0, None, false);
        };
        let principal = match authorized {
            Ok(principal) => principal,
            Err(denied) => {
                let reason = match denied.status() {
                    403 => Refusal::InsufficientScope,
                    _ => Refusal::Unauthorized,
                };
                shared.metrics.refused(reason);
                log::info!(target: LOG, "{} refused: {denied}", self.peer);
                let response = refusal(denied.status(), denied.message())
                    .header("WWW-Authenticate", shared.guard.challenge(&denied));
                return self.send(head, response, None, unread);
            }
        };
        if metrics {
            return self.read_only(head, probes::metrics(&shared.metrics, &shared.tx), unread);
        }
        match head.method() {
            "POST" => self.post(head, principal),
            "GET" | "DELETE" => {
                if unread {
                    let why = "a body is not expected here";
                    return self.refuse(head, Refusal::BadHttp, 400, why, true);
                }
                if head.method() == "GET" {
                    self.get(head, principal)
                } else {
                    self.delete(head, principal)
                }
            }
            _ => {
                shared.metrics.refused(Refusal::MethodNotAllowed);
                let response =
                    refusal(405, "method not allowed").header("Allow", "GET, POST, DELETE");
                self.send(head, response, None, unread)
            }
        }
    }

    /// Answers with a JSON-RPC error saying `why`, counted as refused for `reason`.
    pub fn refuse(
        &mut self,
        head: &Head,
        reason: Refusal,
        status: u16,
        why: &str,
        close: bool,
    ) -> Outcome {
        let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, why);
        self.refuse_with(head, reason, status, error, close)
    }

    /// Answers `error` with `status`, counted as refused for `reason`: with the id of the
    /// request being served, once its body was read and held one. An id that cannot be read (a
    /// head refused, a batch, a notification) is JSON-RPC's `null`, or left out where the
    /// request's `MCP-Protocol-Version` is 2025-11-25 or later (`refusal_body`).
    pub fn refuse_with(
        &mut self,
        head: &Head,
        reason: Refusal,
        status: u16,
        error: ErrorObject,
        close: bool,
    ) -> Outcome {
        self.shared.metrics.refused(reason);
        let body = refusal_body(head, Id::from_raw(&self.id).as_ref(), error);
        let mut response = Response::json(status, body);
        // Busy is for now: the queue or the bodies being read drain within seconds. A peer's
        // streams end as its clients let go of them.
        match reason {
            Refusal::Busy => response = response.header("Retry-After", "1"),
            Refusal::PeerLimit => response = response.header("Retry-After", "5"),
            _ => {}
        }
        self.send(head, response, None, close)
    }

    /// `response` to GET or HEAD ([`Head::is_read`]); any other method is `405`.
    fn read_only(&mut self, head: &Head, response: Response, unread: bool) -> Outcome {
        if head.is_read() {
            return self.send(head, response, None, unread);
        }
        self.shared.metrics.refused(Refusal::MethodNotAllowed);
        let response = refusal(405, "this path is read with GET").header("Allow", "GET, HEAD");
        self.send(head, response, None, unread)
    }

    /// Writes `response` (only its head for a HEAD request, and with CORS headers for an
    /// allowed page).
    pub fn send(
        &mut self,
        head: &Head,
        mut response: Response,
        session: Option<String>,
        close: bool,
    ) -> Outcome {
        if let Some(origin) = &self.cors {
            response.headers.extend(cors::response_headers(origin));
        }
        response.head_only = self.reader.head_request;
        response.close |= close || self.closing(head);
        let idle = self.shared.limits.idle.as_secs();
        let written = match self.on_loop {
            // The loop sends it without waiting, and leaves the rest to the thread.
            true => response.write(&mut self.unsent, head.minor, idle),
            false => response.write(&mut self.writer, head.minor, idle),
        };
        (response.status, session, written.is_ok() && !response.close)
    }

    fn post(&mut self, head: &Head, principal: Option<Arc<Principal>>) -> Outcome {
        if !negotiation::is_json(head.header("content-type")) {
            return self.refuse(
                head,
                Refusal::UnsupportedMediaType,
                415,
                "content-type must be application/json",
                unread(head),
            );
        }
        let (json_ok, sse_ok) = negotiation::accepts(head.list("accept").as_deref());
        if !json_ok && !sse_ok {
            return self.refuse(
                head,
                Refusal::NotAcceptable,
                406,
                "accept must admit application/json or text/event-stream",
                true,
            );
        }
        if head.body == BodyKind::None {
            let status = if head.header("content-length").is_some() { 400 } else { 411 };
            let why = "a POST needs a JSON-RPC message as its body";
            return self.refuse(head, Refusal::of_status(status), status, why, false);
        }
        if head.list_has("expect", "100-continue") && head.minor == 1 {
            const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
            match self.on_loop {
                true => self.unsent.extend_from_slice(CONTINUE),
                false => drop(self.writer.write_all(CONTINUE)),
            }
        }
        let body = match self.reader.body(head, &self.shared.limits, &self.shared.bodies) {
            Ok(body) => body,
            Err(ReadError::Closed) => return (400, None, false),
            Err(ReadError::Status(status, why)) => {
                if status == 503 {
                    let budget = super::INBOUND_BYTES >> 20;
                    log::warn!(target: LOG, "{} refused: {why} ({budget} MiB)", self.peer);
                }
                return self.refuse(head, Refusal::of_status(status), status, why, true);
            }
        };
        let Ok(text) = String::from_utf8(body) else {
            let body = refusal_body(head, None, ErrorObject::parse_error());
            return self.send(head, Response::json(400, body), None, false);
        };
        self.message(head, principal, text, sse_ok)
    }

    /// Routes one POSTed message by era: a 2026-07-28 request goes to the loop at once; a
    /// legacy message belongs to a session, a request as a call and anything else as a
    /// notification.
    fn message(
        &mut self,
        head: &Head,
        principal: Option<Arc<Principal>>,
        text: String,
        sse_ok: bool,
    ) -> Outcome {
        let frame = jsonrpc::parse_line(&text);
        if let Frame::Single(Message::Request { id, .. }) = &frame {
            self.id.push_str(id.as_json());
        }
        self.requests = match &frame {
            Frame::Single(message) => matches!(message, Message::Request { .. }),
            Frame::Batch(items) => items
                .iter()
                .any(|item| matches!(jsonrpc::parse_message(item), Message::Request { .. })),
        };
        let (modern, meta) = match headers::era(head, &frame, &self.shared.param_headers) {
            Ok(era) => era,
            Err((reason, status, body)) => {
                self.shared.metrics.refused(reason);
                return self.send(head, Response::json(status, body), None, false);
            }
        };
        // Kept for the loop, which then reads it (and `_meta`, as the header checks read it)
        // without parsing the body again.
        let parsed = match &frame {
            Frame::Single(message) => Parsed::of(&text, message, meta),
            Frame::Batch(_) => None,
        };
        if modern {
            let listen = matches!(&frame, Frame::Single(Message::Request { method, .. }) if method == "subscriptions/listen");
            if listen && self.on_loop {
                self.handoff = Some(Step::Message { principal, text, sse_ok });
                return (0, None, false);
            }
            if listen && !sse_ok {
                // Its answer is an event stream that stays open: a client that takes JSON
                // alone could never read it.
                let why = "subscriptions/listen needs accept: text/event-stream";
                let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, why);
                return self.refuse_with(head, Refusal::NotAcceptable, 406, error, false);
            }
            // A listen request stays open: a long-lived stream, counted as one.
            let stream = match listen.then(|| self.open_stream(head)) {
                Some(Err(refused)) => return refused,
                Some(Ok(slot)) => slot,
                None => None,
            };
            self.listening = listen;
            let outcome = self.call(head, (text, parsed), sse_ok, principal, None);
            self.listening = false;
            drop(stream);
            return outcome;
        }
        let is_request = matches!(frame, Frame::Single(Message::Request { .. }) | Frame::Batch(_));
        let (session, created) = match self.legacy_session(head, principal.clone(), &frame) {
            Ok(found) => found,
            Err(answered) => return answered,
        };
        if is_request {
            self.call(head, (text, parsed), sse_ok, principal, Some((session, created)))
        } else {
            let malformed = matches!(frame, Frame::Single(Message::BadResponse { .. }));
            self.notify(head, session, text, malformed)
        }
    }

    /// What the loop needs to write this request's response itself, when it may: not for a
    /// listen (its stream stays open) nor a connection that closes after it (its close is the
    /// connection thread's to make). `announce`: the request creates a legacy session.
    pub(super) fn direct(&mut self, head: &Head, announce: bool) -> Option<Direct> {
        if self.listening || self.closing(head) {
            return None;
        }
        if !self.line_tried {
            self.line_tried = true;
            self.line = DirectLine::new(self.writer.clone());
        }
        let cors = self.cors.as_deref().map_or_else(Vec::new, |o| cors::response_headers(o).into());
        Some(Direct {
            claim: self.line.as_ref()?.arm(),
            minor: head.minor,
            keep_alive_secs: self.shared.limits.idle.as_secs(),
            cors,
            announce,
            requests: self.requests,
        })
    }

    /// How the request reached the loop: when, with which HTTP trace context, over what.
    pub(super) fn arrival(&self, head: &Head) -> Arrival {
        // Several `tracestate` lines are one list (W3C Trace Context §3.3.1, RFC 9110 §5.3),
        // looked for only with a `traceparent`.
        let trace = head
            .header("traceparent")
            .and_then(|parent| TraceContext::parse(parent, head.list("tracestate").as_deref()));
        Arrival {
            received: self.received,
            trace,
            transport: if self.ip.is_some() { "tcp" } else { "unix" },
        }
    }

    /// The headers an event stream's head carries beside its own: CORS for an allowed page.
    pub(super) fn stream_headers(&self) -> Vec<(&'static str, String)> {
        self.cors.as_deref().map_or_else(Vec::new, |origin| cors::response_headers(origin).into())
    }

    /// Whether a response starting now ends its connection: the client asked so, or the
    /// server is stopping (a client told so sends no more requests on it).
    pub fn closing(&self, head: &Head) -> bool {
        !head.keep_alive || self.shared.stop.load(Ordering::Relaxed)
    }

    /// Counts a long-lived stream against its peer; past `--max-streams-per-peer`, answers
    /// 429 (`Err`) with the listen request's `id`.
    pub(super) fn open_stream(&mut self, head: &Head) -> Result<Option<Slot>, Outcome> {
        self.shared.peers.open(self.ip, Kind::Stream).map_err(|cap| {
            log::warn!(
                target: LOG,
                "{} refused a stream: {cap} open from its address (--max-streams-per-peer)",
                self.peer,
            );
            let why = "too many streams open from this address";
            self.refuse(head, Refusal::PeerLimit, 429, why, false)
        })
    }
}

impl Drop for Exchange {
    /// The loop may still hold the socket, for a request it has not finished (its client
    /// left): the connection is closed now all the same, not when the loop lets go.
    fn drop(&mut self) {
        if self.line.as_ref().is_some_and(|line| Arc::strong_count(line) > 1) {
            self.writer.shutdown(Shutdown::Both);
        }
    }
}

/// What [`Exchange::hand_over`] gives back: the sink's receiving end, its closed flag, the
/// ticket that withdraws the work from the loop's queue while it waits there.
pub(super) struct Handed {
    pub rx: Receiver<Out>,
    pub closed: Arc<AtomicBool>,
    pub ticket: Ticket,
}

/// A refusal: `status` with a JSON-RPC error without id saying `why`.
pub fn refusal(status: u16, why: &str) -> Response {
    Response::json(status, error_body(None, ErrorObject::new(ErrorCode::INVALID_REQUEST, why)))
}

/// Whether `head` has a body to read: `Content-Length: 0` (Python's `requests`' DELETE) is none.
fn unread(head: &Head) -> bool {
    !matches!(head.body, BodyKind::None | BodyKind::Length(0))
}
