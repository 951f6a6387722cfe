//! What a legacy session's messages meet on their connection thread: the session a POST
//! names or creates (or a refusal: unknown, missing, too many), its notifications and
//! responses (`202`), its GET stream of server messages, and its DELETE.

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::conn::principal::Principal;
use crate::transport::http::exchange::{Exchange, Handed, Outcome, POLL, refusal};
use crate::transport::http::main_loop::{Inbound, Out, error_body, refusal_body};
use crate::transport::http::negotiation;
use crate::transport::http::parser::Head;
use crate::transport::http::relay::BUSY;
use crate::transport::http::response::{Response, Sse};
use crate::transport::http::session_table::{Use, session_tag};
use crate::transport::telemetry::server_metrics::{Refusal, StreamKind};
use crate::util::queue::Recv;
use crate::wire::era::MODERN_VERSIONS;
use crate::wire::error_code::ErrorCode;
use crate::wire::jsonrpc::{ErrorObject, Frame, Message};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::connection";

impl Exchange {
    /// The legacy session a message belongs to, and whether this message created it: the one
    /// `Mcp-Session-Id` names, or a new one for `initialize`. Without either, a notification
    /// from a 2026-07-28 client is accepted and ignored, anything else refused (`Err`).
    pub(super) fn legacy_session(
        &mut self,
        head: &Head,
        principal: Option<Arc<Principal>>,
        frame: &Frame,
    ) -> Result<(Use, bool), Outcome> {
        let initialize = match frame {
            Frame::Single(Message::Request { id, method, .. }) if method == "initialize" => {
                Some(id)
            }
            _ => None,
        };
        let version_header = head.header("mcp-protocol-version");
        match (head.header("mcp-session-id"), initialize) {
            (Some(id), _) => match self.shared.table.enter(id, principal.as_deref()) {
                Ok(session) => Ok((session, false)),
                Err(_) => Err(self.unknown_session(head)),
            },
            (None, Some(request)) => match self.shared.table.create(principal) {
                Ok(session) => Ok((session, true)),
                Err(_) => {
                    self.shared.metrics.refused(Refusal::SessionLimit);
                    let error = ErrorObject::new(ErrorCode::AT_CAPACITY, "too many sessions");
                    let response = Response::json(503, error_body(Some(request), error))
                        .header("Retry-After", "5");
                    Err(self.send(head, response, None, false))
                }
            },
            (None, None)
                if matches!(frame, Frame::Single(Message::Notification { .. }))
                    && version_header.is_some_and(|v| MODERN_VERSIONS.contains(&v)) =>
            {
                // 2026-07-28 defines no client notifications on HTTP: accepted, and ignored.
                // A response is not (its clients send none): it needs a legacy session.
                Err(self.send(head, Response::new(202), None, false))
            }
            (None, None) => {
                let error = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    "missing Mcp-Session-Id header: send initialize first, or a 2026-07-28 \
                     request (params._meta with io.modelcontextprotocol/protocolVersion)",
                );
                Err(self.refuse_with(head, Refusal::MissingSession, 400, error, false))
            }
        }
    }

    /// A legacy client notification or response: 202 only for what will be read, so one the
    /// loop cannot take is refused. `session` stays in use until it is answered. A
    /// `malformed` response (both `result` and `error`, a wrong `jsonrpc`) is `400`, but goes
    /// to the session all the same: a handler waiting on it learns it will get no answer.
    pub(super) fn notify(
        &mut self,
        head: &Head,
        session: Use,
        text: String,
        malformed: bool,
    ) -> Outcome {
        let bytes = text.len();
        let message = Inbound::Message { session: Some(session.id.clone()), body: text };
        // In a lane of their own: requests waiting cannot crowd out the answer a waiting
        // handler needs.
        if let Err(refused) = self.shared.tx.send_in(message, bytes.max(1), 1) {
            self.busy(refused);
            return self.refuse(head, Refusal::Busy, 503, BUSY, false);
        }
        let response = if malformed {
            Response::json(400, refusal_body(head, None, ErrorObject::invalid_request()))
        } else {
            Response::new(202)
        };
        self.send(head, response, Some(session.id.clone()), false)
    }

    /// 404 for an unknown or expired session, with the request's id when it has one.
    pub(super) fn unknown_session(&mut self, head: &Head) -> Outcome {
        let error = ErrorObject::new(
            ErrorCode::SESSION_NOT_FOUND,
            "session not found: send initialize again",
        );
        self.refuse_with(head, Refusal::UnknownSession, 404, error, false)
    }

    /// Legacy GET: the session's standalone stream of server messages.
    pub(super) fn get(&mut self, head: &Head, principal: Option<Arc<Principal>>) -> Outcome {
        let (_, sse_ok) = negotiation::accepts(head.list("accept").as_deref());
        let Some(id) = head.header("mcp-session-id") else { return self.no_session(head) };
        if !sse_ok || head.header("accept").is_none() {
            let why = "a GET stream needs accept: text/event-stream";
            return self.refuse(head, Refusal::NotAcceptable, 406, why, false);
        }
        let session = match self.shared.table.enter(id, principal.as_deref()) {
            Ok(session) => session,
            Err(_) => return self.unknown_session(head),
        };
        let _counted = match self.open_stream(head) {
            Ok(slot) => slot,
            Err(refused) => return refused,
        };
        let stream = |sink| Inbound::Stream { session: session.id.clone(), sink };
        let Handed { rx, closed, .. } = match self.hand_over(head, stream, 0, None) {
            Ok(handed) => handed,
            Err(refused) => return refused,
        };
        // Opened at once: clients wait for the head before they consider the stream open.
        let (headers, close) = (self.stream_headers(), self.closing(head));
        let sse = match Sse::start(&mut self.writer, head.minor, &headers, close) {
            Ok(sse) => sse,
            Err(_) => {
                closed.store(true, Ordering::Relaxed);
                return (499, Some(session.id.clone()), false);
            }
        };
        let _open = self.shared.metrics.open_stream(StreamKind::Get);
        let name = Some(session.id.clone());
        let mut last_write = Instant::now();
        loop {
            let written = match rx.recv_timeout(POLL) {
                Recv::Item(Out::Event(line)) => sse.event(&mut self.writer, line.as_bytes()),
                Recv::Item(Out::Done(_) | Out::Rest(_)) | Recv::Closed => {
                    let reuse = sse.end(&mut self.writer).is_ok() && sse.reusable();
                    return (200, name, reuse);
                }
                Recv::TimedOut if self.reader.inner.get_ref().peer_gone() => {
                    Err(io::ErrorKind::BrokenPipe.into())
                }
                Recv::TimedOut if last_write.elapsed() >= self.shared.keepalive => {
                    sse.comment(&mut self.writer, "keep-alive")
                }
                Recv::TimedOut => continue,
            };
            if written.is_err() {
                closed.store(true, Ordering::Relaxed);
                return (200, name, false);
            }
            last_write = Instant::now();
        }
    }

    /// Legacy DELETE: ends the session.
    pub(super) fn delete(&mut self, head: &Head, principal: Option<Arc<Principal>>) -> Outcome {
        let Some(id) = head.header("mcp-session-id") else { return self.no_session(head) };
        if self.shared.table.remove(id, principal.as_deref()) {
            log::info!(target: LOG, "session {} ended by the client", session_tag(id));
            self.send(head, Response::new(204), Some(id.to_string()), false)
        } else {
            self.unknown_session(head)
        }
    }

    /// A GET or DELETE without a session: 2026-07-28 serves POST only (405); a legacy
    /// client must name its session (400).
    fn no_session(&mut self, head: &Head) -> Outcome {
        let modern =
            head.header("mcp-protocol-version").is_some_and(|v| MODERN_VERSIONS.contains(&v));
        if modern {
            self.shared.metrics.refused(Refusal::MethodNotAllowed);
            let response = refusal(405, "2026-07-28 serves POST only").header("Allow", "POST");
            return self.send(head, response, None, false);
        }
        self.refuse(head, Refusal::MissingSession, 400, "missing Mcp-Session-Id header", false)
    }
}
