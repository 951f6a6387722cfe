//! A request handed to the dispatching loop, and what the loop sends back for it written to
//! its client: one JSON body when the response comes first, else an event stream (counted in
//! `/metrics` while it is open) that ends with the response, with keep-alive comments while
//! the client waits.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::conn::principal::Principal;
use crate::transport::http::direct::{Claim, DirectLine, Mode, Rest};
use crate::transport::http::exchange::{Exchange, Handed, Outcome, POLL, Step};
use crate::transport::http::main_loop::{Call, Inbound, Out, Sink};
use crate::transport::http::parser::Head;
use crate::transport::http::response::{Response, Sse};
use crate::transport::http::session_table::Use;
use crate::transport::telemetry::server_metrics::{Refusal, StreamKind};
use crate::util::queue::{self, Recv, Refused, Ticket};
use crate::wire::carried::Parsed;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::connection";

/// Why the loop takes no more work, or dropped a request unanswered.
pub(super) const BUSY: &str = "the server is busy or stopping";

/// Messages queued for one response before the client is deemed not to read.
const SINK_CAPACITY: usize = 1024;
/// The bytes of the events queued for one response or stream before the client is deemed
/// not to read (one larger event is queued alone; the response that ends it always is).
const SINK_BYTES: usize = 16 << 20;

impl Exchange {
    /// Hands `work` (holding a body of `bytes`) to the dispatching loop with a new sink for
    /// what it sends back, or answers 503 (closing the connection) when the loop takes no
    /// more: its queue holds `INBOUND_CAPACITY` items or `INBOUND_BYTES` of bodies already.
    pub(super) fn hand_over(
        &mut self,
        head: &Head,
        work: impl FnOnce(Sink) -> Inbound,
        bytes: usize,
        claim: Option<Claim>,
    ) -> Result<Handed, Outcome> {
        // What the client has not read yet is bounded in bytes too.
        let (tx, rx) = queue::sized_queue(SINK_CAPACITY, SINK_BYTES);
        let closed = Arc::new(AtomicBool::new(false));
        match self.shared.tx.send_sized(work(Sink::new(tx, closed.clone(), claim)), bytes) {
            Ok(ticket) => Ok(Handed { rx, closed, ticket }),
            Err(refused) => {
                self.busy(refused);
                Err(self.refuse(head, Refusal::Busy, 503, BUSY, true))
            }
        }
    }

    /// Hands a request (or batch) from `principal` to the dispatching loop and writes what
    /// comes back. `legacy` is its session and whether this request created it (its id is
    /// then announced); `None` for a 2026-07-28 request.
    pub(super) fn call(
        &mut self,
        head: &Head,
        (body, parsed): (String, Option<Box<Parsed>>),
        sse_ok: bool,
        principal: Option<Arc<Principal>>,
        legacy: Option<(Use, bool)>,
    ) -> Outcome {
        let name = legacy.as_ref().map(|(session, _)| session.id.clone());
        let mut headers = self.stream_headers();
        if let Some((session, true)) = &legacy {
            headers.push(("Mcp-Session-Id", session.id.clone()));
        }
        let (modern, bytes) = (legacy.is_none(), body.len());
        let arrival = self.arrival(head);
        let direct = self.direct(head, matches!(legacy, Some((_, true))));
        let claim = direct.as_ref().map(|d| d.claim.clone());
        let session = legacy.map(|(session, _)| session);
        let call = |sink| {
            let sse = sse_ok;
            Inbound::Call(Box::new(Call {
                session,
                body,
                parsed,
                sink,
                modern,
                sse,
                principal,
                arrival,
                direct,
            }))
        };
        match self.hand_over(head, call, bytes, claim.clone()) {
            // The loop cannot wait for its own answer: it looks when it has served it.
            Ok(handed) if self.on_loop => {
                self.handoff = Some(Step::Pump { handed, sse_ok, headers, name, claim });
                (0, None, false)
            }
            Ok(handed) => self.pump(head, handed, sse_ok, headers, name, claim),
            Err(refused) => refused,
        }
    }

    /// Logs why the loop took no more work, when it is not that the server is stopping.
    pub(super) fn busy(&self, refused: Refused) {
        if refused == Refused::Full {
            log::warn!(
                target: LOG,
                "{} refused: the dispatching loop's queue is full (65536 items, or 64 MiB of bodies)",
                self.peer,
            );
        }
    }

    /// Writes what the dispatching loop sends for one request: a JSON body if the response
    /// comes first, else an event stream that ends with it.
    pub(super) fn pump(
        &mut self,
        head: &Head,
        handed: Handed,
        sse_ok: bool,
        mut headers: Vec<(&'static str, String)>,
        name: Option<String>,
        claim: Option<Claim>,
    ) -> Outcome {
        let Handed { rx, closed, ticket } = handed;
        // Part of the response is on the wire already: only its rest may follow.
        let mut begun = false;
        let mut wait = POLL;
        if let Some(claim) = claim {
            match self.detached(claim.line(), sse_ok) {
                Mode::Written(status, reuse) => {
                    self.answered = claim.line().written_at();
                    return (status, name, reuse);
                }
                // Back from the socket, which may have woken for a keep-alive comment due:
                // looked at at once, not a tick later.
                mode => (begun, wait) = (mode == Mode::Begun, Duration::ZERO),
            }
        }
        let created = headers.iter().any(|(n, _)| *n == "Mcp-Session-Id");
        let mut stream: Option<Sse> = None;
        // The stream is counted from the moment it opens until this returns.
        let (shared, mut counted) = (self.shared.clone(), None);
        let metrics = &shared.metrics;
        let kind = if self.listening { StreamKind::Listen } else { StreamKind::Response };
        let mut last_write = self.received;
        let result = loop {
            let waited = std::mem::replace(&mut wait, POLL);
            match rx.recv_timeout(waited) {
                Recv::Item(Out::Event(line)) if sse_ok => {
                    counted.get_or_insert_with(|| metrics.open_stream(kind));
                    let sse = match self.opened(&mut stream, head, &headers) {
                        Ok(sse) => sse,
                        Err(e) => break Err(e),
                    };
                    log::trace!(target: LOG, "event for {}", self.peer);
                    if let Err(e) = sse.event(&mut self.writer, line.as_bytes()) {
                        break Err(e);
                    }
                    last_write = Instant::now();
                }
                Recv::Item(Out::Event(_)) => {}
                // The loop began the response itself: no stream was opened before it.
                Recv::Item(Out::Rest(Rest { status, bytes, reuse })) => {
                    break self.writer.write_all(&bytes).map(|()| (status, reuse));
                }
                Recv::Item(Out::Done(done)) => {
                    // `initialize` that failed made no session: its id is not announced.
                    if created && !name.as_deref().is_some_and(|id| self.shared.table.contains(id))
                    {
                        headers.clear();
                    }
                    break self.answer(head, stream.take(), done, &mut headers, sse_ok);
                }
                Recv::TimedOut => {
                    // A client that half-closed after its request may still read: it is
                    // given a tick to be answered in, as when the loop has no say.
                    if !waited.is_zero() && self.reader.inner.get_ref().peer_gone() {
                        self.left(&closed, ticket);
                        return (499, name, false);
                    }
                    // A long wait: a comment keeps proxies from timing the response out.
                    if sse_ok && !begun && last_write.elapsed() >= self.shared.keepalive {
                        counted.get_or_insert_with(|| metrics.open_stream(kind));
                        if let Err(e) = self.keep_alive(&mut stream, head, &headers) {
                            break Err(e);
                        }
                        last_write = Instant::now();
                    }
                }
                // Never before the rest it sent; but should it come to that, the response
                // cannot be finished, so the connection ends.
                Recv::Closed if begun => break Err(io::ErrorKind::BrokenPipe.into()),
                Recv::Closed => {
                    // The loop dropped the stream (server stopping, session gone, newer GET).
                    break match stream.take() {
                        Some(sse) => sse.end(&mut self.writer).map(|()| (200, sse.reusable())),
                        None => {
                            let (status, ..) = self.refuse(head, Refusal::Busy, 503, BUSY, true);
                            Ok((status, false))
                        }
                    };
                }
            }
        };
        match result {
            Ok((status, reuse)) => (status, name, reuse),
            Err(_) => {
                closed.store(true, Ordering::Relaxed);
                (499, name, false)
            }
        }
    }

    /// The response's event stream, its head written when it is first needed (saying
    /// `Connection: close` if the response ends its connection).
    fn opened<'a>(
        &mut self,
        stream: &'a mut Option<Sse>,
        head: &Head,
        headers: &[(&'static str, String)],
    ) -> io::Result<&'a Sse> {
        let sse = match stream.take() {
            Some(sse) => sse,
            None => {
                let close = self.closing(head);
                Sse::start(&mut self.writer, head.minor, headers, close)?
            }
        };
        Ok(stream.insert(sse))
    }

    /// A keep-alive comment on the response's event stream, opened for it if need be.
    fn keep_alive(
        &mut self,
        stream: &mut Option<Sse>,
        head: &Head,
        headers: &[(&'static str, String)],
    ) -> io::Result<()> {
        self.opened(stream, head, headers)?.comment(&mut self.writer, "keep-alive")
    }

    /// The client closed its connection while its request was open: the loop hears so, and
    /// a request not served yet leaves the loop's queue now, not when the loop would have
    /// reached it.
    fn left(&self, closed: &AtomicBool, ticket: Ticket) {
        closed.store(true, Ordering::Relaxed);
        drop(self.shared.tx.withdraw(ticket));
        log::info!(target: LOG, "{} closed its connection while its request was open", self.peer);
    }

    /// Waits on the socket while the loop may write the response itself (see `direct`): until
    /// it did (`Written`), or the request is back with this thread (`Attached`, or `Begun`
    /// when the loop wrote part of the response): the loop sent something else, the client
    /// sent more (a request read early waits for this one's answer, so that answers keep
    /// their order) or left, or a keep-alive comment is due.
    fn detached(&mut self, line: &DirectLine, sse_ok: bool) -> Mode {
        // Looked at before the first wait: a request the loop handed back while this thread
        // was parked (`park`) is taken at once.
        let mut more = !self.reader.inner.buffer().is_empty();
        loop {
            let due = sse_ok && self.received.elapsed() >= self.shared.keepalive;
            match line.settle(more || due) {
                Mode::Detached => {}
                settled => return settled,
            }
            more = line.wait(POLL);
        }
    }

    /// Ends a request with what the loop sent (`None`: no response is due): the last event of
    /// its stream, else a JSON body (without one: a stream that ends at once for a request,
    /// `202` for notifications). The status, and whether the connection can carry another
    /// request.
    fn answer(
        &mut self,
        head: &Head,
        stream: Option<Sse>,
        done: Option<(u16, Vec<u8>)>,
        headers: &mut Vec<(&'static str, String)>,
        sse_ok: bool,
    ) -> io::Result<(u16, bool)> {
        match (stream, done) {
            (Some(sse), Some((_, body))) => sse
                .event(&mut self.writer, &body)
                .and_then(|()| sse.end(&mut self.writer))
                .map(|()| (200, sse.reusable())),
            // No response (a cancelled request): its stream ends without one. A POST holding
            // a request must be answered with an event stream or JSON, so one is opened.
            (mut stream, None) if stream.is_some() || self.requests && sse_ok => {
                let sse = self.opened(&mut stream, head, headers)?;
                sse.end(&mut self.writer).map(|()| (200, sse.reusable()))
            }
            // No stream was opened (one without a response took the arm above).
            (_, done) => {
                let mut response = Response::answer(done);
                // `send` adds the CORS headers an event stream's head carries.
                headers.retain(|(name, _)| *name == "Mcp-Session-Id");
                response.headers.append(headers);
                let (status, _, reuse) = self.send(head, response, None, false);
                Ok((status, reuse))
            }
        }
    }
}
